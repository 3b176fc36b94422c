package dev.evictd.api;

/**
 * A threshold in effect this sync: met now, or not yet resolved. Node conditions and first-observed
 * times follow the active thresholds.
 */
public record ThresholdActive(Threshold threshold) implements PerSyncFact {}
