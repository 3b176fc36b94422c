package dev.evictd.cli;

import static dev.evictd.cli.TimelineHtml.EVICTION_MARKERS;
import static dev.evictd.cli.TimelineLayout.EVENT_ROW;
import static dev.evictd.cli.TimelineLayout.LEFT;
import static dev.evictd.cli.TimelineLayout.RIGHT;
import static dev.evictd.cli.TimelineLayout.WIDTH;
import static dev.evictd.cli.TimelineText.esc;
import static dev.evictd.cli.TimelineText.f;
import static dev.evictd.cli.TimelineText.fit;
import static dev.evictd.cli.TimelineText.method;
import static dev.evictd.cli.TimelineText.reclaim;
import static dev.evictd.cli.TimelineText.reclaimShort;

import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionPlan;
import dev.evictd.cli.TimelineHtml.Run;
import java.util.List;

/**
 * The lane of a timeline picture that marks, at each step and for each rule set, node-level
 * reclaim, failed syncs and the first evictions (the rest counted), each labelled as far as the
 * room up to the next marker allows.
 */
final class TimelineEventsLane extends TimelineDrawing {

  TimelineEventsLane(Timeline timeline, TimelineLayout layout, StringBuilder svg) {
    super(timeline, layout, svg);
  }

  /** Draws the lane with its top at {@code top}. */
  void draw(int top) {
    svg.append("<g class=\"lane events\">\n");
    text(10, top + 14, "start", "lane-title", "reclaim and evictions", null, "bold");
    int rowTop = top + 22;
    rowTop = eventRowsOf(in.a(), in.b() == null ? null : "rules", rowTop);
    if (in.b() != null) {
      eventRowsOf(in.b(), "against", rowTop + EVENT_ROW);
    }
    svg.append("</g>\n");
  }

  /** The rows {@code r}'s markers need: the busiest step's. */
  static int eventRows(Run r) {
    int rows = 1;
    for (EvictionPlan p : r.plans()) {
      int n = Math.min(p.decisions().size(), EVICTION_MARKERS);
      if (p.decisions().size() > EVICTION_MARKERS) {
        n++;
      }
      rows = Math.max(rows, (p.reclaimed().isEmpty() && !p.failed() ? 0 : 1) + n);
    }
    return rows;
  }

  /** Draws one rule set's markers from {@code rowTop}; returns the row under the last one. */
  private int eventRowsOf(Run run, String who, int rowTop) {
    int rows = eventRows(run);
    if (who != null) {
      text(LEFT - 6, rowTop + 12, "end", "event-label", who, null, null);
    }
    svg.append("<rect class=\"event-rows\" x=\"")
        .append(LEFT)
        .append("\" y=\"")
        .append(rowTop)
        .append("\" width=\"")
        .append(WIDTH - LEFT - RIGHT)
        .append("\" height=\"")
        .append(rows * EVENT_ROW)
        .append("\" fill=\"#f6f8fa\"/>\n");
    List<EvictionPlan> ps = run.plans();
    for (int i = 0; i < ps.size(); i++) {
      EvictionPlan p = ps.get(i);
      double x = sx(i);
      double room = labelRoom(ps, i);
      int row = 0;
      if (p.failed()) {
        double cy = rowTop + EVENT_ROW / 2.0;
        svg.append("<path class=\"failed\" data-step=\"")
            .append(i + 1)
            .append("\" d=\"M")
            .append(f(x - 5))
            .append(' ')
            .append(f(cy - 5))
            .append("L")
            .append(f(x + 5))
            .append(' ')
            .append(f(cy + 5))
            .append("M")
            .append(f(x + 5))
            .append(' ')
            .append(f(cy - 5))
            .append("L")
            .append(f(x - 5))
            .append(' ')
            .append(f(cy + 5))
            .append("\" stroke=\"#cf222e\" stroke-width=\"2.5\"><title>")
            .append(esc("step " + (i + 1) + ": sync failed: " + p.failure()))
            .append("</title></path>\n");
        markerLabel(x, cy, room, null, "sync failed");
        row++;
      } else if (!p.reclaimed().isEmpty()) {
        double cy = rowTop + EVENT_ROW / 2.0;
        String tip = "step " + (i + 1) + " t=" + t(p.now()) + ": " + reclaim(p);
        svg.append("<rect class=\"reclaim\" data-step=\"")
            .append(i + 1)
            .append("\" x=\"")
            .append(f(x - 5))
            .append("\" y=\"")
            .append(f(cy - 5))
            .append("\" width=\"10\" height=\"10\" fill=\"#1a7f37\"><title>")
            .append(esc(tip))
            .append("</title></rect>\n");
        markerLabel(x, cy, room, tip, "reclaim " + reclaimShort(p));
        row++;
      }
      List<EvictionDecision> ds = p.decisions();
      for (int k = 0; k < ds.size() && k < EVICTION_MARKERS; k++) {
        EvictionDecision d = ds.get(k);
        double cy = rowTop + row * EVENT_ROW + EVENT_ROW / 2.0;
        String tip = evictionTip(i, p, d);
        svg.append("<circle class=\"eviction\" data-step=\"")
            .append(i + 1)
            .append("\" data-pod=\"")
            .append(esc(d.pod().key()))
            .append("\" cx=\"")
            .append(f(x))
            .append("\" cy=\"")
            .append(f(cy))
            .append("\" r=\"5.5\" fill=\"#cf222e\" stroke=\"#ffffff\"><title>")
            .append(esc(tip))
            .append("</title></circle>\n");
        markerLabel(
            x,
            cy,
            room,
            tip,
            d.pod().key() + " · grace " + d.gracePeriodSeconds() + "s",
            d.pod().name() + " · " + d.gracePeriodSeconds() + "s",
            d.pod().name());
        row++;
      }
      if (ds.size() > EVICTION_MARKERS) {
        double cy = rowTop + row * EVENT_ROW + EVENT_ROW / 2.0;
        markerLabel(
            x - 8,
            cy,
            room + 8,
            "+" + (ds.size() - EVICTION_MARKERS) + " more (table below)",
            null);
      }
    }
    return rowTop + rows * EVENT_ROW;
  }

  /** How wide a label right of step {@code i}'s marker may be: up to the next marker. */
  private double labelRoom(List<EvictionPlan> ps, int i) {
    double x = sx(i);
    double limit = WIDTH - 4;
    for (int j = i + 1; j < ps.size(); j++) {
      EvictionPlan q = ps.get(j);
      if (!q.decisions().isEmpty() || !q.reclaimed().isEmpty() || q.failed()) {
        limit = Math.min(limit, sx(j) - 8);
        break;
      }
    }
    return limit - (x + 9);
  }

  /** The first of {@code labels} that fits the room, else the last one cut to it. */
  private void markerLabel(double x, double cy, double room, String tip, String... labels) {
    String shown = "";
    for (String l : labels) {
      shown = fit(l, room);
      if (shown.equals(l)) {
        break;
      }
    }
    if (!shown.isEmpty()) {
      text(x + 9, cy + 4, "start", "marker-label", shown, tip, null);
    }
  }

  private String evictionTip(int i, EvictionPlan p, EvictionDecision d) {
    return "step "
        + (i + 1)
        + " t="
        + t(p.now())
        + ": evicted "
        + d.pod().key()
        + "\ngrace period "
        + d.gracePeriodSeconds()
        + "s, "
        + d.signal()
        + ", method "
        + method(d)
        + "\n"
        + d.message()
        + (d.rules().isEmpty() ? "" : "\nrules: " + String.join(" \u2190 ", d.rules()));
  }
}
