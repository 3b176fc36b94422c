package dev.evictd.api;

import java.time.Instant;

/**
 * A PSI trigger fired: tasks stalled on the resource for at least {@code stallMicros} within a
 * window of {@code windowMicros}. The agent inserts it for the next sync, which it runs at once.
 *
 * @param resource memory, io or cpu
 * @param line some or full
 * @param stallMicros the trigger's stall amount
 * @param windowMicros the trigger's window
 * @param source the pressure file the trigger is on, e.g. {@code /proc/pressure/memory}
 * @param time when the event was read
 */
public record PressureStall(
    PressureResource resource,
    PressureLine line,
    long stallMicros,
    long windowMicros,
    String source,
    Instant time)
    implements PerSyncFact {}
