package dev.evictd.api;

import java.time.Instant;

/**
 * A cgroup v2 {@code memory.events} file changed (the kernel marks it modified, seen through
 * inotify): the cgroup was throttled at {@code memory.high}, hit {@code memory.max}, or the OOM
 * killer ran in it. The counters are the file's totals; the deltas are since the previous reading.
 * The agent inserts it for the next sync, which it runs at once.
 *
 * @param file the file, e.g. {@code /sys/fs/cgroup/kubepods.slice/memory.events}
 * @param high times usage went over {@code memory.high}
 * @param max times usage was about to go over {@code memory.max}
 * @param oom times the cgroup's limit was reached and allocation failed
 * @param oomKill processes killed by the OOM killer in the cgroup
 * @param highDelta change of {@code high}
 * @param maxDelta change of {@code max}
 * @param oomDelta change of {@code oom}
 * @param oomKillDelta change of {@code oomKill}
 * @param time when the file was read
 */
public record MemoryEventsChanged(
    String file,
    long high,
    long max,
    long oom,
    long oomKill,
    long highDelta,
    long maxDelta,
    long oomDelta,
    long oomKillDelta,
    Instant time)
    implements PerSyncFact {
  /** Whether the cgroup hit its limit or the OOM killer ran (not only memory.high throttling). */
  public boolean limitReached() {
    return maxDelta > 0 || oomDelta > 0 || oomKillDelta > 0;
  }
}
