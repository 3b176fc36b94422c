package dev.evictd.cli;

import dev.evictd.api.EvictdException;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.MissingParameterException;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * The one line of a command line evictd cannot read — an unknown option or command, a required
 * option or parameter missing, an option without its value — in evictd's words: {@code evictd:
 * test: unknown option '--fiter' (did you mean --filter?); see 'evictd test --help'}, where picocli
 * prints its message and then a line of advice.
 */
final class UsageErrors {
  private UsageErrors() {}

  /**
   * The line for {@code ex}: the command (below the top level), what is wrong, where its usage is.
   *
   * @param args the whole command line, to tell an option given without its value from one missing
   */
  static String line(ParameterException ex, String[] args) {
    CommandLine c = ex.getCommandLine();
    String qualified = c.getCommandSpec().qualifiedName();
    String command =
        c.getParent() == null ? "" : qualified.substring(qualified.indexOf(' ') + 1) + ": ";
    return EvictdException.oneLine(
        "evictd: " + command + what(ex, args) + "; see '" + qualified + " --help'");
  }

  private static String what(ParameterException ex, String[] args) {
    if (ex instanceof UnmatchedArgumentException u && !u.getUnmatched().isEmpty()) {
      return unmatched(u);
    }
    if (ex instanceof MissingParameterException m && !m.getMissing().isEmpty()) {
      return missing(m.getMissing(), args);
    }
    return ex.getMessage();
  }

  /** An unknown option (with picocli's suggestions), an unknown command, an extra argument. */
  private static String unmatched(UnmatchedArgumentException u) {
    List<String> unmatched = u.getUnmatched();
    if (u.isUnknownOption()) {
      // what follows the unknown option is most often its value: the option is the mistake
      return "unknown option " + quoted(unmatched.get(0)) + didYouMean(u.getSuggestions());
    }
    CommandLine c = u.getCommandLine();
    if (!c.getSubcommands().isEmpty()) {
      // picocli's suggestions for a command are poor (tset: stats); the commands are few
      return "unknown command "
          + quoted(unmatched.get(0))
          + " (one of: "
          + String.join(", ", c.getSubcommands().keySet())
          + ")";
    }
    List<String> q = new ArrayList<>(unmatched.size());
    unmatched.forEach(a -> q.add(quoted(a)));
    return (q.size() == 1 ? "unexpected argument " : "unexpected arguments ")
        + String.join(", ", q);
  }

  /**
   * An option given without its value ({@code --jobs} last), or the required options and parameters
   * not given.
   */
  private static String missing(List<ArgSpec> missing, String[] args) {
    if (missing.size() == 1
        && missing.get(0) instanceof OptionSpec o
        && (!o.required() || given(o, args))) {
      return o.longestName() + " needs a value (" + o.paramLabel() + ")";
    }
    List<String> names = new ArrayList<>(missing.size());
    boolean options = true;
    boolean parameters = true;
    for (ArgSpec a : missing) {
      if (a instanceof OptionSpec o) {
        names.add(o.longestName() + " " + o.paramLabel());
        parameters = false;
      } else {
        names.add(a.paramLabel());
        options = false;
      }
    }
    String kind = options ? "option" : parameters ? "parameter" : "argument";
    return "missing required " + kind + (names.size() == 1 ? " " : "s ") + String.join(", ", names);
  }

  /** Whether the command line names the option (its value is what is missing). */
  private static boolean given(OptionSpec o, String[] args) {
    for (String a : args) {
      for (String name : o.names()) {
        if (a.equals(name) || a.startsWith(name + "=")) {
          return true;
        }
      }
    }
    return false;
  }

  private static String didYouMean(List<String> suggestions) {
    if (suggestions.isEmpty()) {
      return "";
    }
    int n = suggestions.size();
    String alternatives =
        n == 1
            ? suggestions.get(0)
            : String.join(", ", suggestions.subList(0, n - 1)) + " or " + suggestions.get(n - 1);
    return " (did you mean " + alternatives + "?)";
  }

  private static String quoted(String arg) {
    return "'" + arg + "'";
  }
}
