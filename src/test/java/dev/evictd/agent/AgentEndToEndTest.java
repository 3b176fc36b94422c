package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.kube.KubeSettings;
import dev.evictd.testing.FakeKubeApiServer;
import dev.evictd.testing.RuleFiles;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole agent against the mock API server: pressure in the kubelet's Summary evicts the right
 * pod via the API.
 */
class AgentEndToEndTest {
  /** One client for every probe and scrape (a JDK client per call leaves its threads behind). */
  private static final java.net.http.HttpClient HTTP = java.net.http.HttpClient.newHttpClient();

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
    return HTTP.send(
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
            + "\nstateDir: "
            + dir.resolve("state")
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
      // the DELETE, its event and metric come from inside the first sync, which marks the agent
      // ready only once it has ended: on a busy machine this thread can get here first
      Agent running = agent;
      AtomicReference<String> readyz = new AtomicReference<>("");
      assertThat(
              FakeKubeApiServer.await(
                  () -> {
                    try {
                      readyz.set(get(running.address(), "/readyz"));
                      return readyz.get().startsWith("ready");
                    } catch (Exception e) {
                      return false;
                    }
                  },
                  Duration.ofSeconds(10)))
          .as(() -> "ready once the first sync has ended: " + readyz.get())
          .isTrue();
    } finally {
      api.close(); // before the informer: see FakeKubeApiServer#close
      if (agent != null) {
        agent.close();
      }
    }
  }

  @Test
  void standaloneAgentHotReloadsRulesAndKeepsBrokenOnesOut(@TempDir Path dir) throws Exception {
    Path rules = RuleFiles.createDirectory(dir.resolve("rules"));
    RuleFiles.write(rules.resolve("rules.yaml"), "extends: default\n");
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
    try (Agent agent = Agent.start(AgentConfig.resolve(null, flags, Map.of()), Clock.systemUTC())) {
      String sha0 = agent.manager().rulesSha256();
      assertThat(FakeKubeApiServer.await(() -> agent.manager().ready(), Duration.ofSeconds(20)))
          .isTrue();
      RuleFiles.write(
          rules.resolve("extra.drl"),
          "package dev.evictd.rules;\nimport dev.evictd.api.*;\nrule \"extra\"\n    ruleflow-group \"observe\"\nwhen\n"
              + "    PodFact(priority > 5)\nthen\nend\n");
      assertThat(
              FakeKubeApiServer.await(
                  () -> !agent.manager().rulesSha256().equals(sha0), Duration.ofSeconds(30)))
          .isTrue();
      String sha1 = agent.manager().rulesSha256();
      assertThat(get(agent.address(), "/readyz")).contains(sha1);
      RuleFiles.write(rules.resolve("extra.drl"), "rule \"broken\" when then");
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

  static double metric(Agent agent, String series) {
    try {
      return get(agent.address(), "/metrics")
          .lines()
          .filter(l -> l.startsWith(series + " "))
          .mapToDouble(l -> Double.parseDouble(l.substring(series.length() + 1)))
          .findFirst()
          .orElse(0);
    } catch (Exception e) {
      return -1;
    }
  }

  @Test
  void aThrowingSetPushedByHotReloadIsRolledBackWhilePressureEvictionsGoOn(@TempDir Path dir)
      throws Exception {
    Path rules = RuleFiles.createDirectory(dir.resolve("rules"));
    RuleFiles.write(rules.resolve("rules.yaml"), "extends: default\n");
    Path cfg = dir.resolve("agent.yaml");
    Files.writeString(
        cfg,
        "nodeName: node-1\nstats: kubelet-proxy\ninterval: 1s\nmetricsAddress: 127.0.0.1:0\nmemcgNotifier: false\n"
            + "fsLayout: shared\nrulesProbationSyncs: 3\nrules: "
            + rules
            + "\nkubeletRootDir: "
            + dir
            + "\nruntimeRootDir: "
            + dir
            + "\nstateDir: "
            + dir.resolve("state")
            + "\neviction:\n  evictionHard: {memory.available: 1Gi}\n");
    FakeKubeApiServer api = FakeKubeApiServer.start();
    Agent agent = null;
    try {
      Pod small = api.create(pod("small", 0));
      Pod big = api.create(pod("big", 0));
      String pressure = summary(small, big);
      String quiet =
          pressure.replace("\"availableBytes\": 524288000", "\"availableBytes\": 5242880000");
      api.summary("node-1", 200, quiet);
      AgentConfig c =
          AgentConfig.resolve(
              dev.evictd.config.YamlNode.parse(cfg.toString(), Files.readAllBytes(cfg)),
              Map.of(),
              Map.of());
      agent = Agent.start(c, Clock.systemUTC(), () -> api.client(KubeSettings.DEFAULTS));
      Agent a = agent;
      String packaged = a.manager().rulesSha256();
      assertThat(FakeKubeApiServer.await(() -> a.manager().ready(), Duration.ofSeconds(30)))
          .isTrue();
      try (var s = Files.list(Path.of("src/test/resources/hostile-rules/runtime/throwing"))) {
        for (Path f : s.toList()) {
          RuleFiles.copy(f, rules.resolve(f.getFileName()));
        }
      }
      assertThat(
              FakeKubeApiServer.await(
                  () -> !a.manager().rulesSha256().equals(packaged), Duration.ofSeconds(30)))
          .as("the throwing set passes its shadow sync on quiet statistics and is swapped in")
          .isTrue();
      String throwing = a.manager().rulesSha256();
      double failedBefore = metric(a, "evictd_syncs_total{result=\"failed\"}");

      api.summary("node-1", 200, pressure);
      String dryRun =
          "evictd_evictions_total{method=\"dry_run\",outcome=\"dry_run\",signal=\"memory.available\"}";
      assertThat(FakeKubeApiServer.await(() -> metric(a, dryRun) >= 1, Duration.ofSeconds(30)))
          .as("pressure evictions go on")
          .isTrue();
      assertThat(a.manager().rulesSha256()).isEqualTo(packaged);
      assertThat(metric(a, "evictd_rule_reloads_total{result=\"rolled_back\"}")).isEqualTo(1.0);
      assertThat(metric(a, "evictd_syncs_total{result=\"failed\"}") - failedBefore)
          .as("rolled back within the probation")
          .isBetween(1.0, 3.0);
      assertThat(Files.readString(dir.resolve("state").resolve(RuleStateStore.BAD_FILE)))
          .contains(throwing, "throws when pods are ranked");
      assertThat(get(a.address(), "/readyz"))
          .startsWith("ready\n")
          .endsWith("rules sha256 " + packaged + "\n");
    } finally {
      api.close(); // before the informer: see FakeKubeApiServer#close
      if (agent != null) {
        agent.close();
      }
    }
  }

  @Test
  void theOwnNodeIsTaintedUnderPressureAndAStalePodViewIsNotReady(@TempDir Path dir)
      throws Exception {
    Path cfg = dir.resolve("agent.yaml");
    Files.writeString(
        cfg,
        "nodeName: node-1\nstats: kubelet-proxy\nexecutor: delete\ntaints: true\ninterval: 1s\nmetricsAddress: 127.0.0.1:0\n"
            + "memcgNotifier: false\nfsLayout: shared\nstateDir: "
            + dir.resolve("state")
            + "\nkubeletRootDir: "
            + dir
            + "\nruntimeRootDir: "
            + dir
            + "\n"
            + "eviction:\n  evictionHard: {memory.available: 1Gi}\n");
    var clock =
        new dev.evictd.testing.MutableClock(java.time.Instant.parse("2026-01-01T00:00:00Z"));
    FakeKubeApiServer api = FakeKubeApiServer.start();
    Agent agent = null;
    try {
      api.createNode(
          new io.fabric8.kubernetes.api.model.NodeBuilder()
              .withNewMetadata()
              .withName("node-1")
              .endMetadata()
              .withNewSpec()
              .addNewTaint()
              .withKey("dedicated")
              .withValue("gpu")
              .withEffect("NoSchedule")
              .endTaint()
              .endSpec()
              .build());
      Pod small = api.create(pod("small", 0));
      Pod big = api.create(pod("big", 0));
      api.summary("node-1", 200, summary(small, big));
      AgentConfig c =
          AgentConfig.resolve(
              dev.evictd.config.YamlNode.parse(cfg.toString(), Files.readAllBytes(cfg)),
              Map.of(),
              Map.of());
      agent = Agent.start(c, clock, () -> api.client(KubeSettings.DEFAULTS));

      // the condition holds: the scheduler is told, beside the taint that was there
      assertThat(
              FakeKubeApiServer.await(
                  () ->
                      api.node("node-1").orElseThrow().getSpec().getTaints().stream()
                          .anyMatch(
                              t ->
                                  t.getKey().equals("evictd.dev/memory-pressure")
                                      && t.getEffect().equals("NoSchedule")),
                  Duration.ofSeconds(30)))
          .isTrue();
      assertThat(api.node("node-1").orElseThrow().getSpec().getTaints())
          .extracting(io.fabric8.kubernetes.api.model.Taint::getKey)
          .containsExactly("dedicated", "evictd.dev/memory-pressure");
      Agent running = agent;
      assertThat(
              FakeKubeApiServer.await(
                  () -> {
                    try {
                      return get(running.address(), "/readyz").startsWith("ready");
                    } catch (Exception e) {
                      return false;
                    }
                  },
                  Duration.ofSeconds(10)))
          .isTrue();
      assertThat(get(agent.address(), "/metrics")).contains("evictd_pod_view_age_seconds 0.0");

      // the API server goes away: the pod view ages on the agent's clock until it is not ready
      api.close();
      assertThat(
              FakeKubeApiServer.await(
                  () -> {
                    clock.advance(Duration.ofSeconds(2));
                    try {
                      // the statistics (served by the same API server) may go stale first
                      String body = get(running.address(), "/readyz");
                      return body.startsWith("not ready") && body.contains("pod-view: pod view");
                    } catch (Exception e) {
                      return false;
                    }
                  },
                  Duration.ofSeconds(30)))
          .isTrue();
      assertThat(get(agent.address(), "/readyz")).contains("pod view", "the watch is down");
      String metrics = get(agent.address(), "/metrics");
      double age =
          Double.parseDouble(
              metrics
                  .lines()
                  .filter(l -> l.startsWith("evictd_pod_view_age_seconds "))
                  .findFirst()
                  .orElseThrow()
                  .split(" ")[1]);
      assertThat(age).isGreaterThan(30.0);
    } finally {
      api.close(); // before the informer: see FakeKubeApiServer#close
      if (agent != null) {
        agent.close();
      }
    }
  }
}
