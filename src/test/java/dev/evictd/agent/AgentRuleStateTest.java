package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.testing.FakeKubeApiServer;
import dev.evictd.testing.RuleFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's state directory across a restart: a rule set remembered as bad is not loaded at start
 * (the last trusted set is, and the log says why), until its content changes.
 */
class AgentRuleStateTest {
  static boolean metric(Agent agent, String line) {
    try {
      return AgentEndToEndTest.get(agent.address(), "/metrics").lines().anyMatch(line::equals);
    } catch (Exception e) {
      return false;
    }
  }

  @Test
  void aRuleSetRememberedAsBadIsNotLoadedAtStartButTheLastTrustedOneIs(@TempDir Path dir)
      throws Exception {
    Path rules = RuleFiles.createDirectory(dir.resolve("rules"));
    try (Stream<Path> s = Files.list(RuleProbationTest.RUNTIME.resolve("throwing"))) {
      for (Path f : s.toList()) {
        RuleFiles.copy(f, rules.resolve(f.getFileName()));
      }
    }
    Path good = RuleFiles.createDirectory(dir.resolve("good"));
    RuleFiles.write(good.resolve("rules.yaml"), "extends: default\n");
    RuleFiles.write(good.resolve("extra.drl"), RulesReloaderTest.EXTRA_RULE);
    String goodSha = RuleCompiler.compile(good).sha256();
    String badSha = RuleCompiler.compile(rules).sha256();
    Path state = dir.resolve("state");
    // what an agent before the restart remembered
    RuleStateStore before = new RuleStateStore(state);
    before.saveLastGood(goodSha, RuleCompiler.read(good));
    before.markBad(badSha, "rule \"throws when pods are ranked\" failed", Instant.now());
    assertThat(state.resolve(RuleStateStore.BAD_FILE)).exists();

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
            state.toString());
    try (Agent agent = Agent.start(AgentConfig.resolve(null, flags, Map.of()), Clock.systemUTC())) {
      assertThat(agent.manager().rulesSha256()).isEqualTo(goodSha);
      assertThat(FakeKubeApiServer.await(() -> agent.manager().ready(), Duration.ofSeconds(20)))
          .isTrue();
      assertThat(AgentEndToEndTest.get(agent.address(), "/readyz"))
          .startsWith("ready\n")
          .endsWith("rules sha256 " + goodSha + "\n");
      assertThat(metric(agent, "evictd_rule_reloads_total{result=\"rejected\"} 1.0")).isTrue();
      assertThat(metric(agent, "evictd_rule_reloads_total{result=\"loaded\"} 1.0")).isTrue();
      assertThat(metric(agent, "evictd_rule_threads_abandoned 0.0")).isTrue();

      // new content in the directory is loaded (on probation)
      Files.delete(rules.resolve("zz-throws.drl"));
      assertThat(
              FakeKubeApiServer.await(
                  () -> metric(agent, "evictd_rule_reloads_total{result=\"loaded\"} 2.0"),
                  Duration.ofSeconds(30)))
          .isTrue();
      assertThat(
              FakeKubeApiServer.await(
                  () -> !agent.manager().rulesSha256().equals(goodSha), Duration.ofSeconds(10)))
          .isTrue();
      assertThat(agent.manager().rulesSha256()).isNotEqualTo(badSha);
    }
  }
}
