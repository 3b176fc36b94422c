package dev.evictd.api;

/** A pod that must not be evicted, and why (static, mirror or system-critical pods by default). */
public record EvictionExempt(String uid, String reason) {}
