package dev.evictd.api;

/**
 * A threshold acted on in the previous sync that is still met once its minimum reclaim is added: it
 * stays in effect until the available amount reaches threshold + minimum reclaim.
 */
public record ThresholdUnresolved(Threshold threshold) implements PerSyncFact {}
