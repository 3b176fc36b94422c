package dev.evictd.config;

import dev.evictd.api.ConfigException;
import dev.evictd.api.EvictionConfig;
import dev.evictd.api.FsLayout;
import dev.evictd.api.Kubelet;
import dev.evictd.api.Quantity;
import dev.evictd.api.Signal;
import dev.evictd.api.Threshold;
import dev.evictd.api.ThresholdValue;
import dev.evictd.k8s.KubeletFeatureGates;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads the eviction fields of a KubeletConfiguration (kubelet.config.k8s.io/v1beta1) and turns
 * them into thresholds exactly as the kubelet does: its defaults, {@code
 * mergeDefaultEvictionSettings}, the allocatable copy of hard {@code memory.available} thresholds,
 * containerfs thresholds derived from the filesystem layout, and every validation error of {@code
 * ParseThresholdConfig}, each naming the field and the value.
 */
public final class KubeletEvictionConfig {
  /** The kubelet's Linux default hard thresholds, in the order they are listed. */
  public static final Map<String, String> DEFAULT_EVICTION_HARD;

  static {
    Map<String, String> d = new LinkedHashMap<>();
    d.put("memory.available", "100Mi");
    d.put("nodefs.available", "10%");
    d.put("nodefs.inodesFree", "5%");
    d.put("imagefs.available", "15%");
    d.put("imagefs.inodesFree", "5%");
    DEFAULT_EVICTION_HARD = java.util.Collections.unmodifiableMap(d);
  }

  /** The eviction fields this reader interprets. */
  public static final Set<String> EVICTION_FIELDS =
      Set.of(
          "evictionHard",
          "evictionSoft",
          "evictionSoftGracePeriod",
          "evictionMinimumReclaim",
          "evictionPressureTransitionPeriod",
          "evictionMaxPodGracePeriod",
          "enforceNodeAllocatable",
          "localStorageCapacityIsolation",
          "mergeDefaultEvictionSettings");

  private static final Duration DEFAULT_TRANSITION = Duration.ofMinutes(5);
  private static final Set<String> ENFORCEMENT_KEYS =
      Set.of(
          "pods",
          "system-reserved",
          "system-reserved-compressible",
          "kube-reserved",
          "kube-reserved-compressible",
          "none");
  // Go's strconv.ParseFloat decimal syntax (no underscores without a base prefix), plus inf/nan.
  private static final Pattern GO_FLOAT =
      Pattern.compile("[+-]?((\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?|(?i:inf|infinity|nan))");

  /** The only kind and version the kubelet decodes its configuration file as. */
  public static final String KIND = "KubeletConfiguration";

  public static final String API_VERSION = "kubelet.config.k8s.io/v1beta1";

  private KubeletEvictionConfig() {}

  /**
   * Refuses a {@code kind} or {@code apiVersion} other than the kubelet's own: the kubelet refuses
   * such a file ("no kind is registered"), and it is most often another capture passed by mistake
   * (a pod, a pod list). Absent, both are accepted, as in a fixture's {@code kubeletConfig}.
   */
  private static void typeMeta(YamlNode n, String expected) {
    if (n == null || n.isNull()) {
      return;
    }
    if (n.kind() != YamlNode.Kind.SCALAR || !expected.equals(n.asText())) {
      throw n.error(
          n.describe()
              + ": a kubelet configuration is "
              + (expected.equals(KIND) ? "kind " : "apiVersion ")
              + expected
              + (expected.equals(KIND) ? " (is this file another capture?)" : ""));
    }
  }

  /**
   * Builds the eviction configuration from a KubeletConfiguration mapping (or null for "absent":
   * the kubelet's defaults). Keys outside the KubeletConfiguration schema are refused as typos;
   * other kubelet fields are ignored.
   *
   * @throws ConfigException naming file, line, field and value
   */
  public static EvictionConfig from(YamlNode kc, String nodeName, FsLayout layout) {
    return from(kc, nodeName, layout, null);
  }

  /**
   * Builds the eviction configuration as the kubelet of {@code kubeletVersion} reads it (null: the
   * newest evictd knows): its {@code featureGates} over that version's defaults (a locked gate set
   * to the other value refused with the kubelet's reason, an unregistered one warned about and
   * ignored), {@code mergeDefaultEvictionSettings} unknown to 1.32 (dropped, as its lenient
   * decoding drops it) and merged from 1.33, negative {@code evictionMaxPodGracePeriod} and {@code
   * evictionPressureTransitionPeriod} accepted as every kubelet accepts them.
   *
   * @throws ConfigException naming file, line, field and value
   */
  public static EvictionConfig from(
      YamlNode kc, String nodeName, FsLayout layout, String kubeletVersion) {
    return from(kc, nodeName, layout, kubeletVersion, null);
  }

  /**
   * As {@link #from(YamlNode, String, FsLayout, String)}, with the feature gates given apart from
   * the configuration (a fixture's {@code kubelet.featureGates}, a {@code /configz} read
   * separately); the configuration must then not set its own.
   */
  public static EvictionConfig from(
      YamlNode kc, String nodeName, FsLayout layout, String kubeletVersion, YamlNode gates) {
    Map<String, YamlNode> fields = kc == null || kc.isNull() ? Map.of() : kc.asMap();
    if (kc != null && !kc.isNull()) {
      kc.requireKnownKeys(KubeletConfigurationFields.ALL);
      typeMeta(fields.get("kind"), KIND);
      typeMeta(fields.get("apiVersion"), API_VERSION);
    }
    List<String> warnings = new ArrayList<>();
    YamlNode gatesNode = fields.get("featureGates");
    if (gates != null && !gates.isNull()) {
      if (gatesNode != null && !gatesNode.isNull()) {
        throw gates.error(
            "featureGates given both here and in the kubelet configuration: give them in one place");
      }
      gatesNode = gates;
    }
    Kubelet kubelet = kubelet(kubeletVersion, gatesNode, kc, warnings);
    boolean merge = bool(fields.get("mergeDefaultEvictionSettings"), false);
    if (fields.get("mergeDefaultEvictionSettings") != null && !kubelet.atLeast(33)) {
      merge = false;
      warnings.add(
          "mergeDefaultEvictionSettings is unknown to kubelet "
              + kubelet.version()
              + ": its lenient decoding drops it (added in 1.33)");
    }
    YamlNode hardNode = fields.get("evictionHard");
    Map<String, Entry> hard;
    if (hardNode == null || hardNode.isNull()) {
      hard = defaults(kc);
    } else {
      hard = thresholdMap(hardNode);
      if (merge) {
        for (Map.Entry<String, Entry> d : defaults(kc).entrySet()) {
          hard.putIfAbsent(d.getKey(), d.getValue());
        }
      }
    }
    Map<String, Entry> soft = thresholdMap(fields.get("evictionSoft"));
    Map<String, Entry> grace = durationMap(fields.get("evictionSoftGracePeriod"));
    Map<String, Entry> minReclaim = thresholdMap(fields.get("evictionMinimumReclaim"));

    // ParseThresholdConfig, in the kubelet's order of checks.
    List<Draft> results = new ArrayList<>();
    for (Entry e : hard.values()) {
      Draft d = parseThreshold(e, "hard", "evictionHard");
      if (d != null) {
        results.add(d);
      }
    }
    List<Draft> softDrafts = new ArrayList<>();
    for (Entry e : soft.values()) {
      Draft d = parseThreshold(e, "soft", "evictionSoft");
      if (d != null) {
        softDrafts.add(d);
      }
    }
    Map<Signal, Duration> gracePeriods = new LinkedHashMap<>();
    for (Entry e : grace.values()) {
      Signal s = signal(e);
      Duration g;
      try {
        g = GoDuration.parse(e.text);
      } catch (IllegalArgumentException ex) {
        throw e.node.error(ex.getMessage());
      }
      if (g.isNegative()) {
        throw e.node.error(
            "invalid eviction grace period specified: " + e.text + ", must be a positive value");
      }
      gracePeriods.put(s, g);
    }
    Map<Signal, ThresholdValue> minReclaims = new LinkedHashMap<>();
    for (Entry e : minReclaim.values()) {
      Signal s = signal(e);
      if (e.text.endsWith("%")) {
        float p = percentage(e);
        if (!(p > 0)) {
          throw e.node.error(
              "eviction percentage minimum reclaim " + s.key() + " must be positive: " + e.text);
        }
        minReclaims.put(s, ThresholdValue.ofFraction(p, e.text));
      } else {
        Quantity q = quantity(e);
        if (q.sign() < 0) {
          throw e.node.error("negative eviction minimum reclaim specified for " + s.key());
        }
        minReclaims.put(s, ThresholdValue.ofQuantity(q, e.text));
      }
    }
    for (Draft d : softDrafts) {
      Duration g = gracePeriods.get(d.signal);
      if (g == null) {
        throw d.node.error(
            "grace period must be specified for the soft eviction threshold " + d.signal.key());
      }
      d.grace = g;
    }
    results.addAll(softDrafts);
    for (Draft d : results) {
      d.minReclaim = minReclaims.get(d.signal);
    }

    List<String> enforce = enforceNodeAllocatable(fields.get("enforceNodeAllocatable"));
    if (enforce.contains("pods")) {
      List<Draft> copies = new ArrayList<>();
      for (Draft d : results) {
        if (d.signal == Signal.MEMORY_AVAILABLE && d.grace.isZero()) {
          Draft c = new Draft(Signal.ALLOCATABLE_MEMORY_AVAILABLE, d.value, d.node);
          c.minReclaim = d.minReclaim;
          c.kind = "hard";
          c.origin = "copy of " + d.id() + " (enforceNodeAllocatable: pods)";
          c.idSuffix = " (copy of memory.available)";
          copies.add(c);
        }
      }
      results.addAll(copies);
    }
    if (kubelet.buildsEvictionFunctions(layout)) {
      // else the kubelet's first sync fails before UpdateContainerFsThresholds, never to run again
      results = containerFsThresholds(results, layout, warnings);
    }

    List<Threshold> thresholds = new ArrayList<>();
    Set<String> ids = new LinkedHashSet<>();
    for (Draft d : results) {
      String id = d.id();
      int n = 2;
      while (!ids.add(id)) {
        id = d.id() + " #" + n++;
      }
      thresholds.add(
          new Threshold(
              id,
              d.signal,
              d.value,
              d.grace,
              d.minReclaim,
              thresholds.size(),
              d.origin,
              d.appended));
    }

    Duration transition = DEFAULT_TRANSITION;
    YamlNode tp = fields.get("evictionPressureTransitionPeriod");
    if (tp != null && !tp.isNull()) {
      String text = tp.asString(true);
      try {
        transition = GoDuration.parse(text);
      } catch (IllegalArgumentException ex) {
        throw tp.error(ex.getMessage());
      }
      // negative: accepted by the kubelet (no validation), and then no condition is ever reported
      // (nodeConditionsObservedSince: 0 < period never holds)
      if (transition.isZero()) {
        transition = DEFAULT_TRANSITION; // the kubelet defaults a zero duration
      }
    }
    long maxGrace = 0;
    YamlNode mg = fields.get("evictionMaxPodGracePeriod");
    if (mg != null && !mg.isNull()) {
      // negative: accepted by the kubelet (no validation); soft evictions then ask for a negative
      // grace period, which its pod worker raises to 1 s
      maxGrace = mg.asLong(Integer.MIN_VALUE, Integer.MAX_VALUE);
    }
    boolean lsci = bool(fields.get("localStorageCapacityIsolation"), true);
    return new EvictionConfig(
        nodeName, layout, thresholds, transition, maxGrace, lsci, warnings, kubelet);
  }

  /**
   * The kubelet of {@code version} (null: the newest known) with the configuration's {@code
   * featureGates}; refusals are the kubelet's, at the gate's line.
   */
  private static Kubelet kubelet(
      String version, YamlNode gatesNode, YamlNode at, List<String> warnings) {
    Map<String, Boolean> gates = new LinkedHashMap<>();
    Map<String, YamlNode> nodes = new LinkedHashMap<>();
    if (gatesNode != null && !gatesNode.isNull()) {
      for (Map.Entry<String, YamlNode> e : gatesNode.asMap().entrySet()) {
        gates.put(e.getKey(), e.getValue().asBoolean());
        nodes.put(e.getKey(), e.getValue());
      }
    }
    String v = version == null ? "1." + KubeletFeatureGates.NEWEST : version;
    try {
      return KubeletFeatureGates.kubelet(v, gates, warnings);
    } catch (IllegalArgumentException e) {
      YamlNode where =
          nodes.entrySet().stream()
              .filter(n -> e.getMessage().startsWith("cannot set feature gate " + n.getKey() + " "))
              .map(Map.Entry::getValue)
              .findFirst()
              .orElse(at);
      if (where == null) {
        throw new ConfigException("kubelet: " + e.getMessage());
      }
      throw where.error(e.getMessage());
    }
  }

  private static Map<String, Entry> defaults(YamlNode at) {
    Map<String, Entry> m = new LinkedHashMap<>();
    DEFAULT_EVICTION_HARD.forEach((k, v) -> m.put(k, new Entry(k, v, at, true)));
    return m;
  }

  private static boolean bool(YamlNode n, boolean dflt) {
    return n == null || n.isNull() ? dflt : n.asBoolean();
  }

  private static List<String> enforceNodeAllocatable(YamlNode n) {
    if (n == null || n.isNull()) {
      return List.of("pods");
    }
    List<String> out = new ArrayList<>();
    Set<String> seen = new LinkedHashSet<>();
    for (YamlNode item : n.asList()) {
      String v = item.asString(false);
      if (!seen.add(v)) {
        throw item.error(
            "invalid configuration: duplicated enforcements \""
                + v
                + "\" in enforceNodeAllocatable");
      }
      if (!ENFORCEMENT_KEYS.contains(v)) {
        throw item.error(
            "invalid configuration: option \""
                + v
                + "\" specified for enforceNodeAllocatable. Valid options are \"pods\", \"system-reserved\","
                + " \"system-reserved-compressible\", \"kube-reserved\", \"kube-reserved-compressible\" or"
                + " \"none\"");
      }
      out.add(v);
    }
    if (out.contains("none") && out.size() > 1) {
      throw n.error(
          "invalid configuration: enforceNodeAllocatable may not contain additional enforcements when"
              + " \"none\" is specified");
    }
    if (out.contains("system-reserved") && out.contains("system-reserved-compressible")) {
      throw n.error(
          "invalid configuration: both \"system-reserved\" and \"system-reserved-compressible\" cannot be"
              + " specified together in enforceNodeAllocatable");
    }
    if (out.contains("kube-reserved") && out.contains("kube-reserved-compressible")) {
      throw n.error(
          "invalid configuration: both \"kube-reserved\" and \"kube-reserved-compressible\" cannot be"
              + " specified together in enforceNodeAllocatable");
    }
    return out;
  }

  /** A map value: signal key, text and where it was written. */
  private record Entry(String key, String text, YamlNode node, boolean isDefault) {}

  private static Map<String, Entry> thresholdMap(YamlNode n) {
    Map<String, Entry> m = new LinkedHashMap<>();
    if (n == null || n.isNull()) {
      return m;
    }
    n.asMap().forEach((k, v) -> m.put(k, new Entry(k, v.asString(true), v, false)));
    return m;
  }

  private static Map<String, Entry> durationMap(YamlNode n) {
    Map<String, Entry> m = new LinkedHashMap<>();
    if (n == null || n.isNull()) {
      return m;
    }
    n.asMap().forEach((k, v) -> m.put(k, new Entry(k, v.asString(true), v, false)));
    return m;
  }

  private static Signal signal(Entry e) {
    return Signal.fromKey(e.key)
        .orElseThrow(
            () ->
                (e.isDefault ? e.node : e.node)
                    .error("unsupported eviction signal " + e.key + supportedSignals()));
  }

  private static String supportedSignals() {
    StringBuilder sb = new StringBuilder(" (supported: ");
    Signal[] all = Signal.values();
    for (int i = 0; i < all.length; i++) {
      sb.append(i == 0 ? "" : ", ").append(all[i].key());
    }
    return sb.append(")").toString();
  }

  private static Draft parseThreshold(Entry e, String kind, String field) {
    Signal s = signal(e);
    ThresholdValue value;
    if (e.text.endsWith("%")) {
      if (e.text.equals("0%") || e.text.equals("100%")) {
        return null; // the kubelet ignores 0% and 100%
      }
      float p = percentage(e);
      if (p < 0) {
        throw e.node.error(
            "eviction percentage threshold " + s.key() + " must be >= 0%: " + e.text);
      }
      if (p > 1) {
        throw e.node.error(
            "eviction percentage threshold " + s.key() + " must be <= 100%: " + e.text);
      }
      value = ThresholdValue.ofFraction(p, e.text);
    } else {
      Quantity q = quantity(e);
      if (q.sign() <= 0) {
        throw e.node.error("eviction threshold " + s.key() + " must be positive: " + q);
      }
      value = ThresholdValue.ofQuantity(q, e.text);
    }
    Draft d = new Draft(s, value, e.node);
    d.kind = kind;
    d.origin = e.isDefault ? field + " (kubelet default)" : field;
    return d;
  }

  private static float percentage(Entry e) {
    String num = e.text;
    while (num.endsWith("%")) {
      num = num.substring(0, num.length() - 1); // strings.TrimRight(input, "%")
    }
    if (!GO_FLOAT.matcher(num).matches()) {
      throw e.node.error("invalid percentage \"" + e.text + "\": not a number");
    }
    String lower = num.toLowerCase(java.util.Locale.ROOT);
    if (lower.contains("nan")) {
      throw e.node.error("invalid percentage \"" + e.text + "\": not a number");
    }
    float v = Float.parseFloat(lower.replace("infinity", "Infinity").replace("inf", "Infinity"));
    if (Float.isInfinite(v) && !lower.contains("inf")) {
      throw e.node.error("invalid percentage \"" + e.text + "\": value out of range");
    }
    return v / 100f;
  }

  private static Quantity quantity(Entry e) {
    try {
      return Quantity.parse(e.text);
    } catch (IllegalArgumentException ex) {
      throw e.node.error(
          "invalid quantity \"" + Quantity.excerpt(e.text) + "\": " + ex.getMessage());
    }
  }

  /** A threshold being assembled. */
  private static final class Draft {
    final Signal signal;
    final ThresholdValue value;
    final YamlNode node;
    Duration grace = Duration.ZERO;
    ThresholdValue minReclaim;
    String kind;
    String origin;
    String idSuffix = "";
    boolean appended;

    Draft(Signal signal, ThresholdValue value, YamlNode node) {
      this.signal = signal;
      this.value = value;
      this.node = node;
    }

    String id() {
      return kind + " " + signal.key() + idSuffix;
    }

    Draft copyAs(Signal s, String origin, boolean keepGrace) {
      Draft c = new Draft(s, value, node);
      c.minReclaim = minReclaim;
      c.grace = keepGrace ? grace : Duration.ZERO;
      c.kind = keepGrace && !grace.isZero() ? "soft" : "hard";
      c.origin = origin;
      return c;
    }
  }

  /**
   * The kubelet's UpdateContainerFsThresholds: containerfs thresholds follow nodefs (shared and
   * split layouts) or imagefs (dedicated layout); a user-given containerfs threshold is replaced in
   * place, with a warning.
   */
  private static List<Draft> containerFsThresholds(
      List<Draft> in, FsLayout layout, List<String> warnings) {
    List<Draft> out = new ArrayList<>(in);
    boolean fromNodeFs = layout != FsLayout.DEDICATED;
    Signal bytesBase = fromNodeFs ? Signal.NODEFS_AVAILABLE : Signal.IMAGEFS_AVAILABLE;
    Signal inodesBase = fromNodeFs ? Signal.NODEFS_INODES_FREE : Signal.IMAGEFS_INODES_FREE;
    derive(out, Signal.CONTAINERFS_AVAILABLE, bytesBase, true, layout, warnings);
    derive(out, Signal.CONTAINERFS_AVAILABLE, bytesBase, false, layout, warnings);
    derive(out, Signal.CONTAINERFS_INODES_FREE, inodesBase, true, layout, warnings);
    derive(out, Signal.CONTAINERFS_INODES_FREE, inodesBase, false, layout, warnings);
    return out;
  }

  private static void derive(
      List<Draft> list,
      Signal target,
      Signal base,
      boolean hard,
      FsLayout layout,
      List<String> warnings) {
    Draft baseDraft = null;
    int userIdx = -1;
    for (int i = 0; i < list.size(); i++) {
      Draft d = list.get(i);
      if (d.signal == base && d.grace.isZero() == hard) {
        baseDraft = d; // the kubelet keeps the last one found
      }
      if (d.signal == target && d.grace.isZero() == hard) {
        userIdx = i;
      }
    }
    String kind = hard ? "hard" : "soft";
    if (userIdx >= 0) {
      Draft user = list.get(userIdx);
      warnings.add(
          user.node.where()
              + ": "
              + kind
              + " "
              + target.key()
              + " is replaced by the "
              + kind
              + " "
              + base.key()
              + " threshold ("
              + layout.key()
              + " filesystem layout)");
    }
    if (baseDraft == null) {
      // The kubelet inserts an empty threshold here, which can never be met: leave it out.
      if (userIdx >= 0) {
        list.remove(userIdx);
      }
      return;
    }
    Draft c =
        baseDraft.copyAs(
            target,
            "derived from " + baseDraft.id() + " (" + layout.key() + " filesystem layout)",
            !hard);
    if (userIdx >= 0) {
      list.set(userIdx, c);
    } else {
      c.appended = true;
      list.add(c);
    }
  }
}
