package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionMethod;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The flags of {@code evictd run} made from the configuration keys: typed, completed, shared. */
class AgentFlagsTest {
  @Test
  void runFlagsAreTypedAndGivenOnesAreHandedOnByKey() {
    RunCommand run = new RunCommand();
    CommandLine cl = new CommandLine(run);
    cl.parseArgs(
        "--interval",
        "2s",
        "--fs-layout",
        "auto",
        "--standalone",
        "--allowed-methods",
        "evict,dry-run",
        "--kubelet-ca-file",
        "/ca.crt",
        "--memcg-notifier",
        "false");
    Map<String, Object> given = AgentFlags.given(run.spec, k -> true);
    assertThat(given)
        .containsEntry("interval", Duration.ofSeconds(2))
        .containsEntry("fsLayout", "auto")
        .containsEntry("standalone", true)
        .containsEntry("allowedMethods", Set.of(EvictionMethod.EVICT, EvictionMethod.DRY_RUN))
        .containsEntry("kubeletCaFile", Path.of("/ca.crt"))
        .containsEntry("memcgNotifier", false)
        .doesNotContainKey("executor");
    assertThat(cl.getCommandSpec().findOption("--executor").completionCandidates())
        .containsExactly("dry-run", "delete", "evict", "kill", "kill-and-delete");
    assertThat(cl.getCommandSpec().findOption("--pods-cgroup").typeInfo().getType())
        .isEqualTo(String.class);
  }

  @Test
  void runAndCaptureShareTheKubeletMixin() {
    for (Object command : new Object[] {new RunCommand(), new CaptureCommand()}) {
      CommandLine.Model.CommandSpec mixin =
          new CommandLine(command).getCommandSpec().mixins().get(KubeletOptions.GROUP);
      assertThat(mixin).as(command.getClass().getSimpleName()).isNotNull();
      assertThat(mixin.options())
          .extracting(o -> o.longestName())
          .containsExactlyInAnyOrder(
              "--kubelet-url",
              "--kubelet-ca-file",
              "--kubelet-token-file",
              "--kubelet-insecure-skip-tls-verify",
              "--kubelet-tls-server-name",
              "--kubelet-allow-http");
    }
  }

  @Test
  void runStatsAndDoctorShareTheHostMixin() {
    for (Object command :
        new Object[] {new RunCommand(), new StatsCommand(), new DoctorCommand()}) {
      CommandLine.Model.CommandSpec spec = new CommandLine(command).getCommandSpec();
      CommandLine.Model.CommandSpec mixin = spec.mixins().get(HostOptions.GROUP);
      assertThat(mixin).as(command.getClass().getSimpleName()).isNotNull();
      assertThat(mixin.options())
          .extracting(o -> o.longestName())
          .containsExactlyInAnyOrder(
              "--cgroup-root",
              "--proc-root",
              "--kubelet-root-dir",
              "--runtime-root-dir",
              "--pods-cgroup");
      // stats' and doctor's older spelling stays
      assertThat(spec.findOption("--runtime-root")).isSameAs(spec.findOption("--runtime-root-dir"));
    }
  }

  @Test
  void aBadFlagValueIsTheKeysOneLineAndExitTwo() {
    StringWriter err = new StringWriter();
    int code =
        Main.execute(
            new String[] {"run", "--node-name", "n", "--interval", "soon"},
            new PrintWriter(new StringWriter(), true),
            new PrintWriter(err, true));
    assertThat(code).isEqualTo(Main.BAD_INPUT);
    assertThat(err.toString()).isEqualTo("evictd: --interval: time: invalid duration \"soon\"\n");
  }
}
