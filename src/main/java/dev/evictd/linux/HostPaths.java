package dev.evictd.linux;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Where this host keeps what evictd reads: the cgroup filesystem, /proc, the kubelet's root
 * directory (nodefs) and the container runtime's root (imagefs), and the name of the pods cgroup.
 * Every path is a parameter so tests run on fixture trees.
 */
public record HostPaths(
    Path cgroupRoot, Path procRoot, Path kubeletRootDir, Path runtimeRootDir, String podsCgroup) {
  public static final Path DEFAULT_CGROUP_ROOT = Path.of("/sys/fs/cgroup");
  public static final Path DEFAULT_PROC_ROOT = Path.of("/proc");
  public static final Path DEFAULT_KUBELET_ROOT = Path.of("/var/lib/kubelet");
  public static final Path DEFAULT_RUNTIME_ROOT = Path.of("/var/lib/containerd");

  public HostPaths {
    cgroupRoot = cgroupRoot == null ? DEFAULT_CGROUP_ROOT : cgroupRoot;
    procRoot = procRoot == null ? DEFAULT_PROC_ROOT : procRoot;
    kubeletRootDir = kubeletRootDir == null ? DEFAULT_KUBELET_ROOT : kubeletRootDir;
    runtimeRootDir = runtimeRootDir == null ? DEFAULT_RUNTIME_ROOT : runtimeRootDir;
    podsCgroup =
        podsCgroup == null || podsCgroup.isBlank() ? Cgroups.DEFAULT_PODS_CGROUP : podsCgroup;
  }

  /** The defaults of a real node. */
  public static HostPaths defaults() {
    return new HostPaths(null, null, null, null, null);
  }

  /**
   * The same paths with a missing kubelet or runtime root replaced by {@code /}; see {@link
   * #fallbackWarnings()}.
   */
  public HostPaths withFallbacks() {
    return new HostPaths(
        cgroupRoot,
        procRoot,
        Files.isDirectory(kubeletRootDir) ? kubeletRootDir : Path.of("/"),
        Files.isDirectory(runtimeRootDir) ? runtimeRootDir : Path.of("/"),
        podsCgroup);
  }

  /** One warning per filesystem path that does not exist and falls back to {@code /}. */
  public List<String> fallbackWarnings() {
    List<String> out = new ArrayList<>();
    if (!Files.isDirectory(kubeletRootDir)) {
      out.add("kubelet root dir " + kubeletRootDir + " does not exist: nodefs is measured on /");
    }
    if (!Files.isDirectory(runtimeRootDir)) {
      out.add(
          "container runtime root " + runtimeRootDir + " does not exist: imagefs is measured on /");
    }
    return out;
  }
}
