package dev.evictd.engine;

import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a planner's rule work on a dedicated thread (or inline on a {@link SyncThread}, under its
 * {@link Watchdog}), so that rules stuck in a loop cannot keep the caller past its time budget.
 * Java cannot stop a thread safely: when the work overruns, it is asked to stop (the planner halts
 * the session, which ends a loop of firings), and if it does not come back within a short grace its
 * thread is abandoned — a new one carries on, and nothing may again touch what the old one uses. An
 * abandoned thread keeps its CPU until its work ends or the process exits; {@link #abandoned()}.
 */
final class RuleRunner implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RuleRunner.class);
  private static final AtomicInteger THREADS = new AtomicInteger();

  /** How long work that overran gets to come back after it was asked to stop. */
  static final long GRACE_MILLIS = 200;

  /** Rule work that did not finish within its deadline, or allocated more than it may. */
  static final class Overrun extends Exception {
    private final boolean stuck;
    private final long allocated;

    Overrun(boolean stuck, long allocated) {
      super(null, null, false, false);
      this.stuck = stuck;
      this.allocated = allocated;
    }

    /**
     * The bytes the work had allocated when it went past its allocation limit; -1 when it overran
     * its deadline instead.
     */
    long allocated() {
      return allocated;
    }

    /**
     * Whether the work is still running on an abandoned thread (it did not come back when asked to
     * stop).
     */
    boolean stuck() {
      return stuck;
    }
  }

  /** How often the caller looks at what the rule thread allocated while it waits for it. */
  static final long ALLOCATION_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

  /**
   * Bytes allocated per thread (HotSpot's extension), or null where the JVM does not count them.
   */
  private static final com.sun.management.ThreadMXBean ALLOCATIONS = allocationCounter();

  private static com.sun.management.ThreadMXBean allocationCounter() {
    try {
      if (java.lang.management.ManagementFactory.getThreadMXBean()
              instanceof com.sun.management.ThreadMXBean t
          && t.isThreadAllocatedMemorySupported()) {
        if (!t.isThreadAllocatedMemoryEnabled()) {
          t.setThreadAllocatedMemoryEnabled(true);
        }
        return t;
      }
    } catch (RuntimeException | LinkageError e) {
      LOG.warn("bytes allocated by rule threads cannot be measured: {}", e.toString());
    }
    return null;
  }

  /** Whether this JVM measures what the rule thread allocates (the allocation budget applies). */
  static boolean measuresAllocation() {
    return ALLOCATIONS != null;
  }

  /** Bytes the calling thread allocated so far, or -1 when unknown. */
  static long allocatedHere() {
    return ALLOCATIONS == null ? -1 : ALLOCATIONS.getCurrentThreadAllocatedBytes();
  }

  /** Bytes the given thread allocated so far, or -1 when unknown. */
  static long allocatedBy(Thread t) {
    return ALLOCATIONS == null ? -1 : ALLOCATIONS.getThreadAllocatedBytes(t.getId());
  }

  /** Whether the two sides may wait for each other spinning at all: only with another processor. */
  private static final boolean MULTI_CPU = Runtime.getRuntime().availableProcessors() > 1;

  /**
   * How long the caller waits for the result yielding the processor before it parks: a steady
   * sync's rule work fits. Yielding, not spinning: this VM's scheduler often puts a woken rule
   * thread on the caller's processor (sparing a halted one), and a caller spinning there would keep
   * it waiting for the whole spin.
   */
  static final long CALLER_SPIN_NANOS = MULTI_CPU ? 100_000 : 0;

  /**
   * How long the rule thread waits, spinning, for the caller to collect a result: a caller yielding
   * on another processor collects within a microsecond; one that shares this processor cannot, and
   * then the rule thread parks at once.
   */
  static final long QUICK_NANOS = MULTI_CPU ? 2_000 : 0;

  /**
   * How long the rule thread spins for the next job after the caller collected a result at once (it
   * runs on another processor): the next hand-over of the sync, or the next sync of a burst, then
   * costs no wake-up of an idle processor (tens of microseconds on this VM, twice per hand-over).
   * Then it parks: an idle agent spins only right after its work.
   */
  static final long LINGER_NANOS = MULTI_CPU ? 100_000 : 0;

  /**
   * A yield that took longer than this while the work was not done gave the processor to another
   * thread than the rule thread: the caller parks, and parks at once for a while (see {@link
   * #BACKOFF_MIN_NANOS}). A spinning rule thread that sees such a gap between two looks was
   * preempted and parks.
   */
  static final long LOST_NANOS = 20_000;

  /**
   * How long the caller parks at once after a yield lost its processor; it doubles with each such
   * loss up to {@link #BACKOFF_MAX_NANOS} and halves with each wait that lost nothing, so a busy
   * machine pays about one lost yield a second, and one that became quiet yields again within a few
   * seconds.
   */
  static final long BACKOFF_MIN_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

  /** The longest time the caller parks at once after lost yields. */
  static final long BACKOFF_MAX_NANOS = TimeUnit.SECONDS.toNanos(1);

  /** One piece of work handed to the rule thread, and its outcome. */
  private static final class Job {
    final Callable<?> work;
    final Thread caller;
    Object result;
    Throwable error;
    volatile boolean done;

    /** Whether the caller waits for the job yielding rather than parked. */
    volatile boolean callerSpinning;

    /** Set by the caller once it has seen the job done. */
    volatile boolean collected;

    /** The rule thread's allocation counter when the job started (-1 unknown). */
    volatile long allocatedAtStart = -1;

    /** Bytes the job allocated (-1 unknown), set when it is done. */
    volatile long allocated = -1;

    Job(Callable<?> work, Thread caller) {
      this.work = work;
      this.caller = caller;
    }
  }

  /** The rule thread: runs one job at a time until it is closed or abandoned. */
  private static final class Worker implements Runnable {
    final AtomicReference<Job> slot = new AtomicReference<>();
    volatile boolean stopped;
    final Thread thread;

    Worker() {
      thread = new Thread(this, "evictd-rules-" + THREADS.incrementAndGet());
      thread.setDaemon(true);
      thread.start();
    }

    void submit(Job job) {
      slot.set(job);
      LockSupport.unpark(thread);
    }

    /**
     * Runs jobs as they come. Between jobs the thread parks at once (the caller unparks it), unless
     * the caller collected the last result at once — it was yielding on another processor — and
     * then it spins up to {@link #LINGER_NANOS} for the next job first. Spinning on both sides
     * unconditionally (50 µs each) cost a steady sync at 110 pods about 125 µs per hand-over on a
     * loaded 2-core VM, where the spinning thread kept the other one off its processor; parking at
     * once cost an idle one two wake-ups of a halted processor per hand-over.
     */
    @Override
    public void run() {
      boolean linger = false;
      while (!stopped) {
        Job j = slot.getAndSet(null);
        if (j == null) {
          if (linger) {
            linger = false;
            j = lingerForJob();
          }
          if (j == null) {
            LockSupport.park(this);
            Thread.interrupted(); // an interrupt is only a wake-up here; the stopped flag decides
            continue;
          }
        }
        long start = ALLOCATIONS == null ? -1 : ALLOCATIONS.getCurrentThreadAllocatedBytes();
        j.allocatedAtStart = start;
        try {
          j.result = j.work.call();
        } catch (Throwable t) {
          // OutOfMemoryError and StackOverflowError included: the caller fails the sync with them
          j.error = t;
        }
        if (start >= 0) {
          j.allocated = ALLOCATIONS.getCurrentThreadAllocatedBytes() - start;
        }
        j.done = true;
        LockSupport.unpark(j.caller);
        linger = j.callerSpinning && collectedAtOnce(j);
      }
    }

    /**
     * Spins up to {@link #LINGER_NANOS} for the next job; null when none came, the runner was
     * closed, or this thread was preempted meanwhile (its processor is wanted).
     */
    private Job lingerForJob() {
      long last = System.nanoTime();
      long until = last + LINGER_NANOS;
      while (!stopped) {
        Job j = slot.getAndSet(null);
        if (j != null) {
          return j;
        }
        long now = System.nanoTime();
        if (now >= until || now - last > LOST_NANOS) {
          return null;
        }
        last = now;
        Thread.onSpinWait();
      }
      return null;
    }

    /** Whether the caller collects the result within {@link #QUICK_NANOS}, spinning. */
    private static boolean collectedAtOnce(Job j) {
      long until = System.nanoTime() + QUICK_NANOS;
      while (!j.collected) {
        if (System.nanoTime() >= until) {
          return false;
        }
        Thread.onSpinWait();
      }
      return true;
    }
  }

  private Worker worker;
  private final AtomicInteger abandoned = new AtomicInteger();
  private long lastAllocated = -1;

  /** Until when the caller parks at once ({@link System#nanoTime}), after a lost yield. */
  private long parkAtOnceUntil;

  private long backoff = BACKOFF_MIN_NANOS;

  /**
   * The threads abandoned so far, read without the planner's lock (health endpoints ask while a
   * sync runs); a thread whose stuck work finally ended has exited and no longer counts as alive.
   */
  private final java.util.concurrent.ConcurrentLinkedQueue<Thread> abandonedThreads =
      new java.util.concurrent.ConcurrentLinkedQueue<>();

  /**
   * Runs {@code work} on the rule thread and waits for it until {@code deadlineNanos} ({@link
   * System#nanoTime}). Exceptions thrown by the work are rethrown.
   *
   * @param stop asks the work to stop (called from this thread when the deadline passes)
   * @throws Overrun when the deadline passed
   */
  <T> T run(Callable<T> work, long deadlineNanos, Runnable stop) throws Overrun {
    return run(work, deadlineNanos, 0, stop);
  }

  /**
   * Runs {@code work} on the rule thread and waits for it until {@code deadlineNanos} ({@link
   * System#nanoTime}), or until it has allocated more than {@code maxAllocatedBytes} (0: no limit).
   * Exceptions and errors thrown by the work are rethrown.
   *
   * @param stop asks the work to stop (called from this thread when a limit is passed)
   * @throws Overrun when the deadline passed or the work allocated too much ({@link
   *     Overrun#allocated()})
   */
  <T> T run(Callable<T> work, long deadlineNanos, long maxAllocatedBytes, Runnable stop)
      throws Overrun {
    return run(work, deadlineNanos, maxAllocatedBytes, stop, null);
  }

  /**
   * As {@link #run(Callable, long, long, Runnable)}, but on a {@link SyncThread} and with an {@code
   * onAbandoned} hook, the work runs inline under the thread's {@link Watchdog}: should the thread
   * be abandoned, the watchdog calls the hook (with the overrun) instead of this method throwing,
   * and the thread, if it comes back, throws {@link SyncThread.Abandoned}.
   */
  @SuppressWarnings("unchecked")
  <T> T run(
      Callable<T> work,
      long deadlineNanos,
      long maxAllocatedBytes,
      Runnable stop,
      Consumer<Overrun> onAbandoned)
      throws Overrun {
    SyncThread inline = onAbandoned == null ? null : SyncThread.current();
    if (inline != null) {
      long limit = ALLOCATIONS == null ? 0 : maxAllocatedBytes;
      return inline.run(this, work, deadlineNanos, limit, stop, onAbandoned);
    }
    if (worker == null) {
      worker = new Worker();
    }
    long limit = ALLOCATIONS == null ? 0 : maxAllocatedBytes;
    Job job = new Job(work, Thread.currentThread());
    lastAllocated = -1;
    long submitted = System.nanoTime();
    // set before the hand-over: short work may be done before this thread looks again
    job.callerSpinning = CALLER_SPIN_NANOS > 0 && submitted - parkAtOnceUntil >= 0;
    worker.submit(job);
    Thread ruleThread = worker.thread;
    if (job.callerSpinning) {
      yieldForResult(job, Math.min(deadlineNanos - submitted, CALLER_SPIN_NANOS));
    }
    int waited = await(job, deadlineNanos, limit, ruleThread);
    job.collected = job.done;
    long over = waited == OVER_ALLOCATION ? allocatedSoFar(job, ruleThread) : -1;
    if (waited == INTERRUPTED || !job.done) {
      stop.run();
      if (waited == INTERRUPTED) {
        Thread.currentThread().interrupt();
        abandon();
        throw new Overrun(true, over);
      }
      // Work stopped for allocating too much is not stuck: it may finish what it does within the
      // time it has left. Work past its deadline gets the grace.
      long grace = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(GRACE_MILLIS);
      long backBy = waited == OVER_ALLOCATION ? Math.max(deadlineNanos, grace) : grace;
      boolean back = await(job, backBy, 0, ruleThread) != INTERRUPTED;
      if (!back) {
        Thread.currentThread().interrupt();
      }
      if (!job.done) {
        abandon();
        throw new Overrun(true, over);
      }
      lastAllocated = job.allocated;
      throw new Overrun(false, over); // it came back (with whatever the stop made it throw)
    }
    lastAllocated = job.allocated;
    if (limit > 0 && job.allocated > limit) {
      throw new Overrun(false, job.allocated);
    }
    return (T) outcome(job.result, job.error);
  }

  /** The work's result, or what it threw rethrown. */
  static Object outcome(Object result, Throwable c) {
    if (c == null) {
      return result;
    }
    if (c instanceof RuntimeException r) {
      throw r;
    }
    if (c instanceof Error err) {
      throw err;
    }
    throw new IllegalStateException(c);
  }

  /**
   * Waits up to {@code nanos} for the job to be done, yielding the processor (a rule thread woken
   * on this one runs at once); stops early, and parks at once for a while from now on, when a yield
   * gave the processor to another thread and the job is still not done.
   */
  private void yieldForResult(Job job, long nanos) {
    long until = System.nanoTime() + nanos;
    while (!job.done) {
      long before = System.nanoTime();
      if (before - until >= 0) {
        job.callerSpinning = false; // before parking: the rule thread then does not wait for it
        return;
      }
      Thread.yield();
      long after = System.nanoTime();
      if (after - before > LOST_NANOS && !job.done) {
        job.callerSpinning = false;
        parkAtOnceUntil = after + backoff;
        backoff = Math.min(2 * backoff, BACKOFF_MAX_NANOS);
        return;
      }
    }
    job.collected = true; // still yielding: the rule thread sees it collect at once
    backoff = Math.max(BACKOFF_MIN_NANOS, backoff / 2);
  }

  /** Bytes the last piece of work allocated on the rule thread; -1 when unknown. */
  long lastAllocated() {
    return lastAllocated;
  }

  void lastAllocated(long bytes) {
    lastAllocated = bytes;
  }

  private static long allocatedSoFar(Job job, Thread ruleThread) {
    long start = job.allocatedAtStart;
    long now = allocatedBy(ruleThread);
    return start < 0 || now < 0 ? -1 : now - start;
  }

  private static final int FINISHED = 0;
  private static final int INTERRUPTED = 1;
  static final int OVER_ALLOCATION = 2;

  /** Why the watchdog stopped inline work: its deadline passed. */
  static final int PAST_DEADLINE = 3;

  /**
   * Waits until the job is done, the deadline passes or (with a {@code limit}) the rule thread
   * allocated more than it may, parked (any yielding is done before, see {@link #yieldForResult}).
   * Returns {@link #INTERRUPTED} when this thread was interrupted, {@link #OVER_ALLOCATION} when
   * the job allocated too much, else {@link #FINISHED} (done or past the deadline).
   */
  private static int await(Job job, long deadlineNanos, long limit, Thread ruleThread) {
    while (!job.done) {
      long now = System.nanoTime();
      if (now >= deadlineNanos) {
        return FINISHED;
      }
      long wait = deadlineNanos - now;
      LockSupport.parkNanos(job, limit > 0 ? Math.min(wait, ALLOCATION_POLL_NANOS) : wait);
      if (limit > 0 && !job.done && allocatedSoFar(job, ruleThread) > limit) {
        return OVER_ALLOCATION;
      }
      if (Thread.interrupted()) {
        return INTERRUPTED;
      }
    }
    return FINISHED;
  }

  private void abandon() {
    Worker w = worker;
    worker = null;
    if (w != null) {
      w.stopped = true; // should it ever come back, it runs nothing more
    }
    abandonInline(w == null ? null : w.thread);
  }

  /**
   * Counts {@code t} (a rule thread, or a sync thread the watchdog gave up on) as abandoned, and
   * lowers it; code that ignores interrupts keeps running.
   */
  void abandonInline(Thread t) {
    int n = abandoned.incrementAndGet();
    LOG.warn(
        "rule thread {} did not stop; it is abandoned and keeps running until evictd restarts ({} abandoned)",
        t == null ? "?" : t.getName(),
        n);
    if (t != null) {
      abandonedThreads.add(t);
      t.setPriority(Thread.MIN_PRIORITY);
      t.interrupt();
    }
  }

  /** How many rule threads were abandoned because they did not stop. */
  int abandoned() {
    return abandoned.get();
  }

  /**
   * How many abandoned rule threads are still running (thread-safe, never blocks); those that ended
   * are forgotten.
   */
  int aliveAbandoned() {
    abandonedThreads.removeIf(t -> !t.isAlive());
    return abandonedThreads.size();
  }

  @Override
  public void close() {
    Worker w = worker;
    worker = null;
    if (w != null) {
      w.stopped = true;
      LockSupport.unpark(w.thread);
    }
  }
}
