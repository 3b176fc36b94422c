package dev.evictd.agent;

import dev.evictd.api.EvictionPlan;
import dev.evictd.api.Observation;
import dev.evictd.api.Quantity;
import java.util.List;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@link EvictionManager} logs of a sync's plan: the one-line summary (observations,
 * conditions, the signal acted on) and the refused decisions, one by one up to {@link
 * EvictionManager#MAX_LOGGED_REFUSALS} with each counted in the metrics.
 */
final class SyncLog {
  // the manager's logger: these are the manager's lines, under the name they always had
  private static final Logger LOG = LoggerFactory.getLogger(EvictionManager.class);

  private SyncLog() {}

  /**
   * Logs the sync's summary line: always when {@code logEverySync}, else when it decided; each
   * observation with where its figures came from and how old they were ({@code read}).
   */
  static void sync(EvictionPlan plan, String reason, boolean logEverySync, SyncStats.Read read) {
    if (logEverySync || !plan.decisions().isEmpty() || !plan.conditions().isEmpty()) {
      LOG.info(
          "sync {} ({}): {}; conditions {}{}",
          plan.seq(),
          reason,
          describe(plan, read),
          plan.conditions().isEmpty() ? "none" : plan.conditions(),
          plan.signal() == null ? "" : "; acting on " + plan.signal());
    }
  }

  /**
   * Logs the plan's refused decisions (up to the bound) and counts every one in {@code metrics}.
   */
  static void refusals(EvictionPlan plan, AgentMetrics metrics) {
    int logged = 0;
    for (EvictionPlan.RefusedDecision r : plan.refused()) {
      // once per sync and decision, up to a bound: a rule set making thousands must not flood the
      // log; the metric counts them all
      if (logged++ < EvictionManager.MAX_LOGGED_REFUSALS) {
        LOG.warn(
            "sync {}: refused a decision of rule \"{}\" to evict {}: {} ({})",
            plan.seq(),
            r.rule(),
            r.pod(),
            r.detail(),
            r.reason().label());
      }
      metrics.decisionRefused(r.reason());
    }
    if (logged > EvictionManager.MAX_LOGGED_REFUSALS) {
      LOG.warn(
          "sync {}: {} more refused decisions not logged (evictd_decisions_refused_total counts"
              + " them)",
          plan.seq(),
          logged - EvictionManager.MAX_LOGGED_REFUSALS);
    }
  }

  private static String describe(EvictionPlan plan, SyncStats.Read read) {
    List<Observation> obs = plan.observations();
    if (obs.isEmpty()) {
      return "no observations";
    }
    return obs.stream()
        .map(
            o ->
                o.signal()
                    + " "
                    + o.availableQuantity()
                    + "/"
                    + Quantity.of(
                        o.capacity(),
                        o.signal().binaryUnits()
                            ? Quantity.Format.BINARY_SI
                            : Quantity.Format.DECIMAL_SI)
                    + " ("
                    + read.describe(o, plan.now())
                    + ")")
        .collect(Collectors.joining(", "));
  }
}
