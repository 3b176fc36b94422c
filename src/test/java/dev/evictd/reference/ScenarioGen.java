package dev.evictd.reference;

import dev.evictd.api.Quantity;
import dev.evictd.fixture.FixtureRunner;
import dev.evictd.testing.prop.Choices;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Generates random scenarios: a node (filesystem layout, capacities), a kubelet eviction
 * configuration (hard, soft, grace periods, minimum reclaim, percentages, transition period, max
 * pod grace period, enforceNodeAllocatable, localStorageCapacityIsolation, merged defaults), pods
 * (QoS mixes, priorities incl. critical, static and mirror pods, init containers and sidecars,
 * overhead, pod-level resources, volumes, ephemeral-storage requests and limits, termination grace
 * periods) and steps with clock advances, pod list changes, summaries (missing fields and pod
 * stats, {@code time} fields) and post-reclaim summaries.
 *
 * <p>Observed amounts are drawn near the configured thresholds (the threshold, one below, one
 * above, with and without minimum reclaim) as often as anywhere else, so that boundaries are
 * exercised. Every draw's simplest value (0) is the plainest option, so shrinking yields small
 * fixtures.
 */
public final class ScenarioGen {
  static final long KI = 1024;
  static final long MI = KI * KI;
  static final long GI = MI * KI;

  private static final String[] MEMORY_SIGNALS = {
    "memory.available", "allocatableMemory.available"
  };
  private static final String[] SIGNALS = {
    "memory.available",
    "nodefs.available",
    "nodefs.inodesFree",
    "imagefs.available",
    "imagefs.inodesFree",
    "pid.available",
    "allocatableMemory.available",
    "containerfs.available",
    "containerfs.inodesFree"
  };
  private static final List<String> DEFAULT_HARD =
      List.of(
          "memory.available",
          "nodefs.available",
          "nodefs.inodesFree",
          "imagefs.available",
          "imagefs.inodesFree");

  private final Choices c;
  private final Map<String, List<String>> thresholdTexts = new LinkedHashMap<>();
  private final Map<String, List<String>> minReclaimTexts = new LinkedHashMap<>();
  private final String layout;
  private final long memCapacity;
  private final long allocCapacity;
  private final long fsCapacity;
  private final long fsInodes;
  private final long imageCapacity;
  private final long imageInodes;
  private final long maxPid;
  private long elapsedSeconds;
  private int podIndex;
  private int stepIndex;
  private List<Map<String, Object>> active = List.of();

  private ScenarioGen(Choices c) {
    this.c = c;
    this.layout = c.pick("shared", "dedicated", "split");
    this.memCapacity = c.pick(8 * GI, 4 * GI, 16 * GI, 3 * GI);
    this.allocCapacity = memCapacity - c.pick(GI / 2, GI / 4, GI);
    this.fsCapacity = c.pick(100 * GI, 20 * GI, 500 * GI);
    this.fsInodes = c.pick(1_000_000L, 100_000L, 4_194_304L);
    this.imageCapacity = c.pick(50 * GI, 200 * GI);
    this.imageInodes = c.pick(500_000L, 65_536L);
    this.maxPid = c.pick(4_194_304L, 32_768L, 1_000L);
  }

  /** A random scenario. */
  public static Scenario scenario(Choices c) {
    return new ScenarioGen(c).generate();
  }

  private Scenario generate() {
    Map<String, Object> kc = kubeletConfig();
    podIndex = 0;
    List<Map<String, Object>> pods = c.listOf(0, 6, 0.8, () -> pod(podIndex++));
    active = pods;
    List<Scenario.Step> steps = c.listOf(1, 5, 0.65, this::step);
    // chosen last, so that the scenarios before versions keep their choices
    return new Scenario("generated", kc, layout, pods, steps, kubelet());
  }

  /**
   * The kubelet: a version from 1.32 to the newest (null: the newest, unnamed), sometimes with
   * PodLevelResources turned over, and up to 1.34 AllowOverwriteTerminationGracePeriodSeconds on
   * (from 1.35 it is locked off).
   */
  private Map<String, Object> kubelet() {
    String version = c.pick(null, "1.32", "1.33", "1.34", "1.35", "1.36", "1.37");
    if (version == null) {
      return null;
    }
    Map<String, Object> k = new LinkedHashMap<>();
    k.put("version", version);
    Map<String, Object> gates = new LinkedHashMap<>();
    if (c.chance(0.3)) {
      gates.put("PodLevelResources", c.chance(0.5));
    }
    int minor = Integer.parseInt(version.substring(2));
    if (minor <= 34 && c.chance(0.3)) {
      gates.put("AllowOverwriteTerminationGracePeriodSeconds", true);
    }
    if (!gates.isEmpty()) {
      k.put("featureGates", gates);
    }
    return k;
  }

  private Scenario.Step step() {
    int i = stepIndex++;
    String advance =
        i == 0
            ? c.pick("0s", "1m", "10s")
            : c.pick("0s", "10s", "30s", "1m", "59s", "1m30s", "2m", "5m", "10m", "1s");
    elapsedSeconds += seconds(advance);
    List<Map<String, Object>> newPods =
        i == 0 || active.isEmpty()
            ? null
            : c.optional(
                0.2,
                () -> {
                  List<Map<String, Object>> changed = new ArrayList<>(active);
                  switch (c.between(0, 2)) {
                    case 0 -> changed.remove(c.between(0, changed.size() - 1));
                    case 1 -> java.util.Collections.reverse(changed);
                    default -> changed.add(pod(100 + i));
                  }
                  return changed;
                });
    if (newPods != null) {
      active = newPods;
    }
    Map<String, Object> summary = summary(active, false);
    Map<String, Object> after = c.optional(0.3, () -> summary(active, true));
    return new Scenario.Step(advance, newPods, summary, after);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Kubelet configuration
  // ---------------------------------------------------------------------------------------------------------------

  private Map<String, Object> kubeletConfig() {
    if (c.chance(0.05)) {
      for (String s : DEFAULT_HARD) {
        thresholdTexts.computeIfAbsent(s, k -> new ArrayList<>()).add(defaultHard(s));
      }
      return null;
    }
    Map<String, Object> kc = new LinkedHashMap<>();
    int hardMode = c.between(0, 4);
    boolean merge = false;
    if (hardMode == 1) {
      kc.put("evictionHard", new LinkedHashMap<>());
    } else if (hardMode >= 2) {
      Map<String, Object> hard = thresholds(4, true);
      kc.put("evictionHard", hard);
    }
    Boolean mergeSetting = c.pick(null, Boolean.FALSE, Boolean.TRUE);
    if (mergeSetting != null) {
      kc.put("mergeDefaultEvictionSettings", mergeSetting);
      merge = mergeSetting;
    }
    if (hardMode == 0 || (hardMode >= 1 && merge)) {
      for (String s : DEFAULT_HARD) {
        Object given = kc.get("evictionHard") instanceof Map<?, ?> m ? m.get(s) : null;
        if (given == null) {
          thresholdTexts.computeIfAbsent(s, k -> new ArrayList<>()).add(defaultHard(s));
        }
      }
    }
    if (c.chance(0.6)) {
      Map<String, Object> soft = thresholds(3, false);
      if (!soft.isEmpty()) {
        kc.put("evictionSoft", soft);
        Map<String, Object> grace = new LinkedHashMap<>();
        for (String s : soft.keySet()) {
          grace.put(s, c.pick("30s", "0s", "1m", "10s", "2m", "1m30s", "5m"));
        }
        if (c.chance(0.1)) {
          grace.put(c.pick(SIGNALS), "1m");
        }
        kc.put("evictionSoftGracePeriod", grace);
      }
    }
    if (c.chance(0.4)) {
      Map<String, Object> mr = new LinkedHashMap<>();
      for (int i = c.between(1, 3); i > 0; i--) {
        String s = c.pick(SIGNALS);
        String v = minReclaim(s);
        mr.put(s, v);
      }
      mr.forEach(
          (s, v) -> minReclaimTexts.computeIfAbsent(s, k -> new ArrayList<>()).add((String) v));
      kc.put("evictionMinimumReclaim", mr);
    }
    String transition = c.pick(null, "1m", "0s", "30s", "5m", "10m", "1s");
    if (transition != null) {
      kc.put("evictionPressureTransitionPeriod", transition);
    }
    Integer maxGrace = c.pick(null, 30, 0, 5, 60, 600);
    if (maxGrace != null) {
      kc.put("evictionMaxPodGracePeriod", maxGrace);
    }
    List<String> enforce =
        c.pick(
            null, List.of("pods"), List.of(), List.of("none"), List.of("pods", "system-reserved"));
    if (enforce != null) {
      kc.put("enforceNodeAllocatable", enforce);
    }
    Boolean lsci = c.pick(null, Boolean.TRUE, Boolean.FALSE);
    if (lsci != null) {
      kc.put("localStorageCapacityIsolation", lsci);
    }
    return kc;
  }

  private Map<String, Object> thresholds(int max, boolean hard) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = c.between(1, max); i > 0; i--) {
      String s = c.pick(SIGNALS);
      String v = thresholdValue(s);
      m.put(s, v);
    }
    m.forEach((s, v) -> thresholdTexts.computeIfAbsent(s, k -> new ArrayList<>()).add((String) v));
    return m;
  }

  private static String defaultHard(String s) {
    return switch (s) {
      case "memory.available" -> "100Mi";
      case "nodefs.available" -> "10%";
      case "imagefs.available" -> "15%";
      default -> "5%";
    };
  }

  private String thresholdValue(String s) {
    if (isMemory(s)) {
      return c.pick(
          "1Gi", "100Mi", "500Mi", "1.5Gi", "2Gi", "10%", "7.5%", "1000M", "0%", "100%", "33.3%");
    }
    if (s.endsWith(".available")) {
      return c.pick("10%", "15%", "1Gi", "5Gi", "20Gi", "2.5%", "50%", "0%");
    }
    if (s.endsWith(".inodesFree")) {
      return c.pick("5%", "1000", "10k", "50000", "12.5%", "1Ki");
    }
    return c.pick("100", "10%", "1k", "500", "2.5%", "100%");
  }

  private String minReclaim(String s) {
    if (isMemory(s) || s.endsWith(".available")) {
      return c.pick("500Mi", "0", "100Mi", "1Gi", "5%", "10%", "0.5%");
    }
    return c.pick("100", "0", "5%", "1k", "1000");
  }

  private static boolean isMemory(String s) {
    for (String m : MEMORY_SIGNALS) {
      if (m.equals(s)) {
        return true;
      }
    }
    return false;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Pods
  // ---------------------------------------------------------------------------------------------------------------

  private Map<String, Object> pod(int index) {
    Map<String, Object> meta = new LinkedHashMap<>();
    String name = "p" + index;
    meta.put("name", name);
    String ns = c.pick(null, "prod", "kube-system", "default");
    if (ns != null) {
      meta.put("namespace", ns);
    }
    if (c.chance(0.3)) {
      meta.put("uid", "uid-" + index);
    }
    int kind = c.between(0, 12);
    if (kind == 1) {
      meta.put("annotations", Map.of("kubernetes.io/config.source", "file"));
    } else if (kind == 2) {
      meta.put("annotations", Map.of("kubernetes.io/config.mirror", "mirror-hash"));
    } else if (kind == 3) {
      meta.put("annotations", Map.of("kubernetes.io/config.source", "api"));
    }
    Map<String, Object> spec = new LinkedHashMap<>();
    Integer priority = c.pick(null, 0, 1000, -10, 100, 2_000_000_000, 2_000_001_000, 1_999_999_999);
    if (priority != null) {
      spec.put("priority", priority);
    }
    int[] n = {0};
    spec.put("containers", c.listOf(1, 3, 0.4, () -> container("c" + n[0]++, false)));
    List<Object> init =
        c.optional(0.25, () -> c.listOf(1, 2, 0.3, () -> container("init" + n[0]++, true)));
    if (init != null) {
      spec.put("initContainers", init);
    }
    if (c.chance(0.1)) {
      spec.put(
          "overhead",
          c.pick(map("memory", "50Mi", "cpu", "10m"), map("ephemeral-storage", "10Mi")));
    }
    if (c.chance(0.07)) {
      Map<String, Object> r = new LinkedHashMap<>();
      r.put("requests", Map.of("memory", c.pick("1Gi", "100Mi", "300Mi")));
      if (c.chance(0.5)) {
        r.put("limits", Map.of("memory", "2Gi"));
      }
      spec.put("resources", r);
    }
    Long tgps = c.pick(null, 30L, 0L, 5L, 120L, 1L);
    if (tgps != null) {
      spec.put("terminationGracePeriodSeconds", tgps);
    }
    int[] v = {0};
    List<Object> volumes = c.optional(0.4, () -> c.listOf(1, 3, 0.5, () -> volume("v" + v[0]++)));
    if (volumes != null) {
      spec.put("volumes", volumes);
    }
    Map<String, Object> pod = new LinkedHashMap<>();
    pod.put("apiVersion", "v1");
    pod.put("kind", "Pod");
    pod.put("metadata", meta);
    pod.put("spec", spec);
    return pod;
  }

  private Map<String, Object> container(String name, boolean init) {
    Map<String, Object> ctr = new LinkedHashMap<>();
    ctr.put("name", name);
    if (init && c.chance(0.5)) {
      ctr.put("restartPolicy", "Always");
    }
    if (c.chance(0.75)) {
      Map<String, Object> requests = resources();
      Map<String, Object> limits;
      if (c.chance(0.3)) {
        limits = new LinkedHashMap<>(requests); // often Guaranteed
      } else {
        limits = resources();
      }
      Map<String, Object> r = new LinkedHashMap<>();
      if (!requests.isEmpty()) {
        r.put("requests", requests);
      }
      if (!limits.isEmpty()) {
        r.put("limits", limits);
      }
      ctr.put("resources", r);
    }
    return ctr;
  }

  private Map<String, Object> resources() {
    Map<String, Object> m = new LinkedHashMap<>();
    if (c.chance(0.6)) {
      m.put(
          "memory",
          c.pick("100Mi", "200Mi", "1Gi", "500M", "1.5Gi", "64Mi", "0", "100Ei", "100m", "300E"));
    }
    if (c.chance(0.4)) {
      m.put("cpu", c.pick("100m", "1", "250m"));
    }
    if (c.chance(0.4)) {
      m.put(
          "ephemeral-storage",
          c.pick("100Mi", "1Gi", "500Mi", "2Gi", "10Mi", "1m", "20Ei", "1500m", "30E"));
    }
    return m;
  }

  private Map<String, Object> volume(String name) {
    Map<String, Object> v = new LinkedHashMap<>();
    v.put("name", name);
    switch (c.between(0, 4)) {
      case 0 -> {
        Map<String, Object> ed = new LinkedHashMap<>();
        if (c.chance(0.7)) {
          ed.put("sizeLimit", c.pick("100Mi", "1Gi", "10Mi", "0", "1.5Gi"));
        }
        if (c.chance(0.15)) {
          ed.put("medium", "Memory");
        }
        v.put("emptyDir", ed);
      }
      case 1 -> v.put("hostPath", Map.of("path", "/var/data"));
      case 2 -> v.put("configMap", Map.of("name", "cm"));
      case 3 -> v.put("secret", Map.of("secretName", "s"));
      default -> v.put("emptyDir", new LinkedHashMap<>());
    }
    return v;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Summaries
  // ---------------------------------------------------------------------------------------------------------------

  private Map<String, Object> summary(List<Map<String, Object>> pods, boolean afterReclaim) {
    Map<String, Object> node = new LinkedHashMap<>();
    boolean memoryAndPids = !afterReclaim || c.chance(0.5);
    if (memoryAndPids) {
      put(node, "memory", c.optional(0.9, this::nodeMemory));
      put(node, "systemContainers", c.optional(0.6, this::systemContainers));
    }
    put(
        node,
        "fs",
        c.optional(0.9, () -> fs(fsCapacity, fsInodes, new String[] {"nodefs", "containerfs"})));
    Map<String, Object> runtime = new LinkedHashMap<>();
    put(
        runtime,
        "imageFs",
        c.optional(
            layout.equals("shared") ? 0.4 : 0.9,
            () -> fs(imageCapacity, imageInodes, new String[] {"imagefs", "containerfs"})));
    put(
        runtime,
        "containerFs",
        c.optional(
            0.6,
            () ->
                layout.equals("dedicated")
                    ? fs(imageCapacity, imageInodes, new String[] {"containerfs", "imagefs"})
                    : fs(fsCapacity, fsInodes, new String[] {"containerfs", "nodefs"})));
    if (!runtime.isEmpty()) {
      node.put("runtime", runtime);
    }
    if (memoryAndPids) {
      put(node, "rlimit", c.optional(0.7, this::rlimit));
    }
    Map<String, Object> summary = new LinkedHashMap<>();
    if (!node.isEmpty() || c.chance(0.7)) {
      summary.put("node", node); // else no node stats at all
    }
    List<Object> podStats = new ArrayList<>();
    for (Map<String, Object> pod : pods) {
      Map<String, Object> ps = c.span(() -> c.chance(0.88) ? podStats(pod) : null);
      if (ps != null) {
        podStats.add(ps);
      }
    }
    if (c.chance(0.05)) {
      podStats.add(
          map(
              "podRef", map("name", "gone", "namespace", "default", "uid", "uid-gone"),
              "memory", map("workingSetBytes", "1Gi")));
    }
    if (!pods.isEmpty()) {
      Map<String, Object> dup =
          c.optional(0.03, () -> podStats(pods.get(c.between(0, pods.size() - 1))));
      if (dup != null) {
        podStats.add(dup); // a second entry for the same uid
      }
    }
    if (!podStats.isEmpty() && c.chance(0.3)) {
      java.util.Collections.reverse(podStats);
    }
    if (!podStats.isEmpty() || c.chance(0.7)) {
      summary.put("pods", podStats);
    }
    return summary;
  }

  private static void put(Map<String, Object> m, String key, Object value) {
    if (value != null) {
      m.put(key, value);
    }
  }

  private Map<String, Object> nodeMemory() {
    long avail = available(new String[] {"memory.available"}, memCapacity);
    Map<String, Object> mem = new LinkedHashMap<>();
    mem.put("availableBytes", avail);
    mem.put("workingSetBytes", Math.max(0, memCapacity - avail));
    time(mem);
    return mem;
  }

  private List<Object> systemContainers() {
    long avail =
        available(new String[] {"allocatableMemory.available", "memory.available"}, allocCapacity);
    Map<String, Object> mem = new LinkedHashMap<>();
    mem.put("availableBytes", avail);
    if (c.chance(0.95)) {
      mem.put("workingSetBytes", Math.max(0, allocCapacity - avail));
    }
    time(mem);
    List<Object> sys = new ArrayList<>();
    if (c.chance(0.1)) {
      sys.add(map("name", "kubelet", "memory", map("availableBytes", 1L, "workingSetBytes", 1L)));
    }
    sys.add(map("name", "pods", "memory", mem));
    return sys;
  }

  private Map<String, Object> rlimit() {
    long avail = available(new String[] {"pid.available"}, maxPid);
    Map<String, Object> rl = new LinkedHashMap<>();
    rl.put("maxpid", maxPid);
    rl.put("curproc", c.chance(0.03) ? maxPid + c.pick(1L, 100L) : Math.max(0, maxPid - avail));
    time(rl);
    return rl;
  }

  private Map<String, Object> fs(long capacity, long inodes, String[] prefixes) {
    Map<String, Object> fs = new LinkedHashMap<>();
    if (c.chance(0.95)) {
      String[] signals = new String[prefixes.length];
      for (int i = 0; i < prefixes.length; i++) {
        signals[i] = prefixes[i] + ".available";
      }
      long avail = available(signals, capacity);
      fs.put("availableBytes", avail);
      fs.put("capacityBytes", capacity);
      fs.put("usedBytes", Math.max(0, capacity - avail));
    }
    if (c.chance(0.85)) {
      String[] signals = new String[prefixes.length];
      for (int i = 0; i < prefixes.length; i++) {
        signals[i] = prefixes[i] + ".inodesFree";
      }
      long free = available(signals, inodes);
      fs.put("inodesFree", free);
      fs.put("inodes", inodes);
      fs.put("inodesUsed", Math.max(0, inodes - free));
    }
    time(fs);
    return fs;
  }

  /**
   * An available amount: near a configured threshold of one of {@code signals} (exactly on it, one
   * below, one above, or on threshold + minimum reclaim), or a random fraction of capacity.
   */
  private long available(String[] signals, long capacity) {
    if (c.chance(0.6)) {
      List<Long> boundaries = new ArrayList<>();
      for (String s : signals) {
        for (String t : thresholdTexts.getOrDefault(s, List.of())) {
          long q = resolve(t, capacity);
          boundaries.add(q);
          for (String m : minReclaimTexts.getOrDefault(s, List.of())) {
            boundaries.add(q + resolve(m, capacity));
          }
        }
      }
      if (!boundaries.isEmpty()) {
        long b = c.pick(boundaries);
        long v = b + c.pick(0L, -1L, 1L, -MI, MI);
        return Math.max(0, v);
      }
    }
    return capacity * c.between(0, 100) / 100;
  }

  /**
   * A threshold text resolved against capacity, roughly as the kubelet does (exactness is not
   * needed here).
   */
  private static long resolve(String text, long capacity) {
    if (text.endsWith("%")) {
      float p = Float.parseFloat(text.substring(0, text.length() - 1)) / 100f;
      return (long) ((double) capacity * (double) p);
    }
    return Quantity.parse(text).value();
  }

  private void time(Map<String, Object> stat) {
    int t = c.between(0, 6);
    Instant now = FixtureRunner.START.plusSeconds(elapsedSeconds);
    switch (t) {
      case 4 -> stat.put("time", "2026-01-01T00:00:00Z");
      case 5 -> stat.put("time", now.toString());
      case 6 -> stat.put("time", now.minusSeconds(10).toString());
      default -> {}
    }
  }

  @SuppressWarnings("unchecked")
  private Map<String, Object> podStats(Map<String, Object> pod) {
    Map<String, Object> meta = (Map<String, Object>) pod.get("metadata");
    Map<String, Object> spec = (Map<String, Object>) pod.get("spec");
    String name = (String) meta.get("name");
    String ns = meta.get("namespace") == null ? "default" : (String) meta.get("namespace");
    String uid = meta.get("uid") == null ? ns + "/" + name : (String) meta.get("uid");
    Map<String, Object> ps = new LinkedHashMap<>();
    ps.put("podRef", map("name", name, "namespace", ns, "uid", uid));
    if (c.chance(0.9)) {
      Map<String, Object> mem = new LinkedHashMap<>();
      if (c.chance(0.95)) {
        mem.put(
            "workingSetBytes",
            c.chance(0.02)
                ? huge()
                : c.pick(
                    "100Mi", "0", "50Mi", "200Mi", "400Mi", "1Gi", "2Gi", "500M", "64Mi", "1.5Gi"));
      }
      ps.put("memory", mem);
    }
    if (c.chance(0.8)) {
      ps.put("process_stats", Map.of("process_count", c.pick(5L, 0L, 1L, 10L, 100L, 1000L)));
    }
    if (c.chance(0.7)) {
      ps.put(
          "ephemeral-storage",
          Map.of("usedBytes", c.pick("100Mi", "0", "10Mi", "101Mi", "500Mi", "1Gi", "2Gi", "3Gi")));
    }
    List<Object> containers = new ArrayList<>();
    List<Object> names = new ArrayList<>();
    for (Object o : (List<Object>) spec.get("containers")) {
      names.add(((Map<String, Object>) o).get("name"));
    }
    if (spec.get("initContainers") != null && c.chance(0.5)) {
      for (Object o : (List<Object>) spec.get("initContainers")) {
        names.add(((Map<String, Object>) o).get("name"));
      }
    }
    if (c.chance(0.05)) {
      names.add("unknown");
    }
    for (Object n : names) {
      Map<String, Object> cs = c.optional(0.9, () -> containerStats(n));
      if (cs != null) {
        containers.add(cs);
      }
    }
    if (!containers.isEmpty()) {
      ps.put("containers", containers);
    }
    if (spec.get("volumes") != null) {
      List<Object> volumes = new ArrayList<>();
      for (Object o : (List<Object>) spec.get("volumes")) {
        Map<String, Object> vs =
            c.optional(0.8, () -> volumeStats(((Map<String, Object>) o).get("name")));
        if (vs != null) {
          volumes.add(vs);
          Map<String, Object> again = c.optional(0.03, () -> volumeStats(vs.get("name")));
          if (again != null) {
            volumes.add(again); // the same volume reported twice
          }
        }
      }
      if (!volumes.isEmpty()) {
        ps.put("volume", volumes);
      }
    }
    return ps;
  }

  private Map<String, Object> containerStats(Object n) {
    Map<String, Object> cs = new LinkedHashMap<>();
    cs.put("name", n);
    if (c.chance(0.85)) {
      cs.put(
          "memory",
          Map.of("workingSetBytes", c.pick("50Mi", "0", "100Mi", "200Mi", "1Gi", "500M", "64Mi")));
    }
    if (c.chance(0.8)) {
      cs.put("rootfs", fsUsage());
    }
    if (c.chance(0.8)) {
      cs.put("logs", fsUsage());
    }
    return cs;
  }

  private Map<String, Object> volumeStats(Object name) {
    Map<String, Object> vs = new LinkedHashMap<>();
    vs.put("name", name);
    vs.put(
        "usedBytes", c.chance(0.02) ? huge() : c.pick("10Mi", "0", "100Mi", "101Mi", "1Gi", "2Gi"));
    if (c.chance(0.8)) {
      vs.put("inodesUsed", c.pick(10L, 0L, 100L, 5000L));
    }
    return vs;
  }

  private Map<String, Object> fsUsage() {
    Map<String, Object> fs = new LinkedHashMap<>();
    if (c.chance(0.9)) {
      fs.put(
          "usedBytes",
          c.chance(0.02) ? huge() : c.pick("10Mi", "0", "100Mi", "500Mi", "1Gi", "2Gi", "101Mi"));
    }
    if (c.chance(0.8)) {
      fs.put("inodesUsed", c.chance(0.02) ? huge() : c.pick(10L, 0L, 100L, 1000L, 5000L));
    }
    return fs;
  }

  /**
   * An amount near the top of what a summary can hold (2^63-1): sums of two of them exceed a long.
   */
  private Object huge() {
    return c.pick(1L << 62, Long.MAX_VALUE, (1L << 62) + 1);
  }

  /** An ordered map of key, value pairs (documents are written in insertion order). */
  static Map<String, Object> map(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }

  private static long seconds(String goDuration) {
    return dev.evictd.config.GoDuration.parse(goDuration).toSeconds();
  }
}
