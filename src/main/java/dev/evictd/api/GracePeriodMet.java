package dev.evictd.api;

import java.time.Instant;

/**
 * An active threshold whose grace period has elapsed since it was first observed (at once for hard
 * ones).
 */
public record GracePeriodMet(Threshold threshold, Instant firstObservedAt) implements PerSyncFact {}
