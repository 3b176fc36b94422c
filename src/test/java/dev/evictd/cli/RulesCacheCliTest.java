package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --rules-cache}: an unchanged set is checked from its verified entry, with the same answer.
 */
class RulesCacheCliTest {
  @Test
  void aSecondRulesCheckOfAnUnchangedSetAnswersTheSameFromTheCache(@TempDir Path tmp)
      throws Exception {
    Path cache = tmp.resolve("cache");
    // not the default rules: the build's packaged entry answers for those
    String rules = "fixtures/examples/qos-ranking/rules";
    CliTest.Run first = CliTest.run("rules", "check", rules, "--rules-cache", cache.toString());
    assertThat(first.code()).as(first.err()).isZero();
    try (Stream<Path> s = Files.list(cache)) {
      assertThat(s.filter(p -> p.toString().endsWith(".entry")).count()).isEqualTo(1);
    }
    CliTest.Run second = CliTest.run("rules", "check", rules, "--rules-cache", cache.toString());
    assertThat(second.code()).as(second.err()).isZero();
    assertThat(second.out()).isEqualTo(first.out()).contains("policy lint passed");
  }

  @Test
  void aHostileSetIsRefusedFromTheCacheWithTheSameLines(@TempDir Path tmp) {
    String hostile = RuleTrustCliTest.HOSTILE;
    String cache = tmp.resolve("cache").toString();
    CliTest.Run fresh = CliTest.run("rules", "check", hostile, "--rules-cache", "off");
    assertThat(fresh.code()).isEqualTo(2);
    CliTest.Run let =
        CliTest.run("rules", "check", hostile, "--allow-unsafe-rules", "--rules-cache", cache);
    assertThat(let.code()).as(let.err()).isZero();
    CliTest.Run cached = CliTest.run("rules", "check", hostile, "--rules-cache", cache);
    assertThat(cached.code()).isEqualTo(2);
    assertThat(cached.err()).isEqualTo(fresh.err());
  }

  @Test
  void aCacheDirectoryOthersCanWriteIsNotUsed(@TempDir Path tmp) throws Exception {
    Path cache = tmp.resolve("cache");
    Files.createDirectories(cache);
    Files.setPosixFilePermissions(cache, PosixFilePermissions.fromString("rwxrwxrwx"));
    CliTest.Run r =
        CliTest.run(
            "rules",
            "check",
            "fixtures/examples/qos-ranking/rules",
            "--rules-cache",
            cache.toString());
    assertThat(r.code()).as(r.err()).isZero();
    try (Stream<Path> s = Files.list(cache)) {
      assertThat(s.toList()).isEmpty();
    }
  }

  @Test
  void theCacheDirectoryComesFromTheFlagTheEnvironmentOrTheUsersCacheDirectory(@TempDir Path home) {
    String h = home.toString();
    assertThat(RuleLoadOptions.cacheDir("/c", Map.of("EVICTD_RULES_CACHE", "/e"), h))
        .isEqualTo(Path.of("/c"));
    assertThat(RuleLoadOptions.cacheDir(null, Map.of("EVICTD_RULES_CACHE", "/e"), h))
        .isEqualTo(Path.of("/e"));
    assertThat(RuleLoadOptions.cacheDir("off", Map.of("EVICTD_RULES_CACHE", "/e"), h)).isNull();
    assertThat(RuleLoadOptions.cacheDir(null, Map.of("EVICTD_RULES_CACHE", "OFF"), h)).isNull();
    assertThat(RuleLoadOptions.cacheDir(null, Map.of("XDG_CACHE_HOME", "/x"), h))
        .isEqualTo(Path.of("/x/evictd/rules"));
    assertThat(RuleLoadOptions.cacheDir(null, Map.of("XDG_CACHE_HOME", "rel"), h))
        .isEqualTo(home.resolve(".cache/evictd/rules"));
    assertThat(RuleLoadOptions.cacheDir(null, Map.of(), null)).isNull();
  }

  @Test
  void aHomeThatDoesNotExistGivesNoCacheRatherThanOneCreatedThere(@TempDir Path dir) {
    // the nobody user's home is /nonexistent: run as root, the cache would create it
    Path missing = dir.resolve("nonexistent");
    assertThat(RuleLoadOptions.cacheDir(null, Map.of(), missing.toString())).isNull();
    assertThat(Files.exists(missing)).isFalse();
  }
}
