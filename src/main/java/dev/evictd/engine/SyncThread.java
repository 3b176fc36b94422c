package dev.evictd.engine;

import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A disposable thread that runs the agent's sync loop and the planner's rule work inline, with no
 * hand-over to a rule thread (on a 2-core machine every hand-over cost tens of microseconds, more
 * than a steady sync's rules). A {@link Watchdog} enforces the time and allocation budgets of the
 * work it runs: past the deadline it halts the rules, and if they are not back within the grace it
 * abandons this thread, takes the {@link SyncLock}s it holds, and starts a new thread on the same
 * loop. Should the abandoned thread ever come back, it throws {@link Abandoned} at once and ends:
 * it acts on no plan and touches no session.
 */
public final class SyncThread {
  private static final ThreadLocal<SyncThread> CURRENT = new ThreadLocal<>();

  /**
   * Thrown on a sync thread that comes back after the watchdog abandoned it; an error, so that the
   * loop's handlers of failed syncs let it pass and the thread ends without doing anything more.
   */
  public static final class Abandoned extends Error {
    Abandoned() {
      super("sync thread abandoned by the watchdog", null, false, false);
    }
  }

  /** Rule work running inline, as the watchdog sees it. */
  static final class Job {
    static final int RUNNING = 0;
    static final int STOPPING = 1;
    static final int DONE = 2;
    static final int ABANDONED = 3;

    final RuleRunner runner;
    final long deadline;
    final long limit;
    final long allocatedAtStart;
    final Runnable stop;
    final Consumer<RuleRunner.Overrun> onAbandoned;
    final AtomicInteger state = new AtomicInteger(RUNNING);

    /** Why the watchdog stopped the work: 0 not stopped, else one of RuleRunner's reasons. */
    volatile int stopped;

    /** Bytes allocated when the watchdog stopped the work for allocating too much, else -1. */
    volatile long overAllocated = -1;

    /** Until when the watchdog waits for stopped work before it abandons the thread. */
    long backBy;

    Job(
        RuleRunner runner,
        long deadline,
        long limit,
        long allocatedAtStart,
        Runnable stop,
        Consumer<RuleRunner.Overrun> onAbandoned) {
      this.runner = runner;
      this.deadline = deadline;
      this.limit = limit;
      this.allocatedAtStart = allocatedAtStart;
      this.stop = stop;
      this.onAbandoned = onAbandoned;
    }

    /**
     * Called by the sync thread when the work is back: true when it may go on, false when the
     * watchdog abandoned it first (exactly one of the two wins).
     */
    boolean finish() {
      while (true) {
        if (state.compareAndSet(RUNNING, DONE)) {
          return true;
        }
        if (state.get() == ABANDONED) {
          return false;
        }
        Thread.onSpinWait(); // STOPPING: the watchdog is calling the stop hook, briefly
      }
    }
  }

  /** A sync loop carried on by one sync thread at a time. */
  public static final class Loop {
    private final String name;
    private final Runnable body;
    private final Watchdog watchdog;
    private final AtomicInteger threads = new AtomicInteger();
    private volatile Thread current;

    private Loop(String name, Runnable body, Watchdog watchdog) {
      this.name = name;
      this.body = body;
      this.watchdog = watchdog;
    }

    private void next() {
      SyncThread st = new SyncThread(watchdog, this);
      Thread t = new Thread(st::run, name + "-" + threads.incrementAndGet());
      t.setDaemon(true); // an abandoned one may never end; it must not keep the JVM up
      st.thread = t;
      current = t;
      t.start();
    }

    /** The thread running the loop now. */
    public Thread current() {
      return current;
    }

    /** How many threads took over the loop from an abandoned one. */
    public int replacements() {
      return threads.get() - 1;
    }
  }

  private final Watchdog watchdog;
  private final Loop loop;
  private final List<SyncLock> locks = new CopyOnWriteArrayList<>();
  private Thread thread;

  /** The rule work running now (read by the watchdog), or null. */
  volatile Job job;

  /** Set when the watchdog abandoned this thread. */
  volatile boolean abandoned;

  private SyncThread(Watchdog watchdog, Loop loop) {
    this.watchdog = watchdog;
    this.loop = loop;
  }

  /**
   * Starts {@code body} on a sync thread named after {@code name}; each time the watchdog abandons
   * the thread running it, {@code body} runs again from its start on a new one.
   */
  public static Loop startLoop(String name, Runnable body) {
    return startLoop(name, body, Watchdog.shared());
  }

  static Loop startLoop(String name, Runnable body, Watchdog watchdog) {
    Loop l = new Loop(name, body, watchdog);
    l.next();
    return l;
  }

  /**
   * Makes the calling thread a sync thread (with no loop to carry on when abandoned): its planner
   * syncs run their rules inline from now on, as the agent's do. For benchmarks and tests.
   */
  public static void adoptCurrentThread() {
    if (CURRENT.get() == null) {
      SyncThread st = new SyncThread(Watchdog.shared(), null);
      st.thread = Thread.currentThread();
      CURRENT.set(st);
      st.watchdog.watch(st);
    }
  }

  /** The calling thread's sync thread, or null when it is not one. */
  static SyncThread current() {
    return CURRENT.get();
  }

  /** Whether the calling thread is a sync thread the watchdog abandoned. */
  static boolean abandonedHere() {
    SyncThread st = CURRENT.get();
    return st != null && st.abandoned;
  }

  Thread thread() {
    return thread;
  }

  Watchdog watchdog() {
    return watchdog;
  }

  /** Notes a lock this thread took, for the watchdog to take back should it abandon the thread. */
  void holds(SyncLock lock) {
    if (!locks.contains(lock)) {
      locks.add(lock);
    }
  }

  /**
   * Called by the watchdog once it has abandoned this thread: takes its locks and lets a new thread
   * carry on its loop.
   */
  void abandoned() {
    abandoned = true;
    watchdog.unwatch(this);
    for (SyncLock l : locks) {
      l.takeFrom(thread);
    }
    if (loop != null) {
      loop.next();
    }
  }

  /**
   * Runs rule work inline: publishes it for the watchdog (no wake-up), runs it, then wins or loses
   * the race with an abandonment; the end-of-job allocation check is as on a rule thread.
   */
  @SuppressWarnings("unchecked")
  <T> T run(
      RuleRunner runner,
      Callable<T> work,
      long deadlineNanos,
      long limit,
      Runnable stop,
      Consumer<RuleRunner.Overrun> onAbandoned)
      throws RuleRunner.Overrun {
    if (abandoned) {
      throw new Abandoned();
    }
    long start = RuleRunner.allocatedHere();
    Job j = new Job(runner, deadlineNanos, limit, start, stop, onAbandoned);
    runner.lastAllocated(-1);
    job = j;
    Object result = null;
    Throwable error = null;
    try {
      result = work.call();
    } catch (Throwable t) {
      error = t; // OutOfMemoryError and StackOverflowError included, as on a rule thread
    }
    job = null;
    if (!j.finish()) {
      abandoned = true;
      throw new Abandoned(); // the watchdog gave up on this thread: act on nothing
    }
    long allocated = start < 0 ? -1 : RuleRunner.allocatedHere() - start;
    runner.lastAllocated(allocated);
    if (j.stopped != 0) {
      // back after the watchdog stopped it (with whatever the stop made it throw)
      throw new RuleRunner.Overrun(
          false, j.stopped == RuleRunner.OVER_ALLOCATION ? j.overAllocated : -1);
    }
    if (limit > 0 && allocated > limit) {
      throw new RuleRunner.Overrun(false, allocated);
    }
    return (T) RuleRunner.outcome(result, error);
  }

  private void run() {
    CURRENT.set(this);
    watchdog.watch(this);
    try {
      loop.body.run();
    } catch (Abandoned a) {
      // came back after the watchdog gave up on it: a new thread carries on, this one ends
    } finally {
      watchdog.unwatch(this);
    }
  }
}
