package dev.evictd.ruleset.lint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.evictd.api.RulesException;
import dev.evictd.engine.RuleSet;
import dev.evictd.engine.RuleSource;
import dev.evictd.ruleset.RuleCompiler;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The policy lint: every file of the hostile corpus is refused with its reason and line, and the
 * rules evictd ships and the example policies pass. Each hostile file says on its second line what
 * must be refused: {@code // expect: LINE: WHERE: refused: NAME (REASON)} for the source check
 * ({@code ...} at the end: a prefix), and {@code compiled: OWNER.MEMBER} for what the compiled-code
 * check must catch when the source check is switched off.
 */
class PolicyLintTest {
  static final Path HOSTILE = Path.of("src/test/resources/hostile-rules");

  /** Files that cannot share a package with the others when compiled together with the lint off. */
  static final Set<String> NOT_COMPILED_TOGETHER =
      Set.of(
          // its package-level dialect turns every other file's consequences into MVEL
          "mvel-package-dialect.drl",
          // Drools' own Java preprocessor rejects the escaped identifier: it never compiles
          "unicode-escape-identifier.drl",
          // its package-wide function import turns every other file's SyncClock property "now"
          // into a call of Instant.now()
          "wall-clock-function-import.drl");

  record Expectation(String source, String compiled) {}

  static Stream<Path> hostileFiles() throws IOException {
    try (Stream<Path> s = Files.list(HOSTILE)) {
      return s.filter(p -> p.toString().endsWith(".drl")).sorted().toList().stream();
    }
  }

  static Expectation expectation(Path file) {
    String header;
    try {
      header = Files.readAllLines(file).get(1);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    assertThat(header).as("%s: second line", file).matches("// (expect|compiled): .*");
    String source = null;
    String compiled = null;
    for (String part : header.substring(3).split("; compiled: ")) {
      if (part.startsWith("expect: ")) {
        source = part.substring("expect: ".length()).replace("\\\\u", "\\u");
      } else {
        compiled = part.startsWith("compiled: ") ? part.substring("compiled: ".length()) : part;
      }
    }
    return new Expectation(source, compiled);
  }

  @ParameterizedTest
  @MethodSource("hostileFiles")
  void everyHostileFileIsRefusedWithItsReasonAndLine(Path file) {
    Expectation e = expectation(file);
    RulesException refused =
        assertThrows(
            RulesException.class,
            () -> RuleCompiler.compileFile(file, RuleCompiler.Options.STRICT));
    List<String> lines = refused.getMessage().lines().toList();
    if (e.source() != null) {
      assertThat(lines)
          .as("%s", refused.getMessage())
          .anySatisfy(l -> assertMatches(l, file + ":" + e.source()));
    } else {
      assertThat(lines)
          .as("%s", refused.getMessage())
          .anySatisfy(l -> assertThat(l).startsWith(file + ":").contains(compiledRefusal(e)));
    }
  }

  @ParameterizedTest
  @MethodSource("hostileFiles")
  void rulesCheckExitsTwoNamingTheFileLineAndRefusedName(Path file) {
    Expectation e = expectation(file);
    java.io.StringWriter out = new java.io.StringWriter();
    java.io.StringWriter err = new java.io.StringWriter();
    int code =
        dev.evictd.cli.Main.execute(
            new String[] {"rules", "check", file.toString()},
            new java.io.PrintWriter(out, true),
            new java.io.PrintWriter(err, true));
    assertThat(code).as("%s", err).isEqualTo(2);
    String expected = e.source() != null ? e.source() : null;
    if (expected != null) {
      String prefix =
          expected.endsWith("...") ? expected.substring(0, expected.length() - 3) : expected;
      assertThat(err.toString()).startsWith("evictd: ").contains(file + ":" + prefix);
    } else {
      assertThat(err.toString()).contains(file + ":").contains(e.compiled());
    }
    assertThat(out.toString()).isEmpty();
  }

  private static String compiledRefusal(Expectation e) {
    return "refused: " + e.compiled() + " (compiled code)";
  }

  private static void assertMatches(String line, String expected) {
    if (expected.endsWith("...")) {
      assertThat(line).startsWith(expected.substring(0, expected.length() - 3));
    } else {
      assertThat(line).isEqualTo(expected);
    }
  }

  @Test
  void withTheLintOffHostileFilesCompileAndTheCompiledCodeCheckStillCatchesTheirJava()
      throws IOException {
    List<RuleSource> sources = new ArrayList<>();
    List<Path> files =
        hostileFiles()
            .filter(p -> !NOT_COMPILED_TOGETHER.contains(p.getFileName().toString()))
            .toList();
    for (Path f : files) {
      sources.add(new RuleSource(f.getFileName().toString(), f.toString(), Files.readString(f)));
    }
    RuleSet rs =
        RuleCompiler.compile(
            "hostile",
            sources,
            new RuleCompiler.Options(true, null, RuleCompiler.Ownership.IGNORE));
    assertThat(rs.warnings().get(0)).contains("policy lint disabled");
    for (Path f : files) {
      Expectation e = expectation(f);
      if (e.source() != null) {
        String prefix =
            e.source().endsWith("...")
                ? e.source().substring(0, e.source().length() - 3)
                : e.source();
        assertThat(rs.warnings())
            .as("source check, %s", f)
            .anySatisfy(w -> assertThat(w).startsWith(f + ":" + prefix));
      }
      if (e.compiled() != null) {
        assertThat(rs.warnings())
            .as("compiled-code check, %s", f)
            .anySatisfy(w -> assertThat(w).startsWith(f + ":").contains(compiledRefusal(e)));
      }
    }
  }

  @Test
  void theDefaultRulesTheExamplesAndTheTestRuleSetsPass() throws IOException {
    assertThat(PolicyLint.check(RuleCompiler.readDefault()).findings()).isEmpty();
    List<Path> dirs = new ArrayList<>();
    try (Stream<Path> s = Files.walk(Path.of("fixtures/examples"))) {
      s.filter(p -> p.getFileName().toString().equals("rules") && Files.isDirectory(p))
          .forEach(dirs::add);
    }
    assertThat(dirs).isNotEmpty();
    dirs.add(Path.of("src/test/resources/rulesets/throws"));
    dirs.add(Path.of("src/test/resources/rulesets/runaway"));
    for (Path d : dirs) {
      assertThat(PolicyLint.check(RuleCompiler.read(d)).findings()).as("%s", d).isEmpty();
    }
  }

  @Test
  void whatAPolicyNeedsIsAllowedAndCompiles() {
    // collections, streams, lambdas, java.time, BigDecimal, text blocks, declared types, functions,
    // queries,
    // accumulate functions, from/collect, eval, modify, EvictionMessages
    RuleSet rs = RuleCompiler.compile(Path.of("src/test/resources/rulesets/lint-allowed"));
    assertThat(rs.warnings()).isEmpty();
    assertThat(rs.kieBase().getKiePackage("dev.evictd.rules").getRules())
        .hasSizeGreaterThanOrEqualTo(4);
  }

  @Test
  void theLintCostsLittleNextToCompiling() {
    // the default rules with one comment more: the same rules, but not the packaged set's SHA-256,
    // so they are compiled rather than loaded from their pre-built model
    List<RuleSource> sources = new java.util.ArrayList<>(RuleCompiler.readDefault());
    RuleSource last = sources.remove(sources.size() - 1);
    sources.add(new RuleSource(last.name(), last.path(), last.text() + "\n// compiled\n"));
    RuleCompiler.Options options =
        new RuleCompiler.Options(true, null, RuleCompiler.Ownership.IGNORE);
    long lint = Long.MAX_VALUE;
    long compile = Long.MAX_VALUE;
    for (int i = 0; i < 4; i++) {
      long t0 = System.nanoTime();
      PolicyLint.Report r = PolicyLint.check(sources);
      long t1 = System.nanoTime();
      RuleSet rs =
          RuleCompiler.compile(
              "default", sources, options); // runs the lint once more: charged to it
      long t2 = System.nanoTime();
      CompiledCodeCheck.check(rs.kieBase(), r, "default");
      long t3 = System.nanoTime();
      if (i > 0) { // the first round loads the parsers' and the compiler's classes
        lint = Math.min(lint, (t1 - t0) + (t3 - t2));
        compile = Math.min(compile, (t2 - t1) - (t1 - t0));
      }
    }
    System.out.printf(
        "policy lint of the default rules: %d ms; compiling them: %d ms%n",
        lint / 1_000_000, compile / 1_000_000);
    assertThat(lint).isLessThan(compile / 2);
  }

  @Test
  void anEscapedBackslashIsNoUnicodeEscape() {
    String drl =
        "package dev.evictd.rules;\nimport dev.evictd.api.*;\n"
            + "rule \"r\" when $p: PodFact(name matches \"a\\\\u0041\") then insert($p.name()); end\n";
    assertThat(PolicyLint.check(List.of(new RuleSource("r.drl", "r.drl", drl))).findings())
        .isEmpty();
    String escaped = drl.replace("\\\\u0041", "\\u0041");
    assertThat(PolicyLint.check(List.of(new RuleSource("r.drl", "r.drl", escaped))).findings())
        .singleElement()
        .hasToString(
            "r.drl:3: refused: \\u0041 (unicode escape (hides code from review; write the character itself))");
  }

  @Test
  void namesResolveThroughImportsFromOtherFilesOfThePackage() {
    // imports are the package's: a wildcard import in one file brings java.io.File into another
    String a = "package dev.evictd.rules;\nimport java.util.*;\n";
    String b =
        "package dev.evictd.rules;\nimport dev.evictd.api.*;\n"
            + "rule \"r\" when $p: PodFact() then\n  Timer t = null;\nend\n";
    List<PolicyFinding> f =
        PolicyLint.check(
                List.of(new RuleSource("a.drl", "a.drl", a), new RuleSource("b.drl", "b.drl", b)))
            .findings();
    assertThat(f)
        .extracting(PolicyFinding::toString)
        .containsExactly("b.drl:4: rule \"r\": refused: java.util.Timer (threads)");
  }

  @Test
  void aRuleSetRefusedByTheLintIsNeverCompiled() {
    // the lint runs first: its refusal is reported, not the other file's syntax error
    List<RuleSource> sources =
        List.of(
            new RuleSource(
                "a.drl",
                "a.drl",
                "package dev.evictd.rules;\nrule \"a\" when then System.exit(0); end\n"),
            new RuleSource(
                "b.drl", "b.drl", "package dev.evictd.rules;\nrule \"b\" when then x( end\n"));
    assertThatThrownBy(() -> RuleCompiler.compile("x", sources))
        .isInstanceOf(RulesException.class)
        .hasMessage("a.drl:2: rule \"a\": refused: java.lang.System (system access)");
  }

  @Test
  void aMisspelledTypeGetsTheCompilersErrorAndANameOnlyTheCompilerKnowsIsRefused() {
    String typo =
        "package dev.evictd.rules;\nimport dev.evictd.api.*;\nrule \"r\" when PodFactt() then end\n";
    assertThatThrownBy(
            () -> RuleCompiler.compile("x", List.of(new RuleSource("t.drl", "t.drl", typo))))
        .isInstanceOf(RulesException.class)
        .hasMessageContaining("Unable to resolve ObjectType 'PodFactt'");
    // MVEL resolves Array (java.lang.reflect.Array) on its own: the rule compiles, and is refused
    // all the same
    String mvel =
        "package dev.evictd.rules;\nimport dev.evictd.api.*;\n"
            + "rule \"r\" when $p: PodFact(Array.getLength(labels.keySet().toArray()) >= 0) then end\n";
    assertThatThrownBy(
            () -> RuleCompiler.compile("x", List.of(new RuleSource("m.drl", "m.drl", mvel))))
        .isInstanceOf(RulesException.class)
        .hasMessage("m.drl:3: rule \"r\": refused: Array (unknown type (not on the allowlist))");
  }
}
