package dev.evictd.linux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.MemcgThresholdCrossed.Direction;
import dev.evictd.api.MemoryPollCrossed;
import dev.evictd.api.Quantity;
import dev.evictd.api.Signal;
import dev.evictd.api.Threshold;
import dev.evictd.api.ThresholdValue;
import dev.evictd.stats.Summary;
import dev.evictd.testing.TestCgroup;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MemoryPollTest {
  private static final long MI = 1L << 20;
  private static final long GI = 1L << 30;
  private final LinkedBlockingQueue<MemoryPollCrossed> facts = new LinkedBlockingQueue<>();
  private MemoryPoll poll;
  private TestCgroup cgroup;

  @AfterEach
  void cleanUp() throws Exception {
    if (poll != null) {
      poll.close();
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

  /** Node memory and the pods container with the same figures. */
  private static Summary summary(long available, long usage, long workingSet) {
    Summary.MemoryStats m = new Summary.MemoryStats(null, available, usage, workingSet, null);
    return new Summary(
        new Summary.NodeStats(
            "n", m, null, null, null, List.of(new Summary.ContainerStats("pods", m, null, null))),
        List.of());
  }

  private static Path v2Tree(Path root, long rootUsage, long podsUsage) throws IOException {
    Files.writeString(root.resolve("cgroup.controllers"), "cpu memory pids\n");
    Files.createDirectories(root.resolve("kubepods.slice"));
    setRoot(root, rootUsage);
    Files.writeString(root.resolve("kubepods.slice/memory.current"), podsUsage + "\n");
    return root;
  }

  /**
   * A v2 root memory.stat whose anon + file is {@code usage} (anon_thp and file_* lines around).
   */
  private static void setRoot(Path root, long usage) throws IOException {
    Files.writeString(
        root.resolve("memory.stat"),
        "anon_thp 4096\nanon "
            + (usage / 2)
            + "\nfile_mapped 1\nfile "
            + (usage - usage / 2)
            + "\nkernel 7\ninactive_file 0\n");
  }

  @Test
  void theIntervalFollowsTheHeadroomBetweenTheFloorAndTheConfiguredInterval() {
    long min = MemoryPoll.MIN_INTERVAL.toNanos();
    long max = Duration.ofSeconds(10).toNanos();
    long rate = MemoryPoll.ASSUMED_GROWTH_BYTES_PER_SECOND;
    assertThat(MemoryPoll.intervalNanos(-1, min, max, rate)).as("no line above").isEqualTo(max);
    assertThat(MemoryPoll.intervalNanos(64 * GI, min, max, rate)).as("far").isEqualTo(max);
    assertThat(MemoryPoll.intervalNanos(GI / 2, min, max, rate)).isEqualTo(500_000_000L);
    assertThat(MemoryPoll.intervalNanos(100 * MI, min, max, rate))
        .isBetween(97_000_000L, 98_000_000L);
    assertThat(MemoryPoll.intervalNanos(MI, min, max, rate)).as("near").isEqualTo(min);
    assertThat(MemoryPoll.intervalNanos(0, min, max, rate)).isEqualTo(min);
  }

  @Test
  void usageFilesAreParsedInPlace(@TempDir Path dir) throws Exception {
    Path value = Files.writeString(dir.resolve("memory.current"), "123456789\n");
    Path stat =
        Files.writeString(
            dir.resolve("memory.stat"), "anon_thp 5\nanon 10\nfile_dirty 3\nfile 20\n");
    Path broken = Files.writeString(dir.resolve("memory.stat.broken"), "anon 10\nfile_dirty 3\n");
    try (UsageFile v = new UsageFile(value, UsageFile.Kind.VALUE);
        UsageFile s = new UsageFile(stat, UsageFile.Kind.STAT_ANON_PLUS_FILE);
        UsageFile b = new UsageFile(broken, UsageFile.Kind.STAT_ANON_PLUS_FILE)) {
      assertThat(v.read()).isEqualTo(123456789L);
      Files.writeString(value, "42\n"); // same file, read again from offset 0
      assertThat(v.read()).isEqualTo(42L);
      assertThat(s.read()).isEqualTo(30L);
      assertThatThrownBy(b::read)
          .isInstanceOf(IOException.class)
          .hasMessage(broken + ": no anon and file lines in it");
    }
    assertThatThrownBy(() -> new UsageFile(dir.resolve("nothing"), UsageFile.Kind.VALUE))
        .hasMessage("open " + dir.resolve("nothing") + ": No such file or directory (errno 2)");
  }

  @Test
  void onAV2TreeTheRootStatAndThePodsCurrentAreThePolledFiles(@TempDir Path root) throws Exception {
    v2Tree(root, 4 * GI, GI);
    poll =
        new MemoryPoll(
            List.of(
                hard(Signal.MEMORY_AVAILABLE, "100Mi"),
                hard(Signal.ALLOCATABLE_MEMORY_AVAILABLE, "100Mi"),
                hard(Signal.NODEFS_AVAILABLE, "10Gi")),
            Cgroups.detect(root, "kubepods.slice"),
            Duration.ofSeconds(10),
            facts::add,
            Clock.systemUTC());
    assertThat(poll.available()).isTrue();
    assertThat(poll.files())
        .containsExactly(
            root.resolve("memory.stat"), root.resolve("kubepods.slice/memory.current"));
  }

  @Test
  void eachCrossingEitherWayIsOneFactAndTheIntervalShrinksNearTheLine(@TempDir Path root)
      throws Exception {
    v2Tree(root, 4 * GI, 0);
    poll =
        new MemoryPoll(
            List.of(hard(Signal.MEMORY_AVAILABLE, "100Mi")),
            Cgroups.detect(root, "kubepods"),
            Duration.ofSeconds(10),
            facts::add,
            Clock.systemUTC());
    long tenSeconds = Duration.ofSeconds(10).toNanos();
    assertThat(poll.pollOnce()).as("no line before the first sync").isEqualTo(tenSeconds);
    // capacity 1Gi + 4Gi; inactive_file 0: the line is 5Gi - 100Mi of usage
    poll.update(summary(GI, 4 * GI, 4 * GI));
    long line = 5 * GI - 100 * MI;
    assertThat(poll.pollOnce())
        .as("924Mi of headroom")
        .isEqualTo(MemoryPoll.intervalNanos(line - 4 * GI, 10_000_000L, tenSeconds, 1L << 30))
        .isBetween(800_000_000L, 1_000_000_000L);
    setRoot(root, line - 2 * MI);
    assertThat(poll.pollOnce()).as("2Mi of headroom").isEqualTo(10_000_000L);
    assertThat(facts).isEmpty();
    setRoot(root, line + 2 * MI);
    assertThat(poll.pollOnce())
        .as("2Mi above the line: the way back is watched as closely")
        .isEqualTo(10_000_000L);
    MemoryPollCrossed up = facts.poll();
    assertThat(up)
        .isEqualTo(
            new MemoryPollCrossed(
                Signal.MEMORY_AVAILABLE,
                Direction.UP,
                line,
                line + 2 * MI,
                root.resolve("memory.stat").toString(),
                up.time()));
    poll.pollOnce();
    assertThat(facts).as("once per crossing").isEmpty();
    setRoot(root, line - 8 * MI);
    poll.pollOnce();
    assertThat(facts.poll().direction()).isEqualTo(Direction.DOWN);
    setRoot(root, 64 * GI);
    assertThat(poll.pollOnce()).as("far above").isEqualTo(tenSeconds);
    facts.clear();
    // a sync that already saw usage above the new line: no crossing is reported for it
    setRoot(root, 4 * GI);
    poll.update(summary(GI - 200 * MI, 4 * GI, 4 * GI));
    poll.pollOnce();
    assertThat(facts).isEmpty();
  }

  @Test
  void aPollBetweenCrossingsAllocatesNothing(@TempDir Path root) throws Exception {
    v2Tree(root, 4 * GI, GI);
    poll =
        new MemoryPoll(
            List.of(
                hard(Signal.MEMORY_AVAILABLE, "100Mi"),
                hard(Signal.ALLOCATABLE_MEMORY_AVAILABLE, "200Mi")),
            Cgroups.detect(root, "kubepods"),
            Duration.ofSeconds(10),
            facts::add,
            Clock.systemUTC());
    poll.update(summary(GI, 4 * GI, 4 * GI));
    assertThat(poll.pollOnce()).isLessThan(Duration.ofSeconds(1).toNanos());
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    long tid = Thread.currentThread().getId();
    for (int i = 0; i < 20_000; i++) {
      poll.pollOnce(); // warm-up: the JIT compiles the loop
    }
    int n = 20_000;
    long before = mx.getThreadAllocatedBytes(tid);
    for (int i = 0; i < n; i++) {
      poll.pollOnce();
    }
    long allocated = mx.getThreadAllocatedBytes(tid) - before;
    assertThat(facts).isEmpty();
    assertThat((double) allocated / n).as("bytes allocated per poll of two files").isLessThan(1.0);
  }

  @Test
  @Tag("cgroup-v1")
  void thePollThreadSeesARealMemcgCrossedBothWays() throws Exception {
    TestCgroup.assumeRootWithCgroupV1();
    cgroup = TestCgroup.create("poll");
    Cgroups cgroups =
        Cgroups.detect(Path.of("/sys/fs/cgroup"), cgroup.dir().getFileName().toString());
    poll =
        new MemoryPoll(
            List.of(hard(Signal.ALLOCATABLE_MEMORY_AVAILABLE, "1Gi")),
            cgroups,
            Duration.ofSeconds(10),
            facts::add,
            Clock.systemUTC());
    assertThat(poll.files()).containsExactly(cgroup.dir().resolve("memory.usage_in_bytes"));
    poll.start();
    long usage = cgroup.usage();
    // the line 8Mi above the usage now: capacity − 1Gi + inactive_file = usage + 8Mi
    long line = usage + 8 * MI;
    poll.update(summary(line - usage + GI, usage, usage));
    Path file = cgroup.tmpfsFile("16M");
    Process p =
        cgroup.startIn(cgroup.dir(), "exec head -c 16M /dev/zero > \"$2\"", file.toString());
    assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
    MemoryPollCrossed up = facts.poll(10, TimeUnit.SECONDS);
    assertThat(up).as("UP fact").isNotNull();
    assertThat(up.direction()).isEqualTo(Direction.UP);
    assertThat(up.lineBytes()).isEqualTo(line);
    assertThat(up.usageBytes()).isGreaterThanOrEqualTo(line);
    assertThat(up.file()).isEqualTo(cgroup.dir().resolve("memory.usage_in_bytes").toString());
    Files.delete(file);
    MemoryPollCrossed down = facts.poll(10, TimeUnit.SECONDS);
    assertThat(down).as("DOWN fact").isNotNull();
    assertThat(down.direction()).isEqualTo(Direction.DOWN);
    assertThat(down.usageBytes()).isLessThan(line);
  }

  @Test
  void withoutAFileToReadThePollSaysWhy(@TempDir Path root) throws Exception {
    v2Tree(root, GI, GI);
    poll =
        new MemoryPoll(
            List.of(hard(Signal.ALLOCATABLE_MEMORY_AVAILABLE, "1Gi")),
            Cgroups.detect(root, "nope"),
            Duration.ofSeconds(10),
            facts::add,
            Clock.systemUTC());
    assertThat(poll.available()).isFalse();
    assertThat(poll.unavailableReason())
        .isEqualTo("allocatableMemory.available: no pods cgroup nope below " + root);
  }
}
