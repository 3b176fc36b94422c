package dev.evictd.hostile;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.RulesException;
import dev.evictd.ruleset.RuleCompiler;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * A rule file whose name imitates another's with a look-alike letter is refused (issue 48, class 5:
 * {@code sеlect.drl}, Cyrillic "е", running beside {@code select.drl}).
 */
class RuleFileNameTest {
  @Test
  void aNonAsciiRuleFileNameIsRefusedNamingTheCharacter() {
    Path dir = Path.of("src/test/resources/hostile-rules/homoglyph-name");
    assertThatThrownBy(() -> RuleCompiler.read(dir))
        .isInstanceOf(RulesException.class)
        .hasMessageContaining("U+0435 at 2")
        .hasMessageContaining("rule file names must be printable ASCII");
  }
}
