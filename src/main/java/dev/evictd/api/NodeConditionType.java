package dev.evictd.api;

/** The node pressure conditions the eviction manager reports, in the order fixtures list them. */
public enum NodeConditionType {
  MemoryPressure,
  DiskPressure,
  PIDPressure
}
