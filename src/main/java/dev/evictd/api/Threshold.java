package dev.evictd.api;

import java.time.Duration;
import java.util.Objects;

/**
 * One eviction threshold of the node's configuration. Thresholds are facts of the planner's session
 * for the configuration's lifetime; the rules compare them with observations.
 *
 * @param id unique within a configuration, readable: {@code hard memory.available}, {@code soft
 *     nodefs.available}
 * @param signal the signal observed
 * @param value the threshold: met when it exceeds the available amount
 * @param gracePeriod how long the threshold must be met before acting; zero for hard thresholds
 * @param minReclaim the extra amount to reclaim before a threshold acted on counts as resolved, or
 *     null
 * @param order position in the configuration (hard thresholds first, then soft, then derived ones):
 *     breaks ties between thresholds of the same signal family
 * @param origin where the threshold came from, for explanations (e.g. {@code evictionHard}, {@code
 *     copy of hard memory.available (enforceNodeAllocatable: pods)})
 * @param derivedAfterFirstSync a containerfs threshold the kubelet appends for the filesystem
 *     layout: its first sync still checks the list from before the layout was known, so such a
 *     threshold is not met in the first sync
 */
public record Threshold(
    String id,
    Signal signal,
    ThresholdValue value,
    Duration gracePeriod,
    ThresholdValue minReclaim,
    int order,
    String origin,
    boolean derivedAfterFirstSync) {

  /**
   * Hard thresholds act at once: the kubelet treats every threshold with a zero grace period as
   * hard.
   */
  public boolean isHard() {
    return gracePeriod.isZero();
  }

  /** The threshold amount on a resource of {@code capacity}. */
  public Quantity quantity(long capacity) {
    return value.resolve(capacity);
  }

  /** The threshold amount plus the minimum reclaim (if any) on a resource of {@code capacity}. */
  public Quantity quantityWithMinReclaim(long capacity) {
    Quantity q = value.resolve(capacity);
    return minReclaim == null ? q : q.add(minReclaim.resolve(capacity));
  }

  /**
   * Whether the threshold is met by an observation: its amount (plus the minimum reclaim when
   * {@code enforceMinReclaim}) exceeds the available amount.
   */
  public boolean isMetBy(long available, long capacity, boolean enforceMinReclaim) {
    Quantity q = enforceMinReclaim ? quantityWithMinReclaim(capacity) : quantity(capacity);
    return q.compareTo(available) > 0;
  }

  /**
   * The kubelet's threshold equality when merging lists: signal, value and grace period (not min
   * reclaim).
   */
  public boolean sameAs(Threshold o) {
    return signal == o.signal && gracePeriod.equals(o.gracePeriod) && value.sameAs(o.value);
  }

  @Override
  public String toString() {
    return id + "<" + value;
  }

  // equals and hashCode written out as the implicit ones compute them: those are linked through
  // ObjectMethods at their first call, which spins method-handle classes at every start
  // (RecordMethodsTest compares the two).
  @Override
  public boolean equals(Object other) {
    return this == other
        || other instanceof Threshold o
            && Objects.equals(id, o.id)
            && Objects.equals(signal, o.signal)
            && Objects.equals(value, o.value)
            && Objects.equals(gracePeriod, o.gracePeriod)
            && Objects.equals(minReclaim, o.minReclaim)
            && order == o.order
            && Objects.equals(origin, o.origin)
            && derivedAfterFirstSync == o.derivedAfterFirstSync;
  }

  @Override
  public int hashCode() {
    int h = 0;
    h = 31 * h + Objects.hashCode(id);
    h = 31 * h + Objects.hashCode(signal);
    h = 31 * h + Objects.hashCode(value);
    h = 31 * h + Objects.hashCode(gracePeriod);
    h = 31 * h + Objects.hashCode(minReclaim);
    h = 31 * h + Integer.hashCode(order);
    h = 31 * h + Objects.hashCode(origin);
    h = 31 * h + Boolean.hashCode(derivedAfterFirstSync);
    return h;
  }
}
