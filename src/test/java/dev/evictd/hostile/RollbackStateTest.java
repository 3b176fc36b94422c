package dev.evictd.hostile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionPlan;
import dev.evictd.api.NodeConditionType;
import dev.evictd.engine.Planner;
import dev.evictd.engine.PlannerHooks;
import dev.evictd.engine.RuleSet;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.api.model.Pod;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * State a failed set wrote does not outlive its rollback (hostile-runtime/future-condition-state):
 * the set dates every condition's state year 9999 and then fails; swapped back, the rules it
 * replaced see their own state again, and report no condition while no threshold is met.
 */
class RollbackStateTest {
  private static final long MI = RuleSandboxTest.MI;

  /** Plenty of memory: no threshold met. */
  private static Summary calm(List<Pod> pods) {
    Summary pressure = RuleSandboxTest.pressure(pods);
    return new Summary(
        new Summary.NodeStats(
            "n",
            new Summary.MemoryStats(null, 3000 * MI, null, 1000 * MI, null),
            null,
            null,
            null,
            null),
        pressure.pods());
  }

  private static EvictionPlan sync(Planner planner, int step) {
    List<Pod> pods = List.of(RuleSandboxTest.pod("a", 10), RuleSandboxTest.pod("b", 0));
    return planner.sync(
        RuleSandboxTest.T0.plusSeconds(10L * step), calm(pods), pods, PlannerHooks.noReclaim(null));
  }

  @Test
  void aRolledBackSetsFutureConditionStateIsGoneWithIt() throws IOException {
    RuleSet defaults = RuleCompiler.compile("default", RuleCompiler.readDefault());
    RuleSet hostile = RuleSandboxTest.withDefaults("future-condition-state.drl");
    try (Planner planner = new Planner(defaults, RuleSandboxTest.config())) {
      assertThat(sync(planner, 1).conditions()).isEmpty();
      planner.swapRules(hostile);
      EvictionPlan written = sync(planner, 2);
      assertThat(written.failed()).as("%s", written.failure()).isFalse();
      assertThat(written.conditions()).containsExactlyInAnyOrder(NodeConditionType.values());
      EvictionPlan failed = sync(planner, 3);
      assertThat(failed.failed()).isTrue();
      planner.swapRules(defaults); // the rollback
      for (int step = 4; step <= 6; step++) {
        EvictionPlan p = sync(planner, step);
        assertThat(p.failed()).as("%s", p.failure()).isFalse();
        assertThat(p.conditions()).as("sync %d", step).isEmpty();
      }
    }
  }
}
