package dev.evictd.executor;

import static dev.evictd.testing.TestPods.decision;
import static dev.evictd.testing.TestPods.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.api.PodRef;
import dev.evictd.kube.EventRecorder;
import dev.evictd.kube.KubeApi;
import dev.evictd.kube.KubeSettings;
import dev.evictd.kube.RetryPolicy;
import dev.evictd.testing.FakeKubeApiServer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Whatever reaches the executor, its writes address exactly one pod: paths of escaped segments, a
 * uid precondition on every pod write, and no write at all without a uid.
 */
class ApiWritesTest {
  private static final RetryPolicy FAST =
      new RetryPolicy(2, Duration.ofMillis(10), Duration.ofMillis(20));
  static final String INJECTED = "big/../../../kube-system/pods/other?dryRun=All";

  private FakeKubeApiServer api;
  private KubernetesClient client;
  private KubeApi kube;

  @BeforeEach
  void setUp() {
    api = FakeKubeApiServer.start();
    client = api.client(KubeSettings.DEFAULTS);
    kube = new KubeApi(client, Duration.ofSeconds(10));
  }

  @AfterEach
  void tearDown() {
    client.close();
    api.close();
  }

  @Test
  void aPodWithoutAUidIsNeverWrittenTo() {
    Pod pod = api.create(pod("ns", "web", "node-a"));
    PodRef noUid = new PodRef("ns", "web", "ns/web");
    assertThat(
            new ApiDeleteEvictor(kube, FAST, Clock.systemUTC())
                .evict(decision(noUid, 1, EvictionMethod.DELETE)))
        .isEqualTo(EvictionOutcome.FAILED);
    assertThat(new ApiEvictionEvictor(kube, FAST).evict(decision(noUid, 1, EvictionMethod.EVICT)))
        .isEqualTo(EvictionOutcome.FAILED);
    assertThat(api.requests()).isEmpty();
    assertThat(api.pod("ns", "web")).isPresent();
    assertThat(pod.getMetadata().getUid()).isNotEmpty();
  }

  @Test
  void aNameThatWouldRewriteThePathStaysOneSegment() {
    Pod other = api.create(pod("kube-system", "other", "node-b"));
    PodRef hostile = new PodRef("ns", INJECTED, other.getMetadata().getUid());
    assertThat(
            new ApiDeleteEvictor(kube, FAST, Clock.systemUTC())
                .evict(decision(hostile, 1, EvictionMethod.DELETE)))
        .isEqualTo(EvictionOutcome.NOT_FOUND);
    assertThat(new ApiEvictionEvictor(kube, FAST).evict(decision(hostile, 1, EvictionMethod.EVICT)))
        .isEqualTo(EvictionOutcome.NOT_FOUND);
    new EventRecorder(kube, "node-a", Clock.systemUTC())
        .podEvicted(decision(new PodRef("kube-system/../ns", "web", "u-1"), 1, null));
    String escaped = "big%2F..%2F..%2F..%2Fkube-system%2Fpods%2Fother%3FdryRun%3DAll";
    assertThat(api.requests())
        .extracting(r -> r.method() + " " + r.path())
        .containsExactly(
            "PATCH /api/v1/namespaces/ns/pods/" + escaped + "/status",
            "POST /api/v1/namespaces/ns/pods/" + escaped + "/eviction",
            "POST /api/v1/namespaces/kube-system%2F..%2Fns/events");
    assertThat(api.pod("kube-system", "other")).isPresent();
  }
}
