package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rules check} on rule files built to break the checks: each is refused in a few seconds
 * with one line naming the file and line and what is wrong, never a stack trace or a Java class.
 */
class RulesCheckHostileInputTest {
  static final String HEAD = "package dev.evictd.rules;\nimport dev.evictd.api.*;\n";

  static Path set(Path dir, String drl) throws IOException {
    Files.writeString(dir.resolve("r.drl"), drl);
    return dir;
  }

  /** A refusal of one line, {@code evictd: } and then {@code message}, and nothing Java in it. */
  static void assertRefused(CliTest.Run r, String message) {
    assertThat(r.code()).as(r.err()).isEqualTo(2);
    assertThat(r.out()).isEmpty();
    assertThat(r.err()).isEqualTo("evictd: " + message + "\n");
    assertNothingJava(r.err());
  }

  static void assertNothingJava(String err) {
    assertThat(err)
        .doesNotContain("Exception", "Error:", "StackOverflow", "java.", "org.", "\tat ");
  }

  @Test
  void anExpressionNested20000DeepIsRefusedWithItsLine(@TempDir Path dir) throws IOException {
    String deep = "(".repeat(20_000) + "true" + ")".repeat(20_000);
    set(dir, HEAD + "rule \"deep\"\nwhen\n    PodFact()\n    eval(" + deep + ")\nthen\nend\n");
    assertRefused(
        CliTest.run("rules", "check", dir.toString()),
        dir.resolve("r.drl")
            + ":6: refused: expression nested deeper than 10 (parentheses and brackets; split it,"
            + " with bindings, local variables or functions)");

    // with the lint off the compiler reads it: its stack overflow is a refusal like any other
    CliTest.Run unsafe = CliTest.run("rules", "check", "--allow-unsafe-rules", dir.toString());
    assertThat(unsafe.code()).as(unsafe.err()).isEqualTo(2);
    assertThat(unsafe.err())
        .endsWith(
            "evictd: " + dir + ": rules cannot be compiled: nested too deeply for the compiler\n");
    assertNothingJava(unsafe.err());
  }

  @Test
  void aStackOverflowInAParserIsARefusalNamingTheFile(@TempDir Path dir) throws IOException {
    String negations = "!".repeat(100_000) + "true";
    set(dir, HEAD + "rule \"r\" when\n    PodFact(" + negations + ")\nthen end\n");
    assertRefused(
        CliTest.run("rules", "check", dir.toString()),
        dir.resolve("r.drl")
            + ": refused: the whole file (cannot be analysed: nested too deeply (the stack ran"
            + " out))");
    // in a consequence: the compiler's stack runs out too, and the lint's finding says where
    set(
        dir,
        HEAD + "rule \"r\" when\n    PodFact()\nthen\n    boolean b = " + negations + ";\nend\n");
    assertRefused(
        CliTest.run("rules", "check", dir.toString()),
        dir.resolve("r.drl")
            + ":6: rule \"r\": refused: code the lint cannot parse (cannot be analysed: not a block"
            + " of Java statements: nested too deeply (the stack ran out))");
  }

  @Test
  void twentyThousandRulesAreRefusedAtOnce(@TempDir Path dir) throws IOException {
    // they took over two minutes to check; 750 KB of them are past the size of a rule set
    StringBuilder sb = new StringBuilder(HEAD);
    for (int i = 0; i < 20_000; i++) {
      sb.append("rule \"r").append(i).append("\" when PodFact() then end\n");
    }
    set(dir, sb.toString());
    assertRefused(
        CliTest.run("rules", "check", dir.toString()),
        dir.resolve("r.drl")
            + ": too large: a rule set's files may hold 256 KiB (262144 bytes) in all; with this"
            + " file the set's files hold more");
    // 7,000 short ones fit in the size, not in the count
    sb.setLength(HEAD.length());
    for (int i = 0; i < 7_000; i++) {
      sb.append("rule r").append(i).append(" when then end\n");
    }
    set(dir, sb.toString());
    assertRefused(
        CliTest.run("rules", "check", dir.toString()),
        dir.resolve("r.drl")
            + ":1003: refused: more than 1000 rules and queries (a rule set may hold 1000: checking"
            + " and compiling more takes too long)");
  }

  @Test
  void emptyAndCommentOnlyFilesAndHugeLiteralsAreRefusedPlainly(@TempDir Path dir)
      throws IOException {
    String noPackage = ":1: refused: package (none) (rules must be in package dev.evictd.rules)";
    for (String text :
        new String[] {"", "// only a comment\n", "/* " + "x".repeat(200_000) + " */"}) {
      set(dir, text);
      assertRefused(
          CliTest.run("rules", "check", dir.toString()), dir.resolve("r.drl") + noPackage);
    }
    set(
        dir,
        HEAD + "rule \"r\" when PodFact() then String s = \"" + "a".repeat(10 << 20) + "\"; end\n");
    assertRefused(
        CliTest.run("rules", "check", dir.toString()),
        dir.resolve("r.drl")
            + ": too large: a rule set's files may hold 256 KiB (262144 bytes) in all; with this"
            + " file the set's files hold more");
  }
}
