package dev.evictd.api;

/**
 * The threshold chosen to act on this sync, and what its eviction message reports.
 *
 * @param threshold the threshold
 * @param quantity the threshold amount on the observed capacity
 * @param available the available amount observed
 */
public record ReclaimTarget(Threshold threshold, Quantity quantity, Quantity available)
    implements PerSyncFact {

  /** The signal acted on. */
  public Signal signal() {
    return threshold.signal();
  }

  /** The starved resource, as eviction messages name it. */
  public String resource() {
    return threshold.signal().resource();
  }

  // Written out as the implicit one prints: that one is linked through ObjectMethods at its first
  // call, which spins method-handle classes at every start (RecordMethodsTest compares the two).
  @Override
  public String toString() {
    return "ReclaimTarget[threshold="
        + threshold
        + ", quantity="
        + quantity
        + ", available="
        + available
        + "]";
  }
}
