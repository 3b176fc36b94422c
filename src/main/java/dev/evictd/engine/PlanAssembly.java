package dev.evictd.engine;

import dev.evictd.api.ActionableThreshold;
import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.GracePeriodMet;
import dev.evictd.api.NodeCondition;
import dev.evictd.api.Observation;
import dev.evictd.api.RankKey;
import dev.evictd.api.Ranking;
import dev.evictd.api.ReclaimAction;
import dev.evictd.api.ReclaimResolved;
import dev.evictd.api.ReclaimTarget;
import dev.evictd.api.Signal;
import dev.evictd.api.Threshold;
import dev.evictd.api.ThresholdActive;
import dev.evictd.api.ThresholdMet;
import dev.evictd.api.ThresholdState;
import dev.evictd.api.ThresholdUnresolved;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Assembles a sync's {@link EvictionPlan} from what the rules left in the session: the thresholds'
 * status, node conditions, the signal reclaimed and the ranking, the trace, and the decisions as
 * the {@link DecisionGuard} accepted them, each with the rules behind it. Runs on the rule thread.
 */
final class PlanAssembly {
  private final EvictionConfig config;
  private final DecisionGuard guard;
  private final SessionFacts facts;

  PlanAssembly(EvictionConfig config, DecisionGuard guard, SessionFacts facts) {
    this.config = config;
    this.guard = guard;
    this.facts = facts;
  }

  /**
   * The plan of this sync from what {@code record} holds; with a {@code failure}, what the rules
   * did before it and no decisions.
   */
  EvictionPlan build(
      SessionRecord record,
      Instant now,
      List<ReclaimAction> reclaimed,
      List<String> warnings,
      String failure) {
    PerSyncFacts sync = record.perSyncFacts;
    List<ReclaimTarget> targets = sync.of(ReclaimTarget.class);
    Signal signal = targets.isEmpty() ? null : targets.get(0).signal();
    if (targets.size() > 1) {
      warnings.add(
          "rules selected " + targets.size() + " thresholds to reclaim; the first is reported");
    }
    List<EvictionDecision> decisions = new ArrayList<>();
    List<EvictionPlan.RefusedDecision> refused = new ArrayList<>();
    Map<String, List<EvictionPlan.RuleFiring>> decisionTrace = new HashMap<>();
    PlanTrace trace = new PlanTrace(record);
    if (failure == null) {
      Map<EvictionDecision, List<Firing>> chains = new IdentityHashMap<>();
      DecisionGuard.Review review = review(record, trace, chains);
      decisions.addAll(review.accepted());
      refused.addAll(review.refused());
      warnings.addAll(review.warnings());
      for (int i = 0; i < decisions.size(); i++) {
        decisionTrace.put(
            decisions.get(i).pod().uid(),
            chains.get(review.made().get(i)).stream().map(trace::describe).toList());
      }
    }
    return new EvictionPlan(
        facts.seq(),
        now,
        new ArrayList<>(facts.observations().values()),
        statuses(record),
        sync.of(NodeCondition.class).stream().map(NodeCondition::type).distinct().sorted().toList(),
        signal,
        reclaimed,
        !sync.of(ReclaimResolved.class).isEmpty(),
        ranking(record),
        decisions,
        trace.firings(),
        decisionTrace,
        warnings,
        failure,
        refused);
  }

  /**
   * The plan of a first sync the kubelet fails with {@code kubeletError} before observing anything
   * ({@code Kubelet.firstSyncError}): no rule runs, nothing is observed or kept; not a failed sync,
   * as the kubelet logs the error and carries on.
   */
  EvictionPlan skipped(Instant now, List<String> warnings, String kubeletError) {
    warnings.add("sync skipped, as the kubelet's first sync fails: " + kubeletError);
    return failed(now, warnings, null);
  }

  /** The plan of a sync that failed before the rules ran: what was observed and the failure. */
  EvictionPlan failed(Instant now, List<String> warnings, String failure) {
    return new EvictionPlan(
        facts.seq(),
        now,
        new ArrayList<>(facts.observations().values()),
        List.of(),
        List.of(),
        null,
        List.of(),
        false,
        List.of(),
        List.of(),
        List.of(),
        Map.of(),
        warnings,
        failure,
        List.of());
  }

  /** Each configured threshold with what the rules concluded about it. */
  private List<EvictionPlan.ThresholdStatus> statuses(SessionRecord record) {
    PerSyncFacts sync = record.perSyncFacts;
    Set<Threshold> met = new HashSet<>();
    sync.of(ThresholdMet.class).forEach(m -> met.add(m.threshold()));
    Set<Threshold> unresolved = new HashSet<>();
    sync.of(ThresholdUnresolved.class).forEach(u -> unresolved.add(u.threshold()));
    Set<Threshold> active = new HashSet<>();
    sync.of(ThresholdActive.class).forEach(a -> active.add(a.threshold()));
    Set<Threshold> graceMet = new HashSet<>();
    sync.of(GracePeriodMet.class).forEach(g -> graceMet.add(g.threshold()));
    Set<Threshold> actionable = new HashSet<>();
    sync.of(ActionableThreshold.class).forEach(a -> actionable.add(a.threshold()));
    Map<Threshold, Instant> first = new HashMap<>();
    for (ThresholdState ts : record.thresholdStates) {
      first.put(ts.getThreshold(), ts.getFirstObservedAt());
    }
    List<EvictionPlan.ThresholdStatus> statuses = new ArrayList<>();
    for (Threshold t : config.thresholds()) {
      Observation o = facts.observations().get(t.signal());
      statuses.add(
          new EvictionPlan.ThresholdStatus(
              t,
              o == null ? null : t.quantity(o.capacity()),
              o == null ? null : o.available(),
              met.contains(t),
              unresolved.contains(t),
              active.contains(t),
              first.get(t),
              graceMet.contains(t),
              actionable.contains(t)));
    }
    return statuses;
  }

  /** The first ranking in the session (rules may replace the planner's), pod by pod. */
  private List<EvictionPlan.RankedPod> ranking(SessionRecord record) {
    List<EvictionPlan.RankedPod> ranking = new ArrayList<>();
    List<Ranking> rankings = record.perSyncFacts.of(Ranking.class);
    if (rankings.isEmpty()) {
      return ranking;
    }
    List<RankKey> order = rankings.get(0).order();
    // the planner's own ranking comes with its pods
    List<PodEntry> entries =
        rankings.get(0) == record.lastRanking ? record.lastRankingEntries : null;
    for (int i = 0; i < order.size(); i++) {
      RankKey k = order.get(i);
      PodEntry e = entries != null ? entries.get(i) : facts.entry(k.uid());
      List<String> reasons = record.exemptions.isEmpty() ? null : record.exemptions.get(k.uid());
      ranking.add(
          new EvictionPlan.RankedPod(
              e.fact.ref(), k.components(), reasons == null ? null : String.join(", ", reasons)));
    }
    return ranking;
  }

  /**
   * The guard's review of the rules' decisions in the guard's order, each carrying the rules behind
   * it; {@code chains} gets the firings behind each decision the guard saw.
   */
  private DecisionGuard.Review review(
      SessionRecord record, PlanTrace trace, Map<EvictionDecision, List<Firing>> chains) {
    List<EvictionDecision> ordered =
        DecisionGuard.reviewOrder(
            record.perSyncFacts.of(EvictionDecision.class), facts::activeFact);
    List<EvictionDecision> traced = new ArrayList<>(ordered.size());
    for (EvictionDecision d : ordered) {
      List<Firing> chain = trace.provenance(d);
      EvictionDecision t =
          new EvictionDecision(
              d.pod(),
              d.kind(),
              d.signal(),
              d.gracePeriodSeconds(),
              d.message(),
              d.annotations(),
              d.method(),
              chain.stream().map(Firing::rule).distinct().toList());
      chains.put(t, chain);
      traced.add(t);
    }
    return guard.review(traced, facts::activeFact, record.exemptions);
  }
}
