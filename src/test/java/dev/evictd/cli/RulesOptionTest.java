package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.RulesException;
import dev.evictd.engine.RuleSet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RulesOption} compiles each distinct rule set once, also when several threads ask at once
 * ({@code evictd test} runs fixtures in parallel), and a directory holding the same sources as a
 * set already compiled shares its knowledge base while still being checked as its own.
 */
class RulesOptionTest {
  private static RulesOption option() {
    RulesOption o = new RulesOption();
    o.cache = "off"; // the packaged entry still answers for the default rules' sources
    return o;
  }

  @Test
  void aDirectoryWithTheDefaultRulesSharesTheirKnowledgeBase() {
    RulesOption o = option();
    RuleSet defaults = o.resolveQuietly(null);
    RuleSet dir = o.resolveQuietly(Path.of("rules"));
    assertThat(dir.sha256()).isEqualTo(defaults.sha256());
    assertThat(dir.kieBase()).isSameAs(defaults.kieBase());
    assertThat(dir.source()).isEqualTo("rules");
    assertThat(dir.files()).isEqualTo(defaults.files());
    // asked again: the same set, not another check
    assertThat(o.resolveQuietly(Path.of("rules"))).isSameAs(dir);
    assertThat(o.resolveQuietly(null)).isSameAs(defaults);
  }

  @Test
  void aDirectoryThatDiffersInOneByteIsCompiledOnItsOwn(@TempDir Path tmp) throws IOException {
    Path copy = copyOfTheRules(tmp);
    Path f = copy.resolve("decide.drl");
    Files.writeString(f, Files.readString(f) + "\n// one more line\n");
    RulesOption o = option();
    RuleSet defaults = o.resolveQuietly(null);
    RuleSet changed = o.resolveQuietly(copy);
    assertThat(changed.sha256()).isNotEqualTo(defaults.sha256());
    assertThat(changed.kieBase()).isNotSameAs(defaults.kieBase());
  }

  @Test
  void aSharedSetIsStillRefusedByThePinUnderItsOwnName() {
    RuleSet defaults = option().resolveQuietly(null);
    RulesOption pinned = option();
    pinned.pin = "0".repeat(64);
    assertThatThrownBy(() -> pinned.resolveQuietly(Path.of("rules")))
        .isInstanceOf(RulesException.class)
        .hasMessageStartingWith("rules: the rule set's SHA-256 is " + defaults.sha256());
    // a set compiled first does not let an identical directory skip the pin
    pinned.pin = null;
    RuleSet first = pinned.resolveQuietly(null);
    pinned.pin = "0".repeat(64);
    assertThatThrownBy(() -> pinned.resolveQuietly(Path.of("rules")))
        .isInstanceOf(RulesException.class)
        .hasMessageStartingWith("rules: the rule set's SHA-256 is " + first.sha256());
  }

  @Test
  void threadsAskingForTheSameSetAtOnceGetOneCompiledSet(@TempDir Path tmp) throws Exception {
    Path copy = copyOfTheRules(tmp);
    Path f = copy.resolve("decide.drl");
    Files.writeString(f, Files.readString(f) + "\n// not the defaults\n");
    RulesOption o = option();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<RuleSet>> sets = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        sets.add(pool.submit(() -> o.resolveQuietly(copy)));
      }
      RuleSet one = sets.get(0).get();
      for (Future<RuleSet> s : sets) {
        assertThat(s.get()).isSameAs(one);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  private static Path copyOfTheRules(Path tmp) throws IOException {
    Path copy = tmp.resolve("rules");
    Files.createDirectories(copy);
    try (Stream<Path> s = Files.list(Path.of("rules"))) {
      for (Path p : s.toList()) {
        Files.copy(p, copy.resolve(p.getFileName()));
      }
    }
    return copy;
  }

  @Test
  void theDefaultsLoadedAheadAreTakenByACommandWhoseOptionsAreTheDefaults() {
    RulesOption.loadDefaultsAhead();
    RulesOption plain = new RulesOption();
    RuleSet rs = plain.resolveQuietly(null);
    assertThat(RulesOption.defaultsAheadPending()).isFalse(); // taken, not loaded again
    assertThat(rs.source()).isEqualTo("default");
    assertThat(plain.resolveQuietly(null)).isSameAs(rs);
  }

  @Test
  void theDefaultsLoadedAheadAreNotTakenWhereAnOptionDiffers() {
    RulesOption.loadDefaultsAhead();
    try {
      RulesOption pinned = new RulesOption();
      pinned.pin = "0".repeat(64);
      assertThatThrownBy(() -> pinned.resolveQuietly(null))
          .isInstanceOf(RulesException.class)
          .hasMessageContaining("SHA-256");
      RulesOption unsafe = new RulesOption();
      unsafe.allowUnsafe = true;
      unsafe.resolveQuietly(null);
      RulesOption strict = new RulesOption();
      strict.strictPermissions = true;
      strict.resolveQuietly(null);
      RulesOption cached = option();
      cached.resolveQuietly(null);
      RulesOption dir = new RulesOption();
      dir.rules = Path.of("rules");
      assertThat(dir.resolveQuietly(null).source()).isEqualTo("rules");
      assertThat(RulesOption.defaultsAheadPending()).isTrue();
    } finally {
      RulesOption.settleDefaultsAhead();
    }
    assertThat(RulesOption.defaultsAheadPending()).isFalse();
  }

  @Test
  void onlyACommandLineThatNamesNoRuleOptionLoadsTheDefaultsAhead() {
    assertThat(Main.defaultRules(new String[] {"plan", "--pods", "p.json"})).isTrue();
    for (String a :
        List.of(
            "--rules",
            "--rules=dir",
            "--rules-sha256",
            "--rules-cache=off",
            "--allow-unsafe-rules",
            "--strict-permissions",
            "@args.txt",
            "--help",
            "-V")) {
      assertThat(Main.defaultRules(new String[] {"plan", "--pods", "p.json", a})).as(a).isFalse();
    }
  }
}
