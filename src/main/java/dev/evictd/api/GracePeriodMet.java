package dev.evictd.api;

import java.time.Instant;

/**
 * An active threshold whose grace period has elapsed since it was first observed (at once for hard
 * ones).
 */
public record GracePeriodMet(Threshold threshold, Instant firstObservedAt) implements PerSyncFact {
  // Written out as the implicit one prints: that one is linked through ObjectMethods at its first
  // call, which spins method-handle classes at every start (RecordMethodsTest compares the two).
  @Override
  public String toString() {
    return "GracePeriodMet[threshold=" + threshold + ", firstObservedAt=" + firstObservedAt + "]";
  }
}
