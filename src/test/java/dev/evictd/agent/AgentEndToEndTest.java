package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.kube.KubeSettings;
import dev.evictd.testing.FakeKubeApiServer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole agent against the mock API server: pressure in the kubelet's Summary evicts the right
 * pod via the API.
 */
class AgentEndToEndTest {
  static Pod pod(String name, int priority) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("apps")
        .endMetadata()
        .withNewSpec()
        .withNodeName("node-1")
        .withPriority(priority)
        .addNewContainer()
        .withName("app")
        .withImage("busybox")
        .endContainer()
        .endSpec()
        .build();
  }

  static String summary(Pod small, Pod big) {
    return """
        {"node": {"nodeName": "node-1", "memory": {"availableBytes": 524288000, "workingSetBytes": 7516192768}},
         "pods": [
           {"podRef": {"name": "small", "namespace": "apps", "uid": "%s"}, "memory": {"workingSetBytes": 104857600},
            "containers": [{"name": "app", "memory": {"workingSetBytes": 104857600}}]},
           {"podRef": {"name": "big", "namespace": "apps", "uid": "%s"}, "memory": {"workingSetBytes": 2147483648},
            "containers": [{"name": "app", "memory": {"workingSetBytes": 2147483648}}]}]}
        """
        .formatted(small.getMetadata().getUid(), big.getMetadata().getUid());
  }

  static String get(java.net.InetSocketAddress a, String path) throws Exception {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + a.getPort() + path)).build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  @Test
  void pressureEvictsTheRightPodThroughTheApiWithEventAndMetrics(@TempDir Path dir)
      throws Exception {
    Path cfg = dir.resolve("agent.yaml");
    Files.writeString(
        cfg,
        "nodeName: node-1\nstats: kubelet-proxy\nexecutor: delete\ninterval: 1s\nmetricsAddress: 127.0.0.1:0\nmemcgNotifier: false\n"
            + "fsLayout: shared\nkubeletRootDir: "
            + dir
            + "\nruntimeRootDir: "
            + dir
            + "\n"
            + "eviction:\n  evictionHard: {memory.available: 1Gi}\n");
    FakeKubeApiServer api = FakeKubeApiServer.start();
    Agent agent = null;
    try {
      Pod small = api.create(pod("small", 0));
      Pod big = api.create(pod("big", 0));
      api.summary("node-1", 200, summary(small, big));
      AgentConfig c =
          AgentConfig.resolve(
              dev.evictd.config.YamlNode.parse(cfg.toString(), Files.readAllBytes(cfg)),
              Map.of(),
              Map.of());
      agent = Agent.start(c, Clock.systemUTC(), () -> api.client(KubeSettings.DEFAULTS));
      boolean deleted =
          FakeKubeApiServer.await(
              () -> !api.requests("DELETE", "/api/v1/namespaces/apps/pods/big").isEmpty(),
              Duration.ofSeconds(30));
      assertThat(deleted).as("the big pod is deleted").isTrue();
      assertThat(api.requests("DELETE", "/api/v1/namespaces/apps/pods/small")).isEmpty();
      assertThat(api.requests("PATCH", "/api/v1/namespaces/apps/pods/big/status"))
          .singleElement()
          .satisfies(
              r ->
                  assertThat(r.body())
                      .contains("DisruptionTarget", "The node was low on resource: memory."));
      assertThat(
              FakeKubeApiServer.await(
                  () -> api.events("apps").stream().anyMatch(e -> "Evicted".equals(e.getReason())),
                  Duration.ofSeconds(10)))
          .isTrue();
      var evicted =
          api.events("apps").stream()
              .filter(e -> "Evicted".equals(e.getReason()))
              .findFirst()
              .orElseThrow();
      assertThat(evicted.getInvolvedObject().getName()).isEqualTo("big");
      assertThat(evicted.getMetadata().getAnnotations())
          .containsEntry("starved_resource", "memory")
          .containsEntry("offending_containers", "app");
      String metrics = get(agent.address(), "/metrics");
      assertThat(metrics)
          .contains(
              "evictd_evictions_total{method=\"delete\",outcome=\"evicted\",signal=\"memory.available\"} 1.0");
      assertThat(metrics).contains("evictd_node_condition{condition=\"MemoryPressure\"} 1.0");
      assertThat(get(agent.address(), "/readyz")).startsWith("ready");
    } finally {
      api.close(); // before the informer: see FakeKubeApiServer#close
      if (agent != null) {
        agent.close();
      }
    }
  }

  @Test
  void standaloneAgentHotReloadsRulesAndKeepsBrokenOnesOut(@TempDir Path dir) throws Exception {
    Path rules = Files.createDirectory(dir.resolve("rules"));
    Files.writeString(rules.resolve("rules.yaml"), "extends: default\n");
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
            "shared");
    try (Agent agent = Agent.start(AgentConfig.resolve(null, flags, Map.of()), Clock.systemUTC())) {
      String sha0 = agent.manager().rulesSha256();
      assertThat(FakeKubeApiServer.await(() -> agent.manager().ready(), Duration.ofSeconds(20)))
          .isTrue();
      Files.writeString(
          rules.resolve("extra.drl"),
          "package dev.evictd.rules;\nimport dev.evictd.api.*;\nrule \"extra\"\n    ruleflow-group \"observe\"\nwhen\n"
              + "    PodFact(priority > 5)\nthen\nend\n",
          StandardCharsets.UTF_8);
      assertThat(
              FakeKubeApiServer.await(
                  () -> !agent.manager().rulesSha256().equals(sha0), Duration.ofSeconds(30)))
          .isTrue();
      String sha1 = agent.manager().rulesSha256();
      assertThat(get(agent.address(), "/readyz")).contains(sha1);
      Files.writeString(
          rules.resolve("extra.drl"), "rule \"broken\" when then", StandardCharsets.UTF_8);
      assertThat(
              FakeKubeApiServer.await(
                  () -> {
                    try {
                      return get(agent.address(), "/metrics")
                          .contains("evictd_rule_reloads_total{result=\"failed\"} 1.0");
                    } catch (Exception e) {
                      return false;
                    }
                  },
                  Duration.ofSeconds(30)))
          .isTrue();
      assertThat(agent.manager().rulesSha256()).isEqualTo(sha1);
      long syncsBefore = agent.manager().lastSync().toEpochMilli();
      assertThat(
              FakeKubeApiServer.await(
                  () -> agent.manager().lastSync().toEpochMilli() > syncsBefore,
                  Duration.ofSeconds(10)))
          .as("the old rules keep syncing")
          .isTrue();
    }
  }
}
