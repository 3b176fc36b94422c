package dev.evictd.api;

/** A node-level reclaim action to run before evicting pods, in {@code position} order. */
public record ReclaimRequest(ReclaimAction action, int position) implements PerSyncFact {}
