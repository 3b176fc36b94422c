package dev.evictd.executor;

import static dev.evictd.testing.TestPods.decision;
import static dev.evictd.testing.TestPods.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.api.PodRef;
import dev.evictd.kube.KubeApi;
import dev.evictd.kube.KubeSettings;
import dev.evictd.kube.RetryPolicy;
import dev.evictd.testing.FakeKubeApiServer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.Eviction;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ApiEvictionEvictorTest {
  private static final RetryPolicy FAST =
      new RetryPolicy(3, Duration.ofMillis(10), Duration.ofMillis(40));
  private static final String EVICTION = "/api/v1/namespaces/ns/pods/web/eviction";

  private FakeKubeApiServer api;
  private KubernetesClient client;
  private ApiEvictionEvictor evictor;

  @BeforeEach
  void setUp() {
    api = FakeKubeApiServer.start();
    client = api.client(KubeSettings.DEFAULTS);
    evictor = new ApiEvictionEvictor(new KubeApi(client, Duration.ofSeconds(10)), FAST);
  }

  @AfterEach
  void tearDown() {
    client.close();
    api.close();
  }

  @Test
  void postsAPolicyV1EvictionWithTheGracePeriodAndUid() {
    Pod pod = api.create(pod("ns", "web", "node-a"));

    assertThat(evictor.evict(decision(pod, 25, EvictionMethod.EVICT)))
        .isEqualTo(EvictionOutcome.EVICTED);

    var posts = api.requests("POST", EVICTION);
    assertThat(posts).hasSize(1);
    Eviction e = client.getKubernetesSerialization().unmarshal(posts.get(0).body(), Eviction.class);
    assertThat(e.getApiVersion()).isEqualTo("policy/v1");
    assertThat(e.getKind()).isEqualTo("Eviction");
    assertThat(e.getMetadata().getName()).isEqualTo("web");
    assertThat(e.getMetadata().getNamespace()).isEqualTo("ns");
    assertThat(e.getDeleteOptions().getGracePeriodSeconds()).isEqualTo(25L);
    assertThat(e.getDeleteOptions().getPreconditions().getUid())
        .isEqualTo(pod.getMetadata().getUid());
    // the server marks the pod and deletes it gracefully: it stays until its kubelet removes it
    Pod going = api.pod("ns", "web").orElseThrow();
    assertThat(going.getMetadata().getDeletionTimestamp()).isNotNull();
    assertThat(going.getMetadata().getDeletionGracePeriodSeconds()).isEqualTo(25L);
    assertThat(going.getStatus().getConditions())
        .anySatisfy(
            c -> {
              assertThat(c.getType()).isEqualTo("DisruptionTarget");
              assertThat(c.getReason()).isEqualTo("EvictionByEvictionAPI");
            });
  }

  @Test
  void theBudgetsOwnMessageIsTheAttemptsDetail() {
    Pod pod = api.create(pod("ns", "web", "node-a"));
    api.blockEvictions("ns", "web");

    var result = evictor.attempt(decision(pod, 25, EvictionMethod.EVICT));

    assertThat(result.outcome()).isEqualTo(EvictionOutcome.PDB_BLOCKED);
    assertThat(result.detail()).isEqualTo(FakeKubeApiServer.BUDGET_MESSAGE);
  }

  @Test
  void aThrottling429IsNotABudgetRefusalAndIsRetriedAfterItsRetryAfter() {
    Pod pod = api.create(pod("ns", "web", "node-a"));
    api.throttle("POST", EVICTION, 1, 1);
    long t0 = System.nanoTime();

    assertThat(evictor.evict(decision(pod, 25, EvictionMethod.EVICT)))
        .isEqualTo(EvictionOutcome.EVICTED);

    assertThat(api.requests("POST", EVICTION)).hasSize(2);
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThan(Duration.ofMillis(900));
  }

  @Test
  void throttlingThatOutlastsTheRetriesIsFailedNotPdbBlocked() {
    Pod pod = api.create(pod("ns", "web", "node-a"));
    api.throttle("POST", EVICTION, 0, 100);

    var result = evictor.attempt(decision(pod, 25, EvictionMethod.EVICT));

    assertThat(result.outcome()).isEqualTo(EvictionOutcome.FAILED);
    assertThat(api.requests("POST", EVICTION)).hasSize(3);
  }

  @Test
  void anEvictionAnsweredAfterTheTimeoutIsUnknownAndIsNotRepeated() {
    Pod pod = api.create(pod("ns", "web", "node-a"));
    api.answerLate("POST", EVICTION, Duration.ofSeconds(3), 1);
    var impatient = new ApiEvictionEvictor(new KubeApi(client, Duration.ofMillis(500)), FAST);

    assertThat(impatient.evict(decision(pod, 25, EvictionMethod.EVICT)))
        .isEqualTo(EvictionOutcome.UNKNOWN);

    assertThat(api.requests("POST", EVICTION)).hasSize(1);
    assertThat(api.requests("GET", "/api/v1/namespaces/ns/pods/web")).hasSize(1);
  }

  @Test
  void aDisruptionBudgetRefusalIsPdbBlockedAtOnceAfterOneRequest() {
    Pod pod = api.create(pod("ns", "web", "node-a"));
    api.blockEvictions("ns", "web");
    long t0 = System.nanoTime();

    assertThat(evictor.evict(decision(pod, 25, EvictionMethod.EVICT)))
        .isEqualTo(EvictionOutcome.PDB_BLOCKED);

    // the client would retry a 429 for about 20 s; evictd asks once
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
    assertThat(api.requests()).hasSize(1);
    assertThat(api.pod("ns", "web")).isPresent();
  }

  @Test
  void aPodAlreadyGoneIsNotFound() {
    var d = decision(new PodRef("ns", "web", "uid-ns-web"), 25, EvictionMethod.EVICT);
    assertThat(evictor.evict(d)).isEqualTo(EvictionOutcome.NOT_FOUND);
    assertThat(api.requests()).hasSize(1);
  }

  @Test
  void aNewPodUnderTheSameNameIsNotEvicted() {
    api.create(pod("ns", "web", "node-a"));
    var d = decision(new PodRef("ns", "web", "old"), 25, EvictionMethod.EVICT);
    assertThat(evictor.evict(d)).isEqualTo(EvictionOutcome.NOT_FOUND);
    assertThat(api.pod("ns", "web")).isPresent();
  }

  @Test
  void serverErrorsAreRetriedThenFailed() {
    Pod pod = api.create(pod("ns", "web", "node-a"));
    api.fail("POST", EVICTION, 500, 100);
    assertThat(evictor.evict(decision(pod, 25, EvictionMethod.EVICT)))
        .isEqualTo(EvictionOutcome.FAILED);
    assertThat(api.requests("POST", EVICTION)).hasSize(3);
  }

  @Test
  void aServerErrorThenSuccessIsEvicted() {
    Pod pod = api.create(pod("ns", "web", "node-a"));
    api.fail("POST", EVICTION, 503, 1);
    assertThat(evictor.evict(decision(pod, 25, EvictionMethod.EVICT)))
        .isEqualTo(EvictionOutcome.EVICTED);
    assertThat(api.requests("POST", EVICTION)).hasSize(2);
  }

  @Test
  void aForbiddenEvictionIsFailedWithoutRetry() {
    Pod pod = api.create(pod("ns", "web", "node-a"));
    api.fail("POST", EVICTION, 403, 1);
    assertThat(evictor.evict(decision(pod, 25, EvictionMethod.EVICT)))
        .isEqualTo(EvictionOutcome.FAILED);
    assertThat(api.requests("POST", EVICTION)).hasSize(1);
  }
}
