package dev.evictd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.PodFact;
import dev.evictd.api.PodRef;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The order in which the guard's "first decision for a pod wins" applies. */
class DecisionGuardOrderTest {
  private static final Map<String, PodFact> ACTIVE =
      Map.of(
          "u-web", PodFacts.of(PlannerTest.pod("web", 0), 0),
          "u-db", PodFacts.of(PlannerTest.pod("db", 0), 1));

  private static EvictionDecision decision(String uid, EvictionDecision.Kind kind, String m) {
    return new EvictionDecision(
        uid == null ? null : new PodRef("default", uid, uid),
        kind,
        "memory.available",
        0,
        m,
        Map.of(),
        EvictionMethod.DEFAULT,
        List.of());
  }

  @Test
  void localStorageFirstThenTheActiveListWithUnknownPodsLast() {
    List<EvictionDecision> given =
        List.of(
            decision("u-unknown", EvictionDecision.Kind.PRESSURE, "1"),
            decision("u-db", EvictionDecision.Kind.PRESSURE, "2"),
            decision(null, EvictionDecision.Kind.PRESSURE, "3"),
            decision("u-web", EvictionDecision.Kind.PRESSURE, "4"),
            decision("u-db", EvictionDecision.Kind.LOCAL_STORAGE, "5"),
            decision("u-web", EvictionDecision.Kind.PRESSURE, "6"));
    assertThat(DecisionGuard.reviewOrder(given, ACTIVE::get))
        .extracting(EvictionDecision::message)
        .containsExactly("5", "4", "6", "2", "1", "3");
    assertThat(given).extracting(EvictionDecision::message).startsWith("1");
  }
}
