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
import io.fabric8.kubernetes.api.model.DeleteOptions;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ApiDeleteEvictorTest {
  private static final Clock CLOCK =
      Clock.fixed(Instant.parse("2024-05-01T12:00:00.250Z"), ZoneOffset.UTC);
  private static final RetryPolicy FAST =
      new RetryPolicy(3, Duration.ofMillis(10), Duration.ofMillis(40));
  private static final String POD = "/api/v1/namespaces/ns/pods/web";

  private FakeKubeApiServer api;
  private KubernetesClient client;
  private ApiDeleteEvictor evictor;

  @BeforeEach
  void setUp() {
    api = FakeKubeApiServer.start();
    client = api.client(KubeSettings.DEFAULTS);
    evictor = new ApiDeleteEvictor(new KubeApi(client, Duration.ofSeconds(10)), FAST, CLOCK);
  }

  @AfterEach
  void tearDown() {
    client.close();
    api.close();
  }

  @Test
  void marksThePodWithDisruptionTargetThenDeletesItWithTheGracePeriod() {
    Pod pod = api.create(pod("ns", "web", "node-a"));
    var d = decision(pod, 30, EvictionMethod.DELETE);

    assertThat(evictor.evict(d)).isEqualTo(EvictionOutcome.EVICTED);

    var patches = api.requests("PATCH", POD + "/status");
    assertThat(patches)
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.contentType()).startsWith("application/strategic-merge-patch+json");
              assertThat(r.body()).contains("\"uid\":\"" + pod.getMetadata().getUid() + "\"");
            });
    var deletes = api.requests("DELETE", POD);
    assertThat(deletes).hasSize(1);
    DeleteOptions options =
        client.getKubernetesSerialization().unmarshal(deletes.get(0).body(), DeleteOptions.class);
    assertThat(options.getGracePeriodSeconds()).isEqualTo(30L);
    assertThat(options.getPreconditions().getUid()).isEqualTo(pod.getMetadata().getUid());
    // the condition was on the pod before it was deleted: the order of requests, and the fake's
    // stored state
    assertThat(api.requests())
        .extracting(FakeKubeApiServer.Request::method)
        .containsExactly("PATCH", "DELETE");
    // as on a real API server, a pod bound to a node stays until its kubelet removes it
    Pod going = api.pod("ns", "web").orElseThrow();
    assertThat(going.getMetadata().getDeletionTimestamp()).isNotNull();
    assertThat(going.getMetadata().getDeletionGracePeriodSeconds()).isEqualTo(30L);
    api.kubeletRemoves("ns", "web");
    assertThat(api.pod("ns", "web")).isEmpty();
  }

  @Test
  void aStatusPatchRefusedWith422MeansThePodWasReplacedAndNothingIsDeleted() {
    api.create(pod("ns", "web", "node-a"));
    var d = decision(new PodRef("ns", "web", "uid-of-the-old-pod"), 30, EvictionMethod.DELETE);

    assertThat(evictor.evict(d)).isEqualTo(EvictionOutcome.NOT_FOUND);

    assertThat(api.requests("PATCH", POD + "/status")).hasSize(1);
    assertThat(api.requests("DELETE", POD)).isEmpty();
  }

  @Test
  void aThrottledDeleteIsRetriedAfterItsRetryAfter() {
    Pod pod = api.create(pod("ns", "web", "node-a"));
    api.throttle("DELETE", POD, 1, 1);
    long t0 = System.nanoTime();

    assertThat(evictor.evict(decision(pod, 30, EvictionMethod.DELETE)))
        .isEqualTo(EvictionOutcome.EVICTED);

    assertThat(api.requests("DELETE", POD)).hasSize(2);
    // the server's Retry-After (1 s), not the policy's 10 ms backoff
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThan(Duration.ofMillis(900));
  }

  @Test
  void aRetryAfterLongerThanTheBoundIsNotWaitedFor() {
    Pod pod = api.create(pod("ns", "web", "node-a"));
    api.throttle("DELETE", POD, 60, 1);
    long t0 = System.nanoTime();

    assertThat(evictor.evict(decision(pod, 30, EvictionMethod.DELETE)))
        .isEqualTo(EvictionOutcome.FAILED);

    assertThat(api.requests("DELETE", POD)).hasSize(1);
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
  }

  @Test
  void aDeleteAnsweredAfterTheTimeoutIsUnknownNotFailedAndIsNotRepeated() {
    Pod pod = api.create(pod("ns", "web", "node-a"));
    api.answerLate("DELETE", POD, Duration.ofSeconds(3), 1);
    var impatient = new ApiDeleteEvictor(new KubeApi(client, Duration.ofMillis(500)), FAST, CLOCK);

    assertThat(impatient.evict(decision(pod, 30, EvictionMethod.DELETE)))
        .isEqualTo(EvictionOutcome.UNKNOWN);

    // one delete (a request that got no answer is not sent again), then one GET to find out
    assertThat(api.requests("DELETE", POD)).hasSize(1);
    assertThat(api.requests("GET", POD)).hasSize(1);
    // the server did carry it out
    assertThat(
            FakeKubeApiServer.await(
                () ->
                    api.pod("ns", "web").orElseThrow().getMetadata().getDeletionTimestamp() != null,
                Duration.ofSeconds(10)))
        .isTrue();
  }

  @Test
  void theConditionCarriesReasonMessageAndTime() {
    Pod pod = api.create(pod("ns", "web", "node-a"));
    // a pod the delete will not reach: its condition stays visible
    api.fail("DELETE", POD, 403, 1);
    var d = decision(pod, 30, EvictionMethod.DELETE);

    assertThat(evictor.evict(d)).isEqualTo(EvictionOutcome.FAILED);

    PodCondition c =
        api.pod("ns", "web").orElseThrow().getStatus().getConditions().stream()
            .filter(x -> x.getType().equals("DisruptionTarget"))
            .findFirst()
            .orElseThrow();
    assertThat(c.getStatus()).isEqualTo("True");
    assertThat(c.getReason()).isEqualTo("TerminationByEvictd");
    assertThat(c.getMessage()).isEqualTo(d.message());
    assertThat(c.getLastTransitionTime()).isEqualTo("2024-05-01T12:00:00Z");
    // a 403 is not retried
    assertThat(api.requests("DELETE", POD)).hasSize(1);
  }

  @Test
  void existingConditionsAreKept() {
    Pod p = pod("ns", "web", "node-a");
    p.getStatus()
        .getConditions()
        .add(new PodCondition(null, null, null, null, null, "True", "Ready"));
    Pod pod = api.create(p);
    api.fail("DELETE", POD, 403, 1);

    evictor.evict(decision(pod, 30, EvictionMethod.DELETE));

    assertThat(api.pod("ns", "web").orElseThrow().getStatus().getConditions())
        .extracting(PodCondition::getType)
        .containsExactlyInAnyOrder("Ready", "DisruptionTarget");
  }

  @Test
  void aGracePeriodOfZeroIsSentAsOneSecondNotAsForceDeletion() {
    Pod pod = api.create(pod("ns", "web", "node-a"));
    assertThat(evictor.evict(decision(pod, 0, EvictionMethod.DELETE)))
        .isEqualTo(EvictionOutcome.EVICTED);
    DeleteOptions options =
        client
            .getKubernetesSerialization()
            .unmarshal(api.requests("DELETE", POD).get(0).body(), DeleteOptions.class);
    assertThat(options.getGracePeriodSeconds()).isEqualTo(1L);
  }

  @Test
  void aPodAlreadyGoneIsNotFoundAfterOneRequest() {
    var d = decision(new PodRef("ns", "web", "uid-ns-web"), 30, EvictionMethod.DELETE);
    assertThat(evictor.evict(d)).isEqualTo(EvictionOutcome.NOT_FOUND);
    assertThat(api.requests()).hasSize(1);
  }

  @Test
  void aNewPodUnderTheSameNameIsNotTouched() {
    Pod recreated = api.create(pod("ns", "web", "node-a"));
    var d = decision(new PodRef("ns", "web", "uid-of-the-old-pod"), 30, EvictionMethod.DELETE);

    assertThat(evictor.evict(d)).isEqualTo(EvictionOutcome.NOT_FOUND);

    Pod still = api.pod("ns", "web").orElseThrow();
    assertThat(still.getMetadata().getUid()).isEqualTo(recreated.getMetadata().getUid());
    assertThat(still.getStatus().getConditions())
        .noneMatch(c -> c.getType().equals("DisruptionTarget"));
  }

  @Test
  void serverErrorsAreRetriedAndThenSucceed() {
    Pod pod = api.create(pod("ns", "web", "node-a"));
    api.fail("DELETE", POD, 500, 2);
    assertThat(evictor.evict(decision(pod, 30, EvictionMethod.DELETE)))
        .isEqualTo(EvictionOutcome.EVICTED);
    assertThat(api.requests("DELETE", POD)).hasSize(3);
  }

  @Test
  void persistentServerErrorsAreFailedAfterTheBoundedRetries() {
    Pod pod = api.create(pod("ns", "web", "node-a"));
    api.fail("PATCH", POD + "/status", 500, 100);
    api.fail("DELETE", POD, 503, 100);
    long t0 = System.nanoTime();

    assertThat(evictor.evict(decision(pod, 30, EvictionMethod.DELETE)))
        .isEqualTo(EvictionOutcome.FAILED);

    assertThat(api.requests("PATCH", POD + "/status")).hasSize(3);
    assertThat(api.requests("DELETE", POD)).hasSize(3);
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
    assertThat(api.pod("ns", "web")).isPresent();
  }

  @Test
  void aSlowApiServerIsUnknownWithinThreeRequestTimeouts() {
    Pod pod = api.create(pod("ns", "web", "node-a"));
    api.delay("PATCH", POD + "/status", Duration.ofSeconds(30), 100);
    api.delay("DELETE", POD, Duration.ofSeconds(30), 100);
    api.delay("GET", POD, Duration.ofSeconds(30), 100);
    var slow =
        new ApiDeleteEvictor(
            new KubeApi(client, Duration.ofMillis(200)),
            new RetryPolicy(2, Duration.ofMillis(10), Duration.ofMillis(10)),
            CLOCK);
    long t0 = System.nanoTime();

    // no answer to the delete: the server may have carried it out, so it is not FAILED
    assertThat(slow.evict(decision(pod, 30, EvictionMethod.DELETE)))
        .isEqualTo(EvictionOutcome.UNKNOWN);

    // one patch, one delete, one GET of 200 ms each, none repeated: far less than one answer
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(15));
    assertThat(api.requests("PATCH", POD + "/status")).hasSize(1);
    assertThat(api.requests("DELETE", POD)).hasSize(1);
    assertThat(api.requests("GET", POD)).hasSize(1);
  }

  @Test
  void anUnreachableApiServerIsFailed() throws Exception {
    try (dev.evictd.testing.ClosedPort closed = dev.evictd.testing.ClosedPort.bind();
        KubernetesClient down =
            dev.evictd.kube.KubeClients.create(
                new io.fabric8.kubernetes.client.ConfigBuilder(
                        io.fabric8.kubernetes.client.Config.empty())
                    .withMasterUrl("http://127.0.0.1:" + closed.port())
                    .build(),
                KubeSettings.DEFAULTS)) {
      int port = closed.port();
      var unreachable = new ApiDeleteEvictor(new KubeApi(down, Duration.ofSeconds(5)), FAST, CLOCK);
      var d = decision(new PodRef("ns", "web", "u"), 30, EvictionMethod.DELETE);
      // nothing was ever sent: FAILED, not UNKNOWN, and the error names where it tried to connect
      assertThat(unreachable.evict(d)).isEqualTo(EvictionOutcome.FAILED);
      assertThat(new KubeApi(down, Duration.ofSeconds(5)).get("/api/v1/pods").describe())
          .contains("127.0.0.1:" + port);
    }
  }
}
