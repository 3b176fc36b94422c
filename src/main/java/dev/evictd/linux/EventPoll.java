package dev.evictd.linux;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One {@code poll(2)} over the descriptors of several {@link PollLoop}s made with it (a memcg
 * threshold's eventfd each) and a wake-up eventfd of its own, on the thread that calls {@link
 * #await}: the agent's sync loop waits here for its next trigger, so that a kernel event wakes the
 * thread that runs the sync, which reads the event and syncs at once (no notifier thread to wake
 * first, then the sync thread: two wake-ups of a halted processor and two run-queue waits on a busy
 * one). Other threads' triggers {@link #wake} it. One thread awaits at a time.
 */
public final class EventPoll implements AutoCloseable {
  private final Object lock = new Object();
  private final List<PollLoop> loops = new ArrayList<>();
  private int wakeFd;
  private boolean closed;
  private boolean polling;
  private volatile Thread pollingThread;

  private EventPoll(int wakeFd) {
    this.wakeFd = wakeFd;
  }

  /**
   * A new event poll, or null where there can be none (libc not bound, no eventfd): the kernel
   * event sources then keep a thread each.
   */
  public static EventPoll open() {
    if (!Native.available()) {
      return null;
    }
    try {
      return new EventPoll(Native.eventfd());
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** Polls {@code loop}'s descriptors from the next {@link #await} on. */
  void add(PollLoop loop) {
    synchronized (lock) {
      if (closed) {
        loop.fail("the event poll is closed");
        return;
      }
      loops.add(loop);
    }
    wake();
  }

  /** How many loops are polled. */
  public int loops() {
    synchronized (lock) {
      return loops.size();
    }
  }

  /** The thread in {@link #await} now, or null (health checks and tests). */
  public Thread pollingThread() {
    return pollingThread;
  }

  /** Ends an {@link #await} in progress, or the next one at once. Any thread. */
  public void wake() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      try {
        Native.signalEventfd(wakeFd, 1);
      } catch (IOException e) {
        // the awaiting thread then wakes at its time-out
      }
    }
  }

  /**
   * Waits up to {@code millis} (0: does not wait) for a loop's descriptor or a {@link #wake}, and
   * calls the handlers of the loops whose descriptors are ready, on this thread. A loop that fails
   * or was closed is dropped (and told: its source then reports itself unavailable).
   *
   * @throws IOException when {@code poll(2)} itself failed: every loop is stopped and this poll is
   *     closed (its sources report themselves unavailable; the caller waits another way)
   */
  public void await(long millis) throws IOException {
    List<PollLoop> ls;
    int wake;
    synchronized (lock) {
      if (closed) {
        throw new IOException("the event poll is closed");
      }
      ls = new ArrayList<>(loops);
      wake = wakeFd;
      polling = true;
      pollingThread = Thread.currentThread();
    }
    int[] fds = new int[1 + 2 * ls.size()];
    short[] events = new short[fds.length];
    short[] revents = new short[fds.length];
    boolean[] live = new boolean[ls.size()];
    try {
      fds[0] = wake;
      events[0] = Native.POLLIN;
      for (int i = 0; i < ls.size(); i++) {
        live[i] = ls.get(i).prepare(fds, events, 1 + 2 * i);
        if (!live[i]) {
          fds[1 + 2 * i] = -1; // poll(2) skips negative descriptors
          fds[2 + 2 * i] = -1;
        }
      }
      int timeout = (int) Math.min(Integer.MAX_VALUE, Math.max(0, millis));
      int n;
      try {
        n = Native.poll(fds, events, revents, timeout);
      } catch (IOException | RuntimeException e) {
        String why = "waiting for kernel events failed: " + e.getMessage();
        for (int i = 0; i < ls.size(); i++) {
          if (live[i]) {
            ls.get(i).fail(why);
          }
        }
        closeNow();
        throw e instanceof IOException io ? io : new IOException(why, e);
      }
      if (n <= 0) {
        java.util.Arrays.fill(revents, (short) 0);
      }
      for (int i = 0; i < ls.size(); i++) {
        live[i] = live[i] && ls.get(i).polled();
      }
      if ((revents[0] & Native.POLLIN) != 0) {
        try {
          Native.readEventfd(wake);
        } catch (IOException e) {
          // counted down by nobody else: cannot happen; at worst the next await returns at once
        }
      }
      for (int i = 0; i < ls.size(); i++) {
        live[i] = live[i] && ls.get(i).handle(revents, 1 + 2 * i);
      }
    } finally {
      synchronized (lock) {
        for (int i = 0; i < ls.size(); i++) {
          if (!live[i]) {
            loops.remove(ls.get(i));
          }
        }
        polling = false;
        pollingThread = null;
        if (closed) {
          release();
        }
      }
    }
  }

  private void closeNow() {
    synchronized (lock) {
      closed = true;
    }
  }

  private void release() {
    if (wakeFd >= 0) {
      Native.close(wakeFd);
      wakeFd = -1;
    }
    lock.notifyAll();
  }

  /**
   * Closes the wake-up eventfd (at once, or when the {@link #await} in progress returns, which this
   * wakes and waits for up to a second); the loops' own descriptors are theirs to close.
   * Idempotent.
   */
  @Override
  public void close() {
    synchronized (lock) {
      if (closed && wakeFd < 0) {
        return;
      }
      if (!polling) {
        closed = true;
        release();
        return;
      }
      try {
        Native.signalEventfd(wakeFd, 1);
      } catch (IOException e) {
        // it returns at its time-out
      }
      closed = true;
      if (pollingThread == Thread.currentThread()) {
        return;
      }
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
      long left;
      while (wakeFd >= 0 && (left = end - System.nanoTime()) > 0) {
        try {
          TimeUnit.NANOSECONDS.timedWait(lock, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }
}
