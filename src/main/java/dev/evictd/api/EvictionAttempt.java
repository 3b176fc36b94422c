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
 */
public record EvictionAttempt(
    PodRef pod, String signal, EvictionMethod method, EvictionOutcome outcome, Instant time) {}
