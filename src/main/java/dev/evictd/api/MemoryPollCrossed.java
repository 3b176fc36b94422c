package dev.evictd.api;

import java.time.Instant;

/**
 * The agent's adaptive memory poll saw a memory usage file cross the line at which a memory
 * eviction threshold is met ({@code capacity − threshold + inactive_file}, the value the kernel's
 * memcg threshold would be registered at). It stands in for {@link MemcgThresholdCrossed} where the
 * kernel has no usage thresholds (cgroup v2) and is its safety net on v1. The agent inserts it for
 * the next sync, which it runs at once.
 *
 * @param signal {@code memory.available} or {@code allocatableMemory.available}
 * @param direction whether usage went to or above the line, or back below it
 * @param lineBytes the usage line
 * @param usageBytes the usage read
 * @param file the file read ({@code memory.current}, {@code memory.usage_in_bytes} or the v2 root
 *     {@code memory.stat})
 * @param time when it was read
 */
public record MemoryPollCrossed(
    Signal signal,
    MemcgThresholdCrossed.Direction direction,
    long lineBytes,
    long usageBytes,
    String file,
    Instant time)
    implements PerSyncFact {}
