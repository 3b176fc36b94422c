package dev.evictd.hostile;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.agent.HttpEndpoints;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * 64 idle keep-alive connections do not keep /healthz from answering (issue 48, class 4: it failed
 * for 32 to 38 s, the JDK server's idle interval): idle connections are few and short-lived.
 */
class IdleConnectionsTest {
  private static void getAndStayIdle(Socket s) throws IOException {
    s.setSoTimeout(5000);
    s.getOutputStream()
        .write(
            "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    InputStream in = s.getInputStream();
    String head = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
    assertThat(head).startsWith("HTTP/1.1 200");
  }

  private static int status(int port) {
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(1000);
      s.getOutputStream()
          .write(
              "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
                  .getBytes(StandardCharsets.US_ASCII));
      String line = new String(s.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
      return line.startsWith("HTTP/1.1 ") ? Integer.parseInt(line.substring(9, 12)) : -1;
    } catch (IOException | NumberFormatException e) {
      return -1;
    }
  }

  @Test
  void healthzAnswersBeside64IdleKeepAliveConnections() throws Exception {
    try (HttpEndpoints e =
        new HttpEndpoints("127.0.0.1:0", () -> "", () -> true, () -> true, () -> "")) {
      int port = e.address().getPort();
      List<Socket> idle = new ArrayList<>();
      try {
        for (int i = 0; i < HttpEndpoints.MAX_CONNECTIONS; i++) {
          Socket s = new Socket("127.0.0.1", port);
          idle.add(s);
          getAndStayIdle(s);
        }
        // far below the 30 s the JDK's defaults kept them
        assertThat(
                dev.evictd.cli.RunSignalsTestAccess.await(
                    () -> status(port) == 200, Duration.ofSeconds(10)))
            .isTrue();
      } finally {
        for (Socket s : idle) {
          s.close();
        }
      }
    }
  }
}
