package dev.evictd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Regular expressions for rules on RE2/J: java.util.regex's meaning where RE2 has the syntax. */
class RuleRegexTest {
  @Test
  void matchesTheWholeTextAsTheDrlOperatorDoes() {
    assertThat(RuleRegex.matches("web-1", "web-.*")).isTrue();
    assertThat(RuleRegex.matches("my-web-1", "web-.*")).isFalse();
    assertThat(RuleRegex.find("my-web-1", "web-\\d")).isTrue();
    assertThat(RuleRegex.matches(null, "x")).isFalse();
  }

  @Test
  void patternsThatBacktrackOnJavaUtilRegexAnswerAtOnce() {
    String sixty = "a".repeat(60);
    assertThat(RuleRegex.matches(sixty, "(.*a){20}b")).isFalse();
    assertThat(RuleRegex.matches(sixty + "c", "(a|aa)*c")).isTrue();
    assertThat(RuleRegex.matches(sixty, "(a*)*b")).isFalse();
  }

  @Test
  void javaStyleUnicodeEscapesAreTranslatedAndOtherEscapesKept() {
    assertThat(RuleRegex.javaEscapes("a\\u0041")).isEqualTo("a\\x{0041}");
    assertThat(RuleRegex.matches("aA", "a\\u0041")).isTrue();
    assertThat(RuleRegex.javaEscapes("a\\\\u0041")).isEqualTo("a\\\\u0041");
    assertThat(RuleRegex.matches("a\\u0041", "a\\\\u0041")).isTrue();
  }

  @Test
  void whatRe2CannotRunIsAnErrorNamingThePattern() {
    assertThat(RuleRegex.syntaxError("(a+)\\1")).contains("\\1");
    assertThat(RuleRegex.syntaxError("(?=a)b")).isNotNull();
    assertThat(RuleRegex.syntaxError("web-[0-9]+")).isNull();
    assertThatThrownBy(() -> RuleRegex.matches("x", "x".repeat(RuleRegex.MAX_PATTERN_LENGTH + 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at most " + RuleRegex.MAX_PATTERN_LENGTH);
  }

  @Test
  void replaceAllAndSplitUseRe2() {
    assertThat(RuleRegex.replaceAll("a1b22c", "[0-9]+", "#")).isEqualTo("a#b#c");
    assertThat(RuleRegex.split("a, b,c", ",\\s*")).isEqualTo(List.of("a", "b", "c"));
  }
}
