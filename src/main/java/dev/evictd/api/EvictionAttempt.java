package dev.evictd.api;

import java.time.Instant;

/**
 * An eviction the executor attempted, and what happened. Inserted into the planner's session after
 * each attempt and kept for an hour, so rules can react (pick the next pod after PDB_BLOCKED, limit
 * the eviction rate).
 *
 * @param pod the pod
 * @param signal the decision's signal or local-storage limit
 * @param method how it was attempted
 * @param outcome what happened
 * @param time when it was attempted
 * @param detail what the API server said, e.g. a disruption budget's own explanation of a refusal
 *     ("The disruption budget web needs 2 healthy pods and has 2 currently"); "" when nothing
 */
public record EvictionAttempt(
    PodRef pod,
    String signal,
    EvictionMethod method,
    EvictionOutcome outcome,
    Instant time,
    String detail) {

  public EvictionAttempt {
    detail = detail == null ? "" : detail;
  }

  /** An attempt without detail. */
  public EvictionAttempt(
      PodRef pod, String signal, EvictionMethod method, EvictionOutcome outcome, Instant time) {
    this(pod, signal, method, outcome, time, "");
  }
}
