package dev.evictd.agent;

import dev.evictd.k8s.Observations;
import dev.evictd.stats.Summary;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A Summary whose memory figures are the kernel's, read at the sync: the node's memory (observes
 * {@code memory.available}), the "pods" system container's ({@code allocatableMemory.available})
 * and each pod's memory (its rank under memory pressure), as the kubelet's own eviction manager
 * reads them fresh; everything else (filesystems, inodes, PIDs, volumes, containers) stays the
 * Summary's. A pod the kernel has a cgroup for but the Summary does not list yet (a sample older
 * than the pod) is added with its memory alone.
 */
final class KernelMemory {
  private KernelMemory() {}

  /** {@code summary} with the memory figures {@code kernel} has (its other fields are ignored). */
  static Summary overlay(Summary summary, Summary kernel) {
    if (kernel == null || kernel.node() == null) {
      return summary;
    }
    Summary.NodeStats n = summary.node();
    Summary.NodeStats k = kernel.node();
    Summary.NodeStats node =
        new Summary.NodeStats(
            n.nodeName(),
            k.memory() != null ? k.memory() : n.memory(),
            n.fs(),
            n.runtime(),
            n.rlimit(),
            systemContainers(n, k));
    Map<String, Summary.MemoryStats> byUid = new LinkedHashMap<>();
    for (Summary.PodStats p : kernel.pods()) {
      if (p.podRef() != null && p.podRef().uid() != null && p.memory() != null) {
        byUid.put(p.podRef().uid(), p.memory());
      }
    }
    List<Summary.PodStats> pods = new ArrayList<>(summary.pods().size() + byUid.size());
    for (Summary.PodStats p : summary.pods()) {
      Summary.MemoryStats m = p.podRef() == null ? null : byUid.remove(p.podRef().uid());
      pods.add(
          m == null
              ? p
              : new Summary.PodStats(
                  p.podRef(),
                  p.containers(),
                  m,
                  p.volumes(),
                  p.ephemeralStorage(),
                  p.processStats()));
    }
    byUid.forEach(
        (uid, m) ->
            pods.add(
                new Summary.PodStats(
                    new Summary.PodReference(null, null, uid),
                    List.of(),
                    m,
                    List.of(),
                    null,
                    null)));
    return new Summary(node, pods);
  }

  /** The Summary's system containers, the "pods" one with the kernel's memory when it has one. */
  private static List<Summary.ContainerStats> systemContainers(
      Summary.NodeStats summary, Summary.NodeStats kernel) {
    Summary.ContainerStats fresh = kernel.systemContainer(Observations.PODS_SYSTEM_CONTAINER);
    if (fresh == null || fresh.memory() == null) {
      return summary.systemContainers();
    }
    List<Summary.ContainerStats> out = new ArrayList<>();
    boolean replaced = false;
    if (summary.systemContainers() != null) {
      for (Summary.ContainerStats c : summary.systemContainers()) {
        if (c != null && Observations.PODS_SYSTEM_CONTAINER.equals(c.name())) {
          out.add(new Summary.ContainerStats(c.name(), fresh.memory(), c.rootfs(), c.logs()));
          replaced = true;
        } else {
          out.add(c);
        }
      }
    }
    if (!replaced) {
      out.add(fresh);
    }
    return out;
  }
}
