package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.MemcgThresholdCrossed;
import dev.evictd.api.MemoryPollCrossed;
import dev.evictd.api.Signal;
import dev.evictd.kube.KubeSettings;
import dev.evictd.linux.MemoryPoll;
import dev.evictd.testing.FakeKubeApiServer;
import dev.evictd.testing.TestCgroup;
import io.fabric8.kubernetes.api.model.Pod;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent on the node with the kubelet's Summary (here through the node proxy of the fake API
 * server) and the kernel's memory figures from a real cgroup v1 hierarchy the test makes: the
 * Summary is stale (no pressure, the hog's pod at 0 and the idle one at 500Mi), the kernel shows
 * the hog's 96Mi over the hard threshold. A sync the kernel triggers decides on the kernel's
 * figures, stops the hog's processes on the node and deletes its pod (kill-and-delete, the default
 * rules' method at a hard threshold; its tmpfs file keeps the memory charged); while kernel and
 * Summary disagree, a storm of crossings (what the adaptive poll reported every ~6 ms on a real
 * node) costs no more syncs than {@link SyncPacing} allows and no Summary read before the kubelet's
 * next refresh.
 */
class AgentFreshFiguresTest {
  private static final long MI = 1024 * 1024;

  @Test
  void aKernelTriggeredSyncDecidesOnKernelFiguresAndAStormIsBounded(@TempDir Path dir)
      throws Exception {
    TestCgroup.assumeRootWithCgroupV1();
    long memTotal = AgentKernelTest.memTotal();
    try (TestCgroup cg = TestCgroup.create("fresh");
        FakeKubeApiServer api = FakeKubeApiServer.start()) {
      Pod hog = api.create(AgentEndToEndTest.pod("hog", 0));
      Pod idle = api.create(AgentEndToEndTest.pod("idle", 0));
      Path hogCgroup = cg.mkdirs("kubepods/pod" + hog.getMetadata().getUid());
      cg.mkdirs("kubepods/pod" + idle.getMetadata().getUid());
      // the kubelet's cached Summary: 16Mi in use, the hog's pod at 0, the idle one at 500Mi
      api.summary("node-1", 200, summary(Instant.now(), memTotal, hog, idle));
      Path root = Files.createDirectory(dir.resolve("cgroup"));
      Files.createSymbolicLink(root.resolve("memory"), cg.dir()); // node memory: the test cgroup
      AgentConfig c = config(dir, root, memTotal - 48 * MI); // met above 48Mi in use
      try (Agent agent =
          Agent.start(c, Clock.systemUTC(), () -> api.client(KubeSettings.DEFAULTS))) {
        assertThat(FakeKubeApiServer.await(() -> agent.manager().ready(), Duration.ofSeconds(30)))
            .isTrue();
        assertThat(api.requests("DELETE", "/api/v1/namespaces/apps/pods/.*"))
            .as("the Summary shows no pressure")
            .isEmpty();
        Path shm = cg.tmpfsFile("hog");
        cg.startIn(hogCgroup, "head -c 96M /dev/zero > \"$2\" && exec sleep 60", shm.toString());
        TestCgroup.awaitSize(shm, 96 * MI);
        // the kubelet refreshed just now, with the same stale figures: no read is due for 10 s
        api.summary("node-1", 200, summary(Instant.now(), memTotal, hog, idle));
        agent.manager().event(crossing(cg.dir()), MemoryPoll.SOURCE, true);
        assertThat(
                FakeKubeApiServer.await(
                    () -> !api.requests("DELETE", "/api/v1/namespaces/apps/pods/hog").isEmpty(),
                    Duration.ofSeconds(20)))
            .as("the kernel's figures rank the hog first (the Summary's rank the idle pod)")
            .isTrue();
        assertThat(api.requests("DELETE", "/api/v1/namespaces/apps/pods/idle")).isEmpty();
        // a hard threshold: the hog's processes were stopped on the node too (kill-and-delete)
        assertThat(
                FakeKubeApiServer.await(() -> procs(hogCgroup).isEmpty(), Duration.ofSeconds(10)))
            .as("the hog's cgroup has no process left")
            .isTrue();
        // recorded once the delete has been answered (after the request this test saw)
        String evicted =
            "evictd_evictions_total{method=\"kill_and_delete\",outcome=\"evicted\","
                + "signal=\"memory.available\"} 1.0";
        assertThat(
                FakeKubeApiServer.await(
                    () -> metrics(agent).contains(evicted), Duration.ofSeconds(10)))
            .as("the eviction counted with its method")
            .isTrue();
        assertThat(metrics(agent))
            .contains("evictd_node_condition{condition=\"MemoryPressure\"} 1.0");

        // the storm: a crossing every 2 ms for 2 s while the Summary still shows none
        double syncsBefore = total(agent, "evictd_syncs_total");
        double readsBefore = total(agent, "evictd_summary_reads_total");
        int requestsBefore = summaryRequests(api);
        long start = System.nanoTime();
        while (System.nanoTime() - start < 2_000_000_000L) {
          agent.manager().event(crossing(cg.dir()), MemoryPoll.SOURCE, true);
          Thread.sleep(2);
        }
        long stormMillis = (System.nanoTime() - start) / 1_000_000;
        Thread.sleep(200); // the sync still running ends
        double syncs = total(agent, "evictd_syncs_total") - syncsBefore;
        long bound = stormMillis / SyncPacing.MIN_GAP.toMillis() + 2;
        System.err.println(
            +stormMillis
                + " ms syncs "
                + syncs
                + " reads "
                + (total(agent, "evictd_summary_reads_total") - readsBefore)
                + " total reads "
                + summaryRequests(api));
        assertThat(syncs)
            .as("syncs in %d ms of crossings (bound %d)", stormMillis, bound)
            .isGreaterThanOrEqualTo(1)
            .isLessThanOrEqualTo(bound);
        assertThat(total(agent, "evictd_summary_reads_total") - readsBefore)
            .as("no Summary read before the kubelet's next refresh")
            .isZero();
        assertThat(summaryRequests(api)).isEqualTo(requestsBefore);
        assertThat(api.requests("DELETE", "/api/v1/namespaces/apps/pods/idle")).isEmpty();
      }
    }
  }

  private static String metrics(Agent agent) {
    try {
      return AgentEndToEndTest.get(agent.address(), "/metrics");
    } catch (Exception e) {
      return "";
    }
  }

  private static String procs(Path cgroup) {
    try {
      return Files.readString(cgroup.resolve("cgroup.procs")).trim();
    } catch (java.io.IOException e) {
      return "unreadable: " + e.getMessage();
    }
  }

  private static MemoryPollCrossed crossing(Path cgroup) {
    return new MemoryPollCrossed(
        Signal.MEMORY_AVAILABLE,
        MemcgThresholdCrossed.Direction.UP,
        48 * MI,
        96 * MI,
        cgroup.resolve("memory.usage_in_bytes").toString(),
        Instant.now());
  }

  private static int summaryRequests(FakeKubeApiServer api) {
    return api.requests("GET", "/api/v1/nodes/node-1/proxy/stats/summary").size();
  }

  /** The sum of a metric's samples in the agent's /metrics. */
  private static double total(Agent agent, String metric) throws Exception {
    return AgentEndToEndTest.get(agent.address(), "/metrics")
        .lines()
        .filter(l -> l.startsWith(metric + "{") || l.startsWith(metric + " "))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .sum();
  }

  private static String summary(Instant time, long memTotal, Pod hog, Pod idle) {
    long used = 16 * MI;
    return """
        {"node": {"nodeName": "node-1",
                  "memory": {"time": "%s", "availableBytes": %d, "workingSetBytes": %d}},
         "pods": [
           {"podRef": {"name": "hog", "namespace": "apps", "uid": "%s"},
            "memory": {"time": "%s", "workingSetBytes": 0}},
           {"podRef": {"name": "idle", "namespace": "apps", "uid": "%s"},
            "memory": {"time": "%s", "workingSetBytes": %d}}]}
        """
        .formatted(
            time,
            memTotal - used,
            used,
            hog.getMetadata().getUid(),
            time,
            idle.getMetadata().getUid(),
            time,
            500 * MI);
  }

  private static AgentConfig config(Path dir, Path cgroupRoot, long threshold) throws Exception {
    Path cfg = dir.resolve("agent.yaml");
    Files.writeString(
        cfg,
        "nodeName: node-1\nstats: kubelet-proxy\nexecutor: delete\ninterval: 60s\n"
            + "metricsAddress: 127.0.0.1:0\nmemcgNotifier: false\nadaptivePoll: false\n"
            + "fsLayout: shared\ncgroupRoot: "
            + cgroupRoot
            + "\nkubeletRootDir: "
            + dir
            + "\nruntimeRootDir: "
            + dir
            + "\nstateDir: "
            + dir.resolve("state")
            + "\neviction:\n  evictionHard: {memory.available: \""
            + threshold
            + "\"}\n  enforceNodeAllocatable: []\n");
    return AgentConfig.resolve(
        dev.evictd.config.YamlNode.parse(cfg.toString(), Files.readAllBytes(cfg)),
        Map.of(),
        Map.of());
  }
}
