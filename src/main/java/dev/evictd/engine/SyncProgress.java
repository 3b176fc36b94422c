package dev.evictd.engine;

import dev.evictd.api.EvictionPlan;
import dev.evictd.api.ReclaimAction;
import dev.evictd.api.ReclaimRequest;
import java.util.ArrayList;
import java.util.List;

/**
 * How far one sync has come: what is left of its budgets, what it is doing, the reclaim asked for
 * and done, its warnings and its plan. Written on the rule thread and read by the planner between
 * steps (each hand-over orders them), or inline on a sync thread.
 */
final class SyncProgress {
  /** Nanoseconds left of the sync's time budget (time outside the rules is not charged). */
  long timeLeftNanos;

  /** Rule firings left in this sync. */
  long firingsLeft;

  /** What the sync is doing, for a failure's message. */
  String doing = "";

  /** Whether the rules have ranked and decided (a sync without reclaim does it in one step). */
  boolean decided;

  /** The plan, once decided. */
  EvictionPlan plan;

  final List<String> warnings = new ArrayList<>();
  final List<ReclaimRequest> requests = new ArrayList<>();
  final List<ReclaimAction> reclaimed = new ArrayList<>();

  SyncProgress(long timeLeftNanos) {
    this.timeLeftNanos = timeLeftNanos;
  }

  /**
   * Runs the node-level reclaim the rules asked for, in their order; returns the statistics after
   * it, or null when there are none (pods are then evicted as if it freed nothing).
   */
  dev.evictd.stats.Summary reclaim(PlannerHooks hooks) {
    requests.sort(java.util.Comparator.comparingInt(ReclaimRequest::position));
    for (ReclaimRequest r : requests) {
      if (!hooks.reclaim(r.action())) {
        warnings.add("node-level reclaim of " + r.action() + " failed");
      }
      reclaimed.add(r.action());
    }
    dev.evictd.stats.Summary after = null;
    try {
      after = hooks.summaryAfterReclaim();
    } catch (RuntimeException e) {
      warnings.add("cannot read statistics after reclaim: " + e.getMessage());
    }
    if (after == null) {
      warnings.add("no statistics after reclaim: pods are evicted as if reclaim freed nothing");
    }
    return after;
  }
}
