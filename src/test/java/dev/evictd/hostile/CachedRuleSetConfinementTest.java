package dev.evictd.hostile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.evictd.api.RulesException;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.ruleset.RuleSetCache;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A rule set that comes with a cache entry is exactly as confined as a freshly compiled one:
 * hostile rules are refused with the same message from their entry, and even an entry forged to say
 * the lint found nothing (digest recomputed, as only someone who may write the cache could) does
 * not let hostile code run — the set is still compiled and its compiled code checked.
 */
class CachedRuleSetConfinementTest {
  static final Path HOSTILE = Path.of("src/test/resources/hostile-rules");

  private static final RuleCompiler.Options UNSAFE =
      new RuleCompiler.Options(true, null, RuleCompiler.Ownership.IGNORE);

  @ParameterizedTest
  @ValueSource(
      strings = {
        "process-runtime-fqn.drl",
        "io-file-delete.drl",
        "eval-runtime.drl",
        "matches-compound.drl"
      })
  void hostileRulesAreRefusedFromTheCacheAsWhenCompiledAfresh(String name, @TempDir Path tmp) {
    Path file = HOSTILE.resolve(name);
    RuleSetCache cache = lintOnly(tmp.resolve("cache"));
    String fresh = refusal(file, RuleCompiler.Options.STRICT);
    // only a set that compiled is remembered: here with the refusals let through
    RuleCompiler.compileFile(file, UNSAFE.withCache(cache));
    assertThat(RuleCompiler.checkFile(file, UNSAFE.withCache(cache)).cached()).isTrue();
    assertThat(refusal(file, RuleCompiler.Options.STRICT.withCache(cache))).isEqualTo(fresh);
    RulesException checked =
        assertThrows(
            RulesException.class,
            () -> RuleCompiler.checkFile(file, RuleCompiler.Options.STRICT.withCache(cache)));
    assertThat(checked.getMessage()).isEqualTo(fresh);
  }

  @ParameterizedTest
  @ValueSource(strings = {"process-runtime-fqn.drl", "io-file-delete.drl", "eval-runtime.drl"})
  void anEntryForgedToHideTheLintsFindingsStillLetsNoHostileCodeRun(String name, @TempDir Path tmp)
      throws IOException {
    Path file = HOSTILE.resolve(name);
    Path dir = tmp.resolve("cache");
    RuleSetCache cache = lintOnly(dir);
    RuleCompiler.compileFile(file, UNSAFE.withCache(cache));
    Path entry;
    try (Stream<Path> s = Files.list(dir)) {
      entry = s.filter(p -> p.toString().endsWith(".entry")).findFirst().orElseThrow();
    }
    String body = Files.readString(entry).lines().skip(1).findFirst().orElseThrow();
    String forged =
        body.replaceAll("\"findings\":\\[[^\\]]*\\]", "\"findings\":[]")
            .replaceAll("\"compiledFindings\":\\[.*\\]\\}$", "\"compiledFindings\":[]}");
    assertThat(forged).isNotEqualTo(body).contains("\"findings\":[]");
    Files.writeString(entry, stamp(forged));
    RuleCompiler.Options strict = RuleCompiler.Options.STRICT.withCache(cache);
    assertThat(RuleCompiler.checkFile(file, UNSAFE.withCache(cache)).cached()).isTrue();
    RulesException refused =
        assertThrows(RulesException.class, () -> RuleCompiler.compileFile(file, strict));
    assertThat(refused.getMessage().lines().toList())
        .allMatch(l -> l.contains("(compiled code)"), "refused by the compiled-code check")
        .isNotEmpty();
  }

  /**
   * A cache of the lint's entries only: with executable models (built in a child that lints the
   * sources afresh) the entry is not even read. That route: below.
   */
  private static RuleSetCache lintOnly(Path dir) {
    return RuleSetCache.at(dir).withModelBuilds(RuleSetCache.ModelBuilds.OFF);
  }

  @ParameterizedTest
  @ValueSource(strings = {"process-runtime-fqn.drl", "matches-compound.drl"})
  void hostileRulesAreRefusedOnTheModelPathAsWhenCompiledAfresh(String name, @TempDir Path tmp) {
    Path file = HOSTILE.resolve(name);
    // a real child process builds the model: it refuses the set with the compiler's own message,
    // whatever lint entry the cache holds for it
    RuleSetCache cache = RuleSetCache.at(tmp.resolve("cache"));
    String fresh = refusal(file, RuleCompiler.Options.STRICT);
    RuleCompiler.compileFile(file, UNSAFE.withCache(cache));
    assertThat(refusal(file, RuleCompiler.Options.STRICT.withCache(cache))).isEqualTo(fresh);
    try (Stream<Path> s = Files.list(tmp.resolve("cache"))) {
      assertThat(s.map(p -> p.getFileName().toString())).noneMatch(n -> n.endsWith(".model"));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static String refusal(Path file, RuleCompiler.Options options) {
    return assertThrows(RulesException.class, () -> RuleCompiler.compileFile(file, options))
        .getMessage();
  }

  private static String stamp(String body) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(body.getBytes(StandardCharsets.UTF_8));
      return "sha256:" + HexFormat.of().formatHex(d) + "\n" + body;
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
