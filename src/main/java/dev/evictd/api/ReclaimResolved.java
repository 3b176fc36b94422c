package dev.evictd.api;

/**
 * Node-level reclaim freed enough: no threshold is met with its minimum reclaim, so no pod is
 * evicted.
 */
public record ReclaimResolved() implements PerSyncFact {}
