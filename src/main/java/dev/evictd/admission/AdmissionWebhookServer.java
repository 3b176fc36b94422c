package dev.evictd.admission;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import dev.evictd.api.ConfigException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admission webhook's HTTPS server: {@code POST} {@value #PATH} takes an AdmissionReview
 * ({@code admission.k8s.io/v1}) and answers it with {@link EvictionAdmission}; {@code GET} {@value
 * #HEALTH_PATH} answers {@code ok} (the probes). TLS 1.2 or 1.3 with the certificate of a {@link
 * ReloadingKeyManager}.
 *
 * <p>Bounded like the agent's endpoints: a thread per connection, at most {@link #MAX_CONNECTIONS}
 * connections (more are closed on accept), a request must arrive within {@link
 * #REQUEST_TIMEOUT_SECONDS} and its answer be made and taken within {@link
 * #RESPONSE_TIMEOUT_SECONDS}; a body over {@link #MAX_BODY_BYTES} is refused (413) without being
 * read. A failure in handling is a 500 with one line, never a stack trace.
 */
public final class AdmissionWebhookServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(AdmissionWebhookServer.class);

  /** The path the ValidatingWebhookConfiguration's service points at. */
  public static final String PATH = "/validate-eviction";

  /** The probes' path. */
  public static final String HEALTH_PATH = "/healthz";

  /** The port served unless configured. */
  public static final int DEFAULT_PORT = 8443;

  /**
   * Connections served at once; a connection beyond it is closed on accept. Far above what probes
   * and the API server need: 64 idle clients filled the 64 this was and failed every probe until
   * they were closed. A connection that sends nothing costs a socket, not a thread, and is closed
   * after 2 s; one that sends part of a request holds a thread (of a small stack) for 5 s at most.
   */
  public static final int MAX_CONNECTIONS = 256;

  /** The stack of a connection's thread: it parses a request line and headers, and answers. */
  static final long THREAD_STACK_BYTES = 256 * 1024;

  /**
   * The largest request body read: an Eviction's AdmissionReview is under 2 KiB (a pod's token adds
   * little to userInfo), so this leaves room while bounding memory to MAX_CONNECTIONS times it.
   */
  public static final int MAX_BODY_BYTES = 256 * 1024;

  /** How much of a body that is too large is read (and dropped) to answer 413 cleanly. */
  static final long MAX_DRAIN_BYTES = 4L * MAX_BODY_BYTES;

  /** How long a client may take to send its request. */
  public static final long REQUEST_TIMEOUT_SECONDS = 5;

  /**
   * How long answering may take, from the end of the request to the end of the answer (the JDK
   * server counts the handler's time too): the pod lookup ({@link PodLookup#DEFAULT_TIMEOUT}) gives
   * up before it, and the API server ({@code timeoutSeconds: 5}) no later.
   */
  public static final long RESPONSE_TIMEOUT_SECONDS = 5;

  static {
    // The JDK server reads its limits once, from system properties, when its first instance is
    // made (the same as the agent's endpoints; explicit -D settings win).
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

  private final HttpsServer server;
  private final ExecutorService executor;
  private final EvictionAdmission admission;

  /** Starts serving {@code admission} on {@code address} with the certificate of {@code keys}. */
  public AdmissionWebhookServer(
      InetSocketAddress address, ReloadingKeyManager keys, EvictionAdmission admission) {
    this.admission = admission;
    SSLContext tls;
    try {
      tls = SSLContext.getInstance("TLS");
      tls.init(new KeyManager[] {keys}, null, null);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("the JDK offers no TLS context", e);
    }
    try {
      server = HttpsServer.create(address, MAX_CONNECTIONS);
    } catch (IOException e) {
      throw new ConfigException(
          "--address "
              + address.getHostString()
              + ":"
              + address.getPort()
              + ": cannot listen: "
              + e.getMessage());
    }
    server.setHttpsConfigurator(
        new HttpsConfigurator(tls) {
          @Override
          public void configure(HttpsParameters params) {
            SSLParameters p = tls.getDefaultSSLParameters();
            // the API server's webhook client speaks TLS 1.2 and 1.3; nothing older is offered
            p.setProtocols(new String[] {"TLSv1.3", "TLSv1.2"});
            p.setNeedClientAuth(false);
            params.setSSLParameters(p);
          }
        });
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
                  new Thread(null, r, "evictd-webhook-" + n.incrementAndGet(), THREAD_STACK_BYTES);
              t.setDaemon(true);
              return t;
            });
    server.setExecutor(executor);
    server.createContext(PATH, this::review);
    server.createContext(
        HEALTH_PATH,
        ex -> {
          try (ex) {
            boolean get =
                "GET".equals(ex.getRequestMethod()) || "HEAD".equals(ex.getRequestMethod());
            respond(ex, get ? 200 : 405, "text/plain", get ? "ok\n" : "");
          }
        });
    server.start();
  }

  /** The address actually bound (useful with port 0). */
  public InetSocketAddress address() {
    return server.getAddress();
  }

  /**
   * {@code HOST:PORT} as the address to listen on; no host ({@code :8443}) is loopback, never every
   * interface (bind one explicitly, e.g. the pod IP).
   */
  public static InetSocketAddress parseAddress(String address) {
    int colon = address.lastIndexOf(':');
    if (colon < 0) {
      throw new ConfigException("--address " + address + ": expected HOST:PORT");
    }
    String host = address.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    int port;
    try {
      port = Integer.parseInt(address.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new ConfigException("--address " + address + ": port is not a number");
    }
    if (port < 0 || port > 65535) {
      throw new ConfigException("--address " + address + ": port out of range");
    }
    return host.isEmpty()
        ? new InetSocketAddress(InetAddress.getLoopbackAddress(), port)
        : new InetSocketAddress(host, port);
  }

  private void review(HttpExchange ex) {
    try (ex) {
      if (!"POST".equals(ex.getRequestMethod())) {
        ex.getResponseHeaders().set("Allow", "POST");
        respond(ex, 405, "text/plain", "evictd admission webhook: POST an AdmissionReview\n");
        return;
      }
      String type = ex.getRequestHeaders().getFirst("Content-Type");
      if (type == null || !type.toLowerCase(java.util.Locale.ROOT).startsWith("application/json")) {
        respond(
            ex,
            415,
            "text/plain",
            "evictd admission webhook: expected Content-Type application/json\n");
        return;
      }
      String length = ex.getRequestHeaders().getFirst("Content-Length");
      byte[] body;
      try (InputStream in = ex.getRequestBody()) {
        body = length != null && tooLong(length) ? null : in.readNBytes(MAX_BODY_BYTES + 1);
        if (body == null || body.length > MAX_BODY_BYTES) {
          // read on (not kept) before answering: a connection closed with unread data is reset,
          // and the reset can discard the answer before the client reads it
          drain(in);
          respond(ex, 413, "text/plain", tooLarge());
          return;
        }
      }
      EvictionAdmission.Answer a = admission.review(body);
      respond(ex, a.status(), a.contentType(), a.body());
    } catch (IOException e) {
      // the client went away, or was too slow: nothing to answer
      LOG.debug("webhook connection closed: {}", e.toString());
    } catch (RuntimeException e) {
      LOG.error("internal error answering an admission review: {}", e.toString());
      try {
        respond(ex, 500, "text/plain", "evictd admission webhook: internal error\n");
      } catch (IOException | RuntimeException ignored) {
        // headers already sent, or the connection is gone: the API server sees a failed call
      }
    }
  }

  /** Reads and drops what is left of a body, up to {@link #MAX_DRAIN_BYTES}. */
  private static void drain(InputStream in) throws IOException {
    byte[] buffer = new byte[8192];
    long total = 0;
    int n;
    while (total < MAX_DRAIN_BYTES && (n = in.read(buffer)) > 0) {
      total += n;
    }
  }

  private static boolean tooLong(String contentLength) {
    try {
      return Long.parseLong(contentLength.strip()) > MAX_BODY_BYTES;
    } catch (NumberFormatException e) {
      return true;
    }
  }

  private static String tooLarge() {
    return "evictd admission webhook: the request body is over " + MAX_BODY_BYTES + " bytes\n";
  }

  private static void respond(HttpExchange ex, int code, String type, String body)
      throws IOException {
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", type);
    if (b.length == 0 || "HEAD".equals(ex.getRequestMethod())) {
      ex.sendResponseHeaders(code, -1);
      return;
    }
    ex.sendResponseHeaders(code, b.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(b);
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
