package dev.evictd.agent;

import dev.evictd.api.EvictionAttempt;
import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.api.ReclaimAction;
import dev.evictd.engine.Planner;
import dev.evictd.engine.PlannerHooks;
import dev.evictd.ports.EventSink;
import dev.evictd.ports.NodeReclaimer;
import dev.evictd.ports.PodEvictor;
import dev.evictd.ports.StatsProvider;
import dev.evictd.stats.Summary;
import java.time.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How {@link EvictionManager} carries out a plan: node-level reclaim for the planner, each eviction
 * decision with its method resolved (never repeating one in flight with the same or a longer grace
 * period), and the bookkeeping of outcomes — the planner's in-flight evictions and attempts, the
 * Evicted Events, and the evictions whose outcome is unknown until the pods show it. Called only
 * from the manager's sync, under its lock.
 */
final class EvictionExecution {
  // the manager's logger: these are the manager's lines, under the name they always had
  private static final Logger LOG = LoggerFactory.getLogger(EvictionManager.class);

  private final Planner planner;
  private final StatsProvider stats;
  private final PodEvictor evictor;
  private final NodeReclaimer reclaimer;
  private final EventSink events;
  private final AgentMetrics metrics;
  private final Clock clock;
  private final EvictionManager.Settings settings;

  EvictionExecution(
      Planner planner,
      StatsProvider stats,
      PodEvictor evictor,
      NodeReclaimer reclaimer,
      EventSink events,
      AgentMetrics metrics,
      Clock clock,
      EvictionManager.Settings settings) {
    this.planner = planner;
    this.stats = stats;
    this.evictor = evictor;
    this.reclaimer = reclaimer;
    this.events = events;
    this.metrics = metrics;
    this.clock = clock;
    this.settings = settings;
  }

  /** The planner's hooks: node-level reclaim (logged only in a dry run) and the stats after it. */
  PlannerHooks hooks() {
    return new PlannerHooks() {
      @Override
      public boolean reclaim(ReclaimAction action) {
        if (settings.dryRun()) {
          LOG.info("dry run: would reclaim {}", action);
          return true;
        }
        try {
          return reclaimer.reclaim(action);
        } catch (RuntimeException e) {
          LOG.warn("node-level reclaim of {} failed: {}", action, e.getMessage());
          return false;
        }
      }

      @Override
      public Summary summaryAfterReclaim() {
        return stats.summary();
      }
    };
  }

  /**
   * Evictions sent without an answer, by pod uid: their Evicted Event waits until the pod shows
   * that the request was carried out.
   */
  private final java.util.Map<String, EvictionDecision> unknownOutcomes =
      new java.util.LinkedHashMap<>();

  /**
   * What became of the evictions whose outcome was unknown, as this sync's pods show it: a
   * deletionTimestamp means carried out (the Evicted Event is recorded now, once); a pod gone needs
   * nothing more; a pod still there without one after podCleanupTimeout means the request was not
   * carried out, and the rules may choose again.
   */
  void settleUnknownOutcomes() {
    var it = unknownOutcomes.entrySet().iterator();
    while (it.hasNext()) {
      var e = it.next();
      EvictionDecision d = e.getValue();
      dev.evictd.api.EvictionInFlight f = planner.inFlight(e.getKey());
      if (f == null) {
        LOG.info("evict {}: the pod is gone (the eviction's outcome was unknown)", d.pod());
        it.remove();
      } else if (f.outcome() == EvictionOutcome.EVICTED) {
        LOG.info("evict {}: carried out after all (the pod is being deleted)", d.pod());
        recordEvicted(d);
        it.remove();
      } else if (!clock.instant().isBefore(f.cleanupDeadline())) {
        LOG.warn(
            "evict {}: outcome still unknown after {} and the pod is not being deleted: taken as not"
                + " carried out",
            d.pod(),
            dev.evictd.config.GoDuration.format(settings.podCleanupTimeout()));
        planner.evictionNotStarted(e.getKey());
        it.remove();
      }
    }
  }

  private void recordEvicted(EvictionDecision resolved) {
    try {
      events.podEvicted(resolved);
    } catch (RuntimeException e) {
      LOG.warn("cannot record the Evicted event for {}: {}", resolved.pod(), e.getMessage());
    }
  }

  /** The attempt, or null when the pod is already going with a grace period no longer than this. */
  EvictionAttempt execute(EvictionDecision d) {
    EvictionMethod method =
        settings.dryRun()
            ? EvictionMethod.DRY_RUN
            : d.method() == EvictionMethod.DEFAULT ? settings.defaultMethod() : d.method();
    EvictionDecision resolved =
        new EvictionDecision(
            d.pod(),
            d.kind(),
            d.signal(),
            d.gracePeriodSeconds(),
            d.message(),
            d.annotations(),
            method,
            d.rules());
    // an eviction in flight is never repeated with the same or a longer grace period (the rules
    // should not ask; this holds whatever they ask), and a shorter one is no new eviction
    dev.evictd.api.EvictionInFlight inFlight =
        method == EvictionMethod.DRY_RUN ? null : planner.inFlight(d.pod().uid());
    if (inFlight != null && d.gracePeriodSeconds() >= inFlight.gracePeriodSeconds()) {
      LOG.info(
          "evict {}: not again, already being deleted (grace {}s, since {}, outcome {})",
          d.pod(),
          inFlight.gracePeriodSeconds(),
          inFlight.since(),
          inFlight.outcome());
      return null;
    }
    EvictionOutcome outcome;
    String detail = "";
    if (method == EvictionMethod.DRY_RUN) {
      outcome = EvictionOutcome.DRY_RUN;
    } else {
      try {
        dev.evictd.ports.EvictionResult result = evictor.attempt(resolved);
        outcome = result == null ? EvictionOutcome.FAILED : result.outcome();
        detail = result == null ? "" : result.detail();
      } catch (RuntimeException e) {
        LOG.warn("evicting {} failed: {}", d.pod(), e.getMessage());
        outcome = EvictionOutcome.FAILED;
      }
    }
    if (inFlight != null) {
      LOG.info(
          "evict {} ({}): grace period shortened from {}s to {}s: {}",
          d.pod(),
          d.signal(),
          inFlight.gracePeriodSeconds(),
          d.gracePeriodSeconds(),
          outcome);
      if (outcome == EvictionOutcome.EVICTED) {
        planner.evictionStarted(d.pod(), method, d.gracePeriodSeconds(), outcome, clock.instant());
      }
      EvictionAttempt again =
          new EvictionAttempt(d.pod(), d.signal(), method, outcome, clock.instant(), detail);
      planner.recordAttempt(again);
      return again;
    }
    LOG.info(
        "evict {} ({}, grace {}s, {}): {} - {}{}",
        d.pod(),
        d.signal(),
        d.gracePeriodSeconds(),
        method.name().toLowerCase(java.util.Locale.ROOT),
        outcome,
        d.message(),
        detail.isEmpty() ? "" : " [" + detail + "]");
    if (outcome == EvictionOutcome.EVICTED) {
      recordEvicted(resolved);
    }
    if (outcome == EvictionOutcome.EVICTED || outcome == EvictionOutcome.UNKNOWN) {
      planner.evictionStarted(d.pod(), method, d.gracePeriodSeconds(), outcome, clock.instant());
    }
    if (outcome == EvictionOutcome.UNKNOWN) {
      unknownOutcomes.put(d.pod().uid(), resolved);
    }
    metrics.eviction(d, method, outcome);
    EvictionAttempt attempt =
        new EvictionAttempt(d.pod(), d.signal(), method, outcome, clock.instant(), detail);
    planner.recordAttempt(attempt);
    return attempt;
  }
}
