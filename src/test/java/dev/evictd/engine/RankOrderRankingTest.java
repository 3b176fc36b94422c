package dev.evictd.engine;

import static dev.evictd.engine.PlannerTest.HARD_1GI;
import static dev.evictd.engine.PlannerTest.T0;
import static dev.evictd.engine.PlannerTest.config;
import static dev.evictd.engine.PlannerTest.pod;
import static dev.evictd.engine.PlannerTest.summary;
import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.RankKey;
import dev.evictd.api.Ranking;
import dev.evictd.api.ReclaimTarget;
import dev.evictd.api.Signal;
import io.fabric8.kubernetes.api.model.Pod;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The ranking a sync inserts: the active pods of the selected signal, in rank-key order. */
class RankOrderRankingTest {
  @TempDir Path dir;

  private final EvictionConfig config = config(HARD_1GI);

  private static RankKey key(String name, Signal signal, int position, long usage) {
    return new RankKey(
        "default/" + name,
        signal,
        position,
        List.of(new RankKey.Component("usage", usage, true, true)));
  }

  @Test
  void ranksTheActivePodsOfTheSelectedSignalByTheirFirstKey() {
    RuleSet rules =
        TestRules.compile(
            dir,
            """
            rule "sees a pod"
                ruleflow-group "observe"
            when
                PodFact()
            then
            end
            """);
    List<Pod> pods = List.of(pod("a", 0), pod("b", 0), pod("c", 0));
    try (SessionHarness h = new SessionHarness(rules, config)) {
      h.sync(1, T0, pods, summary(500, pods, 100));
      SessionRecord r = h.session.record();
      List<String> warnings = new ArrayList<>();
      assertThat(RankOrder.rank(h.facts, r, warnings)).as("no signal selected").isNull();

      r.perSyncFacts.add(new ReclaimTarget(config.thresholds().get(0), null, null));
      r.perSyncFacts.add(key("c", Signal.MEMORY_AVAILABLE, 2, 1));
      r.perSyncFacts.add(key("a", Signal.MEMORY_AVAILABLE, 0, 3));
      r.perSyncFacts.add(key("b", Signal.MEMORY_AVAILABLE, 1, 2));
      r.perSyncFacts.add(key("a", Signal.MEMORY_AVAILABLE, 0, 9)); // a second key: ignored
      r.perSyncFacts.add(key("b", Signal.NODEFS_AVAILABLE, 1, 99)); // another signal
      r.perSyncFacts.add(key("gone", Signal.MEMORY_AVAILABLE, 7, 50)); // not an active pod
      r.exemptions.put("default/c", List.of("a test"));
      Ranking ranking = RankOrder.rank(h.facts, r, warnings);

      assertThat(ranking.signal()).isEqualTo(Signal.MEMORY_AVAILABLE);
      assertThat(ranking.order())
          .extracting(RankKey::uid)
          .containsExactly("default/a", "default/b", "default/c");
      assertThat(ranking.order().get(0).components().get(0).value()).isEqualTo(3);
      assertThat(ranking.exempt()).containsExactly("default/c");
      assertThat(warnings)
          .containsExactly("pod default/a has more than one rank key; the first is used");
      assertThat(r.lastRanking).isSameAs(ranking);
      assertThat(r.lastRankingEntries)
          .extracting(e -> e.fact.name())
          .containsExactly("a", "b", "c");
    }
  }
}
