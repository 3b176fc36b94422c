package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.config.YamlNode;
import dev.evictd.kube.KubeSettings;
import dev.evictd.testing.FakeKubeApiServer;
import dev.evictd.testing.FakeKubelet;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent in its default configuration (stats: kubelet) against a TLS fake kubelet: the node's
 * own kubelet at https://$HOST_IP:PORT, its serving certificate verified against the configured CA,
 * the token from the configured file; with verification off, /readyz says so.
 */
class AgentKubeletTest {
  static final String SUMMARY =
      """
      {"node": {"nodeName": "node-1", "memory": {"availableBytes": 8589934592, "workingSetBytes": 1073741824}},
       "pods": []}
      """;

  private static AgentConfig config(Path dir, FakeKubelet kubelet, String extra) throws Exception {
    Path token = Files.writeString(dir.resolve("token"), "kubelet-token\n");
    String yaml =
        "executor: dry-run\ninterval: 500ms\nmetricsAddress: 127.0.0.1:0\nmemcgNotifier: false\n"
            + "fsLayout: shared\nstateDir: "
            + dir.resolve("state")
            + "\nkubeletRootDir: "
            + dir
            + "\nruntimeRootDir: "
            + dir
            + "\nkubeletTokenFile: "
            + token
            + "\n"
            + extra;
    // HOST_IP as the downward API sets it; the port is the fake kubelet's
    String port = kubelet.ipUrl().substring(kubelet.ipUrl().lastIndexOf(':') + 1);
    return AgentConfig.resolve(
        YamlNode.parse("agent.yaml", yaml.getBytes(StandardCharsets.UTF_8)),
        Map.of("kubeletUrl", "https://127.0.0.1:" + port),
        Map.of("NODE_NAME", "node-1", "HOST_IP", "127.0.0.1"));
  }

  private static double skippedSyncs(Agent agent) {
    try {
      return AgentEndToEndTest.get(agent.address(), "/metrics")
          .lines()
          .filter(l -> l.startsWith("evictd_syncs_total{result=\"skipped\"}"))
          .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
          .sum();
    } catch (Exception e) {
      return 0;
    }
  }

  private static String readyz(Agent agent) throws Exception {
    return AgentEndToEndTest.get(agent.address(), "/readyz");
  }

  @Test
  void readsTheOwnKubeletWithTheConfiguredCaAndToken(@TempDir Path dir) throws Exception {
    try (FakeKubeApiServer api = FakeKubeApiServer.start();
        FakeKubelet kubelet = new FakeKubelet("kubelet-token", SUMMARY)) {
      AgentConfig c = config(dir, kubelet, "kubeletCaFile: " + kubelet.certificate() + "\n");
      try (Agent agent =
          Agent.start(c, Clock.systemUTC(), () -> api.client(KubeSettings.DEFAULTS))) {
        assertThat(FakeKubeApiServer.await(() -> agent.manager().ready(), Duration.ofSeconds(20)))
            .isTrue();
        assertThat(readyz(agent)).startsWith("ready").doesNotContain("WARNING");
      }
      assertThat(kubelet.requests())
          .isNotEmpty()
          .allSatisfy(
              r -> {
                assertThat(r.path()).isEqualTo("/stats/summary");
                assertThat(r.authorization()).isEqualTo("Bearer kubelet-token");
              });
      // nothing went through the API server's node proxy
      assertThat(api.requests()).noneMatch(r -> r.path().contains("/proxy/"));
    }
  }

  @Test
  void anUntrustedKubeletGivesNoStatisticsAndTheAgentIsNotReady(@TempDir Path dir)
      throws Exception {
    try (FakeKubeApiServer api = FakeKubeApiServer.start();
        FakeKubelet kubelet = new FakeKubelet("kubelet-token", SUMMARY)) {
      Path other = FakeKubelet.otherCa(dir);
      AgentConfig c = config(dir, kubelet, "kubeletCaFile: " + other + "\n");
      try (Agent agent =
          Agent.start(c, Clock.systemUTC(), () -> api.client(KubeSettings.DEFAULTS))) {
        // wait for two skipped syncs: the agent kept trying and never became ready
        assertThat(FakeKubeApiServer.await(() -> skippedSyncs(agent) >= 2, Duration.ofSeconds(20)))
            .isTrue();
        assertThat(agent.manager().ready()).isFalse();
        assertThat(readyz(agent)).startsWith("not ready");
      }
      assertThat(kubelet.requests()).as("the token never went out").isEmpty();
    }
  }

  @Test
  void skippingVerificationIsShownInReadyz(@TempDir Path dir) throws Exception {
    try (FakeKubeApiServer api = FakeKubeApiServer.start();
        FakeKubelet kubelet = new FakeKubelet("kubelet-token", SUMMARY)) {
      AgentConfig c = config(dir, kubelet, "kubeletInsecureSkipTLSVerify: true\n");
      try (Agent agent =
          Agent.start(c, Clock.systemUTC(), () -> api.client(KubeSettings.DEFAULTS))) {
        assertThat(FakeKubeApiServer.await(() -> agent.manager().ready(), Duration.ofSeconds(20)))
            .isTrue();
        assertThat(readyz(agent))
            .startsWith("ready")
            .contains("WARNING: kubelet TLS verification is OFF (kubeletInsecureSkipTLSVerify)");
      }
    }
  }
}
