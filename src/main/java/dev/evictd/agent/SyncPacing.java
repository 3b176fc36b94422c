package dev.evictd.agent;

import java.time.Duration;

/**
 * The bound on how often the loop syncs: a sync starts at least {@link #MIN_GAP} after the one
 * before, whatever asks for it; the triggers that come meanwhile are coalesced into that one sync.
 * So at most 20 syncs a second, also while the kernel keeps reporting a crossing the statistics do
 * not show (on a real node the adaptive poll asked for one every ~6 ms). A gap of 50 ms is 16 MiB
 * at the fastest ramp measured (330 MiB/s): small beside the hundreds of MiB a hard threshold
 * leaves. Times are {@link System#nanoTime()} values, passed in.
 */
final class SyncPacing {
  /** The shortest time from the start of one sync to the start of the next. */
  static final Duration MIN_GAP = Duration.ofMillis(50);

  private final long gapNanos;
  private boolean started;
  private long lastStart;

  SyncPacing(Duration gap) {
    this.gapNanos = gap.toNanos();
  }

  /** How long a sync asked for at {@code nanos} waits before it may start (0: at once). */
  long waitNanos(long nanos) {
    return started ? Math.max(0, lastStart + gapNanos - nanos) : 0;
  }

  /** A sync started at {@code nanos}. */
  void started(long nanos) {
    started = true;
    lastStart = nanos;
  }
}
