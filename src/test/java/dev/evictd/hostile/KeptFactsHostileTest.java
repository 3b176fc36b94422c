package dev.evictd.hostile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionPlan;
import dev.evictd.engine.Planner;
import dev.evictd.engine.PlannerHooks;
import dev.evictd.engine.SyncBudget;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Memory hidden from the kept-facts limit (issue 48, class 4): a BitSet and a lambda that captured
 * an array are not plain values the estimate can measure, so keeping them fails the sync.
 */
class KeptFactsHostileTest {
  /**
   * Held-out variants: an exception (its message, cause and suppressed exceptions; once counted at
   * a fixed size as a java.lang value) and a declared type extending a JDK collection (its own
   * fields; once counted by its elements only), each kept alone.
   */
  @ParameterizedTest
  @ValueSource(strings = {"exception", "subclass"})
  void exceptionsAndDeclaredTypesExtendingJdkClassesFailTheSync(String pod) throws Exception {
    SyncBudget budget = SyncBudget.DEFAULT.withKept(10_000, 20, 32 * RuleSandboxTest.MI);
    try (Planner planner =
        new Planner(
            RuleSandboxTest.withDefaults("keeps-an-exception-and-a-collection-subclass.drl"),
            RuleSandboxTest.config(),
            budget)) {
      List<Pod> pods = List.of(RuleSandboxTest.pod(pod, 0), RuleSandboxTest.pod("a", 10));
      for (int i = 1; i <= 2; i++) {
        EvictionPlan p =
            planner.sync(
                RuleSandboxTest.T0.plusSeconds(10L * i),
                RuleSandboxTest.pressure(pods),
                pods,
                PlannerHooks.noReclaim(null));
        assertThat(p.failed()).as("sync %d", i).isTrue();
        assertThat(p.failure()).contains("the facts rules inserted hold more than");
      }
    }
  }

  @Test
  void factsTheEstimateCannotMeasureFailTheSyncEverySync() throws Exception {
    SyncBudget budget = SyncBudget.DEFAULT.withKept(10_000, 20, 32 * RuleSandboxTest.MI);
    try (Planner planner =
        new Planner(
            RuleSandboxTest.withDefaults("keeps-a-bitset-and-a-lambda.drl"),
            RuleSandboxTest.config(),
            budget)) {
      List<Pod> pods = List.of(RuleSandboxTest.pod("hog", 0), RuleSandboxTest.pod("a", 10));
      for (int i = 1; i <= 3; i++) {
        EvictionPlan p =
            planner.sync(
                RuleSandboxTest.T0.plusSeconds(10L * i),
                RuleSandboxTest.pressure(pods),
                pods,
                PlannerHooks.noReclaim(null));
        assertThat(p.failed()).as("sync %d", i).isTrue();
        assertThat(p.failure())
            .contains("the facts rules inserted hold more than")
            .contains("the session is rebuilt from the state kept before this sync");
      }
    }
  }
}
