package dev.evictd.api;

import java.util.Optional;

/**
 * An eviction signal, as the kubelet names it. Each signal observes one resource of the node,
 * reports one node condition when a threshold on it is met, and belongs to a family (memory, disk,
 * pid) that orders handling.
 */
public enum Signal {
  MEMORY_AVAILABLE(
      "memory.available", "memory", NodeConditionType.MemoryPressure, Family.MEMORY, true),
  ALLOCATABLE_MEMORY_AVAILABLE(
      "allocatableMemory.available",
      "memory",
      NodeConditionType.MemoryPressure,
      Family.MEMORY,
      true),
  NODEFS_AVAILABLE(
      "nodefs.available", "ephemeral-storage", NodeConditionType.DiskPressure, Family.DISK, true),
  NODEFS_INODES_FREE(
      "nodefs.inodesFree", "inodes", NodeConditionType.DiskPressure, Family.DISK, false),
  IMAGEFS_AVAILABLE(
      "imagefs.available", "ephemeral-storage", NodeConditionType.DiskPressure, Family.DISK, true),
  IMAGEFS_INODES_FREE(
      "imagefs.inodesFree", "inodes", NodeConditionType.DiskPressure, Family.DISK, false),
  CONTAINERFS_AVAILABLE(
      "containerfs.available",
      "ephemeral-storage",
      NodeConditionType.DiskPressure,
      Family.DISK,
      true),
  CONTAINERFS_INODES_FREE(
      "containerfs.inodesFree", "inodes", NodeConditionType.DiskPressure, Family.DISK, false),
  PID_AVAILABLE("pid.available", "pids", NodeConditionType.PIDPressure, Family.PID, false);

  /**
   * Signal families, in the order the eviction manager handles them (memory before disk before
   * PID).
   */
  public enum Family {
    MEMORY,
    DISK,
    PID
  }

  private final String key;
  private final String resource;
  private final NodeConditionType condition;
  private final Family family;
  private final boolean binaryUnits;

  Signal(
      String key,
      String resource,
      NodeConditionType condition,
      Family family,
      boolean binaryUnits) {
    this.key = key;
    this.resource = resource;
    this.condition = condition;
    this.family = family;
    this.binaryUnits = binaryUnits;
  }

  /** The kubelet's name of the signal, e.g. {@code memory.available}. */
  public String key() {
    return key;
  }

  /**
   * The resource the signal starves, as named in eviction messages: memory, ephemeral-storage,
   * inodes, pids.
   */
  public String resource() {
    return resource;
  }

  /** The node condition reported while a threshold on this signal is met. */
  public NodeConditionType condition() {
    return condition;
  }

  /** The family that orders handling between signals. */
  public Family family() {
    return family;
  }

  /**
   * Whether observed amounts are bytes (formatted in binary SI) rather than counts (decimal SI).
   */
  public boolean binaryUnits() {
    return binaryUnits;
  }

  /** The signal with the kubelet name {@code key}, if evictd supports it. */
  public static Optional<Signal> fromKey(String key) {
    for (Signal s : values()) {
      if (s.key.equals(key)) {
        return Optional.of(s);
      }
    }
    return Optional.empty();
  }

  @Override
  public String toString() {
    return key;
  }
}
