package dev.evictd.k8s;

import dev.evictd.api.ConfigException;
import dev.evictd.api.Quantity;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.Volume;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Side-effect-free pod resource helpers, reproducing exactly how the kubelet computes them (newest
 * upstream sources, today's feature-gate defaults: PodLevelResources on, sidecar containers on, no
 * in-place-resize status resources):
 *
 * <ul>
 *   <li>{@code k8s.io/component-helpers/resource/helpers.go}: {@code PodRequests}/{@code PodLimits}
 *       and {@code IsPodLevelResourcesSet}/{@code IsPodLevelRequestsSet};
 *   <li>{@code pkg/api/v1/resource/helpers.go}: {@code GetResourceRequestQuantity};
 *   <li>{@code pkg/apis/core/v1/helper/qos/qos.go}: {@code ComputePodQOS}/{@code GetPodQOS};
 *   <li>{@code pkg/kubelet/types/pod_update.go}: {@code IsStaticPod}/{@code IsMirrorPod}/{@code
 *       IsCriticalPod};
 *   <li>{@code pkg/kubelet/eviction/helpers.go}: {@code localVolumeNames}, with {@code
 *       pkg/volume/util/util.go}: {@code IsLocalEphemeralVolume}.
 * </ul>
 *
 * <p>Quantities are read from fabric8's text ({@code amount + format}) with {@link Quantity#parse},
 * after Go's {@code strings.TrimSpace} as Go's {@code UnmarshalJSON} does; a malformed one raises
 * {@link ConfigException} naming the pod, the container, the field and the text. Every resource
 * list a function reads is converted whole, as Go decodes the whole pod before any of these
 * functions could run. A JSON {@code null} entry counts as present with a zero value, as Go decodes
 * it (Go's zero carries an empty format; here it is {@link Quantity#ZERO}). Missing spec,
 * containers, resources and maps read as empty.
 */
public final class PodResources {

  /** Go {@code v1.ResourceCPU}. */
  public static final String CPU = "cpu";

  /** Go {@code v1.ResourceMemory}. */
  public static final String MEMORY = "memory";

  /** Go {@code v1.ResourceStorage}. */
  public static final String STORAGE = "storage";

  /** Go {@code v1.ResourceEphemeralStorage}. */
  public static final String EPHEMERAL_STORAGE = "ephemeral-storage";

  /** Go {@code v1.ResourceHugePagesPrefix}. */
  public static final String HUGEPAGES_PREFIX = "hugepages-";

  /** Go {@code kubetypes.ConfigSourceAnnotationKey}. */
  public static final String CONFIG_SOURCE_ANNOTATION = "kubernetes.io/config.source";

  /** Go {@code kubetypes.ConfigMirrorAnnotationKey}. */
  public static final String CONFIG_MIRROR_ANNOTATION = "kubernetes.io/config.mirror";

  /** Go {@code kubetypes.ApiserverSource}. */
  public static final String APISERVER_SOURCE = "api";

  /** Go {@code scheduling.SystemCriticalPriority} (2 × HighestUserDefinablePriority). */
  public static final int SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

  /** Go {@code v1.PodQOSGuaranteed}. */
  public static final String GUARANTEED = "Guaranteed";

  /** Go {@code v1.PodQOSBurstable}. */
  public static final String BURSTABLE = "Burstable";

  /** Go {@code v1.PodQOSBestEffort}. */
  public static final String BEST_EFFORT = "BestEffort";

  private static final String RESTART_POLICY_ALWAYS = "Always";

  private PodResources() {}

  // ---------------------------------------------------------------------------------------------------------------
  // Requests and limits
  // ---------------------------------------------------------------------------------------------------------------

  /** Go {@code GetResourceRequestQuantity(pod, resourceName)} (pkg/api/v1/resource, newest). */
  public static Quantity requestQuantity(Pod pod, String resourceName) {
    return requestQuantity(pod, resourceName, null);
  }

  /**
   * Go {@code GetResourceRequestQuantity(pod, resourceName)} (pkg/api/v1/resource) of {@code
   * kubelet} (null: the newest, with its default gates). Up to 1.33 the containers' requests are
   * summed and every init container, sidecars included, counts at its maximum; from 1.34 it reads
   * {@code PodRequests}: sidecars added to the sum, pod-level requests of supported resources
   * replacing the aggregate, and with {@code PodLevelResources} on and pod-level resources set the
   * containers' requests skipped altogether. Overhead is added to a non-zero total.
   */
  public static Quantity requestQuantity(
      Pod pod, String resourceName, dev.evictd.api.Kubelet kubelet) {
    Quantity request =
        Quantity.zero(
            MEMORY.equals(resourceName)
                    || STORAGE.equals(resourceName)
                    || EPHEMERAL_STORAGE.equals(resourceName)
                ? Quantity.Format.BINARY_SI
                : Quantity.Format.DECIMAL_SI);
    Quantity found;
    if (kubelet != null && !kubelet.podRequestsHelper()) {
      found = legacyRequest(pod, resourceName);
    } else {
      boolean skipContainers =
          (kubelet == null || kubelet.podLevelResources()) && isPodLevelResourcesSet(pod);
      found = resourceName == null ? null : podRequests(pod, skipContainers).get(resourceName);
    }
    if (found != null) {
      request = request.add(found);
    }
    Map<String, Quantity> overhead = overhead(pod);
    if (overhead != null) {
      Quantity podOverhead = overhead.get(resourceName);
      if (podOverhead != null && !request.isZero()) {
        request = request.add(podOverhead);
      }
    }
    return request;
  }

  /**
   * The 1.32 and 1.33 {@code GetResourceRequestQuantity} loops: regular containers' requests added,
   * then any init container (restartable or not) requesting more replaces the sum; pod-level
   * resources are not read. Null when nothing requests the resource.
   */
  private static Quantity legacyRequest(Pod pod, String resourceName) {
    Quantity sum = null;
    for (Container c : containers(pod, false)) {
      Quantity q = resourceList(c, true, containerContext(pod, c, false)).get(resourceName);
      if (q != null) {
        sum = sum == null ? q : sum.add(q);
      }
    }
    for (Container c : containers(pod, true)) {
      Quantity q = resourceList(c, true, containerContext(pod, c, true)).get(resourceName);
      if (q != null && (sum == null || sum.compareTo(q) < 0)) {
        sum = q;
      }
    }
    return sum;
  }

  /**
   * Go {@code PodRequests(pod, PodResourcesOptions{SkipContainerLevelResources:
   * IsPodLevelResourcesSet(pod), ExcludeOverhead: true})}, the map {@link #requestQuantity} reads.
   */
  public static Map<String, Quantity> podRequests(Pod pod) {
    return podRequests(pod, isPodLevelResourcesSet(pod));
  }

  private static Map<String, Quantity> podRequests(Pod pod, boolean skipContainerLevel) {
    // Container-level requests are read (and so validated) even when skipped: Go decodes the whole
    // pod first.
    Map<String, Quantity> containerLevel = aggregate(pod, true);
    Map<String, Quantity> reqs = skipContainerLevel ? new LinkedHashMap<>() : containerLevel;
    if (isPodLevelRequestsSet(pod)) {
      applyPodLevelResources(reqs, podLevel(pod, true));
    }
    return sorted(reqs);
  }

  /**
   * Go {@code PodLimits(pod, PodResourcesOptions{})}: which names are present ("found") matches Go
   * exactly.
   */
  public static Map<String, Quantity> podLimits(Pod pod) {
    Map<String, Quantity> limits = aggregate(pod, false);
    if (isPodLevelResourcesSet(pod)) {
      applyPodLevelResources(limits, podLevel(pod, false));
    }
    Map<String, Quantity> overhead = overhead(pod);
    if (overhead != null) {
      for (Map.Entry<String, Quantity> e : overhead.entrySet()) {
        Quantity value = limits.get(e.getKey());
        if (value != null && !value.isZero()) {
          limits.put(e.getKey(), value.add(e.getValue()));
        }
      }
    }
    return sorted(limits);
  }

  /** The container's limit for {@code resourceName}, or {@code null} when it declares none. */
  public static Quantity containerLimit(Container c, String resourceName) {
    return resourceList(c, false, containerContext(null, c, false)).get(resourceName);
  }

  /**
   * The container's request for {@code resourceName}; Go's zero quantity ({@link Quantity#ZERO})
   * when absent.
   */
  public static Quantity containerRequest(Container c, String resourceName) {
    Quantity q = resourceList(c, true, containerContext(null, c, false)).get(resourceName);
    return q != null ? q : Quantity.ZERO;
  }

  /** The container's requests ({@code requests}) or limits by resource name, parsed. */
  public static Map<String, Quantity> containerResources(Container c, boolean requests) {
    return resourceList(c, requests, containerContext(null, c, false));
  }

  /** The pod-level requests ({@code requests}) or limits by resource name, parsed. */
  public static Map<String, Quantity> podLevelResources(Pod pod, boolean requests) {
    return podLevel(pod, requests);
  }

  /**
   * Go {@code IsPodLevelResourcesSet}: pod-level requests or limits name cpu, memory or a hugepages
   * resource.
   */
  public static boolean isPodLevelResourcesSet(Pod pod) {
    ResourceRequirements r = podResources(pod);
    if (r == null) {
      return false;
    }
    return hasSupportedPodLevelResource(r.getRequests())
        || hasSupportedPodLevelResource(r.getLimits());
  }

  /**
   * Go {@code IsPodLevelRequestsSet}: pod-level requests name cpu, memory or a hugepages resource.
   */
  public static boolean isPodLevelRequestsSet(Pod pod) {
    ResourceRequirements r = podResources(pod);
    return r != null && hasSupportedPodLevelResource(r.getRequests());
  }

  /** Go {@code IsSupportedPodLevelResource}: cpu, memory or {@code hugepages-*}. */
  public static boolean isSupportedPodLevelResource(String name) {
    return CPU.equals(name)
        || MEMORY.equals(name)
        || (name != null && name.startsWith(HUGEPAGES_PREFIX));
  }

  private static boolean hasSupportedPodLevelResource(Map<String, ?> list) {
    if (list == null) {
      return false;
    }
    for (String name : list.keySet()) {
      if (isSupportedPodLevelResource(name)) {
        return true;
      }
    }
    return false;
  }

  /** Go {@code applyPodLevelResources}: supported pod-level values replace the aggregated ones. */
  private static void applyPodLevelResources(
      Map<String, Quantity> result, Map<String, Quantity> podLevel) {
    for (Map.Entry<String, Quantity> e : podLevel.entrySet()) {
      if (isSupportedPodLevelResource(e.getKey())) {
        result.put(e.getKey(), e.getValue());
      }
    }
  }

  /**
   * Go {@code aggregateContainerResourcesByFn} over the spec requests or limits (KEP-753 sidecar
   * formula).
   */
  private static Map<String, Quantity> aggregate(Pod pod, boolean requests) {
    Map<String, Quantity> result = new LinkedHashMap<>();
    for (Container c : containers(pod, false)) {
      addResourceList(result, resourceList(c, requests, containerContext(pod, c, false)));
    }
    Map<String, Quantity> restartable = new LinkedHashMap<>();
    Map<String, Quantity> init = new LinkedHashMap<>();
    for (Container c : containers(pod, true)) {
      Map<String, Quantity> resources = resourceList(c, requests, containerContext(pod, c, true));
      if (isRestartableInitContainer(c)) {
        addResourceList(result, resources);
        addResourceList(restartable, resources);
        resources = restartable;
      } else {
        Map<String, Quantity> combined = new LinkedHashMap<>();
        addResourceList(combined, resources);
        addResourceList(combined, restartable);
        resources = combined;
      }
      maxResourceList(init, resources);
    }
    maxResourceList(result, init);
    return result;
  }

  /** Go {@code isRestartableInitContainer}: {@code restartPolicy: Always}. */
  public static boolean isRestartableInitContainer(Container c) {
    return c != null && RESTART_POLICY_ALWAYS.equals(c.getRestartPolicy());
  }

  /**
   * Go {@code addResourceList}: the first value is copied (keeping its format and text), later ones
   * are added.
   */
  private static void addResourceList(Map<String, Quantity> list, Map<String, Quantity> newList) {
    for (Map.Entry<String, Quantity> e : newList.entrySet()) {
      Quantity value = list.get(e.getKey());
      list.put(e.getKey(), value == null ? e.getValue() : value.add(e.getValue()));
    }
  }

  /** Go {@code maxResourceList}: keeps the greater value, the existing one on a tie. */
  private static void maxResourceList(Map<String, Quantity> list, Map<String, Quantity> newList) {
    for (Map.Entry<String, Quantity> e : newList.entrySet()) {
      Quantity value = list.get(e.getKey());
      if (value == null || e.getValue().compareTo(value) > 0) {
        list.put(e.getKey(), e.getValue());
      }
    }
  }

  private static Map<String, Quantity> sorted(Map<String, Quantity> m) {
    return Collections.unmodifiableMap(new TreeMap<>(m));
  }

  // ---------------------------------------------------------------------------------------------------------------
  // QoS
  // ---------------------------------------------------------------------------------------------------------------

  /**
   * Go {@code ComputePodQOS} (newest): pod-level resources decide when {@code spec.resources} is
   * present, else each init and regular container is classified on cpu and memory and the classes
   * combine.
   */
  public static String qosClass(Pod pod) {
    PodSpec spec = pod == null ? null : pod.getSpec();
    if (spec != null && spec.getResources() != null) {
      return resourceQos(spec.getResources(), podLevel(pod, true), podLevel(pod, false));
    }
    String podQos = null;
    for (boolean init : new boolean[] {true, false}) {
      for (Container c : containers(pod, init)) {
        String context = containerContext(pod, c, init);
        String qos =
            resourceQos(
                c.getResources(), resourceList(c, true, context), resourceList(c, false, context));
        if (BURSTABLE.equals(qos)) {
          return qos; // any Burstable container makes the pod Burstable
        } else if (podQos == null) {
          podQos = qos;
        } else if (!podQos.equals(qos)) {
          return BURSTABLE; // one BestEffort and one Guaranteed container
        }
      }
    }
    return podQos == null ? BEST_EFFORT : podQos;
  }

  /** Go {@code GetPodQOS}: {@code status.qosClass} when set, else {@link #qosClass}. */
  public static String podQosClass(Pod pod) {
    PodStatus status = pod == null ? null : pod.getStatus();
    if (status != null && status.getQosClass() != null && !status.getQosClass().isEmpty()) {
      return status.getQosClass();
    }
    return qosClass(pod);
  }

  /**
   * Go {@code resourceQOS}: the class of one set of resource requirements, judged on cpu and
   * memory.
   */
  private static String resourceQos(
      ResourceRequirements raw, Map<String, Quantity> requests, Map<String, Quantity> limits) {
    int declared = raw == null ? 0 : size(raw.getRequests()) + size(raw.getLimits());
    if (declared == 0) {
      return BEST_EFFORT;
    }
    String qos = null;
    for (String res : new String[] {CPU, MEMORY}) {
      Quantity req = requests.getOrDefault(res, Quantity.ZERO);
      Quantity lim = limits.getOrDefault(res, Quantity.ZERO);
      if (req.compareTo(lim) != 0) {
        return BURSTABLE;
      }
      boolean bestEffort = req.isZero() && lim.isZero();
      if (qos == null) {
        qos = bestEffort ? BEST_EFFORT : GUARANTEED;
      } else if (bestEffort != BEST_EFFORT.equals(qos)) {
        return BURSTABLE;
      }
    }
    return qos;
  }

  private static int size(Map<?, ?> m) {
    return m == null ? 0 : m.size();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Criticality and priority
  // ---------------------------------------------------------------------------------------------------------------

  /** Go {@code IsStaticPod}: the config-source annotation is present and is not {@code "api"}. */
  public static boolean isStatic(Pod pod) {
    Map<String, String> annotations = annotations(pod);
    if (annotations == null || !annotations.containsKey(CONFIG_SOURCE_ANNOTATION)) {
      return false;
    }
    String source = annotations.get(CONFIG_SOURCE_ANNOTATION);
    return !APISERVER_SOURCE.equals(source == null ? "" : source);
  }

  /** Go {@code IsMirrorPod}: the config-mirror annotation is present (whatever its value). */
  public static boolean isMirror(Pod pod) {
    Map<String, String> annotations = annotations(pod);
    return annotations != null && annotations.containsKey(CONFIG_MIRROR_ANNOTATION);
  }

  /** Go {@code IsCriticalPod}: static, mirror, or {@code spec.priority >= 2000000000}. */
  public static boolean isCritical(Pod pod) {
    if (isStatic(pod) || isMirror(pod)) {
      return true;
    }
    PodSpec spec = pod == null ? null : pod.getSpec();
    return spec != null
        && spec.getPriority() != null
        && spec.getPriority() >= SYSTEM_CRITICAL_PRIORITY;
  }

  /** Go {@code corev1helpers.PodPriority}: {@code spec.priority}, 0 when unset. */
  public static int priority(Pod pod) {
    PodSpec spec = pod == null ? null : pod.getSpec();
    return spec == null || spec.getPriority() == null ? 0 : spec.getPriority();
  }

  private static Map<String, String> annotations(Pod pod) {
    ObjectMeta meta = pod == null ? null : pod.getMetadata();
    return meta == null ? null : meta.getAnnotations();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Volumes
  // ---------------------------------------------------------------------------------------------------------------

  /**
   * Go eviction {@code localVolumeNames}: names of hostPath volumes and local ephemeral volumes, in
   * spec order.
   */
  public static List<String> localVolumeNames(Pod pod) {
    PodSpec spec = pod == null ? null : pod.getSpec();
    List<String> result = new ArrayList<>();
    if (spec == null || spec.getVolumes() == null) {
      return Collections.unmodifiableList(result);
    }
    for (Volume v : spec.getVolumes()) {
      if (v != null && (v.getHostPath() != null || isLocalEphemeralVolume(v))) {
        result.add(v.getName() == null ? "" : v.getName());
      }
    }
    return Collections.unmodifiableList(result);
  }

  /**
   * Go {@code IsLocalEphemeralVolume}: gitRepo, configMap, or emptyDir on the default (disk)
   * medium.
   */
  public static boolean isLocalEphemeralVolume(Volume v) {
    if (v == null) {
      return false;
    }
    if (v.getGitRepo() != null || v.getConfigMap() != null) {
      return true;
    }
    if (v.getEmptyDir() == null) {
      return false;
    }
    String medium = v.getEmptyDir().getMedium();
    return medium == null || medium.isEmpty();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Reading fabric8 objects
  // ---------------------------------------------------------------------------------------------------------------

  private static List<Container> containers(Pod pod, boolean init) {
    PodSpec spec = pod == null ? null : pod.getSpec();
    List<Container> list =
        spec == null ? null : (init ? spec.getInitContainers() : spec.getContainers());
    if (list == null) {
      return List.of();
    }
    List<Container> result = new ArrayList<>(list.size());
    for (Container c : list) {
      if (c != null) {
        result.add(c);
      }
    }
    return result;
  }

  private static ResourceRequirements podResources(Pod pod) {
    PodSpec spec = pod == null ? null : pod.getSpec();
    return spec == null ? null : spec.getResources();
  }

  private static Map<String, Quantity> podLevel(Pod pod, boolean requests) {
    ResourceRequirements r = podResources(pod);
    if (r == null) {
      return new LinkedHashMap<>();
    }
    return convert(requests ? r.getRequests() : r.getLimits(), podName(pod), field(requests));
  }

  /** Pod overhead, or {@code null} when the pod declares none (Go's nil map). */
  private static Map<String, Quantity> overhead(Pod pod) {
    PodSpec spec = pod == null ? null : pod.getSpec();
    if (spec == null || spec.getOverhead() == null) {
      return null;
    }
    return convert(spec.getOverhead(), podName(pod), "overhead");
  }

  private static Map<String, Quantity> resourceList(Container c, boolean requests, String context) {
    ResourceRequirements r = c == null ? null : c.getResources();
    if (r == null) {
      return new LinkedHashMap<>();
    }
    return convert(requests ? r.getRequests() : r.getLimits(), context, field(requests));
  }

  private static String field(boolean requests) {
    return requests ? "resources.requests" : "resources.limits";
  }

  private static Map<String, Quantity> convert(
      Map<String, io.fabric8.kubernetes.api.model.Quantity> raw, String context, String field) {
    Map<String, Quantity> result = new LinkedHashMap<>();
    if (raw == null) {
      return result;
    }
    for (Map.Entry<String, io.fabric8.kubernetes.api.model.Quantity> e : raw.entrySet()) {
      if (e.getKey() == null) {
        continue;
      }
      result.put(e.getKey(), toQuantity(e.getValue(), context, field + "." + e.getKey()));
    }
    return result;
  }

  /** Converts one fabric8 quantity; {@code null} reads as Go's zero quantity. */
  static Quantity toQuantity(
      io.fabric8.kubernetes.api.model.Quantity q, String context, String field) {
    if (q == null) {
      return Quantity.ZERO;
    }
    String text =
        (q.getAmount() == null ? "" : q.getAmount()) + (q.getFormat() == null ? "" : q.getFormat());
    String where = context == null || context.isEmpty() ? field : context + ": " + field;
    Quantity v;
    try {
      v = Quantity.parse(goTrimSpace(text));
    } catch (IllegalArgumentException e) {
      throw new ConfigException(
          where + ": not a quantity: \"" + Quantity.excerpt(text) + "\" (" + e.getMessage() + ")",
          e);
    }
    if (v.atLeastTenToThe(MAX_POWER_OF_TEN)) {
      throw new ConfigException(where + ": " + outOfRange(text));
    }
    if (v.sign() < 0) {
      throw new ConfigException(where + ": " + negative(text));
    }
    return v;
  }

  /**
   * The message for a negative pod quantity, which the API server refuses in requests, limits,
   * overhead and an emptyDir's sizeLimit.
   */
  public static String negative(String text) {
    return "\"" + Quantity.excerpt(text) + "\": must be greater than or equal to 0";
  }

  /** The message for a pod quantity of {@link #MAX_POWER_OF_TEN} or more. */
  public static String outOfRange(String text) {
    return "out of range: \""
        + Quantity.excerpt(text)
        + "\" (must be below 10^"
        + MAX_POWER_OF_TEN
        + ")";
  }

  /**
   * The largest pod quantity read, as a power of ten: a billion times 2^63 bytes, beyond any node
   * (the kubelet would not admit such a pod), yet short enough to compare and add exactly (a
   * request of {@code 1e999999999} had the ranking build a number of a billion digits).
   */
  public static final int MAX_POWER_OF_TEN = 28;

  private static String podName(Pod pod) {
    ObjectMeta meta = pod == null ? null : pod.getMetadata();
    String ns = meta == null || meta.getNamespace() == null ? "" : meta.getNamespace();
    String name = meta == null || meta.getName() == null ? "" : meta.getName();
    return "pod " + (ns.isEmpty() ? "default" : ns) + "/" + name;
  }

  private static String containerContext(Pod pod, Container c, boolean init) {
    String name = c == null || c.getName() == null ? "" : c.getName();
    String container = (init ? "init container " : "container ") + name;
    return pod == null ? container : podName(pod) + ": " + container;
  }

  /**
   * Go {@code strings.TrimSpace}: strips Unicode white space as Go's {@code unicode.IsSpace}
   * defines it.
   */
  static String goTrimSpace(String s) {
    int start = 0;
    int end = s.length();
    while (start < end && isGoSpace(s.charAt(start))) {
      start++;
    }
    while (end > start && isGoSpace(s.charAt(end - 1))) {
      end--;
    }
    return s.substring(start, end);
  }

  private static boolean isGoSpace(char c) {
    switch (c) {
      case '\t',
      '\n',
      '\u000B',
      '\f',
      '\r',
      ' ',
      '\u0085',
      '\u00A0',
      '\u1680',
      '\u2028',
      '\u2029',
      '\u202F',
      '\u205F',
      '\u3000':
        return true;
      default:
        return c >= '\u2000' && c <= '\u200A';
    }
  }
}
