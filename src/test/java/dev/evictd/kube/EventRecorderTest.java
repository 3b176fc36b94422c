package dev.evictd.kube;

import static dev.evictd.testing.TestPods.decision;
import static dev.evictd.testing.TestPods.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionMethod;
import dev.evictd.api.Signal;
import dev.evictd.testing.FakeKubeApiServer;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class EventRecorderTest {
  private static final Clock CLOCK =
      Clock.fixed(Instant.parse("2024-05-01T12:00:00.5Z"), ZoneOffset.UTC);

  private FakeKubeApiServer api;
  private KubernetesClient client;
  private EventRecorder recorder;

  @BeforeEach
  void setUp() {
    api = FakeKubeApiServer.start();
    client = api.client(KubeSettings.DEFAULTS);
    recorder = new EventRecorder(new KubeApi(client, Duration.ofSeconds(10)), "node-a", CLOCK);
  }

  @AfterEach
  void tearDown() {
    client.close();
    api.close();
  }

  @Test
  void recordsEvictedOnThePodWithTheMessageAndAnnotations() {
    Pod pod = api.create(pod("ns", "web", "node-a"));
    var d = decision(pod, 1, EvictionMethod.DELETE);

    recorder.podEvicted(d);

    assertThat(api.events("ns"))
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getReason()).isEqualTo("Evicted");
              assertThat(e.getType()).isEqualTo("Warning");
              assertThat(e.getMessage()).isEqualTo(d.message());
              assertThat(e.getMetadata().getAnnotations())
                  .containsEntry("offending_containers", "main")
                  .containsEntry("offending_containers_usage", "600Mi")
                  .containsEntry("starved_resource", "memory")
                  .hasSize(3);
              assertThat(e.getInvolvedObject().getKind()).isEqualTo("Pod");
              assertThat(e.getInvolvedObject().getNamespace()).isEqualTo("ns");
              assertThat(e.getInvolvedObject().getName()).isEqualTo("web");
              assertThat(e.getInvolvedObject().getUid()).isEqualTo(pod.getMetadata().getUid());
              assertThat(e.getSource().getComponent()).isEqualTo("evictd");
              assertThat(e.getSource().getHost()).isEqualTo("node-a");
              assertThat(e.getFirstTimestamp()).isEqualTo("2024-05-01T12:00:00Z");
              assertThat(e.getCount()).isEqualTo(1);
            });
    assertThat(api.requests("POST", "/api/v1/namespaces/ns/events")).hasSize(1);
  }

  @Test
  void recordsEvictionThresholdMetOnTheNode() {
    recorder.thresholdMet(Signal.NODEFS_INODES_FREE.resource());
    recorder.thresholdMet(Signal.MEMORY_AVAILABLE.resource());

    assertThat(api.events("default"))
        .extracting(Event::getMessage)
        .containsExactlyInAnyOrder("Attempting to reclaim inodes", "Attempting to reclaim memory");
    assertThat(api.events("default"))
        .allSatisfy(
            e -> {
              assertThat(e.getReason()).isEqualTo("EvictionThresholdMet");
              assertThat(e.getType()).isEqualTo("Warning");
              assertThat(e.getInvolvedObject().getKind()).isEqualTo("Node");
              assertThat(e.getInvolvedObject().getName()).isEqualTo("node-a");
              assertThat(e.getMetadata().getAnnotations()).isNullOrEmpty();
            });
  }

  @Test
  void namesTheResourceOfEverySignal() {
    recorder.thresholdMet(Signal.NODEFS_AVAILABLE.resource());
    recorder.thresholdMet(Signal.PID_AVAILABLE.resource());
    assertThat(api.events("default"))
        .extracting(Event::getMessage)
        .containsExactlyInAnyOrder(
            "Attempting to reclaim ephemeral-storage", "Attempting to reclaim pids");
  }

  @Test
  void aFailedEventIsLoggedNotThrownAndNotRetried() {
    api.fail("POST", "/api/v1/namespaces/ns/events", 500, 1);
    Pod pod = api.create(pod("ns", "web", "node-a"));
    recorder.podEvicted(decision(pod, 1, EvictionMethod.DELETE));
    assertThat(api.events("ns")).isEmpty();
    assertThat(api.requests("POST", "/api/v1/namespaces/ns/events")).hasSize(1);
  }

  @Test
  void tenMinutesOfSustainedPressureAreOneEventPerReasonAndObjectWithItsCount() {
    var clock = new dev.evictd.testing.MutableClock(Instant.parse("2024-05-01T12:00:00Z"));
    var sustained = new EventRecorder(new KubeApi(client, Duration.ofSeconds(10)), "node-a", clock);
    Pod pod = api.create(pod("ns", "web", "node-a"));
    var d = decision(pod, 1, EvictionMethod.DELETE);
    // one acting sync every 10 s for 10 minutes; the same pod's Evicted repeated a few times
    for (int sync = 0; sync < 60; sync++) {
      sustained.thresholdMet("memory");
      if (sync % 20 == 0) {
        sustained.podEvicted(d);
      }
      clock.advance(Duration.ofSeconds(10));
    }

    assertThat(api.events(EventRecorder.NODE_EVENT_NAMESPACE))
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getReason()).isEqualTo("EvictionThresholdMet");
              assertThat(e.getCount()).isEqualTo(60);
              assertThat(e.getFirstTimestamp()).isEqualTo("2024-05-01T12:00:00Z");
              assertThat(e.getLastTimestamp()).isEqualTo("2024-05-01T12:09:50Z");
            });
    assertThat(api.events("ns"))
        .singleElement()
        .satisfies(e -> assertThat(e.getCount()).isEqualTo(3));
    // 2 creates, the rest patches
    assertThat(api.requests("POST", "/api/v1/namespaces/[^/]+/events")).hasSize(2);
    assertThat(api.requests("PATCH", "/api/v1/namespaces/[^/]+/events/[^/]+")).hasSize(61);
  }

  @Test
  void aRepeatAfterTheWindowOrAnotherMessageIsANewEvent() {
    var clock = new dev.evictd.testing.MutableClock(Instant.parse("2024-05-01T12:00:00Z"));
    var r = new EventRecorder(new KubeApi(client, Duration.ofSeconds(10)), "node-a", clock);
    r.thresholdMet("memory");
    r.thresholdMet("ephemeral-storage");
    clock.advance(EventRecorder.AGGREGATION_WINDOW);
    r.thresholdMet("memory");

    assertThat(api.events(EventRecorder.NODE_EVENT_NAMESPACE))
        .extracting(Event::getMessage)
        .containsExactlyInAnyOrder(
            "Attempting to reclaim memory",
            "Attempting to reclaim ephemeral-storage",
            "Attempting to reclaim memory");
  }

  @Test
  void anEventTheServerLetExpireIsCreatedAgain() {
    var clock = new dev.evictd.testing.MutableClock(Instant.parse("2024-05-01T12:00:00Z"));
    var r = new EventRecorder(new KubeApi(client, Duration.ofSeconds(10)), "node-a", clock);
    r.thresholdMet("memory");
    api.fail("PATCH", "/api/v1/namespaces/default/events/.*", 404, 1);
    clock.advance(Duration.ofSeconds(10));
    r.thresholdMet("memory");

    assertThat(api.requests("POST", "/api/v1/namespaces/default/events")).hasSize(2);
  }
}
