package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.evictd.testing.FakeKubeApiServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real kernel: a standalone agent whose host statistics are scoped to a test memory cgroup
 * syncs at once when a process drives the cgroup past a memory threshold, long before the next
 * interval.
 */
@Tag("cgroup-v1")
class AgentKernelTest {
  /** One client for every probe and scrape (a JDK client per call leaves its threads behind). */
  private static final java.net.http.HttpClient HTTP = java.net.http.HttpClient.newHttpClient();

  static final Path MEMCG = Path.of("/sys/fs/cgroup/memory");

  private static String readUsage(Path cgroup) {
    try {
      return Files.readString(cgroup.resolve("memory.usage_in_bytes")).trim();
    } catch (java.io.IOException e) {
      return "unreadable";
    }
  }

  static long memTotal() throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
      if (line.startsWith("MemTotal:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
      }
    }
    throw new IllegalStateException("no MemTotal");
  }

  @Test
  void aMemcgCrossingTriggersASyncWellBeforeTheInterval(@TempDir Path dir) throws Exception {
    crossingTriggersASync(dir, true);
  }

  /** With the memcg notifier off (as on cgroup v2), the adaptive poll sees the crossing. */
  @Test
  void withoutTheMemcgNotifierTheAdaptivePollTriggersTheSync(@TempDir Path dir) throws Exception {
    crossingTriggersASync(dir, false);
  }

  private void crossingTriggersASync(Path dir, boolean memcg) throws Exception {
    assumeTrue(
        "root".equals(System.getProperty("user.name")), "needs root to create memory cgroups");
    assumeTrue(
        Files.isRegularFile(MEMCG.resolve("cgroup.event_control")),
        "needs the cgroup v1 memory controller");
    Path cgroup = MEMCG.resolve("evictd-agent-test-" + UUID.randomUUID());
    Path shm = Path.of("/dev/shm/evictd-agent-test-" + UUID.randomUUID());
    Process writer = null;
    Files.createDirectory(cgroup);
    try {
      // a cgroup root whose "memory" hierarchy is the test cgroup: node memory = this cgroup's
      // usage
      Path root = Files.createDirectory(dir.resolve("cgroup"));
      Files.createSymbolicLink(root.resolve("memory"), cgroup);
      long threshold = memTotal() - 48L * 1024 * 1024; // met once the cgroup uses more than 48Mi
      Map<String, Object> flags =
          Map.of(
              "memcgNotifier",
              Boolean.toString(memcg),
              "standalone",
              true,
              "interval",
              "60s",
              "metricsAddress",
              "127.0.0.1:0",
              "cgroupRoot",
              root.toString(),
              "kubeletRootDir",
              dir.toString(),
              "stateDir",
              dir.resolve("state").toString(),
              "runtimeRootDir",
              dir.toString(),
              "fsLayout",
              "shared");
      Path cfg = dir.resolve("agent.yaml");
      Files.writeString(
          cfg,
          "eviction:\n  evictionHard: {memory.available: \""
              + threshold
              + "\"}\n  enforceNodeAllocatable: []\n");
      AgentConfig c =
          AgentConfig.resolve(
              dev.evictd.config.YamlNode.parse(cfg.toString(), Files.readAllBytes(cfg)),
              flags,
              Map.of());
      try (Agent agent = Agent.start(c, Clock.systemUTC())) {
        assertThat(FakeKubeApiServer.await(() -> agent.manager().ready(), Duration.ofSeconds(20)))
            .isTrue();
        Instant firstSync = agent.manager().lastSync();
        Thread.sleep(500); // the notifier registers its threshold after the first sync
        writer =
            new ProcessBuilder(
                    "sh",
                    "-c",
                    "echo $$ > "
                        + cgroup.resolve("cgroup.procs")
                        + " && head -c 96M /dev/zero > "
                        + shm
                        + " && exec sleep 30")
                .start();
        long t0 = System.nanoTime();
        boolean synced =
            FakeKubeApiServer.await(
                () -> agent.manager().lastSync().isAfter(firstSync), Duration.ofSeconds(20));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertThat(synced).as("a sync after the crossing").isTrue();
        assertThat(ms)
            .as("the sync came from the kernel event, not the 60 s interval")
            .isLessThan(15_000);
        String metrics =
            HTTP.send(
                    java.net.http.HttpRequest.newBuilder(
                            java.net.URI.create(
                                "http://127.0.0.1:" + agent.address().getPort() + "/metrics"))
                        .build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString())
                .body();
        assertThat(metrics)
            .contains(
                "evictd_notifier_events_total{source=\"" + (memcg ? "memcg" : "poll") + "\"}");
        if (!memcg) {
          assertThat(metrics).doesNotContain("evictd_notifier_events_total{source=\"memcg\"}");
        }
        java.util.concurrent.atomic.AtomicReference<String> last =
            new java.util.concurrent.atomic.AtomicReference<>("");
        assertThat(
                FakeKubeApiServer.await(
                    () -> {
                      try {
                        last.set(
                            HTTP.send(
                                    java.net.http.HttpRequest.newBuilder(
                                            java.net.URI.create(
                                                "http://127.0.0.1:"
                                                    + agent.address().getPort()
                                                    + "/metrics"))
                                        .build(),
                                    java.net.http.HttpResponse.BodyHandlers.ofString())
                                .body());
                        return last.get()
                            .contains("evictd_node_condition{condition=\"MemoryPressure\"} 1.0");
                      } catch (Exception e) {
                        return false;
                      }
                    },
                    Duration.ofSeconds(10)))
            .as(
                () ->
                    "the sync saw the pressure (cgroup usage now "
                        + readUsage(cgroup)
                        + "); evictd_ lines of the last /metrics:\n"
                        + last.get()
                            .lines()
                            .filter(l -> l.startsWith("evictd_") && !l.startsWith("evictd_rule"))
                            .collect(java.util.stream.Collectors.joining("\n")))
            .isTrue();
      }
    } finally {
      if (writer != null) {
        writer.destroyForcibly();
        writer.waitFor(5, TimeUnit.SECONDS);
      }
      Files.deleteIfExists(shm);
      for (int i = 0; i < 50 && Files.exists(cgroup); i++) {
        for (String pid : Files.readAllLines(cgroup.resolve("cgroup.procs"))) {
          ProcessHandle.of(Long.parseLong(pid.trim())).ifPresent(ProcessHandle::destroyForcibly);
        }
        try {
          Files.delete(cgroup);
        } catch (java.io.IOException e) {
          Thread.sleep(100); // tasks still leaving
        }
      }
    }
  }
}
