package dev.evictd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionConfig;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** A real session holding a node's input facts, synced by hand, for the parts' tests. */
final class SessionHarness implements AutoCloseable {
  final SessionFacts facts;
  final GuardedSession session;

  SessionHarness(RuleSet rules, EvictionConfig config) {
    facts = new SessionFacts(config);
    session = new GuardedSession(SyncBudget.DEFAULT, facts::podCount);
    facts.clock(0, Instant.EPOCH);
    run(
        () -> {
          session.open(rules);
          facts.loadInto(session, List.of());
        });
  }

  /** Runs work on the rule thread; it must succeed. */
  void run(Runnable work) {
    assertThat(session.guarded("test", work)).isNull();
  }

  /**
   * Starts sync {@code seq} at {@code now} with these pods and statistics; returns the warnings.
   */
  List<String> sync(long seq, Instant now, List<Pod> pods, Summary summary) {
    List<String> warnings = new ArrayList<>();
    facts.clock(seq, now);
    run(
        () -> {
          facts.clearPerSync(session);
          facts.updateClock(session);
          facts.updateObservations(session, summary);
          facts.updatePods(session, pods, summary, warnings);
        });
    return warnings;
  }

  @Override
  public void close() {
    session.close();
  }
}
