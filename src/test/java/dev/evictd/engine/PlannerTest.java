package dev.evictd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.FsLayout;
import dev.evictd.config.KubeletEvictionConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PlannerTest {
  static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  static final long MI = 1024 * 1024;

  static EvictionConfig config(String yaml) {
    return KubeletEvictionConfig.from(
        YamlNode.parse("k.yaml", yaml.getBytes(StandardCharsets.UTF_8)), "n", FsLayout.SHARED);
  }

  static Pod pod(String name, int priority) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("default")
        .endMetadata()
        .withNewSpec()
        .withPriority(priority)
        .addNewContainer()
        .withName("c")
        .endContainer()
        .endSpec()
        .build();
  }

  static Summary summary(long availableMi, List<Pod> pods, long podUsageMi) {
    List<Summary.PodStats> ps = new ArrayList<>();
    for (Pod p : pods) {
      ps.add(
          new Summary.PodStats(
              new Summary.PodReference(p.getMetadata().getName(), "default", "default/" + p.getMetadata().getName()),
              List.of(),
              new Summary.MemoryStats(null, null, null, podUsageMi * MI, null),
              List.of(),
              null,
              null));
    }
    return new Summary(
        new Summary.NodeStats(
            "n", new Summary.MemoryStats(null, availableMi * MI, null, 4096 * MI, null), null, null, null, null),
        ps);
  }

  static final String HARD_1GI = "evictionHard: {memory.available: 1Gi}\nenforceNodeAllocatable: []\n";

  @Test
  void evictsTheFirstRankedPodAndFollowsPodListChanges() {
    try (Planner planner = new Planner(RuleCompiler.compileDefault(), config(HARD_1GI))) {
      List<Pod> pods = List.of(pod("a", 10), pod("b", 0), pod("c", 5));
      EvictionPlan p1 = planner.sync(T0, summary(500, pods, 100), pods, PlannerHooks.noReclaim(null));
      assertThat(p1.decisions()).extracting(d -> d.pod().key()).containsExactly("default/b");
      assertThat(p1.decisions().get(0).rules())
          .first()
          .isEqualTo("evict the first pod in rank order that is not exempt");
      assertThat(p1.decisions().get(0).rules())
          .contains("select the threshold to act on: memory first, then disk, then PID");
      // b is gone: the next sync ranks the remaining pods only
      List<Pod> rest = List.of(pods.get(0), pods.get(2));
      EvictionPlan p2 = planner.sync(T0.plusSeconds(10), summary(600, rest, 100), rest, PlannerHooks.noReclaim(null));
      assertThat(p2.ranking()).extracting(r -> r.pod().key()).containsExactly("default/c", "default/a");
      assertThat(p2.decisions()).extracting(d -> d.pod().key()).containsExactly("default/c");
      // pressure relieved: no ranking, condition kept for the transition period
      EvictionPlan p3 = planner.sync(T0.plusSeconds(20), summary(2000, rest, 100), rest, PlannerHooks.noReclaim(null));
      assertThat(p3.decisions()).isEmpty();
      assertThat(p3.ranking()).isEmpty();
      assertThat(p3.conditions()).hasSize(1);
      assertThat(p3.seq()).isEqualTo(3);
    }
  }

  @Test
  void aRuleThatThrowsFailsTheSyncByNameAndEvictsNothing() {
    RuleSet rules = RuleCompiler.compile(Path.of("src/test/resources/rulesets/throws"));
    try (Planner planner = new Planner(rules, config(HARD_1GI))) {
      List<Pod> pods = List.of(pod("a", 0));
      EvictionPlan p = planner.sync(T0, summary(500, pods, 100), pods, PlannerHooks.noReclaim(null));
      assertThat(p.failed()).as("%s", p).isTrue();
      assertThat(p.failure()).contains("rule \"explodes when a pod is ranked\"", "boom", "decide");
      assertThat(p.decisions()).isEmpty();
      // the session stays usable: the next sync fails the same way, and does not crash
      EvictionPlan p2 = planner.sync(T0.plusSeconds(10), summary(500, pods, 100), pods, PlannerHooks.noReclaim(null));
      assertThat(p2.failed()).isTrue();
      assertThat(p2.decisions()).isEmpty();
    }
  }

  @Test
  void aRunawayRuleFailsTheSyncWithinTheFiringBudget() {
    RuleSet rules = RuleCompiler.compile(Path.of("src/test/resources/rulesets/runaway"));
    try (Planner planner = new Planner(rules, config(HARD_1GI), 10_000)) {
      List<Pod> pods = List.of(pod("a", 0));
      EvictionPlan p = planner.sync(T0, summary(500, pods, 100), pods, PlannerHooks.noReclaim(null));
      assertThat(p.failed()).isTrue();
      assertThat(p.failure()).contains("too many rule firings", "loops forever");
      assertThat(p.decisions()).isEmpty();
    }
  }

  @Test
  void missingStatisticsMeanNoObservationAndNoEviction() {
    try (Planner planner = new Planner(RuleCompiler.compileDefault(), config(HARD_1GI))) {
      List<Pod> pods = List.of(pod("a", 0));
      EvictionPlan p = planner.sync(T0, new Summary(null, List.of()), pods, PlannerHooks.noReclaim(null));
      assertThat(p.observations()).isEmpty();
      assertThat(p.decisions()).isEmpty();
      assertThat(p.conditions()).isEmpty();
    }
  }
}
