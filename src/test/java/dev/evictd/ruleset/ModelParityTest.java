package dev.evictd.ruleset;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.engine.RuleSet;
import dev.evictd.fixture.Fixture;
import dev.evictd.fixture.FixtureLoader;
import dev.evictd.fixture.FixtureResult;
import dev.evictd.fixture.FixtureRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Operators' rule sets decide exactly the same loaded from their cached executable model as
 * compiled from DRL: each example policy on its own fixtures, and the example policies combined
 * into one set (as an operator combines them) on every bundled fixture, every step, the whole plan.
 */
class ModelParityTest {
  static final Path EXAMPLES = Path.of("fixtures/examples");

  private static List<Path> fixtures(Path under) throws IOException {
    try (Stream<Path> s = Files.walk(under)) {
      return s.filter(
              p ->
                  p.toString().endsWith(".yaml")
                      && !p.getFileName().toString().equals("rules.yaml"))
          .sorted()
          .toList();
    }
  }

  /** Runs fixtures on both sets; returns the number of steps compared. */
  private static int samePlans(List<Path> files, RuleSet model, RuleSet drl) {
    FixtureRunner onModel = new FixtureRunner(dir -> model);
    FixtureRunner onDrl = new FixtureRunner(dir -> drl);
    int steps = 0;
    for (Path file : files) {
      Fixture f = FixtureLoader.load(file);
      FixtureResult a = onModel.run(f, false);
      FixtureResult b = onDrl.run(f, false);
      assertThat(a.status()).as(file.toString()).isEqualTo(b.status());
      assertThat(a.mismatch()).as(file.toString()).isEqualTo(b.mismatch());
      assertThat(a.plans()).as(file.toString()).isEqualTo(b.plans());
      steps += a.plans().size();
    }
    return steps;
  }

  private static RuleCompiler.Options cached(Path cache) {
    return RuleCompiler.Options.STRICT.withCache(
        RuleSetCache.at(cache).withModelBuilds(RuleSetCache.ModelBuilds.IN_PROCESS));
  }

  @Test
  void everyExamplePolicyPlansItsFixturesTheSameFromItsModel(@TempDir Path tmp) throws IOException {
    List<Path> dirs;
    try (Stream<Path> s = Files.list(EXAMPLES)) {
      dirs = s.filter(d -> Files.isDirectory(d.resolve("rules"))).sorted().toList();
    }
    assertThat(dirs).hasSizeGreaterThanOrEqualTo(5);
    List<String> onModel = new ArrayList<>();
    int steps = 0;
    for (Path d : dirs) {
      Path rules = d.resolve("rules");
      RuleSet drl = RuleCompiler.compile(rules);
      // built into the cache, then loaded from it as a restart loads it
      RuleCompiler.compile(rules, cached(tmp.resolve("cache")));
      RuleSet model = RuleCompiler.compile(rules, cached(tmp.resolve("cache")));
      assertThat(PrebuiltModelParityTest.fromModel(drl.kieBase())).isFalse();
      if (!PrebuiltModelParityTest.fromModel(model.kieBase())) {
        continue; // stays compiled: nothing to compare (and the list below fails)
      }
      onModel.add(d.getFileName().toString());
      assertThat(model.sha256()).isEqualTo(drl.sha256());
      assertThat(model.files()).isEqualTo(drl.files());
      assertThat(model.warnings()).isEqualTo(drl.warnings());
      assertThat(RuleCompiler.ruleCount(model)).isEqualTo(RuleCompiler.ruleCount(drl));
      steps += samePlans(fixtures(d), model, drl);
    }
    assertThat(onModel)
        .containsExactlyInAnyOrder(
            "eviction-rate-guard",
            "last-replica-protection",
            "pdb-aware-soft-evictions",
            "psi-eviction", // declared types
            "qos-ranking");
    assertThat(steps).isGreaterThan(20);
  }

  @Test
  void theExamplesCombinedPlanEveryBundledFixtureTheSameFromTheirModel(@TempDir Path tmp)
      throws IOException {
    Path dir = tmp.resolve("rules");
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("rules.yaml"), "extends: default\n");
    for (String example :
        List.of(
            "last-replica-protection",
            "pdb-aware-soft-evictions",
            "eviction-rate-guard",
            "qos-ranking")) {
      try (Stream<Path> s = Files.list(EXAMPLES.resolve(example).resolve("rules"))) {
        for (Path drl : s.filter(p -> p.toString().endsWith(".drl")).toList()) {
          Files.copy(drl, dir.resolve(drl.getFileName()));
        }
      }
    }
    RuleSet drl = RuleCompiler.compile(dir);
    RuleCompiler.compile(dir, cached(tmp.resolve("cache")));
    RuleSet model = RuleCompiler.compile(dir, cached(tmp.resolve("cache")));
    assertThat(PrebuiltModelParityTest.fromModel(model.kieBase())).isTrue();
    List<Path> files = fixtures(Path.of("fixtures"));
    assertThat(files).hasSizeGreaterThan(80);
    assertThat(samePlans(files, model, drl)).isGreaterThan(files.size());
  }
}
