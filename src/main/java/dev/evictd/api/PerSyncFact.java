package dev.evictd.api;

/**
 * Marks facts that describe one sync only. The planner retracts every per-sync fact at the start of
 * the next sync; only state facts (first-observed times, conditions, thresholds acted on, last
 * observation times) and input facts live longer.
 */
public interface PerSyncFact {}
