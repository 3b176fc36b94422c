package dev.evictd.api;

import java.time.Instant;

/**
 * What the node's statistics say about one signal in this sync: the available amount and the
 * capacity it is a part of (bytes for memory and disk space, counts for inodes and PIDs). Signals
 * without the needed statistics have no observation, never a zero one.
 *
 * @param time when the statistics were collected, or null when the source gives no time (always
 *     fresh)
 */
public record Observation(Signal signal, long available, long capacity, Instant time) {

  /** The available amount as the kubelet prints it (binary SI for bytes, decimal SI for counts). */
  public Quantity availableQuantity() {
    return Quantity.of(
        available, signal.binaryUnits() ? Quantity.Format.BINARY_SI : Quantity.Format.DECIMAL_SI);
  }

  /**
   * Whether these statistics are newer than a previous observation at {@code last}: the kubelet
   * acts only on updated statistics. Statistics without a time are always new.
   */
  public boolean isNewerThan(Instant last) {
    return time == null || last == null || time.isAfter(last);
  }

  // Written out as the implicit one prints: that one is linked through ObjectMethods at its first
  // call, which spins method-handle classes at every start (RecordMethodsTest compares the two).
  @Override
  public String toString() {
    return "Observation[signal="
        + signal
        + ", available="
        + available
        + ", capacity="
        + capacity
        + ", time="
        + time
        + "]";
  }
}
