package dev.evictd.linux;

import dev.evictd.api.MemcgThresholdCrossed;
import dev.evictd.api.MemoryPollCrossed;
import dev.evictd.api.Signal;
import dev.evictd.api.Threshold;
import dev.evictd.stats.Summary;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An adaptive poll of the one or two files the memory decision needs: the root cgroup's usage (for
 * {@code memory.available}) and the pods cgroup's (for {@code allocatableMemory.available}). Each
 * threshold becomes a usage line, {@code capacity − threshold + inactive_file} from the last sync's
 * summary (the value the kernel's memcg threshold is registered at on v1); each crossing of a line,
 * either way, becomes a {@link MemoryPollCrossed} given to the listener.
 *
 * <p>The interval follows the headroom: the time the usage would take to reach the nearest line
 * (above it, or below it for the way back) at {@link #ASSUMED_GROWTH_BYTES_PER_SECOND}, between
 * {@link #MIN_INTERVAL} and the configured interval, so the poll is about as cheap as the sync loop
 * far from any line and reads every few milliseconds close to one. A read is one {@code pread} per
 * file into a native buffer, parsed in place (see {@link UsageFile}): the poll allocates nothing
 * between crossings.
 *
 * <p>On cgroup v2, which has no memory usage thresholds, this is how the agent sees a line crossed
 * within milliseconds; on v1 it is the safety net beside the memcg eventfd. Where a file cannot be
 * opened the poll logs one warning and leaves it out; with no file left it reports itself
 * {@linkplain #available() unavailable}. One daemon thread; {@link #close()} stops it at once.
 */
public final class MemoryPoll implements AutoCloseable {
  /** The event source name of the poll's facts. */
  public static final String SOURCE = "poll";

  /** The shortest interval, near a line. */
  public static final Duration MIN_INTERVAL = Duration.ofMillis(10);

  /**
   * How fast usage is assumed to grow when the interval is chosen: a line {@code h} bytes away is
   * read again within {@code h / rate}. 1 GiB/s is faster than one allocating process usually fills
   * memory through the page allocator under a memcg charge.
   */
  public static final long ASSUMED_GROWTH_BYTES_PER_SECOND = 1L << 30;

  private static final Logger LOG = LoggerFactory.getLogger(MemoryPoll.class);

  /** One file and the lines on it (the memory thresholds of its signal). */
  private static final class Watch {
    final Signal signal;
    final List<Threshold> thresholds = new ArrayList<>();
    final UsageFile file;

    /** Replaced as a whole by {@link #update}; read by the poll thread. */
    volatile Lines lines = new Lines(new long[0], new boolean[0]);

    /** Set by the poll thread when the file can no longer be read. */
    volatile boolean failed;

    Watch(Signal signal, UsageFile file) {
      this.signal = signal;
      this.file = file;
    }
  }

  /** The usage lines of one file and, per line, whether usage was last seen above it. */
  private record Lines(long[] values, boolean[] above) {}

  private final List<Watch> watches = new ArrayList<>();
  private final Consumer<MemoryPollCrossed> listener;
  private final Clock clock;
  private final long maxNanos;
  private final long minNanos;
  private final String unavailable;
  private volatile boolean closed;
  private volatile long lastIntervalNanos;
  private Thread thread;

  /**
   * A poll for the {@code memory.available} and {@code allocatableMemory.available} thresholds
   * among {@code thresholds} (others are ignored), relaxing to {@code relaxed} far from any line.
   * Nothing is watched until the first {@link #update}; the thread starts with {@link #start()}.
   */
  public MemoryPoll(
      List<Threshold> thresholds,
      Cgroups cgroups,
      Duration relaxed,
      Consumer<MemoryPollCrossed> listener,
      Clock clock) {
    this.listener = Objects.requireNonNull(listener, "listener");
    this.clock = clock;
    this.maxNanos = Math.max(relaxed.toNanos(), MIN_INTERVAL.toNanos());
    this.minNanos = MIN_INTERVAL.toNanos();
    this.lastIntervalNanos = maxNanos;
    List<String> problems = new ArrayList<>();
    for (Signal s : List.of(Signal.MEMORY_AVAILABLE, Signal.ALLOCATABLE_MEMORY_AVAILABLE)) {
      List<Threshold> mine = thresholds.stream().filter(t -> t.signal() == s).toList();
      if (mine.isEmpty()) {
        continue;
      }
      String problem = null;
      UsageFile f = null;
      if (!Native.available()) {
        problem = Native.unavailableReason();
      } else {
        try {
          f = usageFile(cgroups, s);
        } catch (IOException e) {
          problem = e.getMessage();
        }
      }
      if (f == null) {
        problems.add(s.key() + ": " + problem);
        LOG.warn("adaptive memory poll for {} not available: {}", s, problem);
        continue;
      }
      Watch w = new Watch(s, f);
      w.thresholds.addAll(mine);
      watches.add(w);
    }
    this.unavailable =
        watches.isEmpty()
            ? (problems.isEmpty() ? "no memory threshold to watch" : String.join("; ", problems))
            : null;
  }

  /**
   * The file whose usage stands for {@code signal}: the root cgroup's (v1 {@code
   * memory.usage_in_bytes}; v2 {@code memory.stat}, the root having no {@code memory.current}) or
   * the pods cgroup's.
   */
  static UsageFile usageFile(Cgroups cgroups, Signal signal) throws IOException {
    if (cgroups.version().isEmpty()) {
      throw new IOException(cgroups.describe());
    }
    Path root = cgroups.memoryRoot().orElseThrow();
    Path dir = root;
    if (signal == Signal.ALLOCATABLE_MEMORY_AVAILABLE) {
      dir =
          cgroups
              .podsCgroup()
              .orElseThrow(
                  () ->
                      new IOException(
                          "no pods cgroup " + cgroups.podsCgroupName() + " below " + root));
    }
    if (cgroups.version().get() == Cgroups.Version.V1) {
      return new UsageFile(dir.resolve("memory.usage_in_bytes"), UsageFile.Kind.VALUE);
    }
    Path current = dir.resolve("memory.current");
    if (!dir.equals(root) || Files.exists(current)) {
      return new UsageFile(current, UsageFile.Kind.VALUE);
    }
    return new UsageFile(dir.resolve("memory.stat"), UsageFile.Kind.STAT_ANON_PLUS_FILE);
  }

  /** Whether at least one file is polled. */
  public boolean available() {
    return unavailable == null;
  }

  /** Why nothing is polled, or null when something is. */
  public String unavailableReason() {
    return unavailable;
  }

  /** The files polled. */
  public List<Path> files() {
    return watches.stream().map(w -> w.file.path()).toList();
  }

  /** The interval the poll chose last (for the doctor, metrics and tests). */
  public Duration currentInterval() {
    return Duration.ofNanos(lastIntervalNanos);
  }

  /**
   * The poll interval for {@code headroomBytes} to the nearest line (negative: none): the time to
   * grow by it at {@code bytesPerSecond}, between {@code minNanos} and {@code maxNanos}.
   */
  static long intervalNanos(long headroomBytes, long minNanos, long maxNanos, long bytesPerSecond) {
    if (headroomBytes < 0) {
      return maxNanos;
    }
    double nanos = (double) headroomBytes / bytesPerSecond * 1e9;
    return (long) Math.max(minNanos, Math.min(maxNanos, nanos));
  }

  /**
   * After a sync: the usage lines from {@code summary}'s figures; usage the summary showed above a
   * line counts as above it (no crossing is reported for what the sync saw). Wakes the poll, which
   * reads at once.
   */
  public void update(Summary summary) {
    for (Watch w : watches) {
      List<Long> values = new ArrayList<>();
      for (Threshold t : w.thresholds) {
        OptionalLong line = MemcgThresholdNotifier.memcgThreshold(t, summary);
        if (line.isPresent() && line.getAsLong() > 0) {
          values.add(line.getAsLong());
        }
      }
      Long seen = seenUsage(w.signal, summary);
      long[] v = values.stream().mapToLong(Long::longValue).sorted().distinct().toArray();
      boolean[] above = new boolean[v.length];
      for (int i = 0; i < v.length; i++) {
        // met means strictly above the kubelet's line (memory.available < quantity)
        above[i] = seen != null && seen > v[i];
      }
      w.lines = new Lines(v, above);
    }
    Thread t = thread;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }

  private static Long seenUsage(Signal signal, Summary summary) {
    if (summary == null || summary.node() == null) {
      return null;
    }
    Summary.MemoryStats m;
    if (signal == Signal.ALLOCATABLE_MEMORY_AVAILABLE) {
      Summary.ContainerStats pods =
          summary.node().systemContainer(dev.evictd.k8s.Observations.PODS_SYSTEM_CONTAINER);
      m = pods == null ? null : pods.memory();
    } else {
      m = summary.node().memory();
    }
    return m == null ? null : m.usageBytes();
  }

  /** Starts the poll thread (once). */
  public synchronized void start() {
    if (thread != null || watches.isEmpty() || closed) {
      return;
    }
    thread = new Thread(this::run, "memory-poll");
    thread.setDaemon(true);
    thread.start();
  }

  private void run() {
    while (!closed) {
      long next = pollOnce();
      lastIntervalNanos = next;
      LockSupport.parkNanos(this, next);
    }
    for (Watch w : watches) {
      w.file.close();
    }
  }

  /**
   * Reads every file once, reports crossings, and returns the interval until the next read. A file
   * that fails to read is reported once and then left out.
   */
  long pollOnce() {
    long next = maxNanos;
    for (int wi = 0; wi < watches.size(); wi++) {
      Watch w = watches.get(wi);
      if (w.failed) {
        continue;
      }
      long usage;
      try {
        usage = w.file.read();
      } catch (IOException e) {
        w.failed = true;
        LOG.warn("adaptive memory poll for {}: {}; no longer polled", w.signal, e.getMessage());
        continue;
      }
      Lines l = w.lines;
      long[] v = l.values();
      boolean[] above = l.above();
      long headroom = -1;
      for (int i = 0; i < v.length; i++) {
        // strictly above, as the threshold is met: usage at the line is not a crossing yet (one
        // reported there would find the threshold unmet, and the rest of the climb unreported)
        boolean now = usage > v[i];
        if (now != above[i]) {
          above[i] = now;
          deliver(w, v[i], usage, now);
        }
        long distance = now ? usage - v[i] : v[i] - usage;
        if (headroom < 0 || distance < headroom) {
          headroom = distance;
        }
      }
      next =
          Math.min(
              next, intervalNanos(headroom, minNanos, maxNanos, ASSUMED_GROWTH_BYTES_PER_SECOND));
    }
    return next;
  }

  private void deliver(Watch w, long line, long usage, boolean up) {
    MemoryPollCrossed fact =
        new MemoryPollCrossed(
            w.signal,
            up ? MemcgThresholdCrossed.Direction.UP : MemcgThresholdCrossed.Direction.DOWN,
            line,
            usage,
            w.file.path().toString(),
            clock.instant());
    LOG.debug("memory poll: {}", fact);
    try {
      listener.accept(fact);
    } catch (RuntimeException e) {
      LOG.warn("memory poll listener failed on {}: {}", fact, e.toString());
    }
  }

  /** Stops the poll thread and closes the files. Idempotent. */
  @Override
  public void close() {
    Thread t;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      t = thread;
    }
    if (t == null) {
      for (Watch w : watches) {
        w.file.close();
      }
      return;
    }
    LockSupport.unpark(t);
    if (t != Thread.currentThread()) {
      try {
        t.join(1000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
