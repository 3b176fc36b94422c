package dev.evictd.reference;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.FsLayout;
import dev.evictd.api.NodeConditionType;
import dev.evictd.api.Quantity;
import dev.evictd.api.ReclaimAction;
import dev.evictd.api.Signal;
import dev.evictd.api.Threshold;
import dev.evictd.api.ThresholdValue;
import dev.evictd.engine.PodFacts;
import dev.evictd.k8s.PodResources;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.Volume;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A straight-line, plain-Java port of the kubelet eviction manager's {@code synchronize}
 * (pkg/kubelet/eviction: eviction_manager.go, helpers.go, api/types.go), written from the kubelet's
 * source and independent of evictd's rules. It is the oracle of the differential tests: on any
 * input the default rules must plan what this class computes.
 *
 * <p>Input plumbing that is not policy is shared with evictd: the thresholds come from {@link
 * EvictionConfig} (KubeletEvictionConfig: defaults, allocatable copy, containerfs derivation,
 * validation), quantities are {@link Quantity} (Go-exact), pod requests, limits, criticality and
 * local volumes come from {@link PodResources}.
 *
 * <p>Where the kubelet is not deterministic (it collects the thresholds whose grace period is met
 * from a Go map and sorts them with an unstable sort that only puts memory first), this class uses
 * evictd's documented choice: memory signals, then disk, then PID; within a family, configuration
 * order ({@link Threshold#order()}). Pods are ranked with a stable sort: equal keys keep the active
 * pod list order (Go's {@code sort.Sort} is not stable).
 */
public final class KubeletReference {
  /** Go {@code immediateEvictionGracePeriodSeconds}. */
  static final long IMMEDIATE_GRACE_SECONDS = 1;

  private static final String POD_EPHEMERAL_MESSAGE =
      "Pod ephemeral local storage usage exceeds the total limit of containers %s. ";

  /** One signal observation: Go's {@code signalObservation}. */
  record Observed(long available, long capacity, Instant time) {}

  /** One eviction: the pod (namespace/name), the grace period override and the message. */
  public record Eviction(String pod, long gracePeriodSeconds, String message) {}

  /**
   * What one sync did.
   *
   * @param conditions the node conditions reported, in MemoryPressure, DiskPressure, PIDPressure
   *     order
   * @param signal the signal of the threshold chosen to reclaim, or null
   * @param reclaimed the node-level reclaim functions run, in order
   * @param ranking the active pods (namespace/name) in rank order, empty when the sync did not rank
   * @param evictions the pods evicted, in order
   * @param localStorage whether the evictions are local-storage limit evictions
   */
  public record Result(
      List<NodeConditionType> conditions,
      Signal signal,
      List<ReclaimAction> reclaimed,
      List<String> ranking,
      List<Eviction> evictions,
      boolean localStorage) {}

  private final List<Threshold> thresholds;
  private final FsLayout layout;
  private final Duration pressureTransitionPeriod;
  private final long maxPodGracePeriodSeconds;
  private final boolean localStorageCapacityIsolation;

  // managerImpl state
  private List<NodeConditionType> nodeConditions = List.of();
  private Map<NodeConditionType, Instant> nodeConditionsLastObservedAt =
      new EnumMap<>(NodeConditionType.class);
  private Map<Threshold, Instant> thresholdsFirstObservedAt = new LinkedHashMap<>();
  private List<Threshold> thresholdsMet = List.of();
  private Map<Signal, Observed> lastObservations = Map.of();
  private boolean layoutKnown;
  private boolean noEvictionFunctions;
  // the kubelet the configuration was read for: ranking requests, the grace period and the message
  // follow its version and gates
  private final dev.evictd.api.Kubelet kubelet;

  /** A manager for the node's eviction configuration. */
  public KubeletReference(EvictionConfig config) {
    this.kubelet =
        config.kubelet() != null ? config.kubelet() : dev.evictd.k8s.KubeletFeatureGates.newest();
    this.thresholds = List.copyOf(config.thresholds());
    this.layout = config.fsLayout();
    this.pressureTransitionPeriod = config.pressureTransitionPeriod();
    this.maxPodGracePeriodSeconds = config.maxPodGracePeriodSeconds();
    this.localStorageCapacityIsolation = config.localStorageCapacityIsolation();
  }

  /**
   * One {@code synchronize}.
   *
   * @param now the clock
   * @param summary the statistics the sync observes
   * @param activePods the active pods
   * @param afterReclaim the statistics after node-level reclaim (null: the same as {@code summary})
   */
  public Result sync(Instant now, Summary summary, List<Pod> activePods, Summary afterReclaim) {
    // if we have nothing to do, just return
    if (thresholds.isEmpty() && !localStorageCapacityIsolation) {
      return result(null, List.of(), List.of(), List.of(), false);
    }
    // `thresholds := m.config.Thresholds` is read before the filesystem layout is known. In the
    // first sync,
    // `thresholds, err := UpdateContainerFsThresholds(...)` declares a new variable inside the if
    // block: only
    // m.config.Thresholds gets the appended containerfs thresholds (replacements are written in
    // place and seen).
    List<Threshold> current = thresholds;
    if (!layoutKnown) {
      layoutKnown = true;
      // If we are a split filesystem but the feature is turned off we should return an error:
      // the ranking and reclaim functions are then never built
      if (layout.splitContainerFs()
          && !kubelet.gate(dev.evictd.api.Kubelet.KUBELET_SEPARATE_DISK_GC)) {
        noEvictionFunctions = true;
        return result(null, List.of(), List.of(), List.of(), false);
      }
      current = thresholds.stream().filter(t -> !t.derivedAfterFirstSync()).toList();
    }
    boolean dedicatedImageFs = layout.hasImageFs();

    // make observations and get a function to derive pod usage stats relative to those
    // observations.
    Map<Signal, Observed> observations = makeSignalObservations(summary);
    Map<String, Summary.PodStats> statsByUid = cachedStats(summary);

    // determine the set of thresholds met independent of grace period
    List<Threshold> met = thresholdsMet(current, observations, false);
    // determine the set of thresholds previously met that have not yet satisfied the associated
    // min-reclaim
    if (!thresholdsMet.isEmpty()) {
      List<Threshold> notYetResolved = thresholdsMet(thresholdsMet, observations, true);
      met = mergeThresholds(met, notYetResolved);
    }

    // track when a threshold was first observed
    Map<Threshold, Instant> firstObservedAt = new LinkedHashMap<>();
    for (Threshold t : met) {
      firstObservedAt.put(t, thresholdsFirstObservedAt.getOrDefault(t, now));
    }

    // the set of node conditions that are triggered by currently observed thresholds
    List<NodeConditionType> observedConditions = new ArrayList<>();
    for (Threshold t : met) {
      NodeConditionType c = condition(t.signal());
      if (!observedConditions.contains(c)) {
        observedConditions.add(c);
      }
    }
    // track when a node condition was last observed
    Map<NodeConditionType, Instant> conditionsLastObservedAt =
        new EnumMap<>(NodeConditionType.class);
    for (NodeConditionType c : observedConditions) {
      conditionsLastObservedAt.put(c, now);
    }
    for (Map.Entry<NodeConditionType, Instant> e : nodeConditionsLastObservedAt.entrySet()) {
      conditionsLastObservedAt.putIfAbsent(e.getKey(), e.getValue());
    }
    // node conditions report true if it has been observed within the transition period window
    List<NodeConditionType> conditions = new ArrayList<>();
    for (Map.Entry<NodeConditionType, Instant> e : conditionsLastObservedAt.entrySet()) {
      if (Duration.between(e.getValue(), now).compareTo(pressureTransitionPeriod) < 0) {
        conditions.add(e.getKey());
      }
    }

    // determine the set of thresholds we need to drive eviction behavior (i.e. all grace periods
    // are met)
    List<Threshold> graceMet = new ArrayList<>();
    for (Map.Entry<Threshold, Instant> e : firstObservedAt.entrySet()) {
      Duration duration = Duration.between(e.getValue(), now);
      if (duration.compareTo(e.getKey().gracePeriod()) < 0) {
        continue;
      }
      graceMet.add(e.getKey());
    }

    // update internal state
    nodeConditions = List.copyOf(conditions);
    thresholdsFirstObservedAt = firstObservedAt;
    nodeConditionsLastObservedAt = conditionsLastObservedAt;
    thresholdsMet = List.copyOf(graceMet);

    // determine the set of thresholds whose stats have been updated since the last sync
    List<Threshold> updated = thresholdsUpdatedStats(graceMet, observations, lastObservations);
    lastObservations = observations;

    // evict pods if there is a resource usage violation from local volume temporary storage
    if (localStorageCapacityIsolation) {
      List<Eviction> evicted = localStorageEviction(activePods, statsByUid, dedicatedImageFs);
      if (!evicted.isEmpty()) {
        return result(null, List.of(), List.of(), evicted, true);
      }
    }

    if (updated.isEmpty()) {
      return result(null, List.of(), List.of(), List.of(), false);
    }

    // rank the thresholds by eviction priority (evictd's deterministic order; see the class
    // comment)
    List<Threshold> sorted = new ArrayList<>(updated);
    sorted.sort(
        Comparator.comparingInt((Threshold t) -> familyRank(t.signal()))
            .thenComparingInt(Threshold::order));
    Threshold thresholdToReclaim = sorted.get(0);
    String resourceToReclaim = resource(thresholdToReclaim.signal());

    // check if there are node-level resources we can reclaim to reduce pressure before evicting
    // end-user pods.
    if (noEvictionFunctions) {
      // no node-level reclaim function, then "no ranking function for signal"
      return result(thresholdToReclaim.signal(), List.of(), List.of(), List.of(), false);
    }
    List<ReclaimAction> reclaimFuncs = nodeReclaimFuncs(thresholdToReclaim.signal());
    if (!reclaimFuncs.isEmpty()) {
      Map<Signal, Observed> after =
          makeSignalObservations(afterReclaim != null ? afterReclaim : summary);
      // evaluate all thresholds independently of their grace period to see if with
      // the new observations, we think we have met min reclaim goals
      if (thresholdsMet(thresholds, after, true).isEmpty()) {
        return result(thresholdToReclaim.signal(), reclaimFuncs, List.of(), List.of(), false);
      }
    }

    // the only candidates viable for eviction are those pods that had anything running.
    if (activePods.isEmpty()) {
      return result(thresholdToReclaim.signal(), reclaimFuncs, List.of(), List.of(), false);
    }

    // rank the running pods for eviction for the specified resource
    List<Pod> ranked = new ArrayList<>(activePods);
    ranked.sort(rankFunc(thresholdToReclaim.signal(), statsByUid));
    List<String> ranking = ranked.stream().map(KubeletReference::key).toList();

    // we kill at most a single pod during each eviction interval
    for (Pod pod : ranked) {
      long gracePeriodOverride = IMMEDIATE_GRACE_SECONDS;
      if (!isHardEvictionThreshold(thresholdToReclaim)) {
        gracePeriodOverride = maxPodGracePeriodSeconds;
        Long tgps = pod.getSpec() == null ? null : pod.getSpec().getTerminationGracePeriodSeconds();
        // 1.32-1.34: AllowOverwriteTerminationGracePeriodSeconds on skips the cap (locked off
        // from 1.35)
        if (tgps != null
            && !kubelet.gate(
                dev.evictd.api.Kubelet.ALLOW_OVERWRITE_TERMINATION_GRACE_PERIOD_SECONDS)) {
          gracePeriodOverride = Math.min(maxPodGracePeriodSeconds, tgps);
        }
        // the pod worker raises a grace period below 1 to 1 when it kills
        if (gracePeriodOverride < 0) {
          gracePeriodOverride = 1;
        }
      }
      String message = evictionMessage(resourceToReclaim, pod, statsByUid, sorted, observations);
      if (evictPod(pod)) {
        return result(
            thresholdToReclaim.signal(),
            reclaimFuncs,
            ranking,
            List.of(new Eviction(key(pod), gracePeriodOverride, message)),
            false);
      }
    }
    return result(thresholdToReclaim.signal(), reclaimFuncs, ranking, List.of(), false);
  }

  private Result result(
      Signal signal,
      List<ReclaimAction> reclaimed,
      List<String> ranking,
      List<Eviction> evictions,
      boolean localStorage) {
    List<NodeConditionType> ordered = new ArrayList<>(nodeConditions);
    ordered.sort(Comparator.naturalOrder());
    return new Result(List.copyOf(ordered), signal, reclaimed, ranking, evictions, localStorage);
  }

  /** The conditions reported by the last sync, in enum order. */
  public List<NodeConditionType> nodeConditions() {
    List<NodeConditionType> ordered = new ArrayList<>(nodeConditions);
    ordered.sort(Comparator.naturalOrder());
    return ordered;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // evictPod, local storage
  // ---------------------------------------------------------------------------------------------------------------

  /** Go {@code evictPod}: refuses critical pods (static, mirror, system-critical priority). */
  private static boolean evictPod(Pod pod) {
    return !PodResources.isCritical(pod);
  }

  private List<Eviction> localStorageEviction(
      List<Pod> pods, Map<String, Summary.PodStats> statsByUid, boolean dedicatedImageFs) {
    List<Eviction> evicted = new ArrayList<>();
    for (Pod pod : pods) {
      Summary.PodStats podStats = statsByUid.get(PodFacts.uid(pod));
      if (podStats == null) {
        continue;
      }
      Eviction e = emptyDirLimitEviction(podStats, pod);
      if (e != null) {
        evicted.add(e);
        continue;
      }
      e = podEphemeralStorageLimitEviction(podStats, pod);
      if (e != null) {
        evicted.add(e);
        continue;
      }
      e = containerEphemeralStorageLimitEviction(podStats, pod, dedicatedImageFs);
      if (e != null) {
        evicted.add(e);
      }
    }
    return evicted;
  }

  /**
   * The local-storage limit a pod violates, as the kubelet checks it (emptyDir sizeLimit, then the
   * pod's ephemeral storage limit, then its containers'), whether or not the pod may be evicted;
   * null when it violates none.
   */
  public String localStorageViolation(Pod pod, Summary.PodStats podStats) {
    if (podStats == null) {
      return null;
    }
    String m = emptyDirViolation(podStats, pod);
    if (m == null) {
      m = podEphemeralViolation(podStats, pod);
    }
    if (m == null) {
      m = containerEphemeralViolation(podStats, pod, layout.hasImageFs());
    }
    return m;
  }

  private static Eviction emptyDirLimitEviction(Summary.PodStats podStats, Pod pod) {
    String message = emptyDirViolation(podStats, pod);
    if (message != null && evictPod(pod)) {
      return new Eviction(key(pod), IMMEDIATE_GRACE_SECONDS, message);
    }
    return null;
  }

  private static String emptyDirViolation(Summary.PodStats podStats, Pod pod) {
    Map<String, Quantity> podVolumeUsed = new HashMap<>();
    for (Summary.VolumeStats volume : podStats.volumes()) {
      if (volume == null) {
        continue;
      }
      if (volume.usedBytes() == null) {
        // Go dereferences *volume.UsedBytes: the kubelet panics. Generated inputs never hold this.
        throw new IllegalStateException("the kubelet panics on a volume stat without usedBytes");
      }
      podVolumeUsed.put(volume.name(), Quantity.of(volume.usedBytes(), Quantity.Format.BINARY_SI));
    }
    List<Volume> volumes = pod.getSpec() == null ? null : pod.getSpec().getVolumes();
    if (volumes == null) {
      return null;
    }
    for (Volume v : volumes) {
      if (v != null && v.getEmptyDir() != null) {
        Quantity size = quantity(v.getEmptyDir().getSizeLimit());
        Quantity used = podVolumeUsed.get(v.getName());
        if (used != null && size != null && size.sign() == 1 && used.compareTo(size) > 0) {
          // the emptyDir usage exceeds the size limit, evict the pod
          return "Usage of EmptyDir volume "
              + goQuote(v.getName())
              + " exceeds the limit "
              + goQuote(size.toString())
              + ". ";
        }
      }
    }
    return null;
  }

  private static Eviction podEphemeralStorageLimitEviction(Summary.PodStats podStats, Pod pod) {
    String message = podEphemeralViolation(podStats, pod);
    if (message != null && evictPod(pod)) {
      return new Eviction(key(pod), IMMEDIATE_GRACE_SECONDS, message);
    }
    return null;
  }

  private static String podEphemeralViolation(Summary.PodStats podStats, Pod pod) {
    Map<String, Quantity> podLimits = PodResources.podLimits(pod);
    Quantity limit = podLimits.get(PodResources.EPHEMERAL_STORAGE);
    if (limit == null) {
      return null;
    }
    // pod stats api summarizes ephemeral storage usage (container, emptyDir, host[etc-hosts, logs])
    Quantity usage = Quantity.ZERO;
    if (podStats.ephemeralStorage() != null && podStats.ephemeralStorage().usedBytes() != null) {
      usage = Quantity.of(podStats.ephemeralStorage().usedBytes(), Quantity.Format.BINARY_SI);
    }
    if (usage.compareTo(limit) > 0) {
      return String.format(POD_EPHEMERAL_MESSAGE, limit);
    }
    return null;
  }

  private static Eviction containerEphemeralStorageLimitEviction(
      Summary.PodStats podStats, Pod pod, boolean dedicatedImageFs) {
    String message = containerEphemeralViolation(podStats, pod, dedicatedImageFs);
    if (message != null && evictPod(pod)) {
      return new Eviction(key(pod), IMMEDIATE_GRACE_SECONDS, message);
    }
    return null;
  }

  private static String containerEphemeralViolation(
      Summary.PodStats podStats, Pod pod, boolean dedicatedImageFs) {
    Map<String, Quantity> thresholdsMap = new HashMap<>();
    List<Container> containers = pod.getSpec() == null ? null : pod.getSpec().getContainers();
    if (containers != null) {
      for (Container c : containers) {
        if (c == null) {
          continue;
        }
        Quantity limit = PodResources.containerLimit(c, PodResources.EPHEMERAL_STORAGE);
        if (limit != null && limit.value() != 0) {
          thresholdsMap.put(c.getName(), limit);
        }
      }
    }
    for (Summary.ContainerStats containerStat : podStats.containers()) {
      if (containerStat == null) {
        continue;
      }
      Quantity containerUsed = diskUsage(containerStat.logs());
      if (!dedicatedImageFs) {
        containerUsed = containerUsed.add(diskUsage(containerStat.rootfs()));
      }
      Quantity threshold = thresholdsMap.get(containerStat.name());
      if (threshold != null && threshold.compareTo(containerUsed) < 0) {
        // containerEphemeralStorageMessageFmt: "Container %s exceeded its local ephemeral storage
        // limit %q. "
        return "Container "
            + containerStat.name()
            + " exceeded its local ephemeral storage limit "
            + goQuote(threshold.toString())
            + ". ";
      }
    }
    return null;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Observations and thresholds
  // ---------------------------------------------------------------------------------------------------------------

  /** Go {@code makeSignalObservations} (without swap, which evictd's summary does not carry). */
  static Map<Signal, Observed> makeSignalObservations(Summary summary) {
    Map<Signal, Observed> result = new EnumMap<>(Signal.class);
    Summary.NodeStats node = summary == null ? null : summary.node();
    if (node == null) {
      return result;
    }
    Summary.MemoryStats memory = node.memory();
    if (memory != null && memory.availableBytes() != null && memory.workingSetBytes() != null) {
      result.put(
          Signal.MEMORY_AVAILABLE,
          new Observed(
              memory.availableBytes(),
              memory.availableBytes() + memory.workingSetBytes(),
              memory.time()));
    }
    // getSysContainer: the first system container named "pods"
    Summary.ContainerStats allocatable = null;
    if (node.systemContainers() != null) {
      for (Summary.ContainerStats c : node.systemContainers()) {
        if (c != null && "pods".equals(c.name())) {
          allocatable = c;
          break;
        }
      }
    }
    if (allocatable != null) {
      Summary.MemoryStats m = allocatable.memory();
      if (m != null && m.availableBytes() != null && m.workingSetBytes() != null) {
        result.put(
            Signal.ALLOCATABLE_MEMORY_AVAILABLE,
            new Observed(m.availableBytes(), m.availableBytes() + m.workingSetBytes(), m.time()));
      }
    }
    fsObservations(result, node.fs(), Signal.NODEFS_AVAILABLE, Signal.NODEFS_INODES_FREE);
    if (node.runtime() != null) {
      fsObservations(
          result, node.runtime().imageFs(), Signal.IMAGEFS_AVAILABLE, Signal.IMAGEFS_INODES_FREE);
      fsObservations(
          result,
          node.runtime().containerFs(),
          Signal.CONTAINERFS_AVAILABLE,
          Signal.CONTAINERFS_INODES_FREE);
    }
    Summary.RlimitStats rlimit = node.rlimit();
    if (rlimit != null && rlimit.curproc() != null && rlimit.maxpid() != null) {
      long available = rlimit.maxpid() - rlimit.curproc();
      result.put(Signal.PID_AVAILABLE, new Observed(available, rlimit.maxpid(), rlimit.time()));
    }
    return result;
  }

  private static void fsObservations(
      Map<Signal, Observed> result, Summary.FsStats fs, Signal bytes, Signal inodes) {
    if (fs == null) {
      return;
    }
    if (fs.availableBytes() != null && fs.capacityBytes() != null) {
      result.put(bytes, new Observed(fs.availableBytes(), fs.capacityBytes(), fs.time()));
    }
    if (fs.inodesFree() != null && fs.inodes() != null) {
      result.put(inodes, new Observed(fs.inodesFree(), fs.inodes(), fs.time()));
    }
  }

  /**
   * Go {@code cachedStatsFunc}: pod stats by uid; a later entry with the same uid replaces an
   * earlier one.
   */
  static Map<String, Summary.PodStats> cachedStats(Summary summary) {
    Map<String, Summary.PodStats> byUid = new HashMap<>();
    if (summary == null) {
      return byUid;
    }
    for (Summary.PodStats ps : summary.pods()) {
      if (ps == null) {
        continue;
      }
      String uid = ps.podRef() == null || ps.podRef().uid() == null ? "" : ps.podRef().uid();
      byUid.put(uid, ps);
    }
    return byUid;
  }

  /** Go {@code evictionapi.GetThresholdQuantity}. */
  static Quantity thresholdQuantity(ThresholdValue value, long capacity) {
    if (value.quantity() != null) {
      return value.quantity();
    }
    return Quantity.of(
        (long) ((double) capacity * (double) value.percentage()), Quantity.Format.BINARY_SI);
  }

  /** Go {@code thresholdsMet}. */
  static List<Threshold> thresholdsMet(
      List<Threshold> thresholds, Map<Signal, Observed> observations, boolean enforceMinReclaim) {
    List<Threshold> results = new ArrayList<>();
    for (Threshold threshold : thresholds) {
      Observed observed = observations.get(threshold.signal());
      if (observed == null) {
        continue;
      }
      Quantity quantity = thresholdQuantity(threshold.value(), observed.capacity());
      // if enforceMinReclaim is specified, we compare relative to value - minreclaim
      if (enforceMinReclaim && threshold.minReclaim() != null) {
        quantity = quantity.add(thresholdQuantity(threshold.minReclaim(), observed.capacity()));
      }
      if (quantity.compareTo(observed.available()) > 0) {
        results.add(threshold);
      }
    }
    return results;
  }

  /**
   * Go {@code mergeThresholds}: appends the thresholds of {@code b} that {@code hasThreshold} does
   * not find.
   */
  static List<Threshold> mergeThresholds(List<Threshold> a, List<Threshold> b) {
    List<Threshold> results = new ArrayList<>(a);
    for (Threshold t : b) {
      if (!hasThreshold(results, t)) {
        results.add(t);
      }
    }
    return results;
  }

  private static boolean hasThreshold(List<Threshold> inputs, Threshold item) {
    for (Threshold input : inputs) {
      if (input.gracePeriod().equals(item.gracePeriod())
          && input.signal() == item.signal()
          && compareThresholdValue(input.value(), item.value())) {
        return true;
      }
    }
    return false;
  }

  private static boolean compareThresholdValue(ThresholdValue a, ThresholdValue b) {
    if (a.quantity() != null) {
      return b.quantity() != null && a.quantity().compareTo(b.quantity()) == 0;
    }
    if (b.quantity() != null) {
      return false;
    }
    return a.percentage() == b.percentage();
  }

  /** Go {@code thresholdsUpdatedStats}: the stale-statistics guard. */
  static List<Threshold> thresholdsUpdatedStats(
      List<Threshold> thresholds, Map<Signal, Observed> observations, Map<Signal, Observed> last) {
    List<Threshold> results = new ArrayList<>();
    for (Threshold t : thresholds) {
      Observed observed = observations.get(t.signal());
      if (observed == null) {
        continue;
      }
      Observed previous = last.get(t.signal());
      if (previous == null
          || observed.time() == null
          || previous.time() == null
          || observed.time().isAfter(previous.time())) {
        results.add(t);
      }
    }
    return results;
  }

  private static boolean isHardEvictionThreshold(Threshold t) {
    return t.gracePeriod().isZero();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Signal tables (helpers.go init, buildSignalToNodeReclaimFuncs)
  // ---------------------------------------------------------------------------------------------------------------

  private static NodeConditionType condition(Signal s) {
    return switch (s) {
      case MEMORY_AVAILABLE, ALLOCATABLE_MEMORY_AVAILABLE -> NodeConditionType.MemoryPressure;
      case PID_AVAILABLE -> NodeConditionType.PIDPressure;
      default -> NodeConditionType.DiskPressure;
    };
  }

  /** Go {@code signalToResource}. */
  private static String resource(Signal s) {
    return switch (s) {
      case MEMORY_AVAILABLE, ALLOCATABLE_MEMORY_AVAILABLE -> "memory";
      case NODEFS_AVAILABLE, IMAGEFS_AVAILABLE, CONTAINERFS_AVAILABLE -> "ephemeral-storage";
      case NODEFS_INODES_FREE, IMAGEFS_INODES_FREE, CONTAINERFS_INODES_FREE -> "inodes";
      case PID_AVAILABLE -> "pids";
    };
  }

  /** evictd's order between signal families: memory, then disk, then PID. */
  private static int familyRank(Signal s) {
    return switch (condition(s)) {
      case MemoryPressure -> 0;
      case DiskPressure -> 1;
      case PIDPressure -> 2;
    };
  }

  /** Go {@code buildSignalToNodeReclaimFuncs} for this node's layout. */
  private List<ReclaimAction> nodeReclaimFuncs(Signal s) {
    List<ReclaimAction> both = List.of(ReclaimAction.CONTAINERS, ReclaimAction.IMAGES);
    boolean withImageFs = layout.hasImageFs();
    boolean split = layout.splitContainerFs();
    if (withImageFs && !split) {
      return switch (s) {
        case IMAGEFS_AVAILABLE,
            IMAGEFS_INODES_FREE,
            CONTAINERFS_AVAILABLE,
            CONTAINERFS_INODES_FREE ->
            both;
        default -> List.of(); // nodefs: only logs would help, the kubelet reclaims nothing
      };
    } else if (withImageFs) {
      return switch (s) {
        case IMAGEFS_AVAILABLE, IMAGEFS_INODES_FREE -> List.of(ReclaimAction.IMAGES);
        case NODEFS_AVAILABLE, NODEFS_INODES_FREE, CONTAINERFS_AVAILABLE, CONTAINERFS_INODES_FREE ->
            List.of(ReclaimAction.CONTAINERS);
        default -> List.of();
      };
    }
    return switch (s) {
      case MEMORY_AVAILABLE, ALLOCATABLE_MEMORY_AVAILABLE, PID_AVAILABLE -> List.of();
      default -> both;
    };
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Ranking
  // ---------------------------------------------------------------------------------------------------------------

  /** Go {@code fsStatsType}. */
  enum FsStatsType {
    ROOT,
    LOGS,
    LOCAL_VOLUME_SOURCE,
    IMAGES
  }

  /** A Go {@code cmpFunc}. */
  private interface CmpFunc {
    int cmp(Pod p1, Pod p2);
  }

  /**
   * Go {@code orderedBy(cmp...)}: the first comparison that is not equal decides, the last one
   * decides ties.
   */
  private static Comparator<Pod> orderedBy(CmpFunc... cmp) {
    return (p1, p2) -> {
      int k;
      for (k = 0; k < cmp.length - 1; k++) {
        int r = cmp[k].cmp(p1, p2);
        if (r < 0) {
          return -1;
        }
        if (r > 0) {
          return 1;
        }
      }
      return Integer.signum(cmp[k].cmp(p1, p2));
    };
  }

  /** Go {@code buildSignalToRankFunc} for this node's layout. */
  private Comparator<Pod> rankFunc(Signal s, Map<String, Summary.PodStats> stats) {
    switch (s) {
      case MEMORY_AVAILABLE, ALLOCATABLE_MEMORY_AVAILABLE:
        return orderedBy(exceedMemoryRequests(stats), KubeletReference::priority, memory(stats));
      case PID_AVAILABLE:
        return orderedBy(KubeletReference::priority, process(stats));
      default:
        break;
    }
    boolean inodes = resource(s).equals("inodes");
    List<FsStatsType> measure;
    boolean withImageFs = layout.hasImageFs();
    boolean split = layout.splitContainerFs();
    boolean nodeFsSide =
        s == Signal.NODEFS_AVAILABLE
            || s == Signal.NODEFS_INODES_FREE
            || s == Signal.CONTAINERFS_AVAILABLE
            || s == Signal.CONTAINERFS_INODES_FREE;
    if (withImageFs && !split) {
      boolean nodeFs = s == Signal.NODEFS_AVAILABLE || s == Signal.NODEFS_INODES_FREE;
      // with an imagefs, nodefs pod rank func for eviction only includes logs and local volumes;
      // imagefs (and containerfs, which is imagefs here) only includes rootfs
      measure =
          nodeFs
              ? List.of(FsStatsType.LOGS, FsStatsType.LOCAL_VOLUME_SOURCE)
              : List.of(FsStatsType.ROOT, FsStatsType.IMAGES);
    } else if (withImageFs) {
      // split: nodefs and containerfs track logs, local volumes and the writable layer; imagefs
      // only images
      measure =
          nodeFsSide
              ? List.of(FsStatsType.LOGS, FsStatsType.LOCAL_VOLUME_SOURCE, FsStatsType.ROOT)
              : List.of(FsStatsType.IMAGES);
    } else {
      measure =
          List.of(
              FsStatsType.IMAGES,
              FsStatsType.ROOT,
              FsStatsType.LOGS,
              FsStatsType.LOCAL_VOLUME_SOURCE);
    }
    return orderedBy(
        exceedDiskRequests(stats, measure, inodes),
        KubeletReference::priority,
        disk(stats, measure, inodes));
  }

  private static int cmpBool(boolean a, boolean b) {
    if (a == b) {
      return 0;
    }
    if (!b) {
      return -1;
    }
    return 1;
  }

  private static int priority(Pod p1, Pod p2) {
    int priority1 = PodResources.priority(p1);
    int priority2 = PodResources.priority(p2);
    return Integer.compare(priority1, priority2);
  }

  /** Memoizes a per-pod value while one ranking sorts (comparators ask for it O(n log n) times). */
  private static <V> java.util.function.Function<Pod, V> perPod(
      java.util.function.Function<Pod, V> f) {
    Map<Pod, V> cache = new java.util.IdentityHashMap<>();
    return p -> cache.computeIfAbsent(p, f);
  }

  private CmpFunc exceedMemoryRequests(Map<String, Summary.PodStats> stats) {
    java.util.function.Function<Pod, Quantity> request =
        perPod(p -> PodResources.requestQuantity(p, "memory", kubelet));
    return (p1, p2) -> {
      Summary.PodStats s1 = stats.get(PodFacts.uid(p1));
      Summary.PodStats s2 = stats.get(PodFacts.uid(p2));
      if (s1 == null || s2 == null) {
        // prioritize evicting the pod for which no stats were found
        return cmpBool(s1 == null, s2 == null);
      }
      boolean e1 = memoryUsage(s1.memory()).compareTo(request.apply(p1)) == 1;
      boolean e2 = memoryUsage(s2.memory()).compareTo(request.apply(p2)) == 1;
      return cmpBool(e1, e2);
    };
  }

  private CmpFunc memory(Map<String, Summary.PodStats> stats) {
    java.util.function.Function<Pod, Quantity> request =
        perPod(p -> PodResources.requestQuantity(p, "memory", kubelet));
    return (p1, p2) -> {
      Summary.PodStats s1 = stats.get(PodFacts.uid(p1));
      Summary.PodStats s2 = stats.get(PodFacts.uid(p2));
      if (s1 == null || s2 == null) {
        return cmpBool(s1 == null, s2 == null);
      }
      Quantity m1 = memoryUsage(s1.memory()).sub(request.apply(p1));
      Quantity m2 = memoryUsage(s2.memory()).sub(request.apply(p2));
      // prioritize evicting the pod which has the larger consumption of memory
      return m2.compareTo(m1);
    };
  }

  private static CmpFunc process(Map<String, Summary.PodStats> stats) {
    return (p1, p2) -> {
      Summary.PodStats s1 = stats.get(PodFacts.uid(p1));
      Summary.PodStats s2 = stats.get(PodFacts.uid(p2));
      if (s1 == null || s2 == null) {
        return cmpBool(s1 == null, s2 == null);
      }
      // int(p2Process - p1Process) on uint64: the wrapped difference read as a signed int64
      long diff = processUsage(s2) - processUsage(s1);
      return Long.signum(diff);
    };
  }

  private CmpFunc exceedDiskRequests(
      Map<String, Summary.PodStats> stats, List<FsStatsType> measure, boolean inodes) {
    String diskResource = inodes ? "inodes" : PodResources.EPHEMERAL_STORAGE;
    java.util.function.Function<Pod, Quantity> request =
        perPod(p -> PodResources.requestQuantity(p, diskResource, kubelet));
    java.util.function.Function<Pod, Quantity> usage =
        perPod(p -> podDiskUsage(stats.get(PodFacts.uid(p)), p, measure, inodes));
    return (p1, p2) -> {
      Summary.PodStats s1 = stats.get(PodFacts.uid(p1));
      Summary.PodStats s2 = stats.get(PodFacts.uid(p2));
      if (s1 == null || s2 == null) {
        return cmpBool(s1 == null, s2 == null);
      }
      // for inodes this compares with a request for the resource "inodes", which pods never make
      boolean e1 = usage.apply(p1).compareTo(request.apply(p1)) == 1;
      boolean e2 = usage.apply(p2).compareTo(request.apply(p2)) == 1;
      return cmpBool(e1, e2);
    };
  }

  private CmpFunc disk(
      Map<String, Summary.PodStats> stats, List<FsStatsType> measure, boolean inodes) {
    // the kubelet subtracts the ephemeral-storage request (bytes) even when measuring inodes
    java.util.function.Function<Pod, Quantity> aboveRequest =
        perPod(
            p ->
                podDiskUsage(stats.get(PodFacts.uid(p)), p, measure, inodes)
                    .sub(PodResources.requestQuantity(p, PodResources.EPHEMERAL_STORAGE, kubelet)));
    return (p1, p2) -> {
      Summary.PodStats s1 = stats.get(PodFacts.uid(p1));
      Summary.PodStats s2 = stats.get(PodFacts.uid(p2));
      if (s1 == null || s2 == null) {
        return cmpBool(s1 == null, s2 == null);
      }
      return aboveRequest.apply(p2).compareTo(aboveRequest.apply(p1));
    };
  }

  /** Go {@code podDiskUsage}, the bytes or the inodes of the measured stats. */
  private static Quantity podDiskUsage(
      Summary.PodStats podStats, Pod pod, List<FsStatsType> measure, boolean inodes) {
    Quantity.Format format = inodes ? Quantity.Format.DECIMAL_SI : Quantity.Format.BINARY_SI;
    Quantity total = Quantity.zero(format);
    for (Summary.ContainerStats c : podStats.containers()) {
      if (c == null) {
        continue;
      }
      if (measure.contains(FsStatsType.ROOT)) {
        total = total.add(inodes ? inodeUsage(c.rootfs()) : diskUsage(c.rootfs()));
      }
      if (measure.contains(FsStatsType.LOGS)) {
        total = total.add(inodes ? inodeUsage(c.logs()) : diskUsage(c.logs()));
      }
    }
    if (measure.contains(FsStatsType.LOCAL_VOLUME_SOURCE)) {
      for (String volumeName : PodResources.localVolumeNames(pod)) {
        for (Summary.VolumeStats v : podStats.volumes()) {
          if (v != null && volumeName.equals(v.name())) {
            total =
                total.add(
                    inodes
                        ? count(v.inodesUsed(), Quantity.Format.DECIMAL_SI)
                        : count(v.usedBytes(), Quantity.Format.BINARY_SI));
            break;
          }
        }
      }
    }
    return total;
  }

  private static Quantity count(Long v, Quantity.Format format) {
    return v == null ? Quantity.zero(format) : Quantity.of(v, format);
  }

  private static Quantity diskUsage(Summary.FsStats fs) {
    return count(fs == null ? null : fs.usedBytes(), Quantity.Format.BINARY_SI);
  }

  private static Quantity inodeUsage(Summary.FsStats fs) {
    return count(fs == null ? null : fs.inodesUsed(), Quantity.Format.DECIMAL_SI);
  }

  private static Quantity memoryUsage(Summary.MemoryStats m) {
    return count(m == null ? null : m.workingSetBytes(), Quantity.Format.BINARY_SI);
  }

  private static long processUsage(Summary.PodStats s) {
    return s.processStats() == null || s.processStats().processCount() == null
        ? 0
        : s.processStats().processCount();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Eviction message
  // ---------------------------------------------------------------------------------------------------------------

  /** Go {@code evictionMessage} (the message only; annotations are not compared). */
  private String evictionMessage(
      String resourceToReclaim,
      Pod pod,
      Map<String, Summary.PodStats> stats,
      List<Threshold> thresholds,
      Map<Signal, Observed> observations) {
    StringBuilder message =
        new StringBuilder("The node was low on resource: " + resourceToReclaim + ". ");
    // getThresholdMetInfo: the first threshold on the same resource that has an observation
    for (Threshold t : thresholds) {
      if (resource(t.signal()).equals(resourceToReclaim)) {
        Observed observed = observations.get(t.signal());
        if (observed != null) {
          Quantity quantity = thresholdQuantity(t.value(), observed.capacity());
          Quantity available =
              Quantity.of(
                  observed.available(),
                  binary(t.signal()) ? Quantity.Format.BINARY_SI : Quantity.Format.DECIMAL_SI);
          message
              .append("Threshold quantity: ")
              .append(quantity)
              .append(", available: ")
              .append(available);
          message.append(". ");
          break;
        }
      }
    }
    Summary.PodStats podStats = stats.get(PodFacts.uid(pod));
    if (podStats == null) {
      return message.toString();
    }
    // Pod level resources will be included in eviction message, along container resources
    // 1.34+ with PodLevelResources on
    if (resourceToReclaim.equals("memory")
        && kubelet.podLevelResources()
        && PodResources.isPodLevelResourcesSet(pod)) {
      ResourceRequirements r = pod.getSpec().getResources();
      if (r.getRequests() != null
          && r.getRequests().containsKey("memory")
          && podStats.memory() != null) {
        Quantity podRequest = fabric8(r.getRequests().get("memory"));
        message.append(
            String.format(
                "Pod %s was using %s, request is %s, has larger consumption of %s. ",
                pod.getMetadata().getName(),
                memoryUsage(podStats.memory()),
                podRequest,
                resourceToReclaim));
      }
    }
    List<Container> containers = new ArrayList<>();
    if (pod.getSpec() != null && pod.getSpec().getContainers() != null) {
      containers.addAll(pod.getSpec().getContainers());
    }
    if (pod.getSpec() != null && pod.getSpec().getInitContainers() != null) {
      containers.addAll(pod.getSpec().getInitContainers());
    }
    for (Summary.ContainerStats containerStats : podStats.containers()) {
      if (containerStats == null) {
        continue;
      }
      for (Container container : containers) {
        if (container == null
            || !java.util.Objects.equals(container.getName(), containerStats.name())) {
          continue;
        }
        Quantity requests = PodResources.containerRequest(container, resourceToReclaim);
        Quantity usage = null;
        if (resourceToReclaim.equals("ephemeral-storage")) {
          Summary.FsStats rootfs = containerStats.rootfs();
          Summary.FsStats logs = containerStats.logs();
          if (rootfs != null
              && rootfs.usedBytes() != null
              && logs != null
              && logs.usedBytes() != null) {
            usage = Quantity.of(rootfs.usedBytes() + logs.usedBytes(), Quantity.Format.BINARY_SI);
          }
        } else if (resourceToReclaim.equals("memory")) {
          if (containerStats.memory() != null
              && containerStats.memory().workingSetBytes() != null) {
            usage =
                Quantity.of(containerStats.memory().workingSetBytes(), Quantity.Format.BINARY_SI);
          }
        }
        if (usage != null && usage.compareTo(requests) > 0) {
          message.append(
              String.format(
                  "Container %s was using %s, request is %s, has larger consumption of %s. ",
                  container.getName(), usage, requests, resourceToReclaim));
        }
        // Found the container to compare resource usage with
        break;
      }
    }
    return message.toString();
  }

  /** Whether observed amounts of the signal are bytes (BinarySI) rather than counts (DecimalSI). */
  private static boolean binary(Signal s) {
    return switch (resource(s)) {
      case "memory", "ephemeral-storage" -> true;
      default -> false;
    };
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Small helpers
  // ---------------------------------------------------------------------------------------------------------------

  static String key(Pod pod) {
    return PodFacts.namespace(pod) + "/" + PodFacts.name(pod);
  }

  private static Quantity quantity(io.fabric8.kubernetes.api.model.Quantity q) {
    return q == null ? null : fabric8(q);
  }

  private static Quantity fabric8(io.fabric8.kubernetes.api.model.Quantity q) {
    if (q == null) {
      return Quantity.ZERO;
    }
    String text =
        (q.getAmount() == null ? "" : q.getAmount()) + (q.getFormat() == null ? "" : q.getFormat());
    return Quantity.parse(text.strip());
  }

  /**
   * Go's {@code %q} (strconv.Quote) for the names the tests generate: ASCII with Go's escapes;
   * other characters are kept as they are (Go keeps printable ones too).
   */
  static String goQuote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\u0007' -> b.append("\\a");
        case '\b' -> b.append("\\b");
        case '\f' -> b.append("\\f");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        case '\u000B' -> b.append("\\v");
        default -> {
          if (c < 0x20 || c == 0x7f) {
            b.append(String.format("\\x%02x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }
}
