package dev.evictd.agent;

import dev.evictd.api.EvictionPlan;
import dev.evictd.api.Observation;
import dev.evictd.api.Signal;
import dev.evictd.api.StatsException;
import dev.evictd.ports.StatsProvider;
import dev.evictd.stats.Summary;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The statistics a sync decides on. Without a kernel source (host statistics, where every read is
 * the kernel's, or a fixture) each sync reads the provider. With one (the kubelet's Summary, the
 * agent on the node):
 *
 * <ul>
 *   <li>the Summary is read at most once per its own refresh: a sync the kernel triggered reads it
 *       again only when the sample it has (its node memory {@code time}) is {@link
 *       #KUBELET_REFRESH} old, and then at most every {@link #OVERDUE_RETRY} until the kubelet has
 *       refreshed; other syncs (the interval, a rule reload) read it as before;
 *   <li>a sync the kernel triggered (memcg, PSI, memory.events, the adaptive poll, a crossing
 *       re-check) takes the memory figures from the kernel ({@link KernelMemory}), as the kubelet's
 *       own eviction manager reads them fresh; so do the syncs after it until the Summary has a
 *       sample newer than that kernel read, so figures never go back in time.
 * </ul>
 *
 * A crossing the Summary does not show is thus settled by reading the kernel, never by reading the
 * Summary again. Used by the sync thread only.
 */
final class SyncStats {
  private static final Logger LOG = LoggerFactory.getLogger(EvictionManager.class);

  /**
   * How often the kubelet refreshes the statistics it serves to external Summary calls (its
   * housekeeping interval, 10 s by default).
   */
  static final Duration KUBELET_REFRESH = Duration.ofSeconds(10);

  /** How often a Summary whose refresh is overdue is read again by syncs the kernel triggered. */
  static final Duration OVERDUE_RETRY = Duration.ofSeconds(1);

  /**
   * The sources of the kernel's own events (memcg, the adaptive poll, PSI, memory.events): their
   * syncs, and the re-checks of a crossing, read the kernel's memory figures.
   */
  static final java.util.Set<String> KERNEL_SOURCES =
      java.util.Set.of(
          dev.evictd.linux.LinuxNotifiers.MEMCG_SOURCE,
          dev.evictd.linux.MemoryPoll.SOURCE,
          dev.evictd.linux.LinuxNotifiers.PSI_SOURCE,
          dev.evictd.linux.MemoryEventsNotifier.SOURCE);

  /** Where memory figures come from. */
  static final String KERNEL = "kernel";

  static final String SUMMARY = EvictionPlan.SUMMARY;

  /**
   * One sync's statistics.
   *
   * @param summary what the sync decides on
   * @param memorySource where its memory figures came from: {@link #KERNEL} (with the cgroups'
   *     place when known, {@code kernel: /sys/fs/cgroup/memory}) or {@link #SUMMARY}
   */
  record Read(Summary summary, String memorySource) {
    /** Where {@code o}'s figures came from and how old they were at {@code now}. */
    String describe(Observation o, Instant now) {
      return EvictionPlan.provenance(source(o.signal()), o.time(), now);
    }

    private String source(Signal s) {
      return MEMORY.contains(s) ? memorySource : SUMMARY;
    }

    /** {@code plan} saying where its figures came from: the memory signals' from here. */
    EvictionPlan sourced(EvictionPlan plan) {
      if (plan == null || SUMMARY.equals(memorySource)) {
        return plan;
      }
      java.util.Map<Signal, String> sources = new java.util.EnumMap<>(Signal.class);
      for (Signal s : MEMORY) {
        sources.put(s, memorySource);
      }
      return plan.withSources(sources);
    }
  }

  /** The signals whose figures a kernel read replaces (and each pod's memory with them). */
  private static final java.util.Set<Signal> MEMORY =
      java.util.EnumSet.of(Signal.MEMORY_AVAILABLE, Signal.ALLOCATABLE_MEMORY_AVAILABLE);

  private final StatsProvider stats;
  private final Supplier<Summary> kernel;
  private final Clock clock;
  private final Runnable summaryRead;
  private final String kernelSource;
  private Summary cached;
  private Instant lastRead;
  // the last read a kernel trigger asked for: Summaries sampled before it are older than it
  private Instant kernelTriggeredAt;
  private boolean kernelWarned;

  /**
   * @param kernel the kernel's memory figures now, or null where there is no kernel source
   * @param summaryRead told of every read of {@code stats} (the metric)
   */
  SyncStats(StatsProvider stats, Supplier<Summary> kernel, Clock clock, Runnable summaryRead) {
    this(stats, kernel, null, clock, summaryRead);
  }

  /**
   * @param where where the kernel's figures are read (the memory cgroups' place), or null
   */
  SyncStats(
      StatsProvider stats,
      Supplier<Summary> kernel,
      String where,
      Clock clock,
      Runnable summaryRead) {
    this.kernelSource = where == null ? KERNEL : KERNEL + ": " + where;
    this.stats = stats;
    this.kernel = kernel;
    this.clock = clock;
    this.summaryRead = summaryRead;
  }

  /** The statistics of a sync the kernel triggered ({@code byKernel}) or not. */
  Read read(boolean byKernel) {
    Instant now = clock.instant();
    if (kernel == null) {
      return new Read(readSummary(now), hostSource(stats));
    }
    if (!byKernel || lastRead == null || overdue(now)) {
      readSummary(now);
    } else if (cached == null) {
      throw new StatsException(
          "the last statistics read failed; read again after " + lastRead.plus(OVERDUE_RETRY));
    }
    if (byKernel) {
      kernelTriggeredAt = now;
    }
    Instant sampled = sampled(cached);
    boolean fresh =
        byKernel
            || (kernelTriggeredAt != null
                && sampled != null
                && sampled.isBefore(kernelTriggeredAt));
    if (!fresh) {
      return new Read(cached, SUMMARY);
    }
    try {
      Summary k = kernel.get();
      kernelWarned = false;
      return new Read(KernelMemory.overlay(cached, k), kernelSource);
    } catch (RuntimeException e) {
      if (!kernelWarned) {
        kernelWarned = true;
        LOG.warn(
            "cannot read the kernel's memory figures; the Summary's are used: {}", e.toString());
      }
      return new Read(cached, SUMMARY);
    }
  }

  /** With host statistics, every memory figure is the kernel's, read at the sync. */
  private static String hostSource(StatsProvider stats) {
    if (stats instanceof dev.evictd.linux.HostStatsProvider h) {
      return h.cgroups().memoryRoot().map(r -> KERNEL + ": " + r).orElse(SUMMARY);
    }
    return SUMMARY;
  }

  private Summary readSummary(Instant now) {
    summaryRead.run();
    lastRead = now;
    cached = null;
    Summary s = stats.summary();
    if (s == null) {
      throw new StatsException("no statistics");
    }
    cached = s;
    return s;
  }

  /** Whether the kubelet should have refreshed the Summary held, and it was not tried just now. */
  private boolean overdue(Instant now) {
    Instant sampled = cached == null ? null : sampled(cached);
    Instant due =
        cached == null ? lastRead : (sampled == null ? lastRead : sampled).plus(KUBELET_REFRESH);
    return !now.isBefore(due) && !now.isBefore(lastRead.plus(OVERDUE_RETRY));
  }

  /** When the Summary's node memory was sampled, or null. */
  private static Instant sampled(Summary s) {
    return s.node() == null || s.node().memory() == null ? null : s.node().memory().time();
  }
}
