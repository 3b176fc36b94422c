package dev.evictd.testing;

import dev.evictd.kube.KubeClients;
import dev.evictd.kube.KubeSettings;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventList;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.Eviction;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * fabric8's mock API server in CRUD mode, with what evictd needs that CRUD mode lacks, done as the
 * real API server (1.32) does it: policy/v1 evictions (PodDisruptionBudget refusals as 429 with the
 * cause {@code DisruptionBudget}; accepted ones set the {@code DisruptionTarget} condition and
 * delete gracefully), strategic-merge status patches of pod conditions (merged by type; a different
 * metadata.uid is refused with 422), deletes with DeleteOptions (uid preconditions, 409; a pod
 * bound to a node stays with deletionTimestamp and deletionGracePeriodSeconds until its kubelet
 * removes it: {@link #kubeletRemoves}), throttling 429s with {@code Retry-After}, answers that come
 * late (after the request was carried out), watches answered 410 Gone, JSON patches of a Node with
 * a {@code test} of its resourceVersion (422 when it fails), and the node proxy's summary. The
 * {@code spec.nodeName} field selector, which CRUD mode cannot evaluate, is dropped (the informer
 * filters by node as well, and tests assert the selector was sent).
 *
 * <p>Every request evictd's code sends is recorded (tests and the RBAC check read them); the test's
 * own set-up goes straight to the store and is not recorded. Faults (status codes, delays) can be
 * queued per method and path.
 */
public final class FakeKubeApiServer implements AutoCloseable {
  /** A request the server received. */
  public record Request(String method, String path, String contentType, String body) {}

  /** Every request received by any fake API server in this JVM: the RBAC test checks them all. */
  public static final List<Request> ALL_REQUESTS = new CopyOnWriteArrayList<>();

  private static final Pattern POD = Pattern.compile("/api/v1/namespaces/([^/]+)/pods/([^/?]+)");
  private static final Pattern POD_STATUS =
      Pattern.compile("/api/v1/namespaces/([^/]+)/pods/([^/?]+)/status");
  private static final Pattern POD_EVICTION =
      Pattern.compile("/api/v1/namespaces/([^/]+)/pods/([^/?]+)/eviction");
  private static final Pattern SUMMARY =
      Pattern.compile("/api/v1/nodes/([^/]+)/proxy/stats/summary");
  private static final Pattern NODE = Pattern.compile("/api/v1/nodes/([^/?]+)");
  private static final Pattern EVENT =
      Pattern.compile("/api/v1/namespaces/([^/]+)/events/([^/?]+)");
  private static final Pattern CONFIGZ = Pattern.compile("/api/v1/nodes/([^/]+)/proxy/configz");
  private static final Pattern NODE_NAME_SELECTOR =
      Pattern.compile("fieldSelector=spec\\.nodeName%3D[^&]*&?");

  private final KubernetesSerialization json = new KubernetesSerialization();
  private final KubernetesCrudDispatcher crud = new KubernetesCrudDispatcher();
  private final KubernetesMockServer server;
  private final List<Request> requests = new CopyOnWriteArrayList<>();
  private final List<Fault> faults = new CopyOnWriteArrayList<>();
  private final Set<String> pdbBlocked = ConcurrentHashMap.newKeySet();
  private final Map<String, Supplier<MockResponse>> summaries = new ConcurrentHashMap<>();

  private record Fault(
      String method, Pattern path, AtomicInteger remaining, Supplier<MockResponse> response) {}

  /** Requests answered late: carried out when the answer is sent, {@code delay} after arrival. */
  private record Slow(String method, Pattern path, AtomicInteger remaining, Duration delay) {}

  private final List<Slow> slow = new CopyOnWriteArrayList<>();
  private final AtomicInteger expiredWatches = new AtomicInteger();
  private final java.util.concurrent.ScheduledExecutorService late =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "fake-api-late-answers");
            t.setDaemon(true);
            return t;
          });
  private volatile java.time.Clock clock = java.time.Clock.systemUTC();

  private FakeKubeApiServer() {
    server =
        new KubernetesMockServer(
            new Context(), new MockWebServer(), new HashMap<>(), new Router(), false);
    server.init();
  }

  /** Starts a server on a free local port. */
  public static FakeKubeApiServer start() {
    return new FakeKubeApiServer();
  }

  /** The server's base URL. */
  public String url() {
    return server.url("/");
  }

  /** A client for this server built the way evictd builds its own ({@link KubeClients}). */
  public KubernetesClient client(KubeSettings settings) {
    Config config =
        new ConfigBuilder(Config.empty())
            .withMasterUrl(url())
            .withNamespace("default")
            .withWatchReconnectInterval(100)
            .build();
    return KubeClients.create(config, settings);
  }

  /** Requests received so far. */
  public List<Request> requests() {
    return List.copyOf(requests);
  }

  /**
   * Requests received so far with {@code method} whose path (without query) matches {@code
   * pathRegex}.
   */
  public List<Request> requests(String method, String pathRegex) {
    Pattern p = Pattern.compile(pathRegex);
    return requests.stream()
        .filter(r -> r.method().equals(method) && p.matcher(r.path().split("\\?", 2)[0]).matches())
        .toList();
  }

  /** Stores {@code pod} as a client would create it; returns it as stored (uid, creation time). */
  public Pod create(Pod pod) {
    String ns = pod.getMetadata().getNamespace();
    MockResponse r = store(HttpMethod.POST, "/api/v1/namespaces/" + ns + "/pods", json.asJson(pod));
    return parse(r, Pod.class);
  }

  /** Replaces {@code pod} in the store (watchers see an update). */
  public Pod update(Pod pod) {
    String path = podPath(pod.getMetadata().getNamespace(), pod.getMetadata().getName());
    pod.getMetadata().setResourceVersion(null);
    return parse(store(HttpMethod.PUT, path, json.asJson(pod)), Pod.class);
  }

  /** Removes a pod from the store (watchers see a delete). */
  public void remove(String namespace, String name) {
    crud.handleDelete(podPath(namespace, name));
  }

  /** The stored pod, if any. */
  public Optional<Pod> pod(String namespace, String name) {
    MockResponse r = crud.handleGet(podPath(namespace, name));
    return r.code() == 200 ? Optional.of(parse(r, Pod.class)) : Optional.empty();
  }

  /** The stored Events of {@code namespace}. */
  public List<Event> events(String namespace) {
    MockResponse r = crud.handleGet("/api/v1/namespaces/" + namespace + "/events");
    return r.code() == 200 ? parse(r, EventList.class).getItems() : List.of();
  }

  /**
   * Evictions of this pod are refused as a PodDisruptionBudget refuses them (429, cause {@code
   * DisruptionBudget}, the budget's message).
   */
  public void blockEvictions(String namespace, String name) {
    pdbBlocked.add(namespace + "/" + name);
  }

  /** The budget's message in refusals (as the real server words it for a budget named "web"). */
  public static final String BUDGET_MESSAGE =
      "The disruption budget web needs 2 healthy pods and has 2 currently";

  /**
   * The next {@code times} matching requests are throttled as API Priority and Fairness does it:
   * 429, {@code Retry-After: retryAfterSeconds}, and no DisruptionBudget cause.
   */
  public void throttle(String method, String pathRegex, int retryAfterSeconds, int times) {
    faults.add(
        new Fault(
            method,
            Pattern.compile(pathRegex),
            new AtomicInteger(times),
            () ->
                status(429, "Too many requests, please try again later.")
                    .setHeader("Retry-After", String.valueOf(retryAfterSeconds))));
  }

  /**
   * The next {@code times} matching requests are answered only after {@code delay}, and carried out
   * then (a server that is slow, not broken: a client that gave up earlier does not know).
   */
  public void answerLate(String method, String pathRegex, Duration delay, int times) {
    slow.add(new Slow(method, Pattern.compile(pathRegex), new AtomicInteger(times), delay));
  }

  /**
   * Before the next {@code times} matching requests are handled, {@code action} runs (e.g. another
   * client changing the object between evictd's read and its write).
   */
  public void beforeRequest(String method, String pathRegex, int times, Runnable action) {
    faults.add(
        new Fault(
            method,
            Pattern.compile(pathRegex),
            new AtomicInteger(times),
            () -> {
              action.run();
              return null;
            }));
  }

  /**
   * The next {@code times} watch requests are answered 410 Gone, as for a resourceVersion that is
   * too old: the informer has to list again.
   */
  public void expireWatches(int times) {
    expiredWatches.addAndGet(times);
  }

  /** The clock deletionTimestamps are computed with (the system clock unless set). */
  public void clock(java.time.Clock clock) {
    this.clock = clock;
  }

  /**
   * The pod's kubelet has finished terminating it: the pod object is removed (watchers see a
   * delete). Pods deleted gracefully stay until this is called.
   */
  public void kubeletRemoves(String namespace, String name) {
    Optional<Pod> p = pod(namespace, name);
    if (p.isEmpty()) {
      return;
    }
    Pod pod = p.get();
    if (pod.getMetadata().getDeletionTimestamp() != null) {
      // the stand-in for the kubelet's hold goes; CRUD mode then removes the pod
      pod.getMetadata().getFinalizers().remove(KUBELET_HOLD);
      pod.getMetadata().setResourceVersion(null);
      store(HttpMethod.PUT, podPath(namespace, name), json.asJson(pod));
    }
    crud.handleDelete(podPath(namespace, name));
  }

  /**
   * CRUD mode removes an object marked for deletion unless it has a finalizer: this one stands for
   * the kubelet, which keeps a pod bound to its node until its containers have stopped.
   */
  public static final String KUBELET_HOLD = "fake.evictd.dev/kubelet";

  /** Stores a Node (as its kubelet registers it); returns it as stored. */
  public io.fabric8.kubernetes.api.model.Node createNode(io.fabric8.kubernetes.api.model.Node n) {
    return parse(
        store(HttpMethod.POST, "/api/v1/nodes", json.asJson(n)),
        io.fabric8.kubernetes.api.model.Node.class);
  }

  /** Replaces a Node (as another client would: its resourceVersion changes). */
  public io.fabric8.kubernetes.api.model.Node updateNode(io.fabric8.kubernetes.api.model.Node n) {
    n.getMetadata().setResourceVersion(null);
    return parse(
        store(HttpMethod.PUT, "/api/v1/nodes/" + n.getMetadata().getName(), json.asJson(n)),
        io.fabric8.kubernetes.api.model.Node.class);
  }

  /** The stored Node, if any. */
  public Optional<io.fabric8.kubernetes.api.model.Node> node(String name) {
    MockResponse r = crud.handleGet("/api/v1/nodes/" + name);
    return r.code() == 200
        ? Optional.of(parse(r, io.fabric8.kubernetes.api.model.Node.class))
        : Optional.empty();
  }

  /**
   * The next {@code times} requests with {@code method} and a path matching {@code pathRegex} get
   * {@code code}.
   */
  public void fail(String method, String pathRegex, int code, int times) {
    faults.add(
        new Fault(
            method,
            Pattern.compile(pathRegex),
            new AtomicInteger(times),
            () -> status(code, "injected")));
  }

  /** The next {@code times} matching requests get their (503) body only after {@code delay}. */
  public void delay(String method, String pathRegex, Duration delay, int times) {
    faults.add(
        new Fault(
            method, Pattern.compile(pathRegex), new AtomicInteger(times), () -> delayed(delay)));
  }

  private final Map<String, Supplier<MockResponse>> configz =
      new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * The node proxy answers {@code node}'s /configz (the kubelet's running configuration) with
   * {@code body}.
   */
  public void configz(String node, int code, String body) {
    configz.put(node, () -> new MockResponse().setResponseCode(code).setBody(body));
  }

  /** The node proxy answers {@code node}'s summary with {@code code} and {@code body}. */
  public void summary(String node, int code, String body) {
    summaries.put(node, () -> new MockResponse().setResponseCode(code).setBody(body));
  }

  /**
   * Stops the server. Close it before the informers watching it: when a client closes a watch,
   * fabric8's mock server blocks its event loop for up to a minute (its watch listener awaits a
   * task that needs that loop), while a watch the server closes ends at once.
   */
  @Override
  public void close() {
    late.shutdownNow();
    server.destroy();
  }

  private static String podPath(String ns, String name) {
    return "/api/v1/namespaces/" + ns + "/pods/" + name;
  }

  private MockResponse delayed(Duration delay) {
    return status(503, "too late").setBodyDelay(delay);
  }

  private MockResponse store(HttpMethod method, String path, String body) {
    Headers headers = Headers.builder().add("Content-Type", "application/json").build();
    return crud.dispatch(
        new RecordedRequest(
            "HTTP/1.1", method, path, headers, new Buffer(body.getBytes(StandardCharsets.UTF_8))));
  }

  private <T> T parse(MockResponse r, Class<T> type) {
    return json.unmarshal(r.getBody().readUtf8(), type);
  }

  private MockResponse status(int code, String message) {
    String reason =
        switch (code) {
          case 404 -> "NotFound";
          case 409 -> "Conflict";
          case 422 -> "Invalid";
          case 429 -> "TooManyRequests";
          default -> code >= 500 ? "InternalError" : "BadRequest";
        };
    Status s =
        new StatusBuilder()
            .withStatus(code < 400 ? "Success" : "Failure")
            .withCode(code)
            .withReason(code < 400 ? null : reason)
            .withMessage(message)
            .build();
    return new MockResponse().setResponseCode(code).setBody(json.asJson(s));
  }

  private final class Router extends Dispatcher {
    @Override
    public MockResponse dispatch(RecordedRequest r) {
      byte[] bytes = r.getBody() == null ? new byte[0] : r.getBody().readByteArray();
      String body = new String(bytes, StandardCharsets.UTF_8);
      Request req = new Request(r.getMethod(), r.getPath(), r.getHeader("Content-Type"), body);
      String path = r.getPath().split("\\?", 2)[0];
      if (!path.equals("/")) {
        // the root path is the mock server's own start-up probe
        requests.add(req);
        ALL_REQUESTS.add(req);
      }
      for (Fault f : faults) {
        if (f.method().equals(r.getMethod())
            && f.path().matcher(path).matches()
            && f.remaining().getAndDecrement() > 0) {
          MockResponse injected = f.response().get();
          if (injected != null) {
            return injected;
          }
        }
      }
      if ("GET".equals(r.getMethod())
          && r.getPath().contains("watch=true")
          && expiredWatches.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
        return status(410, "too old resource version");
      }
      for (Slow sl : slow) {
        if (sl.method().equals(r.getMethod())
            && sl.path().matcher(path).matches()
            && sl.remaining().getAndDecrement() > 0) {
          // carried out when the answer goes; the client may have given up long before
          late.schedule(
              () -> route(r, path, req, body, bytes), sl.delay().toMillis(), TimeUnit.MILLISECONDS);
          return status(200, "carried out late").setBodyDelay(sl.delay());
        }
      }
      return route(r, path, req, body, bytes);
    }

    private MockResponse route(
        RecordedRequest r, String path, Request req, String body, byte[] bytes) {
      Matcher m;
      if ("POST".equals(r.getMethod()) && (m = POD_EVICTION.matcher(path)).matches()) {
        return evict(m.group(1), m.group(2), body);
      }
      if ("PATCH".equals(r.getMethod()) && (m = POD_STATUS.matcher(path)).matches()) {
        return patchStatus(m.group(1), m.group(2), req.contentType(), body);
      }
      if ("DELETE".equals(r.getMethod()) && (m = POD.matcher(path)).matches()) {
        return delete(m.group(1), m.group(2), body);
      }
      if ("PATCH".equals(r.getMethod()) && (m = NODE.matcher(path)).matches()) {
        return patchNode(m.group(1), req.contentType(), body);
      }
      if ("PATCH".equals(r.getMethod()) && (m = EVENT.matcher(path)).matches()) {
        return patchEvent(m.group(1), m.group(2), req.contentType(), body);
      }
      if ("GET".equals(r.getMethod()) && (m = CONFIGZ.matcher(path)).matches()) {
        Supplier<MockResponse> s = configz.get(m.group(1));
        return s == null ? status(404, "node " + m.group(1) + " not found") : s.get();
      }
      if ("GET".equals(r.getMethod()) && (m = SUMMARY.matcher(path)).matches()) {
        Supplier<MockResponse> s = summaries.get(m.group(1));
        return s == null ? status(404, "node " + m.group(1) + " not found") : s.get();
      }
      String rewritten =
          NODE_NAME_SELECTOR.matcher(r.getPath()).replaceAll("").replaceAll("[?&]$", "");
      return crud.dispatch(
          new RecordedRequest(
              r.getHttpVersion(), r.method(), rewritten, r.getHeaders(), new Buffer(bytes)));
    }

    private MockResponse evict(String ns, String name, String body) {
      Eviction e = json.unmarshal(body, Eviction.class);
      if (!"policy/v1".equals(e.getApiVersion())) {
        return status(400, "only policy/v1 Evictions are served here, got " + e.getApiVersion());
      }
      Optional<Pod> pod = pod(ns, name);
      if (pod.isEmpty()) {
        return status(404, "pods \"" + name + "\" not found");
      }
      var options = e.getDeleteOptions();
      MockResponse refused =
          checkUid(pod.get(), options == null ? null : options.getPreconditions());
      if (refused != null) {
        return refused;
      }
      if (pdbBlocked.contains(ns + "/" + name)) {
        Status st =
            new StatusBuilder()
                .withStatus("Failure")
                .withCode(429)
                .withReason("TooManyRequests")
                .withMessage("Cannot evict pod as it would violate the pod's disruption budget.")
                .withNewDetails()
                .addNewCause()
                .withReason("DisruptionBudget")
                .withMessage(BUDGET_MESSAGE)
                .endCause()
                .endDetails()
                .build();
        return new MockResponse().setResponseCode(429).setBody(json.asJson(st));
      }
      // the server marks the pod, then deletes it with the Eviction's options
      Pod p = pod.get();
      if (p.getStatus() == null) {
        p.setStatus(new io.fabric8.kubernetes.api.model.PodStatus());
      }
      List<PodCondition> conditions = new ArrayList<>(p.getStatus().getConditions());
      conditions.removeIf(c -> "DisruptionTarget".equals(c.getType()));
      conditions.add(
          new io.fabric8.kubernetes.api.model.PodConditionBuilder()
              .withType("DisruptionTarget")
              .withStatus("True")
              .withReason("EvictionByEvictionAPI")
              .withMessage("Eviction API: evicting")
              .withLastTransitionTime(
                  clock.instant().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString())
              .build());
      p.getStatus().setConditions(conditions);
      p.getMetadata().setResourceVersion(null);
      store(HttpMethod.PUT, podPath(ns, name) + "/status", json.asJson(p));
      deleteGracefully(ns, name, options == null ? null : options.getGracePeriodSeconds());
      return status(201, "");
    }

    private MockResponse delete(String ns, String name, String body) {
      Optional<Pod> pod = pod(ns, name);
      if (pod.isEmpty()) {
        return status(404, "pods \"" + name + "\" not found");
      }
      Long grace = null;
      if (!body.isBlank()) {
        var options = json.unmarshal(body, io.fabric8.kubernetes.api.model.DeleteOptions.class);
        MockResponse refused = checkUid(pod.get(), options.getPreconditions());
        if (refused != null) {
          return refused;
        }
        grace = options.getGracePeriodSeconds();
      }
      return deleteGracefully(ns, name, grace);
    }

    /**
     * As the API server deletes a pod: one bound to a node with a grace period above 0 stays, with
     * deletionTimestamp (now plus the grace period) and deletionGracePeriodSeconds, until its
     * kubelet removes it; a second delete only ever shortens the grace period. Others go at once.
     */
    private MockResponse deleteGracefully(String ns, String name, Long requestedGrace) {
      Pod pod = pod(ns, name).orElseThrow();
      long grace =
          requestedGrace != null
              ? requestedGrace
              : pod.getSpec() != null && pod.getSpec().getTerminationGracePeriodSeconds() != null
                  ? pod.getSpec().getTerminationGracePeriodSeconds()
                  : 30;
      boolean bound = pod.getSpec() != null && pod.getSpec().getNodeName() != null;
      if (!bound || grace <= 0) {
        return crud.handleDelete(podPath(ns, name));
      }
      Long current = pod.getMetadata().getDeletionGracePeriodSeconds();
      if (pod.getMetadata().getDeletionTimestamp() != null && current != null && current <= grace) {
        return new MockResponse().setResponseCode(200).setBody(json.asJson(pod));
      }
      java.time.Instant now = clock.instant().truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
      java.time.Instant at = now.plusSeconds(grace);
      if (pod.getMetadata().getDeletionTimestamp() != null) {
        // shortened: never later than the deletion already requested
        java.time.Instant before =
            java.time.Instant.parse(pod.getMetadata().getDeletionTimestamp());
        at = at.isBefore(before) ? at : before;
      }
      pod.getMetadata().setDeletionTimestamp(at.toString());
      pod.getMetadata().setDeletionGracePeriodSeconds(grace);
      List<String> finalizers = new ArrayList<>(pod.getMetadata().getFinalizers());
      if (!finalizers.contains(KUBELET_HOLD)) {
        finalizers.add(KUBELET_HOLD);
      }
      pod.getMetadata().setFinalizers(finalizers);
      pod.getMetadata().setResourceVersion(null);
      MockResponse r = store(HttpMethod.PUT, podPath(ns, name), json.asJson(pod));
      return new MockResponse().setResponseCode(200).setBody(r.getBody().readUtf8());
    }

    /**
     * A JSON patch (RFC 6902) of a Node, as the API server applies it: every operation or none; a
     * failed {@code test} (e.g. of metadata.resourceVersion, changed by another client) is 422.
     */
    private MockResponse patchNode(String name, String contentType, String body) {
      if (contentType == null || !contentType.startsWith("application/json-patch+json")) {
        return status(415, "this fake serves JSON patches of nodes only, got " + contentType);
      }
      Optional<io.fabric8.kubernetes.api.model.Node> node = node(name);
      if (node.isEmpty()) {
        return status(404, "nodes \"" + name + "\" not found");
      }
      tools.jackson.databind.ObjectMapper mapper = new tools.jackson.databind.json.JsonMapper();
      tools.jackson.databind.JsonNode doc = mapper.readTree(json.asJson(node.get()));
      tools.jackson.databind.JsonNode ops = mapper.readTree(body);
      for (tools.jackson.databind.JsonNode op : ops) {
        String kind = op.path("op").asString("");
        String pointer = op.path("path").asString("");
        String[] parts = pointer.substring(1).split("/");
        tools.jackson.databind.JsonNode parent = doc;
        for (int i = 0; i < parts.length - 1; i++) {
          parent = parent.path(parts[i]);
        }
        String last = parts[parts.length - 1];
        if (!(parent instanceof tools.jackson.databind.node.ObjectNode obj)) {
          return status(422, "the server rejected our request: path " + pointer + " not found");
        }
        switch (kind) {
          case "test" -> {
            if (!op.path("value").equals(obj.path(last))) {
              return status(
                  422,
                  "the server rejected our request due to an error in our request: testing value "
                      + pointer
                      + " failed");
            }
          }
          case "add", "replace" -> obj.set(last, op.path("value"));
          case "remove" -> obj.remove(last);
          default -> {
            return status(422, "unsupported JSON patch operation " + kind);
          }
        }
      }
      io.fabric8.kubernetes.api.model.Node patched =
          json.unmarshal(
              mapper.writeValueAsString(doc), io.fabric8.kubernetes.api.model.Node.class);
      return new MockResponse()
          .setResponseCode(200)
          .setBody(
              store(HttpMethod.PUT, "/api/v1/nodes/" + name, json.asJson(withoutVersion(patched)))
                  .getBody()
                  .readUtf8());
    }

    /**
     * A strategic merge patch of an Event's scalar fields (count, lastTimestamp, message, series),
     * as a recorder sends for a repeat: for scalars it merges like a JSON merge patch.
     */
    @SuppressWarnings("unchecked")
    private MockResponse patchEvent(String ns, String name, String contentType, String body) {
      if (contentType == null
          || !contentType.startsWith("application/strategic-merge-patch+json")) {
        return status(415, "this fake serves strategic merge patches of events only");
      }
      String path = "/api/v1/namespaces/" + ns + "/events/" + name;
      MockResponse current = crud.handleGet(path);
      if (current.code() != 200) {
        return status(404, "events \"" + name + "\" not found");
      }
      Map<String, Object> event = json.unmarshal(current.getBody().readUtf8(), Map.class);
      Map<String, Object> patch = json.unmarshal(body, Map.class);
      event.putAll(patch);
      Map<String, Object> meta = (Map<String, Object>) event.get("metadata");
      meta.remove("resourceVersion");
      return store(HttpMethod.PUT, path, json.asJson(event));
    }

    private io.fabric8.kubernetes.api.model.Node withoutVersion(
        io.fabric8.kubernetes.api.model.Node n) {
      n.getMetadata().setResourceVersion(null);
      return n;
    }

    private MockResponse checkUid(
        Pod pod, io.fabric8.kubernetes.api.model.Preconditions preconditions) {
      if (preconditions != null
          && preconditions.getUid() != null
          && !preconditions.getUid().equals(pod.getMetadata().getUid())) {
        return status(
            409,
            "Precondition failed: UID in precondition: "
                + preconditions.getUid()
                + ", UID in object meta: "
                + pod.getMetadata().getUid());
      }
      return null;
    }

    @SuppressWarnings("unchecked")
    private MockResponse patchStatus(String ns, String name, String contentType, String body) {
      if (contentType == null
          || !contentType.startsWith("application/strategic-merge-patch+json")) {
        return status(
            415, "this fake serves strategic merge patches of pod status only, got " + contentType);
      }
      Optional<Pod> current = pod(ns, name);
      if (current.isEmpty()) {
        return status(404, "pods \"" + name + "\" not found");
      }
      Pod pod = current.get();
      Map<String, Object> patch = json.unmarshal(body, Map.class);
      Map<String, Object> meta = (Map<String, Object>) patch.getOrDefault("metadata", Map.of());
      if (meta.get("uid") != null && !meta.get("uid").equals(pod.getMetadata().getUid())) {
        return status(
            422, "metadata.uid: Invalid value: \"" + meta.get("uid") + "\": field is immutable");
      }
      Map<String, Object> status = (Map<String, Object>) patch.getOrDefault("status", Map.of());
      List<Map<String, Object>> conditions =
          (List<Map<String, Object>>) status.getOrDefault("conditions", List.of());
      if (pod.getStatus() == null) {
        pod.setStatus(new io.fabric8.kubernetes.api.model.PodStatus());
      }
      List<PodCondition> merged = new ArrayList<>(pod.getStatus().getConditions());
      for (Map<String, Object> c : conditions) {
        PodCondition pc = json.unmarshal(json.asJson(c), PodCondition.class);
        merged.removeIf(x -> x.getType().equals(pc.getType()));
        merged.add(pc);
      }
      pod.getStatus().setConditions(merged);
      pod.getMetadata().setResourceVersion(null);
      return store(HttpMethod.PUT, podPath(ns, name) + "/status", json.asJson(pod));
    }
  }

  /** Waits up to {@code timeout} for {@code condition}; returns whether it held. */
  public static boolean await(Supplier<Boolean> condition, Duration timeout) {
    long end = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < end) {
      if (condition.get()) {
        return true;
      }
      try {
        TimeUnit.MILLISECONDS.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return condition.get();
  }
}
