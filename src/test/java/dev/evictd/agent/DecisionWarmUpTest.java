package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.FsLayout;
import dev.evictd.api.Signal;
import dev.evictd.config.KubeletEvictionConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.engine.DecisionGuard;
import dev.evictd.engine.Planner;
import dev.evictd.engine.RuleSet;
import dev.evictd.engine.SyncBudget;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.testing.FakeStatsProvider;
import dev.evictd.testing.RecordingEvictor;
import dev.evictd.testing.StuckRule;
import io.fabric8.kubernetes.api.model.Pod;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The decision path's warm-up ({@link DecisionWarmUp}): it leaves no trace in the agent (no
 * eviction, event or metric, the live planner's session as it was, its scratch session garbage
 * afterwards), ends early on a hostile rule set within its bounds (a rule that throws, one that
 * loops, one stuck in Java), defers to real syncs, and runs when the agent's setting says.
 */
class DecisionWarmUpTest {
  static RuleSet defaults;
  static final RuleCompiler.Options UNSAFE =
      new RuleCompiler.Options(true, null, RuleCompiler.Ownership.IGNORE);

  final AgentMetrics metrics = new AgentMetrics(Clock.systemUTC());
  final FakeStatsProvider stats = new FakeStatsProvider();
  final RecordingEvictor evictor = new RecordingEvictor();
  final EvictionManagerTest.Events events = new EvictionManagerTest.Events();
  final AtomicReference<List<Pod>> pods =
      new AtomicReference<>(List.of(RuleProbationTest.pod("a"), RuleProbationTest.pod("b")));
  final List<AutoCloseable> closeables = new CopyOnWriteArrayList<>();

  @BeforeAll
  static void compile() {
    defaults = RuleCompiler.compileDefault();
  }

  @AfterEach
  void close() throws Exception {
    StuckRule.release();
    for (AutoCloseable c : closeables) {
      c.close();
    }
  }

  EvictionManager manager(Planner planner) {
    EvictionManager m =
        new EvictionManager(
            planner,
            stats,
            () -> pods.get(),
            evictor,
            x -> true,
            events,
            metrics,
            Clock.systemUTC(),
            new EvictionManager.Settings(
                Duration.ofSeconds(60), Duration.ZERO, EvictionMethod.DELETE, false, false));
    closeables.add(m);
    return m;
  }

  /**
   * The CPU bound of the warm-ups whose tests expect all {@link DecisionWarmUp#SYNCS} syncs: the
   * agent's 1 s can be reached on a slow or busy host (it was, once, after 590), which ends a
   * warm-up early as it should but is not what these tests check.
   */
  static final Duration WHOLE = Duration.ofSeconds(20);

  /** A warm-up of {@code rules} that runs whenever {@code idle} says so, at start. */
  DecisionWarmUp warmUp(BooleanSupplier idle) {
    DecisionWarmUp w =
        new DecisionWarmUp(
            DecisionWarmUp.When.START,
            RuleProbationTest.CONFIG,
            SyncBudget.DEFAULT,
            DecisionGuard.Limits.DEFAULT,
            Duration.ofSeconds(30),
            DecisionWarmUp.CPU_BOUND,
            idle,
            () -> defaults,
            Clock.systemUTC());
    closeables.add(w);
    return w;
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

  /** The metrics that count what the agent did (every line but the ages read from clocks). */
  String counted() {
    return String.join(
        "\n", metrics.scrape().lines().filter(l -> !l.contains("age_seconds")).toList());
  }

  @Test
  void leavesNoTraceInTheAgentAndItsScratchSessionIsGarbageAfterwards() throws Exception {
    Planner planner =
        new Planner(
            defaults,
            RuleProbationTest.CONFIG,
            SyncBudget.DEFAULT,
            new DecisionGuard.Limits(
                java.util.Set.of(EvictionMethod.DELETE), DecisionGuard.MAX_MESSAGE_LENGTH));
    stats.set(RuleProbationTest.QUIET);
    EvictionManager manager = manager(planner);
    List<EvictionPlan> plans = new CopyOnWriteArrayList<>();
    manager.addSyncListener((s, p) -> plans.add(p));
    DecisionWarmUp w = new DecisionWarmUp(manager, DecisionWarmUp.When.START, WHOLE);
    closeables.add(w);
    manager.start();
    assertThat(await(() -> plans.size() == 1)).as("the start sync").isTrue();
    assertThat(await(manager::idle)).as("the start sync counted").isTrue();
    EvictionPlan before = plans.get(0);
    String countedBefore = counted();

    w.started();
    DecisionWarmUp.Run run = w.current();
    assertThat(run).isNotNull();
    DecisionWarmUp.Result r = run.await(Duration.ofSeconds(60));
    assertThat(r).isNotNull();
    assertThat(r.stopped()).isNull();
    assertThat(r.syncs()).isEqualTo(DecisionWarmUp.SYNCS);
    assertThat(r.pressureSyncs()).isEqualTo(DecisionWarmUp.SYNCS / 2);
    assertThat(r.decided())
        .as("the pressure path ran to its decisions")
        .isEqualTo(r.pressureSyncs());

    // nothing acted on: no eviction, no event, no metric, no sync of the agent's
    assertThat(evictor.decisions()).isEmpty();
    assertThat(events.recorded).isEmpty();
    assertThat(counted()).isEqualTo(countedBefore);
    assertThat(plans).hasSize(1);
    assertThat(planner.abandonedRuleThreads()).isZero();
    assertThat(w.threadsAlive()).isZero();

    // the live session as it was: its next sync is the one after the start sync, still quiet
    EvictionManager.SyncResult next = manager.syncOnce("after the warm-up");
    assertThat(next.plan().seq()).isEqualTo(before.seq() + 1);
    assertThat(next.plan().conditions()).isEqualTo(before.conditions());
    assertThat(next.plan().thresholds()).isEqualTo(before.thresholds());
    assertThat(next.plan().decisions()).isEmpty();
    // and under real pressure it decides on the real pods alone, none of the made-up ones
    stats.set(RuleProbationTest.PRESSURE);
    EvictionManager.SyncResult pressure = manager.syncOnce("pressure");
    assertThat(pressure.plan().decisions()).isNotEmpty();
    assertThat(pressure.plan().decisions())
        .extracting(EvictionDecision::pod)
        .allSatisfy(p -> assertThat(p.namespace()).isEqualTo("default"));
    assertThat(evictor.decisions()).hasSize(pressure.plan().decisions().size());

    // the scratch planner and its session are garbage once the warm-up ended
    java.lang.ref.WeakReference<Planner> scratch = run.scratchMade();
    run = null;
    for (int i = 0; i < 50 && scratch.get() != null; i++) {
      System.gc();
      Thread.sleep(10);
    }
    assertThat(scratch.get()).isNull();
  }

  @Test
  void deferstoRealSyncsAtMostTheScratchSyncInFlightRunsBesideOne() throws Exception {
    Planner planner = new Planner(defaults, RuleProbationTest.CONFIG);
    stats.set(RuleProbationTest.QUIET);
    EvictionManager manager = manager(planner);
    AtomicReference<DecisionWarmUp.Run> running = new AtomicReference<>();
    List<int[]> seen = new CopyOnWriteArrayList<>();
    AtomicBoolean warmUpDone = new AtomicBoolean();
    manager.addSyncListener(
        (s, p) -> {
          DecisionWarmUp.Run r = running.get();
          if (r == null) {
            return;
          }
          // inside a real sync: the warm-up waits; a long sync shows it
          int at = r.syncsSoFar();
          try {
            Thread.sleep(100);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          seen.add(new int[] {at, r.syncsSoFar()});
          warmUpDone.set(r.await(Duration.ZERO) != null);
        });
    DecisionWarmUp w = new DecisionWarmUp(manager, DecisionWarmUp.When.START, WHOLE);
    closeables.add(w);
    manager.start();
    assertThat(await(manager::idle)).isTrue();
    w.started();
    DecisionWarmUp.Run run = w.current();
    assertThat(await(() -> run.syncsSoFar() >= 10)).isTrue();
    running.set(run);
    manager.trigger("a real event", true);
    assertThat(await(() -> !seen.isEmpty())).isTrue();
    assertThat(warmUpDone).as("the real sync came during the warm-up").isFalse();
    int[] during = seen.get(0);
    assertThat(during[1] - during[0])
        .as("scratch syncs run while a real one did")
        .isLessThanOrEqualTo(1);
    DecisionWarmUp.Result r = run.await(Duration.ofSeconds(60));
    assertThat(r.syncs()).as("then it went on").isEqualTo(DecisionWarmUp.SYNCS);
  }

  @Test
  void aRuleThatThrowsUnderPressureStopsItWithAWarningAtTheFirstPressureSync() throws Exception {
    RuleSet throwing = RuleCompiler.compile(Path.of("src/test/resources/rulesets/throws"), UNSAFE);
    DecisionWarmUp w = warmUp(() -> true);
    DecisionWarmUp.Result r = w.start(throwing).await(Duration.ofSeconds(60));
    assertThat(r).isNotNull();
    assertThat(r.warning()).isTrue();
    assertThat(r.syncs()).as("a quiet sync, then the pressure sync that threw").isEqualTo(2);
    assertThat(r.stopped()).contains("scratch sync 2 failed").contains("boom");
    assertThat(w.threadsAlive()).isZero();
  }

  @Test
  void aLoopingRuleStopsItAtTheWarmUpsBoundNotTheSyncBudgetsTenSeconds() throws Exception {
    RuleSet looping = RuleCompiler.compile(Path.of("src/test/resources/rulesets/runaway"), UNSAFE);
    DecisionWarmUp w = warmUp(() -> true);
    DecisionWarmUp.Result r = w.start(looping).await(Duration.ofSeconds(60));
    assertThat(r).isNotNull();
    assertThat(r.warning()).isTrue();
    assertThat(r.syncs()).isEqualTo(2);
    // halted by the firing budget or at the scratch planner's time budget, which is the warm-up's
    // CPU bound (1 s), not the real syncs' 10 s
    assertThat(r.stopped())
        .containsAnyOf("too many rule firings", "the time budget of 1s")
        .doesNotContain("10s");
    assertThat(w.threadsAlive()).isZero();
  }

  @Test
  void aRuleStuckInJavaLosesTheWarmUpItsThreadAndTheAgentCountsItUntilItEnds() throws Exception {
    RuleSet held = RuleCompiler.compile(SyncThreadTakeoverTest.HELD, UNSAFE);
    DecisionWarmUp w = warmUp(() -> true);
    StuckRule.hold();
    DecisionWarmUp.Run run = w.start(held);
    DecisionWarmUp.Result r = run.await(Duration.ofSeconds(60));
    assertThat(r).isNotNull();
    assertThat(r.warning()).isTrue();
    assertThat(r.stopped()).contains("a rule did not stop");
    assertThat(run.threads()).as("the watchdog abandoned the first").isEqualTo(2);
    Thread stuck = StuckRule.heldBy();
    assertThat(stuck.getName()).startsWith("evictd-warmup-");
    assertThat(w.threadsAlive()).isEqualTo(1);
    StuckRule.release();
    stuck.join(Duration.ofSeconds(60).toMillis());
    assertThat(stuck.isAlive()).isFalse();
    assertThat(w.threadsAlive()).isZero();
  }

  @Test
  void offRunsNothingAndNearRunsOncePerRuleSetAfterASyncNearAThreshold() throws Exception {
    Planner planner = new Planner(defaults, RuleProbationTest.CONFIG);
    EvictionManager manager = manager(planner);
    DecisionWarmUp off = new DecisionWarmUp(manager, DecisionWarmUp.When.OFF);
    closeables.add(off);
    off.started();
    assertThat(off.start(defaults)).isNull();

    DecisionWarmUp near = new DecisionWarmUp(manager, DecisionWarmUp.When.NEAR, WHOLE);
    closeables.add(near);
    stats.set(RuleProbationTest.QUIET);
    manager.start(); // the warm-up runs while the loop is idle
    near.started();
    assertThat(near.current()).as("not at start").isNull();
    EvictionManager.SyncResult far = manager.syncOnce("far");
    near.synced(null, far.plan());
    assertThat(near.current()).as("8 GiB, 5 GiB available: far from 1Gi").isNull();
    stats.set(FakeStatsProvider.memory(1500, 6500, "a", 900, "b", 100));
    EvictionManager.SyncResult close = manager.syncOnce("near");
    near.synced(null, close.plan());
    DecisionWarmUp.Run run = near.current();
    assertThat(run).as("1.5 GiB available: near 1Gi").isNotNull();
    assertThat(run.await(Duration.ofSeconds(60)).syncs()).isEqualTo(DecisionWarmUp.SYNCS);
    near.synced(null, close.plan());
    assertThat(near.current()).as("once per rule set").isNull();
  }

  @Test
  void nearIsWithinTheThresholdOrATenthOfTheCapacityAboveIt() {
    EvictionConfig c =
        KubeletEvictionConfig.from(
            YamlNode.parse(
                "k.yaml",
                "evictionHard: {memory.available: 100Mi, nodefs.available: 10%}\n"
                    .getBytes(StandardCharsets.UTF_8)),
            "node",
            FsLayout.SHARED);
    long gi = 1L << 30;
    assertThat(DecisionWarmUp.near(c, plan(Signal.MEMORY_AVAILABLE, 2 * gi, 16 * gi))).isFalse();
    assertThat(DecisionWarmUp.near(c, plan(Signal.MEMORY_AVAILABLE, gi, 16 * gi))).isTrue();
    assertThat(DecisionWarmUp.near(c, plan(Signal.MEMORY_AVAILABLE, 0, 16 * gi))).isTrue();
    // a disk signal near its line is not the memory path
    assertThat(DecisionWarmUp.near(c, plan(Signal.NODEFS_AVAILABLE, 0, 100 * gi))).isFalse();
    assertThat(DecisionWarmUp.near(c, null)).isFalse();
  }

  @Test
  void theInputsPressTheConfigsMemoryThresholdHardFirst() {
    EvictionConfig c =
        KubeletEvictionConfig.from(
            YamlNode.parse(
                "k.yaml",
                ("evictionSoft: {memory.available: 2Gi}\nevictionSoftGracePeriod:"
                        + " {memory.available: 1m}\nevictionHard: {memory.available: 500Mi}\n")
                    .getBytes(StandardCharsets.UTF_8)),
            "node",
            FsLayout.SHARED);
    WarmUpInputs in = WarmUpInputs.of(c, Instant.parse("2026-01-01T00:00:00Z"));
    assertThat(in.threshold().isHard()).isTrue();
    WarmUpInputs.Step quiet = in.step(0);
    WarmUpInputs.Step pressure = in.step(1);
    assertThat(quiet.pressure()).isFalse();
    assertThat(pressure.pressure()).isTrue();
    long line = 500L << 20;
    assertThat(quiet.summary().node().memory().availableBytes()).isGreaterThan(line);
    assertThat(pressure.summary().node().memory().availableBytes()).isLessThan(line);
    assertThat(pressure.pods()).hasSize(WarmUpInputs.PODS);
    assertThat(pressure.pods())
        .allSatisfy(
            p -> assertThat(p.getMetadata().getNamespace()).isEqualTo(WarmUpInputs.NAMESPACE));
    EvictionConfig disk =
        KubeletEvictionConfig.from(
            YamlNode.parse(
                "k.yaml",
                "evictionHard: {nodefs.available: 10%}\n".getBytes(StandardCharsets.UTF_8)),
            "node",
            FsLayout.SHARED);
    assertThat(WarmUpInputs.of(disk, Instant.EPOCH)).as("no memory threshold").isNull();
  }

  static EvictionPlan plan(Signal signal, long available, long capacity) {
    return new EvictionPlan(
        1,
        Instant.EPOCH,
        List.of(new dev.evictd.api.Observation(signal, available, capacity, Instant.EPOCH)),
        List.of(),
        List.of(),
        null,
        List.of(),
        false,
        List.of(),
        List.of(),
        List.of(),
        java.util.Map.of(),
        List.of(),
        null,
        List.of());
  }
}
