package dev.evictd.cli;

import static dev.evictd.cli.TimelineLayout.LEFT;
import static dev.evictd.cli.TimelineLayout.PLOT_BOTTOM;
import static dev.evictd.cli.TimelineLayout.PLOT_TOP;
import static dev.evictd.cli.TimelineLayout.RIGHT;
import static dev.evictd.cli.TimelineLayout.WIDTH;
import static dev.evictd.cli.TimelineText.CHAR;
import static dev.evictd.cli.TimelineText.amount;
import static dev.evictd.cli.TimelineText.esc;
import static dev.evictd.cli.TimelineText.f;
import static dev.evictd.cli.TimelineText.fit;
import static dev.evictd.cli.TimelineText.human;
import static dev.evictd.cli.TimelineText.reclaim;
import static dev.evictd.cli.TimelineText.status;

import dev.evictd.api.EvictionPlan;
import dev.evictd.api.Observation;
import dev.evictd.api.Quantity;
import dev.evictd.api.Signal;
import dev.evictd.api.Threshold;
import dev.evictd.config.GoDuration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * One signal's lane of a timeline picture: the available amount at each step on a square-root
 * scale, each threshold as a stepped line (with its minimum reclaim), the soft grace windows, the
 * threshold acted on, and the labels at the right end of the lines.
 */
final class TimelineSignalLane extends TimelineDrawing {

  TimelineSignalLane(Timeline timeline, TimelineLayout layout, StringBuilder svg) {
    super(timeline, layout, svg);
  }

  /** Draws the lane of {@code s} with its top at {@code top}. */
  void draw(Signal s, int top) {
    int plotTop = top + PLOT_TOP;
    int plotBottom = top + laneHeight(s) - PLOT_BOTTOM;
    long max = 1;
    long capacity = 0;
    for (EvictionPlan p : plans) {
      for (Observation o : p.observations()) {
        if (o.signal() == s) {
          max = Math.max(max, o.available());
          capacity = Math.max(capacity, o.capacity());
        }
      }
      for (EvictionPlan.ThresholdStatus st : p.thresholds()) {
        if (st.threshold().signal() == s && st.quantity() != null) {
          max = Math.max(max, amount(st.quantity()));
          Long cap = capacity(p, s);
          if (st.threshold().minReclaim() != null && cap != null) {
            max = Math.max(max, amount(st.threshold().quantityWithMinReclaim(cap)));
          }
        }
      }
    }
    double top2 = max * 1.1;
    // a square-root scale: the thresholds, small beside the capacity, get room near the bottom
    java.util.function.DoubleUnaryOperator y =
        v -> plotBottom - Math.sqrt(Math.max(0, Math.min(v, top2)) / top2) * (plotBottom - plotTop);
    svg.append("<g class=\"lane signal\" data-signal=\"").append(esc(s.key())).append("\">\n");
    svg.append("<rect class=\"plot\" x=\"")
        .append(LEFT)
        .append("\" y=\"")
        .append(plotTop)
        .append("\" width=\"")
        .append(WIDTH - LEFT - RIGHT)
        .append("\" height=\"")
        .append(plotBottom - plotTop)
        .append("\" fill=\"#f6f8fa\" stroke=\"#d0d7de\"/>\n");
    text(10, top + 16, "start", "lane-title", s.key(), null, "bold");
    text(
        10,
        top + 31,
        "start",
        "lane-subtitle",
        (capacity > 0 ? "available, of " + human(capacity, s) : "available") + " (√ scale)",
        null,
        null);
    text(LEFT - 6, plotTop + 4, "end", "tick", human((long) top2, s), null, null);
    text(LEFT - 6, plotBottom, "end", "tick", "0", null, null);
    text(
        LEFT - 6,
        (plotTop + plotBottom) / 2.0 + 4,
        "end",
        "tick",
        human((long) (top2 / 4), s),
        null,
        null);
    line(
        LEFT - 3,
        (plotTop + plotBottom) / 2.0,
        LEFT,
        (plotTop + plotBottom) / 2.0,
        "tick",
        "#57606a");

    List<double[]> rightLabels = new ArrayList<>();
    List<String[]> rightTexts = new ArrayList<>();
    // soft grace windows, under everything else
    for (Threshold th : in.config().thresholds()) {
      if (th.signal() == s && !th.isHard()) {
        graceWindows(th, plotTop, plotBottom, graceLabelY(s, y, plotTop, plotBottom));
      }
    }
    // thresholds: a stepped line over the steps where the threshold has an amount
    for (Threshold th : in.config().thresholds()) {
      if (th.signal() != s) {
        continue;
      }
      StringBuilder path = new StringBuilder();
      double lastY = 0;
      Quantity lastQ = null;
      for (int i = 0; i < plans.size(); i++) {
        EvictionPlan.ThresholdStatus st = status(plans.get(i), th);
        if (st == null || st.quantity() == null) {
          continue;
        }
        double x0 = i == 0 ? LEFT : sx(i);
        double x1 = i + 1 < plans.size() ? sx(i + 1) : WIDTH - RIGHT;
        double yy = y.applyAsDouble(amount(st.quantity()));
        path.append(path.isEmpty() ? "M" : "L")
            .append(f(x0))
            .append(' ')
            .append(f(yy))
            .append("L")
            .append(f(x1))
            .append(' ')
            .append(f(yy));
        lastY = yy;
        lastQ = st.quantity();
      }
      if (lastQ == null) {
        continue;
      }
      String cls = th.isHard() ? "hard" : "soft";
      svg.append("<path class=\"threshold ")
          .append(cls)
          .append("\" data-threshold=\"")
          .append(esc(th.id()))
          .append("\" d=\"")
          .append(path)
          .append("\" fill=\"none\" stroke=\"")
          .append(th.isHard() ? "#cf222e" : "#bf8700")
          .append("\" stroke-width=\"1.5\" stroke-dasharray=\"6 3\"><title>")
          .append(esc(PlanText.describe(th) + " (" + th.origin() + ")"))
          .append("</title></path>\n");
      rightLabels.add(new double[] {lastY});
      rightTexts.add(new String[] {th.id() + " " + lastQ, cls, PlanText.describe(th)});
      minReclaim(s, th, y, cls, rightLabels, rightTexts);
    }
    // the available amount
    StringBuilder pts = new StringBuilder();
    double lastY = -1;
    String lastText = null;
    StringBuilder dots = new StringBuilder();
    for (int i = 0; i < plans.size(); i++) {
      EvictionPlan p = plans.get(i);
      for (Observation o : p.observations()) {
        if (o.signal() != s) {
          continue;
        }
        double xx = sx(i);
        double yy = y.applyAsDouble(o.available());
        pts.append(pts.isEmpty() ? "" : " ").append(f(xx)).append(',').append(f(yy));
        dots.append("<circle class=\"observation\" data-step=\"")
            .append(i + 1)
            .append("\" cx=\"")
            .append(f(xx))
            .append("\" cy=\"")
            .append(f(yy))
            .append("\" r=\"3.5\" fill=\"#0969da\"><title>")
            .append(
                esc(
                    "step "
                        + (i + 1)
                        + " t="
                        + t(p.now())
                        + ": "
                        + s.key()
                        + " "
                        + o.availableQuantity()
                        + (o.capacity() > 0 ? " of " + human(o.capacity(), s) : "")))
            .append("</title></circle>\n");
        lastY = yy;
        lastText = "available " + o.availableQuantity();
      }
    }
    if (!pts.isEmpty()) {
      svg.append("<polyline class=\"available\" points=\"")
          .append(pts)
          .append("\" fill=\"none\" stroke=\"#0969da\" stroke-width=\"2\"/>\n")
          .append(dots);
      rightLabels.add(new double[] {lastY});
      rightTexts.add(new String[] {lastText, "avail", lastText});
    }
    actedOn(s, y);
    rightColumn(rightLabels, rightTexts, plotTop, plotBottom);
    svg.append("</g>\n");
  }

  /**
   * The amount a threshold must be cleared by before it counts as resolved (threshold plus minimum
   * reclaim), a dotted line over the steps where the threshold is met or not yet resolved.
   */
  private void minReclaim(
      Signal s,
      Threshold th,
      java.util.function.DoubleUnaryOperator y,
      String cls,
      List<double[]> rightLabels,
      List<String[]> rightTexts) {
    if (th.minReclaim() == null) {
      return;
    }
    StringBuilder path = new StringBuilder();
    double lastY = 0;
    Quantity lastQ = null;
    for (int i = 0; i < plans.size(); i++) {
      EvictionPlan.ThresholdStatus st = status(plans.get(i), th);
      Long capacity = capacity(plans.get(i), s);
      if (st == null || capacity == null || !(st.met() || st.unresolved())) {
        continue;
      }
      Quantity q = th.quantityWithMinReclaim(capacity);
      double yy = y.applyAsDouble(amount(q));
      double x0 = sx(i);
      double x1 = i + 1 < plans.size() ? sx(i + 1) : WIDTH - RIGHT;
      path.append("M")
          .append(f(x0))
          .append(' ')
          .append(f(yy))
          .append("L")
          .append(f(x1))
          .append(' ')
          .append(f(yy));
      lastY = yy;
      lastQ = q;
    }
    if (lastQ == null) {
      return;
    }
    String tip =
        th.id()
            + ": resolved only when "
            + s.key()
            + " is at least "
            + lastQ
            + " (threshold + min reclaim "
            + th.minReclaim()
            + ")";
    svg.append("<path class=\"min-reclaim ")
        .append(cls)
        .append("\" data-threshold=\"")
        .append(esc(th.id()))
        .append("\" d=\"")
        .append(path)
        .append("\" fill=\"none\" stroke=\"")
        .append(th.isHard() ? "#cf222e" : "#bf8700")
        .append("\" stroke-width=\"1\" stroke-dasharray=\"1 3\"><title>")
        .append(esc(tip))
        .append("</title></path>\n");
    rightLabels.add(new double[] {lastY});
    rightTexts.add(new String[] {"+ min reclaim " + th.minReclaim() + " = " + lastQ, cls, tip});
  }

  private static Long capacity(EvictionPlan p, Signal s) {
    for (Observation o : p.observations()) {
      if (o.signal() == s) {
        return o.capacity();
      }
    }
    return null;
  }

  /**
   * Where grace labels go: at the top of the lane, or at its bottom when a threshold line runs
   * through the top (a label on a dashed line reads badly).
   */
  private double graceLabelY(
      Signal s, java.util.function.DoubleUnaryOperator y, int plotTop, int plotBottom) {
    for (EvictionPlan p : plans) {
      for (EvictionPlan.ThresholdStatus st : p.thresholds()) {
        if (st.threshold().signal() == s && st.quantity() != null) {
          double ty = y.applyAsDouble(amount(st.quantity()));
          if (ty < plotTop + 18) {
            return plotBottom - 5;
          }
        }
      }
    }
    return plotTop + 13;
  }

  /**
   * Shades each soft grace period: from when the threshold was first observed met, for its grace.
   */
  private void graceWindows(Threshold th, int plotTop, int plotBottom, double labelY) {
    Instant started = null;
    Instant endedAt = null;
    List<Instant[]> windows = new ArrayList<>();
    for (EvictionPlan p : plans) {
      EvictionPlan.ThresholdStatus st = status(p, th);
      Instant fo = st == null || !st.met() ? null : st.firstObservedAt();
      if (started != null && !started.equals(fo)) {
        windows.add(new Instant[] {started, p.now()});
        started = null;
      }
      if (fo != null && started == null) {
        started = fo;
      }
      endedAt = p.now();
    }
    if (started != null) {
      windows.add(new Instant[] {started, null});
    }
    for (Instant[] w : windows) {
      Instant graceEnd = w[0].plus(th.gracePeriod());
      Instant end = w[1] == null || graceEnd.isBefore(w[1]) ? graceEnd : w[1];
      double x0 = x(w[0]);
      double x1 = x(end);
      boolean ran = w[1] == null ? !graceEnd.isAfter(endedAt) : !graceEnd.isAfter(w[1]);
      String tip =
          th.id()
              + ": first observed met at t="
              + t(w[0])
              + ", grace "
              + GoDuration.format(th.gracePeriod())
              + (ran
                  ? ", grace period met at t=" + t(graceEnd)
                  : w[1] == null
                      ? ", still running at the last step"
                      : ", timer restarted (no longer met) at t=" + t(w[1]));
      svg.append("<rect class=\"grace\" data-threshold=\"")
          .append(esc(th.id()))
          .append("\" x=\"")
          .append(f(x0))
          .append("\" y=\"")
          .append(plotTop)
          .append("\" width=\"")
          .append(f(Math.max(1, x1 - x0)))
          .append("\" height=\"")
          .append(plotBottom - plotTop)
          .append("\" fill=\"#d4a72c\" fill-opacity=\"0.2\"><title>")
          .append(esc(tip))
          .append("</title></rect>\n");
      String label = "grace " + GoDuration.format(th.gracePeriod());
      if (x1 - x0 > label.length() * CHAR + 8) {
        text((x0 + x1) / 2, labelY, "middle", "grace-label", label, tip, null);
      }
    }
  }

  /** A diamond on the threshold acted on, at every step that acted on this signal. */
  private void actedOn(Signal s, java.util.function.DoubleUnaryOperator y) {
    for (int i = 0; i < plans.size(); i++) {
      EvictionPlan p = plans.get(i);
      if (p.signal() != s) {
        continue;
      }
      EvictionPlan.ThresholdStatus acted = null;
      for (EvictionPlan.ThresholdStatus st : p.thresholds()) {
        if (st.actionable() && st.threshold().signal() == s) {
          acted = st;
          break;
        }
      }
      if (acted == null || acted.quantity() == null) {
        continue;
      }
      double cx = sx(i);
      double cy = y.applyAsDouble(amount(acted.quantity()));
      svg.append("<path class=\"acted\" data-step=\"")
          .append(i + 1)
          .append("\" data-threshold=\"")
          .append(esc(acted.threshold().id()))
          .append("\" d=\"M")
          .append(f(cx))
          .append(' ')
          .append(f(cy - 7))
          .append("L")
          .append(f(cx + 7))
          .append(' ')
          .append(f(cy))
          .append("L")
          .append(f(cx))
          .append(' ')
          .append(f(cy + 7))
          .append("L")
          .append(f(cx - 7))
          .append(' ')
          .append(f(cy))
          .append("Z\" fill=\"#8c1d18\" stroke=\"#ffffff\"><title>")
          .append(
              esc(
                  "step "
                      + (i + 1)
                      + " t="
                      + t(p.now())
                      + ": acting on "
                      + acted.threshold().id()
                      + " < "
                      + acted.quantity()
                      + (p.reclaimed().isEmpty() ? "" : "; " + reclaim(p))))
          .append("</title></path>\n");
    }
  }

  /** Labels at the right end of the lines, moved apart so that none overlaps another. */
  private void rightColumn(List<double[]> ys, List<String[]> texts, int plotTop, int plotBottom) {
    Integer[] order = new Integer[ys.size()];
    for (int i = 0; i < order.length; i++) {
      order[i] = i;
    }
    java.util.Arrays.sort(order, (a, b) -> Double.compare(ys.get(a)[0], ys.get(b)[0]));
    double[] placed = new double[order.length];
    double prev = plotTop - 4;
    for (int k = 0; k < order.length; k++) {
      double want = ys.get(order[k])[0] + 4;
      placed[k] = Math.max(want, prev + 13);
      prev = placed[k];
    }
    // pushed past the bottom: shift the whole column up
    double overflow = prev - (plotBottom + 4);
    if (overflow > 0) {
      for (int k = 0; k < placed.length; k++) {
        placed[k] -= overflow;
      }
    }
    for (int k = 0; k < order.length; k++) {
      String[] tx = texts.get(order[k]);
      String fill =
          switch (tx[1]) {
            case "hard" -> "#cf222e";
            case "soft" -> "#9a6700";
            default -> "#0969da";
          };
      svg.append("<text class=\"line-label ")
          .append(tx[1])
          .append("\" x=\"")
          .append(WIDTH - RIGHT + 6)
          .append("\" y=\"")
          .append(f(placed[k]))
          .append("\" fill=\"")
          .append(fill)
          .append("\">")
          .append(esc(fit(tx[0], RIGHT - 10)))
          .append("<title>")
          .append(esc(tx[2]))
          .append("</title></text>\n");
    }
  }
}
