package dev.evictd.engine;

import dev.evictd.api.EvictionInFlight;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.api.PodFact;
import dev.evictd.api.PodRef;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The pods on their way out, as the planner shows them to the rules each sync ({@link
 * EvictionInFlight}): the evictions this agent started (accepted, or sent without an answer), and
 * every active pod with a deletionTimestamp. What the agent started is kept until the pod leaves
 * the active list; the deletionTimestamp comes from the API server, so a restarted agent still
 * knows which pods are going. Not thread-safe: the planner calls it under its own lock.
 */
final class InFlightEvictions {
  /** The kubelet's podCleanupTimeout (pkg/kubelet/eviction/eviction_manager.go). */
  static final Duration KUBELET_CLEANUP_TIMEOUT = Duration.ofSeconds(30);

  private final Map<String, EvictionInFlight> started = new LinkedHashMap<>();
  private Map<String, EvictionInFlight> current = new HashMap<>();
  private Duration cleanupTimeout = KUBELET_CLEANUP_TIMEOUT;

  void cleanupTimeout(Duration timeout) {
    if (timeout == null || timeout.isNegative()) {
      throw new IllegalArgumentException("podCleanupTimeout must not be negative: " + timeout);
    }
    cleanupTimeout = timeout;
  }

  /** Records an eviction this agent started (outcome EVICTED or UNKNOWN). */
  void started(
      PodRef pod, EvictionMethod method, long graceSeconds, EvictionOutcome outcome, Instant at) {
    EvictionInFlight before = started.get(pod.uid());
    if (before == null) {
      // a pod already going by its deletionTimestamp (e.g. from before a restart)
      before = current.get(pod.uid());
    }
    // a shorter grace period for a pod already going keeps the original request time: the wait
    // for the pod is not restarted by shortening its grace period
    Instant since = before == null ? at : before.since();
    EvictionOutcome o =
        before != null && before.outcome() == EvictionOutcome.EVICTED
            ? EvictionOutcome.EVICTED
            : outcome;
    started.put(
        pod.uid(),
        new EvictionInFlight(
            pod, EvictionInFlight.Source.EVICTD, o, graceSeconds, since, cleanupTimeout, method));
  }

  /** Forgets an eviction this agent started (its outcome turned out to be a failure). */
  void forget(String uid) {
    started.remove(uid);
    current.remove(uid);
  }

  /** The pod's in-flight fact of the last sync, or null. */
  EvictionInFlight of(String uid) {
    return current.get(uid);
  }

  /** Every in-flight fact of the last sync. */
  List<EvictionInFlight> all() {
    return List.copyOf(current.values());
  }

  /**
   * This sync's facts for the active pods {@code active}: what the agent started (confirmed as
   * EVICTED once the pod shows a deletionTimestamp), else the pod's deletionTimestamp. Records of
   * pods no longer active are dropped.
   */
  List<EvictionInFlight> sync(List<PodFact> active) {
    Map<String, EvictionInFlight> now = new HashMap<>();
    List<EvictionInFlight> facts = new ArrayList<>();
    for (PodFact p : active) {
      EvictionInFlight f = started.get(p.uid());
      if (f != null && f.outcome() == EvictionOutcome.UNKNOWN && p.deletionTimestamp() != null) {
        // the request that got no answer was carried out after all
        f =
            new EvictionInFlight(
                f.pod(),
                f.source(),
                EvictionOutcome.EVICTED,
                f.gracePeriodSeconds(),
                f.since(),
                f.cleanupTimeout(),
                f.method());
        started.put(p.uid(), f);
      }
      if (f == null && p.deletionTimestamp() != null) {
        f =
            new EvictionInFlight(
                p.ref(),
                EvictionInFlight.Source.DELETION_TIMESTAMP,
                EvictionOutcome.EVICTED,
                p.deletionGracePeriod(),
                p.deletionRequestedAt(),
                cleanupTimeout,
                null);
      }
      if (f != null) {
        now.put(p.uid(), f);
        facts.add(f);
      }
    }
    started.keySet().retainAll(now.keySet());
    current = now;
    return facts;
  }
}
