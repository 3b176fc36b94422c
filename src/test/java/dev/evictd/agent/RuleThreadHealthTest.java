package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionPlan;
import dev.evictd.engine.Planner;
import dev.evictd.engine.PlannerHooks;
import dev.evictd.engine.RuleSet;
import dev.evictd.engine.SyncBudget;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.testing.FakeStatsProvider;
import dev.evictd.testing.StuckRule;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Health from abandoned rule threads, with a real planner whose rule threads stick: not ready while
 * one runs, unhealthy (Kubernetes restarts the agent) from the bound on, and both recover when the
 * threads end.
 */
class RuleThreadHealthTest {
  @Test
  void notReadyWhileOneRunsUnhealthyFromTheBoundAndBothRecoverWhenTheyEnd() throws Exception {
    RuleSet held =
        RuleCompiler.compile(
            Path.of("src/test/resources/rulesets/held"),
            new RuleCompiler.Options(true, null, RuleCompiler.Ownership.IGNORE));
    StuckRule.hold();
    try (Planner planner =
        new Planner(
            held, RuleProbationTest.CONFIG, SyncBudget.DEFAULT.withTime(Duration.ofSeconds(1)))) {
      RuleThreadHealth health =
          new RuleThreadHealth(planner::aliveAbandonedRuleThreads, Planner.MAX_ABANDONED_THREADS);
      assertThat(health.ready()).isTrue();
      assertThat(health.healthy()).isTrue();
      assertThat(health.describe()).isEmpty();
      var pods = List.of(RuleProbationTest.pod("a"));
      for (int i = 1; i <= Planner.MAX_ABANDONED_THREADS; i++) {
        EvictionPlan p =
            planner.sync(
                Instant.EPOCH.plusSeconds(i),
                FakeStatsProvider.memory(5000, 3000, "a", 900),
                pods,
                PlannerHooks.noReclaim(null));
        assertThat(p.failed()).isTrue();
        assertThat(health.ready()).isFalse();
        assertThat(health.healthy()).isEqualTo(i < Planner.MAX_ABANDONED_THREADS);
      }
      assertThat(health.describe())
          .isEqualTo("3 abandoned rule threads running (healthz fails at 3)\n");
      StuckRule.release();
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (!health.ready() && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
      assertThat(health.ready()).isTrue();
      assertThat(health.healthy()).isTrue();
    } finally {
      StuckRule.release();
    }
  }
}
