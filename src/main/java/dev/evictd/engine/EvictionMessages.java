package dev.evictd.engine;

import dev.evictd.api.ContainerUsage;
import dev.evictd.api.PodFact;
import dev.evictd.api.PodObject;
import dev.evictd.api.PodStats;
import dev.evictd.api.Quantity;
import dev.evictd.api.ReclaimTarget;
import dev.evictd.k8s.PodResources;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The kubelet's eviction messages and event annotations, word for word. Rules call these to word
 * their decisions; a rule set may word its own.
 */
public final class EvictionMessages {
  /** The annotation listing the containers that used more than they requested. */
  public static final String OFFENDING_CONTAINERS = "offending_containers";

  /** The annotation listing those containers' usage. */
  public static final String OFFENDING_CONTAINERS_USAGE = "offending_containers_usage";

  /** The annotation naming the pod when pod-level resources are set. */
  public static final String OFFENDING_POD = "offending_pod";

  /** The annotation with the pod's usage when pod-level resources are set. */
  public static final String OFFENDING_POD_USAGE = "offending_pod_usage";

  /** The annotation naming the starved resource. */
  public static final String STARVED_RESOURCE = "starved_resource";

  private EvictionMessages() {}

  /** A message and the event annotations that go with it. */
  public record Message(String text, Map<String, String> annotations) {}

  /**
   * The message for an eviction under resource pressure: the starved resource, the threshold and
   * the available amount, then each container whose usage exceeds its request (memory: working set;
   * ephemeral-storage: rootfs + logs). Pods without statistics get the first part and no
   * annotations.
   */
  public static Message pressure(ReclaimTarget target, PodFact pod, PodStats stats) {
    return pressure(target, pod, stats, true);
  }

  /**
   * The message for an eviction under resource pressure, with the line on the pod's own memory
   * usage ("Pod X was using ...") only when {@code podUsageLine}: a kubelet 1.34 or newer with
   * {@code PodLevelResources} on writes it for a pod with pod-level resources ({@code
   * pkg/kubelet/eviction/helpers.go evictionMessage}); older kubelets never do.
   */
  public static Message pressure(
      ReclaimTarget target, PodFact pod, PodStats stats, boolean podUsageLine) {
    String resource = target.resource();
    StringBuilder msg = new StringBuilder("The node was low on resource: " + resource + ". ");
    msg.append("Threshold quantity: ")
        .append(target.quantity())
        .append(", available: ")
        .append(target.available())
        .append(". ");
    Map<String, String> annotations = new LinkedHashMap<>();
    if (stats == null) {
      return new Message(msg.toString(), annotations);
    }
    PodObject.Spec spec = pod.pod().spec();
    if (podUsageLine
        && "memory".equals(resource)
        && podLevelResourcesSet(spec)
        && stats.memoryReported()) {
      Quantity podRequest = spec.resources().requests().get(resource);
      if (podRequest != null) {
        Quantity usage = Quantity.of(stats.memoryWorkingSetBytes(), Quantity.Format.BINARY_SI);
        msg.append("Pod ")
            .append(pod.name())
            .append(" was using ")
            .append(usage)
            .append(", request is ")
            .append(podRequest)
            .append(", has larger consumption of ")
            .append(resource)
            .append(". ");
        annotations.put(OFFENDING_POD, pod.name());
        annotations.put(OFFENDING_POD_USAGE, usage.toString());
      }
    }
    List<PodObject.ContainerSpec> containers = new ArrayList<>(spec.containers());
    containers.addAll(spec.initContainers());
    List<String> exceeded = new ArrayList<>();
    List<String> usages = new ArrayList<>();
    for (ContainerUsage cs : stats.containers()) {
      for (PodObject.ContainerSpec c : containers) {
        if (c.name() != null && c.name().equals(cs.name())) {
          Quantity request = c.resources().requests().getOrDefault(resource, Quantity.ZERO);
          Quantity usage = null;
          if ("ephemeral-storage".equals(resource)) {
            if (cs.rootfsUsedBytes() != null && cs.logsUsedBytes() != null) {
              usage =
                  Quantity.of(cs.rootfsUsedBytes() + cs.logsUsedBytes(), Quantity.Format.BINARY_SI);
            }
          } else if ("memory".equals(resource)) {
            if (cs.memoryWorkingSetBytes() != null) {
              usage = Quantity.of(cs.memoryWorkingSetBytes(), Quantity.Format.BINARY_SI);
            }
          }
          if (usage != null && usage.compareTo(request) > 0) {
            msg.append("Container ")
                .append(c.name())
                .append(" was using ")
                .append(usage)
                .append(", request is ")
                .append(request)
                .append(", has larger consumption of ")
                .append(resource)
                .append(". ");
            exceeded.add(c.name());
            usages.add(usage.toString());
          }
          break;
        }
      }
    }
    annotations.put(OFFENDING_CONTAINERS, String.join(",", exceeded));
    annotations.put(OFFENDING_CONTAINERS_USAGE, String.join(",", usages));
    annotations.put(STARVED_RESOURCE, resource);
    return new Message(msg.toString(), annotations);
  }

  /** Go {@code IsPodLevelResourcesSet}: pod-level requests or limits name a supported resource. */
  private static boolean podLevelResourcesSet(PodObject.Spec spec) {
    PodObject.Resources r = spec.resources();
    return r != null
        && (r.requests().keySet().stream().anyMatch(PodResources::isSupportedPodLevelResource)
            || r.limits().keySet().stream().anyMatch(PodResources::isSupportedPodLevelResource));
  }

  /** "Usage of EmptyDir volume "NAME" exceeds the limit "LIMIT". " */
  public static String emptyDirLimit(String volume, Quantity limit) {
    return "Usage of EmptyDir volume "
        + goQuote(volume)
        + " exceeds the limit "
        + goQuote(limit.toString())
        + ". ";
  }

  /** "Pod ephemeral local storage usage exceeds the total limit of containers LIMIT. " */
  public static String podEphemeralStorageLimit(Quantity limit) {
    return "Pod ephemeral local storage usage exceeds the total limit of containers "
        + limit
        + ". ";
  }

  /** "Container NAME exceeded its local ephemeral storage limit "LIMIT". " */
  public static String containerEphemeralStorageLimit(String container, Quantity limit) {
    return "Container "
        + container
        + " exceeded its local ephemeral storage limit "
        + goQuote(limit.toString())
        + ". ";
  }

  /** Go's %q for the plain strings these messages quote. */
  static String goQuote(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\t' -> sb.append("\\t");
        case '\r' -> sb.append("\\r");
        default -> {
          if (c < 0x20 || c == 0x7f) {
            sb.append(String.format("\\x%02x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    return sb.append('"').toString();
  }
}
