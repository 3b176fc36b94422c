package dev.evictd.engine;

import dev.evictd.api.ReclaimAction;
import dev.evictd.stats.Summary;

/**
 * What a sync needs from the outside world while it runs: node-level reclaim and the statistics
 * after it.
 */
public interface PlannerHooks {
  /** Runs a node-level reclaim action; returns false when it failed. */
  boolean reclaim(ReclaimAction action);

  /** Reads the statistics after node-level reclaim ran; null when they cannot be read. */
  Summary summaryAfterReclaim();

  /**
   * Hooks for a sync that must not run node-level reclaim: reclaim frees nothing and statistics
   * stay as given.
   */
  static PlannerHooks noReclaim(Summary summary) {
    return recordOnly(summary);
  }

  /** Hooks that only record reclaim (it "succeeds") and then observe {@code after}. */
  static PlannerHooks recordOnly(Summary after) {
    return new PlannerHooks() {
      @Override
      public boolean reclaim(ReclaimAction action) {
        return true;
      }

      @Override
      public Summary summaryAfterReclaim() {
        return after;
      }
    };
  }
}
