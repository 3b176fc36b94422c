package dev.evictd.linux;

import dev.evictd.api.ConfigException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;

/**
 * The memory cgroup hierarchy of a host, below a cgroup filesystem root that is a parameter ({@code
 * /sys/fs/cgroup} on a real host, a fixture tree in tests). Finds where the memory controller lives
 * (cgroup v1 {@code <root>/memory}, v2 {@code <root>} or the hybrid {@code <root>/unified}), the
 * pods cgroup and the pod cgroups below it, and reads their memory figures and processes.
 *
 * <p>Pod cgroups are found under both drivers the kubelet supports: cgroupfs ({@code
 * kubepods/pod<uid>}, {@code kubepods/burstable/pod<uid>}, {@code kubepods/besteffort/pod<uid>};
 * Guaranteed pods sit directly under kubepods) and systemd ({@code
 * kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_with_underscores>.slice} and
 * so on).
 */
public final class Cgroups {
  /** The default name of the cgroup holding every pod. */
  public static final String DEFAULT_PODS_CGROUP = "kubepods";

  /** The cgroup version that owns the memory controller. */
  public enum Version {
    V1,
    V2;

    @Override
    public String toString() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /**
   * Memory figures of one cgroup, in bytes; a null field was not readable.
   *
   * @param usage {@code memory.usage_in_bytes} (v1) or {@code memory.current} (v2; at the v2 root,
   *     where there is none, {@code anon + file} of memory.stat, as runc computes it)
   * @param inactiveFile {@code total_inactive_file} (v1) or {@code inactive_file} (v2) of
   *     memory.stat
   * @param rss {@code total_rss} (v1) or {@code anon} (v2) of memory.stat
   * @param limit {@code memory.limit_in_bytes} (v1) or {@code memory.max} (v2), null when unlimited
   */
  public record Memory(Long usage, Long inactiveFile, Long rss, Long limit) {
    /** usage − inactive_file, floored at zero (cAdvisor's working set), or null without usage. */
    public Long workingSet() {
      if (usage == null) {
        return null;
      }
      long inactive = inactiveFile == null ? 0 : inactiveFile;
      return usage > inactive ? usage - inactive : 0L;
    }
  }

  /** The naming the kubelet's cgroup driver gives the pods cgroup and the pod cgroups below it. */
  public enum Driver {
    /** {@code kubepods/burstable/pod<uid>}. */
    CGROUPFS,
    /**
     * {@code kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_with_underscores>
     * .slice}.
     */
    SYSTEMD;

    @Override
    public String toString() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  private final Path root;
  private final Version version;
  private final Path memoryRoot;
  private final String podsName;
  private final Path pods;

  private Cgroups(Path root, Version version, Path memoryRoot, String podsName) {
    this.root = root;
    this.version = version;
    this.memoryRoot = memoryRoot;
    this.podsName = podsName;
    this.pods =
        memoryRoot == null
            ? null
            : PodCgroupNames.findPods(
                memoryRoot, PodCgroupNames.relativePods(root, memoryRoot, podsName));
  }

  /**
   * Finds the memory controller below {@code root}; pods live in the cgroup named {@code
   * podsCgroup}: a name ({@code kubepods}, {@code kubepods.slice}), a cgroup path ({@code
   * /kubepods}, {@code /kubelet.slice/kubelet-kubepods.slice}) or an absolute path below the memory
   * controller ({@code /sys/fs/cgroup/kubepods.slice}). Either driver's form finds the other's
   * directory.
   *
   * @throws ConfigException when {@code podsCgroup} cannot name a cgroup below the memory
   *     controller ({@code ..}, a path elsewhere in the cgroup filesystem)
   */
  public static Cgroups detect(Path root, String podsCgroup) {
    String pods = podsCgroup == null || podsCgroup.isBlank() ? DEFAULT_PODS_CGROUP : podsCgroup;
    if (hasV2Memory(root)) {
      return new Cgroups(root, Version.V2, root, pods);
    }
    Path v1 = root.resolve("memory");
    if (Files.isRegularFile(v1.resolve("memory.usage_in_bytes"))) {
      return new Cgroups(root, Version.V1, v1, pods);
    }
    Path unified = root.resolve("unified");
    if (hasV2Memory(unified)) {
      return new Cgroups(root, Version.V2, unified, pods);
    }
    return new Cgroups(root, null, null, pods);
  }

  private static boolean hasV2Memory(Path dir) {
    Path controllers = dir.resolve("cgroup.controllers");
    if (!Files.isRegularFile(controllers)) {
      return false;
    }
    try {
      for (String c : KernelFiles.read(controllers).trim().split("\\s+")) {
        if (c.equals("memory")) {
          return true;
        }
      }
    } catch (IOException e) {
      return false;
    }
    return false;
  }

  /** The cgroup filesystem root given. */
  public Path root() {
    return root;
  }

  /** The version owning the memory controller, empty when no memory controller was found. */
  public Optional<Version> version() {
    return Optional.ofNullable(version);
  }

  /** The root of the hierarchy holding the memory controller, empty when none was found. */
  public Optional<Path> memoryRoot() {
    return Optional.ofNullable(memoryRoot);
  }

  /** The configured name of the pods cgroup (e.g. {@code kubepods}). */
  public String podsCgroupName() {
    return podsName;
  }

  /** One line for logs and the doctor: version and where the memory controller is. */
  public String describe() {
    if (version == null) {
      return "no memory controller under " + root;
    }
    return "cgroup " + version + ", memory controller at " + memoryRoot;
  }

  /** The pods cgroup ({@code kubepods} or {@code kubepods.slice}) when it exists. */
  public Optional<Path> podsCgroup() {
    return Optional.ofNullable(pods);
  }

  /**
   * The kubelet cgroup driver whose naming the pods cgroup has ({@code .slice}: systemd), empty
   * when there is no pods cgroup.
   */
  public Optional<Driver> driver() {
    return pods == null
        ? Optional.empty()
        : Optional.of(
            pods.getFileName().toString().endsWith(".slice") ? Driver.SYSTEMD : Driver.CGROUPFS);
  }

  /**
   * Every pod cgroup below the pods cgroup, by pod UID (dashes restored from systemd's
   * underscores).
   */
  public Map<String, Path> podCgroups() {
    Map<String, Path> out = new LinkedHashMap<>();
    if (pods == null) {
      return out;
    }
    boolean systemd = driver().orElseThrow() == Driver.SYSTEMD;
    for (Path parent : PodCgroupNames.podParents(pods, systemd)) {
      if (!Files.isDirectory(parent)) {
        continue;
      }
      try (DirectoryStream<Path> ds = Files.newDirectoryStream(parent, Files::isDirectory)) {
        for (Path p : ds) {
          String uid = podUid(p.getFileName().toString(), systemd);
          if (uid != null) {
            out.putIfAbsent(uid, p);
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("cannot list " + parent + ": " + e.getMessage(), e);
      }
    }
    return out;
  }

  /** The pod UID a cgroup directory name stands for, or null when it is not a pod cgroup. */
  static String podUid(String name, boolean systemd) {
    return PodCgroupNames.podUid(name, systemd);
  }

  /** The cgroup of the pod with {@code uid}, when it exists under either driver's naming. */
  public Optional<Path> podCgroup(String uid) {
    if (pods == null || uid == null || uid.isBlank() || uid.contains("/") || uid.contains("..")) {
      return Optional.empty();
    }
    boolean systemd = driver().orElseThrow() == Driver.SYSTEMD;
    return PodCgroupNames.podCgroupCandidates(pods, systemd, uid).stream()
        .filter(Files::isDirectory)
        .findFirst();
  }

  /**
   * Reads the memory figures of the memory cgroup {@code dir} (an absolute path below {@link
   * #memoryRoot()}).
   */
  public Memory memory(Path dir) {
    return memory(dir, true);
  }

  /**
   * The memory figures of a pod cgroup, without its limit ({@link Memory#limit()} null): what a
   * pod's statistics hold. A sync reads every pod cgroup; the limit file was a fifth of that.
   */
  public Memory podMemory(Path dir) {
    return memory(dir, false);
  }

  private static final String[] V1_KEYS = {
    "total_inactive_file", "inactive_file", "total_rss", "rss"
  };
  private static final String[] V2_KEYS = {"inactive_file", "anon", "file"};

  /** One array per thread for the selected memory.stat figures. */
  private static final ThreadLocal<long[]> STAT = ThreadLocal.withInitial(() -> new long[4]);

  private static Long figure(long v) {
    return v == KernelFigures.MISSING ? null : v;
  }

  private static Long either(long first, long second) {
    return figure(first != KernelFigures.MISSING ? first : second);
  }

  private Memory memory(Path dir, boolean withLimit) {
    if (version == null) {
      return new Memory(null, null, null, null);
    }
    long[] stat = STAT.get();
    if (version == Version.V1) {
      KernelFigures.readSelected(dir.resolve("memory.stat"), V1_KEYS, stat);
      Long inactive = either(stat[0], stat[1]);
      Long rss = either(stat[2], stat[3]);
      Long usage =
          readLong(dir.resolve("memory.usage_in_bytes")).stream().boxed().findFirst().orElse(null);
      return new Memory(
          usage, inactive, rss, withLimit ? limit(dir, "memory.limit_in_bytes") : null);
    }
    KernelFigures.readSelected(dir.resolve("memory.stat"), V2_KEYS, stat);
    Long inactive = figure(stat[0]);
    Long anon = figure(stat[1]);
    Long file = figure(stat[2]);
    Long usage = readLong(dir.resolve("memory.current")).stream().boxed().findFirst().orElse(null);
    if (usage == null && dir.equals(memoryRoot) && anon != null && file != null) {
      usage = anon + file;
    }
    return new Memory(usage, inactive, anon, withLimit ? limit(dir, "memory.max") : null);
  }

  private static Long limit(Path dir, String name) {
    OptionalLong limit = KernelFigures.readLimit(dir.resolve(name));
    return limit.isPresent() ? limit.getAsLong() : null;
  }

  /** The processes in {@code dir} and every cgroup below it ({@code cgroup.procs}), sorted. */
  public static Set<Integer> processes(Path dir) {
    return new ProcessWalker().processes(dir);
  }

  /**
   * Collects the processes of a cgroup subtree without a {@code stat} of every control file:
   * listing a cgroup directory returns dozens of control files and a {@code stat} on cgroupfs costs
   * microseconds each (a walk of 110 pod cgroups took about 45 ms this way, most of an event-driven
   * sync). Two exact shortcuts: a directory's link count is 2 plus its number of subdirectories
   * (cgroupfs, tmpfs, ext4), so a leaf is not listed at all and a listing stops once every
   * subdirectory is found; and a name found to be a regular file is remembered, since a cgroup
   * cannot have a child named like one of the control files every cgroup of the hierarchy has.
   * Where the link count is not maintained (it reads below 2), every entry is looked at. One walker
   * per hierarchy: its memory of control-file names is bounded.
   */
  public static final class ProcessWalker {
    private static final int MAX_REMEMBERED = 4096;
    private final Set<String> files = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * The processes in {@code dir} and every cgroup below it, sorted; empty when {@code dir} is
     * gone.
     */
    public Set<Integer> processes(Path dir) {
      Set<Integer> pids = new TreeSet<>();
      if (!Files.isDirectory(dir)) {
        return pids;
      }
      try {
        collect(dir, pids);
      } catch (NoSuchFileException e) {
        // the cgroup went away while walking: its processes are gone too
      } catch (IOException e) {
        throw new UncheckedIOException("cannot walk " + dir + ": " + e.getMessage(), e);
      }
      return pids;
    }

    private void collect(Path dir, Set<Integer> pids) throws IOException {
      Path procs = dir.resolve("cgroup.procs");
      try {
        for (String line : KernelFiles.read(procs).lines().toList()) {
          String t = line.trim();
          if (!t.isEmpty()) {
            pids.add(Integer.parseInt(t));
          }
        }
      } catch (NoSuchFileException e) {
        if (!Files.isDirectory(dir)) {
          return; // removed while walking
        }
      } catch (NumberFormatException e) {
        throw new IllegalStateException("not a pid list: " + procs + ": " + e.getMessage());
      }
      int subdirectories = subdirectories(dir);
      if (subdirectories == 0) {
        return;
      }
      int found = 0;
      try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
        for (Path p : ds) {
          String name = p.getFileName().toString();
          if (files.contains(name)) {
            continue;
          }
          java.nio.file.attribute.BasicFileAttributes a;
          try {
            a =
                Files.readAttributes(
                    p,
                    java.nio.file.attribute.BasicFileAttributes.class,
                    java.nio.file.LinkOption.NOFOLLOW_LINKS);
          } catch (NoSuchFileException e) {
            continue;
          }
          if (a.isDirectory()) {
            collect(p, pids);
            if (++found == subdirectories) {
              return;
            }
          } else if (a.isRegularFile() && files.size() < MAX_REMEMBERED) {
            files.add(name);
          }
        }
      }
    }

    /** Subdirectories from the link count, or -1 when the file system does not keep it. */
    private static int subdirectories(Path dir) {
      try {
        Object n = Files.getAttribute(dir, "unix:nlink", java.nio.file.LinkOption.NOFOLLOW_LINKS);
        int links = n instanceof Integer i ? i : -1;
        return links >= 2 ? links - 2 : -1;
      } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
        return -1;
      }
    }
  }

  /**
   * {@code key value} lines (memory.stat, /proc/meminfo without units) as a map; empty when
   * unreadable ({@link KernelFigures#readKeyed}).
   */
  static Map<String, Long> readKeyed(Path file) {
    return KernelFigures.readKeyed(file);
  }

  /** A file holding one integer; empty when missing or not an integer. */
  static OptionalLong readLong(Path file) {
    return KernelFigures.readLong(file);
  }
}
