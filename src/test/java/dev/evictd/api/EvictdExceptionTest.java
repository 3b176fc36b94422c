package dev.evictd.api;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Input errors are one bounded line whatever they quote; rule set errors keep one problem per line.
 */
class EvictdExceptionTest {

  @Test
  void controlCharactersInAMessageAreEscaped() {
    ConfigException e = new ConfigException("f.yaml:3: name: invalid \"a\nb\tc\u0000\u2028\"");
    assertThat(e.getMessage()).isEqualTo("f.yaml:3: name: invalid \"a\\nb\\tc\\u0000\\u2028\"");
  }

  @Test
  void anEnormousMessageKeepsItsHeadAndTail() {
    String value = "x".repeat(5_000_000);
    FixtureException e =
        new FixtureException("f.yaml:7: kind: expected kind Pod, found \"" + value + "\" (end)");
    assertThat(e.getMessage())
        .startsWith("f.yaml:7: kind: expected kind Pod, found \"xxx")
        .endsWith("xxx\" (end)")
        .contains("characters) ...")
        .hasSizeLessThan(EvictdException.MAX_MESSAGE + 100);
  }

  @Test
  void aShortOneLineMessageIsUnchanged() {
    assertThat(new StatsException("summary.json:1: not valid YAML").getMessage())
        .isEqualTo("summary.json:1: not valid YAML");
    assertThat(new EvictdException(null).getMessage()).isNull();
  }

  @Test
  void ruleSetErrorsKeepOneProblemPerLine() {
    RulesException e = new RulesException("a.drl:1: refused: x\nb.drl:2: refused: y");
    assertThat(e.getMessage().lines())
        .containsExactly("a.drl:1: refused: x", "b.drl:2: refused: y");
  }
}
