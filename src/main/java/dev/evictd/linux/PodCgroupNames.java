package dev.evictd.linux;

import dev.evictd.api.ConfigException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * How the kubelet's cgroup drivers name the pods cgroup and the pod cgroups below it, for {@link
 * Cgroups}: cgroupfs ({@code kubepods/burstable/pod<uid>}) and systemd ({@code
 * kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_with_underscores>.slice}).
 * Naming only: the one look at the file system is which of the pods cgroup's names exists.
 */
final class PodCgroupNames {
  private static final List<String> QOS_CLASSES = List.of("burstable", "besteffort");

  private PodCgroupNames() {}

  /**
   * The pods cgroup as a path relative to the memory controller's root; refuses what is not one.
   */
  static String relativePods(Path root, Path memoryRoot, String name) {
    String rel = name.trim();
    Path asPath;
    try {
      asPath = Path.of(rel).normalize();
    } catch (java.nio.file.InvalidPathException e) {
      throw new ConfigException("--pods-cgroup " + name + ": not a cgroup path: " + e.getReason());
    }
    if (rel.startsWith("/") && asPath.startsWith(memoryRoot) && !asPath.equals(memoryRoot)) {
      rel = memoryRoot.relativize(asPath).toString();
    } else if (rel.startsWith("/")
        && (asPath.startsWith(root) || asPath.startsWith(HostPaths.DEFAULT_CGROUP_ROOT))) {
      throw new ConfigException(
          "--pods-cgroup "
              + name
              + ": not below the memory controller at "
              + memoryRoot
              + " (give the cgroup name, e.g. kubepods or kubepods.slice)");
    }
    while (rel.startsWith("/")) {
      rel = rel.substring(1);
    }
    while (rel.endsWith("/")) {
      rel = rel.substring(0, rel.length() - 1);
    }
    if (rel.isEmpty()) {
      throw new ConfigException(
          "--pods-cgroup " + name + ": names the root cgroup, not the cgroup holding the pods");
    }
    for (String part : rel.split("/")) {
      if (part.isEmpty() || part.equals(".") || part.equals("..")) {
        throw new ConfigException(
            "--pods-cgroup " + name + ": \"" + part + "\" is not a cgroup name");
      }
    }
    return rel;
  }

  /**
   * The pods cgroup directory: the path as given, with or without {@code .slice} on its last part,
   * or in the systemd driver's expansion of a cgroupfs path ({@code a/b} → {@code
   * a.slice/a-b.slice}, as the kubelet names it).
   */
  static Path findPods(Path memoryRoot, String rel) {
    List<String> candidates = new ArrayList<>();
    candidates.add(rel);
    if (rel.endsWith(".slice")) {
      candidates.add(rel.substring(0, rel.length() - ".slice".length()));
    } else {
      candidates.add(rel + ".slice");
      StringBuilder sb = new StringBuilder();
      String prefix = "";
      for (String part : rel.split("/")) {
        prefix = prefix.isEmpty() ? part : prefix + "-" + part;
        sb.append(sb.length() == 0 ? "" : "/").append(prefix).append(".slice");
      }
      candidates.add(sb.toString());
    }
    for (String c : candidates) {
      Path p = memoryRoot.resolve(c);
      if (Files.isDirectory(p)) {
        return p;
      }
    }
    return null;
  }

  /**
   * The prefix systemd gives the slices below the pods slice {@code pods}: the slice's unit name
   * without {@code .slice} ({@code kubepods} for {@code kubepods.slice}).
   */
  private static String slicePrefix(Path pods) {
    String name = pods.getFileName().toString();
    return name.substring(0, name.length() - ".slice".length());
  }

  /**
   * The cgroups directly holding pod cgroups: the pods cgroup {@code pods} and its QoS-class
   * children.
   */
  static List<Path> podParents(Path pods, boolean systemd) {
    List<Path> parents = new ArrayList<>();
    parents.add(pods);
    for (String qos : QOS_CLASSES) {
      parents.add(
          systemd ? pods.resolve(slicePrefix(pods) + "-" + qos + ".slice") : pods.resolve(qos));
    }
    return parents;
  }

  /** The pod UID a cgroup directory name stands for, or null when it is not a pod cgroup. */
  static String podUid(String name, boolean systemd) {
    if (!systemd) {
      return name.startsWith("pod") && name.length() > 3 ? name.substring(3) : null;
    }
    if (!name.endsWith(".slice")) {
      return null;
    }
    int at = name.lastIndexOf("-pod");
    if (at < 0) {
      return null;
    }
    String uid = name.substring(at + 4, name.length() - ".slice".length());
    return uid.isEmpty() ? null : uid.replace('_', '-');
  }

  /**
   * Where the cgroup of the pod with {@code uid} can be below the pods cgroup {@code pods}, in
   * either driver's naming ({@code uid} is a checked name, not a path).
   */
  static List<Path> podCgroupCandidates(Path pods, boolean systemd, String uid) {
    List<Path> candidates = new ArrayList<>();
    List<Path> parents = podParents(pods, systemd);
    if (systemd) {
      String u = uid.replace('-', '_');
      candidates.add(pods.resolve(slicePrefix(pods) + "-pod" + u + ".slice"));
      for (int i = 0; i < QOS_CLASSES.size(); i++) {
        candidates.add(
            parents
                .get(i + 1)
                .resolve(slicePrefix(pods) + "-" + QOS_CLASSES.get(i) + "-pod" + u + ".slice"));
      }
    } else {
      for (Path parent : parents) {
        candidates.add(parent.resolve("pod" + uid));
      }
    }
    return candidates;
  }
}
