package dev.evictd.ruleset;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.engine.RuleSet;
import dev.evictd.engine.RuleSource;
import dev.evictd.fixture.Fixture;
import dev.evictd.fixture.FixtureLoader;
import dev.evictd.fixture.FixtureResult;
import dev.evictd.fixture.FixtureRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.drools.base.definitions.rule.impl.RuleImpl;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.kie.api.KieBase;
import org.kie.api.definition.KiePackage;
import org.kie.api.definition.rule.Rule;

/**
 * The packaged default rules loaded from their pre-built executable model decide exactly as the
 * same rules compiled from DRL: every bundled fixture that runs on them, every step, the whole plan
 * (observations, thresholds, ranking, decisions, the rule firings and decision traces).
 */
class PrebuiltModelParityTest {
  private static RuleSet model;
  private static RuleSet drl;

  @BeforeAll
  static void bothPaths() {
    model = RuleCompiler.compileDefault();
    drl =
        RuleCompiler.compileFresh(
                "default", RuleCompiler.readDefault(), RuleCompiler.Options.STRICT)
            .rules();
  }

  /** Whether a rule base came from an executable model (its consequences are the model's). */
  static boolean fromModel(KieBase kb) {
    List<String> kinds = new ArrayList<>();
    for (KiePackage p : kb.getKiePackages()) {
      for (Rule r : p.getRules()) {
        kinds.add(((RuleImpl) r).getConsequence().getClass().getName());
      }
    }
    assertThat(kinds).isNotEmpty();
    return kinds.stream().allMatch(k -> k.startsWith("org.drools.modelcompiler."));
  }

  private static Map<String, String> rules(KieBase kb) {
    Map<String, String> out = new HashMap<>();
    for (KiePackage p : kb.getKiePackages()) {
      for (Rule r : p.getRules()) {
        RuleImpl ri = (RuleImpl) r;
        // the model keys an annotation's metadata by its simple name, DRL by its class name
        Map<String, Object> meta = new java.util.TreeMap<>();
        ri.getMetaData().forEach((k, v) -> meta.put(k.substring(k.lastIndexOf('.') + 1), v));
        out.put(
            p.getName() + "/" + r.getName(),
            String.join(
                " ",
                ri.getRuleFlowGroup(),
                ri.getAgendaGroup(),
                "salience " + ri.getSalience(),
                "eager " + ri.isEager(),
                "no-loop " + ri.isNoLoop(),
                "lock-on-active " + ri.isLockOnActive(),
                "activation-group " + ri.getActivationGroup(),
                "load order " + ri.getLoadOrder(),
                meta.toString()));
      }
    }
    return out;
  }

  @Test
  void theBuildPreBuiltTheDefaultRulesAndTheyAreLoadedFromTheModel() {
    assertThat(PrebuiltModel.covers(model.sha256())).isTrue();
    assertThat(fromModel(model.kieBase())).isTrue();
    assertThat(fromModel(drl.kieBase())).isFalse();
    assertThat(model.sha256()).isEqualTo(drl.sha256());
    assertThat(model.files()).isEqualTo(drl.files());
    assertThat(model.warnings()).isEqualTo(drl.warnings()).isEmpty();
    assertThat(rules(model.kieBase())).isEqualTo(rules(drl.kieBase()));
    assertThat(RuleCompiler.ruleCount(model)).isEqualTo(RuleCompiler.ruleCount(drl));
  }

  @Test
  void everyBundledFixtureOnTheDefaultRulesPlansTheSameOnBothPaths() throws IOException {
    List<Path> files;
    try (Stream<Path> s = Files.walk(Path.of("fixtures"))) {
      files =
          s.filter(
                  p ->
                      p.toString().endsWith(".yaml")
                          && !p.getFileName().toString().equals("rules.yaml"))
              .sorted()
              .toList();
    }
    FixtureRunner onModel = new FixtureRunner(dir -> model);
    FixtureRunner onDrl = new FixtureRunner(dir -> drl);
    int compared = 0;
    int steps = 0;
    for (Path file : files) {
      Fixture f = FixtureLoader.load(file);
      if (f.rules() != null && !defaultRules(f.rules())) {
        continue; // an operator's rules: compiled on both paths alike
      }
      FixtureResult a = onModel.run(f, false);
      FixtureResult b = onDrl.run(f, false);
      assertThat(a.status()).as(file.toString()).isEqualTo(b.status());
      assertThat(a.mismatch()).as(file.toString()).isEqualTo(b.mismatch());
      assertThat(a.plans()).as(file.toString()).isEqualTo(b.plans());
      compared++;
      steps += a.plans().size();
    }
    assertThat(compared).isGreaterThan(60);
    assertThat(steps).isGreaterThan(compared);
  }

  private static boolean defaultRules(Path dir) {
    return PrebuiltModel.covers(RuleCompiler.sha256(RuleCompiler.read(dir)));
  }

  @Test
  void aRulesDirectoryWithTheDefaultFilesUsesTheModelAndAnyChangeCompiles(@TempDir Path dir)
      throws IOException {
    for (RuleSource s : RuleCompiler.readDefault()) {
      Files.writeString(dir.resolve(s.name()), s.text());
    }
    RuleSet same = RuleCompiler.compile(dir);
    assertThat(same.sha256()).isEqualTo(model.sha256());
    assertThat(fromModel(same.kieBase())).isTrue();

    Path exemptions = dir.resolve("exemptions.drl");
    Files.writeString(exemptions, Files.readString(exemptions) + "\n// one more line\n");
    RuleSet changed = RuleCompiler.compile(dir);
    assertThat(changed.sha256()).isNotEqualTo(model.sha256());
    assertThat(fromModel(changed.kieBase())).isFalse();
  }

  @Test
  void noModelIsLoadedForOtherSources() {
    assertThat(PrebuiltModel.load("0".repeat(64))).isNull();
    assertThat(PrebuiltModel.covers("0".repeat(64))).isFalse();
  }

  @Test
  void theModelIsRefusedWhenWhatItWasBuiltAgainstDiffers() {
    PrebuiltModel.Marker m = PrebuiltModel.marker();
    assertThat(m.factClasses()).contains("dev.evictd.api.PodFact");
    assertThat(PrebuiltModel.load(m, m.sourcesSha256())).isNotNull();
    PrebuiltModel.Marker otherFacts =
        new PrebuiltModel.Marker(
            m.sourcesSha256(),
            m.evictdVersion(),
            m.droolsVersion(),
            m.models(),
            m.factClasses(),
            "0".repeat(64));
    assertThat(PrebuiltModel.load(otherFacts, m.sourcesSha256())).isNull();
    PrebuiltModel.Marker otherEvictd =
        new PrebuiltModel.Marker(
            m.sourcesSha256(),
            "0.0.0+0",
            m.droolsVersion(),
            m.models(),
            m.factClasses(),
            m.factClassesSha256());
    assertThat(PrebuiltModel.load(otherEvictd, m.sourcesSha256())).isNull();
    PrebuiltModel.Marker noSuchModel =
        new PrebuiltModel.Marker(
            m.sourcesSha256(),
            m.evictdVersion(),
            m.droolsVersion(),
            List.of("dev.evictd.rules.NoSuchModel"),
            m.factClasses(),
            m.factClassesSha256());
    assertThat(PrebuiltModel.load(noSuchModel, m.sourcesSha256())).isNull();
  }
}
