package dev.evictd.api;

/**
 * A threshold the eviction manager may act on this sync: grace period met and statistics updated.
 */
public record ActionableThreshold(Threshold threshold) implements PerSyncFact {
  // Written out as the implicit one prints: that one is linked through ObjectMethods at its first
  // call, which spins method-handle classes at every start (RecordMethodsTest compares the two).
  @Override
  public String toString() {
    return "ActionableThreshold[threshold=" + threshold + "]";
  }
}
