package dev.evictd.cli;

import static dev.evictd.cli.TimelineLayout.AXIS_HEIGHT;
import static dev.evictd.cli.TimelineLayout.CONDITION_ROW;
import static dev.evictd.cli.TimelineLayout.EVENT_ROW;
import static dev.evictd.cli.TimelineLayout.LANE_GAP;
import static dev.evictd.cli.TimelineLayout.LEFT;
import static dev.evictd.cli.TimelineLayout.PLOT_BOTTOM;
import static dev.evictd.cli.TimelineLayout.RIGHT;
import static dev.evictd.cli.TimelineLayout.WIDTH;
import static dev.evictd.cli.TimelineText.CHAR;
import static dev.evictd.cli.TimelineText.esc;
import static dev.evictd.cli.TimelineText.f;

import dev.evictd.api.EvictionPlan;
import dev.evictd.api.NodeConditionType;
import dev.evictd.api.Signal;
import dev.evictd.cli.TimelineHtml.Run;
import java.util.List;

/**
 * The SVG picture of a timeline: its size, the comparison bands and the time axis, then a lane per
 * signal ({@link TimelineSignalLane}), the node conditions as bands, and the reclaim and eviction
 * markers ({@link TimelineEventsLane}).
 */
final class TimelineSvg extends TimelineDrawing {

  private TimelineSvg(Timeline timeline) {
    super(timeline, new TimelineLayout(timeline), new StringBuilder());
  }

  /** The {@code <svg>} element of {@code timeline}. */
  static String render(Timeline timeline) {
    return new TimelineSvg(timeline).svg();
  }

  private String svg() {
    List<Signal> signals = timeline.signals();
    List<NodeConditionType> conds = timeline.conditionRows(signals);
    int eventRows =
        TimelineEventsLane.eventRows(in.a())
            + (in.b() == null ? 0 : TimelineEventsLane.eventRows(in.b()) + 1);
    int conditionsHeight =
        PLOT_BOTTOM + 18 + conds.size() * (in.b() == null ? 1 : 2) * CONDITION_ROW;
    int eventsHeight = 18 + eventRows * EVENT_ROW + PLOT_BOTTOM;
    int height =
        AXIS_HEIGHT
            + signals.stream().mapToInt(s -> laneHeight(s) + LANE_GAP).sum()
            + conditionsHeight
            + LANE_GAP
            + eventsHeight
            + 24;
    svg.append("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" width=\"")
        .append(WIDTH)
        .append("\" height=\"")
        .append(height)
        .append("\" viewBox=\"0 0 ")
        .append(WIDTH)
        .append(' ')
        .append(height)
        .append("\" font-family=\"DejaVu Sans, Liberation Sans, Arial, sans-serif\"")
        .append(" font-size=\"11\">\n")
        .append("<rect class=\"background\" x=\"0\" y=\"0\" width=\"")
        .append(WIDTH)
        .append("\" height=\"")
        .append(height)
        .append("\" fill=\"#ffffff\"/>\n");
    int y = AXIS_HEIGHT;
    int bottom = height - 24;
    diffBands(y - 6, bottom);
    axis(y, bottom);
    for (Signal s : signals) {
      new TimelineSignalLane(timeline, layout, svg).draw(s, y);
      y += laneHeight(s) + LANE_GAP;
    }
    conditionsLane(conds, y);
    y += conditionsHeight + LANE_GAP;
    new TimelineEventsLane(timeline, layout, svg).draw(y);
    svg.append("</svg>\n");
    return svg.toString();
  }

  private void axis(int top, int bottom) {
    svg.append("<g class=\"axis\">\n");
    line(LEFT, top, WIDTH - RIGHT, top, "axis-line", "#57606a");
    double[] rowEnd = {Double.NEGATIVE_INFINITY};
    for (int i = 0; i < plans.size(); i++) {
      EvictionPlan p = plans.get(i);
      double x = sx(i);
      String tip = "step " + (i + 1) + " at t=" + t(p.now()) + " (" + p.now() + ")";
      svg.append("<line class=\"step\" x1=\"")
          .append(f(x))
          .append("\" y1=\"")
          .append(top)
          .append("\" x2=\"")
          .append(f(x))
          .append("\" y2=\"")
          .append(bottom)
          .append("\" stroke=\"#d0d7de\" stroke-dasharray=\"2 3\"><title>")
          .append(esc(tip))
          .append("</title></line>\n");
      // two lines, "step N" over "t=...": narrow enough for the minimum gap
      String l1 = "step " + (i + 1);
      String l2 = "t=" + t(p.now());
      double w = Math.max(l1.length(), l2.length()) * CHAR;
      if (x - w / 2 > rowEnd[0] + 4) {
        double lx = Math.min(Math.max(x, w / 2 + 2), WIDTH - w / 2 - 2);
        text(lx, top - 26, "middle", "step-label", l1, tip, null);
        text(lx, top - 12, "middle", "step-time", l2, tip, null);
        rowEnd[0] = lx + w / 2;
      }
    }
    // where the rule sets differ: a mark on the axis too, as lanes drawn later cover the band
    diffs.forEach(
        (i, d) -> {
          double x = sx(i);
          svg.append("<path class=\"diff-mark\" data-step=\"")
              .append(i + 1)
              .append("\" d=\"M")
              .append(f(x - 6))
              .append(' ')
              .append(top - 5)
              .append("L")
              .append(f(x + 6))
              .append(' ')
              .append(top - 5)
              .append("L")
              .append(f(x))
              .append(' ')
              .append(top + 5)
              .append("Z\" fill=\"#bf3989\"><title>")
              .append(esc(String.join("\n", d)))
              .append("</title></path>\n");
        });
    svg.append("</g>\n");
  }

  private void diffBands(int top, int bottom) {
    diffs.forEach(
        (i, d) -> {
          double x = sx(i);
          svg.append("<rect class=\"diff\" data-step=\"")
              .append(i + 1)
              .append("\" x=\"")
              .append(f(x - 7))
              .append("\" y=\"")
              .append(top)
              .append("\" width=\"14\" height=\"")
              .append(bottom - top)
              .append("\" fill=\"#bf3989\" fill-opacity=\"0.16\"><title>")
              .append(esc(String.join("\n", d)))
              .append("</title></rect>\n");
        });
  }

  private void conditionsLane(List<NodeConditionType> conds, int top) {
    svg.append("<g class=\"lane conditions\">\n");
    text(10, top + 14, "start", "lane-title", "node conditions", null, "bold");
    int rowTop = top + 22;
    for (NodeConditionType c : conds) {
      for (int r = 0; r < (in.b() == null ? 1 : 2); r++) {
        Run run = r == 0 ? in.a() : in.b();
        String label = in.b() == null ? c.name() : c.name() + (r == 0 ? " (rules)" : " (against)");
        text(LEFT - 6, rowTop + 13, "end", "condition-label", label, null, null);
        svg.append("<rect class=\"condition-row\" x=\"")
            .append(LEFT)
            .append("\" y=\"")
            .append(rowTop + 2)
            .append("\" width=\"")
            .append(WIDTH - LEFT - RIGHT)
            .append("\" height=\"")
            .append(CONDITION_ROW - 4)
            .append("\" fill=\"#f6f8fa\"/>\n");
        List<EvictionPlan> ps = run.plans();
        for (int i = 0; i < ps.size(); i++) {
          if (!ps.get(i).conditions().contains(c)) {
            continue;
          }
          int j = i;
          while (j + 1 < ps.size() && ps.get(j + 1).conditions().contains(c)) {
            j++;
          }
          double x0 = sx(i);
          double x1 = j + 1 < ps.size() ? sx(j + 1) : WIDTH - RIGHT;
          String tip =
              c.name()
                  + " True from step "
                  + (i + 1)
                  + " (t="
                  + t(ps.get(i).now())
                  + ")"
                  + (j + 1 < ps.size()
                      ? " until step " + (j + 2) + " (t=" + t(ps.get(j + 1).now()) + ")"
                      : " to the last step");
          svg.append("<rect class=\"condition\" data-condition=\"")
              .append(c.name())
              .append("\" x=\"")
              .append(f(x0))
              .append("\" y=\"")
              .append(rowTop + 2)
              .append("\" width=\"")
              .append(f(Math.max(2, x1 - x0)))
              .append("\" height=\"")
              .append(CONDITION_ROW - 4)
              .append("\" fill=\"")
              .append(conditionColour(c))
              .append("\" fill-opacity=\"0.75\"><title>")
              .append(esc(tip))
              .append("</title></rect>\n");
          i = j;
        }
        rowTop += CONDITION_ROW;
      }
    }
    svg.append("</g>\n");
  }

  private static String conditionColour(NodeConditionType c) {
    return switch (c) {
      case MemoryPressure -> "#8250df";
      case DiskPressure -> "#bc4c00";
      case PIDPressure -> "#1a7f37";
    };
  }
}
