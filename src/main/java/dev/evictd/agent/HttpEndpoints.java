package dev.evictd.agent;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.evictd.api.ConfigException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Serves {@code /metrics} (Prometheus), {@code /healthz} and {@code /readyz} on one address
 * (localhost by default).
 */
public final class HttpEndpoints implements AutoCloseable {
  private final HttpServer server;

  /**
   * Starts serving.
   *
   * @param address {@code HOST:PORT}; port 0 picks a free one
   */
  public HttpEndpoints(
      String address,
      Supplier<String> metrics,
      BooleanSupplier healthy,
      BooleanSupplier ready,
      Supplier<String> readyBody) {
    InetSocketAddress addr = parse(address);
    try {
      server = HttpServer.create(addr, 16);
    } catch (IOException e) {
      throw new ConfigException(
          "--metrics-address " + address + ": cannot listen: " + e.getMessage());
    }
    server.setExecutor(
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "evictd-http");
              t.setDaemon(true);
              return t;
            }));
    server.createContext(
        "/metrics",
        ex -> respond(ex, 200, "text/plain; version=0.0.4; charset=utf-8", metrics.get()));
    server.createContext(
        "/healthz",
        ex ->
            respond(
                ex,
                healthy.getAsBoolean() ? 200 : 503,
                "text/plain",
                healthy.getAsBoolean() ? "ok\n" : "unhealthy\n"));
    server.createContext(
        "/readyz",
        ex -> {
          boolean ok = ready.getAsBoolean();
          respond(
              ex, ok ? 200 : 503, "text/plain", (ok ? "ready\n" : "not ready\n") + readyBody.get());
        });
    server.start();
  }

  /** The address actually bound (useful with port 0). */
  public InetSocketAddress address() {
    return server.getAddress();
  }

  static InetSocketAddress parse(String address) {
    int colon = address.lastIndexOf(':');
    if (colon < 0) {
      throw new ConfigException("--metrics-address " + address + ": expected HOST:PORT");
    }
    String host = address.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port;
    try {
      port = Integer.parseInt(address.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new ConfigException("--metrics-address " + address + ": port is not a number");
    }
    if (port < 0 || port > 65535) {
      throw new ConfigException("--metrics-address " + address + ": port out of range");
    }
    // no host given: loopback, never every interface (bind one explicitly, e.g. the pod IP)
    return host.isEmpty()
        ? new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), port)
        : new InetSocketAddress(host, port);
  }

  private static void respond(HttpExchange ex, int code, String type, String body)
      throws IOException {
    try (ex) {
      if (!"GET".equals(ex.getRequestMethod()) && !"HEAD".equals(ex.getRequestMethod())) {
        ex.sendResponseHeaders(405, -1);
        return;
      }
      byte[] b = body.getBytes(StandardCharsets.UTF_8);
      ex.getResponseHeaders().set("Content-Type", type);
      ex.sendResponseHeaders(code, b.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(b);
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
    ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
  }
}
