package dev.evictd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionExempt;
import dev.evictd.api.NodeCondition;
import dev.evictd.api.NodeConditionType;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SessionListenerTest {
  @TempDir Path dir;

  @Test
  void recordsPerSyncFactsExemptionsAndWhichFiringProducedWhat() {
    RuleSet rules =
        TestRules.compile(
            dir,
            """
            rule "exempts each name"
                ruleflow-group "observe"
            when
                $s: String()
            then
                insert(new EvictionExempt($s, "named"));
            end

            rule "memory pressure for an exempt pod"
                ruleflow-group "select"
            when
                $x: EvictionExempt()
                not NodeCondition()
            then
                insert(new NodeCondition(NodeConditionType.MemoryPressure));
            end

            rule "lifts the exemption of web"
                ruleflow-group "decide"
            when
                $x: EvictionExempt(uid == "web")
            then
                delete($x);
            end
            """);
    try (GuardedSession s = new GuardedSession(SyncBudget.DEFAULT, () -> 0)) {
      assertThat(s.guarded("opening", () -> s.open(rules))).isNull();
      SessionRecord r = s.record();
      assertThat(
              s.guarded(
                  "firing",
                  () -> {
                    s.insert("web");
                    s.insert("db");
                    s.fire(List.of("observe", "select"), 100);
                  }))
          .isNull();
      assertThat(r.exemptions).containsOnlyKeys("web", "db");
      NodeCondition pressure = new NodeCondition(NodeConditionType.MemoryPressure);
      assertThat(r.perSyncFacts.of(NodeCondition.class)).containsExactly(pressure);
      assertThat(r.perSyncHandles).hasSize(1);
      // each fact a rule inserted knows the firing behind it, and that firing what it matched
      Firing made = r.producedBy.get(r.perSyncFacts.of(NodeCondition.class).get(0));
      assertThat(made.rule()).isEqualTo("memory pressure for an exempt pod");
      assertThat(made.phase()).isEqualTo("select");
      assertThat(made.matched()).hasSize(1).first().isInstanceOf(EvictionExempt.class);
      assertThat(r.producedBy.get(made.matched().get(0)).rule()).isEqualTo("exempts each name");
      assertThat(r.firings)
          .extracting(Firing::rule)
          .containsExactlyInAnyOrder(
              "exempts each name", "exempts each name", "memory pressure for an exempt pod");
      assertThat(r.ruleInserted).hasSize(3);
      assertThat(r.currentFiring).isNull();
      assertThat(r.lastRule).isEqualTo("memory pressure for an exempt pod");

      assertThat(s.guarded("deciding", () -> s.fire(List.of("decide"), 100))).isNull();
      assertThat(r.exemptions).containsOnlyKeys("db");
      assertThat(r.exemptions.get("db")).containsExactly("named");
      assertThat(r.ruleInserted).hasSize(2);
      assertThat(r.ruleInserted.values()).doesNotContain(new EvictionExempt("web", "named"));
    }
  }
}
