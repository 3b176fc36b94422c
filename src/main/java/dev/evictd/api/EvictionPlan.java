package dev.evictd.api;

import java.time.Instant;
import java.util.List;

/**
 * The outcome of one sync: what was observed, which thresholds are met, the node conditions, the
 * signal acted on, the ranking and the decisions, with the rules that fired. A failed sync carries
 * its failure and no decisions.
 *
 * @param seq the sync's sequence number (1 for the first)
 * @param now the sync's time
 * @param observations the signals observed
 * @param thresholds every configured threshold and its state in this sync
 * @param conditions the node conditions reported True, in MemoryPressure, DiskPressure, PIDPressure
 *     order
 * @param signal the signal acted on, or null
 * @param reclaimed the node-level reclaim actions run, in order
 * @param reclaimResolved whether node-level reclaim freed enough to skip eviction
 * @param ranking the active pods in rank order for the signal acted on (empty when no ranking was
 *     needed)
 * @param decisions the pods to evict, in order
 * @param firings the rules that fired, in order
 * @param decisionTrace for each decided pod (by uid): the firings behind the decision, the deciding
 *     rule first, with the facts each matched
 * @param warnings non-fatal findings of this sync
 * @param failure why the sync failed (a rule threw, ran away or exceeded its time budget), or null
 * @param refused the decisions the decision guard refused (dropped, never carried out), in the
 *     order the rules made them
 * @param sources where the observations' figures came from, by signal, when not the statistics
 *     source (the kubelet's Summary, a fixture's step): e.g. {@code kernel: /sys/fs/cgroup/memory}
 *     for the memory figures the agent read from the kernel at a sync the kernel triggered
 */
public record EvictionPlan(
    long seq,
    Instant now,
    List<Observation> observations,
    List<ThresholdStatus> thresholds,
    List<NodeConditionType> conditions,
    Signal signal,
    List<ReclaimAction> reclaimed,
    boolean reclaimResolved,
    List<RankedPod> ranking,
    List<EvictionDecision> decisions,
    List<RuleFiring> firings,
    java.util.Map<String, List<RuleFiring>> decisionTrace,
    List<String> warnings,
    String failure,
    List<RefusedDecision> refused,
    java.util.Map<Signal, String> sources) {

  /** Where the statistics source's own figures come from, unless {@link #sources} says else. */
  public static final String SUMMARY = "summary";

  public EvictionPlan {
    observations = List.copyOf(observations);
    thresholds = List.copyOf(thresholds);
    conditions = List.copyOf(conditions);
    reclaimed = List.copyOf(reclaimed);
    ranking = List.copyOf(ranking);
    decisions = List.copyOf(decisions);
    firings = List.copyOf(firings);
    decisionTrace = java.util.Map.copyOf(decisionTrace);
    warnings = List.copyOf(warnings);
    refused = refused == null ? List.of() : List.copyOf(refused);
    sources = sources == null ? java.util.Map.of() : java.util.Map.copyOf(sources);
  }

  /** A plan whose figures all came from the statistics source. */
  public EvictionPlan(
      long seq,
      Instant now,
      List<Observation> observations,
      List<ThresholdStatus> thresholds,
      List<NodeConditionType> conditions,
      Signal signal,
      List<ReclaimAction> reclaimed,
      boolean reclaimResolved,
      List<RankedPod> ranking,
      List<EvictionDecision> decisions,
      List<RuleFiring> firings,
      java.util.Map<String, List<RuleFiring>> decisionTrace,
      List<String> warnings,
      String failure,
      List<RefusedDecision> refused) {
    this(
        seq,
        now,
        observations,
        thresholds,
        conditions,
        signal,
        reclaimed,
        reclaimResolved,
        ranking,
        decisions,
        firings,
        decisionTrace,
        warnings,
        failure,
        refused,
        null);
  }

  /** This plan with {@code sources} saying where its figures came from. */
  public EvictionPlan withSources(java.util.Map<Signal, String> sources) {
    return new EvictionPlan(
        seq,
        now,
        observations,
        thresholds,
        conditions,
        signal,
        reclaimed,
        reclaimResolved,
        ranking,
        decisions,
        firings,
        decisionTrace,
        warnings,
        failure,
        refused,
        sources);
  }

  /** Where the figures of {@code signal} came from ({@link #SUMMARY} unless said else). */
  public String source(Signal signal) {
    return signal == null ? SUMMARY : sources.getOrDefault(signal, SUMMARY);
  }

  /**
   * Where {@code o}'s figures came from and how old they were at the sync: {@code kernel:
   * /sys/fs/cgroup/memory, 3 ms old}, {@code summary, 8.2 s old}, {@code summary, no time}.
   */
  public String provenance(Observation o) {
    return provenance(source(o.signal()), o.time(), now);
  }

  /** {@code source}, and the age at {@code now} of figures sampled at {@code time}. */
  public static String provenance(String source, Instant time, Instant now) {
    if (time == null || now == null) {
      return source + ", no time";
    }
    long ms = Math.max(0, java.time.Duration.between(time, now).toMillis());
    return source
        + (ms < 1000
            ? ", " + ms + " ms"
            : String.format(java.util.Locale.ROOT, ", %.1f s", ms / 1000.0))
        + " old";
  }

  /** Whether the sync failed; a failed sync evicts nothing. */
  public boolean failed() {
    return failure != null;
  }

  /** The state of one threshold in a sync. */
  public record ThresholdStatus(
      Threshold threshold,
      Quantity quantity,
      Long available,
      boolean met,
      boolean unresolved,
      boolean active,
      Instant firstObservedAt,
      boolean gracePeriodMet,
      boolean actionable) {}

  /** A pod in rank order, its key, and why it is exempt (null when it is not). */
  public record RankedPod(PodRef pod, List<RankKey.Component> key, String exemptReason) {}

  /**
   * One rule firing.
   *
   * @param phase the agenda group
   * @param rule the rule's name
   * @param facts short descriptions of the facts it matched
   * @param produced short descriptions of the facts it inserted
   */
  public record RuleFiring(String phase, String rule, List<String> facts, List<String> produced) {}

  /** Why the decision guard refused a decision; {@link #label()} is the metric's label value. */
  public enum Refusal {
    /** No pod of this sync's active list has the decision's uid. */
    UNKNOWN_POD,
    /** The uid is an active pod's, but the namespace or name the rules wrote is not that pod's. */
    POD_MISMATCH,
    /** The pod is bound to another node. */
    OTHER_NODE,
    /** The pod is exempt from eviction. */
    EXEMPT,
    /**
     * The pod is static, mirror or system-critical, which the kubelet never evicts whatever its
     * policy.
     */
    CRITICAL,
    /** The pod was already decided in this sync (the first decision is kept). */
    DUPLICATE,
    /** The method is not one the configuration allows. */
    METHOD,
    /** The grace period is outside the allowed range. */
    GRACE_PERIOD,
    /** The signal is not an eviction signal or local-storage limit. */
    SIGNAL,
    /** The decision lacks a pod or a kind. */
    INVALID;

    /** The lower-case name: {@code unknown_pod}, {@code grace_period}... */
    public String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /**
   * A decision the guard refused.
   *
   * @param pod the pod as the rules named it (untrusted: shown, never used)
   * @param reason why it was refused
   * @param detail a one-line explanation
   * @param rules the rules whose firing produced it, the deciding rule first
   */
  public record RefusedDecision(PodRef pod, Refusal reason, String detail, List<String> rules) {
    public RefusedDecision {
      rules = rules == null ? List.of() : List.copyOf(rules);
    }

    /** The rule that made the decision, or "(unknown rule)". */
    public String rule() {
      return rules.isEmpty() ? "(unknown rule)" : rules.get(0);
    }
  }
}
