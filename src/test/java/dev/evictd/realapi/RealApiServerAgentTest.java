package dev.evictd.realapi;

import static dev.evictd.testing.FakeKubeApiServer.await;
import static dev.evictd.testing.TestBedCluster.decision;
import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.admission.AdmissionWebhookServer;
import dev.evictd.admission.EvictionAdmission;
import dev.evictd.admission.PodLookup;
import dev.evictd.admission.ReloadingKeyManager;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.api.NodeConditionType;
import dev.evictd.executor.ApiDeleteEvictor;
import dev.evictd.executor.ApiEvictionEvictor;
import dev.evictd.kube.EventRecorder;
import dev.evictd.kube.KubeApi;
import dev.evictd.kube.NodePodInformer;
import dev.evictd.kube.NodeTaints;
import dev.evictd.testing.TestBed;
import dev.evictd.testing.TestBedCluster;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * evictd's own API code against a real kube-apiserver 1.32 (the shared test bed, {@link TestBed};
 * skipped where it is not running), as the agent: with the ServiceAccount, RBAC and admission
 * policy of docker/ applied as shipped and a service-account token bound to an agent pod on node A,
 * so the token carries node A's name. The eviction webhook of docker/admission-webhook.yaml is
 * served by evictd's own webhook server in this JVM (no Service or kube-proxy here: its
 * configuration is pointed at it by URL). Nothing runs but the API server: pods are marked Running
 * with set-running.sh, budgets' status is written with pdb-status.sh, and a deleted pod stays
 * Terminating.
 */
@Tag("apiserver")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RealApiServerAgentTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final List<String> MANIFESTS =
      List.of("docker/rbac.yaml", "docker/admission-policy.yaml", "docker/admission-webhook.yaml");

  private TestBed bed;
  private KubernetesClient admin;
  private TestBedCluster cluster;
  private AdmissionWebhookServer webhook;
  private KubernetesClient agent;
  private KubeApi kube;
  private String nodeA;
  private String nodeB;

  @BeforeAll
  void setUp() throws Exception {
    bed = TestBed.require();
    admin = bed.admin();
    bed.kubectl(null, args("apply", MANIFESTS));
    cluster = new TestBedCluster(bed, admin, "evictd-rt");
    nodeA = cluster.node(cluster.namespace() + "-a");
    nodeB = cluster.node(cluster.namespace() + "-b");
    cluster.agentPod(cluster.namespace() + "-agent", nodeA);
    startWebhook();
    agent = bed.as(cluster.evictdToken(cluster.namespace() + "-agent"));
    kube = new KubeApi(agent, Duration.ofSeconds(10));
  }

  /** evictd's webhook server on 127.0.0.1, named by the shipped webhook configuration. */
  private void startWebhook() throws Exception {
    String name = "evictd-rt-webhook";
    bed.script("cert.sh", name, "127.0.0.1", "", "IP:127.0.0.1");
    var keys =
        new ReloadingKeyManager(
            bed.work().resolve("pki/" + name + ".crt"),
            bed.work().resolve("pki/" + name + ".pkcs8.key"),
            Duration.ofSeconds(10));
    webhook =
        new AdmissionWebhookServer(
            new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
            keys,
            new EvictionAdmission(
                EvictionAdmission.DEFAULT_SERVICE_ACCOUNT,
                PodLookup.api(new KubeApi(admin, PodLookup.DEFAULT_TIMEOUT))));
    String clientConfig =
        "{\"url\":\"https://127.0.0.1:"
            + webhook.address().getPort()
            + AdmissionWebhookServer.PATH
            + "\",\"caBundle\":\""
            + Base64.getEncoder().encodeToString(Files.readAllBytes(bed.ca()))
            + "\"}";
    bed.kubectl(
        null,
        "patch",
        "validatingwebhookconfiguration",
        "evictd-evictions",
        "--type=json",
        "-p",
        "[{\"op\":\"replace\",\"path\":\"/webhooks/0/clientConfig\",\"value\":"
            + clientConfig
            + "}]");
  }

  private static String[] args(String verb, List<String> files) {
    List<String> a = new java.util.ArrayList<>(List.of(verb));
    files.forEach(f -> a.addAll(List.of("-f", f)));
    if (verb.equals("delete")) {
      a.add("--ignore-not-found");
    }
    return a.toArray(String[]::new);
  }

  @AfterAll
  void tearDown() {
    if (bed == null) {
      return;
    }
    if (agent != null) {
      agent.close();
    }
    if (webhook != null) {
      webhook.close();
    }
    cluster.close();
    bed.kubectl(null, args("delete", MANIFESTS));
    admin.close();
  }

  @Test
  void theInformerListsAndWatchesTheOwnNodesPodsWithTheAgentsToken() {
    cluster.pod("listed", nodeA, Map.of());
    cluster.pod("elsewhere", nodeB, Map.of());
    try (NodePodInformer informer = new NodePodInformer(agent, nodeA)) {
      assertThat(informer.start(WAIT)).isTrue();
      assertThat(names(informer)).contains("listed").doesNotContain("elsewhere");
      cluster.pod("watched", nodeA, Map.of());
      assertThat(await(() -> names(informer).contains("watched"), WAIT)).isTrue();
      assertThat(names(informer)).doesNotContain("elsewhere");
    }
  }

  private static List<String> names(NodePodInformer informer) {
    return informer.activePods().stream().map(p -> p.getMetadata().getName()).toList();
  }

  @Test
  void taintsComeAndGoOnTheOwnNodeAndAnotherNodeIsRefused() {
    Set<NodeConditionType> memory = Set.of(NodeConditionType.MemoryPressure);
    try (NodeTaints own = new NodeTaints(kube, nodeA, Clock.systemUTC());
        NodeTaints other = new NodeTaints(kube, nodeB, Clock.systemUTC())) {
      assertThat(own.reconcile(memory)).isTrue();
      // the API server's own not-ready taint is kept
      assertThat(taints(nodeA))
          .containsExactlyInAnyOrder(
              "node.kubernetes.io/not-ready:NoSchedule", "evictd.dev/memory-pressure:NoSchedule");
      assertThat(own.reconcile(Set.of())).isTrue();
      assertThat(taints(nodeA)).containsExactly("node.kubernetes.io/not-ready:NoSchedule");

      assertThat(other.reconcile(memory)).isFalse();
      assertThat(taints(nodeB)).containsExactly("node.kubernetes.io/not-ready:NoSchedule");
    }
  }

  private List<String> taints(String node) {
    List<Taint> t = admin.nodes().withName(node).get().getSpec().getTaints();
    return t.stream().map(x -> x.getKey() + ":" + x.getEffect()).toList();
  }

  @Test
  void eventsAreRecordedAndAggregatedButNotAboutAnotherNode() {
    Pod pod = cluster.pod("evented", nodeA, Map.of());
    EventRecorder own = new EventRecorder(kube, nodeA, Clock.systemUTC());
    own.thresholdMet("memory");
    own.thresholdMet("memory");
    own.podEvicted(decision(pod, 1, EvictionMethod.DELETE));
    new EventRecorder(kube, nodeB, Clock.systemUTC()).thresholdMet("memory");

    var nodeEvents = events("default", nodeA);
    assertThat(nodeEvents)
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getReason()).isEqualTo(EventRecorder.THRESHOLD_MET);
              assertThat(e.getCount()).isEqualTo(2);
            });
    assertThat(events(cluster.namespace(), "evented"))
        .singleElement()
        .satisfies(e -> assertThat(e.getReason()).isEqualTo(EventRecorder.EVICTED));
    assertThat(events("default", nodeB)).isEmpty();
  }

  private List<io.fabric8.kubernetes.api.model.Event> events(String ns, String about) {
    return admin.v1().events().inNamespace(ns).list().getItems().stream()
        .filter(e -> about.equals(e.getInvolvedObject().getName()))
        .toList();
  }

  @Test
  void podsOfTheOwnNodeAreDeletedAndEvictedThoseOfAnotherNodeAreNot() {
    var retry = TestBed.SETTINGS.retry();
    var deleter = new ApiDeleteEvictor(kube, retry, Clock.systemUTC());
    var evictor = new ApiEvictionEvictor(kube, retry);
    Pod ownDelete = cluster.pod("own-delete", nodeA, Map.of());
    Pod ownEvict = cluster.pod("own-evict", nodeA, Map.of());
    Pod otherDelete = cluster.pod("other-delete", nodeB, Map.of());
    Pod otherEvict = cluster.pod("other-evict", nodeB, Map.of());

    assertThat(deleter.evict(decision(ownDelete, 30, EvictionMethod.DELETE)))
        .isEqualTo(EvictionOutcome.EVICTED);
    assertThat(evictor.evict(decision(ownEvict, 30, EvictionMethod.EVICT)))
        .isEqualTo(EvictionOutcome.EVICTED);
    // the policy (delete, pods/status) and the webhook (eviction) refuse another node's pods
    assertThat(deleter.evict(decision(otherDelete, 30, EvictionMethod.DELETE)))
        .isEqualTo(EvictionOutcome.FAILED);
    assertThat(evictor.attempt(decision(otherEvict, 30, EvictionMethod.EVICT)))
        .satisfies(r -> assertThat(r.outcome()).isEqualTo(EvictionOutcome.FAILED))
        .satisfies(r -> assertThat(r.detail()).contains("403"));

    // no kubelet: the own node's pods stay Terminating, the DisruptionTarget condition set
    Pod deleted = cluster.get("own-delete");
    assertThat(deleted.getMetadata().getDeletionTimestamp()).isNotNull();
    assertThat(deleted.getStatus().getConditions())
        .anyMatch(c -> c.getType().equals(ApiDeleteEvictor.CONDITION));
    assertThat(cluster.get("own-evict").getMetadata().getDeletionTimestamp()).isNotNull();
    for (String name : List.of("other-delete", "other-evict")) {
      Pod p = cluster.get(name);
      assertThat(p.getMetadata().getDeletionTimestamp()).as(name).isNull();
      assertThat(p.getStatus().getConditions())
          .noneMatch(c -> c.getType().equals(ApiDeleteEvictor.CONDITION));
    }
  }

  @Test
  void aTokenThatNamesNoNodeMayNotDeleteEvenOnTheAgentsNode() {
    Pod pod = cluster.pod("unbound-target", nodeA, Map.of());
    try (KubernetesClient unbound = bed.as(cluster.evictdToken(null))) {
      var deleter =
          new ApiDeleteEvictor(
              new KubeApi(unbound, Duration.ofSeconds(10)),
              TestBed.SETTINGS.retry(),
              Clock.systemUTC());
      assertThat(deleter.evict(decision(pod, 30, EvictionMethod.DELETE)))
          .isEqualTo(EvictionOutcome.FAILED);
    }
    assertThat(cluster.get("unbound-target").getMetadata().getDeletionTimestamp()).isNull();
  }

  @Test
  void aDisruptionBudgetsRefusalIs429AndTheEvictorReportsIt() {
    Map<String, String> app = Map.of("app", "guarded");
    Pod pod = cluster.pod("guarded", nodeA, app);
    bed.script("set-running.sh", cluster.namespace() + "/guarded");
    admin
        .policy()
        .v1()
        .podDisruptionBudget()
        .inNamespace(cluster.namespace())
        .resource(
            new PodDisruptionBudgetBuilder()
                .withNewMetadata()
                .withName("guarded")
                .endMetadata()
                .withNewSpec()
                .withNewMinAvailable(1)
                .withNewSelector()
                .withMatchLabels(app)
                .endSelector()
                .endSpec()
                .build())
        .create();
    String pdb = cluster.namespace() + "/guarded";
    bed.script("pdb-status.sh", pdb, "1", "1", "0");
    var evictor = new ApiEvictionEvictor(kube, TestBed.SETTINGS.retry());

    var refused = evictor.attempt(decision(pod, 30, EvictionMethod.EVICT));
    assertThat(refused.outcome()).isEqualTo(EvictionOutcome.PDB_BLOCKED);
    assertThat(refused.detail()).contains("disruption budget guarded");
    assertThat(cluster.get("guarded").getMetadata().getDeletionTimestamp()).isNull();

    // once the budget allows one disruption, the same eviction goes through
    bed.script("pdb-status.sh", pdb, "2", "1", "1");
    assertThat(evictor.evict(decision(pod, 30, EvictionMethod.EVICT)))
        .isEqualTo(EvictionOutcome.EVICTED);
    assertThat(cluster.get("guarded").getMetadata().getDeletionTimestamp()).isNotNull();
  }
}
