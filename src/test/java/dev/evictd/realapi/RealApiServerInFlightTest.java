package dev.evictd.realapi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.agent.AgentMetrics;
import dev.evictd.agent.EvictionManager;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.FsLayout;
import dev.evictd.config.KubeletEvictionConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.engine.Planner;
import dev.evictd.executor.ApiDeleteEvictor;
import dev.evictd.executor.ApiEvictionEvictor;
import dev.evictd.executor.DispatchingPodEvictor;
import dev.evictd.executor.DryRunEvictor;
import dev.evictd.kube.EventRecorder;
import dev.evictd.kube.KubeApi;
import dev.evictd.kube.NodePodInformer;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.stats.Summary;
import dev.evictd.testing.FakeKubeApiServer;
import dev.evictd.testing.FakeStatsProvider;
import dev.evictd.testing.MutableClock;
import dev.evictd.testing.TestBed;
import dev.evictd.testing.TestBedCluster;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The agent's eviction loop against a real kube-apiserver 1.32 (skipped where the test bed is not
 * running): the pods from the real informer, the statistics from a fake provider, the delete
 * through the real API. A deleted pod keeps its deletionTimestamp (no kubelet removes it): the next
 * syncs see it in flight and send nothing for it until the kubelet's podCleanupTimeout.
 */
@Tag("apiserver")
class RealApiServerInFlightTest {
  private static final String HARD = "evictionHard: {memory.available: 1Gi}\n";

  @Test
  void aTerminatingPodIsInFlightAndNotEvictedAgain() throws Exception {
    TestBed bed = TestBed.require();
    MutableClock clock = new MutableClock(Instant.now());
    FakeStatsProvider stats = new FakeStatsProvider();
    try (KubernetesClient admin = bed.admin();
        TestBedCluster cluster = new TestBedCluster(bed, admin, "evictd-if")) {
      String node = cluster.node(cluster.namespace() + "-node");
      List<Pod> pods = new ArrayList<>();
      for (String name : List.of("a", "b", "c")) {
        pods.add(cluster.pod(name, node, Map.of()));
      }
      stats.set(summary(pods, 500));
      try (NodePodInformer informer = new NodePodInformer(admin, node, clock);
          Planner planner = planner(node);
          EvictionManager m = manager(admin, planner, informer, stats, clock, node)) {
        assertThat(informer.start(Duration.ofSeconds(20))).isTrue();

        assertThat(evicted(m.syncOnce("test"))).containsExactly("a:EVICTED");
        assertThat(
                FakeKubeApiServer.await(
                    () ->
                        informer.activePods().stream()
                            .anyMatch(
                                p ->
                                    p.getMetadata().getName().equals("a")
                                        && p.getMetadata().getDeletionTimestamp() != null),
                    Duration.ofSeconds(20)))
            .isTrue();
        String deletionTimestamp = cluster.get("a").getMetadata().getDeletionTimestamp();
        // pressure stays; a is on its way out: nothing is sent for 20 s of syncs
        for (int i = 0; i < 2; i++) {
          clock.advance(Duration.ofSeconds(10));
          assertThat(evicted(m.syncOnce("test"))).isEmpty();
        }
        assertThat(cluster.get("a").getMetadata().getDeletionTimestamp())
            .isEqualTo(deletionTimestamp);
        assertThat(cluster.get("b").getMetadata().getDeletionTimestamp()).isNull();
      }
    }
  }

  private static List<String> evicted(EvictionManager.SyncResult r) {
    return r.attempts().stream().map(a -> a.pod().name() + ":" + a.outcome()).toList();
  }

  /** The pods using 900, 500 and 100 MiB (ranked a, b, c), the node {@code availableMi} free. */
  private static Summary summary(List<Pod> pods, long availableMi) {
    long mi = 1024 * 1024;
    long[] usage = {900, 500, 100};
    List<Summary.PodStats> stats = new ArrayList<>();
    for (int i = 0; i < pods.size(); i++) {
      var meta = pods.get(i).getMetadata();
      stats.add(
          new Summary.PodStats(
              new Summary.PodReference(meta.getName(), meta.getNamespace(), meta.getUid()),
              List.of(),
              new Summary.MemoryStats(null, null, null, usage[i] * mi, null),
              List.of(),
              null,
              null));
    }
    return new Summary(FakeStatsProvider.memory(availableMi, 7000).node(), stats);
  }

  private static Planner planner(String node) {
    return new Planner(
        RuleCompiler.compileDefault(),
        KubeletEvictionConfig.from(
            YamlNode.parse("k.yaml", HARD.getBytes(StandardCharsets.UTF_8)),
            node,
            FsLayout.SHARED));
  }

  private static EvictionManager manager(
      KubernetesClient client,
      Planner planner,
      NodePodInformer informer,
      FakeStatsProvider stats,
      MutableClock clock,
      String node) {
    KubeApi kube = new KubeApi(client, Duration.ofSeconds(10));
    var retry = TestBed.SETTINGS.retry();
    var evictor =
        new DispatchingPodEvictor(
            EvictionMethod.DELETE,
            new ApiDeleteEvictor(kube, retry, clock),
            new ApiEvictionEvictor(kube, retry),
            null,
            new DryRunEvictor());
    return new EvictionManager(
        planner,
        stats,
        informer,
        evictor,
        a -> true,
        new EventRecorder(kube, node, clock),
        new AgentMetrics(clock),
        clock,
        new EvictionManager.Settings(
            Duration.ofSeconds(10), Duration.ofSeconds(30), EvictionMethod.DELETE, false, false));
  }
}
