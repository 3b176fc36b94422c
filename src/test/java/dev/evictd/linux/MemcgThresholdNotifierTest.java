package dev.evictd.linux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.MemcgThresholdCrossed;
import dev.evictd.api.MemcgThresholdCrossed.Direction;
import dev.evictd.api.Quantity;
import dev.evictd.api.Signal;
import dev.evictd.api.Threshold;
import dev.evictd.api.ThresholdValue;
import dev.evictd.stats.Summary;
import dev.evictd.testing.Fixtures;
import dev.evictd.testing.MutableClock;
import dev.evictd.testing.TestCgroup;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

class MemcgThresholdNotifierTest {
  private TestCgroup cgroup;
  private MemcgThresholdNotifier notifier;
  private final LinkedBlockingQueue<MemcgThresholdCrossed> facts = new LinkedBlockingQueue<>();

  @AfterEach
  void cleanUp() throws Exception {
    if (notifier != null) {
      notifier.close();
    }
    if (cgroup != null) {
      cgroup.close();
    }
  }

  private static Threshold hard(Signal s, String quantity) {
    return new Threshold(
        "hard " + s,
        s,
        ThresholdValue.ofQuantity(Quantity.parse(quantity), quantity),
        Duration.ZERO,
        null,
        0,
        "test",
        false);
  }

  private static Summary summary(long available, long usage, long workingSet) {
    Summary.MemoryStats m = new Summary.MemoryStats(null, available, usage, workingSet, null);
    return new Summary(new Summary.NodeStats("n", m, null, null, null, null), List.of());
  }

  @Test
  void memcgThresholdIsCapacityMinusThresholdPlusInactiveFile() {
    // capacity = 6Gi + 2Gi = 8Gi; inactive_file = 3Gi − 2Gi = 1Gi; 8Gi − 100Mi + 1Gi
    Summary s = summary(6L << 30, 3L << 30, 2L << 30);
    assertThat(MemcgThresholdNotifier.memcgThreshold(hard(Signal.MEMORY_AVAILABLE, "100Mi"), s))
        .hasValue((8L << 30) - (100L << 20) + (1L << 30));
    Threshold pct =
        new Threshold(
            "soft",
            Signal.MEMORY_AVAILABLE,
            ThresholdValue.ofFraction(0.1f, "10%"),
            Duration.ofMinutes(1),
            null,
            0,
            "t",
            false);
    assertThat(MemcgThresholdNotifier.memcgThreshold(pct, s))
        .hasValue((8L << 30) - (long) ((double) (8L << 30) * (double) 0.1f) + (1L << 30));
  }

  @Test
  void allocatableThresholdUsesThePodsSystemContainerAndNeedsEveryFigure() {
    Summary.MemoryStats pods = new Summary.MemoryStats(null, 1L << 30, 3L << 30, 2L << 30, null);
    Summary s =
        new Summary(
            new Summary.NodeStats(
                "n",
                null,
                null,
                null,
                null,
                List.of(new Summary.ContainerStats("pods", pods, null, null))),
            List.of());
    assertThat(
            MemcgThresholdNotifier.memcgThreshold(
                hard(Signal.ALLOCATABLE_MEMORY_AVAILABLE, "1Gi"), s))
        .hasValue((3L << 30) - (1L << 30) + (1L << 30));
    assertThat(MemcgThresholdNotifier.memcgThreshold(hard(Signal.MEMORY_AVAILABLE, "1Gi"), s))
        .isEmpty();
    assertThat(
            MemcgThresholdNotifier.memcgThreshold(
                hard(Signal.MEMORY_AVAILABLE, "1Gi"), summary(1, 2, 1)))
        .hasValue(1 + 1 - 1073741824L + 1);
  }

  @Test
  @Tag("cgroup-v1")
  void crossingUpAndBackDownArriveAsFacts() throws Exception {
    TestCgroup.assumeRootWithCgroupV1();
    cgroup = TestCgroup.create("updown");
    notifier =
        MemcgThresholdNotifier.onCgroup(
            Signal.MEMORY_AVAILABLE, cgroup.dir(), facts::add, Clock.systemUTC());
    assertThat(notifier.available()).as(notifier.unavailableReason()).isTrue();
    long threshold = cgroup.usage() + (16L << 20);
    assertThat(notifier.register(threshold)).isTrue();
    assertThat(notifier.registeredThreshold()).hasValue(threshold);

    Path file = cgroup.tmpfsFile("64M");
    Process p =
        cgroup.startIn(cgroup.dir(), "exec head -c 64M /dev/zero > \"$2\"", file.toString());
    assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).isZero();

    MemcgThresholdCrossed up = facts.poll(5, TimeUnit.SECONDS);
    assertThat(up).as("UP fact").isNotNull();
    assertThat(up.direction()).isEqualTo(Direction.UP);
    assertThat(up.signal()).isEqualTo(Signal.MEMORY_AVAILABLE);
    assertThat(up.thresholdBytes()).isEqualTo(threshold);
    assertThat(up.usageBytes()).isGreaterThanOrEqualTo(threshold);
    assertThat(up.time()).isNotNull();

    Files.delete(file); // tmpfs pages are uncharged from the writer's memcg
    MemcgThresholdCrossed down = facts.poll(5, TimeUnit.SECONDS);
    assertThat(down).as("DOWN fact").isNotNull();
    assertThat(down.direction()).isEqualTo(Direction.DOWN);
    assertThat(down.usageBytes()).isLessThan(threshold);
  }

  @Test
  @Tag("cgroup-v1")
  void usageThatCrossedAfterTheStatisticsIsReportedWhenTheThresholdIsRegistered() throws Exception {
    TestCgroup.assumeRootWithCgroupV1();
    cgroup = TestCgroup.create("notifier-below");
    Path file = cgroup.tmpfsFile("32M");
    Process p =
        cgroup.startIn(cgroup.dir(), "exec head -c 32M /dev/zero > \"$2\"", file.toString());
    assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
    long usage = cgroup.usage();
    assertThat(usage).isGreaterThanOrEqualTo(32L << 20);
    Cgroups cgroups =
        Cgroups.detect(Path.of("/sys/fs/cgroup"), cgroup.dir().getFileName().toString());
    notifier =
        new MemcgThresholdNotifier(
            hard(Signal.ALLOCATABLE_MEMORY_AVAILABLE, "1Gi"),
            cgroups,
            facts::add,
            Clock.systemUTC());
    // the statistics showed 1Mi used; the line (available − 1Gi + usage) is 16Mi below the usage
    // now: the kernel signals crossings only, so this one would go unnoticed
    long line = usage - (16L << 20);
    long mi = 1L << 20;
    assertThat(notifier.update(podsSummary(line - mi + (1L << 30), mi, mi))).isTrue();
    assertThat(notifier.registeredThreshold()).hasValue(registered(line));
    MemcgThresholdCrossed up = facts.poll(1, TimeUnit.SECONDS);
    assertThat(up).as("an upward crossing reported at registration").isNotNull();
    assertThat(up.direction()).isEqualTo(Direction.UP);
    assertThat(up.thresholdBytes()).isEqualTo(registered(line));
    // statistics that already showed the usage above the new line: the sync saw it, no event
    long seenLine = usage - (8L << 20);
    assertThat(notifier.updateNow(podsSummary(seenLine - usage + (1L << 30), usage, usage)))
        .isTrue();
    assertThat(notifier.registeredThreshold()).hasValue(registered(seenLine));
    assertThat(facts.poll(300, TimeUnit.MILLISECONDS)).isNull();
  }

  /**
   * A kubelet line one byte past a whole page (the cold-start misses of the event-to-decision
   * bench: signalled at the page below the line, where the statistics still showed {@code
   * available} one byte above the threshold, labelled DOWN, and never signalled again on the way
   * up). The notifier registers the first page at which the threshold is met: the crossing is
   * signalled, labelled UP, and statistics read after it show the threshold met.
   */
  @Test
  @Tag("cgroup-v1")
  void aCrossingOfALineOffAPageBoundaryIsSignalledUpWithTheThresholdMet() throws Exception {
    TestCgroup.assumeRootWithCgroupV1();
    cgroup = TestCgroup.create("page-line");
    Path root = Files.createTempDirectory("evictd-page-line");
    try {
      // the test cgroup stands in for the node's memory (nothing runs in it yet: usage is steady)
      Files.createSymbolicLink(root.resolve("memory"), cgroup.dir());
      HostStatsProvider host =
          new HostStatsProvider(
              new HostPaths(root, null, root, root, "kubepods"), "node", Clock.systemUTC());
      Summary before = host.summary();
      Summary.MemoryStats m = before.node().memory();
      long capacity = m.availableBytes() + m.workingSetBytes();
      // met once the working set is above today's usage plus one byte: the first page charged
      long quantity = capacity - (m.usageBytes() + 1);
      Threshold threshold = hard(Signal.MEMORY_AVAILABLE, String.valueOf(quantity));
      notifier =
          new MemcgThresholdNotifier(
              threshold, Cgroups.detect(root, "kubepods"), facts::add, Clock.systemUTC());
      assertThat(notifier.update(before)).as(String.valueOf(notifier.unavailableReason())).isTrue();

      Path file = cgroup.tmpfsFile("1M");
      Process p =
          cgroup.startIn(cgroup.dir(), "exec head -c 1M /dev/zero > \"$2\"", file.toString());
      assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
      MemcgThresholdCrossed up = facts.poll(5, TimeUnit.SECONDS);
      assertThat(up).as("the crossing of a line 1 byte past usage is signalled").isNotNull();
      assertThat(up.direction()).isEqualTo(Direction.UP);
      Summary after = host.summary();
      assertThat(after.node().memory().availableBytes())
          .as("statistics read after the event: memory.available < %d", quantity)
          .isLessThan(quantity);
    } finally {
      Files.deleteIfExists(root.resolve("memory"));
      Files.deleteIfExists(root);
    }
  }

  @Test
  @Tag("cgroup-v1")
  void updateReRegistersAChangedValueAtMostEveryTenSecondsUnlessAskedNow() throws Exception {
    TestCgroup.assumeRootWithCgroupV1();
    cgroup = TestCgroup.create("refresh");
    MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    Cgroups cgroups =
        Cgroups.detect(Path.of("/sys/fs/cgroup"), cgroup.dir().getFileName().toString());
    notifier =
        new MemcgThresholdNotifier(
            hard(Signal.ALLOCATABLE_MEMORY_AVAILABLE, "1Gi"), cgroups, facts::add, clock);
    assertThat(notifier.cgroup()).isEqualTo(cgroup.dir());
    assertThat(notifier.available()).isTrue();

    assertThat(notifier.update(podsSummary(10L << 30, 3L << 30, 2L << 30))).isTrue();
    long first = registered((12L << 30) - (1L << 30) + (1L << 30));
    assertThat(notifier.registeredThreshold()).hasValue(first);

    clock.advance(Duration.ofSeconds(5));
    assertThat(notifier.update(podsSummary(9L << 30, 3L << 30, 3L << 30)))
        .as("within 10 s")
        .isFalse();
    assertThat(notifier.registeredThreshold()).hasValue(first);

    clock.advance(Duration.ofSeconds(5));
    assertThat(notifier.update(podsSummary(10L << 30, 3L << 30, 2L << 30)))
        .as("unchanged value")
        .isFalse();
    assertThat(notifier.update(podsSummary(9L << 30, 3L << 30, 3L << 30)))
        .as("10 s later")
        .isTrue();
    assertThat(notifier.registeredThreshold()).hasValue(registered((12L << 30) - (1L << 30)));

    clock.advance(Duration.ofSeconds(1));
    assertThat(notifier.updateNow(podsSummary(8L << 30, 5L << 30, 4L << 30)))
        .as("on demand")
        .isTrue();
    assertThat(notifier.registeredThreshold())
        .hasValue(registered((12L << 30) - (1L << 30) + (1L << 30)));
  }

  /** What the notifier registers for a kubelet line: the first whole page above it. */
  private static long registered(long kubeletLine) {
    return MemcgLine.registeredBytes(kubeletLine, Native.pageSize());
  }

  private static Summary podsSummary(long available, long usage, long workingSet) {
    Summary.MemoryStats pods = new Summary.MemoryStats(null, available, usage, workingSet, null);
    return new Summary(
        new Summary.NodeStats(
            "n",
            null,
            null,
            null,
            null,
            List.of(new Summary.ContainerStats("pods", pods, null, null))),
        List.of());
  }

  @Test
  @Tag("cgroup-v1")
  void closeStopsTheThreadWithinASecondClosesEveryDescriptorAndIsIdempotent() throws Exception {
    TestCgroup.assumeRootWithCgroupV1();
    cgroup = TestCgroup.create("close");
    Set<String> fdsBefore = openDescriptors();
    notifier =
        MemcgThresholdNotifier.onCgroup(
            Signal.MEMORY_AVAILABLE, cgroup.dir(), facts::add, Clock.systemUTC());
    assertThat(notifier.register(cgroup.usage() + (1L << 30))).isTrue();
    assertThat(notifier.register(cgroup.usage() + (2L << 30))).isTrue();
    Thread t = notifierThread();
    assertThat(t).isNotNull();
    // the notifier's own eventfds: other threads' selectors open and close eventfds too (HTTP
    // clients, servers of
    // other tests in this JVM), so the check follows these descriptors rather than a count
    Set<String> notifierFds = new HashSet<>(openDescriptors());
    notifierFds.removeAll(fdsBefore);
    assertThat(notifierFds).isNotEmpty();

    long start = System.nanoTime();
    notifier.close();
    t.join(1000);
    assertThat(t.isAlive()).isFalse();
    assertThat(System.nanoTime() - start).isLessThan(1_000_000_000L);
    notifier.close();
    assertThat(notifier.registeredThreshold()).isEmpty();
    assertThat(notifier.register(1L << 40)).as("closed").isFalse();
    assertThat(openDescriptors()).doesNotContainAnyElementsOf(notifierFds);
  }

  private static Thread notifierThread() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals("memcg-notifier-memory.available"))
        .findFirst()
        .orElse(null);
  }

  /**
   * The numbers of this JVM's open eventfds (other descriptors come and go with unrelated threads).
   */
  private static Set<String> openDescriptors() throws IOException {
    try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
      return s.filter(
              p -> {
                try {
                  return Files.readSymbolicLink(p).toString().equals("anon_inode:[eventfd]");
                } catch (IOException e) {
                  return false; // closed meanwhile
                }
              })
          .map(p -> p.getFileName().toString())
          .collect(Collectors.toSet());
    }
  }

  @Test
  void aMissingCgroupWarnsOnceAndReportsUnavailableSoTheAgentPolls() {
    Path missing = Path.of("/sys/fs/cgroup/memory/evictd-test-does-not-exist");
    String err =
        captureStderr(
            () -> {
              notifier =
                  MemcgThresholdNotifier.onCgroup(
                      Signal.MEMORY_AVAILABLE, missing, facts::add, Clock.systemUTC());
              assertThat(notifier.register(1L << 30)).isFalse();
              assertThat(notifier.register(2L << 30)).isFalse();
            });
    assertThat(notifier.available()).isFalse();
    assertThat(notifier.unavailableReason())
        .contains(missing.toString())
        .contains("does not exist");
    assertThat(err.lines().filter(l -> l.contains("WARN") && l.contains("not available")))
        .hasSize(1);
    assertThat(err).contains(missing.toString());
  }

  @Test
  void cgroupV2HasNoThresholdsAndIsReportedUnavailable() {
    Cgroups v2 = Cgroups.detect(Fixtures.resource("hosts/v2/cgroup"), "kubepods");
    notifier =
        new MemcgThresholdNotifier(
            hard(Signal.MEMORY_AVAILABLE, "100Mi"), v2, facts::add, Clock.systemUTC());
    assertThat(notifier.available()).isFalse();
    assertThat(notifier.unavailableReason()).contains("cgroup v2");
    assertThat(notifier.update(summary(6L << 30, 3L << 30, 2L << 30))).isFalse();
    assertThat(notifier.registeredThreshold()).isEmpty();
  }

  static String captureStderr(Runnable r) {
    PrintStream old = System.err;
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    System.setErr(new PrintStream(buf, true, StandardCharsets.UTF_8));
    try {
      r.run();
    } finally {
      System.setErr(old);
    }
    return buf.toString(StandardCharsets.UTF_8);
  }
}
