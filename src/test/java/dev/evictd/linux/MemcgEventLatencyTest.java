package dev.evictd.linux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.MemcgThresholdCrossed.Direction;
import dev.evictd.api.Signal;
import dev.evictd.testing.TestCgroup;
import java.io.OutputStream;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Measures how long a crossing takes to become a fact, over many crossings, and prints p50/p99
 * (timing is reported, not asserted: performance targets belong to benchmarks).
 *
 * <p>Up: a {@code dd} in the test cgroup appends what the test writes to its stdin to a tmpfs file
 * (the pages are charged to the cgroup); the clock starts before the test writes 2 MiB. Down: the
 * test truncates the file (its pages are uncharged in the truncate call); the clock starts before
 * the truncate. Each measure is therefore an upper bound of the kernel event → fact latency (it
 * includes the pipe hand-off and dd's write for up crossings).
 */
class MemcgEventLatencyTest {
  private static final int CROSSINGS_EACH_WAY = 50;
  private static final int WARM_UP = 3;

  @Test
  @Tag("cgroup-v1")
  void reportsEventToFactLatencyOverAHundredCrossings() throws Exception {
    TestCgroup.assumeRootWithCgroupV1();
    LinkedBlockingQueue<long[]> arrivals = new LinkedBlockingQueue<>();
    try (TestCgroup cg = TestCgroup.create("latency")) {
      Path file = cg.tmpfsFile("latency");
      Process dd =
          cg.startIn(
              cg.dir(),
              "exec dd of=\"$2\" bs=64k oflag=append conv=notrunc status=none",
              file.toString());
      OutputStream in = dd.getOutputStream();
      byte[] chunk = new byte[2 << 20];
      Arrays.fill(chunk, (byte) 7);
      // warm up: dd's own buffer and first page cache pages are charged before the baseline is read
      in.write(chunk, 0, 64 << 10);
      in.flush();
      TestCgroup.awaitSize(file, 64 << 10);
      TestCgroup.truncate(file);
      Thread.sleep(50);
      long threshold = cg.usage() + (1L << 20);
      try (MemcgThresholdNotifier n =
          MemcgThresholdNotifier.onCgroup(
              Signal.MEMORY_AVAILABLE,
              cg.dir(),
              f ->
                  arrivals.add(
                      new long[] {System.nanoTime(), f.direction() == Direction.UP ? 1 : 0}),
              Clock.systemUTC())) {
        assertThat(n.register(threshold)).as(String.valueOf(n.unavailableReason())).isTrue();
        Thread.sleep(50); // the waiting thread picks the registration up
        List<Long> up = new ArrayList<>();
        List<Long> down = new ArrayList<>();
        int[] stale = {0};
        for (int i = -WARM_UP; i < CROSSINGS_EACH_WAY; i++) {
          long t0 = System.nanoTime();
          in.write(chunk);
          in.flush();
          long[] a = next(arrivals, Direction.UP, stale);
          assertThat(a).as("UP fact of crossing " + i).isNotNull();
          if (i >= 0) {
            up.add(a[0] - t0); // the first crossings warm the JIT up: not counted
          }
          TestCgroup.awaitSize(file, chunk.length);
          drain(arrivals);

          long t1 = System.nanoTime();
          TestCgroup.truncate(file);
          long[] b = next(arrivals, Direction.DOWN, stale);
          assertThat(b).as("DOWN fact of crossing " + i).isNotNull();
          if (i >= 0) {
            down.add(b[0] - t1);
          }
          drain(arrivals);
        }
        List<Long> all = new ArrayList<>(up);
        all.addAll(down);
        System.out.printf(
            "memcg event -> fact latency over %d crossings (after %d warm-up cycles): p50 %.3f ms, p99 %.3f ms, max %.3f ms"
                + " (up: p50 %.3f ms, p99 %.3f ms; down: p50 %.3f ms, p99 %.3f ms)%n",
            all.size(),
            WARM_UP,
            pct(all, 50),
            pct(all, 99),
            pct(all, 100),
            pct(up, 50),
            pct(up, 99),
            pct(down, 50),
            pct(down, 99));
        assertThat(all).hasSize(2 * CROSSINGS_EACH_WAY);
        // a late fact of the crossing before is possible on a loaded machine, a habit is not: a
        // notifier that labels crossings the wrong way would be caught here
        assertThat(stale[0])
            .as("facts of the other direction that arrived after the drain")
            .isLessThan(CROSSINGS_EACH_WAY / 5);
      }
      in.close();
      dd.waitFor(5, TimeUnit.SECONDS);
    }
  }

  /**
   * The next fact of {@code want}, or null after 5 s. A fact of the other direction is a straggler
   * of the crossing before that came after {@link #drain} (the kernel's per-CPU event batches, a
   * loaded machine): it is counted in {@code stale} and skipped, so it is not read as this
   * crossing's answer.
   */
  private static long[] next(LinkedBlockingQueue<long[]> q, Direction want, int[] stale)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    long wanted = want == Direction.UP ? 1 : 0;
    while (true) {
      long left = deadline - System.nanoTime();
      long[] a = left > 0 ? q.poll(left, TimeUnit.NANOSECONDS) : null;
      if (a == null || a[1] == wanted) {
        return a;
      }
      stale[0]++;
    }
  }

  private static void drain(LinkedBlockingQueue<long[]> q) throws InterruptedException {
    // a write or truncate may raise more than one event (per-CPU event batches): let stragglers
    // arrive, drop them
    Thread.sleep(5);
    q.clear();
  }

  private static double pct(List<Long> nanos, int p) {
    long[] s = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
    int i = (int) Math.ceil(p / 100.0 * s.length) - 1;
    return s[Math.max(0, Math.min(s.length - 1, i))] / 1e6;
  }
}
