package dev.evictd.agent;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.MemcgThresholdCrossed;
import dev.evictd.api.Signal;
import dev.evictd.api.Threshold;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The synthetic inputs of {@link DecisionWarmUp}'s scratch syncs, derived from the node's eviction
 * configuration: a node whose memory signal is well above its threshold (a quiet sync) or just
 * below it (a pressure sync, with the memcg crossing the kernel would have signalled), and a few
 * made-up pods of every QoS class, half of them with statistics. The pods are in a namespace of
 * their own and exist nowhere; nothing built here leaves the scratch planner.
 */
final class WarmUpInputs {
  /** Made-up pods per sync: enough for the per-pod rules to fire, few enough to be cheap. */
  static final int PODS = 24;

  /** The namespace of the made-up pods (no real pod's: it is not a valid namespace name). */
  static final String NAMESPACE = "evictd.warm-up";

  private static final long MI = 1024L * 1024;
  private static final long GI = 1024L * MI;

  /** One scratch sync's inputs. */
  record Step(Instant at, Summary summary, List<Pod> pods, List<Object> extra, boolean pressure) {}

  private final Threshold threshold;
  private final long capacity;
  private final List<Pod> pods;
  private final String nodeName;
  private final Instant start;

  private WarmUpInputs(Threshold threshold, EvictionConfig config, Instant start) {
    this.threshold = threshold;
    this.nodeName = config.nodeName();
    this.start = start;
    // a capacity well above a quantity threshold (a percentage holds at any capacity)
    long q = threshold.quantity(64 * GI).value();
    this.capacity = Math.max(16 * GI, 4 * q);
    this.pods = pods(nodeName, start);
  }

  /**
   * The inputs for {@code config}: pressure on its memory signal, the hard threshold first (the one
   * an event's sync acts on at once); null when it has no memory threshold (nothing of the event
   * path to warm).
   */
  static WarmUpInputs of(EvictionConfig config, Instant start) {
    Threshold t =
        config.thresholds().stream()
            .filter(
                x ->
                    x.signal() == Signal.MEMORY_AVAILABLE
                        || x.signal() == Signal.ALLOCATABLE_MEMORY_AVAILABLE)
            .min(
                Comparator.comparing((Threshold x) -> !x.isHard())
                    .thenComparing(x -> x.signal() != Signal.MEMORY_AVAILABLE))
            .orElse(null);
    return t == null ? null : new WarmUpInputs(t, config, start);
  }

  /** The threshold the pressure syncs meet. */
  Threshold threshold() {
    return threshold;
  }

  /**
   * Sync {@code n}: quiet and pressure in turn (a soft threshold gets a second pressure sync past
   * its grace period, so that it is acted on); the clock moves on a second per sync.
   */
  Step step(int n) {
    int cycle = threshold.isHard() ? 2 : 3;
    int k = n % cycle;
    Instant at = start.plusSeconds(n);
    if (k == 2) {
      at = at.plus(threshold.gracePeriod()).plus(Duration.ofSeconds(1));
    }
    boolean pressure = k > 0;
    long line = threshold.quantity(capacity).value();
    long available = pressure ? Math.max(0, line - 64 * MI) : line + (capacity - line) / 2;
    List<Object> extra = new ArrayList<>(1);
    extra.add(
        new MemcgThresholdCrossed(
            threshold.signal(),
            pressure ? MemcgThresholdCrossed.Direction.UP : MemcgThresholdCrossed.Direction.DOWN,
            capacity - line,
            capacity - available,
            at));
    return new Step(at, summary(at, available), pods, extra, pressure);
  }

  private Summary summary(Instant at, long available) {
    boolean node = threshold.signal() == Signal.MEMORY_AVAILABLE;
    long quiet = capacity / 2;
    long nodeAvailable = node ? available : quiet;
    long podsAvailable = node ? quiet : available;
    Summary.FsStats fs =
        new Summary.FsStats(at, 500 * GI, 1000 * GI, 500 * GI, 5_000_000L, 10_000_000L, 5_000_000L);
    Summary.NodeStats stats =
        new Summary.NodeStats(
            nodeName,
            new Summary.MemoryStats(
                at, nodeAvailable, capacity - nodeAvailable, capacity - nodeAvailable, null),
            fs,
            new Summary.RuntimeStats(fs, null),
            new Summary.RlimitStats(at, 4_194_304L, 1_000L),
            List.of(
                new Summary.ContainerStats(
                    "pods",
                    new Summary.MemoryStats(
                        at,
                        podsAvailable,
                        capacity - podsAvailable,
                        capacity - podsAvailable,
                        null),
                    null,
                    null)));
    List<Summary.PodStats> podStats = new ArrayList<>(PODS);
    for (int i = 0; i < PODS; i++) {
      if (i % 2 == 1) {
        continue; // as a pod without a cgroup yet: no statistics
      }
      long ws = (16 + (i * 37L) % 700) * MI;
      Summary.MemoryStats m = new Summary.MemoryStats(at, null, ws, ws, ws);
      podStats.add(
          new Summary.PodStats(
              new Summary.PodReference(name(i), NAMESPACE, uid(i)),
              List.of(new Summary.ContainerStats("c", m, null, null)),
              m,
              List.of(),
              null,
              new Summary.ProcessStats(3L)));
    }
    return new Summary(stats, podStats);
  }

  private static String name(int i) {
    return String.format(java.util.Locale.ROOT, "warm-up-%02d", i);
  }

  private static String uid(int i) {
    return "evictd-warm-up-" + i;
  }

  /** Pods of every QoS class (best effort, burstable, guaranteed) and three priorities. */
  private static List<Pod> pods(String nodeName, Instant start) {
    List<Pod> out = new ArrayList<>(PODS);
    for (int i = 0; i < PODS; i++) {
      ContainerBuilder c = new ContainerBuilder().withName("c").withImage("warm-up");
      int qos = i % 3;
      Quantity mem = new Quantity((64 + 16 * i) + "Mi");
      if (qos == 1) {
        c.withNewResources().addToRequests("memory", mem).endResources();
      } else if (qos == 2) {
        Quantity cpu = new Quantity("100m");
        c.withNewResources()
            .addToRequests("memory", mem)
            .addToRequests("cpu", cpu)
            .addToLimits("memory", mem)
            .addToLimits("cpu", cpu)
            .endResources();
      }
      out.add(
          new PodBuilder()
              .withNewMetadata()
              .withNamespace(NAMESPACE)
              .withName(name(i))
              .withUid(uid(i))
              .withCreationTimestamp(start.minusSeconds(3600L - 60L * i).toString())
              .endMetadata()
              .withNewSpec()
              .withNodeName(nodeName)
              .withPriority((i % 4) * 1000)
              .withContainers(c.build())
              .endSpec()
              .withNewStatus()
              .withPhase("Running")
              .endStatus()
              .build());
    }
    return List.copyOf(out);
  }
}
