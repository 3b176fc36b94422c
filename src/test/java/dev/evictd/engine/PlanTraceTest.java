package dev.evictd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionPlan;
import dev.evictd.api.Observation;
import dev.evictd.api.Signal;
import dev.evictd.api.SignalLastObserved;
import dev.evictd.api.SyncClock;
import dev.evictd.api.ThresholdState;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PlanTraceTest {
  private final SessionRecord record = new SessionRecord();
  private final PlanTrace trace = new PlanTrace(record);

  private Firing fired(String phase, String rule, List<Object> matched, Object... produced) {
    Firing f = new Firing(phase, rule, matched);
    record.firings.add(f);
    for (Object o : produced) {
      f.produced().add(o);
      record.producedBy.put(o, f);
    }
    return f;
  }

  @Test
  void aFactsProvenanceIsTheFiringThatMadeItThenThoseBehindWhatItMatched() {
    String observed = "observed";
    String threshold = "threshold met";
    String decision = "decision";
    Firing met = fired("observe", "threshold", List.of(observed), threshold);
    Firing decided = fired("decide", "decide", List.of(threshold, observed), decision);
    assertThat(trace.provenance(decision)).containsExactly(decided, met);
    assertThat(trace.provenance(threshold)).containsExactly(met);
    assertThat(trace.provenance(observed)).isEmpty();

    EvictionPlan.RuleFiring shown = trace.describe(decided);
    assertThat(shown.phase()).isEqualTo("decide");
    assertThat(shown.rule()).isEqualTo("decide");
    assertThat(shown.facts()).containsExactly("threshold met", "observed");
    assertThat(shown.produced()).containsExactly("decision");
    assertThat(trace.describe(decided)).as("rendered once").isSameAs(shown);
  }

  @Test
  void aRuleThatFiredMoreThanTheLimitIsShownOnceWithItsCount() {
    fired("observe", "once", List.of("x"));
    for (int i = 0; i <= PlanTrace.TRACE_LIMIT_PER_RULE; i++) {
      fired("track", "often", List.of("y" + i));
    }
    fired("track", "twice", List.of());
    fired("grace", "twice", List.of());
    List<EvictionPlan.RuleFiring> shown = trace.firings();
    assertThat(shown)
        .extracting(EvictionPlan.RuleFiring::rule)
        .containsExactly("once", "often", "twice", "twice");
    assertThat(shown.get(1).facts())
        .containsExactly("fired " + (PlanTrace.TRACE_LIMIT_PER_RULE + 1) + " times");
    assertThat(shown.get(1).produced()).isEmpty();
  }

  @Test
  void factsAreDescribedOnOneBoundedLine() {
    assertThat(PlanTrace.shortDescription(List.of("a", List.of("b", "c"))))
        .isEqualTo("[a, [b, c]]");
    assertThat(PlanTrace.shortDescription(null)).isEqualTo("null");
    String longer = "x".repeat(300);
    assertThat(PlanTrace.shortDescription(longer)).hasSize(203).endsWith("...");
    assertThat(PlanTrace.shortDescription(PlannerTest.config(PlannerTest.HARD_1GI)))
        .isEqualTo("EvictionConfig");
    List<Object> described = new ArrayList<>();
    Firing f = fired("observe", "r", new ArrayList<>(List.of(longer)));
    trace.describe(f);
    described.add(record.descriptions.get(longer));
    assertThat(described).containsExactly("x".repeat(200) + "...");
  }

  @Test
  void anImmutableFactIsDescribedWhenReadAndAMutableOneAsItWasWhenThePlanWasMade() {
    Instant t0 = Instant.parse("2026-01-01T00:00:00.123456789Z");
    SyncClock clock = new SyncClock(7, t0);
    Observation observed = new Observation(Signal.MEMORY_AVAILABLE, 512, 1024, null);
    SignalLastObserved last = new SignalLastObserved(Signal.MEMORY_AVAILABLE, t0);
    ThresholdState state =
        new ThresholdState(
            PlannerTest.config(PlannerTest.HARD_1GI).thresholds().get(0), t0.minusSeconds(5));
    String stateBefore = state.toString();
    String lastBefore = last.toString();
    // a type the rules declared: mutable, unknown to the trace
    StringBuilder declared = new StringBuilder("declared v1");
    Firing f =
        fired(
            "track",
            "r",
            List.of(clock, state, observed, declared, new ArrayList<>(List.of(state, clock))),
            last);

    EvictionPlan.RuleFiring shown = trace.describe(f);
    assertThat(record.descriptions)
        .as("a fact of an unknown type rendered with the plan, the API's facts left for the reader")
        .containsOnlyKeys(declared);
    // the next sync changes the facts that persist; the plan keeps what they were
    state.setActedOn(true);
    state.setFirstObservedAt(t0);
    last.setTime(t0.plusSeconds(10));
    declared.append(" and v2");
    assertThat(state.toString()).isNotEqualTo(stateBefore);
    assertThat(shown.facts())
        .containsExactly(
            clock.toString(),
            stateBefore,
            observed.toString(),
            "declared v1",
            "[" + stateBefore + ", " + clock + "]")
        .startsWith(
            "SyncClock[seq=7, now=2026-01-01T00:00:00.123456789Z]",
            stateBefore,
            "Observation[signal=memory.available, available=512, capacity=1024, time=null]");
    assertThat(shown.produced()).containsExactly(lastBefore);
    assertThat(shown.facts().get(0)).as("rendered once").isSameAs(shown.facts().get(0));
    assertThat(shown).isEqualTo(trace.describe(f));
  }
}
