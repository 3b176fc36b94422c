package dev.evictd.cli;

import dev.evictd.api.FsLayout;
import dev.evictd.fixture.CapturedInputs;
import dev.evictd.stats.Summary;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** The {@code --fs-layout} option of the commands that read a captured summary (plan, capture). */
final class FsLayoutOption {
  @Option(
      names = "--fs-layout",
      paramLabel = "LAYOUT",
      converter = Layouts.class,
      completionCandidates = Layouts.class,
      description = "shared, dedicated or split (default: inferred from the summary).")
  FsLayout layout;

  /** The layout given, else the one the summary shows. */
  FsLayout orInferred(Summary summary) {
    return layout != null ? layout : CapturedInputs.inferLayout(summary);
  }

  /** The layouts by name: the option's converter and completion candidates. */
  static final class Layouts implements CommandLine.ITypeConverter<FsLayout>, Iterable<String> {
    private static final List<String> NAMES =
        Arrays.stream(FsLayout.values()).map(FsLayout::key).toList();

    @Override
    public FsLayout convert(String value) {
      return FsLayout.fromKey(value)
          .orElseThrow(
              () ->
                  new CommandLine.TypeConversionException(
                      "unknown layout \""
                          + value
                          + "\" ("
                          + String.join(", ", NAMES.subList(0, NAMES.size() - 1))
                          + " or "
                          + NAMES.get(NAMES.size() - 1)
                          + ")"));
    }

    @Override
    public Iterator<String> iterator() {
      return NAMES.iterator();
    }
  }
}
