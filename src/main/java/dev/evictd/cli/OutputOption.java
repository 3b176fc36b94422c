package dev.evictd.cli;

import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * The {@code -o}/{@code --output} option: a typed format, with the accepted values as completion
 * candidates, in two mixins: {@link Table} (plan, stats, doctor) and {@link Text} (replay,
 * explain).
 */
final class OutputOption {
  private OutputOption() {}

  /** A format of a command's output. */
  enum Format {
    TABLE,
    TEXT,
    JSON;

    @Override
    public String toString() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** {@code -o table|json}. */
  static final class Table {
    @Option(
        names = {"-o", "--output"},
        paramLabel = "FORMAT",
        defaultValue = "table",
        converter = TableFormats.class,
        completionCandidates = TableFormats.class,
        description = "Output format, one of ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
    Format format;

    /** Whether JSON is asked for. */
    boolean json() {
      return format == Format.JSON;
    }
  }

  /** {@code -o text|json}. */
  static final class Text {
    @Option(
        names = {"-o", "--output"},
        paramLabel = "FORMAT",
        defaultValue = "text",
        converter = TextFormats.class,
        completionCandidates = TextFormats.class,
        description = "Output format, one of ${COMPLETION-CANDIDATES} (default: ${DEFAULT-VALUE}).")
    Format format;

    /** Whether JSON is asked for. */
    boolean json() {
      return format == Format.JSON;
    }
  }

  /**
   * The formats a command accepts: the converter of its option (refusing others in words, named by
   * {@link Main}) and its completion candidates.
   */
  abstract static class Formats implements CommandLine.ITypeConverter<Format>, Iterable<String> {
    private final List<Format> accepted;

    Formats(Format... accepted) {
      this.accepted = List.of(accepted);
    }

    @Override
    public Format convert(String value) {
      for (Format f : accepted) {
        if (f.toString().equals(value)) {
          return f;
        }
      }
      throw new CommandLine.TypeConversionException(
          "unknown output format \"" + value + "\" (" + String.join(" or ", names()) + ")");
    }

    @Override
    public Iterator<String> iterator() {
      return names().iterator();
    }

    private List<String> names() {
      return accepted.stream().map(Format::toString).toList();
    }
  }

  /** table or json. */
  static final class TableFormats extends Formats {
    TableFormats() {
      super(Format.TABLE, Format.JSON);
    }
  }

  /** text or json. */
  static final class TextFormats extends Formats {
    TextFormats() {
      super(Format.TEXT, Format.JSON);
    }
  }
}
