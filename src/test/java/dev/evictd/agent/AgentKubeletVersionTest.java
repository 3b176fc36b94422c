package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionPlan;
import dev.evictd.kube.KubeSettings;
import dev.evictd.testing.FakeKubeApiServer;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The agent follows the kubelet its Node reports: under the same memory pressure, a pod with a
 * sidecar ranks first beside a 1.32 or 1.33 kubelet (the sidecar counted like an init container)
 * and second beside a 1.34 one (the sidecar added to the request), as each kubelet ranks them;
 * /metrics and /readyz say which kubelet is followed.
 */
class AgentKubeletVersionTest {

  private static Pod pod(String name, int appMi, Integer sidecarMi) {
    PodBuilder b =
        new PodBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace("apps")
            .endMetadata()
            .withNewSpec()
            .withNodeName("node-1")
            .addNewContainer()
            .withName("app")
            .withImage("busybox")
            .withNewResources()
            .withRequests(Map.of("memory", new Quantity(appMi + "Mi")))
            .endResources()
            .endContainer()
            .endSpec()
            .withNewStatus()
            .withPhase("Running")
            .endStatus();
    if (sidecarMi != null) {
      b.editSpec()
          .addNewInitContainer()
          .withName("proxy")
          .withImage("busybox")
          .withRestartPolicy("Always")
          .withNewResources()
          .withRequests(Map.of("memory", new Quantity(sidecarMi + "Mi")))
          .endResources()
          .endInitContainer()
          .endSpec();
    }
    return b.build();
  }

  private static String summary(Pod sidecar, Pod plain) {
    return """
        {"node": {"nodeName": "node-1", "memory": {"availableBytes": 524288000, "workingSetBytes": 7516192768}},
         "pods": [
           {"podRef": {"name": "with-sidecar", "namespace": "apps", "uid": "%s"}, "memory": {"workingSetBytes": 419430400}},
           {"podRef": {"name": "plain", "namespace": "apps", "uid": "%s"}, "memory": {"workingSetBytes": 419430400}}]}
        """
        .formatted(sidecar.getMetadata().getUid(), plain.getMetadata().getUid());
  }

  @ParameterizedTest
  @CsvSource({
    "v1.32.9, 1.32, with-sidecar",
    "v1.33.4, 1.33, with-sidecar",
    "v1.34.1, 1.34, plain",
  })
  void plansAsTheNodesKubeletWould(
      String reported, String followed, String first, @TempDir Path dir) throws Exception {
    Path cfg = dir.resolve("agent.yaml");
    Files.writeString(
        cfg,
        "nodeName: node-1\nstats: kubelet-proxy\nexecutor: dry-run\ninterval: 1s\n"
            + "metricsAddress: 127.0.0.1:0\nmemcgNotifier: false\nfsLayout: shared\nkubeletRootDir: "
            + dir
            + "\nruntimeRootDir: "
            + dir
            + "\nstateDir: "
            + dir.resolve("state")
            + "\neviction:\n  evictionHard: {memory.available: 1Gi}\n");
    try (FakeKubeApiServer api = FakeKubeApiServer.start()) {
      api.createNode(
          new NodeBuilder()
              .withNewMetadata()
              .withName("node-1")
              .endMetadata()
              .withNewStatus()
              .withNewNodeInfo()
              .withKubeletVersion(reported)
              .endNodeInfo()
              .endStatus()
              .build());
      Pod sidecar = api.create(pod("with-sidecar", 100, 150));
      Pod plain = api.create(pod("plain", 200, null));
      api.summary("node-1", 200, summary(sidecar, plain));
      AgentConfig c =
          AgentConfig.resolve(
              dev.evictd.config.YamlNode.parse(cfg.toString(), Files.readAllBytes(cfg)),
              Map.of(),
              Map.of());
      try (Agent agent =
          Agent.start(c, Clock.systemUTC(), () -> api.client(KubeSettings.DEFAULTS))) {
        assertThat(FakeKubeApiServer.await(() -> agent.manager().ready(), Duration.ofSeconds(30)))
            .isTrue();
        EvictionPlan plan = agent.manager().syncOnce("test").plan();
        List<String> ranking = plan.ranking().stream().map(r -> r.pod().name()).toList();
        assertThat(ranking).first().isEqualTo(first);
        assertThat(ranking).hasSize(2);
        assertThat(AgentEndToEndTest.get(agent.address(), "/metrics"))
            .contains(
                "evictd_kubelet_info{beyond_range=\"false\",reported=\""
                    + reported
                    + "\",version=\""
                    + followed
                    + "\"} 1");
        assertThat(AgentEndToEndTest.get(agent.address(), "/readyz"))
            .contains("kubelet " + reported + ": following " + followed);
      }
    }
  }
}
