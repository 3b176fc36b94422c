package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.config.YamlNode;
import dev.evictd.kube.KubeSettings;
import dev.evictd.testing.FakeKubeApiServer;
import dev.evictd.testing.ReservedPort;
import io.fabric8.kubernetes.api.model.Pod;
import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Start-up and shutdown of the whole agent against an API server and a kubelet that misbehave. */
class AgentLifecycleTest {
  /** One client for every probe and scrape (a JDK client per call leaves its threads behind). */
  private static final java.net.http.HttpClient HTTP = java.net.http.HttpClient.newHttpClient();

  static AgentConfig config(Path dir, int port, String extra) throws IOException {
    Path cfg = dir.resolve("agent.yaml");
    Files.writeString(
        cfg,
        "nodeName: node-1\nstats: kubelet-proxy\ninterval: 1s\nmemcgNotifier: false\nmetricsAddress: 127.0.0.1:"
            + port
            + "\nstateDir: "
            + dir.resolve("state")
            + "\nkubeletRootDir: "
            + dir
            + "\nruntimeRootDir: "
            + dir
            + "\neviction:\n  evictionHard: {memory.available: 1Gi}\n"
            + extra);
    return AgentConfig.resolve(
        YamlNode.parse(cfg.toString(), Files.readAllBytes(cfg)), Map.of(), Map.of());
  }

  /**
   * The status of a GET on a fresh connection, or -1 when nothing answers within 2 s (a refused
   * connection answers at once; 2 s leaves a loaded machine time to schedule the answer).
   */
  static int status(int port, String path) {
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(2000);
      s.getOutputStream()
          .write(
              ("GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                  .getBytes(StandardCharsets.US_ASCII));
      String line = new String(s.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
      return line.startsWith("HTTP/1.1 ") ? Integer.parseInt(line.substring(9, 12)) : -1;
    } catch (IOException | NumberFormatException e) {
      return -1;
    }
  }

  static String body(int port, String path) throws Exception {
    return HTTP.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(2))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  @Test
  void healthzAnswersWithinTwoSecondsWhileTheApiServerFailsAndTheKubeletHangs(@TempDir Path dir)
      throws Exception {
    // the prober needs the port while Agent.start is still running, so it is held, not released
    try (ReservedPort reserved = ReservedPort.bind();
        FakeKubeApiServer api = FakeKubeApiServer.start()) {
      int port = reserved.port();
      AgentConfig c = config(dir, port, "");
      api.fail("GET", "/api/v1/pods", 500, 100_000);
      api.delay("GET", "/api/v1/nodes/node-1/proxy/stats/summary", Duration.ofSeconds(60), 1000);
      AtomicLong firstHealthy = new AtomicLong();
      long t0 = System.nanoTime();
      Thread prober =
          new Thread(
              () -> {
                while (firstHealthy.get() == 0 && System.nanoTime() - t0 < 30_000_000_000L) {
                  if (status(port, "/healthz") == 200) {
                    firstHealthy.set(System.nanoTime());
                  }
                }
              });
      prober.start();
      Agent agent = Agent.start(c, Clock.systemUTC(), () -> api.client(KubeSettings.DEFAULTS));
      try {
        prober.join(30_000);
        assertThat(firstHealthy.get()).as("/healthz answered 200").isNotZero();
        assertThat((firstHealthy.get() - t0) / 1_000_000).as("ms to /healthz 200").isLessThan(2000);
        // still waiting for the pods and the kubelet: alive, not ready, and saying why
        assertThat(status(port, "/healthz")).isEqualTo(200);
        assertThat(status(port, "/readyz")).isEqualTo(503);
        assertThat(body(port, "/readyz")).contains("startup: starting: ");
      } finally {
        long t1 = System.nanoTime();
        agent.close();
        assertThat((System.nanoTime() - t1) / 1_000_000)
            .as("closing stops the start-up's waits")
            .isLessThan(10_000);
      }
      assertThat(status(port, "/healthz")).isEqualTo(-1);
    }
  }

  @Test
  void shutdownUnderASlowApiServerStartsNoNewRequestAndEndsWithinTenSeconds(@TempDir Path dir)
      throws Exception {
    AgentConfig c = config(dir, 0, "executor: delete\nfsLayout: shared\n");
    try (FakeKubeApiServer api = FakeKubeApiServer.start()) {
      Pod small = api.create(AgentEndToEndTest.pod("small", 0));
      Pod big = api.create(AgentEndToEndTest.pod("big", 0));
      api.summary("node-1", 200, AgentEndToEndTest.summary(small, big));
      // the API server takes a minute over every write: each attempt runs into the 10 s timeout
      api.delay("PATCH", "/api/v1/namespaces/apps/pods/.*", Duration.ofSeconds(60), 100);
      api.delay("DELETE", "/api/v1/namespaces/apps/pods/.*", Duration.ofSeconds(60), 100);
      Agent agent = Agent.start(c, Clock.systemUTC(), () -> api.client(KubeSettings.DEFAULTS));
      try {
        assertThat(
                FakeKubeApiServer.await(
                    () ->
                        !api.requests("PATCH", "/api/v1/namespaces/apps/pods/big/status").isEmpty(),
                    Duration.ofSeconds(30)))
            .as("an eviction is in flight")
            .isTrue();
      } finally {
        long t0 = System.nanoTime();
        agent.close(); // what the SIGTERM hook of evictd run does
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertThat(ms).as("ms from SIGTERM to stopped").isLessThan(10_000);
      }
      int writes = api.requests("PATCH", ".*").size() + api.requests("DELETE", ".*").size();
      Thread.sleep(1500);
      assertThat(api.requests("PATCH", ".*").size() + api.requests("DELETE", ".*").size())
          .as("no retry and no new request after shutdown")
          .isEqualTo(writes)
          .isEqualTo(1);
    }
  }
}
