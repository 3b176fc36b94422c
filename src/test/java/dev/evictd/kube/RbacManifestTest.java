package dev.evictd.kube;

import static dev.evictd.testing.TestPods.decision;
import static dev.evictd.testing.TestPods.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.api.Signal;
import dev.evictd.executor.ApiDeleteEvictor;
import dev.evictd.executor.ApiEvictionEvictor;
import dev.evictd.executor.DispatchingPodEvictor;
import dev.evictd.executor.DryRunEvictor;
import dev.evictd.testing.FakeKubeApiServer;
import dev.evictd.testing.FakeKubelet;
import dev.evictd.testing.Rbac;
import dev.evictd.testing.Rbac.Access;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * docker/rbac.yaml against the requests evictd's code makes. A scenario drives every component that
 * talks to the API server or the kubelet (informer, both API evictors, events, both summary
 * sources) against the fakes, which record each request; each request is mapped to the verb and
 * resource the API server (or kubelet) authorizes it as. The manifest must allow every request seen
 * (the scenario's, and those of every other kube test run before in this JVM), and must grant
 * nothing the scenario did not use.
 */
class RbacManifestTest {
  private static final Path MANIFEST = Path.of("docker/rbac.yaml");
  private static final Path PROXY_OPT_IN = Path.of("docker/rbac-kubelet-proxy.yaml");
  private static final Access NODES_PROXY_GET = new Access("", "nodes/proxy", "get");
  private static Rbac rbac;
  private static Rbac proxyOptIn;

  @BeforeAll
  static void load() throws Exception {
    rbac = Rbac.load(MANIFEST);
    proxyOptIn = Rbac.load(PROXY_OPT_IN);
  }

  /** The least a summary needs to be a read (a summary without node statistics is refused). */
  static final String MINIMAL_SUMMARY = "{\"node\": {\"nodeName\": \"node-a\"}}";

  /** What the default configuration (stats: kubelet) uses, then what stats: kubelet-proxy adds. */
  private record Used(Set<Access> defaults, Set<Access> proxyMode) {}

  private static Used scenario(Path dir) throws Exception {
    Set<Access> used = new LinkedHashSet<>();
    Clock clock = Clock.systemUTC();
    Path token = Files.writeString(dir.resolve("token"), "t");
    try (FakeKubelet kubelet = new FakeKubelet("t", MINIMAL_SUMMARY);
        KubeletSummaryProvider direct =
            KubeletSummaryProvider.direct(
                new KubeletEndpoint(URI.create(kubelet.url()), token, kubelet.certificate(), false),
                "node-a",
                Duration.ofSeconds(10),
                Duration.ofMinutes(1),
                clock)) {
      direct.summary();
      kubelet.requests().forEach(r -> used.add(Rbac.kubelet(r.method(), r.path())));
    }
    FakeKubeApiServer informerApi = FakeKubeApiServer.start();
    KubernetesClient informerClient = informerApi.client(KubeSettings.DEFAULTS);
    NodePodInformer informer = new NodePodInformer(informerClient, "node-a");
    try {
      informerApi.create(pod("ns", "web", "node-a"));
      assertThat(informer.start(Duration.ofSeconds(10))).isTrue();
      // the informer opens its watch after the first list: wait for it
      assertThat(
              FakeKubeApiServer.await(
                  () ->
                      informerApi.requests().stream()
                          .anyMatch(r -> r.path().contains("watch=true")),
                  Duration.ofSeconds(10)))
          .isTrue();
      informerApi.requests().forEach(r -> used.add(Rbac.apiServer(r.method(), r.path())));
    } finally {
      // server first: see FakeKubeApiServer#close
      informerApi.close();
      informer.close();
      informerClient.close();
    }
    try (FakeKubeApiServer api = FakeKubeApiServer.start();
        KubernetesClient client = api.client(KubeSettings.DEFAULTS)) {
      var web = api.create(pod("ns", "web", "node-a"));
      var db = api.create(pod("ns", "db", "node-a"));
      KubeApi kube = new KubeApi(client, Duration.ofSeconds(10));
      var evictor =
          new DispatchingPodEvictor(
              EvictionMethod.DELETE,
              new ApiDeleteEvictor(kube, RetryPolicy.DEFAULT, clock),
              new ApiEvictionEvictor(kube, RetryPolicy.DEFAULT),
              null,
              new DryRunEvictor());
      assertThat(evictor.evict(decision(web, 1, EvictionMethod.DELETE)))
          .isEqualTo(EvictionOutcome.EVICTED);
      assertThat(evictor.evict(decision(db, 1, EvictionMethod.EVICT)))
          .isEqualTo(EvictionOutcome.EVICTED);
      assertThat(evictor.evict(decision(db, 1, EvictionMethod.DRY_RUN)))
          .isEqualTo(EvictionOutcome.DRY_RUN);
      EventRecorder events = new EventRecorder(kube, "node-a", clock);
      events.podEvicted(decision(web, 1, EvictionMethod.DELETE));
      events.thresholdMet(Signal.MEMORY_AVAILABLE.resource());
      // a repeat updates the same Event
      events.thresholdMet(Signal.MEMORY_AVAILABLE.resource());
      // a delete whose answer never comes is checked with one GET of the pod
      var late = api.create(pod("ns", "late", "node-a"));
      api.answerLate("DELETE", "/api/v1/namespaces/ns/pods/late", Duration.ofSeconds(2), 1);
      assertThat(
              new ApiDeleteEvictor(
                      new KubeApi(client, Duration.ofMillis(300)), RetryPolicy.DEFAULT, clock)
                  .evict(decision(late, 1, EvictionMethod.DELETE)))
          .isEqualTo(EvictionOutcome.UNKNOWN);
      // the own Node's taints: read, then one JSON patch
      api.createNode(
          new io.fabric8.kubernetes.api.model.NodeBuilder()
              .withNewMetadata()
              .withName("node-a")
              .endMetadata()
              .build());
      assertThat(
              new NodeTaints(kube, "node-a", clock)
                  .reconcile(Set.of(dev.evictd.api.NodeConditionType.MemoryPressure)))
          .isTrue();
      api.requests().forEach(r -> used.add(Rbac.apiServer(r.method(), r.path())));
    }
    Set<Access> proxyMode = new LinkedHashSet<>();
    try (FakeKubeApiServer api = FakeKubeApiServer.start();
        KubernetesClient client = api.client(KubeSettings.DEFAULTS)) {
      api.summary("node-a", 200, MINIMAL_SUMMARY);
      KubeletSummaryProvider.viaApiServer(
              client, "node-a", Duration.ofSeconds(10), Duration.ofMinutes(1), clock)
          .summary();
      api.requests().forEach(r -> proxyMode.add(Rbac.apiServer(r.method(), r.path())));
    }
    return new Used(used, proxyMode);
  }

  @Test
  void grantsExactlyWhatTheCodeUses(@TempDir Path dir) throws Exception {
    Used used = scenario(dir);
    Set<Access> granted = rbac.grants("evictd");

    assertThat(used.defaults()).as("requests the code made").isSubsetOf(granted);
    assertThat(granted).as("grants the code never used").isSubsetOf(used.defaults());
    // the opt-in for stats: kubelet-proxy grants exactly what that mode adds
    assertThat(proxyOptIn.grants("evictd-kubelet-proxy")).containsExactly(NODES_PROXY_GET);
    assertThat(used.proxyMode()).containsExactly(NODES_PROXY_GET);
  }

  @Test
  void theDefaultGrantsNoNodesProxyAndTheOptInBindsEvictd() {
    assertThat(rbac.grants("evictd")).doesNotContain(NODES_PROXY_GET);
    JsonNode binding = proxyOptIn.documents("ClusterRoleBinding").get(0);
    assertThat(binding.path("roleRef").path("name").asString()).isEqualTo("evictd-kubelet-proxy");
    JsonNode subject = binding.path("subjects").get(0);
    assertThat(subject.path("name").asString()).isEqualTo("evictd");
    assertThat(subject.path("namespace").asString()).isEqualTo("kube-system");
  }

  @Test
  void allowsEveryRequestAnyKubeTestMade(@TempDir Path dir) throws Exception {
    scenario(dir);
    Set<Access> granted = new LinkedHashSet<>(rbac.grants("evictd"));
    // nodes/proxy is used only by stats: kubelet-proxy and by capture through the API server: the
    // opt-in manifest grants it
    granted.addAll(proxyOptIn.grants("evictd-kubelet-proxy"));
    Stream.concat(
            FakeKubeApiServer.ALL_REQUESTS.stream().map(r -> Rbac.apiServer(r.method(), r.path())),
            FakeKubelet.ALL_REQUESTS.stream().map(r -> Rbac.kubelet(r.method(), r.path())))
        .distinct()
        .forEach(a -> assertThat(granted).as("RBAC for " + a).contains(a));
  }

  @Test
  void bindsTheRoleToTheEvictdServiceAccountInKubeSystem() {
    JsonNode sa = rbac.documents("ServiceAccount").get(0);
    assertThat(sa.path("metadata").path("name").asString()).isEqualTo("evictd");
    assertThat(sa.path("metadata").path("namespace").asString()).isEqualTo("kube-system");

    JsonNode binding = rbac.documents("ClusterRoleBinding").get(0);
    assertThat(binding.path("roleRef").path("kind").asString()).isEqualTo("ClusterRole");
    assertThat(binding.path("roleRef").path("name").asString()).isEqualTo("evictd");
    JsonNode subject = binding.path("subjects").get(0);
    assertThat(subject.path("kind").asString()).isEqualTo("ServiceAccount");
    assertThat(subject.path("name").asString()).isEqualTo("evictd");
    assertThat(subject.path("namespace").asString()).isEqualTo("kube-system");
  }

  @Test
  void mapsRequestsAsTheApiServerAndKubeletAuthorizeThem() {
    assertThat(Rbac.apiServer("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn"))
        .isEqualTo(new Access("", "pods", "list"));
    assertThat(Rbac.apiServer("GET", "/api/v1/pods?allowWatchBookmarks=true&watch=true"))
        .isEqualTo(new Access("", "pods", "watch"));
    assertThat(Rbac.apiServer("GET", "/api/v1/namespaces/ns/pods/web"))
        .isEqualTo(new Access("", "pods", "get"));
    assertThat(Rbac.apiServer("PATCH", "/api/v1/namespaces/ns/pods/web/status"))
        .isEqualTo(new Access("", "pods/status", "patch"));
    assertThat(Rbac.apiServer("POST", "/api/v1/namespaces/ns/pods/web/eviction"))
        .isEqualTo(new Access("", "pods/eviction", "create"));
    assertThat(Rbac.apiServer("DELETE", "/api/v1/namespaces/ns/pods"))
        .isEqualTo(new Access("", "pods", "deletecollection"));
    assertThat(Rbac.apiServer("GET", "/api/v1/nodes/n/proxy/stats/summary"))
        .isEqualTo(new Access("", "nodes/proxy", "get"));
    assertThat(Rbac.apiServer("POST", "/apis/events.k8s.io/v1/namespaces/ns/events"))
        .isEqualTo(new Access("events.k8s.io", "events", "create"));
    assertThat(Rbac.kubelet("GET", "/stats/summary"))
        .isEqualTo(new Access("", "nodes/stats", "get"));
    assertThat(Rbac.kubelet("POST", "/exec/ns/pod/c"))
        .isEqualTo(new Access("", "nodes/proxy", "create"));
  }

  @Test
  void theManifestRefusesWhatTheCodeDoesNotDo() {
    Set<Access> granted = rbac.grants("evictd");
    assertThat(granted)
        .doesNotContain(
            new Access("", "pods", "update"),
            new Access("", "pods", "deletecollection"),
            new Access("", "nodes", "update"),
            new Access("", "nodes", "list"),
            new Access("", "nodes/status", "patch"),
            new Access("", "events", "update"),
            new Access("", "nodes/proxy", "create"),
            NODES_PROXY_GET,
            new Access("", "secrets", "get"));
  }
}
