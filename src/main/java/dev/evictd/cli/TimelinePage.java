package dev.evictd.cli;

import static dev.evictd.cli.TimelineHtml.RANKING_ROWS;
import static dev.evictd.cli.TimelineText.conditions;
import static dev.evictd.cli.TimelineText.esc;
import static dev.evictd.cli.TimelineText.method;
import static dev.evictd.cli.TimelineText.reclaim;
import static dev.evictd.cli.TimelineText.thresholdState;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionPlan;
import dev.evictd.cli.TimelineHtml.Input;
import dev.evictd.cli.TimelineHtml.Run;
import dev.evictd.config.GoDuration;
import dev.evictd.engine.RuleSet;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The HTML page of a timeline: the heading and what the page was made from, the configuration, the
 * picture ({@link TimelineSvg}) with its legend, and the tables of steps, evictions, differences
 * between the rule sets and rankings; its style sheet is inline, as the page allows no fetch.
 */
final class TimelinePage {
  private final Timeline timeline;
  private final Input in;
  private final List<EvictionPlan> plans;
  private final Map<Integer, List<String>> diffs;

  private TimelinePage(Timeline timeline) {
    this.timeline = timeline;
    this.in = timeline.in();
    this.plans = timeline.plans();
    this.diffs = timeline.diffs();
  }

  /** The page of {@code timeline}. */
  static String render(Timeline timeline) {
    return new TimelinePage(timeline).page();
  }

  private String t(Instant i) {
    return timeline.t(i);
  }

  // ---- the page

  private String page() {
    StringBuilder h = new StringBuilder(16_384);
    h.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
        .append("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none';")
        .append(" style-src 'unsafe-inline'\">\n")
        .append("<title>evictd timeline: ")
        .append(esc(in.title()))
        .append("</title>\n<style>\n")
        .append(CSS)
        .append("</style>\n</head>\n<body>\n<h1>")
        .append(esc(in.title()))
        .append("</h1>\n");
    if (in.description() != null && !in.description().isBlank()) {
      String d = in.description().strip();
      // a long story (the ported kubelet cases have them) folds away so that the picture leads
      if (d.length() > 320) {
        h.append("<details class=\"description\"><summary>")
            .append(esc(d.substring(0, 200)))
            .append("…</summary>")
            .append(esc(d))
            .append("</details>\n");
      } else {
        h.append("<p class=\"description\">").append(esc(d)).append("</p>\n");
      }
    }
    h.append("<p class=\"meta\">").append(esc(in.source())).append("<br>rules ");
    rulesLine(h, in.a().rules());
    if (in.b() != null) {
      h.append("<br>against ");
      rulesLine(h, in.b().rules());
      h.append(
          diffs.isEmpty()
              ? " — the two rule sets decide the same at every step"
              : " — they decide differently at " + diffs.size() + " of " + plans.size() + " steps");
    }
    if (in.result() != null) {
      h.append("<br>result ").append(esc(in.result()));
    }
    h.append("</p>\n");
    configSection(h);
    h.append("<figure>\n").append(TimelineSvg.render(timeline)).append("<figcaption>");
    legend(h);
    h.append("</figcaption>\n</figure>\n");
    stepsTable(h);
    evictionsTable(h, "Evictions", in.a());
    if (in.b() != null) {
      diffTable(h);
      evictionsTable(h, "Evictions with the rules compared against", in.b());
    }
    rankingTables(h);
    h.append("</body>\n</html>\n");
    return h.toString();
  }

  private static void rulesLine(StringBuilder h, RuleSet rs) {
    h.append("<code>")
        .append(esc(rs.source()))
        .append("</code> sha256 <code>")
        .append(esc(rs.sha256().substring(0, Math.min(12, rs.sha256().length()))))
        .append("</code>");
  }

  private void configSection(StringBuilder h) {
    EvictionConfig c = in.config();
    h.append("<p class=\"meta\">node <code>")
        .append(esc(c.nodeName()))
        .append("</code>, filesystem layout ")
        .append(esc(c.fsLayout().key()))
        .append(", pressure transition period ")
        .append(esc(GoDuration.format(c.pressureTransitionPeriod())))
        .append(", max soft grace ")
        .append(c.maxPodGracePeriodSeconds())
        .append("s; thresholds: ");
    if (c.thresholds().isEmpty()) {
      h.append("none");
    }
    h.append(
        c.thresholds().stream()
            .map(t -> "<code>" + esc(PlanText.describe(t)) + "</code>")
            .collect(Collectors.joining(", ")));
    h.append("</p>\n");
  }

  private void legend(StringBuilder h) {
    h.append("<span class=\"key\"><i class=\"sw avail\"></i>available amount</span>")
        .append("<span class=\"key\"><i class=\"sw hard\"></i>hard threshold</span>")
        .append("<span class=\"key\"><i class=\"sw soft\"></i>soft threshold</span>")
        .append("<span class=\"key\"><i class=\"sw grace\"></i>soft grace period running</span>")
        .append("<span class=\"key\"><i class=\"sw acted\"></i>threshold acted on</span>")
        .append("<span class=\"key\"><i class=\"sw cond\"></i>node condition True</span>")
        .append("<span class=\"key\"><i class=\"sw reclaim\"></i>node-level reclaim</span>")
        .append("<span class=\"key\"><i class=\"sw evict\"></i>eviction</span>")
        .append("<span class=\"key\"><i class=\"sw failed\"></i>failed sync</span>");
    if (in.b() != null) {
      h.append("<span class=\"key\"><i class=\"sw diff\"></i>the rule sets differ</span>");
    }
    h.append(" Hover a marker for details; every value is in the tables below.");
  }

  private void stepsTable(StringBuilder h) {
    h.append("<h2>Steps</h2>\n<table class=\"steps\">\n<thead><tr><th>step</th><th>t</th>")
        .append("<th>signals</th><th>thresholds in effect</th><th>conditions</th>")
        .append("<th>acting on</th><th>reclaim</th><th>evicted</th></tr></thead>\n<tbody>\n");
    for (int i = 0; i < plans.size(); i++) {
      EvictionPlan p = plans.get(i);
      h.append("<tr").append(diffs.containsKey(i) ? " class=\"differs\"" : "").append("><td>");
      h.append(i + 1).append("</td><td>").append(esc(t(p.now()))).append("</td><td>");
      h.append(
          p.observations().stream()
              .map(o -> esc(o.signal().key() + " " + o.availableQuantity()))
              .collect(Collectors.joining("<br>")));
      h.append("</td><td>");
      h.append(
          p.thresholds().stream()
              .filter(EvictionPlan.ThresholdStatus::active)
              .map(s -> esc(thresholdState(s)))
              .collect(Collectors.joining("<br>")));
      h.append("</td><td>").append(esc(conditions(p.conditions()))).append("</td><td>");
      h.append(p.signal() == null ? "" : esc(p.signal().key())).append("</td><td>");
      if (!p.reclaimed().isEmpty()) {
        h.append(esc(reclaim(p)));
      }
      h.append("</td><td>");
      if (p.failed()) {
        h.append("<b>sync failed:</b> ").append(esc(p.failure()));
      } else {
        h.append(
            p.decisions().isEmpty()
                ? "none"
                : p.decisions().stream()
                    .map(d -> esc(d.pod().key()))
                    .collect(Collectors.joining("<br>")));
      }
      h.append("</td></tr>\n");
    }
    h.append("</tbody>\n</table>\n");
  }

  private void evictionsTable(StringBuilder h, String heading, Run run) {
    h.append("<h2>").append(esc(heading)).append("</h2>\n");
    int count = run.plans().stream().mapToInt(p -> p.decisions().size()).sum();
    if (count == 0) {
      h.append("<p>No pod was evicted.</p>\n");
      return;
    }
    h.append("<table class=\"evictions\">\n<thead><tr><th>step</th><th>t</th><th>pod</th>")
        .append("<th>grace</th><th>signal</th><th>method</th><th>message</th>")
        .append("<th>rule trail (deciding rule first)</th></tr></thead>\n<tbody>\n");
    for (int i = 0; i < run.plans().size(); i++) {
      EvictionPlan p = run.plans().get(i);
      for (EvictionDecision d : p.decisions()) {
        h.append("<tr><td>")
            .append(i + 1)
            .append("</td><td>")
            .append(esc(t(p.now())))
            .append("</td><td><code>")
            .append(esc(d.pod().key()))
            .append("</code></td><td>")
            .append(d.gracePeriodSeconds())
            .append("s</td><td>")
            .append(esc(d.signal()))
            .append("</td><td>")
            .append(esc(method(d)))
            .append("</td><td>")
            .append(esc(d.message()))
            .append("</td><td>")
            .append(esc(String.join(" \u2190 ", d.rules())))
            .append("</td></tr>\n");
      }
    }
    h.append("</tbody>\n</table>\n");
  }

  private void diffTable(StringBuilder h) {
    h.append("<h2>Where the rule sets decide differently</h2>\n");
    if (diffs.isEmpty()) {
      h.append("<p>Nowhere: same conditions, signal, reclaim, ranking and evictions.</p>\n");
      return;
    }
    h.append("<p>Each line: what <code>")
        .append(esc(in.a().rules().source()))
        .append("</code> decides | what <code>")
        .append(esc(in.b().rules().source()))
        .append("</code> decides.</p>\n<table class=\"diffs\">\n")
        .append("<thead><tr><th>step</th><th>t</th><th>difference</th></tr></thead>\n<tbody>\n");
    diffs.forEach(
        (i, d) ->
            h.append("<tr><td>")
                .append(i + 1)
                .append("</td><td>")
                .append(esc(t(plans.get(i).now())))
                .append("</td><td>")
                .append(
                    d.stream()
                        .map(s -> esc(s.substring(s.indexOf(": ") + 2)))
                        .collect(Collectors.joining("<br>")))
                .append("</td></tr>\n"));
    h.append("</tbody>\n</table>\n");
  }

  private void rankingTables(StringBuilder h) {
    boolean any = false;
    for (int i = 0; i < plans.size(); i++) {
      EvictionPlan p = plans.get(i);
      if (p.ranking().isEmpty()) {
        continue;
      }
      if (!any) {
        h.append("<h2>Ranking at each acting step</h2>\n");
        any = true;
      }
      List<String> evicted = p.decisions().stream().map(d -> d.pod().uid()).toList();
      h.append("<h3>step ")
          .append(i + 1)
          .append(" (t=")
          .append(esc(t(p.now())))
          .append("), acting on ")
          .append(p.signal() == null ? "local storage" : esc(p.signal().key()))
          .append(": ")
          .append(String.format(Locale.ROOT, "%,d", p.ranking().size()))
          .append(" pods ranked</h3>\n<table class=\"ranking\">\n")
          .append("<thead><tr><th>#</th><th>pod</th><th>rank keys, most significant first</th>")
          .append("<th></th></tr></thead>\n<tbody>\n");
      int n = Math.min(RANKING_ROWS, p.ranking().size());
      for (int r = 0; r < n; r++) {
        EvictionPlan.RankedPod rp = p.ranking().get(r);
        h.append("<tr><td>")
            .append(r + 1)
            .append("</td><td><code>")
            .append(esc(rp.pod().key()))
            .append("</code></td><td>")
            .append(
                esc(
                    rp.key().stream()
                        .map(c -> c.name() + "=" + c.shownValue())
                        .collect(Collectors.joining("  "))))
            .append("</td><td>");
        if (evicted.contains(rp.pod().uid())) {
          h.append("<b>evicted</b>");
        } else if (rp.exemptReason() != null) {
          h.append("exempt: ").append(esc(rp.exemptReason()));
        }
        h.append("</td></tr>\n");
      }
      h.append("</tbody>\n</table>\n");
      if (n < p.ranking().size()) {
        h.append("<p class=\"more\">\u2026 and ")
            .append(String.format(Locale.ROOT, "%,d", p.ranking().size() - n))
            .append(" more pods (")
            .append(String.format(Locale.ROOT, "%,d", p.ranking().size()))
            .append(
                " ranked; the text of <code>evictd replay --full-ranking</code> or <code>evictd plan</code>"
                    + " lists them all)</p>\n");
      }
    }
  }

  private static final String CSS =
      """
      body { font-family: "DejaVu Sans", "Liberation Sans", Arial, sans-serif; font-size: 13px;
             color: #1f2328; margin: 16px 24px; max-width: 1240px; }
      h1 { font-size: 20px; margin: 0 0 6px; }
      h2 { font-size: 16px; margin: 22px 0 6px; }
      h3 { font-size: 13px; margin: 14px 0 4px; }
      p.meta, .description { margin: 2px 0 6px; color: #57606a; }
      summary { cursor: pointer; }
      code { font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 12px; }
      figure { margin: 10px 0; }
      figcaption { color: #57606a; margin-top: 4px; }
      .key { margin-right: 14px; white-space: nowrap; }
      .sw { display: inline-block; width: 14px; height: 10px; margin-right: 4px; vertical-align: -1px; }
      .sw.avail { background: #0969da; height: 3px; vertical-align: 3px; }
      .sw.hard { border-top: 2px dashed #cf222e; height: 0; vertical-align: 3px; }
      .sw.soft { border-top: 2px dashed #bf8700; height: 0; vertical-align: 3px; }
      .sw.grace { background: rgba(212, 167, 44, 0.35); }
      .sw.acted { background: #8c1d18; width: 9px; height: 9px; transform: rotate(45deg); }
      .sw.cond { background: #8250df; }
      .sw.reclaim { background: #1a7f37; width: 10px; }
      .sw.evict { background: #cf222e; width: 10px; border-radius: 50%; }
      .sw.failed { background: none; border: 2px solid #cf222e; width: 7px; height: 7px; }
      .sw.diff { background: rgba(191, 57, 137, 0.3); }
      table { border-collapse: collapse; margin: 4px 0 8px; }
      th, td { border: 1px solid #d0d7de; padding: 3px 7px; text-align: left; vertical-align: top; }
      th { background: #f6f8fa; }
      tr.differs td { background: #fbeff5; }
      p.more { color: #57606a; margin: 0 0 8px; }
      td code { white-space: nowrap; }
      """;
}
