package dev.evictd.agent;

import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What abandoned rule threads mean for health, asked by {@code /readyz} and {@code /healthz}: not
 * ready while any is still running (it holds a CPU and its rule set is suspect), and unhealthy once
 * {@code bound} are — the planner then refuses to sync, so only a restart (which does not load the
 * rule set that caused them again) brings eviction back. Never blocks: the counts are read without
 * the planner's lock.
 */
public final class RuleThreadHealth {
  private static final Logger LOG = LoggerFactory.getLogger(RuleThreadHealth.class);

  private final IntSupplier alive;
  private final int bound;
  private volatile int lastSeen;

  /**
   * @param alive how many abandoned rule threads are running now
   * @param bound from how many {@code /healthz} fails
   */
  public RuleThreadHealth(IntSupplier alive, int bound) {
    this.alive = alive;
    this.bound = bound;
  }

  /** Abandoned rule threads still running. */
  public int alive() {
    int n = alive.getAsInt();
    if (n != lastSeen) {
      lastSeen = n;
      if (n >= bound) {
        LOG.error(
            "{} abandoned rule threads are running (bound {}): /healthz fails so that evictd is"
                + " restarted",
            n,
            bound);
      } else if (n > 0) {
        LOG.warn("{} abandoned rule threads are running: /readyz says not ready", n);
      } else {
        LOG.info("no abandoned rule thread is running any more");
      }
    }
    return n;
  }

  /** Whether no abandoned rule thread is running. */
  public boolean ready() {
    return alive() == 0;
  }

  /** Whether fewer than the bound are running. */
  public boolean healthy() {
    return alive() < bound;
  }

  /** A line for the endpoints' bodies when threads are running, else empty. */
  public String describe() {
    int n = alive();
    return n == 0 ? "" : n + " abandoned rule threads running (healthz fails at " + bound + ")\n";
  }
}
