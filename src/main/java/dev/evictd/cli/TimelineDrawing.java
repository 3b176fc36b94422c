package dev.evictd.cli;

import static dev.evictd.cli.TimelineText.esc;
import static dev.evictd.cli.TimelineText.f;

import dev.evictd.api.EvictionPlan;
import dev.evictd.api.Signal;
import dev.evictd.cli.TimelineHtml.Input;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A part of a timeline picture that writes SVG elements: what it draws from (the timeline and its
 * layout) and the small elements every part uses (text, lines), appended in drawing order to one
 * shared SVG buffer.
 */
abstract class TimelineDrawing {
  final Timeline timeline;
  final Input in;
  final List<EvictionPlan> plans;
  final Map<Integer, List<String>> diffs;
  final TimelineLayout layout;
  final StringBuilder svg;

  TimelineDrawing(Timeline timeline, TimelineLayout layout, StringBuilder svg) {
    this.timeline = timeline;
    this.in = timeline.in();
    this.plans = timeline.plans();
    this.diffs = timeline.diffs();
    this.layout = layout;
    this.svg = svg;
  }

  final double sx(int step) {
    return layout.sx(step);
  }

  final double x(Instant i) {
    return layout.x(i);
  }

  final int laneHeight(Signal s) {
    return layout.laneHeight(s);
  }

  final String t(Instant i) {
    return timeline.t(i);
  }

  final void text(
      double x, double y, String anchor, String cls, String content, String tip, String weight) {
    svg.append("<text class=\"")
        .append(cls)
        .append("\" x=\"")
        .append(f(x))
        .append("\" y=\"")
        .append(f(y))
        .append("\" text-anchor=\"")
        .append(anchor)
        .append('"');
    if (weight != null) {
      svg.append(" font-weight=\"").append(weight).append("\" font-size=\"12\"");
    }
    svg.append(" fill=\"#1f2328\">").append(esc(content));
    if (tip != null) {
      svg.append("<title>").append(esc(tip)).append("</title>");
    }
    svg.append("</text>\n");
  }

  final void line(double x1, double y1, double x2, double y2, String cls, String s) {
    svg.append("<line class=\"")
        .append(cls)
        .append("\" x1=\"")
        .append(f(x1))
        .append("\" y1=\"")
        .append(f(y1))
        .append("\" x2=\"")
        .append(f(x2))
        .append("\" y2=\"")
        .append(f(y2))
        .append("\" stroke=\"")
        .append(s)
        .append("\"/>\n");
  }
}
