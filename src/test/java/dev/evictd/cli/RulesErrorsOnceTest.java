package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A --rules directory or a --rules-sha256 pin that no fixture could run on is refused once, before
 * any fixture runs, naming the option and its value (exit 2): not on every fixture's line.
 */
class RulesErrorsOnceTest {
  private static final String NOT_A_SHA256 =
      "evictd: --rules-sha256: \"abc\" is not a SHA-256 (64 hexadecimal digits)\n";

  @Test
  void aMissingRulesDirectoryIsSaidOnceBeforeAnyFixture(@TempDir Path tmp) {
    Path missing = tmp.resolve("no-such-rules");
    CliTest.Run r = CliTest.run("test", "-j", "2", "--rules", missing.toString(), "fixtures/pid");
    assertThat(r.code()).isEqualTo(Main.BAD_INPUT);
    assertThat(r.err()).isEqualTo("evictd: --rules " + missing + ": not a directory of rules\n");
    assertThat(r.out()).isEmpty();
  }

  @Test
  void aRulesPathThatIsAFileIsSaidOnceBeforeAnyFixture() {
    CliTest.Run r = CliTest.run("test", "--rules", "pom.xml", "fixtures/pid");
    assertThat(r.code()).isEqualTo(Main.BAD_INPUT);
    assertThat(r.err()).isEqualTo("evictd: --rules pom.xml: not a directory of rules\n");
    assertThat(r.out()).isEmpty();
  }

  @Test
  void aPinThatIsNotASha256IsSaidOnceBeforeAnyFixture() {
    CliTest.Run r = CliTest.run("test", "--rules-sha256", "abc", "fixtures/pid");
    assertThat(r.code()).isEqualTo(Main.BAD_INPUT);
    assertThat(r.err()).isEqualTo(NOT_A_SHA256);
    assertThat(r.out()).isEmpty();
  }

  @Test
  void aPinTheRulesDirectoryDoesNotHaveIsSaidOnceBeforeAnyFixture() {
    CliTest.Run r =
        CliTest.run("test", "--rules", "rules", "--rules-sha256", "a".repeat(64), "fixtures/pid");
    assertThat(r.code()).isEqualTo(Main.BAD_INPUT);
    assertThat(r.err())
        .startsWith("evictd: --rules rules: the rule set's SHA-256 is ")
        .endsWith(", not the pinned " + "a".repeat(64) + " (--rules-sha256)\n");
    assertThat(r.err().lines()).hasSize(1);
    assertThat(r.out()).isEmpty();
  }

  @Test
  void rulesCheckRunRefusesABadPinOnceBeforeAnyFixture() {
    CliTest.Run r = CliTest.run("rules", "check", "--run", "fixtures/pid", "--rules-sha256", "abc");
    assertThat(r.code()).isEqualTo(Main.BAD_INPUT);
    assertThat(r.err()).isEqualTo(NOT_A_SHA256);
    assertThat(r.out()).isEmpty();
  }
}
