package dev.evictd.linux;

import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.api.MemcgThresholdCrossed;
import dev.evictd.api.MemoryEventsChanged;
import dev.evictd.api.MemoryPollCrossed;
import dev.evictd.api.PodRef;
import dev.evictd.api.PressureStall;
import dev.evictd.api.Quantity;
import dev.evictd.api.Signal;
import dev.evictd.api.Threshold;
import dev.evictd.api.ThresholdValue;
import dev.evictd.cli.Main;
import dev.evictd.executor.CgroupKillEvictor;
import dev.evictd.executor.KillProbe;
import dev.evictd.stats.Summary;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * evictd's cgroup v2 checks on a real kernel, run as root inside the cgroup v2 VM ({@code
 * .ci/vm/run-checks.sh}): one JVM start, a real pod-cgroup tree under both kubelet drivers with
 * real processes, evictd's own classes against the kernel's files. Prints one {@code ok|FAIL name
 * detail} line per check and {@code checks: N passed, M failed}; exits 0 only when every check
 * passed. Everything it creates is removed at the end (the VM is discarded anyway).
 */
public final class V2Checks {
  private static final Path ROOT = Path.of("/sys/fs/cgroup");
  private static final long MI = 1L << 20;

  /** A pod cgroup made for the checks: its directory and a container scope holding processes. */
  private record TestPod(String uid, Path dir, Path scope) {}

  private final List<String> failed = new ArrayList<>();
  private int passed;
  private final List<Process> processes = new ArrayList<>();
  private final List<Path> made = new ArrayList<>();

  private V2Checks() {}

  /** Runs every check; exit status 0 when all passed, 1 otherwise. */
  public static void main(String[] args) throws Exception {
    V2Checks c = new V2Checks();
    try {
      c.run();
    } catch (Exception | AssertionError e) {
      c.fail("harness", e.toString());
    } finally {
      c.cleanUp();
    }
    System.out.println("checks: " + c.passed + " passed, " + c.failed.size() + " failed");
    System.exit(c.failed.isEmpty() && c.passed > 0 ? 0 : 1);
  }

  /** Seconds since the JVM started, for the time each check took under emulation. */
  private static String at() {
    return String.format(
        java.util.Locale.ROOT,
        "[%.1f s]",
        java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime() / 1000.0);
  }

  private void ok(String name, String detail) {
    passed++;
    System.out.println("ok   " + name + "  " + at() + " " + detail);
  }

  private void fail(String name, String detail) {
    failed.add(name);
    System.out.println("FAIL " + name + "  " + at() + " " + detail);
  }

  private void check(String name, boolean good, String detail) {
    if (good) {
      ok(name, detail);
    } else {
      fail(name, detail);
    }
  }

  private Path mkdir(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      Files.createDirectory(dir);
      made.add(dir);
    }
    return dir;
  }

  private static void write(Path file, String text) throws IOException {
    Files.writeString(file, text, java.nio.file.StandardOpenOption.WRITE);
  }

  /** Memory and pids for the children of {@code dir}. */
  private static void delegate(Path dir) throws IOException {
    write(dir.resolve("cgroup.subtree_control"), "+memory +pids");
  }

  /** A pod cgroup {@code dir} with one container scope running {@code script}. */
  private TestPod pod(String uid, Path dir, String script) throws Exception {
    mkdir(dir);
    delegate(dir);
    Path scope = mkdir(dir.resolve("cri-containerd-" + uid.substring(0, 8) + ".scope"));
    start(scope, script);
    return new TestPod(uid, dir, scope);
  }

  private Process start(Path cgroup, String script) throws Exception {
    Process p =
        new ProcessBuilder(
                "sh",
                "-c",
                "echo $$ > \"$1/cgroup.procs\" || exit 99; " + script,
                "sh",
                cgroup.toString())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    processes.add(p);
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (Cgroups.processes(cgroup).isEmpty()) {
      if (System.nanoTime() > end || !p.isAlive()) {
        throw new IllegalStateException("no process in " + cgroup + " after 60 s");
      }
      Thread.sleep(20);
    }
    return p;
  }

  private void run() throws Exception {
    String release = Files.readString(Path.of("/proc/sys/kernel/osrelease")).trim();
    System.out.println("kernel " + release);
    Cgroups cgroups = Cgroups.detect(ROOT, "kubepods.slice");
    check(
        "cgroup-v2",
        cgroups.version().orElse(null) == Cgroups.Version.V2
            && cgroups.memoryRoot().orElseThrow().equals(ROOT)
            && Files.exists(ROOT.resolve("memory.pressure")),
        cgroups.describe());

    // the systemd driver's tree: a Guaranteed, a Burstable and a BestEffort pod
    Path slice = mkdir(ROOT.resolve("kubepods.slice"));
    delegate(slice);
    Path burstable = mkdir(slice.resolve("kubepods-burstable.slice"));
    delegate(burstable);
    Path besteffort = mkdir(slice.resolve("kubepods-besteffort.slice"));
    delegate(besteffort);
    String sleeper = "head -c 3M /dev/zero > /dev/shm/$(basename \"$1\"); exec sleep 3600";
    List<TestPod> systemd =
        List.of(
            pod(
                "0a0a0a0a-1111-2222-3333-444444444444",
                slice.resolve("kubepods-pod0a0a0a0a_1111_2222_3333_444444444444.slice"),
                sleeper),
            pod(
                "0b0b0b0b-1111-2222-3333-444444444444",
                burstable.resolve(
                    "kubepods-burstable-pod0b0b0b0b_1111_2222_3333_444444444444.slice"),
                sleeper + " & exec sleep 3600"),
            pod(
                "0c0c0c0c-1111-2222-3333-444444444444",
                besteffort.resolve(
                    "kubepods-besteffort-pod0c0c0c0c_1111_2222_3333_444444444444.slice"),
                sleeper));
    // the cgroupfs driver's tree
    Path kubepods = mkdir(ROOT.resolve("kubepods"));
    delegate(kubepods);
    Path fsBurstable = mkdir(kubepods.resolve("burstable"));
    delegate(fsBurstable);
    Path fsBesteffort = mkdir(kubepods.resolve("besteffort"));
    delegate(fsBesteffort);
    List<TestPod> cgroupfs =
        List.of(
            pod(
                "0d0d0d0d-1111-2222-3333-444444444444",
                kubepods.resolve("pod0d0d0d0d-1111-2222-3333-444444444444"),
                sleeper),
            pod(
                "0e0e0e0e-1111-2222-3333-444444444444",
                fsBurstable.resolve("pod0e0e0e0e-1111-2222-3333-444444444444"),
                sleeper),
            pod(
                "0f0f0f0f-1111-2222-3333-444444444444",
                fsBesteffort.resolve("pod0f0f0f0f-1111-2222-3333-444444444444"),
                sleeper));

    podStats("stats-systemd", "kubepods.slice", systemd);
    podStats("stats-systemd-names", ROOT.resolve("kubepods.slice").toString(), systemd);
    podStats("stats-cgroupfs", "kubepods", cgroupfs);
    nodeStats(slice);
    doctor(systemd.size());
    statsTable();
    events(slice);
    kill("kill-systemd", "kubepods.slice", systemd);
    kill("kill-cgroupfs", "/kubepods", cgroupfs);
  }

  private static HostPaths paths(String pods) {
    return new HostPaths(ROOT, Path.of("/proc"), Path.of("/"), Path.of("/"), pods);
  }

  /** The kernel's figures of a pod cgroup, as the summary should have them. */
  private static String kernelFigures(Path dir) {
    long usage = Cgroups.readLong(dir.resolve("memory.current")).orElse(-1);
    Map<String, Long> stat = Cgroups.readKeyed(dir.resolve("memory.stat"));
    long inactive = stat.getOrDefault("inactive_file", -1L);
    return "usage "
        + usage
        + " workingSet "
        + Math.max(0, usage - inactive)
        + " rss "
        + stat.getOrDefault("anon", -1L)
        + " processes "
        + Cgroups.processes(dir).size();
  }

  private static String summaryFigures(Summary.PodStats p) {
    return "usage "
        + p.memory().usageBytes()
        + " workingSet "
        + p.memory().workingSetBytes()
        + " rss "
        + p.memory().rssBytes()
        + " processes "
        + p.processStats().processCount();
  }

  /** Each pod's summary figures equal the kernel's files (read before and after, when stable). */
  private void podStats(String name, String podsCgroup, List<TestPod> pods) {
    String last = "";
    for (int attempt = 0; attempt < 10; attempt++) {
      Map<String, String> before = new TreeMap<>();
      pods.forEach(p -> before.put(p.uid(), kernelFigures(p.dir())));
      Summary s = new HostStatsProvider(paths(podsCgroup), "vm", Clock.systemUTC()).summary();
      Map<String, String> after = new TreeMap<>();
      pods.forEach(p -> after.put(p.uid(), kernelFigures(p.dir())));
      Map<String, String> got = new TreeMap<>();
      for (Summary.PodStats p : s.pods()) {
        got.put(p.podRef().uid(), summaryFigures(p));
      }
      if (!before.equals(after)) {
        last = "the kernel's figures moved while reading";
        continue;
      }
      check(
          name,
          got.equals(before),
          got.equals(before)
              ? "--pods-cgroup "
                  + podsCgroup
                  + ": "
                  + got.size()
                  + " pods exact ("
                  + got.values().iterator().next()
                  + ", ...)"
              : "--pods-cgroup "
                  + podsCgroup
                  + ": summary "
                  + got
                  + " but the kernel says "
                  + before);
      return;
    }
    fail(name, last);
  }

  /**
   * Node memory from the root's memory.stat (no memory.current there) and the pods container from
   * the pods cgroup's files: each within what the kernel showed just before and just after.
   */
  private void nodeStats(Path slice) {
    String detail = "";
    for (int attempt = 0; attempt < 10; attempt++) {
      Map<String, Long> b = Cgroups.readKeyed(ROOT.resolve("memory.stat"));
      long podsBefore = Cgroups.readLong(slice.resolve("memory.current")).orElse(-1);
      Summary s = new HostStatsProvider(paths("kubepods.slice"), "vm", Clock.systemUTC()).summary();
      Map<String, Long> a = Cgroups.readKeyed(ROOT.resolve("memory.stat"));
      long podsAfter = Cgroups.readLong(slice.resolve("memory.current")).orElse(-1);
      long lo = Math.min(b.get("anon") + b.get("file"), a.get("anon") + a.get("file"));
      long hi = Math.max(b.get("anon") + b.get("file"), a.get("anon") + a.get("file"));
      long usage = s.node().memory().usageBytes();
      long pods = s.node().systemContainer("pods").memory().usageBytes();
      boolean inNode = usage >= lo && usage <= hi;
      boolean inPods =
          pods >= Math.min(podsBefore, podsAfter) && pods <= Math.max(podsBefore, podsAfter);
      detail =
          "node usage "
              + usage
              + " in ["
              + lo
              + ", "
              + hi
              + "] (anon + file of the root memory.stat), pods "
              + pods
              + " in ["
              + podsBefore
              + ", "
              + podsAfter
              + "] (kubepods.slice/memory.current)";
      if (inNode && inPods) {
        ok("stats-node", detail);
        return;
      }
    }
    fail("stats-node", detail);
  }

  private static String cli(int[] code, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    code[0] = Main.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
    return out + err.toString();
  }

  private void doctor(int pods) {
    int[] code = new int[1];
    String out =
        cli(
            code,
            "doctor",
            "--pods-cgroup",
            "kubepods.slice",
            "--kubelet-root-dir",
            "/",
            "--runtime-root",
            "/");
    String events =
        out.lines().filter(l -> l.matches("^\\w+ +event-sources .*")).findFirst().orElse("");
    String podsLine =
        out.lines().filter(l -> l.matches("^\\w+ +pods-cgroup .*")).findFirst().orElse("");
    boolean good =
        code[0] == 0
            && !out.contains("memcg-notifier")
            && events.startsWith("ok")
            && events.contains(
                "PSI trigger \"some 150000 2000000\" accepted on "
                    + ROOT.resolve("memory.pressure"))
            && events.contains("accepted on " + ROOT.resolve("kubepods.slice/memory.pressure"))
            && events.contains(ROOT.resolve("kubepods.slice/memory.events") + " readable")
            && events.contains("adaptive poll on")
            && podsLine.startsWith("ok")
            && podsLine.endsWith("(systemd driver, " + pods + " pod cgroups)");
    check("doctor", good, good ? events.replaceAll("\\s+", " ") : "exit " + code[0] + ":\n" + out);
  }

  private void statsTable() {
    int[] code = new int[1];
    String out =
        cli(
            code,
            "stats",
            "--pods-cgroup",
            "kubepods.slice",
            "--kubelet-root-dir",
            "/",
            "--runtime-root",
            "/");
    List<String> lines = out.lines().filter(l -> l.contains(" available ")).toList();
    boolean oneUnit =
        !lines.isEmpty()
            && lines.stream().allMatch(l -> l.matches("\\S+ +available (\\d+)(\\w*) +of \\d+\\2"));
    boolean memory = lines.stream().anyMatch(l -> l.startsWith("memory.available "));
    check(
        "stats-table",
        code[0] == 0 && oneUnit && memory,
        code[0] == 0 && oneUnit && memory ? lines.get(0).replaceAll("\\s+", " ") : out);
  }

  private static Threshold hard(Signal s, long bytes) {
    return new Threshold(
        "hard " + s,
        s,
        ThresholdValue.ofQuantity(Quantity.of(bytes, Quantity.Format.BINARY_SI), bytes + ""),
        Duration.ZERO,
        null,
        0,
        "vm",
        false);
  }

  /**
   * The agent's event sources on the real kernel: a pod that goes over its memory.high stalls on
   * memory (a PSI trigger on the pods cgroup's memory.pressure), counts high events (memory.events
   * of the pods cgroup) and crosses a line 8 MiB above the pods cgroup's usage (the adaptive poll);
   * each is delivered as a fact with its source.
   */
  private void events(Path slice) throws Exception {
    Cgroups cgroups = Cgroups.detect(ROOT, "kubepods.slice");
    Summary s = new HostStatsProvider(paths("kubepods.slice"), "vm", Clock.systemUTC()).summary();
    Summary.MemoryStats pods = s.node().systemContainer("pods").memory();
    // the line (capacity − threshold + inactive_file) 8 MiB above the pods cgroup's usage now
    Threshold line = hard(Signal.ALLOCATABLE_MEMORY_AVAILABLE, pods.availableBytes() - 8 * MI);
    List<Object[]> facts = new CopyOnWriteArrayList<>();
    List<NotifierFactory.Notifier> sources =
        new LinuxNotifiers()
            .start(
                new NotifierFactory.Spec(
                    List.of(line),
                    cgroups,
                    paths("kubepods.slice"),
                    true,
                    null,
                    true,
                    Duration.ofSeconds(10)),
                (fact, source, urgent) -> facts.add(new Object[] {fact, source, urgent}),
                Clock.systemUTC());
    try {
      Map<String, String> unavailable = new LinkedHashMap<>();
      for (NotifierFactory.Notifier n : sources) {
        if (!n.available()) {
          unavailable.put(n.describe(), n.unavailableReason());
        }
        n.update(s);
      }
      Set<String> kinds = new java.util.TreeSet<>();
      sources.forEach(n -> kinds.add(n.source()));
      check(
          "event-sources",
          unavailable.isEmpty() && kinds.equals(Set.of("psi", "memory.events", "poll")),
          unavailable.isEmpty()
              ? sources.size() + " started: " + kinds
              : "unavailable: " + unavailable);
      Path hogPod = mkdir(slice.resolve("kubepods-pod0909090a_1111_2222_3333_444444444444.slice"));
      delegate(hogPod);
      Path hogScope = mkdir(hogPod.resolve("cri-containerd-hog.scope"));
      write(hogScope.resolve("memory.high"), Long.toString(24 * MI));
      start(
          hogScope,
          "exec python3 -c 'import time\nb=[]\nfor i in range(64):\n b.append(b\"\\x01\" * (1 << 20))\n time.sleep(0.02)\ntime.sleep(3600)'");
      awaitFact(
          "poll-fact",
          facts,
          f ->
              f[0] instanceof MemoryPollCrossed c
                  && c.direction() == MemcgThresholdCrossed.Direction.UP
                  && c.file().equals(slice.resolve("memory.current").toString())
                  && f[1].equals("poll"),
          120);
      awaitFact(
          "memory-events-fact",
          facts,
          f ->
              f[0] instanceof MemoryEventsChanged e
                  && e.file().equals(slice.resolve("memory.events").toString())
                  && e.highDelta() > 0
                  && f[1].equals("memory.events"),
          120);
      awaitFact(
          "psi-fact",
          facts,
          f ->
              f[0] instanceof PressureStall p
                  && (p.source().equals(slice.resolve("memory.pressure").toString())
                      || p.source().equals(ROOT.resolve("memory.pressure").toString()))
                  && f[1].equals("psi"),
          120);
    } finally {
      sources.forEach(NotifierFactory.Notifier::close);
    }
  }

  private void awaitFact(String name, List<Object[]> facts, Predicate<Object[]> match, int seconds)
      throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (System.nanoTime() < end) {
      for (Object[] f : facts) {
        if (match.test(f)) {
          ok(name, f[1] + " (urgent " + f[2] + "): " + f[0]);
          return;
        }
      }
      Thread.sleep(100);
    }
    List<String> seen = new ArrayList<>();
    facts.forEach(f -> seen.add(f[1] + ": " + f[0]));
    fail(name, "no such fact within " + seconds + " s; got " + seen);
  }

  /**
   * The kill method finds every pod and empties it with one write to cgroup.kill: no signal sent.
   */
  private void kill(String name, String podsCgroup, List<TestPod> pods) throws Exception {
    List<String> sent = new CopyOnWriteArrayList<>();
    List<String> bad = new ArrayList<>();
    try (CgroupKillEvictor k = KillProbe.recording(Cgroups.detect(ROOT, podsCgroup), sent)) {
      for (TestPod p : pods) {
        EvictionOutcome o =
            k.evict(
                new EvictionDecision(
                    new PodRef("default", "p", p.uid()),
                    EvictionDecision.Kind.PRESSURE,
                    "memory.available",
                    0,
                    "test",
                    null,
                    null,
                    null));
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!Cgroups.processes(p.dir()).isEmpty() && System.nanoTime() < end) {
          Thread.sleep(20);
        }
        String populated =
            Files.readString(p.dir().resolve("cgroup.events"))
                .lines()
                .filter(l -> l.startsWith("populated"))
                .findFirst()
                .orElse("?");
        if (o != EvictionOutcome.EVICTED || !populated.equals("populated 0")) {
          bad.add(p.uid() + ": " + o + ", " + populated);
        }
      }
    }
    check(
        name,
        bad.isEmpty() && sent.isEmpty(),
        bad.isEmpty() && sent.isEmpty()
            ? "--pods-cgroup "
                + podsCgroup
                + ": "
                + pods.size()
                + " pods emptied by cgroup.kill, no signal sent"
            : "failed " + bad + ", signals " + sent);
  }

  private void cleanUp() {
    for (Path d : made) {
      Path kill = d.resolve("cgroup.kill");
      if (Files.exists(kill)) {
        try {
          write(kill, "1");
        } catch (IOException e) {
          // best effort: the VM is discarded
        }
      }
    }
    for (Process p : processes) {
      p.destroyForcibly();
    }
    for (int i = made.size() - 1; i >= 0; i--) {
      for (int attempt = 0; attempt < 50; attempt++) {
        try {
          Files.deleteIfExists(made.get(i));
          break;
        } catch (IOException e) {
          try {
            Thread.sleep(20);
          } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            return;
          }
        }
      }
    }
  }
}
