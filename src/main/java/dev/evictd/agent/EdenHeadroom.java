package dev.evictd.agent;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * Keeps the young collections out of the syncs an event waits for. A sync allocates a few hundred
 * KB; with a small fixed eden (the agent's {@code -Xmn}) one sync in twenty or so starts with too
 * little eden left and pauses for a young collection in the middle, which is the slowest event to
 * decision there is. So after each sync, when what is free in eden is less than one and a half
 * times what a sync allocates, the sync thread allocates that rest itself: the collection that was
 * due in the next sync happens now, between events, and the next sync starts with an empty eden. It
 * costs the bytes left unused in that eden (young collections come at most a few percent sooner)
 * and nothing when eden has room.
 *
 * <p>Only for an eden of fixed maximum size (the Serial and Parallel collectors; G1 sizes its young
 * generation as it goes, and its pool has no maximum), and only while a sync allocates less than
 * half of eden (with thousands of pods a sync collects anyway, and filling would double the
 * collections). It stops as soon as a trigger is pending: the sync it is for comes first.
 */
final class EdenHeadroom {
  /** The eden and the collection count, as the JVM reports them (a seam for tests). */
  interface Eden {
    /** Bytes in use in eden now. */
    long used();

    /** Bytes eden holds before a young collection is needed (its committed size). */
    long capacity();

    /** Collections so far, of every collector (changes when the young one has run). */
    long collections();
  }

  /** What is allocated at a time while filling: small enough to stop soon after a collection. */
  static final int CHUNK = 64 << 10;

  private final Eden eden;

  /** The largest allocation of a recent sync, decaying by a sixteenth each sync. */
  private long peak;

  private long usedBefore;
  private long collectionsBefore;

  /** What filling allocates, kept reachable until the next chunk (so it is really allocated). */
  @SuppressWarnings("unused")
  private static volatile byte[] sink;

  EdenHeadroom(Eden eden) {
    this.eden = eden;
  }

  /** For this JVM's eden, or one that does nothing when it has no fixed-size eden. */
  static EdenHeadroom forThisJvm() {
    return new EdenHeadroom(jvmEden());
  }

  private static Eden jvmEden() {
    MemoryPoolMXBean pool = null;
    for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
      if (p.getType() == MemoryType.HEAP
          && p.getName().contains("Eden")
          && p.isValid()
          && p.getUsage() != null
          && p.getUsage().getMax() > 0) {
        pool = p;
      }
    }
    if (pool == null) {
      return null;
    }
    MemoryPoolMXBean eden = pool;
    List<GarbageCollectorMXBean> collectors = ManagementFactory.getGarbageCollectorMXBeans();
    return new Eden() {
      @Override
      public long used() {
        return eden.getUsage().getUsed();
      }

      @Override
      public long capacity() {
        MemoryUsage u = eden.getUsage();
        return u.getCommitted();
      }

      @Override
      public long collections() {
        long n = 0;
        for (GarbageCollectorMXBean c : collectors) {
          n += Math.max(0, c.getCollectionCount());
        }
        return n;
      }
    };
  }

  /** Whether this JVM's eden is one this applies to. */
  boolean active() {
    return eden != null;
  }

  /** Notes eden before a sync. */
  void beforeSync() {
    if (eden != null) {
      usedBefore = eden.used();
      collectionsBefore = eden.collections();
    }
  }

  /**
   * After a sync: learns what it allocated (when no collection came in between) and, when the next
   * one would not fit in what eden has left, fills eden so that the collection happens now; stops
   * when {@code pending} says a sync is wanted. Returns the bytes allocated to fill.
   */
  long afterSync(BooleanSupplier pending) {
    if (eden == null) {
      return 0;
    }
    long used = eden.used();
    long gcs = eden.collections();
    if (gcs == collectionsBefore && used >= usedBefore) {
      peak = Math.max(used - usedBefore, peak - peak / 16);
    }
    long need = peak + peak / 2;
    long capacity = eden.capacity();
    if (peak == 0 || need > capacity / 2 || capacity - used >= need) {
      return 0;
    }
    long free = capacity - used;
    long filled = 0;
    // a chunk or two more than is free: eden's use is counted in whole allocation buffers
    while (eden.collections() == gcs && filled <= free + 2L * CHUNK && !pending.getAsBoolean()) {
      sink = new byte[CHUNK];
      filled += CHUNK;
    }
    sink = null;
    return filled;
  }
}
