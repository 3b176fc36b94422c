package dev.evictd.cli;

import dev.evictd.config.IoErrors;
import dev.evictd.ruleset.RuleProvenance;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.TypeConversionException;

/**
 * The converters of the value types evictd's options use that picocli would otherwise convert
 * itself, wording a refusal in Java's terms ({@code 'x' is not an int}, {@code cannot convert '['
 * to Pattern (java.util.regex.PatternSyntaxException: ...)}). Each refuses a value with a {@link
 * TypeConversionException} that quotes it and says what was expected; {@link #refusal} puts the
 * option's name before it.
 */
final class Converters {
  private Converters() {}

  /** Registers the converters on a command line and every subcommand it has now. */
  static void registerOn(CommandLine cl) {
    cl.registerConverter(Integer.class, Converters::integer);
    cl.registerConverter(int.class, Converters::integer);
    cl.registerConverter(Long.class, Converters::longInteger);
    cl.registerConverter(long.class, Converters::longInteger);
    cl.registerConverter(Boolean.class, Converters::bool);
    cl.registerConverter(boolean.class, Converters::bool);
    cl.registerConverter(Pattern.class, Converters::regex);
    cl.registerConverter(Path.class, Converters::path);
  }

  /**
   * The one line for a value an option or parameter refused: its name, then what its converter said
   * (a converter's {@link TypeConversionException} quotes the value and says what was expected);
   * for any other failure, the value, never the exception.
   */
  static String refusal(ArgSpec arg, String value, Throwable cause) {
    String name = arg instanceof OptionSpec o ? o.longestName() : arg.paramLabel();
    if (cause instanceof Empty) {
      return name + ": '' is empty; expected " + arg.paramLabel();
    }
    if (cause instanceof NotAFile f) {
      // as the commands word a file's errors: --tls-cert-file /etc/tls.crt: no such file
      return name + " " + f.file + ": " + f.why;
    }
    String why =
        cause instanceof TypeConversionException && cause.getMessage() != null
            ? cause.getMessage()
            : "'" + value + "' is not a value " + name + " takes";
    return name + ": " + why;
  }

  static int integer(String value) {
    try {
      return Integer.parseInt(value);
    } catch (NumberFormatException e) {
      throw wholeNumber(value, Integer.MIN_VALUE, Integer.MAX_VALUE);
    }
  }

  static long longInteger(String value) {
    try {
      return Long.parseLong(value);
    } catch (NumberFormatException e) {
      throw wholeNumber(value, Long.MIN_VALUE, Long.MAX_VALUE);
    }
  }

  private static TypeConversionException wholeNumber(String value, long min, long max) {
    if (value.matches("[+-]?[0-9]+")) {
      return value.startsWith("-")
          ? new TypeConversionException("'" + value + "' is too small (at least " + min + ")")
          : new TypeConversionException("'" + value + "' is too large (at most " + max + ")");
    }
    return new TypeConversionException("'" + value + "' is not a whole number");
  }

  /** A flag's value, when one is given ({@code --explain=false}): true or false. */
  static boolean bool(String value) {
    if ("true".equalsIgnoreCase(value)) {
      return true;
    }
    if ("false".equalsIgnoreCase(value)) {
      return false;
    }
    throw new TypeConversionException("'" + value + "' is neither true nor false");
  }

  static Pattern regex(String value) {
    try {
      return Pattern.compile(value);
    } catch (PatternSyntaxException e) {
      String d = e.getDescription();
      String why =
          d == null || d.isEmpty()
              ? "it does not compile"
              : d.substring(0, 1).toLowerCase(Locale.ROOT) + d.substring(1);
      throw new TypeConversionException(
          "'"
              + value
              + "' is not a regular expression: "
              + why
              + (e.getIndex() >= 0 ? " at index " + e.getIndex() : ""));
    }
  }

  /**
   * The converter of an option naming a file the command reads: the file must be there, be a file
   * and open for reading, or the command line is refused before anything is done.
   */
  static final class InputFile implements CommandLine.ITypeConverter<Path> {
    @Override
    public Path convert(String value) {
      Path p = path(value);
      String why = IoErrors.unreadable(p);
      if (why != null) {
        throw new NotAFile(value, why);
      }
      return p;
    }
  }

  /**
   * The converter of an option naming a file the command writes: a directory is refused before
   * anything is done (--junit-xml DIR ran every fixture, then could not write the report).
   */
  static final class OutputFile implements CommandLine.ITypeConverter<Path> {
    @Override
    public Path convert(String value) {
      Path p = path(value);
      if (java.nio.file.Files.isDirectory(p)) {
        throw new NotAFile(value, "is a directory, not a file");
      }
      return p;
    }
  }

  /**
   * The converter of a text option that an empty value would leave without meaning (a node name, a
   * rules directory): an empty value is refused, not taken for the default or the current
   * directory.
   */
  static final class NotEmpty implements CommandLine.ITypeConverter<String> {
    @Override
    public String convert(String value) {
      if (value.isEmpty()) {
        throw new Empty();
      }
      return value;
    }
  }

  /**
   * The converter of a rule set's SHA-256 pin: one that is not a SHA-256 is refused before any rule
   * set is loaded (it was refused as each fixture's set loaded, on every fixture's line), in the
   * words the pin's own check uses; the value is kept as given.
   */
  static final class Sha256Pin implements CommandLine.ITypeConverter<String> {
    @Override
    public String convert(String value) {
      RuleProvenance.normalizePin(value);
      return value;
    }
  }

  /** An empty value refused by {@link NotEmpty}; {@link #refusal} says what was expected. */
  static final class Empty extends TypeConversionException {
    private static final long serialVersionUID = 1L;

    Empty() {
      super("'' is empty");
    }
  }

  /** A file option's value that is not a file to read, and why ({@code no such file}). */
  static final class NotAFile extends TypeConversionException {
    private static final long serialVersionUID = 1L;

    final String file;
    final String why;

    NotAFile(String file, String why) {
      super(file + ": " + why);
      this.file = file;
      this.why = why;
    }
  }

  /**
   * A path; an empty one is refused (it is the current directory: {@code evictd test ''} ran every
   * YAML file below it).
   */
  static Path path(String value) {
    if (value.isEmpty()) {
      throw new TypeConversionException("'' is empty, not a path");
    }
    try {
      return Path.of(value);
    } catch (InvalidPathException e) {
      throw new TypeConversionException(
          "'" + value + "' is not a path: " + e.getReason().toLowerCase(Locale.ROOT));
    }
  }
}
