package dev.evictd.api;

import java.time.Instant;

/**
 * The kernel reported that a memory cgroup's usage crossed a registered threshold (cgroup v1 {@code
 * cgroup.event_control} on {@code memory.usage_in_bytes}). The agent inserts it for the next sync,
 * which it runs at once.
 *
 * @param signal the signal whose threshold the memcg threshold stands for ({@code memory.available}
 *     or {@code allocatableMemory.available})
 * @param direction whether usage went above the threshold (the signal's threshold is about to be
 *     met) or back below
 * @param thresholdBytes the registered value on {@code memory.usage_in_bytes}
 * @param usageBytes the usage read right after the event, which gave the direction
 * @param time when the event was read
 */
public record MemcgThresholdCrossed(
    Signal signal, Direction direction, long thresholdBytes, long usageBytes, Instant time)
    implements PerSyncFact {

  /** Which way usage crossed the threshold. */
  public enum Direction {
    /** Usage rose to or above the threshold: available memory fell to the eviction threshold. */
    UP,
    /** Usage fell below the threshold again. */
    DOWN
  }
}
