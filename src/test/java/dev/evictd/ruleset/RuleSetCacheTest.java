package dev.evictd.ruleset;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.RulesException;
import dev.evictd.engine.RuleSet;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The verified rule-set cache: an unchanged set is answered from its entry, and an entry that does
 * not hold (changed content, other sources, other versions, unsafe owner or mode) is refused and
 * the set checked afresh.
 */
class RuleSetCacheTest {
  static final Path QOS = Path.of("fixtures/examples/qos-ranking/rules");

  /**
   * The lint's entries on their own: no executable models beside them (those and how they keep the
   * lint's entry: {@link ModelCacheTest}).
   */
  private static RuleCompiler.Options options(Path cache) {
    return RuleCompiler.Options.STRICT.withCache(
        RuleSetCache.at(cache).withModelBuilds(RuleSetCache.ModelBuilds.OFF));
  }

  private static Path onlyEntry(Path cache) throws IOException {
    try (Stream<Path> s = Files.list(cache)) {
      List<Path> entries = s.filter(p -> p.toString().endsWith(".entry")).toList();
      assertThat(entries).hasSize(1);
      return entries.get(0);
    }
  }

  @Test
  void aClassIsStampedWithItsLengthAndCrcAndTheVersionWithTheCheckersStamps() throws IOException {
    byte[] b =
        RuleSetCache.class
            .getClassLoader()
            .getResourceAsStream("dev/evictd/ruleset/lint/PolicyLint.class")
            .readAllBytes();
    java.util.zip.CRC32 crc = new java.util.zip.CRC32();
    crc.update(b);
    assertThat(RuleSetCache.classStamp("dev/evictd/ruleset/lint/PolicyLint.class"))
        .isEqualTo(b.length + ":" + Long.toHexString(crc.getValue()));
    assertThat(RuleSetCache.classStamp("dev/evictd/ruleset/NoSuchClass.class")).isEqualTo("-");
    // the version names the build and a digest of the checkers' stamps, the same at every call
    assertThat(RuleSetCache.evictdVersion())
        .matches("[^+]+\\+[0-9a-f]{16}")
        .isEqualTo(RuleSetCache.evictdVersion());
    // the fact classes' digest follows each class's stamp, and its name
    String facts = PrebuiltModel.factClassesSha256(List.of("dev.evictd.api.Signal"));
    assertThat(facts)
        .hasSize(64)
        .isNotEqualTo(PrebuiltModel.factClassesSha256(List.of("dev.evictd.api.Quantity")))
        .isNotEqualTo(PrebuiltModel.factClassesSha256(List.of("dev.evictd.api.NoSuchFact")))
        .isEqualTo(PrebuiltModel.factClassesSha256(List.of("dev.evictd.api.Signal")));
  }

  @Test
  void anUnchangedSetIsCheckedFromItsEntryWithoutCompiling(@TempDir Path tmp) throws IOException {
    Path cache = tmp.resolve("cache");
    RuleCompiler.Checked first = RuleCompiler.check(QOS, options(cache));
    assertThat(first.cached()).isFalse();
    Path entry = onlyEntry(cache);
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(entry)))
        .isEqualTo("rw-r--r--");
    RuleCompiler.Checked second = RuleCompiler.check(QOS, options(cache));
    assertThat(second.cached()).isTrue();
    assertThat(second.sha256()).isEqualTo(first.sha256());
    assertThat(second.rules()).isEqualTo(first.rules()).isPositive();
    assertThat(second.files()).isEqualTo(first.files());
  }

  @Test
  void aSetLoadedWithItsEntryIsTheSameCompiledSet(@TempDir Path tmp) {
    Path cache = tmp.resolve("cache");
    RuleSet fresh = RuleCompiler.compile(QOS, options(cache));
    RuleSet cached = RuleCompiler.compile(QOS, options(cache));
    assertThat(RuleCompiler.check(QOS, options(cache)).cached()).isTrue();
    assertThat(cached.sha256()).isEqualTo(fresh.sha256());
    assertThat(RuleCompiler.ruleCount(cached)).isEqualTo(RuleCompiler.ruleCount(fresh));
  }

  @Test
  void aChangedSetMissesTheEntryOfTheOldOne(@TempDir Path tmp) throws IOException {
    Path rules = tmp.resolve("rules");
    Files.createDirectories(rules);
    try (Stream<Path> s = Files.list(QOS)) {
      for (Path p : s.toList()) {
        Files.copy(p, rules.resolve(p.getFileName()));
      }
    }
    Path cache = tmp.resolve("cache");
    RuleCompiler.check(rules, options(cache));
    Path drl;
    try (Stream<Path> s = Files.list(rules)) {
      drl = s.filter(p -> p.toString().endsWith(".drl")).findFirst().orElseThrow();
    }
    Files.writeString(drl, Files.readString(drl) + "\n// changed\n");
    assertThat(RuleCompiler.check(rules, options(cache)).cached()).isFalse();
  }

  @Test
  void anEntryWhoseContentWasChangedIsRefusedAndReplaced(@TempDir Path tmp) throws IOException {
    Path cache = tmp.resolve("cache");
    long rules = RuleCompiler.check(QOS, options(cache)).rules();
    Path entry = onlyEntry(cache);
    String text = Files.readString(entry);
    Files.writeString(entry, text.replace("\"rules\":" + rules, "\"rules\":" + (rules + 1)));
    assertThat(Files.readString(entry)).isNotEqualTo(text);
    RuleCompiler.Checked again = RuleCompiler.check(QOS, options(cache));
    assertThat(again.cached()).isFalse();
    assertThat(again.rules()).isEqualTo(rules);
    // checked afresh, the entry is written anew and holds again
    assertThat(RuleCompiler.check(QOS, options(cache)).cached()).isTrue();
  }

  @Test
  void anEntryForOtherSourcesIsRefusedEvenWithAMatchingDigest(@TempDir Path tmp)
      throws IOException {
    Path cache = tmp.resolve("cache");
    RuleCompiler.Checked first = RuleCompiler.check(QOS, options(cache));
    Path entry = onlyEntry(cache);
    String body = Files.readString(entry).lines().skip(1).findFirst().orElseThrow();
    String other = "0".repeat(64);
    String forged = body.replace(first.sha256(), other);
    Files.write(entry, restamped(forged));
    assertThat(RuleCompiler.check(QOS, options(cache)).cached()).isFalse();
  }

  @Test
  void anEntryOfAnotherEvictdVersionIsRefused(@TempDir Path tmp) throws IOException {
    Path cache = tmp.resolve("cache");
    RuleCompiler.check(QOS, options(cache));
    Path entry = onlyEntry(cache);
    String body = Files.readString(entry).lines().skip(1).findFirst().orElseThrow();
    Files.write(entry, restamped(body.replace(RuleSetCache.evictdVersion(), "0.0.1+old")));
    assertThat(RuleCompiler.check(QOS, options(cache)).cached()).isFalse();
  }

  @Test
  void anEntryOthersCanWriteIsRefused(@TempDir Path tmp) throws IOException {
    Path cache = tmp.resolve("cache");
    RuleCompiler.check(QOS, options(cache));
    Path entry = onlyEntry(cache);
    Files.setPosixFilePermissions(entry, PosixFilePermissions.fromString("rw-rw-r--"));
    assertThat(RuleCompiler.check(QOS, options(cache)).cached()).isFalse();
  }

  @Test
  void aCacheDirectoryOthersCanWriteIsNeitherReadNorWritten(@TempDir Path tmp) throws IOException {
    Path cache = tmp.resolve("cache");
    RuleCompiler.check(QOS, options(cache));
    Path entry = onlyEntry(cache);
    Files.setPosixFilePermissions(cache, PosixFilePermissions.fromString("rwxrwxrwx"));
    assertThat(RuleCompiler.check(QOS, options(cache)).cached()).isFalse();
    Files.delete(entry);
    RuleCompiler.check(QOS, options(cache));
    try (Stream<Path> s = Files.list(cache)) {
      assertThat(s.toList()).isEmpty();
    }
  }

  @Test
  void aRefusalLetThroughByUnsafeRulesIsRefusedAgainFromTheEntry(@TempDir Path tmp) {
    Path cache = tmp.resolve("cache");
    Path hostile = Path.of("src/test/resources/hostile-rules/process-runtime-fqn.drl");
    RuleCompiler.Options unsafe =
        new RuleCompiler.Options(true, null, RuleCompiler.Ownership.IGNORE);
    RuleCompiler.Checked let =
        RuleCompiler.checkFile(hostile, unsafe.withCache(options(cache).cache()));
    assertThat(let.cached()).isFalse();
    assertThat(let.warnings()).anyMatch(w -> w.contains("refused: java.lang.Runtime"));
    String fresh = refusal(() -> RuleCompiler.checkFile(hostile, RuleCompiler.Options.STRICT));
    assertThat(RuleCompiler.checkFile(hostile, unsafe.withCache(options(cache).cache())).cached())
        .isTrue();
    assertThat(refusal(() -> RuleCompiler.checkFile(hostile, options(cache)))).isEqualTo(fresh);
    assertThat(refusal(() -> RuleCompiler.compileFile(hostile, options(cache)))).isEqualTo(fresh);
  }

  @Test
  void anEntryReadsBackEqualToWhatWasWritten() {
    var lint =
        new dev.evictd.ruleset.lint.StoredLint(
            List.of(
                new dev.evictd.ruleset.lint.PolicyFinding(
                    "r.drl", 3, "rule \"x\"", "java.lang.Runtime", "processes \u00e9")),
            java.util.Map.of("x", new dev.evictd.ruleset.lint.PolicyLint.Location("r.drl", 3, "w")),
            java.util.Map.of(),
            java.util.Set.of("T"),
            List.of(),
            java.util.Map.of("T", new dev.evictd.ruleset.lint.PolicyLint.Location("r.drl", 9, "d")),
            "dev.evictd.rules",
            java.util.Set.of("T"),
            java.util.Map.of("Quantity", "dev.evictd.api.Quantity"),
            List.of("dev.evictd.api."));
    RuleSetCache.Entry e =
        new RuleSetCache.Entry(
            RuleSetCache.FORMAT, "v", "d", "a".repeat(64), List.of("r.drl"), 7, lint, List.of());
    String text = new String(RuleSetCache.encode(e), StandardCharsets.UTF_8);
    assertThat(EntryReader.read(text.substring(text.indexOf('\n') + 1))).isEqualTo(e);
  }

  @Test
  void aMalformedEntryIsRefusedNotThrown() {
    byte[] bad =
        stamp("{\"format\":\"" + RuleSetCache.FORMAT + "\"}").getBytes(StandardCharsets.UTF_8);
    assertThat(RuleSetCache.verified("x", "s", "a".repeat(64), bad, false)).isNull();
    byte[] notJson = stamp("{[").getBytes(StandardCharsets.UTF_8);
    assertThat(RuleSetCache.verified("x", "s", "a".repeat(64), notJson, false)).isNull();
  }

  @Test
  void theBuildsPackagedEntryHoldsForTheDefaultRulesAndOnlyForThem(@TempDir Path tmp)
      throws IOException {
    Path out = tmp.resolve("evictd-rules.cache");
    PackagedRuleSet.write(out);
    byte[] bytes = Files.readAllBytes(out);
    String sha = RuleCompiler.sha256(RuleCompiler.readDefault());
    RuleSetCache.Entry e = RuleSetCache.verified("packaged", "default", sha, bytes, true);
    assertThat(e).isNotNull();
    assertThat(e.rules()).isPositive();
    assertThat(e.lint().findings()).isEmpty();
    assertThat(RuleSetCache.verified("packaged", "other", "b".repeat(64), bytes, true)).isNull();
  }

  static String refusal(Runnable r) {
    try {
      r.run();
    } catch (RulesException e) {
      return e.getMessage();
    }
    throw new AssertionError("not refused");
  }

  /** An entry with its content's digest recomputed (what only someone who may write it can do). */
  static byte[] restamped(String body) {
    return RuleSetCacheTest.stamp(body).getBytes(StandardCharsets.UTF_8);
  }

  static String stamp(String body) {
    try {
      var md = java.security.MessageDigest.getInstance("SHA-256");
      return "sha256:"
          + java.util.HexFormat.of().formatHex(md.digest(body.getBytes(StandardCharsets.UTF_8)))
          + "\n"
          + body;
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aMissingCacheDirectoryIsCreatedSafe(@TempDir Path tmp) throws IOException {
    Path cache = tmp.resolve("a/b/cache");
    RuleCompiler.check(QOS, options(cache));
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(cache)))
        .isEqualTo("rwxr-xr-x");
    assertThat(onlyEntry(cache)).isRegularFile();
  }
}
