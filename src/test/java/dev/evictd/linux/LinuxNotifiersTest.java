package dev.evictd.linux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.Quantity;
import dev.evictd.api.Signal;
import dev.evictd.api.Threshold;
import dev.evictd.api.ThresholdValue;
import dev.evictd.testing.TestCgroup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LinuxNotifiersTest {
  private static Threshold hard(Signal s, String quantity) {
    return new Threshold(
        "hard " + s,
        s,
        ThresholdValue.ofQuantity(Quantity.parse(quantity), quantity),
        Duration.ZERO,
        null,
        0,
        "test",
        false);
  }

  private static final List<Threshold> MEMORY =
      List.of(
          hard(Signal.MEMORY_AVAILABLE, "100Mi"), hard(Signal.ALLOCATABLE_MEMORY_AVAILABLE, "0"));

  private static List<String> start(NotifierFactory.Spec spec) {
    List<NotifierFactory.Notifier> ns =
        new LinuxNotifiers().start(spec, (f, s, u) -> {}, Clock.systemUTC());
    try {
      return ns.stream()
          .map(n -> n.source() + (n.available() ? "" : " unavailable") + ": " + n.describe())
          .toList();
    } finally {
      ns.forEach(NotifierFactory.Notifier::close);
    }
  }

  @Test
  void onCgroupV2PsiOnRootAndPodsMemoryEventsAndTheAdaptivePoll(@TempDir Path root)
      throws Exception {
    // a plain directory tree: the PSI triggers are refused (not kernel files), the rest works
    Files.writeString(root.resolve("cgroup.controllers"), "cpu memory pids\n");
    Files.writeString(root.resolve("memory.stat"), "anon 1\nfile 2\n");
    Files.writeString(root.resolve("memory.pressure"), "");
    Path pods = Files.createDirectories(root.resolve("kubepods.slice"));
    Files.writeString(pods.resolve("memory.current"), "3\n");
    Files.writeString(pods.resolve("memory.pressure"), "");
    Files.writeString(pods.resolve("memory.events"), "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n");
    NotifierFactory.Spec spec =
        new NotifierFactory.Spec(
            MEMORY,
            Cgroups.detect(root, "kubepods.slice"),
            new HostPaths(root, root.resolve("proc"), root, root, null),
            true,
            null,
            true,
            Duration.ofSeconds(10));
    assertThat(start(spec))
        .containsExactly(
            "psi unavailable: PSI trigger \"some 150000 2000000\" on "
                + root.resolve("memory.pressure"),
            "psi unavailable: PSI trigger \"some 150000 2000000\" on "
                + pods.resolve("memory.pressure"),
            "memory.events: memory.events watch on " + pods.resolve("memory.events"),
            "poll: adaptive memory poll of ["
                + root.resolve("memory.stat")
                + ", "
                + pods.resolve("memory.current")
                + "] every 10 ms to 10000 ms by headroom");
    // the configured trigger replaces the default; no poll when switched off
    assertThat(
            start(
                new NotifierFactory.Spec(
                    MEMORY,
                    spec.cgroups(),
                    spec.paths(),
                    true,
                    PsiTrigger.parse("full 100000 4000000"),
                    false,
                    Duration.ofSeconds(10))))
        .containsExactly(
            "psi unavailable: PSI trigger \"full 100000 4000000\" on "
                + root.resolve("memory.pressure"),
            "psi unavailable: PSI trigger \"full 100000 4000000\" on "
                + pods.resolve("memory.pressure"),
            "memory.events: memory.events watch on " + pods.resolve("memory.events"));
  }

  @Test
  @Tag("cgroup-v1")
  void onCgroupV1TheMemcgThresholdsAndThePollAsItsSafetyNet() throws Exception {
    TestCgroup.assumeRootWithCgroupV1();
    try (TestCgroup cg = TestCgroup.create("notifiers")) {
      Cgroups cgroups =
          Cgroups.detect(Path.of("/sys/fs/cgroup"), cg.dir().getFileName().toString());
      NotifierFactory.Spec spec =
          new NotifierFactory.Spec(
              MEMORY, cgroups, HostPaths.defaults(), true, null, true, Duration.ofSeconds(10));
      assertThat(start(spec))
          .containsExactly(
              "memcg: memcg threshold for memory.available on /sys/fs/cgroup/memory",
              "memcg: memcg threshold for allocatableMemory.available on " + cg.dir(),
              "poll: adaptive memory poll of [/sys/fs/cgroup/memory/memory.usage_in_bytes, "
                  + cg.dir().resolve("memory.usage_in_bytes")
                  + "] every 10 ms to 10000 ms by headroom");
      NotifierFactory.Spec psi =
          new NotifierFactory.Spec(
              MEMORY,
              cgroups,
              HostPaths.defaults(),
              false,
              PsiTrigger.parse("some 150000 2000000"),
              false,
              Duration.ofSeconds(10));
      assertThat(start(psi))
          .containsExactly("psi: PSI trigger \"some 150000 2000000\" on /proc/pressure/memory");
    }
  }
}
