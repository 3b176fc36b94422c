package dev.evictd.engine;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
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

  private ExecutorService executor;
  private Thread thread;
  private int abandoned;

  /**
   * Runs {@code work} on the rule thread and waits for it until {@code deadlineNanos} ({@link
   * System#nanoTime}). Exceptions thrown by the work are rethrown.
   *
   * @param stop asks the work to stop (called from this thread when the deadline passes)
   * @throws Overrun when the deadline passed
   */
  <T> T run(Callable<T> work, long deadlineNanos, Runnable stop) throws Overrun {
    if (executor == null) {
      executor =
          Executors.newSingleThreadExecutor(
              r -> {
                Thread t = new Thread(r, "evictd-rules-" + THREADS.incrementAndGet());
                t.setDaemon(true);
                thread = t;
                return t;
              });
    }
    Future<T> f = executor.submit(work);
    try {
      return f.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      stop.run();
      try {
        f.get(GRACE_MILLIS, TimeUnit.MILLISECONDS);
      } catch (TimeoutException stuck) {
        abandon();
        throw new Overrun(true);
      } catch (ExecutionException | InterruptedException | RuntimeException ignored) {
        // it came back (with whatever the stop made it throw)
      }
      throw new Overrun(false);
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof RuntimeException r) {
        throw r;
      }
      if (c instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(c);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stop.run();
      abandon();
      throw new Overrun(true);
    }
  }

  private void abandon() {
    abandoned++;
    Thread t = thread;
    LOG.warn(
        "rule thread {} did not stop; it is abandoned and keeps running until evictd restarts ({} abandoned)",
        t == null ? "?" : t.getName(),
        abandoned);
    if (t != null) {
      t.setPriority(Thread.MIN_PRIORITY);
    }
    executor.shutdownNow(); // interrupts it; code that ignores interrupts keeps running
    executor = null;
    thread = null;
  }

  /** How many rule threads were abandoned because they did not stop. */
  int abandoned() {
    return abandoned;
  }

  @Override
  public void close() {
    if (executor != null) {
      executor.shutdown();
      executor = null;
    }
  }
}
