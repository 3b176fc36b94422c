package dev.evictd.linux;

import dev.evictd.api.MemcgThresholdCrossed;
import dev.evictd.api.PressureResource;
import dev.evictd.api.Signal;
import dev.evictd.stats.Summary;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Checks what evictd needs from this node: the native binding, the cgroup version and memory
 * controller, that memcg threshold notifications really arrive (on a temporary child cgroup that a
 * process is driven across), that PSI is there and takes a trigger, that the configured paths can
 * be read, and that host statistics can be built.
 */
public final class NodeDoctor {
  /** How a check ended. */
  public enum Status {
    OK,
    WARN,
    FAIL;

    @Override
    public String toString() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** One check: what was checked, how it ended and a one-line detail. */
  public record Check(String name, Status status, String detail) {}

  /**
   * The trigger the PSI check writes: 150 ms of stall in a 2 s window (a window every host
   * accepts).
   */
  public static final String PROBE_TRIGGER = "some 150000 2000000";

  private static final String MEMCG = "memcg-notifier";
  private static final long PROBE_MARGIN_BYTES = 4L << 20;
  private static final long PROBE_WRITE_BYTES = 16L << 20;
  private static final long PROBE_WAIT_MILLIS = 5000;

  private final HostPaths paths;
  private final Clock clock;
  private final Path shm;
  private final java.util.Map<String, String> listedPods;

  /**
   * A doctor for the host seen through {@code paths}; the memcg probe writes its tmpfs file in
   * /dev/shm.
   */
  public NodeDoctor(HostPaths paths, Clock clock) {
    this(paths, clock, Path.of("/dev/shm"));
  }

  NodeDoctor(HostPaths paths, Clock clock, Path shm) {
    this(paths, clock, shm, null);
  }

  private NodeDoctor(
      HostPaths paths, Clock clock, Path shm, java.util.Map<String, String> listedPods) {
    this.paths = paths;
    this.clock = clock;
    this.shm = shm;
    this.listedPods = listedPods;
  }

  /**
   * The same doctor, also checking that each of {@code runningPods} (pod UID → {@code
   * namespace/name}, the running pods the API lists for this node) has a pod cgroup.
   */
  public NodeDoctor withPods(java.util.Map<String, String> runningPods) {
    return new NodeDoctor(paths, clock, shm, java.util.Map.copyOf(runningPods));
  }

  /** Runs every check, in order; never throws. */
  public List<Check> run() {
    List<Check> out = new ArrayList<>();
    out.add(
        Native.available()
            ? new Check("native", Status.OK, "libc bound through jnr-ffi")
            : new Check("native", Status.FAIL, Native.unavailableReason()));
    Cgroups cgroups;
    try {
      cgroups = Cgroups.detect(paths.cgroupRoot(), paths.podsCgroup());
    } catch (dev.evictd.api.EvictdException e) {
      out.add(new Check("pods-cgroup", Status.FAIL, e.getMessage()));
      return out;
    }
    out.add(
        new Check(
            "cgroup", cgroups.version().isPresent() ? Status.OK : Status.FAIL, cgroups.describe()));
    out.add(memcgNotifier(cgroups));
    out.add(psi());
    out.addAll(pathChecks(cgroups));
    out.add(stats());
    return out;
  }

  /** Whether no check failed. */
  public static boolean passed(List<Check> checks) {
    return checks.stream().noneMatch(c -> c.status() == Status.FAIL);
  }

  private Check memcgNotifier(Cgroups cgroups) {
    String name = MEMCG;
    if (cgroups.version().isEmpty()) {
      return new Check(name, Status.FAIL, "no memory controller: " + cgroups.describe());
    }
    if (cgroups.version().get() == Cgroups.Version.V2) {
      return v2EventSources(cgroups);
    }
    if (!Native.available()) {
      return new Check(name, Status.FAIL, Native.unavailableReason());
    }
    if (!Files.isDirectory(shm)) {
      return new Check(name, Status.WARN, "cannot drive a probe process: no tmpfs at " + shm);
    }
    try {
      return probe(cgroups.memoryRoot().orElseThrow());
    } catch (IOException | RuntimeException e) {
      return new Check(name, Status.FAIL, e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Check(name, Status.FAIL, "interrupted");
    }
  }

  /**
   * Cgroup v2 has no memory usage thresholds (no {@code cgroup.event_control}); what the agent
   * listens to instead: PSI triggers on the root's and the pods cgroup's {@code memory.pressure},
   * the pods cgroup's {@code memory.events}, and the adaptive poll of the usage files. Warns when
   * one of them does not work, fails only when the poll cannot read its files.
   */
  private Check v2EventSources(Cgroups cgroups) {
    List<String> parts = new ArrayList<>();
    boolean degraded = false;
    NotifierFactory.Spec spec =
        new NotifierFactory.Spec(List.of(), cgroups, paths, false, null, true, null);
    PsiTrigger trigger = PsiTrigger.parse(LinuxNotifiers.DEFAULT_V2_TRIGGER);
    for (Path f : LinuxNotifiers.psiFiles(spec, cgroups, true)) {
      try (PsiTriggerNotifier n =
          new PsiTriggerNotifier(f, PressureResource.MEMORY, trigger, x -> {}, clock)) {
        if (n.available()) {
          parts.add("PSI trigger \"" + trigger + "\" accepted on " + f);
        } else {
          degraded = true;
          parts.add("PSI trigger refused on " + f + ": " + n.unavailableReason());
        }
      }
    }
    Optional<Path> pods = cgroups.podsCgroup();
    if (pods.isEmpty()) {
      degraded = true;
      parts.add("no pods cgroup: no memory.events to watch");
    } else {
      Path events = pods.get().resolve(MemoryEventsNotifier.FILE);
      long[] c = MemoryEventsNotifier.counters(Cgroups.readKeyed(events));
      if (c == null) {
        degraded = true;
        parts.add(events + " not readable");
      } else {
        parts.add(events + " readable (high " + c[0] + ", max " + c[1] + ", oom " + c[2] + ")");
      }
    }
    List<String> files = new ArrayList<>();
    for (Signal s : List.of(Signal.MEMORY_AVAILABLE, Signal.ALLOCATABLE_MEMORY_AVAILABLE)) {
      if (s == Signal.ALLOCATABLE_MEMORY_AVAILABLE && pods.isEmpty()) {
        continue;
      }
      try (UsageFile f = MemoryPoll.usageFile(cgroups, s)) {
        f.read();
        files.add(f.path().toString());
      } catch (IOException e) {
        return new Check(
            "event-sources", Status.FAIL, "the adaptive poll cannot read usage: " + e.getMessage());
      }
    }
    parts.add(
        "adaptive poll on (default): reads "
            + String.join(" and ", files)
            + " every "
            + MemoryPoll.MIN_INTERVAL.toMillis()
            + " ms near a threshold to the interval far from one");
    return new Check(
        "event-sources",
        degraded ? Status.WARN : Status.OK,
        "cgroup v2 (no memcg thresholds): " + String.join("; ", parts));
  }

  /**
   * Registers a threshold 4 MiB above a fresh child cgroup's usage, has a process in it write 16
   * MiB to tmpfs (tmpfs pages are charged to the writer's memcg), expects UP, deletes the file,
   * expects DOWN; removes everything.
   */
  private Check probe(Path memoryRoot) throws IOException, InterruptedException {
    String id =
        "evictd-doctor-"
            + ProcessHandle.current().pid()
            + "-"
            + Long.toHexString(ThreadLocalRandom.current().nextLong());
    Path cg = memoryRoot.resolve(id);
    Path file = shm.resolve(id);
    LinkedBlockingQueue<MemcgThresholdCrossed> events = new LinkedBlockingQueue<>();
    Files.createDirectory(cg);
    Process p = null;
    try (MemcgThresholdNotifier n =
        MemcgThresholdNotifier.onCgroup(Signal.MEMORY_AVAILABLE, cg, events::add, clock)) {
      if (!n.available()) {
        return new Check(MEMCG, Status.FAIL, n.unavailableReason());
      }
      long usage = Cgroups.readLong(cg.resolve(MemcgThresholdNotifier.USAGE_FILE)).orElse(0);
      long threshold = usage + PROBE_MARGIN_BYTES;
      if (!n.register(threshold)) {
        return new Check(MEMCG, Status.FAIL, n.unavailableReason());
      }
      long t0 = System.nanoTime();
      p =
          new ProcessBuilder(
                  "sh",
                  "-c",
                  "echo $$ > \"$1/cgroup.procs\" && exec head -c \"$3\" /dev/zero > \"$2\"",
                  "sh",
                  cg.toString(),
                  file.toString(),
                  Long.toString(PROBE_WRITE_BYTES))
              .redirectErrorStream(true)
              .start();
      if (!p.waitFor(PROBE_WAIT_MILLIS, TimeUnit.MILLISECONDS) || p.exitValue() != 0) {
        String output = new String(p.getInputStream().readAllBytes()).trim();
        return new Check(MEMCG, Status.FAIL, "probe process in " + cg + " failed: " + output);
      }
      MemcgThresholdCrossed up = events.poll(PROBE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
      long upMillis = (System.nanoTime() - t0) / 1_000_000;
      if (up == null || up.direction() != MemcgThresholdCrossed.Direction.UP) {
        String got = up == null ? "" : " (got " + up.direction() + ")";
        return new Check(
            MEMCG, Status.FAIL, "no UP event within 5 s after writing 16 MiB in " + cg + got);
      }
      long t1 = System.nanoTime();
      Files.delete(file);
      MemcgThresholdCrossed down = events.poll(PROBE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
      while (down != null && down.direction() != MemcgThresholdCrossed.Direction.DOWN) {
        down = events.poll(PROBE_WAIT_MILLIS, TimeUnit.MILLISECONDS);
      }
      long downMillis = (System.nanoTime() - t1) / 1_000_000;
      if (down == null) {
        return new Check(
            MEMCG,
            Status.FAIL,
            "no DOWN event within 5 s after freeing the probe's memory in " + cg);
      }
      return new Check(
          MEMCG,
          Status.OK,
          "threshold on "
              + memoryRoot.relativize(cg)
              + " crossed up ("
              + upMillis
              + " ms incl. process start) and down ("
              + downMillis
              + " ms)");
    } finally {
      if (p != null) {
        p.destroyForcibly();
        p.waitFor(2, TimeUnit.SECONDS);
      }
      Files.deleteIfExists(file);
      removeCgroup(cg);
    }
  }

  /** rmdir of a cgroup, retried briefly while its last process is being reaped. */
  static void removeCgroup(Path cg) throws IOException, InterruptedException {
    for (int i = 0; ; i++) {
      try {
        Files.deleteIfExists(cg);
        return;
      } catch (IOException e) {
        if (i >= 50) {
          throw new IOException("cannot remove cgroup " + cg + ": " + e.getMessage(), e);
        }
        Thread.sleep(20);
      }
    }
  }

  private Check psi() {
    Path f = PsiReader.file(paths.procRoot(), PressureResource.MEMORY);
    if (!Files.isReadable(f)) {
      return new Check(
          "psi",
          Status.WARN,
          f + " does not exist (no PSI): the agent polls and PSI rules never fire");
    }
    String averages;
    try {
      var obs = PsiReader.parse(PressureResource.MEMORY, KernelFiles.read(f), clock.instant());
      averages = obs.isEmpty() ? "no lines" : "some avg10=" + obs.get(0).avg10();
    } catch (IOException | RuntimeException e) {
      return new Check("psi", Status.FAIL, "cannot read " + f + ": " + e.getMessage());
    }
    try (PsiTriggerNotifier n =
        new PsiTriggerNotifier(
            f, PressureResource.MEMORY, PsiTrigger.parse(PROBE_TRIGGER), s -> {}, clock)) {
      if (!n.available()) {
        return new Check(
            "psi",
            Status.WARN,
            "trigger \"" + PROBE_TRIGGER + "\" refused: " + n.unavailableReason());
      }
    }
    return new Check(
        "psi",
        Status.OK,
        f + " readable (" + averages + "), trigger \"" + PROBE_TRIGGER + "\" accepted");
  }

  private List<Check> pathChecks(Cgroups cgroups) {
    List<Check> out = new ArrayList<>();
    out.add(readable("path cgroup-root", paths.cgroupRoot(), Status.FAIL));
    out.add(readable("path proc-root", paths.procRoot(), Status.FAIL));
    out.add(fsRoot("path kubelet-root-dir", paths.kubeletRootDir(), "nodefs"));
    out.add(fsRoot("path runtime-root", paths.runtimeRootDir(), "imagefs"));
    out.add(
        cgroups
            .podsCgroup()
            .map(
                p ->
                    new Check(
                        "pods-cgroup",
                        Status.OK,
                        p
                            + " ("
                            + cgroups.driver().orElseThrow()
                            + " driver, "
                            + cgroups.podCgroups().size()
                            + " pod cgroups)"))
            .orElseGet(
                () ->
                    new Check(
                        "pods-cgroup",
                        Status.WARN,
                        "no "
                            + cgroups.podsCgroupName()
                            + " cgroup: allocatableMemory.available is not observed"
                            + " and the kill method finds no pods")));
    if (listedPods != null) {
      out.add(listedPods(cgroups));
    }
    return out;
  }

  /** Whether every running pod the API lists has a cgroup (a pod without one escapes kill). */
  private Check listedPods(Cgroups cgroups) {
    java.util.Map<String, Path> found;
    try {
      found = cgroups.podCgroups();
    } catch (RuntimeException e) {
      return new Check("pod-cgroups", Status.FAIL, e.getMessage());
    }
    List<String> missing = new ArrayList<>();
    for (var e : new java.util.TreeMap<>(listedPods).entrySet()) {
      if (!found.containsKey(e.getKey())) {
        missing.add(e.getValue() + " (uid " + e.getKey() + ")");
      }
    }
    if (missing.isEmpty()) {
      return new Check(
          "pod-cgroups",
          Status.OK,
          "every one of the " + listedPods.size() + " running pods listed has a pod cgroup");
    }
    int shown = Math.min(missing.size(), 5);
    return new Check(
        "pod-cgroups",
        Status.WARN,
        missing.size()
            + " of "
            + listedPods.size()
            + " running pods listed have no cgroup under "
            + cgroups.podsCgroup().map(Path::toString).orElse(cgroups.podsCgroupName())
            + " (wrong --pods-cgroup? their memory is not observed and kill cannot reach them): "
            + String.join(", ", missing.subList(0, shown))
            + (missing.size() > shown ? ", ..." : ""));
  }

  private static Check readable(String name, Path p, Status ifNot) {
    return Files.isDirectory(p) && Files.isReadable(p)
        ? new Check(name, Status.OK, p + " readable")
        : new Check(name, ifNot, p + " is not a readable directory");
  }

  private static Check fsRoot(String name, Path p, String fs) {
    if (Files.isDirectory(p) && Files.isReadable(p)) {
      return new Check(name, Status.OK, p + " readable (" + fs + ")");
    }
    return new Check(name, Status.WARN, p + " does not exist: " + fs + " is measured on /");
  }

  private Check stats() {
    try {
      Summary s = new HostStatsProvider(paths, null, clock).summary();
      List<String> missing = new ArrayList<>();
      Summary.NodeStats n = s.node();
      if (n.memory() == null) {
        missing.add("memory");
      }
      if (n.fs() == null) {
        missing.add("nodefs");
      }
      if (n.runtime() == null || n.runtime().imageFs() == null) {
        missing.add("imagefs");
      }
      if (n.rlimit() == null) {
        missing.add("pids");
      }
      if (!missing.isEmpty()) {
        return new Check(
            "host-stats", Status.WARN, "no " + String.join(", ", missing) + " figures");
      }
      return new Check(
          "host-stats",
          Status.OK,
          "memory, nodefs, imagefs and pids observed; " + s.pods().size() + " pods");
    } catch (RuntimeException e) {
      return new Check("host-stats", Status.FAIL, e.getMessage());
    }
  }
}
