package dev.evictd.api;

/**
 * A threshold whose amount exceeds the available amount in this sync (grace period not considered).
 *
 * @param quantity the threshold amount resolved on the observed capacity
 * @param available the observed available amount
 */
public record ThresholdMet(Threshold threshold, Quantity quantity, long available)
    implements PerSyncFact {}
