package dev.evictd.engine;

import static dev.evictd.engine.PlannerTest.HARD_1GI;
import static dev.evictd.engine.PlannerTest.T0;
import static dev.evictd.engine.PlannerTest.config;
import static dev.evictd.engine.PlannerTest.pod;
import static dev.evictd.engine.PlannerTest.summary;
import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.EvictionPlan.Refusal;
import dev.evictd.api.NodeCondition;
import dev.evictd.api.NodeConditionType;
import dev.evictd.api.PodRef;
import dev.evictd.api.ThresholdMet;
import io.fabric8.kubernetes.api.model.Pod;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PlanAssemblyTest {
  @TempDir Path dir;

  private final EvictionConfig config = config(HARD_1GI);
  private final Pod a = pod("a", 0);
  private final Pod b = pod("b", 0);

  private static EvictionDecision decision(
      String name, EvictionDecision.Kind kind, String signal, String message) {
    return new EvictionDecision(
        new PodRef("default", name, "default/" + name),
        kind,
        signal,
        0,
        message,
        Map.of(),
        EvictionMethod.DEFAULT,
        List.of());
  }

  private SessionHarness harness() {
    RuleSet rules =
        TestRules.compile(
            dir,
            """
            rule "sees a pod"
                ruleflow-group "observe"
            when
                PodFact()
            then
            end
            """);
    return new SessionHarness(rules, config);
  }

  @Test
  void thePlanHoldsWhatTheRulesLeftAndTheDecisionsTheGuardAccepted() {
    try (SessionHarness h = harness()) {
      h.sync(1, T0, List.of(a, b), summary(500, List.of(a, b), 100));
      SessionRecord r = h.session.record();
      r.perSyncFacts.add(new ThresholdMet(config.thresholds().get(0), null, 0));
      r.perSyncFacts.add(new NodeCondition(NodeConditionType.MemoryPressure));
      r.perSyncFacts.add(new NodeCondition(NodeConditionType.MemoryPressure));
      // b is exempt; a is decided twice, for pressure and then for local storage
      r.exemptions.put("default/b", new ArrayList<>(List.of("a test")));
      r.perSyncFacts.add(
          decision("b", EvictionDecision.Kind.PRESSURE, "memory.available", "pressure"));
      r.perSyncFacts.add(
          decision("a", EvictionDecision.Kind.PRESSURE, "memory.available", "pressure"));
      r.perSyncFacts.add(
          decision("a", EvictionDecision.Kind.LOCAL_STORAGE, "emptydirfs.limit", "storage"));
      PlanAssembly plans =
          new PlanAssembly(
              config, new DecisionGuard(config, DecisionGuard.Limits.DEFAULT), h.facts);
      List<String> warnings = new ArrayList<>();
      EvictionPlan p = plans.build(r, T0, List.of(), warnings, null);

      assertThat(p.seq()).isEqualTo(1);
      assertThat(p.failed()).isFalse();
      assertThat(p.conditions()).containsExactly(NodeConditionType.MemoryPressure);
      assertThat(p.thresholds()).singleElement().satisfies(t -> assertThat(t.met()).isTrue());
      // local storage first, so the pressure decision for a is the duplicate; then b, in list order
      assertThat(p.decisions()).extracting(EvictionDecision::message).containsExactly("storage");
      assertThat(p.refused())
          .extracting(EvictionPlan.RefusedDecision::reason)
          .containsExactly(Refusal.DUPLICATE, Refusal.EXEMPT);
      assertThat(p.decisionTrace()).containsOnlyKeys("default/a");

      // a failed sync shows what the rules did, and decides nothing
      EvictionPlan failed = plans.build(r, T0, List.of(), new ArrayList<>(), "it broke");
      assertThat(failed.failure()).isEqualTo("it broke");
      assertThat(failed.decisions()).isEmpty();
      assertThat(failed.refused()).isEmpty();
      assertThat(failed.conditions()).containsExactly(NodeConditionType.MemoryPressure);

      EvictionPlan before = plans.failed(T0, List.of("w"), "stuck");
      assertThat(before.failure()).isEqualTo("stuck");
      assertThat(before.warnings()).containsExactly("w");
      assertThat(before.thresholds()).isEmpty();
      assertThat(before.observations()).isNotEmpty();
    }
  }
}
