package dev.evictd.engine;

import static dev.evictd.engine.PlannerTest.HARD_1GI;
import static dev.evictd.engine.PlannerTest.T0;
import static dev.evictd.engine.PlannerTest.config;
import static dev.evictd.engine.PlannerTest.pod;
import static dev.evictd.engine.PlannerTest.summary;
import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionPlan;
import dev.evictd.api.EvictionPlan.Refusal;
import dev.evictd.ruleset.RuleCompiler;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The planner passes every decision of the rules through the decision guard. */
class PlannerGuardTest {
  static final String EVERY_POD =
      """
      package dev.evictd.rules;

      import dev.evictd.api.*;

      rule "decide every pod, exempt or not"
          ruleflow-group "decide"
      when
          SyncClock()
          $p: PodFact()
      then
          insert(new EvictionDecision($p.ref(), EvictionDecision.Kind.PRESSURE, "memory.available", 1,
              "every pod", java.util.Map.of(), EvictionMethod.DEFAULT, java.util.List.of()));
      end
      """;

  @Test
  void exemptAndDuplicateDecisionsAreRefusedVisiblyNotDroppedQuietly() {
    List<RuleSource> sources = new ArrayList<>(RuleCompiler.readDefault());
    sources.add(new RuleSource("zz-every-pod.drl", "zz-every-pod.drl", EVERY_POD));
    RuleSet rules = RuleCompiler.compile("test", sources);
    try (Planner planner = new Planner(rules, config(HARD_1GI))) {
      // "critical" is exempt (system-critical priority); the default rules decide "b"
      List<Pod> pods = List.of(pod("critical", 2_000_000_000), pod("b", 0));
      EvictionPlan p =
          planner.sync(T0, summary(500, pods, 100), pods, PlannerHooks.noReclaim(null));
      assertThat(p.failed()).isFalse();
      assertThat(p.decisions()).extracting(d -> d.pod().key()).containsExactly("default/b");
      assertThat(p.decisionTrace()).containsKey("default/b");
      assertThat(p.refused())
          .extracting(r -> r.pod().key() + " " + r.reason())
          .containsExactlyInAnyOrder(
              "default/critical " + Refusal.EXEMPT, "default/b " + Refusal.DUPLICATE);
      EvictionPlan.RefusedDecision exempt =
          p.refused().stream().filter(r -> r.reason() == Refusal.EXEMPT).findFirst().orElseThrow();
      assertThat(exempt.rule()).isEqualTo("decide every pod, exempt or not");
      assertThat(exempt.detail()).contains("is exempt (");
      assertThat(p.warnings()).noneMatch(w -> w.contains("decided") || w.contains("exempt"));

      // without pressure only the hostile rule decides: both pods, the exempt one refused
      EvictionPlan calm =
          planner.sync(
              T0.plusSeconds(10), summary(3000, pods, 100), pods, PlannerHooks.noReclaim(null));
      assertThat(calm.decisions()).extracting(d -> d.pod().key()).containsExactly("default/b");
      assertThat(calm.refused())
          .extracting(EvictionPlan.RefusedDecision::reason)
          .containsExactly(Refusal.EXEMPT);
    }
  }
}
