package dev.evictd.linux;

import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shared wait of the kernel event sources: one daemon thread in {@code poll(2)} on one watched
 * descriptor (a memcg threshold's eventfd, a PSI trigger's pressure file) and on a wake-up eventfd,
 * calling a handler on that thread when the descriptor is ready.
 *
 * <p>The loop owns the descriptors it is given: {@link #watch} hands the new one to the thread,
 * which closes the one it replaces itself, so no descriptor is ever closed while polled (a closed
 * and reused number would be polled for someone else). The wake-up eventfd makes a new descriptor
 * and {@link #close()} take effect at once; the poll's time-out is only a safety net. A handler or
 * poll failure stops the loop, closes its descriptors and is reported once to the {@link Stopped}
 * callback (never on {@link #close()}).
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
  private final Object lock = new Object();
  private int wakeFd = -1;
  private Watch pending;
  private Thread thread;
  private volatile boolean closed;

  /** A loop whose thread (started by the first {@link #watch}) is called {@code threadName}. */
  PollLoop(String threadName, Stopped stopped) {
    this.threadName = threadName;
    this.stopped = stopped;
  }

  /**
   * Watches {@code fd} for {@code events} from now on, in place of the descriptor watched before
   * (which the loop closes); the loop owns {@code fd} and closes it when replaced or stopped.
   * Starts the thread on first use. Returns false (closing {@code fd}) when the loop is closed.
   *
   * @throws IOException when the wake-up eventfd cannot be made ({@code fd} is closed then too)
   */
  boolean watch(int fd, short events, Ready ready) throws IOException {
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
      if (thread == null) {
        thread = new Thread(this::run, threadName);
        thread.setDaemon(true);
        thread.start();
      } else {
        wake();
      }
      return true;
    }
  }

  /** Whether {@link #close()} was called. */
  boolean closed() {
    return closed;
  }

  private void wake() {
    try {
      Native.signalEventfd(wakeFd, 1);
    } catch (IOException e) {
      LOG.debug("cannot wake {}: {}", threadName, e.getMessage());
    }
  }

  private void run() {
    Watch current = null;
    int[] fds = new int[2];
    short[] events = {Native.POLLIN, 0};
    short[] revents = new short[2];
    try {
      while (!closed) {
        synchronized (lock) {
          if (pending != null) {
            if (current != null) {
              Native.close(current.fd());
            }
            current = pending;
            pending = null;
          }
          fds[0] = wakeFd;
        }
        fds[1] = current == null ? -1 : current.fd();
        events[1] = current == null ? 0 : current.events();
        int n = Native.poll(fds, events, revents, POLL_MILLIS);
        if (n <= 0 || closed) {
          continue;
        }
        if ((revents[0] & Native.POLLIN) != 0) {
          Native.readEventfd(fds[0]);
        }
        if (current != null && revents[1] != 0) {
          if ((revents[1] & Native.POLLNVAL) != 0) {
            throw new IOException("descriptor " + fds[1] + " is no longer open");
          }
          current.ready().ready(revents[1]);
        }
      }
    } catch (IOException | RuntimeException e) {
      if (!closed) {
        stopped.stopped(e.getMessage() == null ? e.toString() : e.getMessage());
      }
    } finally {
      synchronized (lock) {
        if (current != null) {
          Native.close(current.fd());
        }
        if (pending != null) {
          Native.close(pending.fd());
          pending = null;
        }
        Native.close(wakeFd);
        wakeFd = -1;
        // a later watch() finds the loop stopped for good
        closed = true;
      }
    }
  }

  /**
   * Stops the thread and closes every descriptor; returns within about a second (at once when
   * called on the loop's own thread, which then stops after the handler returns). Idempotent.
   */
  @Override
  public void close() {
    Thread t;
    synchronized (lock) {
      if (closed && thread == null) {
        return;
      }
      boolean wasClosed = closed;
      closed = true;
      t = thread;
      if (t == null) {
        if (!wasClosed) {
          if (pending != null) {
            Native.close(pending.fd());
            pending = null;
          }
          Native.close(wakeFd);
          wakeFd = -1;
        }
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
