package dev.evictd.engine;

import dev.evictd.api.EvictionAttempt;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import org.kie.api.runtime.rule.FactHandle;

/**
 * The eviction attempts rules see: what the executor did with each decision stays in the session as
 * an {@link EvictionAttempt} fact for {@link #RETENTION}, and is loaded again into every new
 * session (after a rule-set swap or a failed sync).
 */
final class AttemptRetention {
  /** How long eviction attempts stay in the session for rules to see. */
  static final Duration RETENTION = Duration.ofHours(1);

  /** An eviction attempt and its handle in the current session (null while there is none). */
  private static final class Attempt {
    final EvictionAttempt attempt;
    FactHandle handle;

    Attempt(EvictionAttempt attempt) {
      this.attempt = attempt;
    }
  }

  private final ArrayDeque<Attempt> attempts = new ArrayDeque<>();

  /**
   * Keeps {@code attempt} and inserts it into the session when one is open; returns null, or why
   * inserting it failed (the attempt is kept all the same, for the next session).
   */
  String record(EvictionAttempt attempt, GuardedSession session) {
    Attempt a = new Attempt(attempt);
    attempts.add(a);
    if (!session.isOpen()) {
      return null;
    }
    return session.guarded(
        "recording an eviction attempt", () -> a.handle = session.insert(attempt));
  }

  /**
   * Retracts the attempts older than {@link #RETENTION} at {@code now}. Runs on the rule thread.
   */
  void expire(Instant now, GuardedSession session) {
    while (!attempts.isEmpty()
        && attempts.peekFirst().attempt.time().plus(RETENTION).isBefore(now)) {
      Attempt a = attempts.pollFirst();
      if (a.handle != null) {
        session.delete(a.handle);
      }
    }
  }

  /** Inserts every kept attempt into a new session. Runs on the rule thread. */
  void loadInto(GuardedSession session) {
    for (Attempt a : attempts) {
      a.handle = session.insert(a.attempt);
    }
  }
}
