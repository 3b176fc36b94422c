package dev.evictd.api;

/** The result of one eviction attempt. */
public enum EvictionOutcome {
  /** The pod was deleted, evicted or killed. */
  EVICTED,
  /** A PodDisruptionBudget refused the eviction (HTTP 429). */
  PDB_BLOCKED,
  /** The pod no longer exists. */
  NOT_FOUND,
  /** The attempt failed (API error, timeout, missing cgroup). */
  FAILED,
  /** Dry run: recorded, nothing done. */
  DRY_RUN
}
