package dev.evictd.api;

/**
 * A threshold in effect this sync: met now, or not yet resolved. Node conditions and first-observed
 * times follow the active thresholds.
 */
public record ThresholdActive(Threshold threshold) implements PerSyncFact {
  // Written out as the implicit one prints: that one is linked through ObjectMethods at its first
  // call, which spins method-handle classes at every start (RecordMethodsTest compares the two).
  @Override
  public String toString() {
    return "ThresholdActive[threshold=" + threshold + "]";
  }
}
