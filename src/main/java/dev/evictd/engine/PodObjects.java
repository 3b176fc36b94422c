package dev.evictd.engine;

import dev.evictd.api.PodObject;
import dev.evictd.api.PodOwner;
import dev.evictd.api.Quantity;
import dev.evictd.k8s.PodResources;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.Volume;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds the {@link PodObject} value rules read as {@code PodFact.pod}: copied out of the fabric8
 * pod when its fact is built, so that no rule can reach (and call a setter on) the object the
 * informer's store, the decision guard or an executor reads.
 */
final class PodObjects {
  private PodObjects() {}

  static PodObject of(
      Pod pod, String ns, String name, String uid, Map<String, String> labels, List<PodOwner> o) {
    return new PodObject(
        metadata(pod.getMetadata(), ns, name, uid, labels, o), spec(pod), status(pod));
  }

  private static PodObject.Metadata metadata(
      ObjectMeta m,
      String ns,
      String name,
      String uid,
      Map<String, String> labels,
      List<PodOwner> o) {
    Map<String, String> annotations = m.getAnnotations() == null ? Map.of() : m.getAnnotations();
    if (annotations.containsKey(PodFacts.LAST_APPLIED)) {
      annotations = new LinkedHashMap<>(annotations);
      annotations.remove(PodFacts.LAST_APPLIED);
    }
    return new PodObject.Metadata(
        name,
        ns,
        uid,
        m.getGenerateName(),
        labels,
        PodFacts.nonNull(annotations),
        o,
        strings(m.getFinalizers()),
        m.getCreationTimestamp(),
        m.getDeletionTimestamp(),
        m.getDeletionGracePeriodSeconds());
  }

  private static PodObject.Spec spec(Pod pod) {
    PodSpec s = pod.getSpec();
    if (s == null) {
      return new PodObject.Spec(
          null, null, null, null, null, null, null, null, null, null, null, Map.of(), List.of(),
          List.of(), List.of(), null);
    }
    List<String> volumes = new ArrayList<>();
    if (s.getVolumes() != null) {
      for (Volume v : s.getVolumes()) {
        if (v != null && v.getName() != null) {
          volumes.add(v.getName());
        }
      }
    }
    return new PodObject.Spec(
        s.getNodeName(),
        s.getPriority(),
        s.getPriorityClassName(),
        s.getPreemptionPolicy(),
        s.getServiceAccountName(),
        s.getSchedulerName(),
        s.getRuntimeClassName(),
        s.getRestartPolicy(),
        s.getHostNetwork(),
        PodFacts.terminationGracePeriodSeconds(s),
        s.getActiveDeadlineSeconds(),
        s.getNodeSelector() == null ? Map.of() : PodFacts.nonNull(s.getNodeSelector()),
        containers(s.getContainers()),
        containers(s.getInitContainers()),
        List.copyOf(volumes),
        s.getResources() == null
            ? null
            : new PodObject.Resources(
                frozen(PodResources.podLevelResources(pod, true)),
                frozen(PodResources.podLevelResources(pod, false))));
  }

  private static List<PodObject.ContainerSpec> containers(List<Container> cs) {
    if (cs == null || cs.isEmpty()) {
      return List.of();
    }
    List<PodObject.ContainerSpec> out = new ArrayList<>(cs.size());
    for (Container c : cs) {
      if (c != null) {
        out.add(
            new PodObject.ContainerSpec(
                c.getName(),
                c.getImage(),
                c.getRestartPolicy(),
                new PodObject.Resources(
                    frozen(PodResources.containerResources(c, true)),
                    frozen(PodResources.containerResources(c, false)))));
      }
    }
    return List.copyOf(out);
  }

  private static PodObject.Status status(Pod pod) {
    PodStatus s = pod.getStatus();
    if (s == null) {
      return new PodObject.Status(null, null, null, null);
    }
    return new PodObject.Status(s.getPhase(), s.getQosClass(), s.getReason(), s.getStartTime());
  }

  private static Map<String, Quantity> frozen(Map<String, Quantity> fresh) {
    return fresh.isEmpty() ? Map.of() : Collections.unmodifiableMap(fresh);
  }

  private static List<String> strings(List<String> l) {
    if (l == null || l.isEmpty()) {
      return List.of();
    }
    return l.stream().filter(x -> x != null).toList();
  }
}
