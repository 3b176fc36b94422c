package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.ruleset.RuleCompiler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The CLI's rule trust options: --rules-sha256, --strict-permissions, --allow-unsafe-rules. */
class RuleTrustCliTest {
  static final String SAFE =
      "package dev.evictd.rules;\nimport dev.evictd.api.*;\nrule \"r\" when PodFact() then end\n";
  static final String HOSTILE = "src/test/resources/hostile-rules/process-runtime-fqn.drl";

  static CliTest.Run run(String... args) {
    return CliTest.run(args);
  }

  @Test
  void rulesCheckPrintsTheSha256ThatPinsTheRuleSet() {
    String sha = RuleCompiler.sha256(RuleCompiler.read(Path.of("rules")));
    CliTest.Run ok = run("rules", "check", "rules", "--rules-sha256", sha);
    assertThat(ok.code()).as(ok.err()).isZero();
    assertThat(ok.out()).contains("sha256 " + sha, "policy lint passed");

    CliTest.Run other = run("rules", "check", "rules", "--rules-sha256", "f".repeat(64));
    assertThat(other.code()).isEqualTo(2);
    assertThat(other.err())
        .isEqualTo(
            "evictd: rules: the rule set's SHA-256 is "
                + sha
                + ", not the pinned "
                + "f".repeat(64)
                + " (--rules-sha256)\n");

    CliTest.Run malformed = run("rules", "check", "--rules-sha256", "latest");
    assertThat(malformed.code()).isEqualTo(2);
    assertThat(malformed.err()).contains("--rules-sha256: \"latest\" is not a SHA-256");
  }

  @Test
  void thePinAppliesToEveryCommandThatLoadsRules() {
    CliTest.Run r =
        run(
            "replay",
            "--rules-sha256",
            "0".repeat(64),
            "fixtures/memory/soft-memory-pressure.yaml");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err())
        .contains("default: the rule set's SHA-256 is ", "not the pinned " + "0".repeat(64));
  }

  @Test
  void rulesCheckWarnsAboutFilesOthersCanWriteAndStrictPermissionsRefusesThem(@TempDir Path dir)
      throws IOException {
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    Path file = Files.writeString(dir.resolve("r.drl"), SAFE);
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-rw-r--"));
    CliTest.Run warned = run("rules", "check", dir.toString());
    assertThat(warned.code()).as(warned.err()).isZero();
    assertThat(warned.err())
        .isEqualTo("evictd: warning: " + file + ": writable by group (mode 0664)\n");

    CliTest.Run strict = run("rules", "check", "--strict-permissions", dir.toString());
    assertThat(strict.code()).isEqualTo(2);
    assertThat(strict.err()).startsWith("evictd: " + file + ": writable by group (mode 0664)\n");

    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
    CliTest.Run fixed = run("rules", "check", "--strict-permissions", dir.toString());
    assertThat(fixed.code()).as(fixed.err()).isZero();
    assertThat(fixed.err()).isEmpty();
  }

  @Test
  void allowUnsafeRulesLoadsWhatTheLintRefusesAndSaysSo() {
    CliTest.Run refused = run("rules", "check", HOSTILE);
    assertThat(refused.code()).isEqualTo(2);

    CliTest.Run allowed = run("rules", "check", "--allow-unsafe-rules", HOSTILE);
    assertThat(allowed.code()).as(allowed.err()).isZero();
    assertThat(allowed.out()).contains("policy lint DISABLED");
    assertThat(allowed.err())
        .contains("evictd: warning: " + HOSTILE + ": policy lint disabled")
        .contains(
            "evictd: warning: "
                + HOSTILE
                + ":11: rule \"hostile: runtime\": refused: java.lang.Runtime (processes)");
  }

  @Test
  void theEnvironmentVariableIsTheSameOptOut() {
    assertThat(RuleLoadOptions.unsafeFromEnv(Map.of(RuleLoadOptions.UNSAFE_ENV, "1"))).isTrue();
    assertThat(RuleLoadOptions.unsafeFromEnv(Map.of(RuleLoadOptions.UNSAFE_ENV, "true"))).isTrue();
    assertThat(RuleLoadOptions.unsafeFromEnv(Map.of(RuleLoadOptions.UNSAFE_ENV, "0"))).isFalse();
    assertThat(RuleLoadOptions.unsafeFromEnv(Map.of())).isFalse();
  }
}
