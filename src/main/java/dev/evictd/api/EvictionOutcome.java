package dev.evictd.api;

/** The result of one eviction attempt. */
public enum EvictionOutcome {
  /** The pod was deleted, evicted or killed. */
  EVICTED,
  /**
   * A PodDisruptionBudget refused the eviction (HTTP 429 whose cause is {@code DisruptionBudget}).
   */
  PDB_BLOCKED,
  /** The pod no longer exists. */
  NOT_FOUND,
  /** The attempt failed (an API error the server answered, a missing cgroup): nothing was done. */
  FAILED,
  /**
   * No answer came after the request was sent (timeout, dropped connection): the server may have
   * carried it out. The pod counts as being evicted until its state shows otherwise.
   */
  UNKNOWN,
  /** Dry run: recorded, nothing done. */
  DRY_RUN
}
