package dev.evictd.kube;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Single API requests through the fabric8 client's HTTP stack (its authentication, TLS and proxy
 * settings), each answered by an {@link ApiResponse} with the HTTP status: the executor maps
 * statuses to outcomes itself (404 pod gone, 409 precondition failed, 429 disruption budget) and
 * retries where it means to. Never throws for a failed request. Thread-safe.
 */
public final class KubeApi {
  /** Content type of a strategic merge patch. */
  public static final String STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json";

  /** Content type of a JSON patch (RFC 6902). */
  public static final String JSON_PATCH = "application/json-patch+json";

  /** Content type of JSON bodies. */
  public static final String JSON = "application/json";

  private final HttpClient http;
  private final String base;
  private final Duration requestTimeout;
  private final KubernetesSerialization serialization;

  /** Requests go to {@code client}'s API server; each one gives up after {@code requestTimeout}. */
  public KubeApi(KubernetesClient client, Duration requestTimeout) {
    this(
        client.getHttpClient(),
        client.getMasterUrl().toString(),
        requestTimeout,
        client.getKubernetesSerialization());
  }

  KubeApi(
      HttpClient http,
      String baseUrl,
      Duration requestTimeout,
      KubernetesSerialization serialization) {
    this.http = http;
    this.base = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
    this.requestTimeout = requestTimeout;
    this.serialization = serialization;
  }

  /**
   * The path of a namespaced pod: {@code /api/v1/namespaces/NS/pods/NAME}, each name
   * percent-encoded as one path segment ({@link #segment}).
   */
  public static String podPath(String namespace, String name) {
    return "/api/v1/namespaces/" + segment(namespace) + "/pods/" + segment(name);
  }

  /** The path of a namespace's Events: {@code /api/v1/namespaces/NS/events}. */
  public static String eventsPath(String namespace) {
    return "/api/v1/namespaces/" + segment(namespace) + "/events";
  }

  /**
   * {@code name} as one URL path segment: every byte of its UTF-8 form other than an RFC 3986
   * unreserved character ({@code A-Z a-z 0-9 - . _ ~}) percent-encoded, so no name can add a
   * segment, a query or a fragment to a request. Refuses what cannot be one segment: null, empty,
   * {@code .} and {@code ..}.
   */
  public static String segment(String name) {
    if (name == null || name.isEmpty() || name.equals(".") || name.equals("..")) {
      throw new dev.evictd.api.EvictdException(
          "not a name for a request path: "
              + (name == null
                  ? "null"
                  : "\"" + dev.evictd.api.EvictdException.oneLine(name) + "\""));
    }
    StringBuilder b = new StringBuilder(name.length());
    for (byte x : name.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
      int c = x & 0xff;
      if ((c >= 'A' && c <= 'Z')
          || (c >= 'a' && c <= 'z')
          || (c >= '0' && c <= '9')
          || c == '-'
          || c == '.'
          || c == '_'
          || c == '~') {
        b.append((char) c);
      } else {
        b.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)));
        b.append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
      }
    }
    return b.toString();
  }

  /**
   * Whether a pod reference carries a real uid (fixtures fall back to namespace/name when a pod has
   * none).
   */
  public static boolean isUid(String uid) {
    return uid != null && !uid.isEmpty() && !uid.contains("/");
  }

  /** Serializes a Kubernetes object (or map) as JSON. */
  public String json(Object value) {
    return serialization.asJson(value);
  }

  /** Parses JSON into {@code type}. */
  public <T> T parse(String json, Class<T> type) {
    return serialization.unmarshal(json, type);
  }

  /** GET {@code path}. */
  public ApiResponse get(String path) {
    return send("GET", path, null, null);
  }

  /** POST a JSON {@code body} to {@code path}. */
  public ApiResponse post(String path, String body) {
    return send("POST", path, JSON, body);
  }

  /** PATCH {@code path} with a patch of {@code contentType}. */
  public ApiResponse patch(String path, String contentType, String body) {
    return send("PATCH", path, contentType, body);
  }

  /** DELETE {@code path} with a JSON DeleteOptions {@code body}. */
  public ApiResponse delete(String path, String body) {
    return send("DELETE", path, JSON, body);
  }

  /** Sends one request; {@code path} starts with "/" and may carry a query. */
  public ApiResponse send(String method, String path, String contentType, String body) {
    if (Thread.currentThread().isInterrupted()) {
      // shutting down: a request not yet sent is not sent
      return ApiResponse.noResponse(method + " " + path + ": not sent: interrupted");
    }
    HttpRequest.Builder b =
        http.newHttpRequestBuilder()
            .uri(base + path)
            .timeout(requestTimeout.toMillis(), TimeUnit.MILLISECONDS);
    if (!"GET".equals(method)) {
      b.method(method, contentType, body == null ? "" : body);
    }
    CompletableFuture<HttpResponse<String>> future = http.sendAsync(b.build(), String.class);
    try {
      // the request timeout bounds the wait for headers; this bounds the whole exchange
      HttpResponse<String> r = future.get(requestTimeout.toMillis(), TimeUnit.MILLISECONDS);
      return new ApiResponse(r.code(), r.body(), null, retryAfter(r.header("Retry-After")), false);
    } catch (TimeoutException e) {
      future.cancel(true);
      return ApiResponse.noAnswer(
          where(method, path) + ": no response within " + requestTimeout.toMillis() + " ms");
    } catch (ExecutionException e) {
      Throwable cause = rootCause(e);
      if (cause instanceof HttpTimeoutException
          && !(cause instanceof HttpConnectTimeoutException)) {
        // the HTTP client's own timer fired first: the same failure as ours above
        return ApiResponse.noAnswer(
            where(method, path) + ": no response within " + requestTimeout.toMillis() + " ms");
      }
      String what =
          where(method, path)
              + ": "
              + (neverSent(cause) ? "cannot connect to " + hostPort() + ": " : "")
              + describe(cause);
      // a request that never connected was never carried out; one that lost its connection may
      // have been
      return neverSent(cause) ? ApiResponse.noResponse(what) : ApiResponse.noAnswer(what);
    } catch (InterruptedException e) {
      future.cancel(true);
      Thread.currentThread().interrupt();
      return ApiResponse.noAnswer(where(method, path) + ": interrupted");
    }
  }

  private String where(String method, String path) {
    return method + " " + path + " (" + hostPort() + ")";
  }

  /** {@code host:port} of the server, for messages (a connection error names where). */
  String hostPort() {
    try {
      java.net.URI u = java.net.URI.create(base);
      int port = u.getPort() >= 0 ? u.getPort() : "https".equals(u.getScheme()) ? 443 : 80;
      return u.getHost() + ":" + port;
    } catch (IllegalArgumentException e) {
      return base;
    }
  }

  private static Throwable rootCause(ExecutionException e) {
    return e.getCause() == null ? e : e.getCause();
  }

  /** Whether the request never left: no connection was made (anywhere in the cause chain). */
  private static boolean neverSent(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof java.net.ConnectException
          || c instanceof HttpConnectTimeoutException
          || c instanceof java.net.UnknownHostException
          || c instanceof java.net.NoRouteToHostException) {
        return true;
      }
    }
    return false;
  }

  /**
   * The {@code Retry-After} header: seconds (what the API server sends), null when absent or not a
   * number of seconds.
   */
  static java.time.Duration retryAfter(String header) {
    if (header == null || header.isBlank()) {
      return null;
    }
    try {
      long s = Long.parseLong(header.strip());
      return s < 0 ? null : java.time.Duration.ofSeconds(s);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private static String describe(Throwable t) {
    return dev.evictd.config.IoErrors.words(t);
  }
}
