package dev.evictd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.ruleset.RuleCompiler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * rules/README.md, the operators' guide to the fact model: it is never loaded as rules, and it
 * names every fact type rules can match.
 */
class RulesGuideTest {
  private static final Path RULES = Path.of("rules");
  private static final Path GUIDE = RULES.resolve("README.md");
  private static final Path API = Path.of("src/main/java/dev/evictd/api");

  /** Facts that are not per-sync: inputs, state, logical facts, and value types rules match on. */
  private static final List<String> OTHER_FACTS =
      List.of(
          "SyncClock",
          "EvictionConfig",
          "Threshold",
          "ThresholdValue",
          "Observation",
          "PodFact",
          "PodStats",
          "ContainerUsage",
          "PodOwner",
          "VolumeLimit",
          "PodRef",
          "Quantity",
          "Signal",
          "EvictionAttempt",
          "EvictionExempt",
          "ThresholdState",
          "ConditionState",
          "SignalLastObserved",
          "EvictionMethod",
          "EvictionOutcome",
          "NodeConditionType",
          "FsLayout",
          "ReclaimAction");

  private static List<String> drlFiles() throws IOException {
    try (Stream<Path> s = Files.list(RULES)) {
      return s.map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".drl"))
          .sorted()
          .toList();
    }
  }

  @Test
  void theGuideIsNotLoadedAsRules() throws IOException {
    assertThat(GUIDE).isRegularFile();
    List<String> drl = drlFiles();
    assertThat(RuleCompiler.read(RULES))
        .extracting(RuleSource::name)
        .containsExactlyElementsOf(drl);
    // the packaged copy (target/classes/evictd-rules) holds the same files and nothing else
    assertThat(RuleCompiler.readDefault())
        .extracting(RuleSource::name)
        .containsExactlyElementsOf(drl);
    // so editing the guide does not change the rule set's identity (a hot reload of rules/ is a
    // no-op)
    assertThat(RuleCompiler.sha256(RuleCompiler.read(RULES)))
        .isEqualTo(RuleCompiler.compileDefault().sha256());
  }

  @Test
  void theGuideNamesEveryFactType() throws IOException {
    String guide = Files.readString(GUIDE);
    List<String> facts = new ArrayList<>(OTHER_FACTS);
    try (Stream<Path> s = Files.list(API)) {
      for (Path p : s.sorted().toList()) {
        if (Files.readString(p).contains("implements PerSyncFact")) {
          facts.add(p.getFileName().toString().replace(".java", ""));
        }
      }
    }
    assertThat(facts).contains("ReclaimTarget", "RankKey", "EvictionDecision");
    for (String f : facts) {
      assertThat(guide).as("rules/README.md documents %s", f).contains("`" + f + "`");
      assertThat(API.resolve(f + ".java")).as("%s is an api type", f).isRegularFile();
    }
  }

  @Test
  void theGuideListsWhatRulesCannotReadOfAPodAndWhyDecisionsAreRefused() throws IOException {
    String guide = Files.readString(GUIDE);
    int start = guide.indexOf("### What rules can read of a pod");
    assertThat(start).isPositive();
    String section = guide.substring(start, guide.indexOf("## Changing the defaults", start));
    // every field the copy rules see lacks, found by comparing a pod that sets them all
    var pod = dev.evictd.testing.PodsWithSecrets.pod("apps", "web", "node-1");
    var json = tools.jackson.databind.json.JsonMapper.builder().build();
    var serialization = new io.fabric8.kubernetes.client.utils.KubernetesSerialization();
    java.util.Set<String> removed = new java.util.TreeSet<>();
    removedFields(
        json.readTree(serialization.asJson(pod)),
        json.readTree(serialization.asJson(PodFacts.visibleToRules(pod))),
        removed);
    assertThat(removed).contains("env", "command", PodFacts.LAST_APPLIED);
    for (String field : removed) {
      assertThat(section)
          .as("the guide lists %s as hidden from rules", field)
          .contains("`" + field + "`");
    }
    for (var reason : dev.evictd.api.EvictionPlan.Refusal.values()) {
      assertThat(guide)
          .as("the guide explains the refusal %s", reason.label())
          .contains("| `" + reason.label() + "` |");
    }
  }

  /** Names of the object fields {@code before} has and {@code after} lacks, at any depth. */
  private static void removedFields(
      tools.jackson.databind.JsonNode before,
      tools.jackson.databind.JsonNode after,
      java.util.Set<String> out) {
    if (before.isObject()) {
      for (var e : before.properties()) {
        tools.jackson.databind.JsonNode other = after == null ? null : after.get(e.getKey());
        if (other == null) {
          out.add(e.getKey());
        } else {
          removedFields(e.getValue(), other, out);
        }
      }
    } else if (before.isArray()) {
      for (int i = 0; i < before.size(); i++) {
        removedFields(before.get(i), after == null ? null : after.get(i), out);
      }
    }
  }
}
