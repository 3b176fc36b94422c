package dev.evictd.api;

/** An emptyDir volume of a pod with a positive {@code sizeLimit}. */
public record VolumeLimit(String name, Quantity sizeLimit) {}
