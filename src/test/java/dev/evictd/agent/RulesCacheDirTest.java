package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The agent's {@code rulesCacheDir}: under the state directory unless named, {@code off} for none.
 */
class RulesCacheDirTest {
  @Test
  void theCacheLivesUnderTheStateDirectoryUnlessNamedOrOff() {
    Path state = Path.of("/var/lib/evictd-test");
    assertThat(AgentConfig.rulesCacheDir(null, state)).isEqualTo(state.resolve("rules-cache"));
    assertThat(AgentConfig.rulesCacheDir(" ", state)).isEqualTo(state.resolve("rules-cache"));
    assertThat(AgentConfig.rulesCacheDir("/c", state)).isEqualTo(Path.of("/c"));
    assertThat(AgentConfig.rulesCacheDir("off", state)).isNull();
    assertThat(AgentConfig.rulesCacheDir("OFF", state)).isNull();
  }

  @Test
  void theAgentLoadsRulesWithTheConfiguredCache() {
    AgentConfig c =
        AgentConfig.resolve(
            null,
            java.util.Map.of(
                "standalone", true, "stateDir", "/tmp/evictd-state", "rulesCacheDir", "off"),
            java.util.Map.of());
    assertThat(c.rulesCacheDir()).isNull();
    assertThat(Agent.rulesOptions(c).cache()).isNull();
    AgentConfig d =
        AgentConfig.resolve(
            null,
            java.util.Map.of("standalone", true, "stateDir", "/tmp/evictd-state"),
            java.util.Map.of());
    assertThat(Agent.rulesOptions(d).cache().dir())
        .isEqualTo(Path.of("/tmp/evictd-state/rules-cache"));
  }
}
