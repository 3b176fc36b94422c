package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionMethod;
import dev.evictd.engine.Planner;
import dev.evictd.engine.RuleSet;
import dev.evictd.engine.SyncBudget;
import dev.evictd.ports.EventSink;
import dev.evictd.ports.PodEvictor;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.testing.FakeStatsProvider;
import dev.evictd.testing.RecordingEvictor;
import dev.evictd.testing.StuckRule;
import io.fabric8.kubernetes.api.model.Pod;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The agent's own loop, with the real planner running the rules inline on its sync thread: a rule
 * stuck in Java is abandoned with that thread by the watchdog, a new sync thread reports that sync
 * and carries on (the next sync evicts under pressure), and the abandoned thread, when its rule
 * finally returns, does nothing more.
 */
class SyncThreadTakeoverTest {
  static final Path HELD = Path.of("src/test/resources/rulesets/held");

  AgentMetrics metrics = new AgentMetrics(Clock.systemUTC());
  FakeStatsProvider stats = new FakeStatsProvider();
  RecordingEvictor recording = new RecordingEvictor();
  Set<Thread> evictedOn = ConcurrentHashMap.newKeySet();
  AtomicReference<List<Pod>> pods =
      new AtomicReference<>(List.of(RuleProbationTest.pod("a"), RuleProbationTest.pod("b")));
  EvictionManager manager;

  @AfterEach
  void close() {
    StuckRule.release();
    if (manager != null) {
      manager.close();
    }
  }

  static boolean await(BooleanSupplier condition) throws InterruptedException {
    long until = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > until) {
        return false;
      }
      Thread.sleep(5);
    }
    return true;
  }

  double syncs(String result) {
    String line = "evictd_syncs_total{result=\"" + result + "\"} ";
    return metrics
        .scrape()
        .lines()
        .filter(l -> l.startsWith(line))
        .mapToDouble(l -> Double.parseDouble(l.substring(line.length())))
        .findFirst()
        .orElse(0);
  }

  EvictionManager manager(Planner planner, PodEvictor evictor) {
    return manager(planner, evictor, Duration.ofSeconds(10));
  }

  EvictionManager manager(Planner planner, PodEvictor evictor, Duration interval) {
    return new EvictionManager(
        planner,
        stats,
        () -> pods.get(),
        evictor,
        x -> true,
        EventSink.NONE,
        metrics,
        Clock.systemUTC(),
        new EvictionManager.Settings(interval, Duration.ZERO, EvictionMethod.DELETE, false, false));
  }

  /** A new pod makes the engine evaluate the held condition, which sticks once, under pressure. */
  void newPodUnderPressureSticksOnce() {
    StuckRule.holdOnce();
    stats.set(RuleProbationTest.PRESSURE);
    pods.set(
        List.of(
            RuleProbationTest.pod("a"), RuleProbationTest.pod("b"), RuleProbationTest.pod("c")));
    manager.trigger("new pod", true);
  }

  @Test
  void aStuckRuleLosesItsSyncThreadAndANewOneEvictsUnderPressure() throws Exception {
    RuleSet held =
        RuleCompiler.compile(
            HELD, new RuleCompiler.Options(true, null, RuleCompiler.Ownership.IGNORE));
    Planner planner =
        new Planner(
            held, RuleProbationTest.CONFIG, SyncBudget.DEFAULT.withTime(Duration.ofSeconds(1)));
    PodEvictor evictor =
        (EvictionDecision d) -> {
          evictedOn.add(Thread.currentThread());
          return recording.evict(d);
        };
    stats.set(RuleProbationTest.QUIET);
    manager = manager(planner, evictor);
    manager.start();
    assertThat(await(() -> syncs("ok") == 1.0)).as("the start sync").isTrue();

    newPodUnderPressureSticksOnce();
    assertThat(await(() -> planner.abandonedRuleThreads() == 1)).isTrue();
    Thread stuck = StuckRule.heldBy();
    assertThat(stuck.getName()).startsWith("evictd-sync-");
    assertThat(StuckRule.inside()).as("still stuck in the rule").isEqualTo(1);
    assertThat(planner.aliveAbandonedRuleThreads()).isEqualTo(1);

    // a new sync thread reports the abandoned sync, then evicts
    assertThat(await(() -> !recording.decisions().isEmpty())).isTrue();
    assertThat(syncs("failed")).as("the abandoned sync, reported").isEqualTo(1.0);
    // the pod without statistics ranks first, as with the kubelet
    assertThat(recording.decisions().get(0).pod().name()).isEqualTo("c");
    assertThat(evictedOn).doesNotContain(stuck);
    assertThat(manager.healthy()).isTrue();

    // the stuck rule returns: its thread ends without acting on anything
    StuckRule.release();
    stuck.join(Duration.ofSeconds(60).toMillis());
    assertThat(stuck.isAlive()).isFalse();
    assertThat(evictedOn).doesNotContain(stuck);
    assertThat(syncs("failed")).as("nor reported a sync of its own").isEqualTo(1.0);
    assertThat(planner.aliveAbandonedRuleThreads()).isZero();
    assertThat(planner.abandonedRuleThreads()).isEqualTo(1);
  }

  @Test
  @Tag("native")
  void withAnEventPollTheNewSyncThreadWaitsInItAndTriggersStillReachTheLoop() throws Exception {
    dev.evictd.linux.EventPoll poll = dev.evictd.linux.EventPoll.open();
    org.junit.jupiter.api.Assumptions.assumeTrue(poll != null, "no eventfd here");
    RuleSet held =
        RuleCompiler.compile(
            HELD, new RuleCompiler.Options(true, null, RuleCompiler.Ownership.IGNORE));
    Planner planner =
        new Planner(
            held, RuleProbationTest.CONFIG, SyncBudget.DEFAULT.withTime(Duration.ofSeconds(1)));
    stats.set(RuleProbationTest.QUIET);
    // an interval longer than any wait here: every sync after the first comes from a trigger
    manager = manager(planner, recording, Duration.ofHours(1));
    manager.waitOn(poll);
    manager.start();
    assertThat(await(() -> syncs("ok") == 1.0)).as("the start sync").isTrue();
    assertThat(await(() -> poll.pollingThread() != null)).isTrue();
    Thread first = poll.pollingThread();
    assertThat(first.getName()).startsWith("evictd-sync-");

    newPodUnderPressureSticksOnce(); // its trigger wakes the loop out of the poll
    assertThat(await(() -> planner.abandonedRuleThreads() == 1)).isTrue();
    assertThat(StuckRule.heldBy()).isSameAs(first);
    assertThat(await(() -> !recording.decisions().isEmpty())).as("the new thread evicts").isTrue();
    assertThat(await(() -> poll.pollingThread() != null && poll.pollingThread() != first))
        .as("the new sync thread waits in the poll")
        .isTrue();
    double failed = syncs("failed");
    double ok = syncs("ok");
    manager.trigger("rules reloaded", false); // from this thread: through the poll's wake-up
    assertThat(await(() -> syncs("ok") + syncs("failed") > ok + failed)).isTrue();
    StuckRule.release();
    manager.close();
    manager = null;
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> poll.await(0))
        .as("closed with the manager")
        .isInstanceOf(java.io.IOException.class);
  }

  @Test
  void theAbandonedSyncIsHeldAgainstTheRulesItRanNotASetSwappedInBeforeItsReport(
      @org.junit.jupiter.api.io.TempDir Path tmp) throws Exception {
    RuleCompiler.Options options =
        new RuleCompiler.Options(true, null, RuleCompiler.Ownership.IGNORE);
    RuleSet held = RuleCompiler.compile(HELD, options);
    Path rulesDir = Path.of("fixtures/examples/qos-ranking/rules");
    RuleSet next = RuleCompiler.compile(rulesDir, options);
    RuleSet defaults = RuleCompiler.compileDefault();
    assertThat(next.sha256()).isNotEqualTo(defaults.sha256()).isNotEqualTo(held.sha256());
    RuleStateStore store = new RuleStateStore(tmp.resolve("state"));
    RuleProbation probation =
        new RuleProbation(
            3,
            store,
            RuleProbationTest.CONFIG,
            () -> defaults,
            sources -> RuleCompiler.compile("saved", sources, options),
            metrics::rulesReload,
            Clock.systemUTC());
    probation.started(held, null); // trusted
    // the stuck sync runs past this budget while the next set is handed over
    Planner planner =
        new Planner(
            held, RuleProbationTest.CONFIG, SyncBudget.DEFAULT.withTime(Duration.ofSeconds(3)));
    stats.set(RuleProbationTest.QUIET);
    manager = manager(planner, recording);
    manager.setProbation(probation);
    probation.onSwap(manager::swapRules);
    manager.start();
    assertThat(await(() -> syncs("ok") == 1.0)).as("the start sync").isTrue();

    newPodUnderPressureSticksOnce();
    assertThat(await(() -> StuckRule.inside() == 1)).as("stuck in the trusted set").isTrue();
    // a reload while the trusted set's sync is stuck: swapped in at the next sync boundary, which
    // is the replacement thread's report of the stuck sync
    assertThat(probation.admit(next, rulesDir, null)).isEqualTo(RuleProbation.LOADED);
    assertThat(planner.abandonedRuleThreads()).as("admitted before the abandonment").isZero();

    assertThat(await(() -> !recording.decisions().isEmpty())).isTrue();
    assertThat(syncs("failed")).as("the abandoned sync, reported").isEqualTo(1.0);
    assertThat(manager.rulesSha256()).isEqualTo(next.sha256());
    // the stuck thread is held against the set it ran, and the new set stays on probation
    assertThat(store.bad(held.sha256())).isNotNull();
    assertThat(store.bad(next.sha256())).isNull();
    assertThat(probation.onProbation()).isTrue();
    stats.set(RuleProbationTest.QUIET);
    assertThat(
            await(
                () -> {
                  manager.trigger("test", false);
                  return !probation.onProbation();
                }))
        .as("trusted after clean syncs")
        .isTrue();
    assertThat(probation.trusted().sha256()).isEqualTo(next.sha256());
    assertThat(store.bad(next.sha256())).isNull();
    assertThat(manager.rulesSha256()).isEqualTo(next.sha256());
  }
}
