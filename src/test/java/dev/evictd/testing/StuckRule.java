package dev.evictd.testing;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A rule condition that is stuck (ignoring interrupts, as code in a runaway rule does) until the
 * test releases it, so that tests of abandoned rule threads control exactly how long those threads
 * live and leave none behind. Called from {@code src/test/resources/rulesets/held} (compiled with
 * the lint off: rules may not call test code).
 */
public final class StuckRule {
  private static volatile boolean holding;
  private static final AtomicInteger INSIDE = new AtomicInteger();
  private static volatile boolean once;
  private static volatile Thread heldBy;
  private static final java.util.concurrent.atomic.AtomicBoolean TAKEN =
      new java.util.concurrent.atomic.AtomicBoolean();

  private StuckRule() {}

  /** From now on, every call of {@link #held} blocks until {@link #release}. */
  public static void hold() {
    once = false;
    holding = true;
  }

  /** From now on, the next call of {@link #held} (one only) blocks until {@link #release}. */
  public static void holdOnce() {
    TAKEN.set(false);
    once = true;
    holding = true;
  }

  /** Lets every blocked call return. */
  public static void release() {
    holding = false;
    once = false;
  }

  /** The thread of the last call that blocked, or null. */
  public static Thread heldBy() {
    return heldBy;
  }

  /** How many calls are blocked now. */
  public static int inside() {
    return INSIDE.get();
  }

  /** Blocks while held, then returns true; an interrupt does not end the wait. */
  public static boolean held(String any) {
    if (once && !TAKEN.compareAndSet(false, true)) {
      return true; // held once, and an earlier call was it
    }
    if (holding) {
      heldBy = Thread.currentThread();
    }
    INSIDE.incrementAndGet();
    try {
      while (holding) {
        LockSupport.parkNanos(1_000_000);
      }
    } finally {
      INSIDE.decrementAndGet();
    }
    return true;
  }
}
