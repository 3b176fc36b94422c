package dev.evictd.engine;

import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a planner's rule work on a dedicated thread, so that rules stuck in a loop cannot keep the
 * caller past its time budget. Java cannot stop a thread safely: when the work overruns, the runner
 * asks it to stop (the planner halts the session, which ends a loop of firings), and if it does not
 * come back within a short grace it is abandoned — the runner carries on with a new thread, and the
 * caller must never again touch what the old one uses. An abandoned thread keeps its CPU until the
 * process exits; {@link #abandoned()} counts them.
 */
final class RuleRunner implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RuleRunner.class);
  private static final AtomicInteger THREADS = new AtomicInteger();

  /** How long work that overran gets to come back after it was asked to stop. */
  static final long GRACE_MILLIS = 200;

  /** Rule work that did not finish within its deadline. */
  static final class Overrun extends Exception {
    private final boolean stuck;

    Overrun(boolean stuck) {
      super(null, null, false, false);
      this.stuck = stuck;
    }

    /**
     * Whether the work is still running on an abandoned thread (it did not come back when asked to
     * stop).
     */
    boolean stuck() {
      return stuck;
    }
  }

  /**
   * How long each side spins before it parks: the caller waiting for a short piece of rule work,
   * the rule thread waiting for the next piece of the same sync. Waking a parked thread costs tens
   * of microseconds on a virtual machine, more than a quiet sync's rule work; a sync hands work
   * over several times. Only with more than one processor, where spinning does not take the CPU
   * from the thread it waits for.
   */
  static final long SPIN_NANOS = Runtime.getRuntime().availableProcessors() > 1 ? 50_000 : 0;

  /** One piece of work handed to the rule thread, and its outcome. */
  private static final class Job {
    final Callable<?> work;
    final Thread caller;
    Object result;
    Throwable error;
    volatile boolean done;

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

    @Override
    public void run() {
      long spinUntil = 0;
      while (!stopped) {
        Job j = slot.getAndSet(null);
        if (j == null) {
          if (System.nanoTime() < spinUntil) {
            Thread.onSpinWait();
          } else {
            LockSupport.park(this);
            Thread.interrupted(); // an interrupt is only a wake-up here; the stopped flag decides
          }
          continue;
        }
        try {
          j.result = j.work.call();
        } catch (Throwable t) {
          j.error = t;
        }
        j.done = true;
        LockSupport.unpark(j.caller);
        spinUntil = System.nanoTime() + SPIN_NANOS;
      }
    }
  }

  private Worker worker;
  private int abandoned;

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
  @SuppressWarnings("unchecked")
  <T> T run(Callable<T> work, long deadlineNanos, Runnable stop) throws Overrun {
    if (worker == null) {
      worker = new Worker();
    }
    Job job = new Job(work, Thread.currentThread());
    worker.submit(job);
    boolean interrupted = !await(job, deadlineNanos);
    if (interrupted || !job.done) {
      stop.run();
      if (interrupted) {
        Thread.currentThread().interrupt();
        abandon();
        throw new Overrun(true);
      }
      boolean back = await(job, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(GRACE_MILLIS));
      if (!back) {
        Thread.currentThread().interrupt();
      }
      if (!job.done) {
        abandon();
        throw new Overrun(true);
      }
      throw new Overrun(false); // it came back (with whatever the stop made it throw)
    }
    Throwable c = job.error;
    if (c == null) {
      return (T) job.result;
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
   * Waits until the job is done or the deadline passes: spins briefly, then parks. Returns false
   * when this thread was interrupted.
   */
  private static boolean await(Job job, long deadlineNanos) {
    long spinUntil = System.nanoTime() + SPIN_NANOS;
    while (!job.done) {
      long now = System.nanoTime();
      if (now >= deadlineNanos) {
        return true;
      }
      if (now < spinUntil) {
        Thread.onSpinWait();
      } else {
        LockSupport.parkNanos(job, deadlineNanos - now);
      }
      if (Thread.interrupted()) {
        return false;
      }
    }
    return true;
  }

  private void abandon() {
    abandoned++;
    Worker w = worker;
    worker = null;
    LOG.warn(
        "rule thread {} did not stop; it is abandoned and keeps running until evictd restarts ({} abandoned)",
        w == null ? "?" : w.thread.getName(),
        abandoned);
    if (w != null) {
      abandonedThreads.add(w.thread);
      w.stopped = true; // should it ever come back, it runs nothing more
      w.thread.setPriority(Thread.MIN_PRIORITY);
      w.thread.interrupt(); // code that ignores interrupts keeps running
    }
  }

  /** How many rule threads were abandoned because they did not stop. */
  int abandoned() {
    return abandoned;
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
