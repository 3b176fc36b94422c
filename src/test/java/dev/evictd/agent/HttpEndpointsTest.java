package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.ConfigException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
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
}
