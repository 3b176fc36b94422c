package dev.evictd.engine;

import static dev.evictd.engine.PlannerTest.T0;
import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionAttempt;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.api.PodRef;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AttemptRetentionTest {
  @TempDir Path dir;

  private static EvictionAttempt attempt(String name, int minutes) {
    return new EvictionAttempt(
        new PodRef("default", name, "uid-" + name),
        "memory.available",
        EvictionMethod.EVICT,
        EvictionOutcome.EVICTED,
        T0.plusSeconds(60L * minutes));
  }

  private static List<Object> attempts(GuardedSession s) {
    AtomicReference<Collection<?>> out = new AtomicReference<>();
    assertThat(s.guarded("reading", () -> out.set(s.objectsOf(EvictionAttempt.class)))).isNull();
    return new ArrayList<>(out.get());
  }

  @Test
  void attemptsStayAnHourAndComeBackInEveryNewSession() {
    RuleSet rules =
        TestRules.compile(
            dir,
            """
            rule "sees an attempt"
                ruleflow-group "observe"
            when
                EvictionAttempt()
            then
            end
            """);
    AttemptRetention retention = new AttemptRetention();
    try (GuardedSession s = new GuardedSession(SyncBudget.DEFAULT, () -> 0)) {
      // before any session: kept, inserted when one opens
      assertThat(retention.record(attempt("early", 0), s)).isNull();
      assertThat(s.guarded("opening", () -> s.open(rules))).isNull();
      assertThat(s.guarded("loading", () -> retention.loadInto(s))).isNull();
      assertThat(retention.record(attempt("later", 30), s)).isNull();
      assertThat(attempts(s)).containsExactlyInAnyOrder(attempt("early", 0), attempt("later", 30));

      assertThat(s.guarded("expiring", () -> retention.expire(T0.plusSeconds(3600), s))).isNull();
      assertThat(attempts(s)).as("an hour old: still seen").hasSize(2);
      assertThat(s.guarded("expiring", () -> retention.expire(T0.plusSeconds(3601), s))).isNull();
      assertThat(attempts(s)).containsExactly(attempt("later", 30));

      assertThat(
              s.guarded(
                  "reopening",
                  () -> {
                    s.open(rules);
                    retention.loadInto(s);
                  }))
          .isNull();
      assertThat(attempts(s)).containsExactly(attempt("later", 30));
      assertThat(Planner.ATTEMPT_RETENTION).isEqualTo(AttemptRetention.RETENTION);
    }
  }
}
