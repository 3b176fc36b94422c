package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.evictd.api.FsLayout;
import dev.evictd.config.KubeletEvictionConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.engine.Planner;
import dev.evictd.engine.RuleSource;
import dev.evictd.ports.EventSink;
import dev.evictd.ports.PodSource;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.testing.FakeStatsProvider;
import dev.evictd.testing.MutableClock;
import dev.evictd.testing.RecordingEvictor;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** Refused decisions are counted, and logged once each per sync up to a bound. */
class EvictionManagerRefusalTest {
  static final String FIFTY_MADE_UP =
      """
      package dev.evictd.rules;

      import dev.evictd.api.*;

      rule "fifty made-up pods every sync"
          ruleflow-group "decide"
      when
          SyncClock()
      then
          for (int i = 0; i < 50; i++) {
              insert(new EvictionDecision(new PodRef("kube-system", "victim-" + i, "made-up-" + i),
                  EvictionDecision.Kind.PRESSURE, "memory.available", 1, "x", java.util.Map.of(),
                  EvictionMethod.DELETE, java.util.List.of()));
          }
      end
      """;

  @Test
  void aFloodOfRefusedDecisionsIsCountedInFullAndLoggedWithinABound() throws Exception {
    List<RuleSource> sources = new ArrayList<>(RuleCompiler.readDefault());
    sources.add(new RuleSource("zz-flood.drl", "zz-flood.drl", FIFTY_MADE_UP));
    Planner planner =
        new Planner(
            RuleCompiler.compile("test", sources),
            KubeletEvictionConfig.from(
                YamlNode.parse(
                    "k.yaml",
                    "evictionHard: {memory.available: 1Gi}\n".getBytes(StandardCharsets.UTF_8)),
                "node",
                FsLayout.SHARED));
    MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    FakeStatsProvider stats = new FakeStatsProvider();
    stats.set(FakeStatsProvider.memory(500, 7000, "a", 100, "b", 900));
    RecordingEvictor evictor = new RecordingEvictor();
    AgentMetrics metrics = new AgentMetrics(clock);
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    Logger logger = (Logger) LoggerFactory.getLogger(EvictionManager.class);
    log.start();
    logger.addAppender(log);
    try (planner;
        EvictionManager m =
            new EvictionManager(
                planner,
                stats,
                PodSource.of(
                    List.of(EvictionManagerTest.pod("a", 0), EvictionManagerTest.pod("b", 0))),
                evictor,
                a -> true,
                EventSink.NONE,
                metrics,
                clock,
                new EvictionManager.Settings(
                    Duration.ofSeconds(10),
                    Duration.ofSeconds(30),
                    dev.evictd.api.EvictionMethod.DELETE,
                    false,
                    false))) {
      for (int sync = 0; sync < 2; sync++) {
        EvictionManager.SyncResult r = m.syncOnce("test");
        assertThat(r.plan().refused()).hasSize(50);
        clock.advance(Duration.ofSeconds(10));
      }
      List<String> lines =
          log.list.stream()
              .map(ILoggingEvent::getFormattedMessage)
              .filter(l -> l.contains("refused"))
              .toList();
      assertThat(
              lines.stream()
                  .filter(
                      l ->
                          l.contains(
                              "refused a decision of rule \"fifty made-up pods every sync\"")))
          .hasSize(2 * EvictionManager.MAX_LOGGED_REFUSALS);
      assertThat(lines.stream().filter(l -> l.contains("30 more refused decisions not logged")))
          .hasSize(2);
      assertThat(metrics.scrape())
          .contains("evictd_decisions_refused_total{reason=\"unknown_pod\"} 100.0");
      // none of them reached the executor: only the default rules' one pod per sync
      assertThat(evictor.decisions())
          .allSatisfy(d -> assertThat(d.pod().namespace()).isEqualTo("default"));
    } finally {
      logger.detachAppender(log);
    }
  }
}
