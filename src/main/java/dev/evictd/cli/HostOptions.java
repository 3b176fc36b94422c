package dev.evictd.cli;

import dev.evictd.linux.HostPaths;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * Where this host keeps cgroups, /proc and the kubelet's and runtime's data: the options of stats
 * and doctor.
 */
final class HostOptions {
  @Option(
      names = "--cgroup-root",
      paramLabel = "DIR",
      defaultValue = "/sys/fs/cgroup",
      description = "cgroup filesystem root (default: ${DEFAULT-VALUE}).")
  Path cgroupRoot;

  @Option(
      names = "--proc-root",
      paramLabel = "DIR",
      defaultValue = "/proc",
      description = "proc filesystem root (default: ${DEFAULT-VALUE}).")
  Path procRoot;

  @Option(
      names = "--kubelet-root-dir",
      paramLabel = "DIR",
      defaultValue = "/var/lib/kubelet",
      description =
          "kubelet root directory, measured as nodefs; / when missing (default: ${DEFAULT-VALUE}).")
  Path kubeletRootDir;

  @Option(
      names = "--runtime-root",
      paramLabel = "DIR",
      defaultValue = "/var/lib/containerd",
      description =
          "container runtime root, measured as imagefs; / when missing (default: ${DEFAULT-VALUE}).")
  Path runtimeRoot;

  @Option(
      names = "--pods-cgroup",
      paramLabel = "NAME",
      defaultValue = "kubepods",
      description = "name of the cgroup holding the pods (default: ${DEFAULT-VALUE}).")
  String podsCgroup;

  HostPaths paths() {
    return new HostPaths(cgroupRoot, procRoot, kubeletRootDir, runtimeRoot, podsCgroup);
  }
}
