package dev.evictd.ruleset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.RulesException;
import dev.evictd.engine.RuleSource;
import dev.evictd.ruleset.lint.PolicyLint;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a rule set may hold: 256 KiB of files, 1,000 rules, 200 functions and declared types, 5,000
 * conditions. A larger set is refused before it is compiled (or, past the bytes, read whole).
 */
class RuleSetLimitsTest {
  static final String HEAD = "package dev.evictd.rules;\nimport dev.evictd.api.*;\n";
  static final String TOO_LARGE =
      ": too large: a rule set's files may hold 256 KiB (262144 bytes) in all; with this file the"
          + " set's files hold more";

  static String repeat(String piece, int n) {
    StringBuilder sb = new StringBuilder(HEAD);
    for (int i = 0; i < n; i++) {
      sb.append(piece.replace("#", Integer.toString(i)));
    }
    return sb.toString();
  }

  @Test
  void aSetPast256KiBIsRefusedAtTheFileThatTakesItPast(@TempDir Path dir) throws IOException {
    String comment = "// " + "x".repeat(1021) + "\n"; // 1 KiB a line
    Files.writeString(dir.resolve("a.drl"), HEAD + comment.repeat(200));
    Files.writeString(dir.resolve("b.drl"), HEAD + comment.repeat(100));
    assertThatThrownBy(() -> RuleCompiler.compile(dir))
        .isInstanceOf(RulesException.class)
        .hasMessage(dir.resolve("b.drl") + TOO_LARGE);

    // one file of 10 MB (a string literal) is not read whole either
    Files.delete(dir.resolve("b.drl"));
    Files.writeString(
        dir.resolve("a.drl"),
        HEAD + "rule \"r\" when PodFact() then String s = \"" + "a".repeat(10 << 20) + "\"; end\n");
    assertThatThrownBy(() -> RuleCompiler.compile(dir))
        .isInstanceOf(RulesException.class)
        .hasMessage(dir.resolve("a.drl") + TOO_LARGE);
  }

  @Test
  void thePackagedRulesASetExtendsCountWithItsFiles(@TempDir Path dir) throws IOException {
    long defaults =
        RuleCompiler.readDefault().stream()
            .mapToLong(s -> s.text().getBytes(java.nio.charset.StandardCharsets.UTF_8).length)
            .sum();
    Files.writeString(dir.resolve("rules.yaml"), "extends: default\n");
    String comment = "// " + "x".repeat(1021) + "\n";
    int kib = (int) ((RuleSetReader.MAX_RULE_SET_BYTES - defaults) / 1024) + 1;
    Files.writeString(dir.resolve("extra.drl"), HEAD + comment.repeat(kib));
    assertThatThrownBy(() -> RuleCompiler.read(dir))
        .isInstanceOf(RulesException.class)
        .hasMessage(dir.resolve("extra.drl") + TOO_LARGE);
    Files.writeString(dir.resolve("extra.drl"), HEAD + comment.repeat(kib - 2));
    assertThat(RuleCompiler.read(dir)).hasSize(RuleCompiler.readDefault().size() + 1);
  }

  @Test
  @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void aRuleFileThatIsADeviceIsNotRead(@TempDir Path dir) throws IOException {
    // its size is 0 and it never ends
    Files.createSymbolicLink(dir.resolve("zero.drl"), Path.of("/dev/zero"));
    assertThatThrownBy(() -> RuleCompiler.compile(dir))
        .isInstanceOf(RulesException.class)
        .hasMessage(dir.resolve("zero.drl") + ": not a regular file");
  }

  @Test
  void sourcesFromElsewhereAreHeldToTheSameSize() {
    RuleSource big = new RuleSource("big.drl", "big.drl", HEAD + "// " + "x".repeat(300 << 10));
    assertThatThrownBy(() -> RuleCompiler.compile("state", List.of(big)))
        .isInstanceOf(RulesException.class)
        .hasMessage(
            "state: too large: a rule set's files may hold 256 KiB (262144 bytes) in all, these"
                + " hold "
                + big.text().length()
                + " bytes");
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void moreThan1000RulesAreRefusedAtTheFirstOnePastBeforeAnyIsCompiled(@TempDir Path dir)
      throws IOException {
    String rule = "rule \"r#\" when PodFact() then end\n";
    assertThat(
            PolicyLint.check(List.of(new RuleSource("r.drl", "r.drl", repeat(rule, 1000))))
                .findings())
        .isEmpty();
    Files.writeString(dir.resolve("r.drl"), repeat(rule, 1001));
    assertThatThrownBy(() -> RuleCompiler.compile(dir))
        .isInstanceOf(RulesException.class)
        .hasMessage(
            dir.resolve("r.drl")
                + ":1003: refused: more than 1000 rules and queries (a rule set may hold 1000:"
                + " checking and compiling more takes too long)");
  }

  @Test
  void moreThan200FunctionsAndDeclaredTypesAreRefused(@TempDir Path dir) throws IOException {
    // every function is a class that imports all the others: 1,000 took a minute to compile
    Files.writeString(
        dir.resolve("r.drl"),
        repeat("function int f#() { return 1; }\n", 100)
            + repeat("declare T# end\n", 101).substring(HEAD.length()));
    assertThatThrownBy(() -> RuleCompiler.compile(dir))
        .isInstanceOf(RulesException.class)
        .hasMessage(
            dir.resolve("r.drl")
                + ":203: refused: more than 200 functions and declared types (a rule set may hold"
                + " 200: checking and compiling more takes too long)");
  }

  @Test
  void moreThan5000ConditionsAreRefusedAtTheRuleThatGoesPast(@TempDir Path dir) throws IOException {
    // 500 rules of 5 patterns with a constraint each: 5,000; then one eval more
    Files.writeString(
        dir.resolve("r.drl"),
        repeat("rule \"r#\" when\n   " + " PodFact(priority > #)".repeat(5) + "\nthen end\n", 500)
            + "rule \"one more\" when\n    eval(true)\nthen end\n");
    assertThatThrownBy(() -> RuleCompiler.compile(dir))
        .isInstanceOf(RulesException.class)
        .hasMessage(
            dir.resolve("r.drl")
                + ":"
                + (3 + 3 * 500)
                + ": refused: more than 5000 conditions and constraints (a rule set may hold 5000:"
                + " checking and compiling more takes too long)");
  }

  @Test
  void noExecutableModelIsBuiltForASetTooCostlyToModelItIsCompiledInstead(@TempDir Path tmp)
      throws IOException {
    // one rule of 1,001 patterns: its model took 10 s to build, one of 5,000 over two minutes
    String drl = HEAD + "rule \"wide\" when\n" + "    PodFact()\n".repeat(1001) + "then end\n";
    List<RuleSource> wide = List.of(new RuleSource("w.drl", "w.drl", drl));
    assertThat(dev.evictd.ruleset.lint.SetLimits.tooLargeForAModel(PolicyLint.parse(wide)))
        .isEqualTo(
            "none is built for a set of more than 64 KiB, 250 rules, 50 functions and declared"
                + " types or 1000 conditions and constraints");
    Path cache = Files.createDirectory(tmp.resolve("cache"));
    RuleSetCache c = RuleSetCache.at(cache).withModelBuilds(RuleSetCache.ModelBuilds.IN_PROCESS);
    assertThat(ModelCache.build("wide", wide, RuleCompiler.sha256(wide), c, PolicyLint.parse(wide)))
        .isNull();
    try (var s = Files.list(cache)) {
      assertThat(s.filter(p -> p.toString().endsWith(".model"))).isEmpty();
    }
    // the default rules are far from it
    assertThat(
            dev.evictd.ruleset.lint.SetLimits.tooLargeForAModel(
                PolicyLint.parse(RuleCompiler.readDefault())))
        .isNull();
  }

  @Test
  void aCompilerThatRepeatsItselfIsCutShort(@TempDir Path dir) throws IOException {
    // one line of 3,000 declarations of the same variable: as many errors, in one message
    Files.writeString(
        dir.resolve("r.drl"),
        HEAD + "rule \"r\" when PodFact() then " + "int x = 1; ".repeat(3000) + "end\n");
    assertThatThrownBy(() -> RuleCompiler.compile(dir))
        .isInstanceOf(RulesException.class)
        .satisfies(
            ex -> {
              assertThat(ex.getMessage()).startsWith(dir.resolve("r.drl") + ":3");
              assertThat(ex.getMessage().length()).isLessThan(20 * 520);
            });
  }

  @Test
  void namesOfMoreThan1000CharactersAreRefusedWithTheirLine(@TempDir Path dir) throws IOException {
    // a rule name of 70,000: "UTF8 string too large" from the compiler, with no file or line
    Files.writeString(
        dir.resolve("r.drl"),
        HEAD + "rule \"" + "n".repeat(70_000) + "\" when PodFact() then end\n");
    assertThatThrownBy(() -> RuleCompiler.compile(dir))
        .isInstanceOf(RulesException.class)
        .hasMessage(
            dir.resolve("r.drl")
                + ":3: refused: a rule name longer than 1000 characters (names may have at most"
                + " 1000)");
    Files.writeString(
        dir.resolve("r.drl"), HEAD + "function int " + "f".repeat(70_000) + "() { return 1; }\n");
    assertThatThrownBy(() -> RuleCompiler.compile(dir))
        .isInstanceOf(RulesException.class)
        .hasMessage(
            dir.resolve("r.drl")
                + ":3: refused: a name longer than 1000 characters (names may have at most 1000)");
  }
}
