package dev.evictd.engine;

import dev.evictd.api.ConfigException;
import dev.evictd.api.ContainerUsage;
import dev.evictd.api.PodFact;
import dev.evictd.api.PodOwner;
import dev.evictd.api.PodStats;
import dev.evictd.api.Quantity;
import dev.evictd.api.VolumeLimit;
import dev.evictd.k8s.PodResources;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Volume;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Builds pod facts from pod objects and their statistics. */
public final class PodFacts {
  private PodFacts() {}

  /** The namespace of a pod ("default" when unset). */
  public static String namespace(Pod pod) {
    String ns = pod.getMetadata() == null ? null : pod.getMetadata().getNamespace();
    return ns == null || ns.isEmpty() ? "default" : ns;
  }

  /** The uid of a pod ({@code namespace/name} when unset). */
  public static String uid(Pod pod) {
    String uid = pod.getMetadata() == null ? null : pod.getMetadata().getUid();
    return uid == null || uid.isEmpty() ? namespace(pod) + "/" + name(pod) : uid;
  }

  /** The name of a pod; refuses a pod without one. */
  public static String name(Pod pod) {
    String name = pod.getMetadata() == null ? null : pod.getMetadata().getName();
    if (name == null || name.isEmpty()) {
      throw new ConfigException("pod without metadata.name");
    }
    return name;
  }

  /** The fact for a pod at {@code position} of the active list. */
  public static PodFact of(Pod pod, int position) {
    return of(pod, position, true, null);
  }

  /**
   * The pod's fact as {@code kubelet} sees it: its requests computed the way that kubelet's
   * eviction manager computes them ({@link PodResources#requestQuantity(Pod, String, Kubelet)}).
   */
  public static PodFact of(Pod pod, int position, dev.evictd.api.Kubelet kubelet) {
    return of(pod, position, true, kubelet);
  }

  /**
   * Checks what {@link #of} reads of a pod kept as the pod store keeps it ({@link
   * PodCompaction#forStore}), throwing what {@link #of} would throw, without its rules' view: for
   * such a pod that is the pod itself, and finding that it is walks the whole pod again.
   */
  public static void check(Pod pod) {
    of(pod, 0, false, null);
  }

  private static PodFact of(
      Pod pod, int position, boolean rulesView, dev.evictd.api.Kubelet kubelet) {
    String ns = namespace(pod);
    String name = name(pod);
    String uid = uid(pod);
    var spec = pod.getSpec();
    List<VolumeLimit> emptyDirLimits = new ArrayList<>();
    if (spec != null && spec.getVolumes() != null) {
      for (Volume v : spec.getVolumes()) {
        // a null list entry (a YAML "-" with nothing after it) decodes in Go to a volume without a
        // source
        if (v != null && v.getEmptyDir() != null && v.getEmptyDir().getSizeLimit() != null) {
          Quantity limit =
              parse(
                  v.getEmptyDir().getSizeLimit(),
                  ns,
                  name,
                  "volume " + v.getName() + ": emptyDir.sizeLimit");
          if (limit.sign() > 0) {
            emptyDirLimits.add(new VolumeLimit(v.getName(), limit));
          }
        }
      }
    }
    Map<String, Quantity> containerLimits = new LinkedHashMap<>();
    if (spec != null && spec.getContainers() != null) {
      for (Container c : spec.getContainers()) {
        Quantity l = c == null ? null : PodResources.containerLimit(c, "ephemeral-storage");
        if (l != null && l.value() != 0) {
          containerLimits.put(c.getName(), l);
        }
      }
    }
    Map<String, Quantity> podLimits = PodResources.podLimits(pod);
    List<PodOwner> owners = new ArrayList<>();
    if (pod.getMetadata() != null && pod.getMetadata().getOwnerReferences() != null) {
      for (OwnerReference o : pod.getMetadata().getOwnerReferences()) {
        if (o == null) {
          continue;
        }
        owners.add(
            new PodOwner(
                o.getKind(), o.getName(), o.getUid(), Boolean.TRUE.equals(o.getController())));
      }
    }
    Map<String, String> labels =
        pod.getMetadata() == null || pod.getMetadata().getLabels() == null
            ? Map.of()
            : nonNull(pod.getMetadata().getLabels());
    List<PodOwner> ownerList = List.copyOf(owners);
    return new PodFact(
        uid,
        ns,
        name,
        position,
        PodResources.priority(pod),
        PodResources.isStatic(pod),
        PodResources.isMirror(pod),
        PodResources.isCritical(pod),
        PodResources.qosClass(pod),
        PodResources.requestQuantity(pod, "memory", kubelet),
        PodResources.requestQuantity(pod, "ephemeral-storage", kubelet),
        PodResources.requestQuantity(pod, "inodes", kubelet),
        terminationGracePeriodSeconds(spec),
        List.copyOf(PodResources.localVolumeNames(pod)),
        List.copyOf(emptyDirLimits),
        podLimits.get("ephemeral-storage"),
        containerLimits.isEmpty()
            ? Map.of()
            : java.util.Collections.unmodifiableMap(containerLimits),
        labels,
        ownerList,
        ownerList.stream().filter(PodOwner::controller).map(PodOwner::uid).findFirst().orElse(null),
        rulesView ? PodObjects.of(pod, ns, name, uid, labels, ownerList) : null,
        deletionTimestamp(pod),
        pod.getMetadata() == null ? null : pod.getMetadata().getDeletionGracePeriodSeconds());
  }

  /**
   * spec.terminationGracePeriodSeconds as the API server hands it out: a negative value (which
   * older servers stored) reads as 1 second, as the v1 conversion has made it since Kubernetes
   * 1.27.
   */
  public static Long terminationGracePeriodSeconds(io.fabric8.kubernetes.api.model.PodSpec spec) {
    Long own = spec == null ? null : spec.getTerminationGracePeriodSeconds();
    return own != null && own < 0 ? Long.valueOf(1) : own;
  }

  /**
   * The pod's deletionTimestamp, null when unset or unreadable (a pod that is not being deleted).
   */
  static java.time.Instant deletionTimestamp(Pod pod) {
    String t = pod.getMetadata() == null ? null : pod.getMetadata().getDeletionTimestamp();
    if (t == null || t.isEmpty()) {
      return null;
    }
    try {
      return java.time.OffsetDateTime.parse(t).toInstant();
    } catch (java.time.format.DateTimeParseException e) {
      throw new ConfigException(
          "pod "
              + namespace(pod)
              + "/"
              + name(pod)
              + ": metadata.deletionTimestamp: not an RFC 3339 time: \""
              + t
              + "\"");
    }
  }

  /** The annotation {@code kubectl apply} keeps the whole last applied object in. */
  public static final String LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

  /**
   * A copy of {@code pod} with what rules must not read removed: rules are untrusted, and whatever
   * they can read they can copy into a message that reaches the pod's condition, an Event and the
   * log. Gone from every container (regular, init, ephemeral): {@code env} (values and {@code
   * valueFrom} references), {@code envFrom}, {@code command}, {@code args}, {@code lifecycle} and
   * the probes (their commands and HTTP headers); gone from the metadata: the {@value
   * #LAST_APPLIED} annotation (the whole spec, env values included) and {@code managedFields}. The
   * pod itself is not changed.
   */
  public static Pod visibleToRules(Pod pod) {
    if (PodCompaction.isFrozen(pod)) {
      // the informer's pod (PodCompaction.forStore): already without any of it, and nothing in it
      // can be changed, so the rules read the store's object instead of a copy of their own
      return pod;
    }
    Pod copy = new io.fabric8.kubernetes.api.model.PodBuilder(pod).build();
    hideFromRules(copy);
    // the copy lives as long as the pod's fact: its empty lists and maps shared (PodCompaction)
    return PodCompaction.shareEmpty(copy);
  }

  /** Removes from {@code pod} itself what {@link #visibleToRules} leaves out of its copy. */
  static void hideFromRules(Pod pod) {
    var meta = pod.getMetadata();
    if (meta != null) {
      meta.setManagedFields(null);
      if (meta.getAnnotations() != null && meta.getAnnotations().containsKey(LAST_APPLIED)) {
        Map<String, String> annotations = new LinkedHashMap<>(meta.getAnnotations());
        annotations.remove(LAST_APPLIED);
        meta.setAnnotations(annotations);
      }
    }
    var spec = pod.getSpec();
    if (spec != null) {
      if (spec.getContainers() != null) {
        spec.getContainers().forEach(PodFacts::hide);
      }
      if (spec.getInitContainers() != null) {
        spec.getInitContainers().forEach(PodFacts::hide);
      }
      if (spec.getEphemeralContainers() != null) {
        for (var c : spec.getEphemeralContainers()) {
          if (c != null) {
            c.setEnv(List.of());
            c.setEnvFrom(List.of());
            c.setCommand(List.of());
            c.setArgs(List.of());
            c.setLifecycle(null);
            c.setLivenessProbe(null);
            c.setReadinessProbe(null);
            c.setStartupProbe(null);
          }
        }
      }
    }
  }

  /** Whether {@code pod} holds none of what {@link #hideFromRules} removes. */
  static boolean isHidden(Pod pod) {
    var meta = pod.getMetadata();
    if (meta != null) {
      if (meta.getManagedFields() != null && !meta.getManagedFields().isEmpty()) {
        return false;
      }
      if (meta.getAnnotations() != null && meta.getAnnotations().containsKey(LAST_APPLIED)) {
        return false;
      }
    }
    var spec = pod.getSpec();
    if (spec == null) {
      return true;
    }
    if (spec.getContainers() != null && !spec.getContainers().stream().allMatch(PodFacts::hidden)) {
      return false;
    }
    if (spec.getInitContainers() != null
        && !spec.getInitContainers().stream().allMatch(PodFacts::hidden)) {
      return false;
    }
    if (spec.getEphemeralContainers() != null) {
      for (var c : spec.getEphemeralContainers()) {
        if (c != null
            && (!empty(c.getEnv())
                || !empty(c.getEnvFrom())
                || !empty(c.getCommand())
                || !empty(c.getArgs())
                || c.getLifecycle() != null
                || c.getLivenessProbe() != null
                || c.getReadinessProbe() != null
                || c.getStartupProbe() != null)) {
          return false;
        }
      }
    }
    return true;
  }

  private static boolean hidden(Container c) {
    return c == null
        || (empty(c.getEnv())
            && empty(c.getEnvFrom())
            && empty(c.getCommand())
            && empty(c.getArgs())
            && c.getLifecycle() == null
            && c.getLivenessProbe() == null
            && c.getReadinessProbe() == null
            && c.getStartupProbe() == null);
  }

  private static boolean empty(List<?> l) {
    return l == null || l.isEmpty();
  }

  private static void hide(Container c) {
    if (c != null) {
      c.setEnv(List.of());
      c.setEnvFrom(List.of());
      c.setCommand(List.of());
      c.setArgs(List.of());
      c.setLifecycle(null);
      c.setLivenessProbe(null);
      c.setReadinessProbe(null);
      c.setStartupProbe(null);
    }
  }

  private static Quantity parse(
      io.fabric8.kubernetes.api.model.Quantity q, String ns, String name, String field) {
    String text = q.getAmount() + (q.getFormat() == null ? "" : q.getFormat());
    String where = "pod " + ns + "/" + name + ": " + field;
    Quantity v;
    try {
      v = Quantity.parse(text);
    } catch (IllegalArgumentException e) {
      throw new ConfigException(where + ": not a quantity: \"" + Quantity.excerpt(text) + "\"");
    }
    if (v.atLeastTenToThe(dev.evictd.k8s.PodResources.MAX_POWER_OF_TEN)) {
      throw new ConfigException(where + ": " + dev.evictd.k8s.PodResources.outOfRange(text));
    }
    if (v.sign() < 0) {
      throw new ConfigException(where + ": " + dev.evictd.k8s.PodResources.negative(text));
    }
    return v;
  }

  /** The statistics fact of a pod from its summary entry. */
  public static PodStats stats(PodFact pod, Summary.PodStats s) {
    // exact sums (the kubelet adds quantities); the long fields are these, saturated
    Sums sums = new Sums();
    List<ContainerUsage> containers = new ArrayList<>(s.containers().size());
    for (Summary.ContainerStats c : s.containers()) {
      if (c == null) {
        continue;
      }
      sums.add(Sums.ROOTFS, used(c.rootfs()));
      sums.add(Sums.ROOTFS_INODES, inodes(c.rootfs()));
      sums.add(Sums.LOGS, used(c.logs()));
      sums.add(Sums.LOGS_INODES, inodes(c.logs()));
      containers.add(
          new ContainerUsage(
              c.name(),
              c.memory() == null ? null : c.memory().workingSetBytes(),
              c.rootfs() == null ? null : c.rootfs().usedBytes(),
              c.logs() == null ? null : c.logs().usedBytes()));
    }
    Map<String, Long> volumeUsed = new LinkedHashMap<>();
    for (Summary.VolumeStats v : s.volumes()) {
      if (v != null && v.name() != null && v.usedBytes() != null) {
        // the kubelet's emptyDirLimitEviction fills a map in summary order: a later entry for a
        // name wins
        volumeUsed.put(v.name(), v.usedBytes());
      }
    }
    for (String name : pod.localVolumes()) {
      for (Summary.VolumeStats v : s.volumes()) {
        if (v != null && name.equals(v.name())) {
          sums.add(Sums.VOLUMES, v.usedBytes() == null ? 0 : v.usedBytes());
          sums.add(Sums.VOLUME_INODES, v.inodesUsed() == null ? 0 : v.inodesUsed());
          break;
        }
      }
    }
    BigInteger rootfs = sums.value(Sums.ROOTFS);
    BigInteger rootfsInodes = sums.value(Sums.ROOTFS_INODES);
    BigInteger logs = sums.value(Sums.LOGS);
    BigInteger logsInodes = sums.value(Sums.LOGS_INODES);
    BigInteger volBytes = sums.value(Sums.VOLUMES);
    BigInteger volInodes = sums.value(Sums.VOLUME_INODES);
    long ws =
        s.memory() == null || s.memory().workingSetBytes() == null
            ? 0
            : s.memory().workingSetBytes();
    long procs =
        s.processStats() == null || s.processStats().processCount() == null
            ? 0
            : s.processStats().processCount();
    Long eph = s.ephemeralStorage() == null ? null : s.ephemeralStorage().usedBytes();
    return new PodStats(
        pod.uid(),
        ws,
        procs,
        saturated(rootfs),
        saturated(rootfsInodes),
        saturated(logs),
        saturated(logsInodes),
        saturated(volBytes),
        saturated(volInodes),
        eph,
        volumeUsed.isEmpty() ? Map.of() : java.util.Collections.unmodifiableMap(volumeUsed),
        List.copyOf(containers),
        s.memory() != null,
        // exact sums kept only when one is past a long: the fact makes them from the longs
        sums.exact()
            ? null
            : new PodStats.Totals(rootfs, rootfsInodes, logs, logsInodes, volBytes, volInodes));
  }

  /**
   * An immutable copy without null keys or values (Map.copyOf refuses them; a YAML {@code a: null}
   * has one).
   */
  static Map<String, String> nonNull(Map<String, String> m) {
    if (m.isEmpty()) {
      return Map.of();
    }
    if (PodCompaction.frozenWithoutNulls(m)) {
      return m; // a frozen pod's own labels (PodCompaction.forStore): no copy needed
    }
    Map<String, String> out = new LinkedHashMap<>();
    m.forEach(
        (k, v) -> {
          if (k != null && v != null) {
            out.put(k, v);
          }
        });
    return java.util.Collections.unmodifiableMap(out);
  }

  /**
   * A pod's exact statistics sums, each in a long until it would overflow (a BigInteger per addend,
   * four per container, was most of what reading a pod's statistics allocated).
   */
  private static final class Sums {
    static final int ROOTFS = 0;
    static final int ROOTFS_INODES = 1;
    static final int LOGS = 2;
    static final int LOGS_INODES = 3;
    static final int VOLUMES = 4;
    static final int VOLUME_INODES = 5;

    private final long[] small = new long[6];

    /** Sums past a long, by slot; null until one is. */
    private BigInteger[] big;

    void add(int slot, long v) {
      if (big != null && big[slot] != null) {
        big[slot] = big[slot].add(BigInteger.valueOf(v));
        return;
      }
      long a = small[slot];
      long r = a + v;
      if (((a ^ r) & (v ^ r)) < 0) { // overflowed: go on exactly
        if (big == null) {
          big = new BigInteger[small.length];
        }
        big[slot] = BigInteger.valueOf(a).add(BigInteger.valueOf(v));
      } else {
        small[slot] = r;
      }
    }

    /** Whether every sum fits in a long (none went on as a BigInteger). */
    boolean exact() {
      return big == null;
    }

    BigInteger value(int slot) {
      return big != null && big[slot] != null ? big[slot] : BigInteger.valueOf(small[slot]);
    }
  }

  private static long saturated(BigInteger v) {
    return v.bitLength() < 64 ? v.longValue() : (v.signum() < 0 ? Long.MIN_VALUE : Long.MAX_VALUE);
  }

  private static long used(Summary.FsStats fs) {
    return fs == null || fs.usedBytes() == null ? 0 : fs.usedBytes();
  }

  private static long inodes(Summary.FsStats fs) {
    return fs == null || fs.inodesUsed() == null ? 0 : fs.inodesUsed();
  }
}
