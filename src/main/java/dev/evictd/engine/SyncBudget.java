package dev.evictd.engine;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.time.Duration;

/**
 * What one sync may spend on rules: rule firings (a base plus an allowance per pod), wall-clock
 * time, bytes allocated by the rule thread, and what the rules may keep in the long-lived session
 * from one sync to the next. A sync past any of them fails, naming the rule; past the last two the
 * session is also dropped and rebuilt from the state kept before the sync.
 *
 * @param firings rule firings allowed per sync on top of the per-pod allowance
 * @param firingsPerPod rule firings allowed per active pod
 * @param time wall-clock time the rules may run in one sync (also the limit when facts are loaded
 *     into a session)
 * @param allocatedBytes bytes the rule thread may allocate in one sync (base; {@link
 *     #allocatedBytesPerPod} more per pod); 0 turns the check off
 * @param allocatedBytesPerPod bytes the rule thread may allocate per active pod
 * @param keptFacts facts the rules may keep in the session across syncs, on top of one per pod and
 *     state fact ({@link #keptFactsPerPod} per pod)
 * @param keptFactsPerPod kept facts allowed per active pod
 * @param keptBytes estimated bytes the facts the rules inserted may hold (strings, arrays,
 *     collections, declared types) once a sync ends
 */
public record SyncBudget(
    long firings,
    long firingsPerPod,
    Duration time,
    long allocatedBytes,
    long allocatedBytesPerPod,
    long keptFacts,
    long keptFactsPerPod,
    long keptBytes) {
  private static final long MIB = 1024L * 1024;

  /**
   * Allocation allowed per sync by default: a pressure sync of the default rules allocates about
   * 0.3 MiB at 110 pods, 10 MiB at 5,000.
   */
  static final long DEFAULT_ALLOCATED_BYTES = 512 * MIB;

  /** Allocation allowed per pod by default (a 5,000-pod sync allocates well under this). */
  static final long DEFAULT_ALLOCATED_BYTES_PER_POD = 256 * 1024;

  /**
   * Bytes rules may keep by default: an eighth of the heap, at most 64 MiB (the default rules keep
   * a few kilobytes).
   */
  static final long DEFAULT_KEPT_BYTES =
      Math.min(64 * MIB, Math.max(4 * MIB, Runtime.getRuntime().maxMemory() / 8));

  /**
   * The default: 200000 firings plus 50 per pod, 10 seconds (the kubelet's housekeeping interval),
   * 512 MiB plus 256 KiB per pod allocated, 10000 facts plus 20 per pod and at most 64 MiB (an
   * eighth of a smaller heap) kept.
   */
  public static final SyncBudget DEFAULT =
      new SyncBudget(
          200_000,
          50,
          Duration.ofSeconds(10),
          DEFAULT_ALLOCATED_BYTES,
          DEFAULT_ALLOCATED_BYTES_PER_POD,
          10_000,
          20,
          DEFAULT_KEPT_BYTES);

  public SyncBudget {
    if (firings < 0 || firingsPerPod < 0) {
      throw new IllegalArgumentException("firing budgets must not be negative");
    }
    if (time.isNegative() || time.isZero()) {
      throw new IllegalArgumentException("the time budget must be positive");
    }
    if (allocatedBytes < 0 || allocatedBytesPerPod < 0) {
      throw new IllegalArgumentException("allocation budgets must not be negative");
    }
    if (keptFacts < 0 || keptFactsPerPod < 0 || keptBytes < 0) {
      throw new IllegalArgumentException("budgets for kept facts must not be negative");
    }
  }

  /** A budget of firings and time, with the default allocation and kept-facts budgets. */
  public SyncBudget(long firings, long firingsPerPod, Duration time) {
    this(
        firings,
        firingsPerPod,
        time,
        DEFAULT.allocatedBytes,
        DEFAULT.allocatedBytesPerPod,
        DEFAULT.keptFacts,
        DEFAULT.keptFactsPerPod,
        DEFAULT.keptBytes);
  }

  /** The firings allowed for a sync of {@code pods} pods. */
  public long firingsFor(int pods) {
    return firings + firingsPerPod * pods;
  }

  /** The bytes the rule thread may allocate in a sync of {@code pods} pods (0: unlimited). */
  public long allocatedBytesFor(int pods) {
    if (allocatedBytes == 0) {
      return 0;
    }
    long asked = allocatedBytes + allocatedBytesPerPod * (long) pods;
    return Math.min(asked < 0 ? Long.MAX_VALUE : asked, heapCap());
  }

  /**
   * {@link #heapCap(long, long)} for this JVM's heap and what was live after the last collection.
   */
  static long heapCap() {
    long live = 0;
    for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
      MemoryUsage after = p.getType() == MemoryType.HEAP ? p.getCollectionUsage() : null;
      if (after != null) {
        live += after.getUsed();
      }
    }
    return heapCap(Runtime.getRuntime().maxMemory(), live);
  }

  /**
   * The most one sync may allocate whatever its budget says, for a heap of {@code maxHeap} bytes of
   * which {@code live} were live after the last collection: what is free less a reserve for the
   * agent's own threads ({@link #reserve}), at least 16 MiB. Rule work may not allocate more than
   * the agent has: a budget larger than the heap would let the rules fill it before the watchdog
   * stops them.
   */
  static long heapCap(long maxHeap, long live) {
    return Math.max(16 * MIB, maxHeap - live - reserve(maxHeap));
  }

  /** The heap kept for the agent's own threads: a fourth of it, at least 32 MiB. */
  static long reserve(long maxHeap) {
    return Math.max(32 * MIB, maxHeap / 4);
  }

  /** The facts rules may keep across syncs with {@code pods} pods. */
  public long keptFactsFor(int pods) {
    return keptFacts + keptFactsPerPod * pods;
  }

  /** This budget with another firing base. */
  public SyncBudget withFirings(long base) {
    return new SyncBudget(
        base,
        firingsPerPod,
        time,
        allocatedBytes,
        allocatedBytesPerPod,
        keptFacts,
        keptFactsPerPod,
        keptBytes);
  }

  /** This budget with another time limit. */
  public SyncBudget withTime(Duration limit) {
    return new SyncBudget(
        firings,
        firingsPerPod,
        limit,
        allocatedBytes,
        allocatedBytesPerPod,
        keptFacts,
        keptFactsPerPod,
        keptBytes);
  }

  /** This budget with another allocation limit (base and per pod; 0 and 0: unlimited). */
  public SyncBudget withAllocation(long base, long perPod) {
    return new SyncBudget(
        firings, firingsPerPod, time, base, perPod, keptFacts, keptFactsPerPod, keptBytes);
  }

  /** This budget with other limits on what rules keep across syncs. */
  public SyncBudget withKept(long facts, long factsPerPod, long bytes) {
    return new SyncBudget(
        firings,
        firingsPerPod,
        time,
        allocatedBytes,
        allocatedBytesPerPod,
        facts,
        factsPerPod,
        bytes);
  }
}
