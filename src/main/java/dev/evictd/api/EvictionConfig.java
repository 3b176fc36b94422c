package dev.evictd.api;

import java.time.Duration;
import java.util.List;

/**
 * The node's eviction configuration after the kubelet's defaulting and validation: the facts the
 * planner's session is built on.
 *
 * @param nodeName the node's name
 * @param fsLayout the filesystem layout
 * @param thresholds every threshold, in configuration order
 * @param pressureTransitionPeriod how long a condition stays reported after the last time a
 *     threshold was met
 * @param maxPodGracePeriodSeconds the grace period for soft evictions (capped by the pod's own)
 * @param localStorageCapacityIsolation whether local-storage limits are enforced
 * @param warnings non-fatal findings (e.g. a containerfs threshold that was replaced)
 * @param kubelet the kubelet this configuration is read for: its version and effective feature
 *     gates (also a fact of its own in the session); null for the newest kubelet evictd knows, with
 *     its default gates
 */
public record EvictionConfig(
    String nodeName,
    FsLayout fsLayout,
    List<Threshold> thresholds,
    Duration pressureTransitionPeriod,
    long maxPodGracePeriodSeconds,
    boolean localStorageCapacityIsolation,
    List<String> warnings,
    Kubelet kubelet) {

  public EvictionConfig {
    thresholds = List.copyOf(thresholds);
    warnings = List.copyOf(warnings);
  }

  /** A configuration for the newest kubelet evictd knows, with its default feature gates. */
  public EvictionConfig(
      String nodeName,
      FsLayout fsLayout,
      List<Threshold> thresholds,
      Duration pressureTransitionPeriod,
      long maxPodGracePeriodSeconds,
      boolean localStorageCapacityIsolation,
      List<String> warnings) {
    this(
        nodeName,
        fsLayout,
        thresholds,
        pressureTransitionPeriod,
        maxPodGracePeriodSeconds,
        localStorageCapacityIsolation,
        warnings,
        null);
  }
}
