package dev.evictd.kube;

import dev.evictd.engine.PodCompaction;
import dev.evictd.ports.PodSource;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent's {@link PodSource} on a cluster: the pods bound to this node, kept current by an
 * informer (list, then watch) on {@code spec.nodeName=NODE} across all namespaces. {@link
 * #activePods()} is what the planner gets each sync: the kubelet's "active pods", i.e. the pods of
 * the node that are not in a terminal phase (Succeeded or Failed), in a stable order (creation
 * time, then namespace/name).
 *
 * <p>Pods with a deletionTimestamp stay active until they reach a terminal phase or disappear, as
 * in the kubelet: their containers still run and use what the node is short of, and evicting one
 * again with a shorter grace period is how the kubelet speeds up a slow termination. Rules that
 * prefer to skip them can match {@code pod.metadata.deletionTimestamp}.
 *
 * <p>Thread-safe: the informer's threads update the store; {@link #activePods()} reads a snapshot.
 * When the API server is unreachable, the last known pods are served and the informer keeps
 * reconnecting on its own.
 */
public final class NodePodInformer implements PodSource {
  private static final Logger LOG = LoggerFactory.getLogger(NodePodInformer.class);

  /** The field the informer selects pods by. */
  public static final String NODE_NAME_FIELD = "spec.nodeName";

  /** The order of active pods: creation time (unknown last), then namespace, then name. */
  public static final Comparator<Pod> ORDER =
      Comparator.comparing(
              NodePodInformer::creationTime, Comparator.nullsLast(Comparator.naturalOrder()))
          .thenComparing(p -> nullToEmpty(p.getMetadata().getNamespace()))
          .thenComparing(p -> nullToEmpty(p.getMetadata().getName()));

  private final String nodeName;
  private final SharedIndexInformer<Pod> informer;
  private final AtomicInteger failures = new AtomicInteger();
  private final String apiServer;
  private final java.time.Clock clock;
  private volatile boolean closed;

  /**
   * Since when the view is not known to be current (not yet listed, or the watch lost); null:
   * current.
   */
  private volatile Instant staleSince;

  private volatile boolean watching;

  /** Whether the watch ran once (before that, a failed list is the exception handler's to log). */
  private volatile boolean everWatched;

  /** Whether the current loss of the watch was warned about. */
  private volatile boolean warned;

  /**
   * How long the watch may be down before a warning: the routine end of a watch and the re-list
   * after a 410 take well under a second, a reconnect attempt after a failure at most 4 s ({@link
   * KubeClients#WATCH_RECONNECT_INTERVAL}).
   */
  static final Duration WATCH_LOSS_WARN_AFTER = Duration.ofSeconds(5);

  private java.util.concurrent.ScheduledExecutorService monitor;

  /** How often the watch's state is looked at (for the log and the view's age). */
  static final Duration MONITOR_PERIOD = Duration.ofMillis(250);

  /** An informer on the pods of {@code nodeName}; nothing is requested until {@link #start}. */
  public NodePodInformer(KubernetesClient client, String nodeName) {
    this(client, nodeName, java.time.Clock.systemUTC());
  }

  /** The same, measuring the view's age with {@code clock}. */
  public NodePodInformer(KubernetesClient client, String nodeName, java.time.Clock clock) {
    this.nodeName = nodeName;
    this.clock = clock;
    this.staleSince = clock.instant();
    this.apiServer = hostPort(client.getMasterUrl());
    this.informer =
        client.pods().inAnyNamespace().withField(NODE_NAME_FIELD, nodeName).runnableInformer(0);
    // the store keeps each pod for as long as it runs: without what nobody reads from it
    this.informer.itemStore(new CompactPodStore());
    this.informer.addEventHandler(new LoggingHandler());
    // fabric8 gives up on an informer whose first list fails; a node agent may start before the API
    // server
    // answers, so it keeps trying (with the client's reconnect backoff) until closed
    this.informer.exceptionHandler(this::retryAfter);
  }

  private boolean retryAfter(boolean started, Throwable t) {
    if (closed) {
      return false;
    }
    int n = failures.incrementAndGet();
    if (n == 1 || n % 10 == 0) {
      LOG.warn("pods of node {}: {} ({} failures so far); retrying", nodeName, describe(t), n);
    }
    return true;
  }

  private String describe(Throwable t) {
    return describe(t, apiServer);
  }

  /** What went wrong, in one line naming the API server at {@code apiServer} (host:port). */
  static String describe(Throwable t, String apiServer) {
    Throwable c = t;
    while (true) {
      if (c instanceof KubernetesClientException k && k.getCode() > 0) {
        String m = k.getStatus() == null ? null : k.getStatus().getMessage();
        if (k.getCode() == 403) {
          // an authorization problem, not a network one: say as whom
          return new ApiResponse(403, m == null ? "" : m, null).describe();
        }
        return "HTTP " + k.getCode() + (m == null ? "" : ": " + m);
      }
      if (c instanceof java.net.ConnectException) {
        // the JDK's ConnectException rarely says where
        String m = c.getMessage();
        return "cannot connect to the API server at "
            + apiServer
            + (m == null || m.isBlank() ? "" : ": " + m);
      }
      if (c instanceof java.io.IOException || c.getCause() == null || c.getCause() == c) {
        break;
      }
      c = c.getCause();
    }
    return dev.evictd.config.IoErrors.words(c) + " (API server " + apiServer + ")";
  }

  private static String hostPort(java.net.URL url) {
    if (url == null) {
      return "?";
    }
    int port = url.getPort() >= 0 ? url.getPort() : url.getDefaultPort();
    return url.getHost() + ":" + port;
  }

  /**
   * Looks at the watch and keeps the time the view went stale for {@link #viewAge}. The API server
   * ends every watch after 5-10 minutes (and answers 410 Gone when the informer must list again): a
   * watch back within {@link #WATCH_LOSS_WARN_AFTER} is logged at INFO; one down for longer gets
   * one warning, and its return an INFO line with how long the view was stale.
   */
  private void checkWatch() {
    boolean now = informer.hasSynced() && informer.isWatching();
    Instant t = clock.instant();
    if (now == watching) {
      Instant since = staleSince;
      if (!now
          && !warned
          && everWatched
          && since != null
          && Duration.between(since, t).compareTo(WATCH_LOSS_WARN_AFTER) >= 0) {
        warned = true;
        LOG.warn(
            "pods of node {}: pod watch lost {} ms ago (API server {}); the pod view may be stale"
                + " until it reconnects",
            nodeName,
            Duration.between(since, t).toMillis(),
            apiServer);
      }
      return;
    }
    watching = now;
    if (now) {
      Instant since = staleSince;
      staleSince = null;
      long ms = since == null ? 0 : Duration.between(since, t).toMillis();
      failures.set(0);
      if (everWatched && !warned) {
        LOG.info("pods of node {}: watch renewed after {} ms", nodeName, ms);
      } else {
        LOG.info("pods of node {}: watching (view current again after {} ms)", nodeName, ms);
      }
      everWatched = true;
      warned = false;
    } else {
      staleSince = t;
    }
  }

  /**
   * How old the pod view may be: zero while the watch is connected, else the time since it was lost
   * (or since the informer started, before the first list).
   */
  @Override
  public Duration viewAge() {
    Instant since = staleSince;
    if (since == null) {
      return Duration.ZERO;
    }
    Duration d = Duration.between(since, clock.instant());
    return d.isNegative() ? Duration.ZERO : d;
  }

  /**
   * Starts listing and watching, and waits up to {@code timeout} for the first list. Returns
   * whether it arrived; when it did not, the informer keeps trying in the background and {@link
   * #hasSynced()} turns true later.
   */
  public boolean start(Duration timeout) {
    monitor =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread th = new Thread(r, "evictd-pod-watch-monitor");
              th.setDaemon(true);
              return th;
            });
    monitor.scheduleWithFixedDelay(
        this::checkWatch, 0, MONITOR_PERIOD.toMillis(), TimeUnit.MILLISECONDS);
    var started = informer.start().toCompletableFuture();
    try {
      started.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      LOG.warn(
          "pods of node {}: not listed within {} ms; still trying", nodeName, timeout.toMillis());
    } catch (ExecutionException e) {
      LOG.warn("pods of node {}: first list failed ({}); still trying", nodeName, describe(e));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return informer.hasSynced();
  }

  /**
   * Whether the first list arrived: before it, the node's pods are unknown and no sync should
   * evict.
   */
  public boolean hasSynced() {
    return informer.hasSynced();
  }

  @Override
  public boolean synced() {
    return hasSynced();
  }

  /** Whether the watch is currently connected; false means {@link #activePods()} may be stale. */
  public boolean isWatching() {
    return informer.isWatching();
  }

  /** The node's active pods, in {@link #ORDER}. */
  @Override
  public List<Pod> activePods() {
    return informer.getStore().list().stream().filter(this::isActiveOnNode).sorted(ORDER).toList();
  }

  /** The node's name. */
  public String nodeName() {
    return nodeName;
  }

  /** Whether {@code pod} counts as active: not Succeeded or Failed. */
  public static boolean isActive(Pod pod) {
    String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
    return !"Succeeded".equals(phase) && !"Failed".equals(phase);
  }

  // The field selector already limits the informer to this node; checking again keeps a pod of
  // another node out
  // should a server (or a proxy in between) ignore the selector.
  private boolean isActiveOnNode(Pod pod) {
    return pod.getSpec() != null && nodeName.equals(pod.getSpec().getNodeName()) && isActive(pod);
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      if (monitor != null) {
        monitor.shutdownNow();
      }
      informer.close();
    }
  }

  private static Instant creationTime(Pod pod) {
    ObjectMeta m = pod.getMetadata();
    String t = m == null ? null : m.getCreationTimestamp();
    if (t == null || t.isEmpty()) {
      return null;
    }
    try {
      return Instant.parse(t);
    } catch (DateTimeParseException e) {
      return null;
    }
  }

  private static String nullToEmpty(String s) {
    return s == null ? "" : s;
  }

  /**
   * The informer's store, keeping each pod as {@link PodCompaction#forStore} leaves it: no
   * managedFields, last-applied configuration, env, commands or probes (which the rules never see
   * and nothing else reads), empty lists and maps shared. Keys as fabric8's own store.
   */
  private static final class CompactPodStore implements ItemStore<Pod> {
    private final BasicItemStore<Pod> store = new BasicItemStore<>(Cache::metaNamespaceKeyFunc);

    @Override
    public String getKey(Pod pod) {
      return store.getKey(pod);
    }

    @Override
    public Pod put(String key, Pod pod) {
      return store.put(key, PodCompaction.forStore(pod));
    }

    @Override
    public Pod remove(String key) {
      return store.remove(key);
    }

    @Override
    public Stream<String> keySet() {
      return store.keySet();
    }

    @Override
    public Stream<Pod> values() {
      return store.values();
    }

    @Override
    public int size() {
      return store.size();
    }

    @Override
    public Pod get(String key) {
      return store.get(key);
    }
  }

  private final class LoggingHandler implements ResourceEventHandler<Pod> {
    @Override
    public void onAdd(Pod pod) {
      LOG.debug(
          "node {}: pod {}/{} added",
          nodeName,
          pod.getMetadata().getNamespace(),
          pod.getMetadata().getName());
    }

    @Override
    public void onUpdate(Pod oldPod, Pod newPod) {
      LOG.trace(
          "node {}: pod {}/{} updated",
          nodeName,
          newPod.getMetadata().getNamespace(),
          newPod.getMetadata().getName());
    }

    @Override
    public void onDelete(Pod pod, boolean deletedFinalStateUnknown) {
      LOG.debug(
          "node {}: pod {}/{} deleted",
          nodeName,
          pod.getMetadata().getNamespace(),
          pod.getMetadata().getName());
    }
  }
}
