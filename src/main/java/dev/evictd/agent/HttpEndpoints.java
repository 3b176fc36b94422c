package dev.evictd.agent;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.evictd.api.ConfigException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Serves {@code /metrics} (Prometheus), {@code /healthz} and {@code /readyz} on one address
 * (localhost by default).
 *
 * <p>The JDK's server reads a request on an executor thread with blocking I/O, so one client that
 * sends half a request holds that thread. Here every connection gets its own thread (at most {@link
 * #MAX_CONNECTIONS} connections are accepted, more are closed at once), a request must arrive
 * within {@link #REQUEST_TIMEOUT_SECONDS} and its answer be taken within {@link
 * #RESPONSE_TIMEOUT_SECONDS}, else the connection is closed: a stalled or hostile client cannot
 * delay the kubelet's probes.
 */
public final class HttpEndpoints implements AutoCloseable {
  /**
   * Connections served at once; a connection beyond it is closed on accept. Far above what probes
   * and the API server need: 64 idle clients filled the 64 this was and failed every probe until
   * they were closed. A connection that sends nothing costs a socket, not a thread, and is closed
   * after 2 s; one that sends part of a request holds a thread (of a small stack) for 5 s at most.
   */
  public static final int MAX_CONNECTIONS = 256;

  /** The stack of a connection's thread: it parses a request line and headers, and answers. */
  static final long THREAD_STACK_BYTES = 256 * 1024;

  /** How long a client may take to send its request line and headers. */
  public static final long REQUEST_TIMEOUT_SECONDS = 5;

  /** How long a client may take to read the answer. */
  public static final long RESPONSE_TIMEOUT_SECONDS = 5;

  static {
    // The JDK server reads its limits once, from system properties, when its first instance is
    // made; evictd's is the only one in the process. Explicit -D settings win.
    setIfAbsent("jdk.httpserver.maxConnections", MAX_CONNECTIONS);
    setIfAbsent("sun.net.httpserver.maxReqTime", REQUEST_TIMEOUT_SECONDS);
    setIfAbsent("sun.net.httpserver.maxRspTime", RESPONSE_TIMEOUT_SECONDS);
    // idle keep-alive connections: a few, closed after 2 s (the JDK's default keeps 200 for 30 s,
    // so 64 idle clients took every connection for 30 s and more)
    setIfAbsent("sun.net.httpserver.maxIdleConnections", 8);
    setIfAbsent("sun.net.httpserver.idleInterval", 2);
    setIfAbsent("sun.net.httpserver.clockTick", 1000);
  }

  private static void setIfAbsent(String key, long value) {
    if (System.getProperty(key) == null) {
      System.setProperty(key, Long.toString(value));
    }
  }

  private final HttpServer server;
  private final ExecutorService executor;

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
      server = HttpServer.create(addr, MAX_CONNECTIONS);
    } catch (IOException e) {
      throw new ConfigException(
          "--metrics-address " + address + ": cannot listen: " + e.getMessage());
    }
    // A thread per connection: the server never has more than MAX_CONNECTIONS exchanges at once
    // (the small margin covers a thread that has answered but not yet returned to the pool).
    AtomicInteger n = new AtomicInteger();
    executor =
        new ThreadPoolExecutor(
            0,
            MAX_CONNECTIONS + 8,
            30,
            TimeUnit.SECONDS,
            new SynchronousQueue<>(),
            r -> {
              Thread t =
                  new Thread(null, r, "evictd-http-" + n.incrementAndGet(), THREAD_STACK_BYTES);
              t.setDaemon(true);
              return t;
            });
    server.setExecutor(executor);
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
    executor.shutdownNow();
  }
}
