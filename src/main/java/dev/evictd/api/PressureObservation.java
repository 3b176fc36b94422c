package dev.evictd.api;

import java.time.Instant;

/**
 * The kernel's pressure stall averages for one resource and line, read once per sync from {@code
 * /proc/pressure/*} (or a cgroup's {@code *.pressure}). Averages are percentages of wall time (0 to
 * 100) over 10 s, 60 s and 300 s.
 *
 * @param resource memory, io or cpu
 * @param line some or full
 * @param avg10 share of the last 10 s with stalls, in percent
 * @param avg60 share of the last 60 s with stalls, in percent
 * @param avg300 share of the last 300 s with stalls, in percent
 * @param totalMicros total stall time since boot in microseconds, or -1 when unknown (fixtures)
 * @param time when the averages were read, or null when the source gives no time
 */
public record PressureObservation(
    PressureResource resource,
    PressureLine line,
    double avg10,
    double avg60,
    double avg300,
    long totalMicros,
    Instant time)
    implements PerSyncFact {}
