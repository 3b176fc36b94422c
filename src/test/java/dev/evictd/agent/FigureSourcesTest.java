package dev.evictd.agent;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionPlan;
import dev.evictd.api.Observation;
import dev.evictd.api.Signal;
import dev.evictd.engine.RuleSet;
import dev.evictd.ports.PodSource;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.stats.Summary;
import dev.evictd.testing.FakeStatsProvider;
import dev.evictd.testing.MutableClock;
import dev.evictd.testing.RecordingEvictor;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The plan of a sync the kernel triggered says its memory figures are the kernel's (with the
 * cgroups' place) and how old each figure was; the next sync on a newer Summary says "summary".
 */
class FigureSourcesTest {
  static final long MI = 1024 * 1024;

  final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));

  /** Node memory and two pods' working sets, sampled at {@code time}. */
  static Summary summary(Instant time, long availableMi, long aMi, long bMi) {
    return new Summary(
        new Summary.NodeStats(
            "node",
            new Summary.MemoryStats(time, availableMi * MI, null, 7000 * MI, null),
            new Summary.FsStats(time, 40L << 30, 100L << 30, null, null, null, null),
            null,
            null,
            null),
        List.of(pod("a", time, aMi), pod("b", time, bMi)));
  }

  static Summary.PodStats pod(String name, Instant time, long mi) {
    return new Summary.PodStats(
        new Summary.PodReference(name, "default", "default/" + name),
        List.of(),
        new Summary.MemoryStats(time, null, mi * MI, mi * MI, null),
        List.of(),
        null,
        null);
  }

  @Test
  void aKernelTriggeredSyncsPlanNamesTheKernelAndTheAgeOfEachFigure() {
    RuleSet rules = RuleCompiler.compileDefault();
    FakeStatsProvider kubelet = new FakeStatsProvider();
    // the kubelet's cached Summary, 8.2 s old: no pressure, pod a the larger
    kubelet.set(summary(clock.instant().minusMillis(8200), 7000, 900, 100));
    RecordingEvictor ev = new RecordingEvictor();
    List<EvictionPlan> plans = new CopyOnWriteArrayList<>();
    try (EvictionManager m =
        new EvictionManager(
            new dev.evictd.engine.Planner(
                rules,
                dev.evictd.config.KubeletEvictionConfig.from(
                    dev.evictd.config.YamlNode.parse(
                        "k.yaml", "evictionHard: {memory.available: 1Gi}\n".getBytes(UTF_8)),
                    "node",
                    dev.evictd.api.FsLayout.SHARED)),
            kubelet,
            PodSource.of(List.of(EvictionManagerTest.pod("a", 0), EvictionManagerTest.pod("b", 0))),
            ev,
            a -> true,
            new EvictionManagerTest.Events(),
            new AgentMetrics(clock),
            clock,
            EvictionManagerTest.DELETE)) {
      // the kernel, now: 500Mi available, pod b the larger
      m.kernelFigures(() -> summary(clock.instant(), 500, 100, 900), "/sys/fs/cgroup/memory");
      m.addSyncListener((s, p) -> plans.add(p));

      m.syncOnce("memcg", true);
      assertThat(ev.decisions())
          .singleElement()
          .satisfies(d -> assertThat(d.pod().name()).isEqualTo("b"));
      EvictionPlan kernel = plans.get(0);
      assertThat(kernel.provenance(observation(kernel, Signal.MEMORY_AVAILABLE)))
          .isEqualTo("kernel: /sys/fs/cgroup/memory, 0 ms old");
      assertThat(kernel.provenance(observation(kernel, Signal.NODEFS_AVAILABLE)))
          .isEqualTo("summary, 8.2 s old");

      // the kubelet refreshed after the kernel read: an interval's sync decides on its figures
      clock.advance(Duration.ofSeconds(2));
      kubelet.set(summary(clock.instant().minusMillis(1500), 7000, 900, 100));
      m.syncOnce("interval", false);
      EvictionPlan interval = plans.get(1);
      assertThat(interval.provenance(observation(interval, Signal.MEMORY_AVAILABLE)))
          .isEqualTo("summary, 1.5 s old");
      assertThat(ev.decisions()).hasSize(1);
    }
  }

  private static Observation observation(EvictionPlan p, Signal s) {
    return p.observations().stream().filter(o -> o.signal() == s).findFirst().orElseThrow();
  }
}
