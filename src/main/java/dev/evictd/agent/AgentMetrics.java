package dev.evictd.agent;

import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.NodeConditionType;
import dev.evictd.api.Signal;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.core.metrics.Info;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/** The agent's Prometheus metrics. */
public final class AgentMetrics {
  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final Clock clock;
  private final Map<Signal, AtomicLong> thresholdsMet = new EnumMap<>(Signal.class);
  private final Map<NodeConditionType, AtomicLong> conditions =
      new EnumMap<>(NodeConditionType.class);
  private final AtomicReference<Instant> lastStats = new AtomicReference<>();
  // Micrometer drops a gauge's "_info" suffix (reserved for info metrics): a real info metric,
  // registered with the Prometheus registry underneath, keeps the documented name
  private final Info rulesInfo =
      Info.builder()
          .name("evictd_rules_info")
          .help("The active rule set, labelled with its SHA-256")
          .labelNames("sha256")
          .register(registry.getPrometheusRegistry());
  private final Info kubeletInfo =
      Info.builder()
          .name("evictd_kubelet_info")
          .help(
              "The kubelet whose behaviour this agent follows: minor version, as reported, newer than known")
          .labelNames("version", "reported", "beyond_range")
          .register(registry.getPrometheusRegistry());
  private final Timer syncDuration;
  private final Timer rulesDuration;
  private final Counter summaryReads;

  public AgentMetrics(Clock clock) {
    this.clock = clock;
    for (Signal s : Signal.values()) {
      AtomicLong v = new AtomicLong();
      thresholdsMet.put(s, v);
      Gauge.builder("evictd_thresholds_met", v, AtomicLong::get)
          .description("Thresholds met (grace period not considered) per signal in the last sync")
          .tag("signal", s.key())
          .register(registry);
    }
    for (NodeConditionType c : NodeConditionType.values()) {
      AtomicLong v = new AtomicLong();
      conditions.put(c, v);
      Gauge.builder("evictd_node_condition", v, AtomicLong::get)
          .description("Node conditions reported True (1) or False (0) after the last sync")
          .tag("condition", c.name())
          .register(registry);
    }
    Gauge.builder("evictd_stats_age_seconds", this, m -> m.statsAgeSeconds())
        .description("Seconds since statistics were last read successfully (-1: never)")
        .register(registry);
    summaryReads =
        Counter.builder("evictd_summary_reads_total")
            .description(
                "Reads of the statistics source (the kubelet's /stats/summary with stats: kubelet)")
            .register(registry);
    syncDuration =
        Timer.builder("evictd_sync_duration_seconds")
            .description("Duration of a whole sync: statistics, rules, execution")
            .publishPercentiles(0.5, 0.99)
            .register(registry);
    rulesDuration =
        Timer.builder("evictd_rules_duration_seconds")
            .description("Time spent firing rules in a sync (the planner)")
            .publishPercentiles(0.5, 0.99)
            .register(registry);
  }

  /** Exports {@code evictd_pod_view_age_seconds}: how old the view of the node's pods may be. */
  public void podViewAge(java.util.function.Supplier<Duration> age) {
    // a strong reference: the supplier is often a method reference nothing else holds
    Gauge.builder("evictd_pod_view_age_seconds", age, a -> a.get().toMillis() / 1000.0)
        .strongReference(true)
        .description(
            "Seconds the view of the node's pods may be behind the API server (0 while the watch"
                + " is connected)")
        .register(registry);
  }

  /** The registry, for exposition. */
  public PrometheusMeterRegistry registry() {
    return registry;
  }

  private double statsAgeSeconds() {
    Instant t = lastStats.get();
    return t == null ? -1 : Duration.between(t, clock.instant()).toMillis() / 1000.0;
  }

  /** A sync ended: ok, failed (rules), or skipped (no statistics). */
  public void sync(String result, Duration total, Duration rules) {
    Counter.builder("evictd_syncs_total")
        .description("Syncs by result")
        .tag("result", result)
        .register(registry)
        .increment();
    syncDuration.record(total);
    if (rules != null) {
      rulesDuration.record(rules);
    }
  }

  /** Statistics were read. */
  public void statsRead() {
    lastStats.set(clock.instant());
  }

  /** The statistics source is read (counted before the read: a failed one is a request too). */
  public void summaryRead() {
    summaryReads.increment();
  }

  /** Statistics could not be read. */
  public void statsFailed() {
    Counter.builder("evictd_stats_failures_total")
        .description("Failed statistics reads")
        .register(registry)
        .increment();
  }

  /** What a plan says about thresholds and conditions. */
  public void plan(EvictionPlan plan) {
    Map<Signal, Long> met = new EnumMap<>(Signal.class);
    for (EvictionPlan.ThresholdStatus s : plan.thresholds()) {
      if (s.met()) {
        met.merge(s.threshold().signal(), 1L, Long::sum);
      }
    }
    thresholdsMet.forEach((s, v) -> v.set(met.getOrDefault(s, 0L)));
    conditions.forEach((c, v) -> v.set(plan.conditions().contains(c) ? 1 : 0));
  }

  /** An eviction was attempted. */
  public void eviction(EvictionDecision d, EvictionMethod method, EvictionOutcome outcome) {
    Counter.builder("evictd_evictions_total")
        .description("Eviction attempts by signal, method and outcome")
        .tag("signal", d.signal())
        .tag("method", method.name().toLowerCase(java.util.Locale.ROOT))
        .tag("outcome", outcome.name().toLowerCase(java.util.Locale.ROOT))
        .register(registry)
        .increment();
  }

  /** The decision guard refused a decision of the rules. */
  public void decisionRefused(EvictionPlan.Refusal reason) {
    Counter.builder("evictd_decisions_refused_total")
        .description("Decisions of the rules refused by the decision guard, by reason")
        .tag("reason", reason.label())
        .register(registry)
        .increment();
  }

  /** A notifier reported an event. */
  public void notifierEvent(String source) {
    Counter.builder("evictd_notifier_events_total")
        .description("Kernel notifier events")
        .tag("source", source)
        .register(registry)
        .increment();
  }

  /** A rule set was (re)loaded, or a reload failed. */
  public void rulesLoad(boolean ok) {
    rulesReload(ok ? RuleProbation.LOADED : RuleProbation.FAILED);
  }

  /**
   * A rule set load or reload attempt ended: loaded, trusted, rolled_back, rejected, failed or
   * unchanged (see {@link RuleProbation}).
   */
  public void rulesReload(String result) {
    Counter.builder("evictd_rule_reloads_total")
        .description(
            "Rule set loads and reload attempts by result (loaded, trusted, rolled_back, rejected,"
                + " failed, unchanged)")
        .tag("result", result)
        .register(registry)
        .increment();
  }

  /** Exposes how many abandoned rule threads are still running. */
  public void ruleThreadsAbandoned(java.util.function.IntSupplier alive) {
    Gauge.builder("evictd_rule_threads_abandoned", alive, a -> a.getAsInt())
        .description(
            "Rule threads abandoned because a rule did not stop, still running (each holds a CPU)")
        .register(registry);
  }

  /** The active rule set: {@code evictd_rules_info{sha256="..."} 1}. */
  public void activeRules(String sha256) {
    // an info metric with one label set: a reload replaces it, so only the active set shows
    rulesInfo.setLabelValues(sha256);
  }

  /**
   * The kubelet followed: {@code evictd_kubelet_info{version="1.34",reported="v1.34.2",
   * beyond_range="false"} 1}.
   */
  public void kubelet(dev.evictd.api.Kubelet k) {
    kubeletInfo.setLabelValues(k.version(), k.reported(), Boolean.toString(k.beyondRange()));
  }

  /** The Prometheus text exposition. */
  public String scrape() {
    return registry.scrape();
  }
}
