package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.api.FsLayout;
import dev.evictd.config.KubeletEvictionConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.engine.Planner;
import dev.evictd.engine.RuleSet;
import dev.evictd.ports.EventSink;
import dev.evictd.ports.PodSource;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.testing.FakeStatsProvider;
import dev.evictd.testing.MutableClock;
import dev.evictd.testing.RecordingEvictor;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

class EvictionManagerTest {
  static RuleSet defaults;
  final List<AutoCloseable> closeables = new ArrayList<>();

  @BeforeAll
  static void compile() {
    defaults = RuleCompiler.compileDefault();
  }

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : closeables) {
      c.close();
    }
  }

  static Pod pod(String name, int priority) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("default")
        .endMetadata()
        .withNewSpec()
        .withPriority(priority)
        .withTerminationGracePeriodSeconds(30L)
        .addNewContainer()
        .withName("c")
        .endContainer()
        .endSpec()
        .build();
  }

  static Planner planner(String kubeletYaml) {
    return new Planner(
        defaults,
        KubeletEvictionConfig.from(
            YamlNode.parse("k.yaml", kubeletYaml.getBytes(StandardCharsets.UTF_8)),
            "node",
            FsLayout.SHARED));
  }

  /** Records events. */
  static final class Events implements EventSink {
    final List<String> recorded = new CopyOnWriteArrayList<>();

    @Override
    public void podEvicted(EvictionDecision d) {
      recorded.add("Evicted " + d.pod().key() + ": " + d.message());
    }

    @Override
    public void thresholdMet(String resource) {
      recorded.add("EvictionThresholdMet Attempting to reclaim " + resource);
    }
  }

  EvictionManager manager(
      Planner planner,
      FakeStatsProvider stats,
      PodSource pods,
      RecordingEvictor ev,
      Events events,
      Clock clock,
      EvictionManager.Settings settings) {
    EvictionManager m =
        new EvictionManager(
            planner, stats, pods, ev, a -> true, events, new AgentMetrics(clock), clock, settings);
    closeables.add(m);
    return m;
  }

  static final EvictionManager.Settings DELETE =
      new EvictionManager.Settings(
          Duration.ofSeconds(10), Duration.ofSeconds(30), EvictionMethod.DELETE, false, false);

  @Test
  void pressureEvictsThroughTheExecutorAndRecordsEventsAndMetrics() {
    MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    FakeStatsProvider stats = new FakeStatsProvider();
    stats.set(FakeStatsProvider.memory(500, 7000, "a", 100, "b", 900));
    RecordingEvictor ev = new RecordingEvictor();
    Events events = new Events();
    AgentMetrics metrics = new AgentMetrics(clock);
    EvictionManager m =
        new EvictionManager(
            planner("evictionHard: {memory.available: 1Gi}\n"),
            stats,
            PodSource.of(List.of(pod("a", 0), pod("b", 0))),
            ev,
            a -> true,
            events,
            metrics,
            clock,
            DELETE);
    closeables.add(m);
    EvictionManager.SyncResult r = m.syncOnce("test");
    assertThat(r.outcome()).isEqualTo("ok");
    assertThat(ev.decisions())
        .singleElement()
        .satisfies(
            d -> {
              assertThat(d.pod().key()).isEqualTo("default/b");
              assertThat(d.method()).isEqualTo(EvictionMethod.DELETE);
              assertThat(d.gracePeriodSeconds()).isEqualTo(1);
            });
    assertThat(events.recorded)
        .containsExactly(
            "EvictionThresholdMet Attempting to reclaim memory",
            "Evicted default/b: The node was low on resource: memory. Threshold quantity: 1Gi, available: 500Mi. ");
    assertThat(metrics.scrape())
        .contains(
            "evictd_evictions_total{method=\"delete\",outcome=\"evicted\",signal=\"memory.available\"} 1.0")
        .contains("evictd_node_condition{condition=\"MemoryPressure\"} 1.0")
        .contains("evictd_syncs_total{result=\"ok\"} 1.0");
    assertThat(m.ready()).isTrue();
  }

  @Test
  void dryRunEvictsNothingAndRecordsNoEvents() {
    MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    FakeStatsProvider stats = new FakeStatsProvider();
    stats.set(FakeStatsProvider.memory(500, 7000, "a", 100));
    RecordingEvictor ev = new RecordingEvictor();
    Events events = new Events();
    EvictionManager m =
        manager(
            planner("evictionHard: {memory.available: 1Gi}\n"),
            stats,
            PodSource.of(List.of(pod("a", 0))),
            ev,
            events,
            clock,
            new EvictionManager.Settings(
                Duration.ofSeconds(10), Duration.ofSeconds(30), EvictionMethod.DELETE, true, true));
    EvictionManager.SyncResult r = m.syncOnce("test");
    assertThat(r.attempts())
        .singleElement()
        .satisfies(a -> assertThat(a.outcome()).isEqualTo(EvictionOutcome.DRY_RUN));
    assertThat(ev.decisions()).isEmpty();
    assertThat(events.recorded).isEmpty();
  }

  @Test
  void readyOnlyWithFreshStatisticsAListedPodViewAndAGoodSync() {
    MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    FakeStatsProvider stats = new FakeStatsProvider();
    stats.set(FakeStatsProvider.memory(5000, 7000, "a", 100));
    java.util.concurrent.atomic.AtomicBoolean listed =
        new java.util.concurrent.atomic.AtomicBoolean();
    List<Pod> pods = List.of(pod("a", 0));
    PodSource view =
        new PodSource() {
          @Override
          public List<Pod> activePods() {
            return listed.get() ? pods : List.of();
          }

          @Override
          public boolean synced() {
            return listed.get();
          }
        };
    EvictionManager m =
        manager(
            planner("evictionHard: {memory.available: 1Gi}\n"),
            stats,
            view,
            new RecordingEvictor(),
            new Events(),
            clock,
            DELETE);
    Readiness readiness = new Readiness();
    m.addReadinessConditions(readiness);
    assertThat(readiness.ready()).isFalse();

    // statistics, but the pods never listed: the sync decides nothing and readiness says why
    assertThat(m.syncOnce("test").outcome()).isEqualTo("skipped");
    assertThat(readiness.ready()).isFalse();
    assertThat(readiness.describe())
        .contains("pods: the node's pods have not been listed yet")
        .contains("statistics: ok")
        .contains("sync: no sync has completed yet");

    listed.set(true);
    assertThat(m.syncOnce("test").outcome()).isEqualTo("ok");
    assertThat(readiness.ready()).isTrue();
    assertThat(readiness.describe()).isEqualTo("pods: ok\nstatistics: ok\nsync: ok\n");

    // statistics keep failing: ready only while the last good read is within the limit
    stats.fail(true);
    clock.advance(Duration.ofSeconds(10));
    m.syncOnce("test");
    assertThat(readiness.ready()).as("the last read is 10 s old").isTrue();
    clock.advance(m.statsMaxAge());
    m.syncOnce("test");
    assertThat(readiness.ready()).isFalse();
    assertThat(readiness.describe()).containsPattern("statistics: last statistics read \\d+ s ago");

    stats.fail(false);
    m.syncOnce("test");
    assertThat(readiness.ready()).isTrue();
  }

  @Test
  void missingStatisticsSkipTheSyncAndChangeNoState() {
    MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    FakeStatsProvider stats = new FakeStatsProvider();
    stats.fail(true);
    RecordingEvictor ev = new RecordingEvictor();
    Planner p = planner("evictionHard: {memory.available: 1Gi}\n");
    EvictionManager m =
        manager(p, stats, PodSource.of(List.of(pod("a", 0))), ev, new Events(), clock, DELETE);
    assertThat(m.syncOnce("test").outcome()).isEqualTo("skipped");
    assertThat(ev.decisions()).isEmpty();
    assertThat(m.ready()).isFalse();
    stats.fail(false);
    stats.set(FakeStatsProvider.memory(500, 7000, "a", 100));
    assertThat(m.syncOnce("test").plan().seq())
        .isEqualTo(1); // the skipped sync never reached the planner
  }

  @Test
  void swappedRulesKeepTheFirstObservedTime() {
    MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    FakeStatsProvider stats = new FakeStatsProvider();
    stats.set(FakeStatsProvider.memory(1500, 6000, "a", 100));
    RecordingEvictor ev = new RecordingEvictor();
    EvictionManager m =
        manager(
            planner(
                "evictionHard: {}\nevictionSoft: {memory.available: 2Gi}\nevictionSoftGracePeriod: {memory.available: 1m}\n"),
            stats,
            PodSource.of(List.of(pod("a", 0))),
            ev,
            new Events(),
            clock,
            DELETE);
    assertThat(m.syncOnce("t0").plan().decisions()).isEmpty();
    RuleSet qos = RuleCompiler.compile(Path.of("fixtures/examples/qos-ranking/rules"));
    m.swapRules(qos);
    clock.advance(Duration.ofSeconds(61));
    EvictionManager.SyncResult r = m.syncOnce("t61");
    assertThat(m.rulesSha256()).isEqualTo(qos.sha256());
    // the grace period counted from the first sync, under the old rules
    assertThat(r.plan().decisions())
        .singleElement()
        .satisfies(d -> assertThat(d.gracePeriodSeconds()).isEqualTo(0));
    assertThat(r.plan().ranking().get(0).key()).extracting(c -> c.name()).startsWith("qos");
  }

  /**
   * A manager on the real clock with a 60 s interval and a 30 s wait for evicted pods, pods a and
   * b, a 1Gi hard memory threshold: anything sooner than a minute came from a trigger.
   */
  EvictionManager slowLoop(FakeStatsProvider stats, RecordingEvictor ev) {
    return manager(
        planner("evictionHard: {memory.available: 1Gi}\n"),
        stats,
        PodSource.of(List.of(pod("a", 0), pod("b", 0))),
        ev,
        new Events(),
        Clock.systemUTC(),
        new EvictionManager.Settings(
            Duration.ofSeconds(60), Duration.ofSeconds(30), EvictionMethod.DELETE, false, false));
  }

  /**
   * Polls until {@code done} holds, for up to 30 s; the caller then asserts what it waited for.
   * Each wait has its own 30 s: one deadline shared by the waits and sleeps of a test left the last
   * ones little time on a busy machine.
   */
  static void waitUntil(java.util.function.BooleanSupplier done) throws InterruptedException {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (!done.getAsBoolean() && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
  }

  @Test
  void anUrgentTriggerEndsTheWaitForAnEvictedPod() throws Exception {
    FakeStatsProvider stats = new FakeStatsProvider();
    stats.set(FakeStatsProvider.memory(500, 7000, "a", 100, "b", 900));
    RecordingEvictor ev = new RecordingEvictor();
    // the evicted pod never goes away, so only an urgent trigger can end the 30 s wait
    EvictionManager m = slowLoop(stats, ev);
    m.start();
    waitUntil(() -> !ev.decisions().isEmpty());
    assertThat(ev.decisions()).hasSize(1);
    Thread.sleep(100);
    int readsBefore = stats.reads();
    long before = System.nanoTime();
    m.event("memcg threshold crossed", "memcg", true);
    waitUntil(() -> stats.reads() > readsBefore);
    // the next sync ran at once
    assertThat(stats.reads()).isEqualTo(readsBefore + 1);
    assertThat((stats.readNanos(readsBefore + 1) - before) / 1_000_000)
        .isLessThan(5_000); // not the 30 s wait, not the 60 s interval
    // and did not evict the pod in flight again with the same grace period, nor another pod
    // while it may still be going
    Thread.sleep(200);
    assertThat(ev.decisions()).hasSize(1);
  }

  /** A {@link #slowLoop} on memory well above its 1Gi threshold, started, its first sync read. */
  EvictionManager startedWellAboveTheThreshold(FakeStatsProvider stats, RecordingEvictor ev)
      throws InterruptedException {
    stats.set(FakeStatsProvider.memory(5000, 2000, "a", 100, "b", 900));
    EvictionManager m = slowLoop(stats, ev);
    m.start();
    waitUntil(() -> stats.reads() >= 1);
    return m;
  }

  @Test
  void anUpwardCrossingTheSyncDoesNotConfirmIsCheckedAgainOnASchedule() throws Exception {
    FakeStatsProvider stats = new FakeStatsProvider();
    RecordingEvictor ev = new RecordingEvictor();
    EvictionManager m = startedWellAboveTheThreshold(stats, ev);
    Thread.sleep(100);
    assertThat(stats.reads()).isEqualTo(1);
    // the kernel says usage crossed the line, but the statistics do not show it yet
    m.event("memcg threshold crossed", "memcg", true);
    int schedule = EvictionManager.CROSSING_RECHECKS.size();
    waitUntil(() -> stats.reads() >= 2 + schedule);
    assertThat(ev.decisions()).isEmpty();
    assertThat(stats.reads()).as("the re-checks, not the 60 s interval").isEqualTo(2 + schedule);
    // from read to read as the agent did them (this thread may notice each one late when busy):
    // no re-check before its delay, the first ones soon
    for (int i = 0; i < schedule; i++) {
      long delay = EvictionManager.CROSSING_RECHECKS.get(i).toMillis();
      long tookMillis = (stats.readNanos(3 + i) - stats.readNanos(2 + i)) / 1_000_000;
      assertThat(tookMillis).as("re-check %d", i + 1).isBetween(delay - 2, delay + 3_000);
    }
    assertThat(EvictionManager.CROSSING_RECHECKS.get(0)).isLessThan(Duration.ofMillis(100));
    // the schedule ends: none of the re-checks confirmed the crossing, and it is not repeated
    Thread.sleep(2_500);
    assertThat(stats.reads()).isEqualTo(2 + schedule);
    // a way down is not re-checked
    m.event("memcg threshold crossed", "memcg", false);
    waitUntil(() -> stats.reads() >= 3 + schedule);
    Thread.sleep(1_500);
    assertThat(stats.reads()).isEqualTo(3 + schedule);
  }

  @Test
  void theReChecksStopAtTheSyncThatFindsTheThresholdMet() throws Exception {
    FakeStatsProvider stats = new FakeStatsProvider();
    RecordingEvictor ev = new RecordingEvictor();
    EvictionManager m = startedWellAboveTheThreshold(stats, ev);
    // the poll's crossing; the charge shows in the statistics only after the sync it triggered
    m.event("memory poll crossed", dev.evictd.linux.MemoryPoll.SOURCE, true);
    waitUntil(() -> stats.reads() >= 2);
    stats.set(FakeStatsProvider.memory(500, 7000, "a", 100, "b", 900)); // 500Mi: below 1Gi
    waitUntil(() -> !ev.decisions().isEmpty());
    assertThat(ev.decisions()).hasSize(1);
    int atDecision = stats.reads();
    assertThat(atDecision) // a re-check decided (the first, unless this thread was late)
        .isBetween(3, 2 + EvictionManager.CROSSING_RECHECKS.size());
    // and no re-check follows it (the evicted pod's wait is the loop's 30 s)
    Thread.sleep(2_500);
    assertThat(stats.reads()).isEqualTo(atDecision);
  }

  @Test
  @Tag("native")
  void withAnEventPollTheLoopWaitsInItOtherThreadsTriggersWakeItAndCloseClosesIt()
      throws Exception {
    dev.evictd.linux.EventPoll poll = dev.evictd.linux.EventPoll.open();
    org.junit.jupiter.api.Assumptions.assumeTrue(poll != null, "no eventfd here");
    FakeStatsProvider stats = new FakeStatsProvider();
    stats.set(FakeStatsProvider.memory(500, 7000, "a", 100, "b", 900));
    RecordingEvictor ev = new RecordingEvictor();
    // the evicted pod never goes away, so only an urgent trigger can end the 30 s wait
    EvictionManager m = slowLoop(stats, ev);
    m.waitOn(poll);
    m.start();
    waitUntil(() -> !ev.decisions().isEmpty());
    assertThat(ev.decisions()).hasSize(1);
    waitUntil(() -> poll.pollingThread() != null);
    assertThat(poll.pollingThread().getName())
        .as("the sync loop waits for the evicted pod in the poll")
        .startsWith("evictd-sync");
    int readsBefore = stats.reads();
    long before = System.nanoTime();
    m.event("memcg threshold crossed", "memcg", true); // from this thread: wakes the poll
    waitUntil(() -> stats.reads() > readsBefore);
    assertThat(stats.reads()).isEqualTo(readsBefore + 1);
    assertThat((stats.readNanos(readsBefore + 1) - before) / 1_000_000)
        .isLessThan(5_000); // not the 30 s wait, not the 60 s interval
    waitUntil(() -> poll.pollingThread() != null);
    int readsThen = stats.reads();
    // that sync evicted nothing new (the pod is in flight): the loop waits for its interval, in
    // the poll, and a trigger that is not urgent ends that wait too
    long then = System.nanoTime();
    m.trigger("rules reloaded", false);
    waitUntil(() -> stats.reads() > readsThen);
    assertThat(stats.reads()).isEqualTo(readsThen + 1);
    assertThat((stats.readNanos(readsThen + 1) - then) / 1_000_000).isLessThan(5_000);
    m.close();
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> poll.await(0))
        .as("closed with the manager")
        .isInstanceOf(java.io.IOException.class);
  }
}
