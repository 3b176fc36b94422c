package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.engine.RuleSet;
import dev.evictd.ruleset.RuleCompiler;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RulesReloaderTest {
  static final String EXTRA_RULE =
      "package dev.evictd.rules;\nimport dev.evictd.api.*;\n"
          + "rule \"an extra rule\"\n    ruleflow-group \"observe\"\nwhen\n    $p: PodFact(priority > 5)\nthen\nend\n";

  static void await(List<?> list, int n) throws InterruptedException {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (list.size() < n && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
  }

  @Test
  void aValidChangeIsHandedOverAndABrokenOneIsRefused(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("rules.yaml"), "extends: default\n");
    RuleSet initial = RuleCompiler.compile(dir);
    List<RuleSet> loaded = new CopyOnWriteArrayList<>();
    List<String> failed = new CopyOnWriteArrayList<>();
    try (RulesReloader r =
        new RulesReloader(
            dir,
            initial.sha256(),
            RuleCompiler::compile,
            loaded::add,
            failed::add,
            Duration.ofMillis(200))) {
      Files.writeString(dir.resolve("extra.drl"), EXTRA_RULE);
      await(loaded, 1);
      assertThat(loaded).hasSize(1);
      assertThat(loaded.get(0).files()).contains("extra.drl");
      assertThat(loaded.get(0).sha256()).isNotEqualTo(initial.sha256());

      Files.writeString(
          dir.resolve("extra.drl"), EXTRA_RULE.replace("priority > 5", "priority >>> 5"));
      await(failed, 1);
      assertThat(failed).singleElement().asString().contains("extra.drl:6");
      assertThat(loaded).hasSize(1); // the running rules stay

      // an unchanged set (same sha) is not handed over again
      assertThat(r.reload()).isFalse();
    }
  }

  static final String OTHER_RULE = EXTRA_RULE.replace("an extra rule", "another rule");

  @Test
  void aSetNestedTooDeeplyIsRefusedAndTheWatchGoesOn(@TempDir Path tmp) throws Exception {
    Path dir = Files.createDirectory(tmp.resolve("rules"));
    Files.writeString(dir.resolve("rules.yaml"), "extends: default\n");
    RuleSet initial = RuleCompiler.compile(dir);
    List<RuleSet> loaded = new CopyOnWriteArrayList<>();
    List<String> failed = new CopyOnWriteArrayList<>();
    // as the agent compiles: with a rule-set cache, whose models a child process builds
    RuleCompiler.Options options =
        RuleCompiler.Options.STRICT.withCache(
            dev.evictd.ruleset.RuleSetCache.at(Files.createDirectory(tmp.resolve("cache"))));
    try (RulesReloader r =
        new RulesReloader(
            dir,
            initial.sha256(),
            d -> RuleCompiler.compile(d, options),
            loaded::add,
            failed::add,
            Duration.ofMillis(200))) {
      // 20,000 levels: the parsers' stack overflowed, which ended the watch's thread
      Files.writeString(
          dir.resolve("deep.drl"),
          "package dev.evictd.rules;\nimport dev.evictd.api.*;\nrule \"deep\" when\n    eval("
              + "(".repeat(20_000)
              + "true"
              + ")".repeat(20_000)
              + ")\nthen\nend\n");
      await(failed, 1);
      assertThat(failed)
          .singleElement()
          .asString()
          .startsWith(dir.resolve("deep.drl") + ":4: refused: expression nested deeper than 10");
      assertThat(loaded).isEmpty();

      // the running rules stayed, and the next change is still seen
      Files.delete(dir.resolve("deep.drl"));
      Files.writeString(dir.resolve("extra.drl"), EXTRA_RULE);
      await(loaded, 1);
      assertThat(loaded)
          .singleElement()
          .satisfies(rs -> assertThat(rs.files()).contains("extra.drl"));
    }
  }

  @Test
  void aCompilerThatFailsInAWayOfItsOwnIsARefusalNotTheEndOfTheWatch(@TempDir Path dir)
      throws Exception {
    Files.writeString(dir.resolve("rules.yaml"), "extends: default\n");
    RuleSet initial = RuleCompiler.compile(dir);
    List<RuleSet> loaded = new CopyOnWriteArrayList<>();
    List<String> failed = new CopyOnWriteArrayList<>();
    java.util.concurrent.atomic.AtomicInteger calls =
        new java.util.concurrent.atomic.AtomicInteger();
    java.util.function.Function<Path, RuleSet> compiler =
        d -> {
          if (calls.incrementAndGet() == 1) {
            throw new StackOverflowError();
          }
          return RuleCompiler.compile(d);
        };
    try (RulesReloader r =
        new RulesReloader(
            dir, initial.sha256(), compiler, loaded::add, failed::add, Duration.ofMillis(200))) {
      Files.writeString(dir.resolve("extra.drl"), EXTRA_RULE);
      await(failed, 1);
      assertThat(failed)
          .containsExactly(
              dir + ": rules cannot be compiled: nested too deeply (the stack ran out)");
      Files.writeString(dir.resolve("extra.drl"), OTHER_RULE);
      await(loaded, 1);
      assertThat(loaded).hasSize(1);
    }
  }

  @Test
  void aDirectoryDeletedAndRecreatedIsWatchedAgain(@TempDir Path parent) throws Exception {
    Path dir = Files.createDirectory(parent.resolve("rules"));
    Files.writeString(dir.resolve("rules.yaml"), "extends: default\n");
    RuleSet initial = RuleCompiler.compile(dir);
    List<RuleSet> loaded = new CopyOnWriteArrayList<>();
    List<String> failed = new CopyOnWriteArrayList<>();
    try (RulesReloader r =
        new RulesReloader(
            dir,
            initial.sha256(),
            RuleCompiler::compile,
            loaded::add,
            failed::add,
            Duration.ofMillis(200))) {
      Files.delete(dir.resolve("rules.yaml"));
      Files.delete(dir);
      Thread.sleep(2 * RulesReloader.CHECK_MILLIS); // the watch sees the directory gone
      Files.createDirectory(dir);
      Files.writeString(dir.resolve("rules.yaml"), "extends: default\n");
      Files.writeString(dir.resolve("extra.drl"), EXTRA_RULE);
      await(loaded, 1);
      assertThat(loaded)
          .singleElement()
          .satisfies(rs -> assertThat(rs.files()).contains("extra.drl"));

      // and the new directory's changes are seen too
      Files.writeString(dir.resolve("extra.drl"), OTHER_RULE);
      await(loaded, 2);
      assertThat(loaded).hasSize(2);
      assertThat(loaded.get(1).sha256()).isNotEqualTo(loaded.get(0).sha256());
    }
  }

  /**
   * A ConfigMap volume as the kubelet writes it (its atomic writer): the files are symlinks into
   * {@code ..data}, itself a symlink to a timestamped directory; an update writes a new directory,
   * points a new {@code ..data_tmp} symlink at it, renames that over {@code ..data} and removes the
   * old directory.
   */
  static final class ConfigMapVolume {
    final Path dir;
    int generation;

    ConfigMapVolume(Path dir, java.util.Map<String, String> files) throws Exception {
      this.dir = dir;
      Path data = write(files);
      Files.createSymbolicLink(dir.resolve("..data"), data.getFileName());
      for (String name : files.keySet()) {
        Files.createSymbolicLink(dir.resolve(name), Path.of("..data", name));
      }
    }

    private Path write(java.util.Map<String, String> files) throws Exception {
      Path d = Files.createDirectory(dir.resolve("..2026_12_01_09_00_0" + generation++ + ".1234"));
      for (var e : files.entrySet()) {
        Files.writeString(d.resolve(e.getKey()), e.getValue());
      }
      return d;
    }

    void update(java.util.Map<String, String> files) throws Exception {
      Path old = Files.readSymbolicLink(dir.resolve("..data"));
      Path data = write(files);
      Path tmp = Files.createSymbolicLink(dir.resolve("..data_tmp"), data.getFileName());
      Files.move(tmp, dir.resolve("..data"), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
      for (String name : files.keySet()) {
        if (!Files.exists(dir.resolve(name), java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
          Files.createSymbolicLink(dir.resolve(name), Path.of("..data", name));
        }
      }
      Path oldDir = dir.resolve(old);
      try (var s = Files.list(oldDir)) {
        for (Path f : s.toList()) {
          Files.delete(f);
        }
      }
      Files.delete(oldDir);
    }
  }

  @Test
  void aConfigMapStyleDataSymlinkSwapIsLoaded(@TempDir Path dir) throws Exception {
    ConfigMapVolume volume =
        new ConfigMapVolume(dir, java.util.Map.of("rules.yaml", "extends: default\n"));
    RuleSet initial = RuleCompiler.compile(dir);
    assertThat(initial.files()).doesNotContain("extra.drl");
    List<RuleSet> loaded = new CopyOnWriteArrayList<>();
    List<String> failed = new CopyOnWriteArrayList<>();
    List<String> unchanged = new CopyOnWriteArrayList<>();
    try (RulesReloader r =
        new RulesReloader(
            dir,
            initial.sha256(),
            RuleCompiler::compile,
            loaded::add,
            failed::add,
            unchanged::add,
            Duration.ofMillis(200))) {
      volume.update(java.util.Map.of("rules.yaml", "extends: default\n", "extra.drl", EXTRA_RULE));
      await(loaded, 1);
      assertThat(loaded)
          .singleElement()
          .satisfies(rs -> assertThat(rs.files()).contains("extra.drl"));

      // a second swap changes a file's content only: the links stay, their target changes
      volume.update(java.util.Map.of("rules.yaml", "extends: default\n", "extra.drl", OTHER_RULE));
      await(loaded, 2);
      assertThat(loaded).hasSize(2);
      assertThat(RuleCompiler.read(dir))
          .anySatisfy(s -> assertThat(s.text()).contains("another rule"));
      assertThat(loaded.get(1).sha256()).isEqualTo(RuleCompiler.compile(dir).sha256());
      assertThat(failed).isEmpty();
    }
  }
}
