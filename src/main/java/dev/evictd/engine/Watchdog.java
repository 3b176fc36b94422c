package dev.evictd.engine;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryNotificationInfo;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import javax.management.NotificationEmitter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the rule work that {@link SyncThread}s run inline, and does for it what a caller waiting
 * for a rule thread does: halts work past its deadline or allocation budget, and abandons a thread
 * whose work is not back within {@link RuleRunner#GRACE_MILLIS}. A sync thread never wakes it: it
 * only publishes its work in a field. The watchdog looks every {@link #IDLE_TICK_NANOS} while sync
 * threads exist (never without any), and once it sees work running it looks again at its deadline
 * or, with an allocation budget, every {@link RuleRunner#ALLOCATION_POLL_NANOS}. So a steady sync
 * (tens of microseconds) costs no wake-up at all; work that runs long is seen within a tick.
 */
final class Watchdog implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(Watchdog.class);

  /**
   * How often the watchdog looks for running work while sync threads exist: within this, a stuck
   * rule is seen and its allocation polled (a JVM's own periodic tasks wake as often).
   */
  static final long IDLE_TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  private static final class Shared {
    static final Watchdog INSTANCE = new Watchdog(IDLE_TICK_NANOS).watchingHeap();
  }

  private final long tickNanos;
  private final Set<SyncThread> watched = ConcurrentHashMap.newKeySet();
  private Thread thread;
  private volatile long wakeUps;
  private volatile long unparks;
  private volatile boolean closed;

  /** A watchdog that looks every {@code tickNanos} while sync threads exist (tests vary it). */
  Watchdog(long tickNanos) {
    this.tickNanos = tickNanos;
  }

  /** The watchdog of the agent's sync threads. */
  static Watchdog shared() {
    return Shared.INSTANCE;
  }

  /** Starts watching {@code st} (once per thread, not per sync). */
  synchronized void watch(SyncThread st) {
    boolean first = watched.isEmpty();
    watched.add(st);
    if (thread == null) {
      thread = new Thread(this, "evictd-watchdog");
      thread.setDaemon(true);
      thread.start();
    } else if (first) {
      unparks++;
      LockSupport.unpark(thread); // it parked for good with nothing to watch
    }
  }

  void unwatch(SyncThread st) {
    watched.remove(st);
  }

  /** How often the watchdog woke up so far. */
  long wakeUps() {
    return wakeUps;
  }

  /** How often it was unparked so far (only when a sync thread appeared with none before). */
  long unparks() {
    return unparks;
  }

  /** Ends the watchdog's thread (tests; the shared one runs as long as the JVM). */
  synchronized void close() {
    closed = true;
    if (thread != null) {
      LockSupport.unpark(thread);
    }
  }

  /**
   * Stops rule work whenever a heap pool is still fuller after a collection than the agent's
   * reserve allows ({@link SyncBudget#reserve}; the JVM's collection usage threshold): rule code
   * filling the heap faster than the allocation poll sees is stopped before the agent's own threads
   * (this one, the HTTP server's, the signal handlers') run out of memory. Returns this watchdog.
   */
  Watchdog watchingHeap() {
    try {
      long reserve = SyncBudget.reserve(Runtime.getRuntime().maxMemory());
      boolean any = false;
      for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
        long max = p.getUsage().getMax();
        if (p.getType() == MemoryType.HEAP && p.isCollectionUsageThresholdSupported() && max > 0) {
          p.setCollectionUsageThreshold(Math.max(1, max - Math.min(max / 4, reserve)));
          any = true;
        }
      }
      if (any && ManagementFactory.getMemoryMXBean() instanceof NotificationEmitter e) {
        e.addNotificationListener(
            (n, h) -> {
              if (MemoryNotificationInfo.MEMORY_COLLECTION_THRESHOLD_EXCEEDED.equals(n.getType())) {
                heapLow();
              }
            },
            null,
            null);
      }
    } catch (RuntimeException e) {
      LOG.warn("cannot watch the heap for rule work that fills it: {}", e.toString());
    }
    return this;
  }

  /** Stops every running rule job as over its allocation budget: the heap is nearly full. */
  void heapLow() {
    long now = System.nanoTime();
    for (SyncThread st : watched) {
      SyncThread.Job j = st.job;
      if (j != null && j.stopped == 0 && j.state.get() == SyncThread.Job.RUNNING) {
        j.backBy = now + TimeUnit.MILLISECONDS.toNanos(RuleRunner.GRACE_MILLIS);
        stop(
            j,
            RuleRunner.OVER_ALLOCATION,
            RuleRunner.allocatedBy(st.thread()) - j.allocatedAtStart);
      }
    }
    heapLowEvents++;
    Thread t = thread;
    if (t != null) {
      LockSupport.unpark(t);
    }
  }

  /** How often the heap was found nearly full after a collection. */
  long heapLowEvents() {
    return heapLowEvents;
  }

  private volatile long heapLowEvents;

  @Override
  public void run() {
    while (!closed) {
      try {
        watchOnce();
      } catch (VirtualMachineError e) {
        // out of memory (rule code filled the heap): the watchdog must outlive it to stop that code
        LockSupport.parkNanos(this, tickNanos);
      }
    }
  }

  private void watchOnce() {
    long now = System.nanoTime();
    long wait = watched.isEmpty() ? -1 : tickNanos;
    for (SyncThread st : watched) {
      SyncThread.Job j = st.job;
      if (j != null) {
        long next = check(st, j, now);
        wait = wait < 0 ? next : Math.min(wait, next);
      }
    }
    if (wait < 0) {
      LockSupport.park(this);
    } else {
      LockSupport.parkNanos(this, Math.max(1, wait));
    }
    wakeUps++; // the only writer
  }

  /** Looks at work running inline; returns how soon to look at it again (nanoseconds). */
  private long check(SyncThread st, SyncThread.Job j, long now) {
    if (j.state.get() != SyncThread.Job.RUNNING) {
      return tickNanos;
    }
    if (j.stopped == 0) {
      long over = j.limit > 0 ? RuleRunner.allocatedBy(st.thread()) - j.allocatedAtStart : -1;
      if (j.limit > 0 && over > j.limit) {
        // as the caller's: work stopped for allocating too much may finish in its time left
        j.backBy =
            Math.max(j.deadline, now + TimeUnit.MILLISECONDS.toNanos(RuleRunner.GRACE_MILLIS));
        return stop(j, RuleRunner.OVER_ALLOCATION, over) ? j.backBy - now : tickNanos;
      }
      if (now - j.deadline >= 0) {
        j.backBy = now + TimeUnit.MILLISECONDS.toNanos(RuleRunner.GRACE_MILLIS);
        return stop(j, RuleRunner.PAST_DEADLINE, -1) ? j.backBy - now : tickNanos;
      }
      long left = j.deadline - now;
      return j.limit > 0 ? Math.min(left, RuleRunner.ALLOCATION_POLL_NANOS) : left;
    }
    if (now - j.backBy < 0) {
      return j.backBy - now;
    }
    if (j.state.compareAndSet(SyncThread.Job.RUNNING, SyncThread.Job.ABANDONED)) {
      j.runner.abandonInline(st.thread());
      try {
        j.onAbandoned.accept(new RuleRunner.Overrun(true, j.overAllocated));
      } catch (RuntimeException e) {
        LOG.warn("dropping the session of an abandoned sync thread: {}", e.toString());
      }
      st.abandoned();
    }
    return tickNanos;
  }

  /** Calls the work's stop hook while it is still running; false when it was done meanwhile. */
  private static boolean stop(SyncThread.Job j, int why, long allocated) {
    if (!j.state.compareAndSet(SyncThread.Job.RUNNING, SyncThread.Job.STOPPING)) {
      return false;
    }
    try {
      j.overAllocated = allocated;
      j.stopped = why;
      j.stop.run();
    } catch (RuntimeException e) {
      LOG.warn("stopping rule work: {}", e.toString());
    } finally {
      j.state.set(SyncThread.Job.RUNNING);
    }
    return true;
  }
}
