package dev.evictd.linux;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shared wait of the kernel event sources: one daemon thread in {@code poll(2)} on one watched
 * descriptor (a memcg threshold's eventfd, a PSI trigger's pressure file) and on a wake-up eventfd,
 * calling a handler on that thread when the descriptor is ready. Or, made with an {@link
 * EventPoll}, no thread of its own: the thread that calls {@link EventPoll#await} (the agent's sync
 * loop) polls its two descriptors with those of the other loops and calls the handler, so that the
 * kernel's wake-up reaches the thread that acts on it with no hand-over between threads.
 *
 * <p>The loop owns the descriptors it is given: {@link #watch} hands the new one to the polling
 * thread, which closes the one it replaces itself, so no descriptor is ever closed while polled (a
 * closed and reused number would be polled for someone else). The wake-up eventfd makes a new
 * descriptor and {@link #close()} take effect at once; the poll's time-out is only a safety net. A
 * handler or poll failure stops the loop, closes its descriptors and is reported once to the {@link
 * Stopped} callback (never on {@link #close()}).
 */
final class PollLoop implements AutoCloseable {
  /** The longest a poll waits before looking at its state again. */
  static final int POLL_MILLIS = 250;

  private static final Logger LOG = LoggerFactory.getLogger(PollLoop.class);

  /** Called on the loop's thread when the watched descriptor is ready. */
  @FunctionalInterface
  interface Ready {
    /**
     * The descriptor reported {@code revents}; throwing stops the loop (reported to {@link
     * Stopped}).
     */
    void ready(short revents) throws IOException;
  }

  /** Told once why the loop stopped on its own. */
  @FunctionalInterface
  interface Stopped {
    /** The loop stopped: {@code reason} names what failed. */
    void stopped(String reason);
  }

  private record Watch(int fd, short events, Ready ready) {}

  private final String threadName;
  private final Stopped stopped;
  private final EventPoll driver;
  private final Object lock = new Object();
  private int wakeFd = -1;
  private Watch pending;

  /** The descriptor polled now: only the polling thread touches it. */
  private Watch current;

  private Thread thread;
  private volatile boolean closed;

  /**
   * Whether the polling thread uses this loop's descriptors now (from {@link #prepare} to the end
   * of {@link #handle}): a close from another thread then leaves them to it.
   */
  private boolean polling;

  /** Driven: whether the driver knows of this loop. */
  private boolean joined;

  /** Whether every descriptor was closed (the loop is done). */
  private boolean released;

  /** A loop whose thread (started by the first {@link #watch}) is called {@code threadName}. */
  PollLoop(String threadName, Stopped stopped) {
    this(threadName, stopped, null);
  }

  /**
   * A loop polled by the thread that awaits {@code driver} (no thread of its own), or, when {@code
   * driver} is null, by a thread of its own called {@code threadName}.
   */
  PollLoop(String threadName, Stopped stopped, EventPoll driver) {
    this.threadName = threadName;
    this.stopped = stopped;
    this.driver = driver;
  }

  /**
   * Watches {@code fd} for {@code events} from now on, in place of the descriptor watched before
   * (which the loop closes); the loop owns {@code fd} and closes it when replaced or stopped.
   * Starts the thread (or joins the driver) on first use. Returns false (closing {@code fd}) when
   * the loop is closed.
   *
   * @throws IOException when the wake-up eventfd cannot be made ({@code fd} is closed then too)
   */
  boolean watch(int fd, short events, Ready ready) throws IOException {
    boolean join = false;
    synchronized (lock) {
      if (closed) {
        Native.close(fd);
        return false;
      }
      if (wakeFd < 0) {
        try {
          wakeFd = Native.eventfd();
        } catch (IOException e) {
          Native.close(fd);
          throw e;
        }
      }
      if (pending != null) {
        // never polled: nobody else holds it
        Native.close(pending.fd());
      }
      pending = new Watch(fd, events, ready);
      if (thread == null && driver == null) {
        thread = new Thread(this::run, threadName);
        thread.setDaemon(true);
        thread.start();
      } else if (driver != null && !joined) {
        joined = true;
        join = true; // the first watch: the driver learns of this loop
      } else {
        wake();
      }
    }
    if (join) {
      driver.add(this); // wakes the driver's thread: it polls the new descriptor from now on
    }
    return true;
  }

  /** Whether {@link #close()} was called. */
  boolean closed() {
    return closed;
  }

  /** The name of this loop's thread, or of what it watches when driven. */
  String name() {
    return threadName;
  }

  private void wake() {
    try {
      Native.signalEventfd(wakeFd, 1);
    } catch (IOException e) {
      LOG.debug("cannot wake {}: {}", threadName, e.getMessage());
    }
  }

  /**
   * On the polling thread, before {@code poll(2)}: takes a new watch (closing the one it replaces)
   * and fills slots {@code at} (the wake-up eventfd) and {@code at + 1} (the watched descriptor, -1
   * when none) of the poll's arrays. False when the loop is closed (its descriptors are released).
   */
  boolean prepare(int[] fds, short[] events, int at) {
    synchronized (lock) {
      if (closed) {
        release();
        return false;
      }
      if (pending != null) {
        if (current != null) {
          Native.close(current.fd());
        }
        current = pending;
        pending = null;
      }
      fds[at] = wakeFd;
      events[at] = Native.POLLIN;
      fds[at + 1] = current == null ? -1 : current.fd();
      events[at + 1] = current == null ? 0 : current.events();
      polling = true;
      return true;
    }
  }

  /**
   * On the polling thread, right after {@code poll(2)}: false when the loop was closed meanwhile
   * (its descriptors are released now); else {@link #handle} comes next.
   */
  boolean polled() {
    synchronized (lock) {
      if (closed) {
        release();
        return false;
      }
      return true;
    }
  }

  /**
   * On the polling thread, after {@link #polled}: reads the wake-up eventfd and calls the handler
   * when the watched descriptor reported events; then the descriptors are no longer in use. False
   * when the loop stopped (a failure, reported to {@link Stopped}, or a close meanwhile: its
   * descriptors released).
   */
  boolean handle(short[] revents, int at) {
    try {
      if ((revents[at] & Native.POLLIN) != 0) {
        Native.readEventfd(wakeFd);
      }
      Watch w = current;
      if (w != null && revents[at + 1] != 0) {
        if ((revents[at + 1] & Native.POLLNVAL) != 0) {
          throw new IOException("descriptor " + w.fd() + " is no longer open");
        }
        w.ready().ready(revents[at + 1]);
      }
    } catch (IOException | RuntimeException e) {
      fail(e.getMessage() == null ? e.toString() : e.getMessage());
      return false;
    }
    synchronized (lock) {
      polling = false;
      if (closed) {
        release();
        return false;
      }
      return true;
    }
  }

  /**
   * Stops the loop for {@code reason} (its poll failed, or its driver's), releasing its
   * descriptors; reported to {@link Stopped} unless it was closed. On the polling thread.
   */
  void fail(String reason) {
    boolean wasClosed;
    synchronized (lock) {
      wasClosed = closed;
      release();
    }
    if (!wasClosed) {
      stopped.stopped(reason);
    }
  }

  /** Closes every descriptor; the loop is closed for good. Under the lock. */
  private void release() {
    if (!released) {
      if (current != null) {
        Native.close(current.fd());
        current = null;
      }
      if (pending != null) {
        Native.close(pending.fd());
        pending = null;
      }
      Native.close(wakeFd);
      wakeFd = -1;
      released = true;
      polling = false;
      lock.notifyAll();
    }
    // a later watch() finds the loop stopped for good
    closed = true;
  }

  private void run() {
    int[] fds = new int[2];
    short[] events = new short[2];
    short[] revents = new short[2];
    try {
      while (prepare(fds, events, 0)) {
        int n = Native.poll(fds, events, revents, POLL_MILLIS);
        if (!polled()) {
          return;
        }
        if (n <= 0) {
          revents[0] = 0;
          revents[1] = 0;
        }
        if (!handle(revents, 0)) {
          return;
        }
      }
    } catch (IOException | RuntimeException e) {
      fail(e.getMessage() == null ? e.toString() : e.getMessage());
    } finally {
      synchronized (lock) {
        release();
      }
    }
  }

  /**
   * Stops the thread and closes every descriptor; returns within about a second (at once when
   * called on the loop's own thread, which then stops after the handler returns). Driven, it closes
   * them at once unless the driver's thread is polling them, which it wakes and waits for (up to a
   * second). Idempotent.
   */
  @Override
  public void close() {
    Thread t;
    synchronized (lock) {
      if (closed && (released || thread == null && driver == null)) {
        closed = true;
        return;
      }
      closed = true;
      if (driver != null) {
        if (!polling) {
          release();
          return;
        }
        if (driver.pollingThread() == Thread.currentThread()) {
          return; // a handler of this driver's: the driver releases them when it is done
        }
        wake();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        long left;
        while (!released && (left = end - System.nanoTime()) > 0) {
          try {
            TimeUnit.NANOSECONDS.timedWait(lock, left);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
        }
        return;
      }
      t = thread;
      if (t == null) {
        release();
        return;
      }
      if (wakeFd >= 0) {
        wake();
      }
    }
    if (t != Thread.currentThread()) {
      try {
        t.join(1000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
