package dev.evictd.ruleset.lint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.RulesException;
import dev.evictd.engine.RuleSource;
import dev.evictd.ruleset.RuleCompiler;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Nested parentheses, brackets, casts and type arguments are refused before a parser sees more than
 * it can parse in bounded time and stack: Drools' DRL and DRLX parsers take time exponential in
 * them, and recurse once per level.
 */
class NestingTest {
  static final String HEAD = "package dev.evictd.rules;\nimport dev.evictd.api.*;\n";
  static final String REFUSED_DEEP =
      "refused: expression nested deeper than 10 (parentheses and brackets; split it, with"
          + " bindings, local variables or functions)";

  static PolicyLint.Report lint(String body) {
    return PolicyLint.check(List.of(new RuleSource("r.drl", "r.drl", HEAD + body)));
  }

  static String nested(int depth) {
    return "(".repeat(depth) + "true" + ")".repeat(depth);
  }

  @Test
  @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void anExpressionNested20000DeepIsRefusedWithItsFileAndLine() {
    String rule =
        "rule \"deep\"\nwhen\n    PodFact()\n    eval(" + nested(20_000) + ")\nthen\nend\n";
    assertThat(lint(rule).findings())
        .extracting(PolicyFinding::toString)
        .containsExactly("r.drl:6: " + REFUSED_DEEP);
    // and so is the set, with the lint's message, not the parser's stack overflow
    assertThatThrownBy(
            () ->
                RuleCompiler.compile(
                    "deep", List.of(new RuleSource("r.drl", "r.drl", HEAD + rule))))
        .isInstanceOf(RulesException.class)
        .hasMessage("r.drl:6: " + REFUSED_DEEP);
  }

  @Test
  void tenLevelsPassElevenAreRefusedAtTheLineTheyGoDeeper() {
    String consequence = "rule \"r\" when PodFact() then\n    boolean b =\n        %s;\nend\n";
    assertThat(lint(String.format(consequence, nested(10))).findings()).isEmpty();
    assertThat(lint(String.format(consequence, nested(11))).findings())
        .extracting(PolicyFinding::toString)
        .containsExactly("r.drl:5: " + REFUSED_DEEP);
    // brackets count with parentheses
    String brackets = "rule \"r\" when PodFact() then\n    int[] a = {0};\n    int x = %s;\nend\n";
    assertThat(lint(String.format(brackets, "a[".repeat(11) + "0" + "]".repeat(11))).findings())
        .extracting(PolicyFinding::toString)
        .containsExactly("r.drl:5: " + REFUSED_DEEP);
  }

  @Test
  void whatIsInCommentsAndStringsIsNotNesting() {
    String parens = "(".repeat(30);
    String rule =
        "// "
            + parens
            + "\n/* "
            + parens
            + " */\nrule \"r\" when PodFact(namespace != \""
            + parens
            + "\", name != '"
            + parens
            + "')\nthen\n    String s = \""
            + parens
            + "\";\n    char c = '(';\nend\n";
    assertThat(lint(rule).findings()).isEmpty();
    assertThat(Nesting.cost("\"" + parens + "\" + '(' + /* " + parens + " */ \"\"")).isZero();
    // a DRL string may span lines: what follows its end is code again
    assertThat(Nesting.file("rule \"a\n(((\" when\n" + "(".repeat(11), 0).tooDeepAt()).isEqualTo(3);
    // text the lexer would not take as a string is counted: nothing hides behind a bad quote
    assertThat(Nesting.cost("\"\\k((\"")).isEqualTo(1 + 3);
    assertThat(Nesting.cost("\"((\n((\"")).isEqualTo(1 + 3 + 9 + 27);
  }

  @Test
  void eachOpeningCostsThreeToThePowerOfWhatItIsInside() {
    assertThat(Nesting.cost("f(g(h(x)))")).isEqualTo(1 + 3 + 9);
    assertThat(Nesting.cost("f(a) + g(b) + h(c)")).isEqualTo(3);
    assertThat(Nesting.cost("(int)(int)(int) x")).isEqualTo(1 + 3 + 9);
    assertThat(Nesting.cost("(int) -(int) -(int) x")).isEqualTo(1 + 3 + 9);
    assertThat(Nesting.cost("List<List<List<String>>> x")).isEqualTo(1 + 3 + 9);
    // a comparison is not type arguments, and what a parenthesis opened ends with it
    assertThat(Nesting.cost("a < b && (c) > d")).isEqualTo(1);
    assertThat(Nesting.cost("f(a<b) * (c)")).isEqualTo(1 + 3 + 1);
  }

  @Test
  @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void manyModeratelyNestedExpressionsAreRefusedOnceTheyCostTooMuch() {
    // each of these costs 3,280: together, over 20 s of parsing without the limit
    StringBuilder sb = new StringBuilder("rule \"r\" when PodFact() then\n");
    for (int i = 0; i < 300; i++) {
      sb.append("    boolean b").append(i).append(" = ").append(nested(8)).append(";\n");
    }
    sb.append("end\n");
    int over = 3 + (int) (Nesting.MAX_COST / 3280) + 1; // the line of the copy that goes past
    assertThat(lint(sb.toString()).findings())
        .extracting(PolicyFinding::toString)
        .containsExactly(
            "r.drl:"
                + over
                + ": refused: too many deeply nested expressions (checking them would take too"
                + " long: each parenthesis, bracket or type argument inside n others (or after n"
                + " casts) costs 3^n, and a rule set may cost 100000; flatten the most deeply"
                + " nested ones)");
  }

  @Test
  @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
  void runsOfCastsAndNestedTypeArgumentsAreRefusedAsNesting() {
    // 20 casts in a row: 17 s in the DRL parser; 20 levels of type arguments: 4 s
    assertThat(
            lint("rule \"r\" when\n    PodFact(" + "(int)".repeat(20) + "priority > 0)\nthen end\n")
                .findings())
        .extracting(PolicyFinding::name)
        .containsExactly(Nesting.TOO_COSTLY);
    String types = "java.util.List<".repeat(20) + "String" + ">".repeat(20);
    assertThat(
            lint("rule \"r\" when\n    PodFact(((" + types + ") null) == null)\nthen end\n")
                .findings())
        .extracting(PolicyFinding::name)
        .containsExactly(Nesting.TOO_COSTLY);
  }

  @Test
  void theBudgetRefusesTheFragmentThatGoesPastItAndSkipsTheRest() {
    Nesting.Budget b = new Nesting.Budget();
    assertThat(b.charge(Nesting.MAX_COST)).isEqualTo(Nesting.Budget.Charge.PARSE);
    assertThat(b.charge(1)).isEqualTo(Nesting.Budget.Charge.REFUSE);
    assertThat(b.charge(1)).isEqualTo(Nesting.Budget.Charge.SKIP);
    assertThat(new Nesting.Budget().charge(Long.MAX_VALUE)).isEqualTo(Nesting.Budget.Charge.REFUSE);
  }

  @Test
  void theDefaultRulesCostAFractionOfTheBudget() {
    List<RuleSource> defaults = RuleCompiler.read(Path.of("rules"));
    long cost = 0;
    for (RuleSource s : defaults) {
      Nesting.Shape shape = Nesting.file(s.text(), 0);
      assertThat(shape.tooDeepAt()).as(s.path()).isZero();
      cost += shape.cost();
    }
    // docs/security.md: "the default rules cost about 1,500"
    assertThat(cost).isBetween(1_000L, 2_000L);
    PolicyLint.Report report = PolicyLint.check(defaults);
    assertThat(report.findings()).isEmpty();
    assertThat(report.names().parseBudget().spent()).isLessThan(cost);
  }
}
