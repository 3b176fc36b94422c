package dev.evictd.ruleset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.RulesException;
import dev.evictd.engine.RuleSet;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class RuleCompilerTest {
  static final Path SETS = Path.of("src/test/resources/rulesets");

  @Test
  void defaultRulesCompileAndMatchTheRulesDirectory() {
    RuleSet packaged = RuleCompiler.compileDefault();
    RuleSet fromDir = RuleCompiler.compile(Path.of("rules"));
    assertThat(packaged.files())
        .isEqualTo(fromDir.files())
        .contains("thresholds.drl", "decide.drl");
    assertThat(packaged.sha256()).isEqualTo(fromDir.sha256()).hasSize(64);
  }

  @Test
  void syntaxErrorNamesFileAndLine() {
    assertThatThrownBy(() -> RuleCompiler.compile(SETS.resolve("syntax-error")))
        .isInstanceOf(RulesException.class)
        .hasMessageStartingWith("src/test/resources/rulesets/syntax-error/broken.drl:8");
  }

  @Test
  void extendsMergesOverDefaultsByFileName() {
    RuleSet rs = RuleCompiler.compile(SETS.resolve("throws"));
    assertThat(rs.files()).contains("thresholds.drl", "zz-throws.drl");
    assertThat(rs.sha256()).isNotEqualTo(RuleCompiler.compileDefault().sha256());
    RuleSet qos = RuleCompiler.compile(Path.of("fixtures/examples/qos-ranking/rules"));
    assertThat(qos.files()).containsOnlyOnce("rank-memory.drl");
  }

  @Test
  void extendsCycleIsRefused() {
    assertThatThrownBy(() -> RuleCompiler.compile(SETS.resolve("cycle-a")))
        .isInstanceOf(RulesException.class)
        .hasMessageContaining("cycle");
  }

  @Test
  void directoryWithoutRulesIsRefused() {
    assertThatThrownBy(() -> RuleCompiler.compile(SETS.resolve("empty")))
        .isInstanceOf(RulesException.class)
        .hasMessageEndingWith("no .drl rule files");
    assertThatThrownBy(() -> RuleCompiler.compile(SETS.resolve("no-such-dir")))
        .isInstanceOf(RulesException.class)
        .hasMessageEndingWith("not a directory of rules");
  }

  @Test
  void binaryRuleFileIsRefused() {
    assertThatThrownBy(() -> RuleCompiler.compile(SETS.resolve("binary")))
        .isInstanceOf(RulesException.class)
        .hasMessageContaining("bin.drl:1: not a text file (NUL byte)");
  }
}
