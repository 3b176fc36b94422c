package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * A value an option cannot take, on every option and parameter of every command: one line that
 * names the option and the value and says what was expected, exit 2, never a Java type or exception
 * name.
 */
class OptionValuesTest {
  /** What a message of the command line never shows. */
  static final String JAVA =
      "(?s).*(Exception|java\\.|\\bjavax?\\b|\\b(int|long|boolean|Integer|Long|Boolean|Pattern|Path"
          + "|Duration|String)\\b|cannot convert|Invalid value for).*";

  /** Values that some typed option refuses. */
  static final List<String> BAD =
      List.of("", "[", "x", "-1", "1.5", "99999999999999999999", "maybe");

  /**
   * Starts every probe: picocli refuses a value as it reads it, but an unknown option only at the
   * end; so when the value was taken, the command line is still refused (this option unknown, or
   * one required missing) and nothing runs.
   */
  static final String STOP = "--no-such-option-stops-the-probe";

  @Test
  void everyValueAnOptionRefusesIsOneLineNamingTheOptionAndTheValue() {
    int refused = 0;
    List<String> problems = new ArrayList<>();
    for (Map.Entry<List<String>, CommandSpec> c : commands().entrySet()) {
      for (ArgSpec a : c.getValue().args()) {
        if (a.arity().max() < 1 || a.typeInfo().getType() == String.class && !hasConverter(a)) {
          continue; // a flag (below), or any text
        }
        List<String> names =
            a.isOption() ? List.of(((OptionSpec) a).names()) : List.of(a.paramLabel());
        for (String bad : BAD) {
          List<String> args = new ArrayList<>(c.getKey());
          args.add(STOP);
          if (a.isOption()) {
            args.add(((OptionSpec) a).longestName());
          }
          args.add(bad);
          CliTest.Run r = CliTest.run(args.toArray(String[]::new));
          if (r.err().contains(STOP) || r.err().contains(": missing required ")) {
            continue; // taken: what is wrong is elsewhere
          }
          refused++;
          String line = r.err().strip();
          String quoted = "'" + bad + "'";
          if (r.code() != Main.BAD_INPUT
              || r.err().lines().count() != 1
              || !line.startsWith("evictd: ")
              || names.stream().noneMatch(line::contains)
              || !(line.contains(quoted)
                  || line.contains("\"" + bad + "\"")
                  || line.contains(" " + bad + ":"))
              || line.matches(JAVA)) {
            problems.add(String.join(" ", args) + " -> exit " + r.code() + ": " + r.err());
          }
        }
      }
    }
    assertThat(problems).isEmpty();
    // the probe reached options of every kind: counts, regular expressions, paths, durations...
    assertThat(refused).isGreaterThan(100);
  }

  @Test
  void aValueGivenToAFlagNamesTheFlagAndTheValue() {
    List<String> problems = new ArrayList<>();
    for (Map.Entry<List<String>, CommandSpec> c : commands().entrySet()) {
      for (OptionSpec o : c.getValue().options()) {
        if (o.arity().max() > 0) {
          continue;
        }
        List<String> args = new ArrayList<>(c.getKey());
        args.add(STOP);
        args.add(o.longestName() + "=maybe");
        CliTest.Run r = CliTest.run(args.toArray(String[]::new));
        if (r.code() != Main.BAD_INPUT
            || !r.err().startsWith("evictd: ")
            || !r.err().contains(o.longestName())
            || !r.err().contains("'maybe'")
            || r.err().matches(JAVA)) {
          problems.add(String.join(" ", args) + " -> exit " + r.code() + ": " + r.err());
        }
      }
    }
    assertThat(problems).isEmpty();
  }

  @Test
  void aRegularExpressionThatDoesNotCompileSaysWhy() {
    CliTest.Run r = CliTest.run("test", "--filter", "[", "fixtures/pid");
    assertThat(r.code()).isEqualTo(Main.BAD_INPUT);
    assertThat(r.err())
        .isEqualTo(
            "evictd: --filter: '[' is not a regular expression: unclosed character class at"
                + " index 0\n");
    assertThat(r.out()).isEmpty();
  }

  @Test
  void aCountSaysWhatItTakes() {
    assertThat(CliTest.run("test", "-j", "abc", "fixtures/pid").err())
        .isEqualTo("evictd: --jobs: 'abc' is not a whole number\n");
    assertThat(CliTest.run("test", "-j", "99999999999", "fixtures/pid").err())
        .isEqualTo("evictd: --jobs: '99999999999' is too large (at most 2147483647)\n");
    assertThat(
            CliTest.run(
                    "admission-webhook",
                    "--tls-cert-file",
                    "pom.xml",
                    "--tls-key-file",
                    "pom.xml",
                    "--cert-check-interval",
                    "1m")
                .err())
        .isEqualTo("evictd: --cert-check-interval: '1m' is not a whole number\n");
  }

  @Test
  void anEmptyNameOrRulesDirectoryIsRefusedNotTakenForNoneOrTheDefault() {
    // diff compiled the current directory (": no .drl rule files"), plan named the node "",
    // --rules-cache '' was the default cache
    assertThat(CliTest.run("diff", "--rules", "", "--against", "default", "fixtures/pid").err())
        .isEqualTo("evictd: --rules: '' is empty; expected DIR\n");
    assertThat(
            CliTest.run("plan", "--node", "", "--config", "x", "--pods", "x", "--summary", "x")
                .err())
        .isEqualTo("evictd: --node: '' is empty; expected NAME\n");
    assertThat(CliTest.run("test", "--rules-cache", "", "fixtures/pid").err())
        .isEqualTo("evictd: --rules-cache: '' is empty; expected DIR|off\n");
    assertThat(CliTest.run("stats", "--node", "").code()).isEqualTo(Main.BAD_INPUT);
  }

  @Test
  void anEmptyTrueOrFalseIsRefusedAsInTheFileNotReadAsFalse() {
    for (String flag : List.of("--taints", "--adaptive-poll", "--allow-unsafe-rules")) {
      // STOP: taken, the value would start the agent
      CliTest.Run r = CliTest.run("run", STOP, "--standalone", flag, "");
      assertThat(r.code()).as(flag).isEqualTo(Main.BAD_INPUT);
      assertThat(r.err())
          .as(flag)
          .isEqualTo("evictd: " + flag + ": expected true or false, found \"\"\n");
    }
  }

  @Test
  void anEmptyPathIsRefusedNotReadAsTheCurrentDirectory() {
    // Path.of("") is the current directory: evictd test '' ran every YAML file below it
    CliTest.Run r = CliTest.run("test", "");
    assertThat(r.code()).isEqualTo(Main.BAD_INPUT);
    assertThat(r.err()).isEqualTo("evictd: PATH: '' is empty, not a path\n");
    assertThat(r.out()).isEmpty();
    assertThat(CliTest.run("test", "--junit-xml", "", "fixtures/pid").err())
        .isEqualTo("evictd: --junit-xml: '' is empty, not a path\n");
  }

  /** Every command by the arguments that name it, with the subcommands of {@code rules}. */
  static Map<List<String>, CommandSpec> commands() {
    Map<List<String>, CommandSpec> all = new java.util.LinkedHashMap<>();
    all.put(List.of(), new CommandLine(new Main()).getCommandSpec());
    Main.SUBCOMMANDS.forEach(
        (name, c) -> {
          if (c == CommandLine.HelpCommand.class) {
            return;
          }
          CommandLine cl = new CommandLine(c);
          all.put(List.of(name), cl.getCommandSpec());
          cl.getSubcommands().forEach((sub, s) -> all.put(List.of(name, sub), s.getCommandSpec()));
        });
    return all;
  }

  private static boolean hasConverter(ArgSpec a) {
    return a.converters() != null && a.converters().length > 0;
  }
}
