package dev.evictd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.FsLayout;
import dev.evictd.config.KubeletEvictionConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PlannerTest {
  static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  static final long MI = 1024 * 1024;

  static EvictionConfig config(String yaml) {
    return KubeletEvictionConfig.from(
        YamlNode.parse("k.yaml", yaml.getBytes(StandardCharsets.UTF_8)), "n", FsLayout.SHARED);
  }

  static Pod pod(String name, int priority) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("default")
        .endMetadata()
        .withNewSpec()
        .withPriority(priority)
        .addNewContainer()
        .withName("c")
        .endContainer()
        .endSpec()
        .build();
  }

  static Summary summary(long availableMi, List<Pod> pods, long podUsageMi) {
    List<Summary.PodStats> ps = new ArrayList<>();
    for (Pod p : pods) {
      ps.add(
          new Summary.PodStats(
              new Summary.PodReference(
                  p.getMetadata().getName(), "default", "default/" + p.getMetadata().getName()),
              List.of(),
              new Summary.MemoryStats(null, null, null, podUsageMi * MI, null),
              List.of(),
              null,
              null));
    }
    return new Summary(
        new Summary.NodeStats(
            "n",
            new Summary.MemoryStats(null, availableMi * MI, null, 4096 * MI, null),
            null,
            null,
            null,
            null),
        ps);
  }

  /**
   * The stuck-rule sets end their loops by the wall clock, which the lint refuses: they are loaded
   * with its refusals as warnings.
   */
  static final RuleCompiler.Options WALL_CLOCK_ALLOWED =
      new RuleCompiler.Options(true, null, RuleCompiler.Ownership.IGNORE);

  static final String HARD_1GI =
      "evictionHard: {memory.available: 1Gi}\nenforceNodeAllocatable: []\n";

  @Test
  void evictsTheFirstRankedPodAndFollowsPodListChanges() {
    try (Planner planner = new Planner(RuleCompiler.compileDefault(), config(HARD_1GI))) {
      List<Pod> pods = List.of(pod("a", 10), pod("b", 0), pod("c", 5));
      EvictionPlan p1 =
          planner.sync(T0, summary(500, pods, 100), pods, PlannerHooks.noReclaim(null));
      assertThat(p1.decisions()).extracting(d -> d.pod().key()).containsExactly("default/b");
      assertThat(p1.decisions().get(0).rules())
          .first()
          .isEqualTo("evict the first pod in rank order that is not exempt");
      assertThat(p1.decisions().get(0).rules())
          .contains("select the threshold to act on: memory first, then disk, then PID");
      // b is gone: the next sync ranks the remaining pods only
      List<Pod> rest = List.of(pods.get(0), pods.get(2));
      EvictionPlan p2 =
          planner.sync(
              T0.plusSeconds(10), summary(600, rest, 100), rest, PlannerHooks.noReclaim(null));
      assertThat(p2.ranking())
          .extracting(r -> r.pod().key())
          .containsExactly("default/c", "default/a");
      assertThat(p2.decisions()).extracting(d -> d.pod().key()).containsExactly("default/c");
      // pressure relieved: no ranking, condition kept for the transition period
      EvictionPlan p3 =
          planner.sync(
              T0.plusSeconds(20), summary(2000, rest, 100), rest, PlannerHooks.noReclaim(null));
      assertThat(p3.decisions()).isEmpty();
      assertThat(p3.ranking()).isEmpty();
      assertThat(p3.conditions()).hasSize(1);
      assertThat(p3.seq()).isEqualTo(3);
    }
  }

  @Test
  void aRuleThatThrowsFailsTheSyncByNameAndEvictsNothing() {
    RuleSet rules = RuleCompiler.compile(Path.of("src/test/resources/rulesets/throws"));
    try (Planner planner = new Planner(rules, config(HARD_1GI))) {
      List<Pod> pods = List.of(pod("a", 0));
      EvictionPlan p =
          planner.sync(T0, summary(500, pods, 100), pods, PlannerHooks.noReclaim(null));
      assertThat(p.failed()).as("%s", p).isTrue();
      assertThat(p.failure()).contains("rule \"explodes when a pod is ranked\"", "boom", "decide");
      assertThat(p.decisions()).isEmpty();
      // the session stays usable: the next sync fails the same way, and does not crash
      EvictionPlan p2 =
          planner.sync(
              T0.plusSeconds(10), summary(500, pods, 100), pods, PlannerHooks.noReclaim(null));
      assertThat(p2.failed()).isTrue();
      assertThat(p2.decisions()).isEmpty();
    }
  }

  @Test
  void aRunawayRuleFailsTheSyncWithinTheFiringBudget() {
    RuleSet rules = RuleCompiler.compile(Path.of("src/test/resources/rulesets/runaway"));
    try (Planner planner = new Planner(rules, config(HARD_1GI), 10_000)) {
      List<Pod> pods = List.of(pod("a", 0));
      EvictionPlan p =
          planner.sync(T0, summary(500, pods, 100), pods, PlannerHooks.noReclaim(null));
      assertThat(p.failed()).isTrue();
      assertThat(p.failure()).contains("too many rule firings", "loops forever");
      assertThat(p.decisions()).isEmpty();
    }
  }

  @Test
  void aRuleStuckInJavaFailsTheSyncWithinTheTimeBudgetAndCannotReachLaterSyncs()
      throws InterruptedException {
    RuleSet rules =
        RuleCompiler.compile(Path.of("src/test/resources/rulesets/spins"), WALL_CLOCK_ALLOWED);
    // The recovery sync below runs within the same 1 s budget while the abandoned thread still
    // spins on one of the cores; cold (rule classes never run in this JVM) it took over 1 s on a
    // loaded 2-core machine. So these rules run once first, on another planner with the default
    // budget and a pod the spinning rule ignores: what is timed is the budget, not this JVM's
    // warm-up.
    try (Planner warm = new Planner(rules, config(HARD_1GI), SyncBudget.DEFAULT)) {
      List<Pod> other = List.of(pod("b", 0));
      EvictionPlan w = warm.sync(T0, summary(500, other, 100), other, PlannerHooks.noReclaim(null));
      assertThat(w.failed()).as("%s", w.failure()).isFalse();
      assertThat(w.decisions()).extracting(d -> d.pod().name()).containsExactly("b");
    }
    SyncBudget budget = SyncBudget.DEFAULT.withTime(java.time.Duration.ofSeconds(1));
    try (Planner planner = new Planner(rules, config(HARD_1GI), budget)) {
      List<Pod> pods = List.of(pod("a", 0));
      long t0 = System.nanoTime();
      EvictionPlan p1 =
          planner.sync(T0, summary(500, pods, 100), pods, PlannerHooks.noReclaim(null));
      long elapsedMs = (System.nanoTime() - t0) / 1_000_000;
      assertThat(p1.failed()).isTrue();
      assertThat(p1.failure())
          .contains(
              "rule \"spins in Java in the first sync\" did not finish within the time budget of 1s")
          .contains("in phase observe", "abandoned (1 so far)");
      assertThat(p1.decisions()).isEmpty();
      // the budget plus the grace given to halt(), well before the rule would have finished (2.5 s)
      assertThat(elapsedMs).isBetween(1000L, 2000L);
      assertThat(planner.abandonedRuleThreads()).isEqualTo(1);

      // the planner carries on with a fresh session: the default rules evict the pod
      EvictionPlan p2 =
          planner.sync(
              T0.plusSeconds(10), summary(500, pods, 100), pods, PlannerHooks.noReclaim(null));
      assertThat(p2.failed()).as("%s", p2.failure()).isFalse();
      assertThat(p2.decisions()).extracting(d -> d.pod().name()).containsExactly("a");

      // once the stuck consequence ends (and with it the abandoned thread), its decision went to
      // the abandoned session, never to a plan
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (planner.aliveAbandonedRuleThreads() > 0 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(planner.aliveAbandonedRuleThreads()).isZero();
      EvictionPlan p3 =
          planner.sync(
              T0.plusSeconds(20), summary(500, pods, 100), pods, PlannerHooks.noReclaim(null));
      assertThat(p3.failed()).isFalse();
      assertThat(p3.decisions()).noneMatch(d -> d.signal().equals("zombie"));
      assertThat(p3.decisions()).extracting(d -> d.pod().name()).containsExactly("a");
    }
  }

  @Test
  void aLoopOfFiringsIsHaltedAtTheTimeBudgetWithoutLosingItsThread() {
    RuleSet rules = RuleCompiler.compile(Path.of("src/test/resources/rulesets/runaway"));
    // Cold (these rules never run in this JVM), the 500 ms budget below went to the JVM's warm-up:
    // the default rules' first firings, or the halted thread's first way back, which then missed
    // its grace on a loaded 2-core machine. So the loop runs once first on another planner, ended
    // by the firing budget (halted from the rule thread itself, no grace involved): what is timed
    // is the time budget, not the warm-up.
    try (Planner warm = new Planner(rules, config(HARD_1GI), 10_000)) {
      List<Pod> pods = List.of(pod("a", 0));
      EvictionPlan w = warm.sync(T0, summary(500, pods, 100), pods, PlannerHooks.noReclaim(null));
      assertThat(w.failed()).isTrue();
      assertThat(w.failure()).contains("too many rule firings", "loops forever");
      assertThat(warm.abandonedRuleThreads()).isZero();
    }
    SyncBudget budget = new SyncBudget(Long.MAX_VALUE / 4, 0, java.time.Duration.ofMillis(500));
    try (Planner planner = new Planner(rules, config(HARD_1GI), budget)) {
      List<Pod> pods = List.of(pod("a", 0));
      long t0 = System.nanoTime();
      EvictionPlan p =
          planner.sync(T0, summary(500, pods, 100), pods, PlannerHooks.noReclaim(null));
      assertThat((System.nanoTime() - t0) / 1_000_000).isLessThan(1500L);
      assertThat(p.failed()).isTrue();
      assertThat(p.failure())
          .containsAnyOf("were still firing at the end of", "did not finish within");
      assertThat(p.failure()).contains("the time budget of 500ms", "loops forever", "phase track");
      assertThat(p.failure()).doesNotContain("abandoned");
      assertThat(p.decisions()).isEmpty();
      assertThat(planner.abandonedRuleThreads()).isZero();
    }
  }

  @Test
  void aConditionStuckEverySyncFailsEachAndWhileThreeAbandonedThreadsRunThePlannerStops()
      throws InterruptedException {
    RuleSet rules =
        RuleCompiler.compile(
            Path.of("src/test/resources/rulesets/held"),
            new RuleCompiler.Options(true, null, RuleCompiler.Ownership.IGNORE));
    // long enough for the default rules' recovery sync below on a busy machine; each stuck sync
    // lasts exactly this long
    SyncBudget budget = SyncBudget.DEFAULT.withTime(java.time.Duration.ofMillis(1500));
    Planner planner;
    try {
      planner = new Planner(rules, config(HARD_1GI), budget);
    } catch (dev.evictd.api.RulesException e) {
      throw new AssertionError("no pod yet: nothing stuck to evaluate", e);
    }
    dev.evictd.testing.StuckRule.hold();
    try (planner) {
      List<Pod> pods = List.of(pod("a", 0));
      for (int i = 1; i <= Planner.MAX_ABANDONED_THREADS; i++) {
        EvictionPlan p =
            planner.sync(
                T0.plusSeconds(10L * i),
                summary(500, pods, 100),
                pods,
                PlannerHooks.noReclaim(null));
        assertThat(p.failed()).isTrue();
        assertThat(p.failure())
            .contains(
                "rules did not finish within the time budget of 1.5s while observing and selecting")
            .contains("(in a condition")
            .endsWith("abandoned (" + i + " so far)");
        assertThat(p.decisions()).isEmpty();
        assertThat(planner.aliveAbandonedRuleThreads()).isEqualTo(i);
      }
      long t0 = System.nanoTime();
      EvictionPlan stopped =
          planner.sync(
              T0.plusSeconds(60), summary(500, pods, 100), pods, PlannerHooks.noReclaim(null));
      assertThat((System.nanoTime() - t0) / 1_000_000).isLessThan(100L);
      assertThat(stopped.failure())
          .isEqualTo(
              "3 rule threads are stuck in rules that never finished; evictd must be restarted"
                  + " (or they must end)");

      // once the stuck threads end, the planner syncs again (and the condition now returns)
      dev.evictd.testing.StuckRule.release();
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (planner.aliveAbandonedRuleThreads() > 0 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(planner.aliveAbandonedRuleThreads()).isZero();
      assertThat(planner.abandonedRuleThreads()).isEqualTo(Planner.MAX_ABANDONED_THREADS);
      EvictionPlan again =
          planner.sync(
              T0.plusSeconds(70), summary(500, pods, 100), pods, PlannerHooks.noReclaim(null));
      assertThat(again.failed()).as("%s", again.failure()).isFalse();
      assertThat(again.decisions()).extracting(d -> d.pod().name()).containsExactly("a");
    } finally {
      dev.evictd.testing.StuckRule.release();
    }
  }

  @Test
  void missingStatisticsMeanNoObservationAndNoEviction() {
    try (Planner planner = new Planner(RuleCompiler.compileDefault(), config(HARD_1GI))) {
      List<Pod> pods = List.of(pod("a", 0));
      EvictionPlan p =
          planner.sync(T0, new Summary(null, List.of()), pods, PlannerHooks.noReclaim(null));
      assertThat(p.observations()).isEmpty();
      assertThat(p.decisions()).isEmpty();
      assertThat(p.conditions()).isEmpty();
    }
  }
}
