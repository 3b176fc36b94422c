package dev.evictd.api;

import java.time.Duration;
import java.time.Instant;

/**
 * The one clock fact: the sync's sequence number and time, read once per sync. Rules that must
 * re-evaluate every sync join it on {@code seq}.
 */
public record SyncClock(long seq, Instant now) {

  /** The time elapsed from {@code since} to now. */
  public Duration since(Instant since) {
    return Duration.between(since, now);
  }

  /** Whether at least {@code period} has elapsed since {@code since}. */
  public boolean elapsed(Instant since, Duration period) {
    return since(since).compareTo(period) >= 0;
  }

  /** Whether less than {@code period} has elapsed since {@code since}. */
  public boolean within(Instant since, Duration period) {
    return since(since).compareTo(period) < 0;
  }

  // Written out as the implicit one prints: that one is linked through ObjectMethods at its first
  // call, which spins method-handle classes at every start (RecordMethodsTest compares the two).
  @Override
  public String toString() {
    return "SyncClock[seq=" + seq + ", now=" + now + "]";
  }
}
