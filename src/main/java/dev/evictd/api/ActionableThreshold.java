package dev.evictd.api;

/**
 * A threshold the eviction manager may act on this sync: grace period met and statistics updated.
 */
public record ActionableThreshold(Threshold threshold) implements PerSyncFact {}
