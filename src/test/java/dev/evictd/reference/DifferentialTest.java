package dev.evictd.reference;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.testing.prop.Property;
import org.junit.jupiter.api.Test;

/**
 * The planner with the default rules agrees with the kubelet reference implementation on thousands
 * of random scenarios, step by step (conditions, signal, node-level reclaim, ranking, evictions
 * with grace period and message), and keeps its invariants. A disagreement is shrunk and printed as
 * a fixture ready to be saved in fixtures/.
 */
class DifferentialTest {
  static final int SCENARIOS = 2_000;

  @Test
  void plannerAgreesWithTheKubeletReference() {
    Property.Report report =
        Property.of(
                "planner with default rules = kubelet reference",
                ScenarioGen::scenario,
                Differential::check)
            .render(Differential::fixtureText)
            .seed(20_260_101L)
            .tries(SCENARIOS)
            .check();
    assertThat(report.cases())
        .isGreaterThanOrEqualTo(Integer.getInteger("evictd.prop.tries", SCENARIOS));
  }
}
