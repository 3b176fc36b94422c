package dev.evictd.linux;

import dev.evictd.api.StatsException;
import dev.evictd.k8s.Observations;
import dev.evictd.ports.StatsProvider;
import dev.evictd.stats.Summary;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A stats summary of this host alone, for nodes where the kubelet's Summary API is not used (or not
 * reachable):
 *
 * <ul>
 *   <li><b>node memory</b>: capacity is {@code MemTotal}; usage and {@code inactive_file} come from
 *       the root memory cgroup ({@code memory.usage_in_bytes} and {@code total_inactive_file} under
 *       v1; {@code anon + file} and {@code inactive_file} of the root's memory.stat under v2);
 *       working set = usage − inactive_file; available = capacity − working set, as cAdvisor
 *       computes them for the kubelet. Without a memory controller, usage is {@code MemTotal −
 *       MemFree} and inactive_file is {@code Inactive(file)} of /proc/meminfo.
 *   <li><b>the "pods" system container</b> (observes {@code allocatableMemory.available}): the pods
 *       cgroup's usage and working set. A bare host does not know the node's allocatable memory, so
 *       its capacity is the pods cgroup's memory limit when one is set (the kubelet sets it to
 *       capacity − kube-reserved − system-reserved when it enforces node allocatable), else {@code
 *       MemTotal}. Absent when there is no pods cgroup.
 *   <li><b>nodefs / imagefs</b>: statvfs of the kubelet root dir and of the container runtime root.
 *   <li><b>rlimit</b>: maxpid is {@code /proc/sys/kernel/pid_max}; curproc is the number of tasks
 *       the kernel runs (the total of {@code /proc/loadavg}), the figure {@code sysinfo(2).procs}
 *       gives the kubelet.
 *   <li><b>pods</b>: one entry per pod cgroup (found by UID under the cgroupfs or systemd naming),
 *       with the pod's memory usage and working set and its process count (all cgroup.procs below
 *       the pod cgroup). Name and namespace are unknown here: pods are matched by UID.
 * </ul>
 *
 * Anything that cannot be read is left null (no observation) after one warning per item.
 */
public final class HostStatsProvider implements StatsProvider {
  private static final Logger LOG = LoggerFactory.getLogger(HostStatsProvider.class);

  private final HostPaths paths;
  private final Cgroups cgroups;
  private final String nodeName;
  private final Clock clock;
  private final Set<String> warned = ConcurrentHashMap.newKeySet();
  private final Cgroups.ProcessWalker processWalker = new Cgroups.ProcessWalker();

  /**
   * A provider reading the host through {@code paths}; missing kubelet or runtime roots fall back
   * to {@code /} with a warning.
   *
   * @param nodeName the node name to report, or null for the host name
   */
  public HostStatsProvider(HostPaths paths, String nodeName, Clock clock) {
    for (String w : paths.fallbackWarnings()) {
      LOG.warn(w);
    }
    this.paths = paths.withFallbacks();
    this.cgroups = Cgroups.detect(paths.cgroupRoot(), paths.podsCgroup());
    this.clock = clock;
    this.nodeName = nodeName != null ? nodeName : hostName(paths.procRoot());
  }

  /** The cgroup hierarchy the provider reads. */
  public Cgroups cgroups() {
    return cgroups;
  }

  /** The paths in use, after the fallbacks. */
  public HostPaths paths() {
    return paths;
  }

  private static String hostName(Path procRoot) {
    try {
      return KernelFiles.read(procRoot.resolve("sys/kernel/hostname")).trim();
    } catch (IOException e) {
      return "node";
    }
  }

  @Override
  public Summary summary() {
    Instant now = clock.instant();
    Memory m = memoryFigures(now);
    Summary.FsStats nodefs = fs(now, paths.kubeletRootDir());
    Summary.FsStats imagefs = fs(now, paths.runtimeRootDir());
    Summary.NodeStats node =
        new Summary.NodeStats(
            nodeName,
            m.node(),
            nodefs,
            imagefs == null ? null : new Summary.RuntimeStats(imagefs, null),
            rlimit(now),
            m.system());
    return new Summary(node, pods(now, true));
  }

  /**
   * The memory figures alone, read now: the node's memory, the "pods" system container's and each
   * pod cgroup's (no filesystems, PIDs or process counts) — what a sync the kernel triggered takes
   * from the kernel when the rest comes from the kubelet's Summary.
   */
  public Summary memory() {
    Instant now = clock.instant();
    Memory m = memoryFigures(now);
    return new Summary(
        new Summary.NodeStats(nodeName, m.node(), null, null, null, m.system()), pods(now, false));
  }

  /** The node's memory and the system containers' (null when none). */
  private record Memory(Summary.MemoryStats node, List<Summary.ContainerStats> system) {}

  private Memory memoryFigures(Instant now) {
    if (!Files.isDirectory(paths.procRoot())) {
      throw new StatsException("no host statistics: " + paths.procRoot() + " is not a directory");
    }
    Map<String, Long> meminfo = Cgroups.readKeyed(paths.procRoot().resolve("meminfo"));
    Long capacity = meminfo.get("MemTotal");
    if (capacity == null) {
      warnOnce(
          "meminfo",
          "cannot read MemTotal from "
              + paths.procRoot().resolve("meminfo")
              + ": no memory figures");
    }
    Summary.MemoryStats memory = nodeMemory(now, capacity, meminfo);
    List<Summary.ContainerStats> system = new ArrayList<>();
    if (capacity != null) {
      cgroups
          .podsCgroup()
          .ifPresent(
              p -> {
                Cgroups.Memory m = cgroups.memory(p);
                Long ws = m.workingSet();
                if (ws != null) {
                  long cap = m.limit() != null && m.limit() < capacity ? m.limit() : capacity;
                  system.add(
                      new Summary.ContainerStats(
                          Observations.PODS_SYSTEM_CONTAINER,
                          new Summary.MemoryStats(
                              now, Math.max(0, cap - ws), m.usage(), ws, m.rss()),
                          null,
                          null));
                } else {
                  warnOnce("pods-memory", "cannot read the memory usage of the pods cgroup " + p);
                }
              });
    }
    return new Memory(memory, system.isEmpty() ? null : system);
  }

  private Summary.MemoryStats nodeMemory(Instant now, Long capacity, Map<String, Long> meminfo) {
    if (capacity == null) {
      return null;
    }
    Long usage = null;
    Long inactive = null;
    Long rss = null;
    if (cgroups.memoryRoot().isPresent()) {
      Cgroups.Memory m = cgroups.memory(cgroups.memoryRoot().get());
      usage = m.usage();
      inactive = m.inactiveFile();
      rss = m.rss();
    }
    if (usage == null) {
      warnOnce(
          "root-memcg",
          "no root memory cgroup usage ("
              + cgroups.describe()
              + "): node memory from /proc/meminfo (MemTotal − MemFree, Inactive(file))");
      Long free = meminfo.get("MemFree");
      if (free == null) {
        return null;
      }
      usage = capacity - free;
      inactive = meminfo.get("Inactive(file)");
    }
    long ws = Math.max(0, usage - (inactive == null ? 0 : inactive));
    return new Summary.MemoryStats(now, Math.max(0, capacity - ws), usage, ws, rss);
  }

  private Summary.FsStats fs(Instant now, Path path) {
    try {
      Filesystems.Usage u = Filesystems.usage(path);
      return new Summary.FsStats(
          now,
          u.availableBytes(),
          u.capacityBytes(),
          u.usedBytes(),
          u.inodesFree(),
          u.inodes(),
          u.inodesUsed());
    } catch (IOException e) {
      warnOnce("fs " + path, "no filesystem figures: " + e.getMessage());
      return null;
    }
  }

  private Summary.RlimitStats rlimit(Instant now) {
    OptionalLong max = Cgroups.readLong(paths.procRoot().resolve("sys/kernel/pid_max"));
    Long tasks = null;
    Path loadavg = paths.procRoot().resolve("loadavg");
    try {
      String[] f = KernelFiles.read(loadavg).trim().split("\\s+");
      tasks = Long.parseLong(f[3].substring(f[3].indexOf('/') + 1));
    } catch (IOException | RuntimeException e) {
      warnOnce("loadavg", "cannot count processes from " + loadavg + ": " + e.getMessage());
    }
    if (max.isEmpty()) {
      warnOnce("pid_max", "cannot read " + paths.procRoot().resolve("sys/kernel/pid_max"));
    }
    if (max.isEmpty() && tasks == null) {
      return null;
    }
    return new Summary.RlimitStats(now, max.isPresent() ? max.getAsLong() : null, tasks);
  }

  private List<Summary.PodStats> pods(Instant now, boolean processes) {
    List<Summary.PodStats> out = new ArrayList<>();
    Map<String, Path> pods;
    try {
      pods = cgroups.podCgroups();
    } catch (UncheckedIOException e) {
      warnOnce("pods", "cannot list pod cgroups: " + e.getMessage());
      return out;
    }
    for (Map.Entry<String, Path> e : pods.entrySet()) {
      Cgroups.Memory m = cgroups.podMemory(e.getValue());
      Long count = null;
      try {
        count = processes ? (long) processWalker.processes(e.getValue()).size() : null;
      } catch (UncheckedIOException | IllegalStateException ex) {
        warnOnce("procs " + e.getKey(), ex.getMessage());
      }
      out.add(
          new Summary.PodStats(
              new Summary.PodReference(null, null, e.getKey()),
              List.of(),
              m.usage() == null
                  ? null
                  : new Summary.MemoryStats(now, null, m.usage(), m.workingSet(), m.rss()),
              List.of(),
              null,
              count == null ? null : new Summary.ProcessStats(count)));
    }
    return out;
  }

  private void warnOnce(String key, String message) {
    if (warned.add(key)) {
      LOG.warn(message);
    }
  }
}
