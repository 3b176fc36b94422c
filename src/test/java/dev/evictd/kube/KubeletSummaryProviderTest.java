package dev.evictd.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.evictd.api.StatsException;
import dev.evictd.stats.Summary;
import dev.evictd.testing.FakeKubeApiServer;
import dev.evictd.testing.FakeKubelet;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

class KubeletSummaryProviderTest {
  private static final Instant NOW = Instant.parse("2024-05-01T12:00:30Z");
  private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  private static final Duration MAX_AGE = Duration.ofMinutes(1);

  static final String SUMMARY =
      """
      {
        "node": {
          "nodeName": "node-a",
          "memory": {"time": "2024-05-01T12:00:20Z", "availableBytes": 1073741824, "workingSetBytes": "3Gi"},
          "fs": {"time": "2024-05-01T12:00:20Z", "availableBytes": 5000, "capacityBytes": 10000,
                 "inodesFree": 100, "inodes": 1000},
          "runtime": {"imageFs": {"time": "2024-05-01T12:00:20Z", "availableBytes": 700, "capacityBytes": 900}},
          "rlimit": {"time": "2024-05-01T12:00:20Z", "maxpid": 4194304, "curproc": 300},
          "systemContainers": [{"name": "pods", "memory": {"time": "2024-05-01T12:00:20Z",
                                "availableBytes": 100, "workingSetBytes": 900}}],
          "cpu": {"usageNanoCores": 1}
        },
        "pods": [
          {"podRef": {"name": "web", "namespace": "ns", "uid": "u1"},
           "memory": {"workingSetBytes": 600},
           "containers": [{"name": "main", "memory": {"workingSetBytes": 600}, "rootfs": {"usedBytes": 10}}],
           "volume": [{"name": "data", "usedBytes": 7}],
           "ephemeral-storage": {"usedBytes": 17},
           "process_stats": {"process_count": 4}}
        ]
      }
      """;

  private FakeKubeApiServer api;
  private KubernetesClient client;

  @BeforeEach
  void setUp() {
    api = FakeKubeApiServer.start();
    client = api.client(KubeSettings.DEFAULTS);
  }

  @AfterEach
  void tearDown() {
    client.close();
    api.close();
  }

  private KubeletSummaryProvider viaProxy() {
    return KubeletSummaryProvider.viaApiServer(client, "node-a", TIMEOUT, MAX_AGE, CLOCK);
  }

  @Test
  void readsTheSummaryThroughTheNodeProxy() {
    api.summary("node-a", 200, SUMMARY);
    Summary s = viaProxy().summary();

    assertThat(s.node().memory().availableBytes()).isEqualTo(1073741824L);
    assertThat(s.node().memory().workingSetBytes()).isEqualTo(3L * 1024 * 1024 * 1024);
    assertThat(s.node().memory().time()).isEqualTo(Instant.parse("2024-05-01T12:00:20Z"));
    assertThat(s.node().fs().inodesFree()).isEqualTo(100L);
    assertThat(s.node().runtime().imageFs().availableBytes()).isEqualTo(700L);
    assertThat(s.node().rlimit().curproc()).isEqualTo(300L);
    assertThat(s.node().systemContainer("pods").memory().availableBytes()).isEqualTo(100L);
    assertThat(s.pods())
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.podRef().uid()).isEqualTo("u1");
              assertThat(p.volumes())
                  .singleElement()
                  .satisfies(v -> assertThat(v.usedBytes()).isEqualTo(7L));
              assertThat(p.ephemeralStorage().usedBytes()).isEqualTo(17L);
              assertThat(p.processStats().processCount()).isEqualTo(4L);
            });
    assertThat(api.requests("GET", "/api/v1/nodes/node-a/proxy/stats/summary")).hasSize(1);
  }

  @Test
  void aFieldOutsideTheSchemaIsSaidOnceAtInfoNotAtEverySync() {
    // a newer kubelet's field, in every pod (and container): one field each, said once however
    // many syncs and providers read it
    String newer =
        SUMMARY
            .replace(
                "\"cpu\": {\"usageNanoCores\": 1}",
                "\"cpu\": {\"usageNanoCores\": 1, \"burstNanoCoresV9\": 2}")
            .replace(
                "\"memory\": {\"workingSetBytes\": 600},",
                "\"memory\": {\"workingSetBytes\": 600, \"zswapBytesV9\": 1},");
    assertThat(newer).contains("burstNanoCoresV9").contains("zswapBytesV9");
    api.summary("node-a", 200, newer);
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    Logger logger = (Logger) LoggerFactory.getLogger(KubeletSummaryProvider.class);
    Level level = logger.getLevel();
    logger.setLevel(Level.INFO);
    log.start();
    logger.addAppender(log);
    try (KubeletSummaryProvider p = viaProxy();
        KubeletSummaryProvider other = viaProxy()) {
      for (int i = 0; i < 3; i++) {
        assertThat(p.summary().node().memory().availableBytes()).isEqualTo(1073741824L);
      }
      assertThat(other.summary().pods().get(0).memory().workingSetBytes()).isEqualTo(600L);
    } finally {
      logger.detachAppender(log);
      logger.setLevel(level);
    }
    assertThat(log.list).extracting(ILoggingEvent::getLevel).containsOnly(Level.INFO);
    assertThat(log.list)
        .extracting(ILoggingEvent::getFormattedMessage)
        .filteredOn(m -> m.contains("V9"))
        .containsExactly(
            "kubelet summary of node node-a: field \"node.cpu.burstNanoCoresV9\" is not in the stats"
                + " summary evictd knows (known keys: psi, time, usageCoreNanoSeconds,"
                + " usageNanoCores); it is not read (a newer kubelet's field is harmless; said once"
                + " per field)",
            "kubelet summary of node node-a: field \"pods[].memory.zswapBytesV9\" is not in the"
                + " stats summary evictd knows (known keys: availableBytes,"
                + " majorPageFaults, pageFaults, psi, rssBytes, time, usageBytes, workingSetBytes); it"
                + " is not read (a newer kubelet's field is harmless; said once per field)",
            "kubelet summary of node node-a: field \"pods[].containers[].memory.zswapBytesV9\" is"
                + " not in the stats summary evictd knows (known keys: availableBytes,"
                + " majorPageFaults, pageFaults, psi, rssBytes, time, usageBytes, workingSetBytes); it"
                + " is not read (a newer kubelet's field is harmless; said once per field)");
  }

  @Test
  void missingFieldsStayNull() {
    api.summary(
        "node-a",
        200,
        """
        {"node": {"nodeName": "node-a", "memory": {"time": "2024-05-01T12:00:20Z", "workingSetBytes": 5}},
         "pods": [{"podRef": {"name": "web", "namespace": "ns", "uid": "u1"}}]}
        """);
    Summary s = viaProxy().summary();

    assertThat(s.node().memory().availableBytes()).isNull();
    assertThat(s.node().fs()).isNull();
    assertThat(s.node().runtime()).isNull();
    assertThat(s.node().rlimit()).isNull();
    assertThat(s.pods().get(0).memory()).isNull();
    assertThat(s.pods().get(0).ephemeralStorage()).isNull();
    assertThat(s.pods().get(0).processStats()).isNull();
    assertThat(s.pods().get(0).containers()).isEmpty();
  }

  @Test
  void aFailingKubeletIsAStatsException() {
    api.summary(
        "node-a", 500, "{\"kind\":\"Status\",\"code\":500,\"message\":\"kubelet is not ready\"}");
    assertThatThrownBy(() -> viaProxy().summary())
        .isInstanceOf(StatsException.class)
        .hasMessage("kubelet summary of node node-a: HTTP 500: kubelet is not ready");
  }

  @Test
  void anUnknownNodeIsAStatsException() {
    assertThatThrownBy(() -> viaProxy().summary())
        .isInstanceOf(StatsException.class)
        .hasMessageContaining("HTTP 404");
  }

  @Test
  void anUnreadableSummaryIsAStatsException() {
    api.summary("node-a", 200, "{\"node\": {\"memory\": {\"availableBytes\": \"lots\"}}}");
    assertThatThrownBy(() -> viaProxy().summary())
        .isInstanceOf(StatsException.class)
        .hasMessageContaining("unreadable summary")
        .hasMessageContaining("lots");
    // a value of the wrong type: its field and what it should be, without Java's type names
    api.summary(
        "node-a", 200, "{\"node\": {\"nodeName\": \"node-a\", \"rlimit\": {\"maxpid\": [1]}}}");
    assertThatThrownBy(() -> viaProxy().summary())
        .isInstanceOf(StatsException.class)
        .hasMessageStartingWith(
            "kubelet summary of node node-a: unreadable summary: node.rlimit.maxpid: ")
        .hasMessageNotContaining("java.")
        .hasMessageNotContaining("`")
        .hasMessageNotContaining("START_ARRAY");
  }

  @Test
  void aStaleSummaryIsAStatsException() {
    api.summary("node-a", 200, SUMMARY.replace("2024-05-01T12:00:20Z", "2024-05-01T11:50:00Z"));
    assertThatThrownBy(() -> viaProxy().summary())
        .isInstanceOf(StatsException.class)
        .hasMessageContaining("stale summary")
        .hasMessageContaining("630 s old");
  }

  @Test
  void aSummaryWithoutNodeStatisticsIsAStatsExceptionNotAFreshRead() {
    api.summary("node-a", 200, "{\"pods\": []}");
    assertThatThrownBy(() -> viaProxy().summary())
        .isInstanceOf(StatsException.class)
        .hasMessage("kubelet summary of node node-a: summary has no \"node\" statistics");
  }

  @Test
  void statisticsFromTheFutureAreRefused() {
    api.summary("node-a", 200, SUMMARY.replace("2024-05-01T12:00:20Z", "2034-05-01T12:00:20Z"));
    assertThatThrownBy(() -> viaProxy().summary())
        .isInstanceOf(StatsException.class)
        .hasMessageContaining("node statistics dated 2034-05-01T12:00:20Z")
        .hasMessageContaining("ahead of this node's clock (allowed skew 10 s)");
  }

  @Test
  void aSmallClockSkewIsAccepted() {
    // 5 s ahead of the agent's clock: within the allowed skew
    api.summary("node-a", 200, SUMMARY.replace("2024-05-01T12:00:20Z", "2024-05-01T12:00:35Z"));
    assertThat(viaProxy().summary().node().memory().time())
        .isEqualTo(Instant.parse("2024-05-01T12:00:35Z"));
  }

  @Test
  void anotherNodesSummaryIsAStatsException() {
    api.summary(
        "node-a", 200, SUMMARY.replace("\"nodeName\": \"node-a\"", "\"nodeName\": \"node-b\""));
    assertThatThrownBy(() -> viaProxy().summary())
        .isInstanceOf(StatsException.class)
        .hasMessageContaining("summary is of node node-b");
  }

  @Test
  void aSlowKubeletTimesOut() {
    api.delay("GET", "/api/v1/nodes/node-a/proxy/stats/summary", Duration.ofSeconds(30), 1);
    var provider =
        KubeletSummaryProvider.viaApiServer(
            client, "node-a", Duration.ofMillis(300), MAX_AGE, CLOCK);
    long t0 = System.nanoTime();
    assertThatThrownBy(provider::summary)
        .isInstanceOf(StatsException.class)
        .hasMessageContaining("no response within 300 ms");
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
  }

  @Test
  void readsTheKubeletDirectlyWithTheTokenAndTheCa(@TempDir Path dir) throws Exception {
    Path token = Files.writeString(dir.resolve("token"), "token-1\n");
    try (FakeKubelet kubelet = new FakeKubelet("token-1", SUMMARY);
        KubeletSummaryProvider direct =
            KubeletSummaryProvider.direct(
                new KubeletEndpoint(URI.create(kubelet.url()), token, kubelet.certificate(), false),
                "node-a",
                TIMEOUT,
                MAX_AGE,
                CLOCK)) {
      assertThat(direct.summary().node().fs().capacityBytes()).isEqualTo(10000L);

      // the token file is read for every request: a rotated token is picked up
      Files.writeString(token, "token-2");
      kubelet.acceptToken("token-2");
      assertThat(direct.summary().node().fs().capacityBytes()).isEqualTo(10000L);
      assertThat(kubelet.requests())
          .extracting(FakeKubelet.Request::authorization)
          .containsExactly("Bearer token-1", "Bearer token-2");
    }
  }

  @Test
  void aRefusedTokenIsAStatsException(@TempDir Path dir) throws Exception {
    Path token = Files.writeString(dir.resolve("token"), "wrong");
    try (FakeKubelet kubelet = new FakeKubelet("right", SUMMARY);
        KubeletSummaryProvider direct =
            KubeletSummaryProvider.direct(
                new KubeletEndpoint(URI.create(kubelet.url()), token, null, true),
                "node-a",
                TIMEOUT,
                MAX_AGE,
                CLOCK)) {
      assertThatThrownBy(direct::summary)
          .isInstanceOf(StatsException.class)
          .hasMessageContaining("HTTP 401");
    }
  }

  @Test
  void anUntrustedKubeletCertificateIsAStatsExceptionUnlessVerificationIsSkipped(@TempDir Path dir)
      throws Exception {
    Path token = Files.writeString(dir.resolve("token"), "t");
    try (FakeKubelet kubelet = new FakeKubelet("t", SUMMARY);
        KubeletSummaryProvider strict =
            KubeletSummaryProvider.direct(
                new KubeletEndpoint(URI.create(kubelet.url()), token, null, false),
                "node-a",
                TIMEOUT,
                MAX_AGE,
                CLOCK);
        KubeletSummaryProvider insecure =
            KubeletSummaryProvider.direct(
                new KubeletEndpoint(URI.create(kubelet.url()), token, null, true),
                "node-a",
                TIMEOUT,
                MAX_AGE,
                CLOCK)) {
      assertThatThrownBy(strict::summary)
          .isInstanceOf(StatsException.class)
          .hasMessageContaining("is not signed by a CA this JVM trusts")
          .hasMessageContaining("set kubeletCaFile");
      assertThat(insecure.summary().node().nodeName()).isEqualTo("node-a");
    }
  }

  private static KubeletSummaryProvider direct(KubeletEndpoint e) {
    return KubeletSummaryProvider.direct(e, "node-a", TIMEOUT, MAX_AGE, CLOCK);
  }

  @Test
  void theConfiguredCaVerifiesTheKubeletDialledByIp(@TempDir Path dir) throws Exception {
    Path token = Files.writeString(dir.resolve("token"), "t");
    try (FakeKubelet kubelet = new FakeKubelet("t", SUMMARY);
        KubeletSummaryProvider p =
            direct(
                new KubeletEndpoint(
                    URI.create(kubelet.ipUrl()), token, kubelet.certificate(), false))) {
      assertThat(p.summary().node().nodeName()).isEqualTo("node-a");
    }
  }

  @Test
  void anotherCaIsRefusedWithAClearMessage(@TempDir Path dir) throws Exception {
    Path token = Files.writeString(dir.resolve("token"), "t");
    Path other = FakeKubelet.otherCa(dir);
    try (FakeKubelet kubelet = new FakeKubelet("t", SUMMARY);
        KubeletSummaryProvider p =
            direct(new KubeletEndpoint(URI.create(kubelet.ipUrl()), token, other, false))) {
      assertThatThrownBy(p::summary)
          .isInstanceOf(StatsException.class)
          .hasMessageStartingWith(
              "kubelet summary of node node-a from " + kubelet.ipUrl() + "/stats/summary: ")
          .hasMessageContaining("is not signed by the CA in " + other)
          .hasMessageContaining(
              "set kubeletCaFile to the CA of the kubelet's serving certificate, or"
                  + " kubeletInsecureSkipTLSVerify: true");
      // the token never went out: the handshake failed before any request
      assertThat(kubelet.requests()).isEmpty();
    }
  }

  @Test
  void aCertificateForTheNodesNameNeedsTheTlsServerName(@TempDir Path dir) throws Exception {
    Path token = Files.writeString(dir.resolve("token"), "t");
    try (FakeKubelet kubelet = FakeKubelet.withCertificateFor("t", SUMMARY, "node-a");
        KubeletSummaryProvider byIp =
            direct(
                new KubeletEndpoint(
                    URI.create(kubelet.ipUrl()), token, kubelet.certificate(), false));
        KubeletSummaryProvider named =
            direct(
                new KubeletEndpoint(
                    URI.create(kubelet.ipUrl()),
                    token,
                    kubelet.certificate(),
                    false,
                    "node-a",
                    false));
        KubeletSummaryProvider wrongName =
            direct(
                new KubeletEndpoint(
                    URI.create(kubelet.ipUrl()),
                    token,
                    kubelet.certificate(),
                    false,
                    "node-b",
                    false))) {
      assertThatThrownBy(byIp::summary)
          .isInstanceOf(StatsException.class)
          .hasMessageContaining(
              "the kubelet's certificate names node-a, not 127.0.0.1: set kubeletTlsServerName");
      assertThat(named.summary().node().nodeName()).isEqualTo("node-a");
      assertThatThrownBy(wrongName::summary)
          .isInstanceOf(StatsException.class)
          .hasMessageContaining("names node-a, not node-b");
      assertThat(kubelet.requests()).hasSize(1);
    }
  }

  /**
   * The kubeadm default: the kubelet's self-signed certificate for its host name, trusted through
   * its own pki/kubelet.crt (mounted read-only with /var/lib/kubelet), dialled at the host IP.
   */
  @Test
  void aSelfSignedKubeletIsTrustedThroughItsOwnCertificateFile(@TempDir Path dir) throws Exception {
    Path token = Files.writeString(dir.resolve("token"), "t");
    try (FakeKubelet kubelet = FakeKubelet.withCertificateFor("t", SUMMARY, "node-a");
        KubeletSummaryProvider p =
            direct(
                new KubeletEndpoint(
                    URI.create(kubelet.ipUrl()),
                    token,
                    kubelet.kubeletCrt(),
                    false,
                    "node-a",
                    false))) {
      assertThat(p.summary().node().nodeName()).isEqualTo("node-a");
    }
  }

  @Test
  void plainHttpIsRefusedUnlessAllowedAndThenCarriesNoToken(@TempDir Path dir) throws Exception {
    Path token = Files.writeString(dir.resolve("token"), "secret");
    try (FakeKubelet kubelet = FakeKubelet.plainHttp(null, SUMMARY)) {
      URI url = URI.create(kubelet.ipUrl());
      assertThatThrownBy(() -> new KubeletEndpoint(url, token, null, false))
          .isInstanceOf(dev.evictd.api.ConfigException.class)
          .hasMessage(
              "kubeletUrl "
                  + url
                  + ": plain HTTP would send the token in clear; use https, or set"
                  + " kubeletAllowHttp: true (no token is then sent)");
      try (KubeletSummaryProvider p =
          direct(new KubeletEndpoint(url, token, null, false, null, true))) {
        assertThat(p.summary().node().nodeName()).isEqualTo("node-a");
      }
      assertThat(kubelet.requests())
          .singleElement()
          .satisfies(r -> assertThat(r.authorization()).isNull());
    }
  }

  @Test
  void missingTokenAndCaFilesAreNamedAtStart(@TempDir Path dir) throws Exception {
    Path token = Files.writeString(dir.resolve("token"), "t");
    Path empty = Files.writeString(dir.resolve("empty"), "  \n");
    Path notPem = Files.writeString(dir.resolve("ca.crt"), "hello");
    URI url = URI.create("https://127.0.0.1:10250");
    assertThatThrownBy(() -> direct(new KubeletEndpoint(url, dir.resolve("nope"), null, false)))
        .isInstanceOf(dev.evictd.api.ConfigException.class)
        .hasMessage("kubeletTokenFile " + dir.resolve("nope") + ": no such file");
    assertThatThrownBy(() -> direct(new KubeletEndpoint(url, empty, null, false)))
        .isInstanceOf(dev.evictd.api.ConfigException.class)
        .hasMessage("kubeletTokenFile " + empty + ": the file is empty");
    assertThatThrownBy(
            () ->
                direct(new KubeletEndpoint(url, token, KubeletEndpoint.SERVICE_ACCOUNT_CA, false)))
        .isInstanceOf(dev.evictd.api.ConfigException.class)
        .hasMessage(
            "kubeletCaFile "
                + KubeletEndpoint.SERVICE_ACCOUNT_CA
                + ": no such file (the service account's; outside a pod set kubeletCaFile)");
    assertThatThrownBy(() -> direct(new KubeletEndpoint(url, token, notPem, false)))
        .isInstanceOf(dev.evictd.api.ConfigException.class)
        .hasMessageStartingWith("kubeletCaFile " + notPem + ": ");
  }

  @Test
  void aForbiddenTokenNamesTheUserAndThePermission(@TempDir Path dir) throws Exception {
    Path token = Files.writeString(dir.resolve("token"), "t");
    try (FakeKubelet kubelet = new FakeKubelet("t", SUMMARY);
        KubeletSummaryProvider p =
            direct(
                new KubeletEndpoint(
                    URI.create(kubelet.url()), token, kubelet.certificate(), false))) {
      kubelet.forbid("system:serviceaccount:kube-system:evictd");
      assertThatThrownBy(p::summary)
          .isInstanceOf(StatsException.class)
          .hasMessageContaining(
              "HTTP 403: not authorized as system:serviceaccount:kube-system:evictd")
          .hasMessageEndingWith("(grant get on nodes/stats)");
    }
  }
}
