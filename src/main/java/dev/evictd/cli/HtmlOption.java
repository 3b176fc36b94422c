package dev.evictd.cli;

import dev.evictd.api.ConfigException;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The {@code --html FILE} and {@code --against DIR} options of plan and replay: the result as one
 * self-contained page, optionally with a second rule set drawn over it.
 */
final class HtmlOption {
  @Option(
      names = "--html",
      converter = Converters.OutputFile.class,
      paramLabel = "FILE",
      description =
          "Write the sync (plan) or the timeline (replay) as one self-contained HTML page (an SVG"
              + " picture and tables).")
  Path html;

  @Option(
      names = "--against",
      converter = Converters.NotEmpty.class,
      paramLabel = "DIR",
      description =
          "With --html: a second rule set (\"default\": the packaged rules) drawn over the first"
              + " where the two decide differently.")
  String against;

  /** Whether a page is asked for; refuses {@code --against} without one. */
  boolean wanted() {
    if (against != null && html == null) {
      throw new ConfigException("--against needs --html (evictd diff compares rule sets as text)");
    }
    return html != null;
  }
}
