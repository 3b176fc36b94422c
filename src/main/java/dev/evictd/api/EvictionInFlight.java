package dev.evictd.api;

import java.time.Duration;
import java.time.Instant;

/**
 * A pod on its way out: its deletion was requested (it has a deletionTimestamp), or this agent
 * evicted it and it has not gone yet, or this agent sent an eviction whose answer never came. The
 * planner inserts one per such active pod every sync (a per-sync fact, rebuilt from what the agent
 * recorded and from the pods' deletionTimestamps, so a restart keeps what the API server knows).
 * Rules use it never to evict a pod again with the same or a longer grace period, to wait while an
 * eviction is in flight, and to pass over a pod still terminating after {@code cleanupTimeout}.
 *
 * @param pod the pod
 * @param source who started it: this agent, or anyone (the pod's deletionTimestamp)
 * @param outcome {@link EvictionOutcome#EVICTED} (accepted, or the deletionTimestamp is set) or
 *     {@link EvictionOutcome#UNKNOWN} (sent by this agent, no answer, not seen on the pod yet)
 * @param gracePeriodSeconds the grace period the deletion was requested with
 * @param since when the deletion was requested (the attempt's time, or the deletionTimestamp less
 *     its grace period)
 * @param cleanupTimeout how long the agent waits for an evicted pod to go (podCleanupTimeout, the
 *     kubelet's 30 s unless configured)
 * @param method how this agent evicted it; null when the source is the deletionTimestamp alone
 */
public record EvictionInFlight(
    PodRef pod,
    Source source,
    EvictionOutcome outcome,
    long gracePeriodSeconds,
    Instant since,
    Duration cleanupTimeout,
    EvictionMethod method)
    implements PerSyncFact {

  /** Who started the pod's deletion, as far as this agent knows. */
  public enum Source {
    /** This agent evicted the pod (in this run). */
    EVICTD,
    /**
     * The pod has a deletionTimestamp: someone (perhaps this agent before a restart) deleted it.
     */
    DELETION_TIMESTAMP
  }

  /** The pod's uid. */
  public String uid() {
    return pod.uid();
  }

  /** Whether the outcome is still unknown. */
  public boolean isUnknown() {
    return outcome == EvictionOutcome.UNKNOWN;
  }

  /** When the agent stops waiting for the pod: {@code since} plus {@code cleanupTimeout}. */
  public Instant cleanupDeadline() {
    return since.plus(cleanupTimeout);
  }
}
