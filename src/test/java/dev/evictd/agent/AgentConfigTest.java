package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.ConfigException;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.FsLayout;
import dev.evictd.config.YamlNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AgentConfigTest {
  static YamlNode yaml(String s) {
    return YamlNode.parse("agent.yaml", s.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void standaloneNeedsNoConfiguration() {
    AgentConfig c = AgentConfig.resolve(null, Map.of("standalone", true), Map.of());
    assertThat(c.standalone()).isTrue();
    assertThat(c.dryRun()).isTrue();
    assertThat(c.executor()).isEqualTo(EvictionMethod.DRY_RUN);
    assertThat(c.stats()).isEqualTo("host");
    assertThat(c.metricsAddress()).isEqualTo("127.0.0.1:9091");
    assertThat(c.interval()).isEqualTo(Duration.ofSeconds(10));
    assertThat(c.nodeName()).isNotBlank();
  }

  @Test
  void clusterModeNeedsANodeNameFromFlagFileOrEnvironment() {
    assertThatThrownBy(() -> AgentConfig.resolve(null, Map.of(), Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("node name is required");
    assertThat(AgentConfig.resolve(null, Map.of(), Map.of("NODE_NAME", "worker-3")).nodeName())
        .isEqualTo("worker-3");
    assertThat(
            AgentConfig.resolve(yaml("nodeName: from-file\n"), Map.of(), Map.of("NODE_NAME", "env"))
                .nodeName())
        .isEqualTo("from-file");
    assertThat(
            AgentConfig.resolve(yaml("nodeName: from-file\n"), Map.of("nodeName", "flag"), Map.of())
                .nodeName())
        .isEqualTo("flag");
  }

  @Test
  void fileValuesAreTypedAndFlagsWin() {
    AgentConfig c =
        AgentConfig.resolve(
            yaml(
                "nodeName: n\nexecutor: delete\ninterval: 5s\nfsLayout: dedicated\nmetricsAddress: 0.0.0.0:9100\n"
                    + "eviction:\n  evictionHard: {memory.available: 500Mi}\n"),
            Map.of("interval", "2s"),
            Map.of());
    assertThat(c.executor()).isEqualTo(EvictionMethod.DELETE);
    assertThat(c.dryRun()).isFalse();
    assertThat(c.interval()).isEqualTo(Duration.ofSeconds(2));
    assertThat(c.fsLayout()).isEqualTo(FsLayout.DEDICATED);
    assertThat(c.eviction().get("evictionHard")).isNotNull();
  }

  @Test
  void badSettingsNameTheKeyAndValue() {
    Map<String, String> env = Map.of("NODE_NAME", "n");
    assertThatThrownBy(() -> AgentConfig.resolve(yaml("intervall: 5s\n"), Map.of(), env))
        .hasMessage(
            "agent.yaml:1: (document): unknown key \"intervall\" (did you mean \"interval\"?)");
    assertThatThrownBy(() -> AgentConfig.resolve(yaml("executor: nuke\n"), Map.of(), env))
        .hasMessageContaining("agent.yaml:1: executor: unknown value \"nuke\"");
    assertThatThrownBy(() -> AgentConfig.resolve(null, Map.of("interval", "soon"), env))
        .hasMessage("--interval: time: invalid duration \"soon\"");
    assertThatThrownBy(() -> AgentConfig.resolve(null, Map.of("interval", "1ms"), env))
        .hasMessageContaining("must be at least 100ms");
    assertThatThrownBy(() -> AgentConfig.resolve(null, Map.of("metricsAddress", "nope"), env))
        .hasMessageContaining("HOST:PORT");
    assertThatThrownBy(() -> AgentConfig.resolve(null, Map.of("rulesSha256", "abc"), env))
        .hasMessageContaining("--rules-sha256: expected 64 lowercase hex digits");
    assertThatThrownBy(
            () -> AgentConfig.resolve(null, Map.of("rules", "/no/such/rules"), env).checkPaths())
        .hasMessageContaining("rules: no such directory: /no/such/rules");
    assertThatThrownBy(() -> AgentConfig.resolve(null, Map.of("podsFile", "pods.yaml"), env))
        .hasMessageContaining("only in standalone mode");
    Map<String, Object> both = new HashMap<>();
    both.put("kubeletConfig", "pom.xml");
    assertThatThrownBy(() -> AgentConfig.resolve(yaml("eviction: {evictionHard: {}}\n"), both, env))
        .hasMessageContaining("either kubeletConfig or eviction");
    assertThatThrownBy(
            () -> AgentConfig.resolve(null, Map.of("standalone", true, "stats", "kubelet"), env))
        .hasMessageContaining("standalone mode reads host statistics");
  }

  @Test
  void allowedMethodsComeFromAListOrAFlagAndMustIncludeTheExecutor() {
    Map<String, String> env = Map.of("NODE_NAME", "n");
    assertThat(AgentConfig.resolve(null, Map.of(), env).allowedMethods())
        .containsExactlyInAnyOrder(
            EvictionMethod.DRY_RUN,
            EvictionMethod.DELETE,
            EvictionMethod.EVICT,
            EvictionMethod.KILL);
    assertThat(
            AgentConfig.resolve(
                    yaml("executor: evict\nallowedMethods: [evict, dry-run]\n"), Map.of(), env)
                .allowedMethods())
        .containsExactlyInAnyOrder(EvictionMethod.EVICT, EvictionMethod.DRY_RUN);
    assertThat(
            AgentConfig.resolve(
                    null, Map.of("executor", "evict", "allowedMethods", "evict, delete"), env)
                .allowedMethods())
        .containsExactlyInAnyOrder(EvictionMethod.EVICT, EvictionMethod.DELETE);
    assertThatThrownBy(
            () -> AgentConfig.resolve(yaml("allowedMethods: [evict, nuke]\n"), Map.of(), env))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("agent.yaml:1: allowedMethods: unknown method \"nuke\"");
    assertThatThrownBy(
            () ->
                AgentConfig.resolve(
                    yaml("executor: delete\nallowedMethods: [evict]\n"), Map.of(), env))
        .hasMessageContaining("executor: delete is not one of allowedMethods [evict]");
    assertThatThrownBy(() -> AgentConfig.resolve(null, Map.of("allowedMethods", ""), env))
        .hasMessageContaining("--allowed-methods: unknown method \"\"");
  }

  @Test
  void flagNamesAreKebabCase() {
    assertThat(AgentConfig.flagName("metricsAddress")).isEqualTo("metrics-address");
    assertThat(AgentConfig.flagName("rulesSha256")).isEqualTo("rules-sha256");
  }

  @Test
  void ruleProbationAndStateDirectoryHaveDefaultsAndAreChecked() {
    AgentConfig c = AgentConfig.resolve(null, Map.of("standalone", true), Map.of());
    assertThat(c.stateDir()).isEqualTo(java.nio.file.Path.of("/var/lib/evictd"));
    assertThat(c.rulesProbationSyncs()).isEqualTo(6);
    AgentConfig set =
        AgentConfig.resolve(
            yaml("standalone: true\nstateDir: /srv/evictd\nrulesProbationSyncs: 2\n"),
            Map.of(),
            Map.of());
    assertThat(set.stateDir()).isEqualTo(java.nio.file.Path.of("/srv/evictd"));
    assertThat(set.rulesProbationSyncs()).isEqualTo(2);
    assertThatThrownBy(
            () ->
                AgentConfig.resolve(
                    null, Map.of("standalone", true, "rulesProbationSyncs", "0"), Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessage("--rules-probation-syncs: expected a whole number of at least 1, found \"0\"");
  }
}
