package dev.evictd.api;

/** A node condition reported True after this sync. */
public record NodeCondition(NodeConditionType type) implements PerSyncFact {}
