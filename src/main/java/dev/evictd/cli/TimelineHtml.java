package dev.evictd.cli;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionPlan;
import dev.evictd.cli.TimelineHtml.Input;
import dev.evictd.cli.TimelineHtml.Run;
import dev.evictd.engine.RuleSet;
import java.time.Instant;
import java.util.List;

/**
 * Renders the plans of a replay (or of one {@code plan} sync) as one self-contained HTML page: an
 * SVG timeline (a lane per signal with its thresholds and soft grace windows, the node conditions
 * as bands, node reclaim and evictions as markers) and tables below it (steps, evictions with their
 * rule trail, the ranking at each acting step, and where a second rule set decides differently).
 *
 * <p>Every string that comes from a fixture, a capture or the rules (pod names, messages, rule
 * names) is untrusted: it is escaped wherever it is written, and the page's content security policy
 * forbids scripts and every network fetch besides.
 *
 * <p>The work is shared out: {@link Timeline} is what is drawn (the steps, and where a second rule
 * set decides differently), {@link TimelinePage} the HTML around the picture and its tables, {@link
 * TimelineSvg} the picture with its axis and condition bands, {@link TimelineSignalLane} and {@link
 * TimelineEventsLane} its lanes, {@link TimelineLayout} where things sit, and {@link TimelineText}
 * how values are written and escaped.
 */
final class TimelineHtml {
  /** Ranked pods listed per acting step; the rest is counted. */
  static final int RANKING_ROWS = 10;

  /** Evictions drawn per step and rule set; the rest is counted (all are in the table). */
  static final int EVICTION_MARKERS = 4;

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

  private TimelineHtml() {}

  /** The page. */
  static String render(Input in) {
    return TimelinePage.render(Timeline.of(in));
  }

  /** Writes the page to {@code file}; a file that cannot be written is a one-line error. */
  static void write(java.nio.file.Path file, String page) {
    try {
      java.nio.file.Files.writeString(file, page, java.nio.charset.StandardCharsets.UTF_8);
    } catch (java.io.IOException e) {
      throw new dev.evictd.api.ConfigException(
          "--html " + file + ": " + dev.evictd.config.IoErrors.cannotWrite(file, e));
    }
  }

  /** Escapes text for HTML and XML (see {@link TimelineText#esc}). */
  static String esc(String s) {
    return TimelineText.esc(s);
  }
}
