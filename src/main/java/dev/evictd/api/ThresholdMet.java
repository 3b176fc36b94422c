package dev.evictd.api;

/**
 * A threshold whose amount exceeds the available amount in this sync (grace period not considered).
 *
 * @param quantity the threshold amount resolved on the observed capacity
 * @param available the observed available amount
 */
public record ThresholdMet(Threshold threshold, Quantity quantity, long available)
    implements PerSyncFact {
  // Written out as the implicit one prints: that one is linked through ObjectMethods at its first
  // call, which spins method-handle classes at every start (RecordMethodsTest compares the two).
  @Override
  public String toString() {
    return "ThresholdMet[threshold="
        + threshold
        + ", quantity="
        + quantity
        + ", available="
        + available
        + "]";
  }
}
