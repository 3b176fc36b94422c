package dev.evictd.ruleset;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.engine.RuleSource;
import dev.evictd.ruleset.lint.ModelCodeCheck;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The build's executable-model step: what it generates, and the ASM check over it. */
class PrebuiltModelWriterTest {
  @Test
  void theDefaultRulesModelNamesOnlyWhatRulesMayAndItsFactClassesAreKnown() throws IOException {
    Map<String, byte[]> classes = new TreeMap<>();
    List<String> models = PrebuiltModelWriter.generate(RuleCompiler.readDefault(), classes);
    assertThat(models).singleElement().asString().startsWith("dev.evictd.rules.Rules");
    assertThat(classes.keySet()).allMatch(f -> f.startsWith("dev/evictd/rules/"));
    assertThat(ModelCodeCheck.check(classes, PrebuiltModelWriter.MODEL_PACKAGE)).isEmpty();
    assertThat(PrebuiltModelWriter.factClasses(classes.keySet()))
        .contains("dev.evictd.api.PodFact", "dev.evictd.api.SyncClock")
        .allMatch(c -> c.startsWith("dev.evictd."));
  }

  @Test
  void aModelWhoseConsequenceRunsAProcessIsRefused() throws IOException {
    String drl =
        """
        package dev.evictd.rules;
        import dev.evictd.api.*;
        rule "runs a process"
        when
            SyncClock()
        then
            try { Runtime.getRuntime().exec(new String[] {"true"}); } catch (Exception e) { }
        end
        """;
    Map<String, byte[]> classes = new TreeMap<>();
    PrebuiltModelWriter.generate(List.of(new RuleSource("x.drl", "x.drl", drl)), classes);
    List<String> refused = ModelCodeCheck.check(classes, PrebuiltModelWriter.MODEL_PACKAGE);
    assertThat(refused).anyMatch(l -> l.contains("java.lang.Runtime"));
  }
}
