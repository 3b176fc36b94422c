package dev.evictd.kube;

import static dev.evictd.testing.FakeKubeApiServer.await;
import static dev.evictd.testing.TestPods.pod;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.spi.ILoggingEvent;
import dev.evictd.testing.FakeKubeApiServer;
import dev.evictd.testing.PodsWithSecrets;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class NodePodInformerTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private FakeKubeApiServer api;
  private KubernetesClient client;
  private NodePodInformer informer;

  @BeforeEach
  void setUp() {
    api = FakeKubeApiServer.start();
    client = api.client(KubeSettings.DEFAULTS);
  }

  @AfterEach
  void tearDown() {
    // server first: see FakeKubeApiServer#close
    api.close();
    if (informer != null) {
      informer.close();
    }
    client.close();
  }

  private static List<String> keys(List<Pod> pods) {
    return pods.stream()
        .map(p -> p.getMetadata().getNamespace() + "/" + p.getMetadata().getName())
        .toList();
  }

  @Test
  void listsOnlyThisNodesActivePodsAndAsksTheServerToSelectByNode() {
    api.create(pod("b", "web", "node-a"));
    api.create(pod("a", "db", "node-a"));
    api.create(pod("a", "other", "node-b"));
    Pod done = pod("a", "job", "node-a");
    done.getStatus().setPhase("Succeeded");
    api.create(done);
    Pod failed = pod("a", "crashed", "node-a");
    failed.getStatus().setPhase("Failed");
    api.create(failed);

    informer = new NodePodInformer(client, "node-a");
    assertThat(informer.start(WAIT)).isTrue();

    // the mock server stamps creation times itself: the order is checked against ORDER (tested on
    // its own below)
    assertThat(keys(informer.activePods())).containsExactlyInAnyOrder("a/db", "b/web");
    assertThat(informer.activePods()).isSortedAccordingTo(NodePodInformer.ORDER);
    assertThat(api.requests("GET", "/api/v1/pods"))
        .isNotEmpty()
        .allSatisfy(r -> assertThat(r.path()).contains("fieldSelector=spec.nodeName%3Dnode-a"));
  }

  @Test
  void followsAddsUpdatesAndDeletes() {
    api.create(pod("ns", "first", "node-a"));
    informer = new NodePodInformer(client, "node-a");
    assertThat(informer.start(WAIT)).isTrue();
    assertThat(keys(informer.activePods())).containsExactly("ns/first");

    api.create(pod("ns", "second", "node-a"));
    api.create(pod("ns", "elsewhere", "node-b"));
    assertThat(await(() -> informer.activePods().size() == 2, WAIT)).isTrue();
    assertThat(keys(informer.activePods())).containsExactly("ns/first", "ns/second");

    Pod finished = api.pod("ns", "first").orElseThrow();
    finished.getStatus().setPhase("Succeeded");
    api.update(finished);
    assertThat(await(() -> keys(informer.activePods()).equals(List.of("ns/second")), WAIT))
        .isTrue();

    String second = api.pod("ns", "second").orElseThrow().getMetadata().getUid();
    assertThat(informer.isGone(second)).isFalse();
    api.remove("ns", "second");
    assertThat(await(() -> informer.activePods().isEmpty(), WAIT)).isTrue();
    assertThat(informer.isGone(second)).isTrue();
  }

  @Test
  void keepsLabelsAndOwnersOnThePods() {
    Pod p = pod("ns", "web-0", "node-a");
    p.getMetadata().setLabels(Map.of("app", "web"));
    p.getMetadata()
        .setOwnerReferences(
            List.of(
                new OwnerReferenceBuilder()
                    .withApiVersion("apps/v1")
                    .withKind("StatefulSet")
                    .withName("web")
                    .withUid("sts-uid")
                    .withController(true)
                    .build()));
    api.create(p);
    informer = new NodePodInformer(client, "node-a");
    assertThat(informer.start(WAIT)).isTrue();

    Pod seen = informer.activePods().get(0);
    assertThat(seen.getMetadata().getLabels()).containsEntry("app", "web");
    assertThat(seen.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(o -> assertThat(o.getKind()).isEqualTo("StatefulSet"));
  }

  @Test
  void theStoreKeepsNothingRulesMustNotReadAndFollowsUpdatesOfWhatItKeeps() {
    api.create(PodsWithSecrets.pod("apps", "web", "node-a"));
    informer = new NodePodInformer(client, "node-a");
    assertThat(informer.start(WAIT)).isTrue();

    Pod seen = informer.activePods().get(0);
    String json = new KubernetesSerialization().asJson(seen);
    for (String s : PodsWithSecrets.SECRETS) {
      assertThat(json).as("the store keeps no %s", s).doesNotContain(s);
    }
    assertThat(seen.getMetadata().getLabels()).containsEntry("app", "web");
    assertThat(seen.getMetadata().getAnnotations()).containsEntry("team", "payments");
    assertThat(seen.getSpec().getContainers().get(0).getResources().getRequests())
        .containsKey("memory");

    // a watch event replaces the stored pod, trimmed the same way
    Pod changed = api.pod("apps", "web").orElseThrow();
    changed.getMetadata().setLabels(Map.of("app", "web", "tier", "front"));
    api.update(changed);
    assertThat(
            await(
                () ->
                    "front"
                        .equals(informer.activePods().get(0).getMetadata().getLabels().get("tier")),
                WAIT))
        .isTrue();
    String after = new KubernetesSerialization().asJson(informer.activePods().get(0));
    for (String s : PodsWithSecrets.SECRETS) {
      assertThat(after).as("the store keeps no %s after an update", s).doesNotContain(s);
    }
  }

  @Test
  void ordersByCreationTimeThenNamespaceAndName() {
    Pod late = pod("a", "late", "n");
    late.getMetadata().setCreationTimestamp("2024-01-01T00:00:10Z");
    Pod early = pod("z", "early", "n");
    early.getMetadata().setCreationTimestamp("2024-01-01T00:00:01Z");
    Pod tieB = pod("b", "x", "n");
    tieB.getMetadata().setCreationTimestamp("2024-01-01T00:00:05Z");
    Pod tieA = pod("a", "y", "n");
    tieA.getMetadata().setCreationTimestamp("2024-01-01T00:00:05Z");
    Pod unknown = pod("a", "unknown", "n");

    List<Pod> pods = new ArrayList<>(List.of(unknown, late, tieB, early, tieA));
    pods.sort(NodePodInformer.ORDER);
    assertThat(keys(pods)).containsExactly("z/early", "a/y", "b/x", "a/late", "a/unknown");
  }

  @Test
  void terminalPhasesAreInactiveButTerminatingPodsStayActive() {
    Pod terminating = pod("ns", "p", "n");
    terminating.getMetadata().setDeletionTimestamp("2024-01-01T00:00:00Z");
    assertThat(NodePodInformer.isActive(terminating)).isTrue();
    Pod pending = pod("ns", "p", "n");
    pending.getStatus().setPhase("Pending");
    assertThat(NodePodInformer.isActive(pending)).isTrue();
    Pod succeeded = pod("ns", "p", "n");
    succeeded.getStatus().setPhase("Succeeded");
    assertThat(NodePodInformer.isActive(succeeded)).isFalse();
    Pod failed = pod("ns", "p", "n");
    failed.getStatus().setPhase("Failed");
    assertThat(NodePodInformer.isActive(failed)).isFalse();
  }

  @Test
  void keepsTryingWhenTheFirstListFails() {
    api.create(pod("ns", "p", "node-a"));
    api.fail("GET", "/api/v1/pods", 503, 2);
    informer = new NodePodInformer(client, "node-a");
    informer.start(Duration.ofMillis(50));
    assertThat(await(informer::hasSynced, Duration.ofSeconds(10))).isTrue();
    assertThat(keys(informer.activePods())).containsExactly("ns/p");
    assertThat(api.requests("GET", "/api/v1/pods").size()).isGreaterThanOrEqualTo(3);
  }

  @Test
  void startReturnsWithinTheTimeoutWhenTheApiServerIsDown() throws Exception {
    try (dev.evictd.testing.ClosedPort closed = dev.evictd.testing.ClosedPort.bind();
        KubernetesClient down =
            KubeClients.create(
                new ConfigBuilder(Config.empty())
                    .withMasterUrl("http://127.0.0.1:" + closed.port())
                    .build(),
                new KubeSettings(
                    Duration.ofMillis(500), Duration.ofMillis(500), RetryPolicy.NONE));
        NodePodInformer unreachable = new NodePodInformer(down, "node-a")) {
      long t0 = System.nanoTime();
      assertThat(unreachable.start(Duration.ofMillis(800))).isFalse();
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(5));
      assertThat(unreachable.hasSynced()).isFalse();
      assertThat(unreachable.activePods()).isEmpty();
    }
  }

  @Test
  void aWatchAnswered410GoneListsAgainAndThePodViewIsCurrentOnceWatching() {
    var clock =
        new dev.evictd.testing.MutableClock(java.time.Instant.parse("2026-01-01T00:00:00Z"));
    api.create(pod("ns", "first", "node-a"));
    // the first two watches are too old, as after a long disconnection
    api.expireWatches(2);
    informer = new NodePodInformer(client, "node-a", clock);
    // before anything was listed, the view is as old as the informer
    clock.advance(Duration.ofSeconds(5));
    assertThat(informer.viewAge()).isEqualTo(Duration.ofSeconds(5));

    assertThat(informer.start(WAIT)).isTrue();
    assertThat(await(() -> informer.viewAge().isZero(), WAIT)).isTrue();

    // listed again after each 410, then watching: a new pod arrives through the watch
    assertThat(
            api.requests("GET", "/api/v1/pods").stream()
                .filter(r -> !r.path().contains("watch=true"))
                .count())
        .isGreaterThanOrEqualTo(2);
    api.create(pod("ns", "second", "node-a"));
    assertThat(await(() -> informer.activePods().size() == 2, WAIT)).isTrue();
  }

  @Test
  void aLostWatchMakesThePodViewAge() {
    var clock =
        new dev.evictd.testing.MutableClock(java.time.Instant.parse("2026-01-01T00:00:00Z"));
    api.create(pod("ns", "first", "node-a"));
    informer = new NodePodInformer(client, "node-a", clock);
    assertThat(informer.start(WAIT)).isTrue();
    assertThat(await(() -> informer.viewAge().isZero(), WAIT)).isTrue();

    api.close();
    assertThat(await(() -> !informer.isWatching(), WAIT)).isTrue();
    // simulated time passes while the watch is down: the view ages from the moment it was lost
    assertThat(
            await(
                () -> {
                  clock.advance(Duration.ofSeconds(1));
                  return !informer.viewAge().isZero();
                },
                WAIT))
        .isTrue();
    Duration age = informer.viewAge();
    clock.advance(Duration.ofSeconds(31));

    assertThat(informer.viewAge()).isEqualTo(age.plusSeconds(31));
    // the last known pods are still served
    assertThat(keys(informer.activePods())).containsExactly("ns/first");
  }

  @Test
  void aLostWatchIsWarnedAboutOnlyOnceItStaysDownLongerThanARoutineRenewal() {
    var clock =
        new dev.evictd.testing.MutableClock(java.time.Instant.parse("2026-01-01T00:00:00Z"));
    api.create(pod("ns", "first", "node-a"));
    var log = new ch.qos.logback.core.read.ListAppender<ILoggingEvent>();
    var logger =
        (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(NodePodInformer.class);
    var level = logger.getLevel();
    logger.setLevel(ch.qos.logback.classic.Level.INFO);
    log.start();
    logger.addAppender(log);
    try {
      informer = new NodePodInformer(client, "node-a", clock);
      assertThat(informer.start(WAIT)).isTrue();
      // (the clock moves first: the view's age is zero only once the watch was seen)
      clock.advance(Duration.ofSeconds(1));
      assertThat(await(() -> informer.viewAge().isZero(), WAIT)).isTrue();
      api.close();
      // simulated time moves a second at a time until the loss is seen
      assertThat(
              await(
                  () -> {
                    clock.advance(Duration.ofSeconds(1));
                    return !informer.viewAge().isZero();
                  },
                  WAIT))
          .isTrue();
      // down for less than a routine renewal may take: no warning
      clock.advance(
          NodePodInformer.WATCH_LOSS_WARN_AFTER.minus(informer.viewAge()).minusSeconds(1));
      sleep(3 * NodePodInformer.MONITOR_PERIOD.toMillis());
      assertThat(watchWarnings(log)).isEmpty();
      // longer: one warning, however long it stays down
      clock.advance(Duration.ofSeconds(2));
      assertThat(await(() -> watchWarnings(log).size() == 1, WAIT))
          .as(() -> log.list.stream().map(ILoggingEvent::toString).toList().toString())
          .isTrue();
      clock.advance(Duration.ofMinutes(1));
      sleep(3 * NodePodInformer.MONITOR_PERIOD.toMillis());
      assertThat(watchWarnings(log)).hasSize(1);
      assertThat(watchWarnings(log).get(0)).contains("pod watch lost").contains("ms ago");
    } finally {
      logger.detachAppender(log);
      logger.setLevel(level);
    }
  }

  private static List<String> watchWarnings(
      ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> log) {
    return log.list.stream()
        .filter(e -> e.getLevel() == ch.qos.logback.classic.Level.WARN)
        .map(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
        .filter(m -> m.contains("pod watch lost"))
        .toList();
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
