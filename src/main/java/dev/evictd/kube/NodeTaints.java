package dev.evictd.kube;

import dev.evictd.api.NodeConditionType;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the scheduler about the pressure evictd sees: a {@code NoSchedule} taint on the agent's own
 * Node for each pressure condition evictd reports (MemoryPressure, DiskPressure, PIDPressure, held
 * for the pressure transition period like the condition), removed when the condition clears.
 *
 * <p>The Node is read (GET) and written with one JSON patch (RFC 6902, {@code
 * application/json-patch+json}, verb {@code patch} on {@code nodes}, no subresource) whose first
 * operation tests {@code /metadata/resourceVersion}: a taint another client added or removed
 * meanwhile makes the patch fail (422) instead of being clobbered, and the change is read and tried
 * again (a bounded number of times). Only the taints named {@link #KEYS} are ever added or removed;
 * every other taint - the kubelet's own {@code node.kubernetes.io/memory-pressure}, the
 * node-lifecycle controller's, an operator's - is written back as it was. When the Node already
 * carries exactly the wanted evictd taints, nothing is written (idempotent), so the first sync
 * after a restart reconciles the Node with what evictd sees now.
 *
 * <p>Writes run on their own thread, latest wish first: a slow API server never delays a sync's
 * evictions. A wish already applied is checked again (one GET) after {@link #RECHECK}.
 */
public final class NodeTaints implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(NodeTaints.class);

  /** The taint key per condition. */
  public static final Map<NodeConditionType, String> KEYS = keys();

  /** The taints' effect. */
  public static final String EFFECT = "NoSchedule";

  /** How many times a patch that lost a race with another writer is retried. */
  static final int MAX_CONFLICTS = 5;

  private final KubeApi api;
  private final String nodeName;
  private final Clock clock;
  private final AtomicReference<Set<NodeConditionType>> wanted = new AtomicReference<>();
  private final Object lock = new Object();
  private Set<NodeConditionType> applied;
  private java.time.Instant appliedAt;

  /**
   * How long a wish already applied is trusted: after that the Node is read again (one GET), so a
   * taint someone removed by hand comes back while the condition holds.
   */
  public static final java.time.Duration RECHECK = java.time.Duration.ofMinutes(1);

  private Thread worker;
  private volatile boolean closed;

  /** Taints {@code nodeName} through {@code api}. */
  public NodeTaints(KubeApi api, String nodeName, Clock clock) {
    this.api = api;
    this.nodeName = nodeName;
    this.clock = clock;
  }

  private static Map<NodeConditionType, String> keys() {
    Map<NodeConditionType, String> m = new EnumMap<>(NodeConditionType.class);
    m.put(NodeConditionType.MemoryPressure, "evictd.dev/memory-pressure");
    m.put(NodeConditionType.DiskPressure, "evictd.dev/disk-pressure");
    m.put(NodeConditionType.PIDPressure, "evictd.dev/pid-pressure");
    return java.util.Collections.unmodifiableMap(m);
  }

  /**
   * Asks for the Node to carry the taints of exactly {@code conditions}; returns at once (the write
   * happens on the taints' thread). Repeating the last wish costs nothing.
   */
  public void want(Set<NodeConditionType> conditions) {
    if (closed) {
      return;
    }
    Set<NodeConditionType> w = Set.copyOf(conditions);
    synchronized (lock) {
      if (w.equals(applied)
          && wanted.get() == null
          && clock.instant().isBefore(appliedAt.plus(RECHECK))) {
        return;
      }
      wanted.set(w);
      if (worker == null) {
        worker = new Thread(this::work, "evictd-node-taints");
        worker.setDaemon(true);
        worker.start();
      }
      lock.notifyAll();
    }
  }

  /** Whether {@code conditions} is the wish last applied (for tests). */
  boolean isApplied(Set<NodeConditionType> conditions) {
    synchronized (lock) {
      return conditions.equals(applied) && wanted.get() == null;
    }
  }

  private void work() {
    while (!closed) {
      Set<NodeConditionType> w;
      synchronized (lock) {
        while (!closed && wanted.get() == null) {
          try {
            lock.wait();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
        }
        w = wanted.getAndSet(null);
      }
      if (w == null) {
        return;
      }
      boolean ok = reconcile(w);
      synchronized (lock) {
        applied = ok ? w : null;
        appliedAt = clock.instant();
      }
    }
  }

  /**
   * Makes the Node carry exactly the evictd taints of {@code conditions} now (on the caller's
   * thread); returns whether the Node is as wanted. Failures are logged, never thrown.
   */
  public boolean reconcile(Set<NodeConditionType> conditions) {
    String path = "/api/v1/nodes/" + KubeApi.segment(nodeName);
    for (int attempt = 1; attempt <= MAX_CONFLICTS; attempt++) {
      ApiResponse got = api.get(path);
      if (!got.isSuccess()) {
        LOG.warn("node {}: cannot read its taints: {}", nodeName, got.describe());
        return false;
      }
      Node node = api.parse(got.body(), Node.class);
      List<Taint> current =
          node.getSpec() == null || node.getSpec().getTaints() == null
              ? List.of()
              : node.getSpec().getTaints();
      List<Taint> desired = desired(current, conditions);
      if (desired.equals(current)) {
        return true;
      }
      String rv = node.getMetadata().getResourceVersion();
      List<Map<String, Object>> ops = new ArrayList<>();
      ops.add(op("test", "/metadata/resourceVersion", rv));
      if (node.getSpec() == null) {
        ops.add(op("add", "/spec", Map.of("taints", desired)));
      } else {
        ops.add(op(hasTaintsField(node) ? "replace" : "add", "/spec/taints", desired));
      }
      ApiResponse patched = api.patch(path, KubeApi.JSON_PATCH, api.json(ops));
      if (patched.isSuccess()) {
        LOG.info(
            "node {}: evictd taints now {} (conditions {})",
            nodeName,
            evictdKeys(desired),
            conditions.isEmpty() ? "none" : conditions);
        return true;
      }
      if (patched.code() != 422 && patched.code() != 409) {
        LOG.warn("node {}: cannot update its taints: {}", nodeName, patched.describe());
        return false;
      }
      // another client changed the Node between our read and our patch: read it again
      LOG.debug(
          "node {}: taints changed meanwhile ({}), reading again", nodeName, patched.describe());
    }
    LOG.warn("node {}: taints kept changing under us; trying again at the next sync", nodeName);
    return false;
  }

  private static boolean hasTaintsField(Node node) {
    return node.getSpec() != null && node.getSpec().getTaints() != null;
  }

  /**
   * The Node's taints with the evictd ones of {@code conditions}: every other taint kept as it is
   * and where it is; evictd taints that stay keep their timeAdded; new ones are appended.
   */
  List<Taint> desired(List<Taint> current, Set<NodeConditionType> conditions) {
    Map<String, NodeConditionType> ours = new LinkedHashMap<>();
    for (var e : KEYS.entrySet()) {
      ours.put(e.getValue(), e.getKey());
    }
    List<Taint> out = new ArrayList<>();
    java.util.Set<String> present = new java.util.HashSet<>();
    for (Taint t : current) {
      NodeConditionType c = ours.get(t.getKey());
      if (c == null || !EFFECT.equals(t.getEffect())) {
        out.add(t);
      } else if (conditions.contains(c) && present.add(t.getKey())) {
        out.add(t);
      }
    }
    String now = clock.instant().truncatedTo(ChronoUnit.SECONDS).toString();
    for (NodeConditionType c : NodeConditionType.values()) {
      if (conditions.contains(c) && !present.contains(KEYS.get(c))) {
        out.add(
            new TaintBuilder().withKey(KEYS.get(c)).withEffect(EFFECT).withTimeAdded(now).build());
      }
    }
    return out;
  }

  private static List<String> evictdKeys(List<Taint> taints) {
    return taints.stream().map(Taint::getKey).filter(k -> KEYS.containsValue(k)).toList();
  }

  private static Map<String, Object> op(String op, String path, Object value) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("op", op);
    m.put("path", path);
    m.put("value", value);
    return m;
  }

  /** Stops the taints' thread (the Node keeps its taints: the next agent reconciles them). */
  @Override
  public void close() {
    closed = true;
    Thread t;
    synchronized (lock) {
      lock.notifyAll();
      t = worker;
    }
    if (t != null) {
      try {
        t.join(2000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
