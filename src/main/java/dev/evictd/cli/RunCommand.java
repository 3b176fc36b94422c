package dev.evictd.cli;

import dev.evictd.agent.Agent;
import dev.evictd.agent.AgentConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.fixture.CapturedInputs;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code evictd run}: the node agent. Runs until SIGTERM or SIGINT, then shuts down cleanly (within
 * {@link dev.evictd.agent.EvictionManager}'s drain of a request in flight). SIGHUP is logged and
 * ignored: the rules directory is watched, so a reload needs no signal, and the JVM's default (exit
 * 129) would stop the agent.
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    modelTransformer = RunCommand.Flags.class,
    description = {
      "Run the node agent: a sync every interval and at once on kernel memory events; evictions through the API",
      "(or dry run); /metrics, /healthz and /readyz. Every option can also be set in the --config file under the",
      "camelCase key (e.g. --metrics-address is metricsAddress); options win over the file.",
      "With --standalone it needs no cluster and no configuration: host statistics, dry run."
    })
final class RunCommand implements Callable<Integer> {
  @Option(
      names = "--config",
      converter = Converters.InputFile.class,
      paramLabel = "FILE",
      description = "Agent configuration YAML.")
  Path config;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /**
   * Adds a flag for every configuration key: the kubelet and host mixins (shared with capture,
   * stats and doctor) and run's own.
   */
  static final class Flags implements CommandLine.IModelTransformer {
    @Override
    public CommandLine.Model.CommandSpec transform(CommandLine.Model.CommandSpec spec) {
      KubeletOptions.addTo(spec);
      HostOptions.addTo(spec);
      return AgentFlags.addTo(spec, k -> k.setting().group().isEmpty());
    }
  }

  @Override
  public Integer call() throws InterruptedException {
    YamlNode file =
        config == null ? null : YamlNode.parse(config.toString(), CapturedInputs.read(config));
    AgentConfig c = AgentConfig.resolve(file, AgentFlags.given(spec, k -> true), System.getenv());
    if ("json".equals(c.logFormat())) {
      Logging.json();
    }
    ignoreHangup();
    CountDownLatch stopped = new CountDownLatch(1);
    Agent agent = Agent.start(c, Clock.systemUTC());
    Thread hook =
        new Thread(
            () -> {
              agent.close();
              stopped.countDown();
            },
            "evictd-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    stopped.await();
    return Main.OK;
  }

  private static void ignoreHangup() {
    try {
      sun.misc.SignalHandler before =
          sun.misc.Signal.handle(
              new sun.misc.Signal("HUP"),
              sig ->
                  org.slf4j.LoggerFactory.getLogger(RunCommand.class)
                      .info("SIGHUP ignored: rules are reloaded when their directory changes"));
      if (before == sun.misc.SignalHandler.SIG_IGN) {
        // started with SIGHUP ignored (nohup): the JVM keeps it that way and installs no handler
        org.slf4j.LoggerFactory.getLogger(RunCommand.class)
            .info("SIGHUP is ignored (it was when evictd started, e.g. under nohup)");
      }
    } catch (IllegalArgumentException e) {
      // no SIGHUP on this platform, or the JVM was started with -Xrs: nothing to ignore
    }
  }
}
