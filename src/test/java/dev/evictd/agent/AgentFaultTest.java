package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.api.FsLayout;
import dev.evictd.api.MemcgThresholdCrossed;
import dev.evictd.api.Quantity;
import dev.evictd.api.Signal;
import dev.evictd.api.Threshold;
import dev.evictd.api.ThresholdValue;
import dev.evictd.config.KubeletEvictionConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.engine.Planner;
import dev.evictd.engine.RuleSet;
import dev.evictd.executor.ApiDeleteEvictor;
import dev.evictd.kube.KubeApi;
import dev.evictd.kube.KubeSettings;
import dev.evictd.kube.RetryPolicy;
import dev.evictd.linux.MemcgThresholdNotifier;
import dev.evictd.ports.EventSink;
import dev.evictd.ports.PodSource;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.testing.FakeKubeApiServer;
import dev.evictd.testing.FakeStatsProvider;
import dev.evictd.testing.TestCgroup;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Faults around the agent: it keeps running, evicts nothing on missing data, and reports the fault.
 */
class AgentFaultTest {
  static RuleSet defaults;

  @BeforeAll
  static void compile() {
    defaults = RuleCompiler.compileDefault();
  }

  static Planner planner() {
    return new Planner(
        defaults,
        KubeletEvictionConfig.from(
            YamlNode.parse(
                "k.yaml",
                "evictionHard: {memory.available: 1Gi}\n".getBytes(StandardCharsets.UTF_8)),
            "node-1",
            FsLayout.SHARED));
  }

  static Pod pod(String name) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("default")
        .endMetadata()
        .withNewSpec()
        .withNodeName("node-1")
        .addNewContainer()
        .withName("c")
        .withImage("busybox")
        .endContainer()
        .endSpec()
        .build();
  }

  static final EvictionManager.Settings DELETE =
      new EvictionManager.Settings(
          Duration.ofSeconds(10), Duration.ZERO, EvictionMethod.DELETE, false, false);

  @Test
  void statisticsThatFailSkipTheSyncEvictNothingAndShowInMetrics() {
    FakeStatsProvider stats = new FakeStatsProvider();
    stats.fail(true);
    AgentMetrics metrics = new AgentMetrics(Clock.systemUTC());
    dev.evictd.testing.RecordingEvictor ev = new dev.evictd.testing.RecordingEvictor();
    try (EvictionManager m =
        new EvictionManager(
            planner(),
            stats,
            PodSource.of(List.of(pod("a"))),
            ev,
            a -> true,
            EventSink.NONE,
            metrics,
            Clock.systemUTC(),
            DELETE)) {
      for (int i = 0; i < 3; i++) {
        assertThat(m.syncOnce("test").outcome()).isEqualTo("skipped");
      }
      assertThat(ev.decisions()).isEmpty();
      assertThat(metrics.scrape())
          .contains("evictd_stats_failures_total 3.0", "evictd_syncs_total{result=\"skipped\"} 3.0")
          .contains("evictd_stats_age_seconds -1.0");
    }
  }

  @Test
  void anApiServerThatFailsOrHangsGivesFailedOutcomesAndTheAgentCarriesOn() {
    try (FakeKubeApiServer api = FakeKubeApiServer.start();
        KubernetesClient client =
            api.client(
                new KubeSettings(
                    Duration.ofSeconds(2), Duration.ofSeconds(2), RetryPolicy.DEFAULT))) {
      Pod a = api.create(pod("a"));
      FakeStatsProvider stats = new FakeStatsProvider();
      stats.set(FakeStatsProvider.memory(500, 7000));
      // the fake summary names pods default/NAME; give the stored pod's uid the same identity
      stats.set(withUid(FakeStatsProvider.memory(500, 7000, "a", 900), a.getMetadata().getUid()));
      KubeApi kube = new KubeApi(client, Duration.ofSeconds(2));
      AgentMetrics metrics = new AgentMetrics(Clock.systemUTC());
      try (EvictionManager m =
          new EvictionManager(
              planner(),
              stats,
              PodSource.of(List.of(a)),
              new ApiDeleteEvictor(
                  kube,
                  new RetryPolicy(2, Duration.ofMillis(50), Duration.ofMillis(100)),
                  Clock.systemUTC()),
              x -> true,
              EventSink.NONE,
              metrics,
              Clock.systemUTC(),
              DELETE)) {
        api.fail("DELETE", "/api/v1/namespaces/default/pods/a", 500, 10);
        var r1 = m.syncOnce("500");
        assertThat(r1.attempts())
            .singleElement()
            .satisfies(x -> assertThat(x.outcome()).isEqualTo(EvictionOutcome.FAILED));
        api.delay("DELETE", "/api/v1/namespaces/default/pods/a", Duration.ofSeconds(5), 10);
        long t0 = System.nanoTime();
        var r2 = m.syncOnce("hang");
        assertThat(r2.attempts())
            .singleElement()
            .satisfies(x -> assertThat(x.outcome()).isEqualTo(EvictionOutcome.FAILED));
        assertThat((System.nanoTime() - t0) / 1_000_000)
            .as("bounded by timeouts and retries")
            .isLessThan(15_000);
        assertThat(metrics.scrape())
            .contains(
                "evictd_evictions_total{method=\"delete\",outcome=\"failed\",signal=\"memory.available\"} 2.0");
        // the planner saw the failed attempts as facts and keeps planning
        assertThat(m.syncOnce("again").plan().decisions()).hasSize(1);
      }
    }
  }

  static dev.evictd.stats.Summary withUid(dev.evictd.stats.Summary s, String uid) {
    var p = s.pods().get(0);
    var fixed =
        new dev.evictd.stats.Summary.PodStats(
            new dev.evictd.stats.Summary.PodReference(
                p.podRef().name(), p.podRef().namespace(), uid),
            p.containers(),
            p.memory(),
            p.volumes(),
            p.ephemeralStorage(),
            p.processStats());
    return new dev.evictd.stats.Summary(s.node(), List.of(fixed));
  }

  @Test
  @Tag("cgroup-v1")
  void aCgroupRemovedUnderTheNotifierIsSurvived() throws Exception {
    TestCgroup.assumeRootWithCgroupV1();
    LinkedBlockingQueue<MemcgThresholdCrossed> events = new LinkedBlockingQueue<>();
    Threshold t =
        new Threshold(
            "hard memory.available",
            Signal.MEMORY_AVAILABLE,
            ThresholdValue.ofQuantity(Quantity.parse("1Gi"), "1Gi"),
            Duration.ZERO,
            null,
            0,
            "test",
            false);
    try (TestCgroup cg = TestCgroup.create("evictd-fault")) {
      Path parent = Files.createTempDirectory("evictd-root");
      Path link = parent.resolve("memory");
      Files.createSymbolicLink(link, cg.dir());
      try (MemcgThresholdNotifier n =
          new MemcgThresholdNotifier(
              t, dev.evictd.linux.Cgroups.detect(parent, null), events::add, Clock.systemUTC())) {
        assertThat(n.register(64L << 20)).isTrue();
        Files.delete(cg.dir()); // the cgroup goes away under the running notifier
        Thread.sleep(500);
        assertThat(n.register(32L << 20))
            .as("registration on a removed cgroup fails cleanly")
            .isFalse();
      } finally {
        Files.deleteIfExists(link);
        Files.deleteIfExists(parent);
      }
    }
  }

  @Test
  void rulesSwappedDuringSyncsTakeEffectAtASyncBoundary() throws Exception {
    FakeStatsProvider stats = new FakeStatsProvider();
    stats.set(FakeStatsProvider.memory(500, 7000, "a", 900, "b", 100));
    RuleSet qos = RuleCompiler.compile(Path.of("fixtures/examples/qos-ranking/rules"));
    try (EvictionManager m =
        new EvictionManager(
            planner(),
            stats,
            PodSource.of(List.of(pod("a"), pod("b"))),
            new dev.evictd.testing.RecordingEvictor(),
            x -> true,
            EventSink.NONE,
            new AgentMetrics(Clock.systemUTC()),
            Clock.systemUTC(),
            DELETE)) {
      AtomicBoolean stop = new AtomicBoolean();
      Thread swapper =
          new Thread(
              () -> {
                while (!stop.get()) {
                  m.swapRules(qos);
                  m.swapRules(defaults);
                }
                m.swapRules(qos);
              });
      swapper.start();
      for (int i = 0; i < 30; i++) {
        var r = m.syncOnce("race");
        assertThat(r.outcome()).isEqualTo("ok");
        // every plan comes from one whole rule set: the qos set ranks with a "qos" level first, the
        // default set never
        var first = r.plan().ranking().get(0).key().get(0).name();
        assertThat(first).isIn("qos", "noStats");
      }
      stop.set(true);
      swapper.join();
      m.syncOnce("after");
      assertThat(m.rulesSha256()).isEqualTo(qos.sha256());
    }
  }
}
