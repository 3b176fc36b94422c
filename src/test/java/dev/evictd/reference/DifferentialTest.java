package dev.evictd.reference;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.testing.prop.ChoicesArbitrary;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterProperty;

/**
 * The planner with the default rules agrees with the kubelet reference implementation on thousands
 * of random scenarios, step by step (conditions, signal, node-level reclaim, ranking, evictions
 * with grace period and message), and keeps its invariants. A disagreement is shrunk by jqwik and
 * printed as a fixture ready to be saved in fixtures/.
 */
class DifferentialTest {
  static final int SCENARIOS = 2_000;

  private int checked;

  @Property(tries = SCENARIOS, seed = "20260101")
  void plannerAgreesWithTheKubeletReference(@ForAll("scenarios") Scenario s) {
    checked++;
    ChoicesArbitrary.assertHolds(
        "planner with default rules = kubelet reference",
        s,
        Differential::check,
        Differential::fixtureText);
  }

  @Provide
  Arbitrary<Scenario> scenarios() {
    return ChoicesArbitrary.of(ScenarioGen::scenario);
  }

  @AfterProperty
  void everyScenarioWasChecked() {
    assertThat(checked).isGreaterThanOrEqualTo(SCENARIOS);
  }
}
