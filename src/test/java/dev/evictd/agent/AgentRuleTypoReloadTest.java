package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.evictd.testing.FakeKubeApiServer;
import dev.evictd.testing.RuleFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * An operator's typo pushed to a running agent: the rules in force stay, the reload is counted as
 * failed, and the log and {@code /readyz} name the file and line; the next good edit loads.
 */
class AgentRuleTypoReloadTest {
  @Test
  void aTypoKeepsTheRulesInForceAndIsNamedByFileAndLine(@TempDir Path dir) throws Exception {
    Path rules = RuleFiles.createDirectory(dir.resolve("rules"));
    RuleFiles.write(rules.resolve("rules.yaml"), "extends: default\n");
    String conditions = Files.readString(Path.of("rules/conditions.drl"));
    Map<String, Object> flags =
        Map.of(
            "standalone",
            true,
            "rules",
            rules.toString(),
            "metricsAddress",
            "127.0.0.1:0",
            "interval",
            "500ms",
            "memcgNotifier",
            "false",
            "kubeletRootDir",
            dir.toString(),
            "runtimeRootDir",
            dir.toString(),
            "fsLayout",
            "shared",
            "stateDir",
            dir.resolve("state").toString());
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    Logger logger = (Logger) LoggerFactory.getLogger(RulesReloader.class);
    log.start();
    logger.addAppender(log);
    try (Agent agent = Agent.start(AgentConfig.resolve(null, flags, Map.of()), Clock.systemUTC())) {
      String sha0 = agent.manager().rulesSha256();
      assertThat(FakeKubeApiServer.await(() -> agent.manager().ready(), Duration.ofSeconds(20)))
          .isTrue();
      // the first "when" misspelt: a parse error, at the line of that "when"
      int line = (int) conditions.substring(0, conditions.indexOf("when")).lines().count() + 1;
      RuleFiles.write(rules.resolve("conditions.drl"), conditions.replaceFirst("when", "whne"));
      String where = rules.resolve("conditions.drl") + ":" + line + ":";
      assertThat(
              FakeKubeApiServer.await(
                  () ->
                      AgentEndToEndTest.metric(
                              agent, "evictd_rule_reloads_total{result=\"failed\"}")
                          == 1.0,
                  Duration.ofSeconds(30)))
          .isTrue();
      assertThat(agent.manager().rulesSha256()).isEqualTo(sha0);
      assertThat(AgentEndToEndTest.get(agent.address(), "/readyz"))
          .startsWith("ready")
          .contains("rules sha256 " + sha0, "rules reload refused", where);
      assertThat(log.list)
          .anySatisfy(
              e ->
                  assertThat(e.getFormattedMessage())
                      .contains("the running rules stay", where)
                      .doesNotContain("Exception"));
      long syncsBefore = agent.manager().lastSync().toEpochMilli();
      assertThat(
              FakeKubeApiServer.await(
                  () -> agent.manager().lastSync().toEpochMilli() > syncsBefore,
                  Duration.ofSeconds(10)))
          .as("the rules in force keep syncing")
          .isTrue();
      // fixed: the warning goes; the set is the default rules again, which are in force already
      RuleFiles.write(rules.resolve("conditions.drl"), conditions);
      assertThat(
              FakeKubeApiServer.await(
                  () -> {
                    try {
                      return !AgentEndToEndTest.get(agent.address(), "/readyz")
                          .contains("rules reload refused");
                    } catch (Exception e) {
                      return false;
                    }
                  },
                  Duration.ofSeconds(30)))
          .isTrue();
      assertThat(agent.manager().rulesSha256()).isEqualTo(sha0);
    } finally {
      logger.detachAppender(log);
    }
  }
}
