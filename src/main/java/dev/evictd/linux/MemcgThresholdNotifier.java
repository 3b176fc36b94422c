package dev.evictd.linux;

import dev.evictd.api.MemcgThresholdCrossed;
import dev.evictd.api.Signal;
import dev.evictd.api.Threshold;
import dev.evictd.stats.Summary;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the agent the instant a memory eviction threshold is about to be met, instead of at the
 * next poll: the kubelet's memory threshold notifier, on cgroup v1.
 *
 * <p>For a {@code memory.available} threshold it registers the first page above the kubelet's line
 * {@code capacity − threshold + inactive_file} ({@link MemcgLine}: the kernel compares whole pages)
 * on {@code memory.usage_in_bytes} of the root memory cgroup through {@code cgroup.event_control}
 * (for {@code allocatableMemory.available}, on the pods cgroup), so the kernel signals an eventfd
 * when usage — and thus the working set — crosses the line, in either direction, exactly where the
 * threshold becomes met or stops being met. Each signal becomes a {@link MemcgThresholdCrossed}
 * given to the listener, with the direction read from the usage right after the event against the
 * line the kernel compares with.
 *
 * <p>The registered value follows the summary: {@link #update} recomputes it after a sync and
 * re-registers when it changed, at most every {@link #REFRESH_INTERVAL}; {@link #updateNow}
 * re-registers at once. A {@link PollLoop} waits on the registration's eventfd: it picks up a new
 * registration at once, stops within a second of {@link #close()} and owns every descriptor it
 * polls (it closes a replaced registration itself, so no descriptor is closed while polled); made
 * with an {@link EventPoll}, the loop has no thread: the agent's sync loop polls the eventfd.
 *
 * <p>Where thresholds cannot be registered (cgroup v2, which has no {@code cgroup.event_control};
 * no memory controller; a missing cgroup; libc not bound) the notifier logs one warning and reports
 * itself {@linkplain #available() unavailable}: the agent keeps polling. It never throws for that.
 */
public final class MemcgThresholdNotifier implements AutoCloseable {
  /**
   * Re-registration happens at most this often, as in the kubelet (synchronize may run far more
   * often).
   */
  public static final Duration REFRESH_INTERVAL = Duration.ofSeconds(10);

  static final String USAGE_FILE = "memory.usage_in_bytes";
  static final String EVENT_CONTROL = "cgroup.event_control";
  private static final Logger LOG = LoggerFactory.getLogger(MemcgThresholdNotifier.class);

  private final Signal signal;
  private final Threshold threshold;
  private final Path cgroup;
  private final Consumer<MemcgThresholdCrossed> listener;
  private final Clock clock;
  private final long pageSize;
  private final Object lock = new Object();
  private String unavailable;
  private final PollLoop loop;
  private long registered = -1;
  private Instant registeredAt;
  private volatile boolean closed;

  /** One registration: an eventfd the kernel signals for one threshold value. */
  private record Registration(int eventFd, long threshold) {}

  /**
   * A notifier for a {@code memory.available} or {@code allocatableMemory.available} threshold.
   * Nothing is registered until the first {@link #update}.
   *
   * @throws IllegalArgumentException when the threshold is on another signal
   */
  public MemcgThresholdNotifier(
      Threshold threshold, Cgroups cgroups, Consumer<MemcgThresholdCrossed> listener, Clock clock) {
    this(threshold, cgroups, listener, clock, null);
  }

  /**
   * As {@link #MemcgThresholdNotifier(Threshold, Cgroups, Consumer, Clock)}, but with no thread of
   * its own when {@code poll} is given: the thread that awaits {@code poll} (the agent's sync loop)
   * reads the kernel's events and calls {@code listener}.
   */
  public MemcgThresholdNotifier(
      Threshold threshold,
      Cgroups cgroups,
      Consumer<MemcgThresholdCrossed> listener,
      Clock clock,
      EventPoll poll) {
    this(
        threshold,
        threshold.signal(),
        cgroupFor(threshold.signal(), cgroups),
        listener,
        clock,
        reasonFor(cgroups),
        poll);
  }

  /**
   * A notifier on the memory cgroup directory {@code cgroup} whose crossings report {@code signal};
   * thresholds are set with {@link #register}. For the doctor and tests.
   */
  public static MemcgThresholdNotifier onCgroup(
      Signal signal, Path cgroup, Consumer<MemcgThresholdCrossed> listener, Clock clock) {
    return new MemcgThresholdNotifier(null, signal, cgroup, listener, clock, null, null);
  }

  private MemcgThresholdNotifier(
      Threshold threshold,
      Signal signal,
      Path cgroup,
      Consumer<MemcgThresholdCrossed> listener,
      Clock clock,
      String reason,
      EventPoll poll) {
    if (signal != Signal.MEMORY_AVAILABLE && signal != Signal.ALLOCATABLE_MEMORY_AVAILABLE) {
      throw new IllegalArgumentException(
          "memcg thresholds observe memory signals only, not " + signal);
    }
    this.threshold = threshold;
    this.signal = signal;
    this.cgroup = cgroup;
    this.listener = Objects.requireNonNull(listener, "listener");
    this.clock = clock;
    this.pageSize = Native.pageSize();
    this.loop =
        new PollLoop(
            "memcg-notifier-" + signal.key(),
            why -> {
              synchronized (lock) {
                registered = -1;
              }
              markUnavailable("waiting for memcg events on " + cgroup + " failed: " + why);
            },
            poll);
    if (reason == null) {
      reason = checkCgroup(cgroup);
    }
    if (reason == null && !Native.available()) {
      reason = Native.unavailableReason();
    }
    if (reason != null) {
      markUnavailable(reason);
    }
  }

  private static Path cgroupFor(Signal signal, Cgroups cgroups) {
    if (cgroups.memoryRoot().isEmpty()) {
      return null;
    }
    if (signal == Signal.ALLOCATABLE_MEMORY_AVAILABLE) {
      return cgroups
          .podsCgroup()
          .orElse(cgroups.memoryRoot().get().resolve(cgroups.podsCgroupName()));
    }
    return cgroups.memoryRoot().get();
  }

  private static String reasonFor(Cgroups cgroups) {
    if (cgroups.version().isEmpty()) {
      return cgroups.describe();
    }
    if (cgroups.version().get() == Cgroups.Version.V2) {
      return "cgroup v2 has no memory usage thresholds (no cgroup.event_control)";
    }
    return null;
  }

  private static String checkCgroup(Path cgroup) {
    if (cgroup == null) {
      return "no memory cgroup";
    }
    if (!Files.isDirectory(cgroup)) {
      return "memory cgroup " + cgroup + " does not exist";
    }
    if (!Files.exists(cgroup.resolve(EVENT_CONTROL))) {
      return "no " + cgroup.resolve(EVENT_CONTROL) + " (not a cgroup v1 memory cgroup)";
    }
    if (!Files.isReadable(cgroup.resolve(USAGE_FILE))) {
      return "cannot read " + cgroup.resolve(USAGE_FILE);
    }
    return null;
  }

  private void markUnavailable(String reason) {
    synchronized (lock) {
      if (unavailable != null) {
        return;
      }
      unavailable = reason;
    }
    LOG.warn(
        "memcg threshold notifier for {} not available: {}; the agent polls instead",
        signal,
        reason);
  }

  /** The signal whose threshold this notifier watches. */
  public Signal signal() {
    return signal;
  }

  /** The memory cgroup watched, or null when there is none. */
  public Path cgroup() {
    return cgroup;
  }

  /** Whether kernel notifications work; false means the agent must rely on polling. */
  public boolean available() {
    synchronized (lock) {
      return unavailable == null;
    }
  }

  /** Why notifications do not work, or null when they do. */
  public String unavailableReason() {
    synchronized (lock) {
      return unavailable;
    }
  }

  /**
   * The value registered on {@code memory.usage_in_bytes}, when one is: for an eviction threshold,
   * the first page above the kubelet's line ({@link MemcgLine#registeredBytes}).
   */
  public OptionalLong registeredThreshold() {
    synchronized (lock) {
      return registered < 0 ? OptionalLong.empty() : OptionalLong.of(registered);
    }
  }

  /**
   * The kubelet's memcg threshold for {@code threshold} given a summary ({@link
   * MemcgLine#kubeletLine}): the threshold is met when usage is strictly above it. Empty when the
   * summary lacks a figure.
   */
  public static OptionalLong memcgThreshold(Threshold threshold, Summary summary) {
    return MemcgLine.kubeletLine(threshold, summary);
  }

  /**
   * After a sync: recomputes the threshold from {@code summary} and re-registers it when it changed
   * and the last registration is at least {@link #REFRESH_INTERVAL} old. When usage went past the
   * new value after {@code summary} showed it below, an upward crossing is delivered at once (the
   * kernel would not signal it). Returns whether a new value was registered.
   */
  public boolean update(Summary summary) {
    return update(summary, false);
  }

  /**
   * Like {@link #update} but re-registers a changed value at once, whatever the time since the last
   * one.
   */
  public boolean updateNow(Summary summary) {
    return update(summary, true);
  }

  private boolean update(Summary summary, boolean now) {
    if (threshold == null) {
      throw new IllegalStateException(
          "a notifier made with onCgroup has no eviction threshold: use register");
    }
    OptionalLong kubelet = memcgThreshold(threshold, summary);
    if (kubelet.isEmpty()) {
      LOG.debug(
          "memcg threshold for {}: the summary lacks node memory figures; not updated", signal);
      return false;
    }
    if (kubelet.getAsLong() < 0) {
      // a threshold above the capacity: already met, nothing for the kernel to watch
      LOG.debug(
          "memcg threshold for {}: computed {} bytes; not registered", signal, kubelet.getAsLong());
      return false;
    }
    long line = MemcgLine.registeredBytes(kubelet.getAsLong(), pageSize);
    synchronized (lock) {
      if (unavailable != null || closed || line == registered) {
        return false;
      }
      if (!now
          && registeredAt != null
          && clock.instant().isBefore(registeredAt.plus(REFRESH_INTERVAL))) {
        return false;
      }
    }
    if (!register(line)) {
      return false;
    }
    // The kernel signals crossings, not levels: usage that went past the line after the statistics
    // the line was computed from (which showed it below) would never be signalled. Say so at once.
    // Usage the statistics already showed above the line is not reported again: the sync saw it.
    Long seen = MemcgLine.memoryOf(signal, summary).usageBytes();
    OptionalLong usage = Cgroups.readLong(cgroup.resolve(USAGE_FILE));
    if (usage.isPresent() && MemcgLine.crossedBeforeRegistration(seen, line, usage.getAsLong())) {
      LOG.debug("memcg usage crossed the new threshold {} before it was registered", line);
      deliver(line);
    }
    return true;
  }

  /**
   * Registers {@code thresholdBytes} on the cgroup's {@code memory.usage_in_bytes}, replacing the
   * previous value. Returns false (after one warning, the notifier then being unavailable) when the
   * kernel refuses it.
   */
  public boolean register(long thresholdBytes) {
    if (thresholdBytes < 0) {
      throw new IllegalArgumentException("memcg threshold must not be negative: " + thresholdBytes);
    }
    synchronized (lock) {
      if (unavailable != null || closed) {
        return false;
      }
      try {
        Registration r = open(thresholdBytes);
        if (!loop.watch(r.eventFd(), Native.POLLIN, revents -> signalled(r))) {
          return false;
        }
      } catch (IOException e) {
        unavailable =
            "cannot register a threshold on " + cgroup.resolve(USAGE_FILE) + ": " + e.getMessage();
        LOG.warn(
            "memcg threshold notifier for {} not available: {}; the agent polls instead",
            signal,
            unavailable);
        return false;
      }
      registered = thresholdBytes;
      registeredAt = clock.instant();
      LOG.debug("memcg threshold for {} on {}: {} bytes", signal, cgroup, thresholdBytes);
      return true;
    }
  }

  private Registration open(long value) throws IOException {
    int usageFd = -1;
    int controlFd = -1;
    int eventFd = -1;
    try {
      usageFd = Native.open(cgroup.resolve(USAGE_FILE), Native.O_RDONLY);
      controlFd = Native.open(cgroup.resolve(EVENT_CONTROL), Native.O_WRONLY);
      eventFd = Native.eventfd();
      Native.write(
          controlFd,
          eventFd + " " + usageFd + " " + value,
          false,
          "write " + cgroup.resolve(EVENT_CONTROL));
      Registration r = new Registration(eventFd, value);
      eventFd = -1;
      return r;
    } finally {
      // the kernel keeps the registration as long as the eventfd is open; the other two are not
      // needed
      Native.close(eventFd);
      Native.close(controlFd);
      Native.close(usageFd);
    }
  }

  /** On the loop's thread: the kernel signalled {@code r}'s eventfd. */
  private void signalled(Registration r) throws IOException {
    Native.readEventfd(r.eventFd());
    deliver(r.threshold());
  }

  private void deliver(long thresholdBytes) {
    OptionalLong usage = Cgroups.readLong(cgroup.resolve(USAGE_FILE));
    if (usage.isEmpty()) {
      LOG.warn("memcg event on {} but {} is unreadable; event dropped", cgroup, USAGE_FILE);
      return;
    }
    long u = usage.getAsLong();
    // against the value the kernel compares with (whole pages), so that a signal at usage equal to
    // a value registered off a page boundary is not taken for the way down
    MemcgThresholdCrossed.Direction d =
        MemcgLine.side(u, MemcgLine.kernelLine(thresholdBytes, pageSize));
    MemcgThresholdCrossed fact =
        new MemcgThresholdCrossed(signal, d, thresholdBytes, u, clock.instant());
    LOG.debug("memcg threshold crossed: {}", fact);
    try {
      listener.accept(fact);
    } catch (RuntimeException e) {
      LOG.warn("memcg threshold listener failed on {}: {}", fact, e.toString());
    }
  }

  /**
   * Stops waiting and unregisters (closes every descriptor); returns within about a second.
   * Idempotent.
   */
  @Override
  public void close() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      registered = -1;
    }
    loop.close();
  }
}
