package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.KillAndDeleteAvailable;
import dev.evictd.ports.PodSource;
import dev.evictd.testing.FakeStatsProvider;
import dev.evictd.testing.MutableClock;
import dev.evictd.testing.RecordingEvictor;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The default rules' method at a hard threshold: where the agent can stop the pod's containers on
 * the node ({@link KillAndDeleteAvailable} names the pod), kill-and-delete, and the plan names the
 * rule that chose it; at a soft threshold, or for a pod without a cgroup here, the configured
 * method alone.
 */
class KillAndDeleteRuleTest {
  static final EvictionManagerTest HELPER = new EvictionManagerTest();

  @BeforeAll
  static void compile() {
    EvictionManagerTest.compile();
  }

  @AfterAll
  static void close() throws Exception {
    HELPER.close();
  }

  static EvictionDecision decided(String kubeletYaml, Set<String> stoppable) {
    MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    FakeStatsProvider stats = new FakeStatsProvider();
    stats.set(FakeStatsProvider.memory(500, 7000, "a", 100, "b", 900));
    RecordingEvictor ev = new RecordingEvictor();
    EvictionManager m =
        HELPER.manager(
            EvictionManagerTest.planner(kubeletYaml),
            stats,
            PodSource.of(List.of(EvictionManagerTest.pod("a", 0), EvictionManagerTest.pod("b", 0))),
            ev,
            new EvictionManagerTest.Events(),
            clock,
            EvictionManagerTest.DELETE);
    m.addObservationSource(() -> List.of(new KillAndDeleteAvailable(stoppable)));
    m.syncOnce("t0");
    clock.advance(Duration.ofMinutes(2));
    m.syncOnce("t120");
    // the first eviction (at a hard threshold the second sync, past podCleanupTimeout, takes the
    // next pod: the evicted one never goes here)
    assertThat(ev.decisions()).isNotEmpty();
    EvictionDecision first = ev.decisions().get(0);
    assertThat(first.pod().key()).isEqualTo("default/b");
    return first;
  }

  @Test
  void aHardThresholdStopsTheContainersOnTheNodeAndDeletesThroughTheApi() {
    EvictionDecision d =
        decided("evictionHard: {memory.available: 1Gi}\n", Set.of("default/a", "default/b"));
    assertThat(d.method()).isEqualTo(EvictionMethod.KILL_AND_DELETE);
    assertThat(d.gracePeriodSeconds()).isEqualTo(1);
    assertThat(d.rules())
        .first()
        .isEqualTo(
            "at a hard threshold, stop the pod's containers on the node and delete it through the API");
  }

  @Test
  void aPodWithoutACgroupHereGoesThroughTheApiAlone() {
    EvictionDecision d = decided("evictionHard: {memory.available: 1Gi}\n", Set.of("default/a"));
    assertThat(d.method()).isEqualTo(EvictionMethod.DELETE);
  }

  @Test
  void aSoftThresholdGoesThroughTheApiAlone() {
    EvictionDecision d =
        decided(
            "evictionHard: {}\nevictionSoft: {memory.available: 1Gi}\n"
                + "evictionSoftGracePeriod: {memory.available: 1m}\n",
            Set.of("default/a", "default/b"));
    assertThat(d.method()).isEqualTo(EvictionMethod.DELETE);
  }
}
