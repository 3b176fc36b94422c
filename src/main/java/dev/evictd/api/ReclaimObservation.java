package dev.evictd.api;

/**
 * An observation made after node-level reclaim ran in this sync; the reclaim check compares
 * thresholds with it.
 */
public record ReclaimObservation(Signal signal, long available, long capacity)
    implements PerSyncFact {}
