package dev.evictd.cli;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.NodeConditionType;
import dev.evictd.api.Observation;
import dev.evictd.api.Quantity;
import dev.evictd.api.Signal;
import dev.evictd.api.Threshold;
import dev.evictd.config.GoDuration;
import dev.evictd.engine.RuleSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Renders the plans of a replay (or of one {@code plan} sync) as one self-contained HTML page: an
 * SVG timeline (a lane per signal with its thresholds and soft grace windows, the node conditions
 * as bands, node reclaim and evictions as markers) and tables below it (steps, evictions with their
 * rule trail, the ranking at each acting step, and where a second rule set decides differently).
 *
 * <p>Every string that comes from a fixture, a capture or the rules (pod names, messages, rule
 * names) is untrusted: it is escaped wherever it is written, and the page's content security policy
 * forbids scripts and every network fetch besides.
 */
final class TimelineHtml {
  /** Ranked pods listed per acting step; the rest is counted. */
  static final int RANKING_ROWS = 10;

  /** Evictions drawn per step and rule set; the rest is counted (all are in the table). */
  static final int EVICTION_MARKERS = 4;

  static final int WIDTH = 1200;
  private static final int LEFT = 200;
  private static final int RIGHT = 210;
  private static final int AXIS_HEIGHT = 52;
  private static final int SIGNAL_LANE = 160;
  private static final int LANE_GAP = 16;
  private static final int PLOT_TOP = 40;
  private static final int PLOT_BOTTOM = 10;
  private static final int CONDITION_ROW = 20;
  private static final int QUIET_LANE = 96; // a signal without thresholds
  private static final int MIN_GAP = 62;
  private static final int STEP_PAD = 30;
  private static final int EVENT_ROW = 18;
  private static final double CHAR = 6.4; // average width of an 11px sans-serif character

  /**
   * One rule set's run.
   *
   * @param rules the rule set
   * @param plans its plan of every step, in order
   */
  record Run(RuleSet rules, List<EvictionPlan> plans) {}

  /**
   * What to draw.
   *
   * @param title the page's heading (the fixture's name, or the capture)
   * @param description a paragraph under the heading, or null
   * @param source the file or files the inputs came from
   * @param config the eviction configuration
   * @param start the time steps are measured from
   * @param a the rule set under test
   * @param b the rule set compared with ({@code --against}), or null
   * @param result the run's verdict (e.g. PASS), or null
   */
  record Input(
      String title,
      String description,
      String source,
      EvictionConfig config,
      Instant start,
      Run a,
      Run b,
      String result) {}

  private final Input in;
  private final List<EvictionPlan> plans;
  private final Map<Integer, List<String>> diffs = new LinkedHashMap<>();
  private final StringBuilder svg = new StringBuilder();
  private double[] stepSec = new double[0];
  private double[] stepX = new double[0];
  private double pxPerSecondAfter;

  private TimelineHtml(Input in) {
    this.in = in;
    this.plans = in.a().plans();
    if (in.b() != null) {
      int n = Math.min(plans.size(), in.b().plans().size());
      for (int i = 0; i < n; i++) {
        List<String> d = new ArrayList<>();
        DiffCommand.compare(i + 1, plans.get(i), in.b().plans().get(i), d);
        if (!d.isEmpty()) {
          diffs.put(i, d);
        }
      }
    }
  }

  /** The page. */
  static String render(Input in) {
    return new TimelineHtml(in).page();
  }

  /** Writes the page to {@code file}; a file that cannot be written is a one-line error. */
  static void write(java.nio.file.Path file, String page) {
    try {
      java.nio.file.Files.writeString(file, page, java.nio.charset.StandardCharsets.UTF_8);
    } catch (java.io.IOException e) {
      throw new dev.evictd.api.ConfigException(
          "--html "
              + file
              + ": cannot write: "
              + e.getClass().getSimpleName()
              + " "
              + e.getMessage());
    }
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
    h.append("<figure>\n").append(svg()).append("<figcaption>");
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

  // ---- the picture

  private String svg() {
    List<Signal> signals = signals();
    List<NodeConditionType> conds = conditionRows(signals);
    int eventRows = eventRows(in.a()) + (in.b() == null ? 0 : eventRows(in.b()) + 1);
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
    domain();
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
      signalLane(s, y);
      y += laneHeight(s) + LANE_GAP;
    }
    conditionsLane(conds, y);
    y += conditionsHeight + LANE_GAP;
    eventsLane(y);
    svg.append("</svg>\n");
    return svg.toString();
  }

  /** A signal with thresholds gets the room to show them; one without, a smaller lane. */
  private int laneHeight(Signal s) {
    return in.config().thresholds().stream().anyMatch(t -> t.signal() == s)
        ? SIGNAL_LANE
        : QUIET_LANE;
  }

  /** The signals observed in any step, in the order the eviction manager handles them. */
  private List<Signal> signals() {
    Set<Signal> seen = EnumSet.noneOf(Signal.class);
    for (EvictionPlan p : plans) {
      p.observations().forEach(o -> seen.add(o.signal()));
    }
    return new ArrayList<>(seen);
  }

  private List<NodeConditionType> conditionRows(List<Signal> signals) {
    Set<NodeConditionType> rows = EnumSet.noneOf(NodeConditionType.class);
    signals.forEach(s -> rows.add(s.condition()));
    for (EvictionPlan p : allPlans()) {
      rows.addAll(p.conditions());
    }
    if (rows.isEmpty()) {
      rows.add(NodeConditionType.MemoryPressure);
    }
    return new ArrayList<>(rows);
  }

  private List<EvictionPlan> allPlans() {
    List<EvictionPlan> all = new ArrayList<>(plans);
    if (in.b() != null) {
      all.addAll(in.b().plans());
    }
    return all;
  }

  private static int eventRows(Run r) {
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

  /**
   * Where each step sits. Steps are what a fixture is made of, so each gap between two steps gets
   * room for its labels (a minimum width, even between syncs at the same time), and the rest of the
   * width is shared in proportion to the time that passed; a single step sits in the middle.
   */
  private void domain() {
    int n = plans.size();
    stepSec = new double[n];
    stepX = new double[n];
    for (int i = 0; i < n; i++) {
      stepSec[i] = seconds(plans.get(i).now());
    }
    double plot = WIDTH - LEFT - RIGHT;
    if (n <= 1) {
      if (n == 1) {
        stepX[0] = LEFT + plot / 2;
      }
      pxPerSecondAfter = plot / 2 / 60;
      return;
    }
    double inner = plot - 2 * STEP_PAD;
    double min = Math.min(MIN_GAP, inner / (n - 1));
    double total = stepSec[n - 1] - stepSec[0];
    double rest = inner - min * (n - 1);
    stepX[0] = LEFT + STEP_PAD;
    for (int i = 1; i < n; i++) {
      double gap = Math.max(0, stepSec[i] - stepSec[i - 1]);
      stepX[i] = stepX[i - 1] + min + (total > 0 ? gap / total * rest : rest / (n - 1));
    }
    double lastGap = stepSec[n - 1] - stepSec[n - 2];
    pxPerSecondAfter = lastGap > 0 ? (stepX[n - 1] - stepX[n - 2]) / lastGap : STEP_PAD / 5.0;
  }

  private double sx(int step) {
    return stepX[Math.min(step, stepX.length - 1)];
  }

  private double seconds(Instant i) {
    return Duration.between(in.start(), i).toMillis() / 1000.0;
  }

  private double x(Instant i) {
    return x(seconds(i));
  }

  /** A time on the axis: between the steps around it, linearly; past the last one, at its pace. */
  private double x(double s) {
    int n = stepX.length;
    double v;
    if (n == 0) {
      v = LEFT;
    } else if (s <= stepSec[0]) {
      v = stepX[0];
    } else if (s >= stepSec[n - 1]) {
      v = stepX[n - 1] + (s - stepSec[n - 1]) * pxPerSecondAfter;
    } else {
      int i = 0;
      while (i + 1 < n && stepSec[i + 1] < s) {
        i++;
      }
      double gap = stepSec[i + 1] - stepSec[i];
      v = gap <= 0 ? stepX[i] : stepX[i] + (s - stepSec[i]) / gap * (stepX[i + 1] - stepX[i]);
    }
    return Math.max(LEFT, Math.min(WIDTH - RIGHT, v));
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

  private void signalLane(Signal s, int top) {
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

  private void eventsLane(int top) {
    svg.append("<g class=\"lane events\">\n");
    text(10, top + 14, "start", "lane-title", "reclaim and evictions", null, "bold");
    int rowTop = top + 22;
    rowTop = eventRowsOf(in.a(), in.b() == null ? null : "rules", rowTop);
    if (in.b() != null) {
      eventRowsOf(in.b(), "against", rowTop + EVENT_ROW);
    }
    svg.append("</g>\n");
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

  // ---- small parts

  private void text(
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

  private void line(double x1, double y1, double x2, double y2, String cls, String s) {
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

  private static EvictionPlan.ThresholdStatus status(EvictionPlan p, Threshold th) {
    for (EvictionPlan.ThresholdStatus st : p.thresholds()) {
      if (st.threshold().id().equals(th.id())) {
        return st;
      }
    }
    return null;
  }

  private static long amount(Quantity q) {
    return q.toBigDecimal().min(java.math.BigDecimal.valueOf(Long.MAX_VALUE)).longValue();
  }

  private String t(Instant i) {
    Duration d = Duration.between(in.start(), i);
    return d.isNegative() ? "-" + GoDuration.format(d.negated()) : GoDuration.format(d);
  }

  private static String thresholdState(EvictionPlan.ThresholdStatus s) {
    StringBuilder sb = new StringBuilder(s.threshold().id());
    if (s.quantity() != null) {
      sb.append(" < ").append(s.quantity());
    }
    sb.append(s.met() ? ": met" : ": not yet resolved");
    if (!s.threshold().isHard()) {
      sb.append(s.gracePeriodMet() ? ", grace met" : ", in grace");
    }
    if (s.actionable()) {
      sb.append(", actionable");
    }
    return sb.toString();
  }

  private static String conditions(List<NodeConditionType> cs) {
    return cs.isEmpty() ? "none" : cs.stream().map(Enum::name).collect(Collectors.joining(", "));
  }

  private static String reclaim(EvictionPlan p) {
    return "node-level reclaim: "
        + reclaimShort(p)
        + (p.reclaimResolved() ? " (enough: no eviction)" : " (not enough)");
  }

  private static String reclaimShort(EvictionPlan p) {
    return p.reclaimed().stream().map(Object::toString).collect(Collectors.joining(", "));
  }

  private static String method(EvictionDecision d) {
    return d.method().name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /** Amounts as people read them: 1.5Gi, 350Mi; counts as 12.3k. */
  static String human(long v, Signal s) {
    String[] units = s.binaryUnits() ? new String[] {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"} : null;
    double base = s.binaryUnits() ? 1024 : 1000;
    if (units == null) {
      units = new String[] {"", "k", "M", "G", "T", "P", "E"};
    }
    double x = v;
    int u = 0;
    while (Math.abs(x) >= base && u < units.length - 1) {
      x /= base;
      u++;
    }
    String n =
        x >= 100 || u == 0
            ? String.format(Locale.ROOT, "%.0f", x)
            : x >= 10
                ? String.format(Locale.ROOT, "%.1f", x)
                : String.format(Locale.ROOT, "%.2f", x);
    if (n.contains(".")) {
      n = n.replaceAll("0+$", "").replaceAll("\\.$", "");
    }
    return n + units[u];
  }

  /** {@code s} cut to {@code px} of width with an ellipsis; empty when not even that fits. */
  static String fit(String s, double px) {
    int max = (int) Math.floor(px / CHAR);
    if (s.length() <= max) {
      return s;
    }
    return max < 6 ? "" : s.substring(0, max - 1) + "\u2026";
  }

  private static String f(double v) {
    return String.format(Locale.ROOT, "%.1f", v);
  }

  /**
   * Escapes text for HTML and XML content and attribute values. Characters XML cannot carry (C0
   * controls but tab and newline, lone surrogates, U+FFFE/U+FFFF) become U+FFFD, so the SVG stays
   * well-formed whatever a pod name or message holds.
   */
  static String esc(String s) {
    if (s == null) {
      return "";
    }
    StringBuilder b = new StringBuilder(s.length() + 16);
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '&' -> b.append("&amp;");
        case '<' -> b.append("&lt;");
        case '>' -> b.append("&gt;");
        case '"' -> b.append("&quot;");
        case '\'' -> b.append("&#39;");
        default -> {
          if (Character.isHighSurrogate(c)
              && i + 1 < s.length()
              && Character.isLowSurrogate(s.charAt(i + 1))) {
            b.append(c).append(s.charAt(++i));
          } else if ((c < 0x20 && c != '\t' && c != '\n')
              || Character.isSurrogate(c)
              || c == 0xFFFE
              || c == 0xFFFF
              || (c >= 0x7F && c < 0xA0)) {
            b.append('\uFFFD');
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.toString();
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
