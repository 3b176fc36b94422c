package dev.evictd.agent;

import static dev.evictd.testing.TestPods.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionAttempt;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.api.FsLayout;
import dev.evictd.config.KubeletEvictionConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.engine.Planner;
import dev.evictd.engine.RuleSet;
import dev.evictd.executor.ApiDeleteEvictor;
import dev.evictd.executor.ApiEvictionEvictor;
import dev.evictd.executor.DispatchingPodEvictor;
import dev.evictd.executor.DryRunEvictor;
import dev.evictd.kube.EventRecorder;
import dev.evictd.kube.KubeApi;
import dev.evictd.kube.KubeSettings;
import dev.evictd.kube.NodePodInformer;
import dev.evictd.kube.RetryPolicy;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.stats.Summary;
import dev.evictd.testing.FakeKubeApiServer;
import dev.evictd.testing.FakeStatsProvider;
import dev.evictd.testing.MutableClock;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Evictions in flight against the fake API server, which answers as a real one does: a deleted pod
 * stays with its deletionTimestamp until its kubelet removes it (here: never), a slow server
 * carries a request out after the client gave up, a disruption budget never allows. The agent's
 * syncs are stepped on a simulated clock; the pods come from the real informer.
 */
class InFlightEvictionTest {
  private static final String NS = "ns";
  private static RuleSet defaults;

  private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
  private final List<AutoCloseable> closeables = new ArrayList<>();
  private FakeKubeApiServer api;
  private KubernetesClient client;
  private NodePodInformer informer;
  private final FakeStatsProvider stats = new FakeStatsProvider();
  private AgentMetrics metrics;

  @BeforeAll
  static void compile() {
    defaults = RuleCompiler.compileDefault();
  }

  @BeforeEach
  void setUp() {
    api = FakeKubeApiServer.start();
    api.clock(clock);
    client = api.client(KubeSettings.DEFAULTS);
    // three pods using 900, 500 and 100 MiB: ranked a, b, c
    for (String name : List.of("a", "b", "c")) {
      api.create(pod(NS, name, "node-a"));
    }
    informer = new NodePodInformer(client, "node-a", clock);
    assertThat(informer.start(Duration.ofSeconds(10))).isTrue();
    stats.set(summary(500));
    metrics = new AgentMetrics(clock);
  }

  @AfterEach
  void tearDown() throws Exception {
    for (AutoCloseable c : closeables) {
      c.close();
    }
    // server first: see FakeKubeApiServer#close
    api.close();
    informer.close();
    client.close();
  }

  private static Summary summary(long availableMi) {
    long mi = 1024 * 1024;
    List<Summary.PodStats> pods = new ArrayList<>();
    long[] usage = {900, 500, 100};
    String[] names = {"a", "b", "c"};
    for (int i = 0; i < names.length; i++) {
      pods.add(
          new Summary.PodStats(
              new Summary.PodReference(names[i], NS, "uid-ns-" + names[i]),
              List.of(),
              new Summary.MemoryStats(null, null, null, usage[i] * mi, null),
              List.of(),
              null,
              null));
    }
    Summary base = FakeStatsProvider.memory(availableMi, 7000);
    return new Summary(base.node(), pods);
  }

  private EvictionManager manager(String kubeletYaml, EvictionMethod method, Duration timeout) {
    Planner planner =
        new Planner(
            defaults,
            KubeletEvictionConfig.from(
                YamlNode.parse("k.yaml", kubeletYaml.getBytes(StandardCharsets.UTF_8)),
                "node-a",
                FsLayout.SHARED));
    KubeApi kube = new KubeApi(client, timeout);
    RetryPolicy retry = new RetryPolicy(3, Duration.ofMillis(10), Duration.ofMillis(40));
    var evictor =
        new DispatchingPodEvictor(
            method,
            new ApiDeleteEvictor(kube, retry, clock),
            new ApiEvictionEvictor(kube, retry),
            null,
            new DryRunEvictor());
    EvictionManager m =
        new EvictionManager(
            planner,
            stats,
            informer,
            evictor,
            a -> true,
            new EventRecorder(kube, "node-a", clock),
            metrics,
            clock,
            new EvictionManager.Settings(
                Duration.ofSeconds(10), Duration.ofSeconds(30), method, false, false));
    closeables.add(m);
    closeables.add(planner);
    return m;
  }

  private static final String HARD = "evictionHard: {memory.available: 1Gi}\n";

  private List<String> deletes(String name) {
    return api.requests("DELETE", "/api/v1/namespaces/ns/pods/" + name).stream()
        .map(FakeKubeApiServer.Request::body)
        .toList();
  }

  private List<Event> evictedEvents(String name) {
    return api.events(NS).stream()
        .filter(e -> e.getReason().equals("Evicted"))
        .filter(e -> e.getInvolvedObject().getName().equals(name))
        .toList();
  }

  private void awaitTerminatingInView(String name) {
    assertThat(
            FakeKubeApiServer.await(
                () ->
                    informer.activePods().stream()
                        .anyMatch(
                            p ->
                                p.getMetadata().getName().equals(name)
                                    && p.getMetadata().getDeletionTimestamp() != null),
                Duration.ofSeconds(20)))
        .as("the informer sees %s terminating", name)
        .isTrue();
  }

  private List<String> evictedIn(EvictionManager.SyncResult r) {
    return r.attempts().stream().map(a -> a.pod().name() + ":" + a.outcome()).toList();
  }

  @Test
  void aPodThatNeverGoesIsEvictedOnceAndTheNextPodGoesAfterPodCleanupTimeout() {
    EvictionManager m = manager(HARD, EvictionMethod.DELETE, Duration.ofSeconds(10));
    List<List<String>> perSync = new ArrayList<>();

    perSync.add(evictedIn(m.syncOnce("test")));
    awaitTerminatingInView("a");
    // two minutes of sustained pressure, a sync every 10 s; a is held by a finalizer forever
    for (int i = 1; i <= 12; i++) {
      clock.advance(Duration.ofSeconds(10));
      perSync.add(evictedIn(m.syncOnce("test")));
      if (!perSync.get(i).isEmpty()) {
        awaitTerminatingInView(perSync.get(i).get(0).split(":")[0]);
      }
    }

    // a at 0 s; nothing while waiting for it; b at 30 s (podCleanupTimeout), c at 60 s
    assertThat(perSync.get(0)).containsExactly("a:EVICTED");
    assertThat(perSync.subList(1, 3)).allMatch(List::isEmpty);
    assertThat(perSync.get(3)).containsExactly("b:EVICTED");
    assertThat(perSync.subList(4, 6)).allMatch(List::isEmpty);
    assertThat(perSync.get(6)).containsExactly("c:EVICTED");
    assertThat(perSync.subList(7, 13)).allMatch(List::isEmpty);
    // exactly one delete, one Evicted Event and one eviction counted per pod
    for (String name : List.of("a", "b", "c")) {
      assertThat(deletes(name)).as(name).hasSize(1);
      assertThat(evictedEvents(name))
          .as(name)
          .singleElement()
          .satisfies(e -> assertThat(e.getCount()).isEqualTo(1));
    }
    assertThat(metrics.scrape())
        .contains(
            "evictd_evictions_total{method=\"delete\",outcome=\"evicted\",signal=\"memory.available\"} 3.0");
    // and under those two minutes of pressure, one EvictionThresholdMet object
    assertThat(api.events(EventRecorder.NODE_EVENT_NAMESPACE)).hasSize(1);
  }

  @Test
  void aSofterDecisionNeverResendsButAHardThresholdShortensTheGracePeriodOnce() {
    String yaml =
        "evictionHard: {memory.available: 1Gi}\n"
            + "evictionSoft: {memory.available: 2Gi}\n"
            + "evictionSoftGracePeriod: {memory.available: 10s}\n"
            + "evictionMaxPodGracePeriod: 30\n";
    stats.set(summary(1500));
    EvictionManager m = manager(yaml, EvictionMethod.DELETE, Duration.ofSeconds(10));
    m.syncOnce("test");
    clock.advance(Duration.ofSeconds(10));
    assertThat(evictedIn(m.syncOnce("test"))).containsExactly("a:EVICTED");
    awaitTerminatingInView("a");
    clock.advance(Duration.ofSeconds(10));
    // the same soft decision again: not sent
    assertThat(evictedIn(m.syncOnce("test"))).isEmpty();
    // a hard threshold: the same pod with 1 s instead of 30 s
    stats.set(summary(500));
    clock.advance(Duration.ofSeconds(5));
    assertThat(evictedIn(m.syncOnce("test"))).containsExactly("a:EVICTED");
    assertThat(
            FakeKubeApiServer.await(
                () ->
                    informer.activePods().stream()
                        .anyMatch(
                            p ->
                                p.getMetadata().getName().equals("a")
                                    && Long.valueOf(1)
                                        .equals(p.getMetadata().getDeletionGracePeriodSeconds())),
                Duration.ofSeconds(20)))
        .isTrue();
    clock.advance(Duration.ofSeconds(5));
    assertThat(evictedIn(m.syncOnce("test"))).isEmpty();

    assertThat(deletes("a")).hasSize(2);
    assertThat(deletes("a").get(0)).contains("\"gracePeriodSeconds\":30");
    assertThat(deletes("a").get(1)).contains("\"gracePeriodSeconds\":1");
    // one Evicted Event and one eviction counted: shortening is not a second eviction
    assertThat(evictedEvents("a"))
        .singleElement()
        .satisfies(e -> assertThat(e.getCount()).isEqualTo(1));
    assertThat(metrics.scrape())
        .contains(
            "evictd_evictions_total{method=\"delete\",outcome=\"evicted\",signal=\"memory.available\"} 1.0");
  }

  @Test
  void aRestartMidEvictionDoesNotEvictTheTerminatingPodAgain() {
    EvictionManager first = manager(HARD, EvictionMethod.DELETE, Duration.ofSeconds(10));
    assertThat(evictedIn(first.syncOnce("test"))).containsExactly("a:EVICTED");
    awaitTerminatingInView("a");
    first.close();

    // a new agent: its planner knows nothing, the API server knows a is going
    EvictionManager second = manager(HARD, EvictionMethod.DELETE, Duration.ofSeconds(10));
    List<List<String>> perSync = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      clock.advance(Duration.ofSeconds(10));
      perSync.add(evictedIn(second.syncOnce("test")));
    }

    assertThat(perSync.get(0)).isEmpty();
    assertThat(perSync.get(1)).isEmpty();
    // 30 s after a's deletion was requested, the next pod goes
    assertThat(perSync.get(2)).containsExactly("b:EVICTED");
    assertThat(deletes("a")).hasSize(1);
    assertThat(evictedEvents("a")).hasSize(1);
  }

  @Test
  void aServerSlowerThanTheRequestTimeoutIsUnknownAndNoSecondPodGoesMeanwhile() {
    // the API server carries the delete out after 12 s; the agent waits 2 s per request
    api.answerLate("DELETE", "/api/v1/namespaces/ns/pods/a", Duration.ofSeconds(12), 1);
    EvictionManager m = manager(HARD, EvictionMethod.DELETE, Duration.ofSeconds(2));
    long t0 = System.nanoTime();

    EvictionManager.SyncResult first = m.syncOnce("test");

    Duration firstSync = Duration.ofNanos(System.nanoTime() - t0);
    assertThat(evictedIn(first)).containsExactly("a:UNKNOWN");
    // patch, delete and the GET that checks, 2 s at most each: far from a minute
    assertThat(firstSync).isLessThan(Duration.ofSeconds(10));
    assertThat(evictedEvents("a")).isEmpty();
    clock.advance(Duration.ofSeconds(10));
    assertThat(evictedIn(m.syncOnce("test"))).isEmpty();

    // the server carries it out; the informer shows it; the agent learns the outcome
    awaitTerminatingInView("a");
    clock.advance(Duration.ofSeconds(10));
    assertThat(evictedIn(m.syncOnce("test"))).isEmpty();
    assertThat(evictedEvents("a")).hasSize(1);
    assertThat(deletes("a")).hasSize(1);
    assertThat(deletes("b")).isEmpty();
    assertThat(metrics.scrape())
        .contains(
            "evictd_evictions_total{method=\"delete\",outcome=\"unknown\",signal=\"memory.available\"} 1.0")
        .doesNotContain("outcome=\"failed\"");

    // then, as for any eviction, the next pod after podCleanupTimeout
    clock.advance(Duration.ofSeconds(10));
    assertThat(evictedIn(m.syncOnce("test"))).containsExactly("b:EVICTED");
  }

  @Test
  void aBudgetThatNeverAllowsAtASoftThresholdTriesTheNextPod() {
    String yaml =
        "evictionHard: {}\n"
            + "evictionSoft: {memory.available: 2Gi}\n"
            + "evictionSoftGracePeriod: {memory.available: 10s}\n"
            + "evictionMaxPodGracePeriod: 30\n";
    stats.set(summary(1500));
    api.blockEvictions(NS, "a");
    EvictionManager m = manager(yaml, EvictionMethod.EVICT, Duration.ofSeconds(10));
    m.syncOnce("test");
    clock.advance(Duration.ofSeconds(10));

    EvictionManager.SyncResult refused = m.syncOnce("test");
    clock.advance(Duration.ofSeconds(10));
    EvictionManager.SyncResult next = m.syncOnce("test");

    assertThat(refused.attempts())
        .singleElement()
        .satisfies(
            a -> {
              assertThat(a.pod().name()).isEqualTo("a");
              assertThat(a.outcome()).isEqualTo(EvictionOutcome.PDB_BLOCKED);
              assertThat(a.detail()).isEqualTo(FakeKubeApiServer.BUDGET_MESSAGE);
            });
    assertThat(evictedIn(next)).containsExactly("b:EVICTED");
    // the budget's message is in the reason the plan gives for passing a over
    assertThat(next.plan().ranking().get(0).exemptReason())
        .contains(FakeKubeApiServer.BUDGET_MESSAGE);
  }

  @Test
  void aBudgetThatNeverAllowsAtAHardThresholdEndsInADeleteWithinFourSyncs() {
    api.blockEvictions(NS, "a");
    EvictionManager m = manager(HARD, EvictionMethod.EVICT, Duration.ofSeconds(10));
    List<EvictionAttempt> attempts = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      attempts.addAll(m.syncOnce("test").attempts());
      clock.advance(Duration.ofSeconds(10));
    }

    assertThat(attempts)
        .extracting(a -> a.pod().name() + ":" + a.method() + ":" + a.outcome())
        .containsExactly(
            "a:EVICT:PDB_BLOCKED",
            "a:EVICT:PDB_BLOCKED",
            "a:EVICT:PDB_BLOCKED",
            "a:DELETE:EVICTED");
    assertThat(deletes("a")).hasSize(1);
    Pod a = api.pod(NS, "a").orElseThrow();
    assertThat(a.getMetadata().getDeletionTimestamp()).isNotNull();
  }
}
