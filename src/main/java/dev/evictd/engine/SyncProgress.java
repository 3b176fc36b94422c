package dev.evictd.engine;

import dev.evictd.api.EvictionPlan;
import dev.evictd.api.ReclaimAction;
import dev.evictd.api.ReclaimRequest;
import java.util.ArrayList;
import java.util.List;

/**
 * How far one sync has come: what is left of its budgets, what it is doing, the reclaim asked for
 * and done, its warnings and its plan. Written on the rule thread and read by the planner between
 * steps (each hand-over orders them).
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
}
