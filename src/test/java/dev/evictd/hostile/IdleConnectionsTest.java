package dev.evictd.hostile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.admission.AdmissionWebhookServer;
import dev.evictd.admission.EvictionAdmission;
import dev.evictd.admission.PodLookup;
import dev.evictd.admission.ReloadingKeyManager;
import dev.evictd.agent.HttpEndpoints;
import dev.evictd.testing.TestCertificates;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.net.SocketFactory;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Idle clients on the agent's endpoints and the admission webhook (issue 48, class 4): 64 and 200
 * connections held open at once - a third that never send a byte, a third that send half a request,
 * a third that finished a keep-alive request and stay idle - must not keep {@code /healthz} (the
 * liveness probe) or an eviction review from being answered, each within 2 s.
 */
class IdleConnectionsTest {
  /** How long one answer may take while the idle connections are held (a generous bound). */
  static final Duration BOUND = Duration.ofSeconds(2);

  @TempDir Path dir;

  /** Opens {@code n} connections of the three kinds on {@code port}; returns them open. */
  static List<Socket> hold(SocketFactory sockets, int port, int n, String request)
      throws IOException {
    List<Socket> held = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        Socket s = sockets.createSocket(InetAddress.getLoopbackAddress(), port);
        held.add(s);
        try {
          OutputStream out = s.getOutputStream();
          switch (i % 3) {
            case 0 -> {} // connected, silent
            case 1 -> { // half a request line
              out.write(request.substring(0, 9).getBytes(StandardCharsets.US_ASCII));
              out.flush();
            }
            default -> { // a whole keep-alive request, answered, then idle
              s.setSoTimeout(10_000);
              out.write(request.getBytes(StandardCharsets.US_ASCII));
              out.flush();
              readAnswer(s.getInputStream());
            }
          }
        } catch (IOException closedByTheServer) {
          // refused or closed by the server (past a limit, plain text to the TLS port): the
          // server's defence, not the test's concern; the socket stays open on this side
        }
      }
    } catch (IOException | RuntimeException e) {
      close(held);
      throw e;
    }
    return held;
  }

  /** Reads one answer's head and its Content-Length body; returns them. */
  static String readAnswer(InputStream in) throws IOException {
    StringBuilder head = new StringBuilder();
    while (!head.toString().endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        return head.toString();
      }
      head.append((char) b);
    }
    long length = 0;
    for (String line : head.toString().split("\r\n")) {
      if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
        length = Long.parseLong(line.substring(15).strip());
      }
    }
    return head + new String(in.readNBytes((int) length), StandardCharsets.UTF_8);
  }

  static void close(List<Socket> held) {
    for (Socket s : held) {
      try {
        s.close();
      } catch (IOException ignored) {
        // closing a test's socket
      }
    }
  }

  /** One request on a fresh connection: its answer, within {@link #BOUND}. */
  static String answered(SocketFactory sockets, int port, String request) throws IOException {
    long t0 = System.nanoTime();
    try (Socket s = sockets.createSocket()) {
      s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), (int) 2_000);
      s.setSoTimeout((int) BOUND.toMillis());
      s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
      s.getOutputStream().flush();
      String answer = readAnswer(s.getInputStream());
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(BOUND);
      return answer;
    }
  }

  static final String HEALTHZ =
      "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n";

  @ParameterizedTest
  @ValueSource(ints = {64, 200})
  void theAgentsProbesAreAnsweredWhileIdleConnectionsAreHeld(int idle) throws Exception {
    try (HttpEndpoints e =
        new HttpEndpoints("127.0.0.1:0", () -> "m\n", () -> true, () -> true, () -> "")) {
      SocketFactory plain = SocketFactory.getDefault();
      int port = e.address().getPort();
      List<Socket> held = hold(plain, port, idle, HEALTHZ);
      try {
        for (int i = 0; i < 5; i++) {
          assertThat(answered(plain, port, HEALTHZ))
              .as("probe %d", i)
              .startsWith("HTTP/1.1 200 OK");
          Thread.sleep(500);
        }
      } finally {
        close(held);
      }
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {64, 200})
  void theWebhookAnswersWhileIdleConnectionsAreHeld(int idle) throws Exception {
    TestCertificates ca = TestCertificates.ec();
    ca.issue("evictd-admission-webhook", "127.0.0.1").writeTo(dir);
    ReloadingKeyManager keys =
        new ReloadingKeyManager(
            dir.resolve("tls.crt"),
            dir.resolve("tls.key"),
            ReloadingKeyManager.DEFAULT_CHECK_INTERVAL);
    PodLookup lookup = (namespace, name) -> new PodLookup.Found("uid-web", "node-a");
    try (AdmissionWebhookServer server =
        new AdmissionWebhookServer(
            new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
            keys,
            new EvictionAdmission(EvictionAdmission.DEFAULT_SERVICE_ACCOUNT, lookup))) {
      SSLContext trust = TestCertificates.trusting(ca.ca());
      SocketFactory tls = trust.getSocketFactory();
      int port = server.address().getPort();
      List<Socket> held =
          new ArrayList<>(hold(SocketFactory.getDefault(), port, idle / 2, HEALTHZ));
      try {
        held.addAll(hold(tls, port, idle - idle / 2, HEALTHZ));
        byte[] review = review().getBytes(StandardCharsets.UTF_8);
        String post =
            "POST "
                + AdmissionWebhookServer.PATH
                + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                + review.length
                + "\r\n\r\n"
                + new String(review, StandardCharsets.UTF_8);
        for (int i = 0; i < 5; i++) {
          assertThat(answered(tls, port, HEALTHZ)).as("probe %d", i).startsWith("HTTP/1.1 200 OK");
          assertThat(answered(tls, port, post))
              .as("review %d", i)
              .startsWith("HTTP/1.1 200 OK")
              .contains("\"allowed\":true");
          Thread.sleep(500);
        }
      } finally {
        close(held);
      }
    }
  }

  /** evictd's own Eviction of apps/web (uid-web) from node-a, as the API server sends it. */
  static String review() {
    return """
        {"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{
         "uid":"705ab4f5-6393-11e8-b7cc-42010a800002",
         "kind":{"group":"policy","version":"v1","kind":"Eviction"},
         "resource":{"group":"","version":"v1","resource":"pods"},"subResource":"eviction",
         "requestKind":{"group":"policy","version":"v1","kind":"Eviction"},
         "requestResource":{"group":"","version":"v1","resource":"pods"},
         "requestSubResource":"eviction","name":"web","namespace":"apps","operation":"CREATE",
         "userInfo":{"username":"system:serviceaccount:kube-system:evictd",
          "extra":{"authentication.kubernetes.io/node-name":["node-a"]}},
         "object":{"kind":"Eviction","apiVersion":"policy/v1",
          "metadata":{"name":"web","namespace":"apps"},
          "deleteOptions":{"preconditions":{"uid":"uid-web"}}},
         "dryRun":false}}
        """;
  }
}
