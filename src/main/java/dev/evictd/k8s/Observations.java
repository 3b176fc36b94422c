package dev.evictd.k8s;

import dev.evictd.api.Observation;
import dev.evictd.api.Signal;
import dev.evictd.stats.Summary;
import java.util.EnumMap;
import java.util.Map;

/**
 * The kubelet's {@code makeSignalObservations} ({@code pkg/kubelet/eviction/helpers.go}): which
 * summary fields observe which signal.
 */
public final class Observations {
  /** The system container holding the pods (the allocatable cgroup). */
  public static final String PODS_SYSTEM_CONTAINER = "pods";

  private Observations() {}

  /**
   * The observations a summary supports. A signal is observed only when both of its fields are
   * present (available and capacity, or available and working set for memory); PID availability is
   * maxpid − curproc.
   */
  public static Map<Signal, Observation> of(Summary summary) {
    Map<Signal, Observation> out = new EnumMap<>(Signal.class);
    Summary.NodeStats node = summary == null ? null : summary.node();
    if (node == null) {
      return out;
    }
    Summary.MemoryStats mem = node.memory();
    if (mem != null && mem.availableBytes() != null && mem.workingSetBytes() != null) {
      out.put(
          Signal.MEMORY_AVAILABLE,
          new Observation(
              Signal.MEMORY_AVAILABLE,
              mem.availableBytes(),
              mem.availableBytes() + mem.workingSetBytes(),
              mem.time()));
    }
    Summary.ContainerStats pods = node.systemContainer(PODS_SYSTEM_CONTAINER);
    if (pods != null && pods.memory() != null) {
      Summary.MemoryStats pm = pods.memory();
      if (pm.availableBytes() != null && pm.workingSetBytes() != null) {
        out.put(
            Signal.ALLOCATABLE_MEMORY_AVAILABLE,
            new Observation(
                Signal.ALLOCATABLE_MEMORY_AVAILABLE,
                pm.availableBytes(),
                pm.availableBytes() + pm.workingSetBytes(),
                pm.time()));
      }
    }
    fs(out, node.fs(), Signal.NODEFS_AVAILABLE, Signal.NODEFS_INODES_FREE);
    if (node.runtime() != null) {
      fs(out, node.runtime().imageFs(), Signal.IMAGEFS_AVAILABLE, Signal.IMAGEFS_INODES_FREE);
      fs(
          out,
          node.runtime().containerFs(),
          Signal.CONTAINERFS_AVAILABLE,
          Signal.CONTAINERFS_INODES_FREE);
    }
    Summary.RlimitStats rl = node.rlimit();
    if (rl != null && rl.maxpid() != null && rl.curproc() != null) {
      out.put(
          Signal.PID_AVAILABLE,
          new Observation(
              Signal.PID_AVAILABLE, rl.maxpid() - rl.curproc(), rl.maxpid(), rl.time()));
    }
    return out;
  }

  private static void fs(
      Map<Signal, Observation> out, Summary.FsStats fs, Signal bytes, Signal inodes) {
    if (fs == null) {
      return;
    }
    if (fs.availableBytes() != null && fs.capacityBytes() != null) {
      out.put(bytes, new Observation(bytes, fs.availableBytes(), fs.capacityBytes(), fs.time()));
    }
    if (fs.inodesFree() != null && fs.inodes() != null) {
      out.put(inodes, new Observation(inodes, fs.inodesFree(), fs.inodes(), fs.time()));
    }
  }
}
