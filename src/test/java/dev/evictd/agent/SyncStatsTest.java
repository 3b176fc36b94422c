package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.Observation;
import dev.evictd.api.Signal;
import dev.evictd.stats.Summary;
import dev.evictd.testing.FakeStatsProvider;
import dev.evictd.testing.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The Summary read at most once per its refresh by the syncs the kernel triggers, and the memory
 * figures of those syncs (and of the ones after them, until the Summary is newer) the kernel's.
 */
class SyncStatsTest {
  static final long MI = 1024 * 1024;
  final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
  final FakeStatsProvider kubelet = new FakeStatsProvider();
  final AtomicInteger counted = new AtomicInteger();
  final AtomicInteger kernelReads = new AtomicInteger();

  /** A Summary sampled {@code ago} before now: 7Gi available of 8Gi. */
  Summary sampled(Duration ago) {
    return new Summary(
        new Summary.NodeStats(
            "node",
            new Summary.MemoryStats(clock.instant().minus(ago), 7168 * MI, null, 1024 * MI, null),
            null,
            null,
            null,
            null),
        List.of());
  }

  /** The kernel's figures now: 200Mi available of 8Gi. */
  Summary kernel() {
    kernelReads.incrementAndGet();
    return new Summary(
        new Summary.NodeStats(
            "node",
            new Summary.MemoryStats(clock.instant(), 200 * MI, 8000 * MI, 7992 * MI, null),
            null,
            null,
            null,
            null),
        List.of());
  }

  SyncStats stats() {
    return new SyncStats(kubelet, this::kernel, clock, counted::incrementAndGet);
  }

  static long available(SyncStats.Read r) {
    return r.summary().node().memory().availableBytes();
  }

  @Test
  void kernelTriggeredSyncsReadTheSummaryOncePerItsRefresh() {
    kubelet.set(sampled(Duration.ofSeconds(2)));
    SyncStats s = stats();
    assertThat(available(s.read(false)))
        .as("the interval's sync: the Summary")
        .isEqualTo(7168 * MI);
    assertThat(kubelet.reads()).isEqualTo(1);
    for (int i = 0; i < 100; i++) { // a storm of crossings over 7.9 s
      SyncStats.Read r = s.read(true);
      assertThat(r.memorySource()).isEqualTo(SyncStats.KERNEL);
      assertThat(available(r)).isEqualTo(200 * MI);
      clock.advance(Duration.ofMillis(79));
    }
    assertThat(kubelet.reads()).as("the sample is 9.9 s old: not refreshed yet").isEqualTo(1);
    assertThat(kernelReads.get()).isEqualTo(100);
    // the refresh is due: one read; the kubelet is late (the same sample), so again a second later
    clock.advance(Duration.ofMillis(200));
    s.read(true);
    assertThat(kubelet.reads()).isEqualTo(2);
    for (int i = 0; i < 9; i++) {
      clock.advance(Duration.ofMillis(100));
      s.read(true);
    }
    assertThat(kubelet.reads()).isEqualTo(2);
    clock.advance(Duration.ofMillis(100));
    kubelet.set(sampled(Duration.ZERO)); // refreshed
    s.read(true);
    assertThat(kubelet.reads()).isEqualTo(3);
    clock.advance(Duration.ofSeconds(9));
    s.read(true);
    assertThat(kubelet.reads()).as("not due again for 10 s").isEqualTo(3);
    assertThat(counted.get()).as("every read counted").isEqualTo(kubelet.reads());
  }

  @Test
  void afterAKernelReadOtherSyncsKeepTheKernelsFiguresUntilTheSummaryIsNewer() {
    kubelet.set(sampled(Duration.ofSeconds(1)));
    SyncStats s = stats();
    assertThat(s.read(false).memorySource()).isEqualTo(SyncStats.SUMMARY);
    clock.advance(Duration.ofSeconds(1));
    assertThat(s.read(true).memorySource()).isEqualTo(SyncStats.KERNEL);
    clock.advance(Duration.ofSeconds(1));
    SyncStats.Read interval = s.read(false);
    assertThat(kubelet.reads()).as("the interval's sync reads the Summary").isEqualTo(2);
    assertThat(interval.memorySource())
        .as("sampled before the kernel read: older than what the agent knows")
        .isEqualTo(SyncStats.KERNEL);
    kubelet.set(sampled(Duration.ZERO)); // a sample after the kernel read
    assertThat(s.read(false).memorySource()).isEqualTo(SyncStats.SUMMARY);
  }

  @Test
  void withoutAKernelSourceEverySyncReadsTheProvider() {
    kubelet.set(sampled(Duration.ZERO));
    SyncStats s = new SyncStats(kubelet, null, clock, counted::incrementAndGet);
    s.read(true);
    s.read(true);
    s.read(false);
    assertThat(kubelet.reads()).isEqualTo(3);
    assertThat(counted.get()).isEqualTo(3);
  }

  @Test
  void aFailingKernelReadFallsBackToTheSummary() {
    kubelet.set(sampled(Duration.ZERO));
    SyncStats s =
        new SyncStats(
            kubelet,
            () -> {
              throw new IllegalStateException("no cgroup");
            },
            clock,
            counted::incrementAndGet);
    SyncStats.Read r = s.read(true);
    assertThat(r.memorySource()).isEqualTo(SyncStats.SUMMARY);
    assertThat(available(r)).isEqualTo(7168 * MI);
  }

  @Test
  void describesTheSourceAndAgeOfEachObservation() {
    Instant now = clock.instant();
    SyncStats.Read kernel = new SyncStats.Read(kernel(), SyncStats.KERNEL);
    assertThat(
            kernel.describe(
                new Observation(Signal.MEMORY_AVAILABLE, 1, 2, now.minusMillis(3)), now))
        .isEqualTo("kernel, 3 ms old");
    assertThat(
            kernel.describe(
                new Observation(Signal.NODEFS_AVAILABLE, 1, 2, now.minusMillis(8200)), now))
        .isEqualTo("summary, 8.2 s old");
    assertThat(kernel.describe(new Observation(Signal.PID_AVAILABLE, 1, 2, null), now))
        .isEqualTo("summary, no time");
  }
}
