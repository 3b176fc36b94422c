package dev.evictd.engine;

import java.util.function.Supplier;

/**
 * A reentrant lock like a {@code synchronized} block, except that the {@link Watchdog} can take it
 * from a {@link SyncThread} it abandons: the agent's sync thread runs rule work inline while it
 * holds the planner's and the sync loop's locks, and the thread that takes over its loop needs
 * them. An abandoned thread that comes back no longer owns the lock, so its unlock does nothing.
 */
public final class SyncLock {
  private Thread owner;
  private int holds;

  /** Runs {@code work} holding the lock. */
  public <T> T call(Supplier<T> work) {
    lock();
    try {
      return work.get();
    } finally {
      unlock();
    }
  }

  /** Runs {@code work} holding the lock. */
  public void run(Runnable work) {
    lock();
    try {
      work.run();
    } finally {
      unlock();
    }
  }

  private void lock() {
    Thread me = Thread.currentThread();
    synchronized (this) {
      if (owner != me) {
        boolean interrupted = false;
        while (owner != null) {
          try {
            wait();
          } catch (InterruptedException e) {
            interrupted = true; // like a monitor: waiting for the lock is not interruptible
          }
        }
        owner = me;
        if (interrupted) {
          me.interrupt();
        }
      }
      holds++;
    }
    SyncThread st = SyncThread.current();
    if (st != null) {
      st.holds(this);
    }
  }

  private synchronized void unlock() {
    if (owner != Thread.currentThread()) {
      return; // taken from this thread when it was abandoned
    }
    if (--holds == 0) {
      owner = null;
      notifyAll();
    }
  }

  /** Takes the lock from {@code t} (abandoned, possibly still running) if it holds it. */
  synchronized void takeFrom(Thread t) {
    if (owner == t) {
      owner = null;
      holds = 0;
      notifyAll();
    }
  }
}
