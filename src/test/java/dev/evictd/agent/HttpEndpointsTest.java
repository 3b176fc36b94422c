package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.ConfigException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class HttpEndpointsTest {
  static HttpResponse<String> get(HttpEndpoints e, String path) throws Exception {
    URI uri = URI.create("http://127.0.0.1:" + e.address().getPort() + path);
    return HttpClient.newHttpClient()
        .send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void servesMetricsHealthAndReadiness() throws Exception {
    AtomicBoolean ready = new AtomicBoolean(false);
    try (HttpEndpoints e =
        new HttpEndpoints(
            "127.0.0.1:0",
            () -> "evictd_up 1\n",
            () -> true,
            ready::get,
            () -> "rules sha256 abc\n")) {
      assertThat(e.address().getAddress().isLoopbackAddress()).isTrue();
      assertThat(get(e, "/metrics").body()).isEqualTo("evictd_up 1\n");
      assertThat(get(e, "/healthz").statusCode()).isEqualTo(200);
      HttpResponse<String> notReady = get(e, "/readyz");
      assertThat(notReady.statusCode()).isEqualTo(503);
      ready.set(true);
      HttpResponse<String> r = get(e, "/readyz");
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(r.body()).contains("ready", "rules sha256 abc");
    }
  }

  @Test
  void badAddressesAreConfigErrors() {
    assertThatThrownBy(() -> HttpEndpoints.parse("localhost"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("HOST:PORT");
    assertThatThrownBy(() -> HttpEndpoints.parse("localhost:http"))
        .hasMessageContaining("not a number");
    assertThatThrownBy(() -> HttpEndpoints.parse("localhost:70000"))
        .hasMessageContaining("out of range");
  }

  /** The first bytes of a TLS 1.2 ClientHello record, cut short: a TLS probe on a plain port. */
  static final byte[] PARTIAL_CLIENT_HELLO = {
    0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, (byte) 0xfc, 0x03, 0x03, 0x5a, 0x1b
  };

  static HttpEndpoints endpoints() {
    return new HttpEndpoints(
        "127.0.0.1:0", () -> "evictd_up 1\n", () -> true, () -> true, () -> "rules sha256 abc\n");
  }

  static Socket open(HttpEndpoints e) throws Exception {
    return new Socket("127.0.0.1", e.address().getPort());
  }

  /** A request on a fresh connection; returns the status line, failing after 1 s. */
  static String probe(HttpEndpoints e, String path) throws Exception {
    try (Socket s = open(e)) {
      s.setSoTimeout(1000);
      s.getOutputStream()
          .write(
              ("GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                  .getBytes(StandardCharsets.US_ASCII));
      byte[] all = s.getInputStream().readAllBytes();
      String answer = new String(all, StandardCharsets.US_ASCII);
      return answer.isEmpty() ? "" : answer.lines().findFirst().orElse("");
    }
  }

  /** Like {@link #probe}, with a connection closed or reset on accept (a refusal) as "". */
  static String probeOrRefused(HttpEndpoints e, String path) throws Exception {
    try {
      return probe(e, path);
    } catch (java.net.SocketException refused) {
      return "";
    }
  }

  @Test
  void probesAreAnsweredWithinASecondWhileFiftyHalfOpenConnectionsAreHeld() throws Exception {
    List<Socket> held = new ArrayList<>();
    try (HttpEndpoints e = endpoints()) {
      try {
        for (int i = 0; i < 50; i++) {
          Socket s = open(e);
          held.add(s);
          OutputStream out = s.getOutputStream();
          if (i % 2 == 0) {
            // a request line and then nothing: the server must not wait for the headers
            out.write("GET /metrics HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII));
          } else {
            out.write(PARTIAL_CLIENT_HELLO);
          }
          out.flush();
        }
        Thread.sleep(200); // the server has read what they sent and waits for more
        for (String path : List.of("/healthz", "/readyz", "/metrics", "/healthz")) {
          long t0 = System.nanoTime();
          assertThat(probe(e, path)).as(path).isEqualTo("HTTP/1.1 200 OK");
          assertThat((System.nanoTime() - t0) / 1_000_000).as(path + " ms").isLessThan(1000);
        }
        // the held connections were not answered in between: they are still waiting
        for (Socket s : held) {
          assertThat(s.isClosed()).isFalse();
        }
      } finally {
        for (Socket s : held) {
          s.close();
        }
      }
    }
  }

  @Test
  void aHalfOpenRequestIsClosedAfterTheRequestTimeout() throws Exception {
    try (HttpEndpoints e = endpoints();
        Socket s = open(e)) {
      s.getOutputStream().write("GET /metrics HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII));
      s.setSoTimeout((int) ((HttpEndpoints.REQUEST_TIMEOUT_SECONDS + 5) * 1000));
      long t0 = System.nanoTime();
      InputStream in = s.getInputStream();
      int read;
      try {
        read = in.read();
      } catch (java.net.SocketException closed) {
        read = -1; // reset by the server: closed as well
      }
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertThat(read).as("the server closed the connection without an answer").isEqualTo(-1);
      assertThat(ms)
          .isBetween(
              HttpEndpoints.REQUEST_TIMEOUT_SECONDS * 1000 - 1500,
              (HttpEndpoints.REQUEST_TIMEOUT_SECONDS + 3) * 1000);
    }
  }

  @Test
  void connectionsBeyondTheLimitAreClosedAndServingResumesWhenTheyGo() throws Exception {
    List<Socket> held = new ArrayList<>();
    try (HttpEndpoints e = endpoints()) {
      try {
        for (int i = 0; i < HttpEndpoints.MAX_CONNECTIONS; i++) {
          Socket s = open(e);
          s.getOutputStream().write("GET / HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII));
          held.add(s);
        }
        Thread.sleep(300);
        assertThat(probe(e, "/healthz")).as("beyond the limit: closed, not queued").isEmpty();
      } catch (java.net.SocketException refused) {
        // closed or reset on accept is the same refusal
      } finally {
        for (Socket s : held) {
          s.close();
        }
      }
      // The slots are freed as the connections close, not at the request timeout: probes are
      // answered again well before it (polled, since a busy machine may take a moment to notice
      // 64 closes; a refused probe is closed at once).
      long closed = System.nanoTime();
      long before = closed + (HttpEndpoints.REQUEST_TIMEOUT_SECONDS - 2) * 1_000_000_000L;
      String answer = probeOrRefused(e, "/healthz");
      while (!answer.equals("HTTP/1.1 200 OK") && System.nanoTime() < before) {
        Thread.sleep(50);
        answer = probeOrRefused(e, "/healthz");
      }
      assertThat(answer).isEqualTo("HTTP/1.1 200 OK");
      assertThat((System.nanoTime() - closed) / 1_000_000)
          .as("ms from the closes to an answer")
          .isLessThan((HttpEndpoints.REQUEST_TIMEOUT_SECONDS - 1) * 1000);
    }
  }
}
