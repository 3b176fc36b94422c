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
    // the kubelet's file passed as the agent's
    assertThatThrownBy(
            () ->
                AgentConfig.resolve(
                    yaml("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"),
                    Map.of(),
                    env))
        .hasMessage(
            "agent.yaml:2: kind: \"KubeletConfiguration\": an agent configuration has no kind"
                + " (the kubelet's file goes in kubeletConfig: FILE)");
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

  @Test
  void statisticsComeFromTheOwnKubeletAtTheHostIp() {
    Map<String, String> env = Map.of("NODE_NAME", "n", "HOST_IP", "10.0.0.5");
    AgentConfig c = AgentConfig.resolve(null, Map.of(), env);
    assertThat(c.stats()).isEqualTo("kubelet");
    assertThat(c.kubeletUrl()).isEqualTo("https://10.0.0.5:10250");
    assertThat(c.kubeletCaFile()).isEqualTo(dev.evictd.kube.KubeletEndpoint.SERVICE_ACCOUNT_CA);
    assertThat(c.kubeletTokenFile())
        .isEqualTo(dev.evictd.kube.KubeletEndpoint.SERVICE_ACCOUNT_TOKEN);
    assertThat(
            AgentConfig.resolve(null, Map.of(), Map.of("NODE_NAME", "n", "HOST_IP", "fd00::5"))
                .kubeletUrl())
        .isEqualTo("https://[fd00::5]:10250");
    assertThat(
            AgentConfig.resolve(null, Map.of("kubeletUrl", "https://kubelet:1"), env).kubeletUrl())
        .isEqualTo("https://kubelet:1");
    assertThat(AgentConfig.resolve(yaml("stats: kubelet-proxy\n"), Map.of(), env).stats())
        .isEqualTo("kubelet-proxy");
  }

  @Test
  void kubeletAccessIsCheckedAtStartWithOneLineNamingTheSetting() {
    Map<String, String> noHostIp = Map.of("NODE_NAME", "n");
    AgentConfig c = AgentConfig.resolve(null, Map.of(), noHostIp);
    assertThatThrownBy(c::checkPaths)
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("kubeletUrl: stats kubelet reads the node's own kubelet")
        .hasMessageContaining("HOST_IP");
    // outside a pod: the service account's files are named (a name no pod has, so that the test
    // does not depend on where it runs)
    String token = "/var/run/secrets/kubernetes.io/serviceaccount/no-such-token";
    AgentConfig outside =
        AgentConfig.resolve(
            null,
            Map.of("kubeletUrl", "https://127.0.0.1:10250", "kubeletTokenFile", token),
            noHostIp);
    assertThatThrownBy(outside::checkPaths)
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "kubeletTokenFile "
                + token
                + ": no such file (the service account's; outside a pod set kubeletTokenFile)");
    assertThatThrownBy(
            () ->
                AgentConfig.resolve(null, Map.of("kubeletUrl", "http://127.0.0.1:10255"), noHostIp)
                    .checkPaths())
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("plain HTTP would send the token in clear");
    assertThatThrownBy(
            () ->
                AgentConfig.resolve(
                    yaml("kubeletInsecureSkipTLSVerify: true\nkubeletCaFile: /ca.crt\n"),
                    Map.of(),
                    noHostIp))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("give either kubeletCaFile or kubeletInsecureSkipTLSVerify");
    AgentConfig insecure =
        AgentConfig.resolve(yaml("kubeletInsecureSkipTLSVerify: true\n"), Map.of(), noHostIp);
    assertThat(insecure.kubeletInsecureSkipTlsVerify()).isTrue();
    assertThat(insecure.kubeletCaFile()).isNull();
    // host statistics and the proxy need no kubelet files
    AgentConfig.resolve(yaml("stats: host\n"), Map.of(), noHostIp).checkPaths();
    AgentConfig.resolve(yaml("stats: kubelet-proxy\n"), Map.of(), noHostIp).checkPaths();
    assertThatThrownBy(
            () ->
                AgentConfig.resolve(
                    null, Map.of("standalone", true, "stats", "kubelet-proxy"), noHostIp))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("needs a cluster");
  }

  @Test
  void acronymsAreOneWordInFlagNames() {
    assertThat(AgentConfig.flagName("kubeletInsecureSkipTLSVerify"))
        .isEqualTo("kubelet-insecure-skip-tls-verify");
    assertThat(AgentConfig.flagName("kubeletCaFile")).isEqualTo("kubelet-ca-file");
    assertThat(AgentConfig.flagName("podCleanupTimeout")).isEqualTo("pod-cleanup-timeout");
  }

  @Test
  void theEndpointsStayOnLoopbackUnlessAHostIsGiven() {
    assertThat(HttpEndpoints.parse(":9091").getAddress().isLoopbackAddress()).isTrue();
    assertThat(HttpEndpoints.parse("127.0.0.1:9091").getAddress().isLoopbackAddress()).isTrue();
    assertThat(
            AgentConfig.resolve(null, Map.of(), Map.of("NODE_NAME", "n", "HOST_IP", "10.0.0.5"))
                .metricsAddress())
        .isEqualTo("127.0.0.1:9091");
  }
}
