package dev.evictd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionExempt;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GuardedSessionTest {
  @TempDir Path dir;

  static final String EXEMPTS_EACH_NAME =
      """
      rule "exempts each name"
          ruleflow-group "observe"
      when
          $s: String()
      then
          insert(new EvictionExempt($s, "named"));
      end
      """;

  private GuardedSession open(RuleSet rules, SyncBudget budget) {
    GuardedSession s = new GuardedSession(budget, () -> 1);
    assertThat(s.guarded("opening", () -> s.open(rules))).isNull();
    return s;
  }

  @Test
  void firesAPhaseOnTheRuleThreadAndRecordsWhatTheRulesDid() {
    try (GuardedSession s = open(TestRules.compile(dir, EXEMPTS_EACH_NAME), SyncBudget.DEFAULT)) {
      AtomicLong left = new AtomicLong();
      AtomicReference<String> thread = new AtomicReference<>();
      String failure =
          s.guarded(
              "firing",
              () -> {
                thread.set(Thread.currentThread().getName());
                s.insert("web");
                left.set(s.fire(List.of("observe"), 10));
              });
      assertThat(failure).isNull();
      assertThat(thread.get()).startsWith("evictd-rules-");
      assertThat(left.get()).isEqualTo(9);
      SessionRecord r = s.record();
      assertThat(r.exemptions).containsEntry("web", List.of("named"));
      assertThat(r.firings).extracting(Firing::rule).containsExactly("exempts each name");
      assertThat(r.firings.get(0).phase()).isEqualTo("observe");
      assertThat(r.ruleInserted.values()).containsExactly(new EvictionExempt("web", "named"));
      assertThat(r.phase).isEmpty();
      AtomicReference<Object> seen = new AtomicReference<>();
      assertThat(s.guarded("reading", () -> seen.set(s.objectsOf(EvictionExempt.class)))).isNull();
      assertThat((java.util.Collection<Object>) seen.get())
          .containsExactly(new EvictionExempt("web", "named"));
    }
  }

  @Test
  void aFailingConsequenceIsAOneLineFailureNamingTheRuleAndItsPhase() {
    RuleSet rules =
        TestRules.compile(
            dir,
            """
            rule "explodes on a name"
                ruleflow-group "decide"
            when
                String()
            then
                throw new IllegalStateException("boom\\nsecond line");
            end
            """);
    try (GuardedSession s = open(rules, SyncBudget.DEFAULT)) {
      String failure =
          s.until(
              () -> "deciding",
              System.nanoTime() + TimeUnit.SECONDS.toNanos(30),
              () -> {
                s.insert("web");
                s.fire(List.of("observe", "decide"), 10);
              });
      assertThat(failure)
          .isEqualTo(
              "rule \"explodes on a name\" failed in phase decide: IllegalStateException: boom");
      assertThat(s.isOpen()).as("until() leaves the session to its caller").isTrue();
      // guarded() drops it: the next sync starts a fresh session
      assertThat(
              s.guarded(
                  "deciding",
                  () -> {
                    s.insert("db");
                    s.fire(List.of("decide"), 10);
                  }))
          .contains("boom");
      assertThat(s.isOpen()).isFalse();
      assertThat(s.abandoned()).isZero();
    }
  }

  @Test
  void firingsPastTheBudgetFailTheWork() {
    try (GuardedSession s = open(TestRules.compile(dir, EXEMPTS_EACH_NAME), SyncBudget.DEFAULT)) {
      String failure =
          s.guarded(
              "firing",
              () -> {
                s.insert("a");
                s.insert("b");
                s.fire(List.of("observe"), 1);
              });
      assertThat(failure)
          .isEqualTo(
              "too many rule firings in one sync (limit reached in phase observe, last rule"
                  + " \"exempts each name\"): a rule may be looping");
    }
  }

  @Test
  void factsTheRulesKeepPastTheBudgetFailTheSync() {
    SyncBudget budget = SyncBudget.DEFAULT.withKept(1, 0, 0);
    try (GuardedSession s = open(TestRules.compile(dir, EXEMPTS_EACH_NAME), budget)) {
      assertThat(
              s.guarded(
                  "keeping one",
                  () -> {
                    s.insert("a");
                    s.fire(List.of("observe"), 10);
                    s.checkKept(0);
                  }))
          .isNull();
      String failure =
          s.guarded(
              "keeping two",
              () -> {
                s.insert("b");
                s.fire(List.of("observe"), 10);
                s.checkKept(0);
              });
      assertThat(failure)
          .startsWith("rules keep 2 facts they inserted in the session (at most 1 with 0 pods)");
      assertThat(s.isOpen()).isFalse();
    }
  }

  @Test
  void aConsequenceStuckInJavaIsAbandonedWithItsSession() throws InterruptedException {
    RuleSet rules =
        TestRules.compile(
            dir,
            """
            rule "spins in Java"
                ruleflow-group "observe"
            when
                String()
            then
                java.time.Instant end = java.time.Instant.now().plusMillis(1500);
                long spins = 0;
                while (java.time.Instant.now().isBefore(end)) {
                    spins++;
                }
                insert(new EvictionExempt("late", "after " + spins + " spins"));
            end
            """,
            TestRules.UNSAFE);
    RuleSet other = TestRules.compile(dir, EXEMPTS_EACH_NAME);
    // Cold (rule sets never opened in this JVM), opening the second one took over the 100 ms
    // budget below while the abandoned thread spun on one of two loaded cores (3 of 3 fresh JVMs
    // failed at load 18). So both are opened once first with the default budget: what is timed is
    // the budget, not this JVM's warm-up.
    open(rules, SyncBudget.DEFAULT).close();
    try (GuardedSession warm = open(other, SyncBudget.DEFAULT)) {
      assertThat(
              warm.guarded(
                  "firing",
                  () -> {
                    warm.insert("web");
                    warm.fire(List.of("observe"), 10);
                  }))
          .isNull();
      assertThat(warm.record().exemptions).containsEntry("web", List.of("named"));
    }
    SyncBudget budget = SyncBudget.DEFAULT.withTime(Duration.ofMillis(100));
    try (GuardedSession s = open(rules, budget)) {
      SessionRecord stuck = s.record();
      String failure =
          s.guarded(
              "observing",
              () -> {
                s.insert("web");
                s.fire(List.of("observe"), Long.MAX_VALUE / 4);
              });
      assertThat(failure)
          .startsWith("rule \"spins in Java\" did not finish within the time budget of 100ms")
          .contains("in phase observe", "abandoned (1 so far)");
      assertThat(s.isOpen()).isFalse();
      assertThat(s.abandoned()).isEqualTo(1);
      assertThat(s.record())
          .as("the stuck thread writes to a record no one reads")
          .isNotSameAs(stuck);
      // a new session runs on a new thread meanwhile
      assertThat(s.guarded("reopening", () -> s.open(other))).isNull();
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (s.aliveAbandoned() > 0 && System.nanoTime() < until) {
        Thread.sleep(20);
      }
      // the thread came back into an abandoned session: it stopped there
      assertThat(s.aliveAbandoned()).isZero();
      assertThat(s.record().exemptions).isEmpty();
    }
  }
}
