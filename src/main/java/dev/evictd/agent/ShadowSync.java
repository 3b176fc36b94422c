package dev.evictd.agent;

import dev.evictd.api.EvictdException;
import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionPlan;
import dev.evictd.engine.Planner;
import dev.evictd.engine.PlannerHooks;
import dev.evictd.engine.RuleSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * The shadow sync of {@link RuleProbation}: a new rule set runs once on the last captured inputs,
 * on a planner of its own that never touches the live session, judged as the live planner judges
 * (its guard's limits and pod cleanup timeout). Shadows that leave a rule thread behind are kept,
 * so that the agent's health can count the threads still running.
 */
final class ShadowSync {
  private final EvictionConfig config;
  private final List<Planner> shadowsWithStuckThreads = new CopyOnWriteArrayList<>();
  private dev.evictd.engine.SyncBudget shadowBudget = dev.evictd.engine.SyncBudget.DEFAULT;
  private dev.evictd.engine.DecisionGuard.Limits shadowLimits =
      dev.evictd.engine.DecisionGuard.Limits.DEFAULT;
  private java.time.Duration shadowCleanupTimeout;

  /** Shadow syncs on the node's eviction configuration {@code config}. */
  ShadowSync(EvictionConfig config) {
    this.config = config;
  }

  /** The budget of shadow syncs (the live planner's by default; tests shorten it). */
  void budget(dev.evictd.engine.SyncBudget budget) {
    this.shadowBudget = budget;
  }

  /** The live planner's guard limits (the allowed methods) and pod cleanup timeout. */
  void planner(
      dev.evictd.engine.DecisionGuard.Limits limits, java.time.Duration podCleanupTimeout) {
    this.shadowLimits = limits;
    this.shadowCleanupTimeout = podCleanupTimeout;
  }

  /**
   * Runs the set once on a planner of its own; returns why it failed ({@code problem} of its plan),
   * or null.
   */
  String run(RuleSet rs, RuleProbation.Inputs inputs, Function<EvictionPlan, String> problem) {
    Planner shadow;
    try {
      shadow = new Planner(rs, config, shadowBudget, shadowLimits);
      if (shadowCleanupTimeout != null) {
        shadow.podCleanupTimeout(shadowCleanupTimeout);
      }
    } catch (EvictdException e) {
      return e.getMessage();
    }
    try (shadow) {
      EvictionPlan plan =
          shadow.sync(inputs.at(), inputs.summary(), inputs.pods(), PlannerHooks.noReclaim(null));
      return problem.apply(plan);
    } finally {
      if (shadow.abandonedRuleThreads() > 0) {
        shadowsWithStuckThreads.add(shadow);
      }
    }
  }

  /** Abandoned rule threads of shadow syncs that are still running. */
  int threadsAlive() {
    shadowsWithStuckThreads.removeIf(p -> p.aliveAbandonedRuleThreads() == 0);
    int n = 0;
    for (Planner p : shadowsWithStuckThreads) {
      n += p.aliveAbandonedRuleThreads();
    }
    return n;
  }
}
