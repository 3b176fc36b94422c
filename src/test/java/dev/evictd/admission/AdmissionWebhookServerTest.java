package dev.evictd.admission;

import static dev.evictd.testing.TestPods.pod;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.ConfigException;
import dev.evictd.cli.Main;
import dev.evictd.kube.KubeApi;
import dev.evictd.kube.KubeSettings;
import dev.evictd.testing.FakeKubeApiServer;
import dev.evictd.testing.TestCertificates;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code evictd admission-webhook}'s server end to end: HTTPS with a certificate issued by a test
 * CA, AdmissionReviews posted as the API server posts them, pods looked up in the fake API server;
 * the certificate renewed in a Secret volume's layout; the server's limits.
 */
class AdmissionWebhookServerTest {
  static final JsonMapper JSON = JsonMapper.builder().build();

  @TempDir Path dir;
  FakeKubeApiServer api;
  KubernetesClient client;
  AdmissionWebhookServer server;
  TestCertificates ca;
  Path tls;

  @BeforeEach
  void start() throws IOException {
    api = FakeKubeApiServer.start();
    client = api.client(KubeSettings.DEFAULTS);
    ca = TestCertificates.ec();
    tls = dir.resolve("tls");
    secretVolume(tls, "..2026_12_01_a", ca.issue("evictd-admission-webhook", "127.0.0.1"));
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
    api.close();
    client.close();
  }

  /**
   * The files of a kubernetes.io/tls Secret as the kubelet mounts them: {@code tls.crt} and {@code
   * tls.key} link through {@code ..data} to a timestamped directory, and an update writes a new
   * directory and renames a new {@code ..data} link over the old one.
   */
  static void secretVolume(Path volume, String version, TestCertificates.Issued issued)
      throws IOException {
    Path data = volume.resolve(version);
    issued.writeTo(data);
    Path link = volume.resolve("..data_tmp");
    Files.deleteIfExists(link);
    Files.createSymbolicLink(link, Path.of(version));
    Files.move(link, volume.resolve("..data"), StandardCopyOption.ATOMIC_MOVE);
    for (String f : new String[] {"tls.crt", "tls.key"}) {
      if (!Files.exists(volume.resolve(f), java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
        Files.createSymbolicLink(volume.resolve(f), Path.of("..data", f));
      }
    }
  }

  ReloadingKeyManager keys(Duration checkInterval) {
    return new ReloadingKeyManager(tls.resolve("tls.crt"), tls.resolve("tls.key"), checkInterval);
  }

  /**
   * Serves with the command's lookup timeout: the JDK server's response bound (5 s) counts from the
   * end of the request to the end of the answer, so the lookup must give up before it. The client
   * is warmed up first (its first request loads classes, seconds on a loaded machine).
   */
  AdmissionWebhookServer serve(ReloadingKeyManager keys) {
    PodLookup lookup = PodLookup.api(new KubeApi(client, PodLookup.DEFAULT_TIMEOUT));
    assertThat(lookup.pod("warm-up", "none")).isInstanceOf(PodLookup.NotFound.class);
    EvictionAdmission admission =
        new EvictionAdmission(EvictionAdmission.DEFAULT_SERVICE_ACCOUNT, lookup);
    server =
        new AdmissionWebhookServer(
            new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), keys, admission);
    return server;
  }

  URI uri(String path) {
    return URI.create("https://127.0.0.1:" + server.address().getPort() + path);
  }

  static HttpClient https(SSLContext trust) {
    return HttpClient.newBuilder()
        .sslContext(trust)
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5))
        .build();
  }

  static HttpResponse<String> post(HttpClient c, URI uri, String type, byte[] body)
      throws IOException, InterruptedException {
    return c.send(
        HttpRequest.newBuilder(uri)
            .timeout(Duration.ofSeconds(10))
            .header("Content-Type", type)
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  static byte[] evictionReview(Pod p, String node) {
    return EvictionAdmissionTest.bytes(
        EvictionAdmissionTest.evictionReview(
            EvictionAdmissionTest.user(EvictionAdmission.DEFAULT_SERVICE_ACCOUNT, node), p));
  }

  static JsonNode response(HttpResponse<String> r) {
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json");
    return JSON.readTree(r.body()).path("response");
  }

  @Test
  void answersAdmissionReviewsOverVerifiedTls() throws Exception {
    serve(keys(ReloadingKeyManager.DEFAULT_CHECK_INTERVAL));
    Pod own = api.create(pod("apps", "own", "node-a"));
    Pod other = api.create(pod("apps", "other", "node-b"));
    HttpClient c = https(TestCertificates.trusting(ca.ca()));

    JsonNode allowed =
        response(
            post(
                c,
                uri(AdmissionWebhookServer.PATH),
                "application/json",
                evictionReview(own, "node-a")));
    assertThat(allowed.path("allowed").asBoolean(false)).isTrue();
    JsonNode denied =
        response(
            post(
                c,
                uri(AdmissionWebhookServer.PATH),
                "application/json",
                evictionReview(other, "node-a")));
    assertThat(denied.path("allowed").asBoolean(true)).isFalse();
    assertThat(denied.path("status").path("message").asString())
        .isEqualTo(
            "evictd on node node-a may not CREATE pods/eviction apps/other: the pod is on node"
                + " node-b");

    // the API server sends application/json; a charset parameter is fine too
    assertThat(
            response(
                    post(
                        c,
                        uri(AdmissionWebhookServer.PATH),
                        "application/json; charset=utf-8",
                        evictionReview(own, "node-a")))
                .path("allowed")
                .asBoolean(false))
        .isTrue();

    // a client that does not trust the webhook's CA gets no answer at all
    HttpClient stranger = https(TestCertificates.trusting(TestCertificates.ec().ca()));
    assertThatThrownBy(
            () ->
                post(
                    stranger,
                    uri(AdmissionWebhookServer.PATH),
                    "application/json",
                    evictionReview(own, "node-a")))
        .isInstanceOf(SSLHandshakeException.class);
  }

  @Test
  void servesARenewedCertificateWithoutARestart() throws Exception {
    ReloadingKeyManager keys = keys(Duration.ZERO);
    serve(keys);
    Pod own = api.create(pod("apps", "own", "node-a"));
    HttpClient oldTrust = https(TestCertificates.trusting(ca.ca()));
    assertThat(
            response(
                    post(
                        oldTrust,
                        uri(AdmissionWebhookServer.PATH),
                        "application/json",
                        evictionReview(own, "node-a")))
                .path("allowed")
                .asBoolean(false))
        .isTrue();

    // cert-manager renews (here: with another CA, so the two can be told apart); the kubelet
    // swaps the Secret volume's ..data link
    TestCertificates renewedCa = TestCertificates.ec();
    TestCertificates.Issued renewed = renewedCa.issue("evictd-admission-webhook-2", "127.0.0.1");
    secretVolume(tls, "..2026_12_01_b", renewed);
    HttpClient newTrust = https(TestCertificates.trusting(renewedCa.ca()));
    assertThat(
            response(
                    post(
                        newTrust,
                        uri(AdmissionWebhookServer.PATH),
                        "application/json",
                        evictionReview(own, "node-a")))
                .path("allowed")
                .asBoolean(false))
        .isTrue();
    assertThat(keys.chain().get(0)).isEqualTo(renewed.cert());
    assertThatThrownBy(
            () ->
                post(
                    https(TestCertificates.trusting(ca.ca())),
                    uri(AdmissionWebhookServer.PATH),
                    "application/json",
                    evictionReview(own, "node-a")))
        .isInstanceOf(SSLHandshakeException.class);
  }

  @Test
  void aHalfUpdatedPairKeepsTheCertificateInService() throws Exception {
    // plain files (no Secret volume), rewritten one after the other
    Path plain = dir.resolve("plain");
    TestCertificates.Issued first = ca.issue("first", "127.0.0.1");
    first.writeTo(plain);
    ReloadingKeyManager keys =
        new ReloadingKeyManager(plain.resolve("tls.crt"), plain.resolve("tls.key"), Duration.ZERO);
    TestCertificates.Issued second = ca.issue("second", "127.0.0.1");
    Files.writeString(plain.resolve("tls.crt"), TestCertificates.pem(second.cert()));
    // the key is not written yet: the new certificate does not match the old key
    assertThat(keys.reloadIfChanged()).isFalse();
    assertThat(keys.chain().get(0)).isEqualTo(first.cert());
    assertThat(keys.reloadIfChanged()).as("the same half pair is not read again").isFalse();
    Files.writeString(plain.resolve("tls.key"), TestCertificates.pkcs8(second.keys()));
    assertThat(keys.reloadIfChanged()).isTrue();
    assertThat(keys.chain().get(0)).isEqualTo(second.cert());
    assertThat(keys.reloadIfChanged()).as("unchanged").isFalse();
    // a file that disappears keeps the pair in service too
    Files.delete(plain.resolve("tls.key"));
    assertThat(keys.reloadIfChanged()).isFalse();
    assertThat(keys.chain().get(0)).isEqualTo(second.cert());
  }

  @Test
  void checksTheFilesAtStartWithOneLineNamingTheFile() throws IOException {
    Path crt = tls.resolve("tls.crt");
    Path key = tls.resolve("tls.key");
    Path missing = dir.resolve("missing.crt");
    assertThatThrownBy(() -> new ReloadingKeyManager(missing, key, Duration.ZERO))
        .isInstanceOf(ConfigException.class)
        .hasMessage("--tls-cert-file " + missing + ": no such file");
    Path notPem = Files.writeString(dir.resolve("not.crt"), "hello\n");
    assertThatThrownBy(() -> ServingCertificate.read(notPem, key))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("--tls-cert-file " + notPem + ": ");
    // keys in OpenSSL's traditional forms: what to change
    TestCertificates.Issued rsa = TestCertificates.rsa().issue("rsa", "127.0.0.1");
    Path rsaCrt = Files.writeString(dir.resolve("rsa.crt"), TestCertificates.pem(rsa.cert()));
    Path pkcs1 =
        Files.writeString(dir.resolve("rsa.key"), TestCertificates.traditional(rsa.keys()));
    assertThatThrownBy(() -> ServingCertificate.read(rsaCrt, pkcs1))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "--tls-key-file "
                + pkcs1
                + ": RSA PRIVATE KEY is not supported: write the key as PKCS#8 (BEGIN PRIVATE"
                + " KEY): cert-manager spec.privateKey.encoding: PKCS8, or openssl pkcs8 -topk8"
                + " -nocrypt -in KEY");
    TestCertificates.Issued ec = ca.issue("ec", "127.0.0.1");
    Path sec1 = Files.writeString(dir.resolve("ec.key"), TestCertificates.traditional(ec.keys()));
    assertThatThrownBy(() -> ServingCertificate.read(crt, sec1))
        .hasMessageContaining("EC PRIVATE KEY is not supported: write the key as PKCS#8");
    // an RSA pair in PKCS#8 is fine
    Path rsaKey = Files.writeString(dir.resolve("rsa8.key"), TestCertificates.pkcs8(rsa.keys()));
    assertThat(ServingCertificate.read(rsaCrt, rsaKey).key().getAlgorithm()).isEqualTo("RSA");
    // a key of another certificate
    Path otherKey = Files.writeString(dir.resolve("other.key"), TestCertificates.pkcs8(ec.keys()));
    assertThatThrownBy(() -> ServingCertificate.read(crt, otherKey))
        .hasMessageStartingWith(
            "--tls-key-file " + otherKey + ": not the private key of the certificate in " + crt);
    assertThatThrownBy(() -> ServingCertificate.read(crt, rsaKey))
        .hasMessageContaining("not the private key of the certificate");
  }

  @Test
  void theCommandRefusesBadFilesAndSettingsWithExitTwo() {
    Path crt = tls.resolve("tls.crt");
    Path key = tls.resolve("tls.key");
    Path missing = dir.resolve("nope.key");
    Map<String[], String> cases =
        Map.of(
            new String[] {"--tls-cert-file", crt.toString(), "--tls-key-file", missing.toString()},
            "evictd: --tls-key-file " + missing + ": no such file",
            new String[] {
              "--tls-cert-file",
              crt.toString(),
              "--tls-key-file",
              key.toString(),
              "--service-account",
              "evictd"
            },
            "evictd: --service-account evictd: expected system:serviceaccount:NAMESPACE:NAME",
            new String[] {
              "--tls-cert-file", crt.toString(), "--tls-key-file", key.toString(), "--address", "x"
            },
            "evictd: --address x: expected HOST:PORT");
    for (var c : cases.entrySet()) {
      StringWriter out = new StringWriter();
      StringWriter err = new StringWriter();
      String[] args = new String[c.getKey().length + 1];
      args[0] = "admission-webhook";
      System.arraycopy(c.getKey(), 0, args, 1, c.getKey().length);
      int code = Main.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
      assertThat(code).as(err.toString()).isEqualTo(Main.BAD_INPUT);
      assertThat(err.toString()).startsWith(c.getValue());
      assertThat(err.toString().strip().lines()).hasSize(1);
    }
  }

  @Test
  void isBoundedAndAnswersWhatIsNoReviewWithoutAStackTrace() throws Exception {
    serve(keys(ReloadingKeyManager.DEFAULT_CHECK_INTERVAL));
    HttpClient c = https(TestCertificates.trusting(ca.ca()));
    URI review = uri(AdmissionWebhookServer.PATH);

    HttpResponse<String> get =
        c.send(HttpRequest.newBuilder(review).GET().build(), HttpResponse.BodyHandlers.ofString());
    assertThat(get.statusCode()).isEqualTo(405);
    assertThat(post(c, review, "text/plain", "{}".getBytes(StandardCharsets.UTF_8)).statusCode())
        .isEqualTo(415);
    HttpResponse<String> bad =
        post(c, review, "application/json", "{\"kind\":".getBytes(StandardCharsets.UTF_8));
    assertThat(bad.statusCode()).isEqualTo(400);
    assertThat(bad.body()).startsWith("evictd admission webhook: not an AdmissionReview");
    assertThat(bad.body()).doesNotContain("Exception", "\tat ");

    byte[] huge = new byte[AdmissionWebhookServer.MAX_BODY_BYTES + 1];
    java.util.Arrays.fill(huge, (byte) ' ');
    HttpResponse<String> tooLarge = post(c, review, "application/json", huge);
    assertThat(tooLarge.statusCode()).isEqualTo(413);
    assertThat(tooLarge.body())
        .contains("over " + AdmissionWebhookServer.MAX_BODY_BYTES + " bytes");

    HttpResponse<String> health =
        c.send(
            HttpRequest.newBuilder(uri(AdmissionWebhookServer.HEALTH_PATH)).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(health.statusCode()).isEqualTo(200);
    assertThat(health.body()).isEqualTo("ok\n");
  }

  @Test
  void aClientThatSendsHalfARequestDoesNotHoldTheServer() throws Exception {
    serve(keys(ReloadingKeyManager.DEFAULT_CHECK_INTERVAL));
    Pod own = api.create(pod("apps", "own", "node-a"));
    SSLContext trust = TestCertificates.trusting(ca.ca());
    // ten clients that start a review and never finish it
    java.util.List<SSLSocket> stalled = new java.util.ArrayList<>();
    try {
      for (int i = 0; i < 10; i++) {
        SSLSocket s =
            (SSLSocket)
                trust
                    .getSocketFactory()
                    .createSocket(InetAddress.getLoopbackAddress(), server.address().getPort());
        s.startHandshake();
        OutputStream out = s.getOutputStream();
        out.write(
            ("POST "
                    + AdmissionWebhookServer.PATH
                    + " HTTP/1.1\r\nHost: x\r\n"
                    + "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"kind\"")
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        stalled.add(s);
      }
      HttpClient c = https(trust);
      assertThat(
              response(
                      post(
                          c,
                          uri(AdmissionWebhookServer.PATH),
                          "application/json",
                          evictionReview(own, "node-a")))
                  .path("allowed")
                  .asBoolean(false))
          .isTrue();
      // and a stalled one is closed by the server, within the request timeout and its timer (a
      // read that times out here throws SocketTimeoutException, which fails the test)
      SSLSocket first = stalled.get(0);
      first.setSoTimeout(
          (int) Duration.ofSeconds(AdmissionWebhookServer.REQUEST_TIMEOUT_SECONDS + 10).toMillis());
      long t0 = System.nanoTime();
      InputStream in = first.getInputStream();
      int read;
      try {
        read = in.read();
      } catch (java.net.SocketException | javax.net.ssl.SSLException reset) {
        read = -1; // reset by the server: closed as well
      }
      assertThat(read).as("the server closed the stalled connection").isEqualTo(-1);
      assertThat(Duration.ofNanos(System.nanoTime() - t0))
          .isLessThan(Duration.ofSeconds(AdmissionWebhookServer.REQUEST_TIMEOUT_SECONDS + 5));
    } finally {
      for (SSLSocket s : stalled) {
        s.close();
      }
    }
  }
}
