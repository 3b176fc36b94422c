package dev.evictd.kube;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionPlan;
import dev.evictd.api.FsLayout;
import dev.evictd.api.NodeConditionType;
import dev.evictd.config.KubeletEvictionConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.engine.Planner;
import dev.evictd.engine.PlannerHooks;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.testing.FakeKubeApiServer;
import dev.evictd.testing.FakeStatsProvider;
import dev.evictd.testing.MutableClock;
import dev.evictd.testing.TestPods;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class NodeTaintsTest {
  private static final String NODE = "/api/v1/nodes/node-a";
  private static final Taint KUBELET =
      new TaintBuilder()
          .withKey("node.kubernetes.io/memory-pressure")
          .withEffect("NoSchedule")
          .build();
  private static final Taint OPERATOR =
      new TaintBuilder().withKey("dedicated").withValue("gpu").withEffect("NoSchedule").build();

  private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
  private FakeKubeApiServer api;
  private KubernetesClient client;
  private NodeTaints taints;

  @BeforeEach
  void setUp() {
    api = FakeKubeApiServer.start();
    client = api.client(KubeSettings.DEFAULTS);
    taints = new NodeTaints(new KubeApi(client, Duration.ofSeconds(10)), "node-a", clock);
  }

  @AfterEach
  void tearDown() {
    taints.close();
    client.close();
    api.close();
  }

  private void node(Taint... existing) {
    api.createNode(
        new NodeBuilder()
            .withNewMetadata()
            .withName("node-a")
            .endMetadata()
            .withNewSpec()
            .withTaints(existing.length == 0 ? null : List.of(existing))
            .endSpec()
            .build());
  }

  private List<Taint> taintsNow() {
    Node n = api.node("node-a").orElseThrow();
    return n.getSpec() == null || n.getSpec().getTaints() == null
        ? List.of()
        : n.getSpec().getTaints();
  }

  private List<String> keys() {
    return taintsNow().stream().map(Taint::getKey).toList();
  }

  @Test
  void aConditionPutsItsNoScheduleTaintBesideTheOthersWithAJsonPatchTestingTheVersion() {
    node(KUBELET, OPERATOR);

    assertThat(taints.reconcile(Set.of(NodeConditionType.MemoryPressure))).isTrue();

    assertThat(keys())
        .containsExactly(
            "node.kubernetes.io/memory-pressure", "dedicated", "evictd.dev/memory-pressure");
    Taint ours = taintsNow().get(2);
    assertThat(ours.getEffect()).isEqualTo("NoSchedule");
    assertThat(ours.getTimeAdded()).isEqualTo("2026-01-01T00:00:00Z");
    assertThat(taintsNow().get(1)).isEqualTo(OPERATOR);
    var patch = api.requests("PATCH", NODE);
    assertThat(patch)
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.contentType()).startsWith("application/json-patch+json");
              assertThat(r.body()).contains("\"op\":\"test\"", "/metadata/resourceVersion");
            });
  }

  @Test
  void theSameWishTwiceWritesNothing() {
    node();
    assertThat(taints.reconcile(Set.of(NodeConditionType.DiskPressure))).isTrue();
    assertThat(taints.reconcile(Set.of(NodeConditionType.DiskPressure))).isTrue();

    assertThat(api.requests("PATCH", NODE)).hasSize(1);
    assertThat(keys()).containsExactly("evictd.dev/disk-pressure");
  }

  @Test
  void aClearedConditionRemovesOnlyItsOwnTaint() {
    node(KUBELET);
    taints.reconcile(Set.of(NodeConditionType.MemoryPressure, NodeConditionType.PIDPressure));
    assertThat(keys())
        .containsExactly(
            "node.kubernetes.io/memory-pressure",
            "evictd.dev/memory-pressure",
            "evictd.dev/pid-pressure");

    taints.reconcile(Set.of(NodeConditionType.PIDPressure));

    assertThat(keys())
        .containsExactly("node.kubernetes.io/memory-pressure", "evictd.dev/pid-pressure");
  }

  @Test
  void aTaintAnotherClientAddsMeanwhileIsNotClobbered() {
    node();
    // between evictd's read and its patch, the node-lifecycle controller adds a taint
    api.beforeRequest(
        "PATCH",
        NODE,
        1,
        () -> {
          Node n = api.node("node-a").orElseThrow();
          List<Taint> t =
              new ArrayList<>(
                  n.getSpec().getTaints() == null ? List.of() : n.getSpec().getTaints());
          t.add(
              new TaintBuilder()
                  .withKey("node.kubernetes.io/unreachable")
                  .withEffect("NoExecute")
                  .build());
          n.getSpec().setTaints(t);
          api.updateNode(n);
        });

    assertThat(taints.reconcile(Set.of(NodeConditionType.MemoryPressure))).isTrue();

    // the first patch failed its test (422), the node was read again, and both taints are there
    assertThat(api.requests("PATCH", NODE)).hasSize(2);
    assertThat(keys())
        .containsExactly("node.kubernetes.io/unreachable", "evictd.dev/memory-pressure");
  }

  @Test
  void afterARestartTheNodeIsReconciledWithWhatIsSeenNow() {
    node(
        OPERATOR,
        new TaintBuilder()
            .withKey("evictd.dev/memory-pressure")
            .withEffect("NoSchedule")
            .withTimeAdded("2025-12-31T23:00:00Z")
            .build());

    // a new agent whose first sync sees no pressure
    assertThat(taints.reconcile(Set.of())).isTrue();

    assertThat(taintsNow()).containsExactly(OPERATOR);
  }

  @Test
  void theNodeCarriesTheTaintForExactlyAsLongAsTheConditionAndItsTransitionPeriod()
      throws Exception {
    node();
    try (Planner planner =
        new Planner(
            RuleCompiler.compileDefault(),
            KubeletEvictionConfig.from(
                YamlNode.parse(
                    "k.yaml",
                    ("evictionHard: {memory.available: 1Gi}\n"
                            + "evictionPressureTransitionPeriod: 1m\n")
                        .getBytes(StandardCharsets.UTF_8)),
                "node-a",
                FsLayout.SHARED))) {
      var pods = List.of(TestPods.pod("default", "a", "node-a"));
      // what the agent does after every sync: the Node follows the plan's conditions
      java.util.function.Function<Long, List<String>> sync =
          availableMi -> {
            EvictionPlan plan =
                planner.sync(
                    clock.instant(),
                    FakeStatsProvider.memory(availableMi, 7000, "a", 100),
                    pods,
                    PlannerHooks.recordOnly(null));
            taints.reconcile(Set.copyOf(plan.conditions()));
            return keys();
          };

      assertThat(sync.apply(4000L)).isEmpty();
      clock.advance(Duration.ofSeconds(10));
      assertThat(sync.apply(500L)).containsExactly("evictd.dev/memory-pressure");
      clock.advance(Duration.ofSeconds(10));
      // relieved, but within the transition period: the condition and the taint stay
      assertThat(sync.apply(4000L)).containsExactly("evictd.dev/memory-pressure");
      clock.advance(Duration.ofSeconds(49));
      assertThat(sync.apply(4000L)).containsExactly("evictd.dev/memory-pressure");
      clock.advance(Duration.ofSeconds(1));
      // one minute after it was last observed: both go
      assertThat(sync.apply(4000L)).isEmpty();
    }
  }

  @Test
  void wishesRunOnTheTaintsThreadAndTheLastOneWins() {
    node();
    taints.want(Set.of(NodeConditionType.MemoryPressure));
    taints.want(Set.of(NodeConditionType.MemoryPressure, NodeConditionType.DiskPressure));

    assertThat(
            FakeKubeApiServer.await(
                () ->
                    keys()
                        .equals(List.of("evictd.dev/memory-pressure", "evictd.dev/disk-pressure")),
                Duration.ofSeconds(10)))
        .isTrue();
  }

  @Test
  void aTaintRemovedByHandComesBackAtTheNextCheckWhileTheConditionHolds() {
    node();
    taints.want(Set.of(NodeConditionType.MemoryPressure));
    assertThat(
            FakeKubeApiServer.await(
                () -> taints.isApplied(Set.of(NodeConditionType.MemoryPressure)),
                Duration.ofSeconds(10)))
        .isTrue();
    assertThat(keys()).containsExactly("evictd.dev/memory-pressure");
    Node n = api.node("node-a").orElseThrow();
    n.getSpec().setTaints(List.of());
    api.updateNode(n);

    // the same wish within the recheck period writes nothing
    assertThat(FakeKubeApiServer.await(() -> keys().isEmpty(), Duration.ofSeconds(10))).isTrue();
    int gets = api.requests("GET", NODE).size();
    taints.want(Set.of(NodeConditionType.MemoryPressure));
    clock.advance(NodeTaints.RECHECK);
    taints.want(Set.of(NodeConditionType.MemoryPressure));

    assertThat(
            FakeKubeApiServer.await(
                () -> keys().equals(List.of("evictd.dev/memory-pressure")), Duration.ofSeconds(10)))
        .isTrue();
    assertThat(api.requests("GET", NODE)).hasSize(gets + 1);
  }
}
