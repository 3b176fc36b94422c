package dev.evictd.cli;

import dev.evictd.api.Observation;
import dev.evictd.k8s.Observations;
import dev.evictd.linux.HostStatsProvider;
import dev.evictd.stats.Summary;
import java.io.PrintWriter;
import java.time.Clock;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/** {@code evictd stats}: this host's statistics as a kubelet stats summary. */
@Command(
    name = "stats",
    mixinStandardHelpOptions = true,
    modelTransformer = HostOptions.Mixin.class,
    description =
        "Print this host's statistics (memory, filesystems, PIDs, pod cgroups) as a stats summary, read from cgroups, statvfs and /proc.")
final class StatsCommand implements Callable<Integer> {
  /** Made on first use: picocli creates every command at start-up, and a mapper costs start-up. */
  private static final class Json {
    static final JsonMapper MAPPER =
        JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();
  }

  @Option(
      names = "--node",
      converter = Converters.NotEmpty.class,
      paramLabel = "NAME",
      description = "Node name to report (default: the host name).")
  String node;

  @Mixin OutputOption.Table output = new OutputOption.Table();

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  private static final String[] BINARY = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

  /**
   * Available and capacity in one unit: bytes in the largest binary unit both are whole numbers of
   * ({@code 1819968Ki of 2014152Ki}, not {@code 1819968Ki of 2062491648}), counts as plain numbers.
   */
  static String[] sameUnit(long available, long capacity, boolean binary) {
    if (!binary) {
      return new String[] {Long.toString(available), Long.toString(capacity)};
    }
    int unit = 0;
    while (unit + 1 < BINARY.length
        && available % (1L << (10 * (unit + 1))) == 0
        && capacity % (1L << (10 * (unit + 1))) == 0
        && (available != 0 || capacity != 0)) {
      unit++;
    }
    long div = 1L << (10 * unit);
    return new String[] {available / div + BINARY[unit], capacity / div + BINARY[unit]};
  }

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    Summary s = new HostStatsProvider(HostOptions.paths(spec), node, Clock.systemUTC()).summary();
    if (output.json()) {
      out.println(Json.MAPPER.writeValueAsString(s));
    } else {
      out.println("node     " + s.node().nodeName());
      for (Observation o : Observations.of(s).values()) {
        String[] both = sameUnit(o.available(), o.capacity(), o.signal().binaryUnits());
        out.printf("%-28s available %-12s of %s%n", o.signal().key(), both[0], both[1]);
      }
      for (Summary.PodStats p : s.pods()) {
        Long ws = p.memory() == null ? null : p.memory().workingSetBytes();
        Long procs = p.processStats() == null ? null : p.processStats().processCount();
        out.printf("pod %-36s working set %s, %s processes%n", p.podRef().uid(), ws, procs);
      }
    }
    out.flush();
    return Main.OK;
  }
}
