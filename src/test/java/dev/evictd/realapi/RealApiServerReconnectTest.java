package dev.evictd.realapi;

import static dev.evictd.testing.FakeKubeApiServer.await;
import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.evictd.kube.NodePodInformer;
import dev.evictd.testing.TestBed;
import dev.evictd.testing.TestBedCluster;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The pod informer through an outage of a real kube-apiserver 1.32: the API server process alone is
 * stopped (etcd keeps the data) for longer than fabric8's default backoff would need to reach its
 * 32 s wait, then started again; the informer watches again within seconds of the server answering,
 * and the outage gets one warning. Skipped where the test bed is not running.
 */
@Tag("apiserver")
class RealApiServerReconnectTest {
  /**
   * How long the server stays down before it is started again (starting takes about 10 s more): by
   * then fabric8's default backoff (1, 2, 4 ... 32 s) would wait until 63 s after the stop.
   */
  private static final Duration OUTAGE = Duration.ofSeconds(25);

  /**
   * The bound on being current again after the server answers: the backoff's longest wait (4 s) and
   * a list and watch on a busy machine; the default backoff took 31 s here.
   */
  private static final Duration RECONNECT_BOUND = Duration.ofSeconds(15);

  @Test
  void afterAnOutageTheInformerWatchesAgainWithinSecondsOfTheServerAnswering() throws Exception {
    TestBed bed = TestBed.require();
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    Logger logger = (Logger) LoggerFactory.getLogger(NodePodInformer.class);
    log.start();
    logger.addAppender(log);
    try (KubernetesClient admin = bed.admin();
        TestBedCluster cluster = new TestBedCluster(bed, admin, "evictd-rc")) {
      String node = cluster.node(cluster.namespace() + "-node");
      cluster.pod("before", node, Map.of());
      try (NodePodInformer informer = new NodePodInformer(admin, node)) {
        assertThat(informer.start(Duration.ofSeconds(20))).isTrue();
        assertThat(await(() -> informer.viewAge().isZero(), Duration.ofSeconds(20))).isTrue();

        bed.stopApiServer();
        assertThat(await(() -> !informer.viewAge().isZero(), Duration.ofSeconds(20))).isTrue();
        Thread.sleep(OUTAGE.toMillis());
        // started in the background (up-apiserver.sh waits for /readyz, then writes objects of
        // its own); the time counts from the first answer this test sees (the server serves
        // lists before its /readyz says ok)
        var starting = java.util.concurrent.CompletableFuture.runAsync(bed::startApiServer);
        var api = new dev.evictd.kube.KubeApi(admin, Duration.ofSeconds(1));
        assertThat(await(() -> api.get("/version").code() > 0, Duration.ofSeconds(120))).isTrue();
        long answering = System.nanoTime();
        assertThat(await(() -> informer.viewAge().isZero(), Duration.ofSeconds(60))).isTrue();
        Duration reconnect = Duration.ofNanos(System.nanoTime() - answering);
        starting.get(120, java.util.concurrent.TimeUnit.SECONDS);
        System.out.printf(
            "informer current again %d ms after the API server answered%n", reconnect.toMillis());
        assertThat(reconnect).isLessThan(RECONNECT_BOUND);

        // the pods made meanwhile arrive through the new watch
        cluster.pod("after", node, Map.of());
        assertThat(
                await(
                    () ->
                        informer.activePods().stream()
                            .anyMatch(p -> p.getMetadata().getName().equals("after")),
                    Duration.ofSeconds(20)))
            .isTrue();
      }
    } finally {
      logger.detachAppender(log);
      if (!"ok".equals(bed.readyz())) {
        // a failure in between: never leave the next test without its server
        bed.startApiServer();
      }
    }
    List<String> lost =
        log.list.stream()
            .filter(e -> e.getLevel() == Level.WARN)
            .map(ILoggingEvent::getFormattedMessage)
            .filter(m -> m.contains("pod watch lost"))
            .toList();
    assertThat(lost).hasSize(1);
  }
}
