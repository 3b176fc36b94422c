package dev.evictd.cli;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.Observation;
import dev.evictd.api.Quantity;
import dev.evictd.api.RankKey;
import dev.evictd.api.Threshold;
import dev.evictd.config.GoDuration;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Renders plans as readable text for the timeline of {@code replay} and the table of {@code plan}.
 */
final class PlanText {
  private static final int RANKING_HEAD = 5;

  private PlanText() {}

  /** The configuration's thresholds on one line each. */
  static void printConfig(PrintWriter out, EvictionConfig c) {
    out.println(
        "node "
            + c.nodeName()
            + ", filesystem layout "
            + c.fsLayout()
            + ", pressure transition period "
            + GoDuration.format(c.pressureTransitionPeriod())
            + ", max soft grace "
            + c.maxPodGracePeriodSeconds()
            + "s"
            + (c.localStorageCapacityIsolation() ? ", local-storage limits enforced" : ""));
    if (c.thresholds().isEmpty()) {
      out.println("  no thresholds");
    }
    for (Threshold t : c.thresholds()) {
      out.println("  " + describe(t));
    }
    String kubelet = kubelet(c);
    if (kubelet != null) {
      out.println("  " + kubelet);
    }
    for (String w : c.warnings()) {
      out.println("  warning: " + w);
    }
  }

  /**
   * Which kubelet the plan follows, when one was named (the newest evictd knows, unnamed, goes
   * without saying).
   */
  static String kubelet(EvictionConfig c) {
    dev.evictd.api.Kubelet k = c.kubelet();
    if (k == null
        || (!k.beyondRange()
            && k.minor() == dev.evictd.k8s.KubeletFeatureGates.NEWEST
            && k.reported().equals(k.version()))) {
      return null;
    }
    return k.describe();
  }

  static String describe(Threshold t) {
    StringBuilder sb = new StringBuilder(t.id()).append(" < ").append(t.value());
    if (!t.isHard()) {
      sb.append(", grace ").append(GoDuration.format(t.gracePeriod()));
    }
    if (t.minReclaim() != null) {
      sb.append(", min reclaim ").append(t.minReclaim());
    }
    return sb.toString();
  }

  /** One plan, indented under a header line. */
  static void printPlan(
      PrintWriter out, String header, EvictionPlan p, Instant start, boolean fullRanking) {
    out.println(header + "  t=" + GoDuration.format(Duration.between(start, p.now())));
    if (p.observations().isEmpty()) {
      out.println("  signals     (no observation)");
    } else {
      String signals =
          p.observations().stream()
              .map(o -> observation(o) + " (" + p.provenance(o) + ")")
              .collect(Collectors.joining("; "));
      out.println("  signals     " + signals);
    }
    boolean any = false;
    for (EvictionPlan.ThresholdStatus s : p.thresholds()) {
      if (!s.active()) {
        continue;
      }
      StringBuilder sb = new StringBuilder(s.threshold().id()).append(" < ").append(s.quantity());
      sb.append(s.met() ? ": met" : ": not yet resolved (min reclaim)");
      if (s.firstObservedAt() != null) {
        sb.append(", first observed t=")
            .append(GoDuration.format(Duration.between(start, s.firstObservedAt())));
      }
      if (!s.threshold().isHard()) {
        sb.append(
            s.gracePeriodMet()
                ? ", grace period met"
                : ", within grace period " + GoDuration.format(s.threshold().gracePeriod()));
      }
      if (s.gracePeriodMet() && !s.actionable()) {
        sb.append(", statistics not updated");
      }
      out.println((any ? "              " : "  thresholds  ") + sb);
      any = true;
    }
    if (!any) {
      out.println("  thresholds  none in effect");
    }
    out.println(
        "  conditions  "
            + (p.conditions().isEmpty()
                ? "none"
                : p.conditions().stream().map(Enum::name).collect(Collectors.joining(", "))));
    if (p.signal() != null) {
      out.println("  acting on   " + p.signal());
    }
    if (!p.reclaimed().isEmpty()) {
      out.println(
          "  reclaimed   "
              + p.reclaimed().stream().map(Object::toString).collect(Collectors.joining(", "))
              + (p.reclaimResolved() ? " (enough: no eviction)" : " (not enough)"));
    }
    if (!p.ranking().isEmpty()) {
      int n = fullRanking ? p.ranking().size() : Math.min(RANKING_HEAD, p.ranking().size());
      for (int i = 0; i < n; i++) {
        EvictionPlan.RankedPod r = p.ranking().get(i);
        out.println(
            (i == 0 ? "  ranking     " : "              ")
                + (i + 1)
                + ". "
                + r.pod().key()
                + "  "
                + keys(r.key())
                + (r.exemptReason() == null ? "" : "  [exempt: " + r.exemptReason() + "]"));
      }
      if (n < p.ranking().size()) {
        out.println("              ... " + (p.ranking().size() - n) + " more");
      }
    }
    if (p.decisions().isEmpty()) {
      out.println("  evicted     none");
    }
    for (EvictionDecision d : p.decisions()) {
      out.println(
          "  evicted     "
              + d.pod().key()
              + "  grace "
              + d.gracePeriodSeconds()
              + "s"
              + methodSuffix(d)
              + "  ("
              + d.signal()
              + ")  \""
              + d.message()
              + "\"");
      if (!d.rules().isEmpty()) {
        out.println("              by rules: " + String.join(" <- ", d.rules()));
      }
    }
    for (EvictionPlan.RefusedDecision r : p.refused()) {
      out.println("  refused     " + refused(r));
    }
    for (String w : p.warnings()) {
      out.println("  warning     " + w);
    }
    if (p.failed()) {
      out.println("  FAILED      " + p.failure());
    }
  }

  /**
   * A refused decision on one line: the pod as the rules named it, the reason, why, and the rule.
   */
  static String refused(EvictionPlan.RefusedDecision r) {
    return (r.pod() == null ? "(no pod)" : r.pod().key())
        + "  "
        + r.reason().label()
        + ": "
        + r.detail()
        + "  (rule \""
        + r.rule()
        + "\")";
  }

  private static String observation(Observation o) {
    Quantity cap =
        Quantity.of(
            o.capacity(),
            o.signal().binaryUnits() ? Quantity.Format.BINARY_SI : Quantity.Format.DECIMAL_SI);
    return o.signal() + " " + o.availableQuantity() + " of " + cap;
  }

  private static String keys(List<RankKey.Component> key) {
    return key.stream().map(c -> c.name() + "=" + c.shownValue()).collect(Collectors.joining(" "));
  }

  /**
   * " method evict" when a rule chose how to carry the decision out, "" for the agent's default
   * method: shown wherever decisions are printed, so a policy that only changes the method is
   * visible in plans and diffs.
   */
  static String methodSuffix(EvictionDecision d) {
    return d.method() == dev.evictd.api.EvictionMethod.DEFAULT
        ? ""
        : " method " + d.method().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
  }
}
