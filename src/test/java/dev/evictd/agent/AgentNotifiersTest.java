package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.MemcgThresholdCrossed;
import dev.evictd.api.MemoryPollCrossed;
import dev.evictd.api.Signal;
import dev.evictd.linux.Cgroups;
import dev.evictd.testing.FakeKubeApiServer;
import dev.evictd.testing.FakeNotifiers;
import dev.evictd.testing.Fixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The agent takes its kernel event sources from the notifier factory seam. */
class AgentNotifiersTest {
  /** One client for every probe and scrape (a JDK client per call leaves its threads behind). */
  private static final java.net.http.HttpClient HTTP = java.net.http.HttpClient.newHttpClient();

  @Test
  void aFactFromAnEventSourceSyncsAtOnceAndSourcesGetEverySummary(@TempDir Path dir)
      throws Exception {
    Path host = Fixtures.resource("hosts/v2");
    Map<String, Object> flags = new HashMap<>();
    flags.put("standalone", true);
    flags.put("interval", "60s");
    flags.put("metricsAddress", "127.0.0.1:0");
    flags.put("cgroupRoot", host.resolve("cgroup").toString());
    flags.put("procRoot", host.resolve("proc").toString());
    flags.put("kubeletRootDir", dir.toString());
    flags.put("stateDir", dir.resolve("state").toString());
    flags.put("runtimeRootDir", dir.toString());
    flags.put("fsLayout", "shared");
    flags.put("podsCgroup", "kubepods.slice");
    flags.put("adaptivePoll", "false");
    Path cfg = dir.resolve("agent.yaml");
    Files.writeString(
        cfg,
        "eviction:\n  evictionHard: {memory.available: \"100Mi\", nodefs.available: \"1%\"}\n");
    AgentConfig c =
        AgentConfig.resolve(
            dev.evictd.config.YamlNode.parse(cfg.toString(), Files.readAllBytes(cfg)),
            flags,
            Map.of());
    FakeNotifiers fake = new FakeNotifiers();
    try (Agent agent =
        Agent.start(
            c,
            Clock.systemUTC(),
            () -> {
              throw new AssertionError("standalone: no client");
            },
            fake)) {
      // the event sources are made by the background start-up, once the layout is known
      assertThat(agent.manager()).as("start-up done").isNotNull();
      assertThat(fake.spec()).isNotNull();
      assertThat(fake.spec().adaptivePoll()).isFalse();
      assertThat(fake.spec().memcg()).isTrue();
      assertThat(fake.spec().cgroups().podsCgroup())
          .contains(host.resolve("cgroup/kubepods.slice"));
      assertThat(fake.spec().cgroups().driver()).contains(Cgroups.Driver.SYSTEMD);
      assertThat(fake.spec().memoryThresholds())
          .anyMatch(t -> t.signal() == Signal.MEMORY_AVAILABLE);
      assertThat(FakeKubeApiServer.await(() -> agent.manager().ready(), Duration.ofSeconds(20)))
          .isTrue();
      assertThat(FakeKubeApiServer.await(() -> !fake.updates().isEmpty(), Duration.ofSeconds(5)))
          .as("the sources get the summary of each sync")
          .isTrue();
      Instant first = agent.manager().lastSync();
      fake.fire(
          new MemoryPollCrossed(
              Signal.MEMORY_AVAILABLE,
              MemcgThresholdCrossed.Direction.UP,
              1,
              2,
              "memory.stat",
              Instant.now()),
          "poll",
          true);
      assertThat(
              FakeKubeApiServer.await(
                  () -> agent.manager().lastSync().isAfter(first), Duration.ofSeconds(20)))
          .as("a sync long before the 60 s interval")
          .isTrue();
      String metrics =
          HTTP.send(
                  java.net.http.HttpRequest.newBuilder(
                          java.net.URI.create(
                              "http://127.0.0.1:" + agent.address().getPort() + "/metrics"))
                      .build(),
                  java.net.http.HttpResponse.BodyHandlers.ofString())
              .body();
      assertThat(metrics).contains("evictd_notifier_events_total{source=\"poll\"} 1.0");
    }
    assertThat(fake.closed()).as("the agent closes its sources").isTrue();
  }
}
