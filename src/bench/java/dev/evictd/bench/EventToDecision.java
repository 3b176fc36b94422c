package dev.evictd.bench;

import dev.evictd.agent.AgentMetrics;
import dev.evictd.agent.EvictionManager;
import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.FsLayout;
import dev.evictd.api.MemcgThresholdCrossed;
import dev.evictd.api.MemcgThresholdCrossed.Direction;
import dev.evictd.api.Signal;
import dev.evictd.api.Threshold;
import dev.evictd.engine.Planner;
import dev.evictd.executor.DryRunEvictor;
import dev.evictd.linux.Cgroups;
import dev.evictd.linux.EventPoll;
import dev.evictd.linux.HostPaths;
import dev.evictd.linux.HostStatsProvider;
import dev.evictd.linux.MemcgThresholdNotifier;
import dev.evictd.ports.EventSink;
import dev.evictd.ports.PodSource;
import dev.evictd.ports.StatsProvider;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.stats.Summary;
import dev.evictd.testing.TestCgroup;
import io.fabric8.kubernetes.api.model.Pod;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Event → decision on the real kernel: the agent's own pieces (the memcg threshold notifier, the
 * eviction manager's sync loop, host statistics, the planner) on a test memory cgroup standing in
 * for the node, with 110 pods. A {@code dd} in that cgroup appends to a tmpfs file what this
 * harness writes to its stdin (4 MiB: the pages are charged to the cgroup), which crosses the
 * memory.available hard threshold; truncating the file crosses back.
 *
 * <p>Two node shapes: {@code plain} - the pods come from a file and have no cgroups (as {@code
 * evictd run --standalone --pods-file}): host statistics are the node's alone; {@code pod-cgroups}
 * - every pod has its pod cgroup below {@code kubepods} (the dd runs in one of them), so every sync
 * also reads 110 pod cgroups, as on a real node whose statistics come from the host.
 *
 * <p>Measured per upward crossing: from the notifier's delivery of the kernel event (the first
 * instant user space knows, right after {@code poll(2)} returns) to the end of the sync that
 * decided an eviction (the manager's sync listener, called before the decision is carried out); the
 * same from the write that drives the crossing (an upper bound including the kernel); and, of that
 * sync, the statistics read and the planner. Downward crossings trigger a sync too (not counted).
 *
 * <p>And, for what a loaded machine does to these: per crossing (a {@code probe} line in the log;
 * the warm-up's crossings get the same accounting and lines, {@code warm-up}, so that this
 * harness's code is compiled before the measured crossings instead of competing with them) the sync
 * thread's CPU time in it and its time off the CPU (event → decision less that CPU time: waiting
 * for a CPU after the wake-up or a preemption, or held at a collection's safepoint), whether it was
 * preempted, the bytes the deciding sync allocated, whether a collection fell between the event and
 * the decision, and whether this harness's write of the 4 MiB was still in flight at the event (its
 * writer thread and the dd then compete with the sync for the CPUs); the hand-over from the
 * notifier's thread to the sync thread (event → the sync's statistics read) and the event's JVM
 * uptime ({@code at_ms}, to line the crossings up with {@code -Xlog:jit+compilation=debug::uptime}:
 * which methods were compiled in which crossing). The JSON also has event → decision, and the sync
 * thread's CPU time, of the first and the second half of the measured crossings apart: code still
 * being compiled shows as a slower first half. Writes {@code args[0]} (JSON). Root and the cgroup
 * v1 memory controller are needed; every cgroup, process and file is removed at the end, also on
 * failure.
 */
public final class EventToDecision {
  private static final int PODS = 110;
  private static final long CHUNK = 4L << 20;

  /**
   * With {@code -De2d.threads=true}: every thread's CPU time in each crossing in the log (reading
   * them allocates some 100 KB per crossing, outside the timed window).
   */
  private static final boolean THREADS = Boolean.getBoolean("e2d.threads");

  /**
   * How the 4 MiB are charged ({@code -De2d.feed=pipe|zero}): {@code pipe} (as always) this JVM
   * writes them to the dd's stdin, so the harness's writer thread and the dd both run in a
   * crossing; {@code zero} the dd reads them from {@code /dev/zero}, the load a workload alone
   * makes.
   */
  private static final String FEED = System.getProperty("e2d.feed", "pipe");

  /**
   * Charged and freed after a crossing back down until the kernel signals it (the line is 2 MiB
   * above the baseline).
   */
  private static final long PRIME = 1L << 20;

  /**
   * A kernel event as delivered, with the collections (young and full) so far and, when delivered
   * on the sync thread (which polls the eventfd itself), that thread's CPU time then (else -1).
   */
  private record Event(long nanos, Direction direction, long gcs, long syncCpu) {}

  /**
   * A sync as its listener saw it: when it ended, its statistics read, its decision, and (taken
   * after its end, outside the timed window) the collections so far, the sync thread's scheduler
   * figures ({@link Sched}), the bytes that thread allocated in the sync, and a snapshot of every
   * other thread of this process and of the dd for a deciding sync.
   */
  private record Sync(
      long nanos,
      long statsStart,
      long statsEnd,
      String victim,
      boolean failed,
      EvictionPlan plan,
      long gcs,
      Sched sched,
      long allocated,
      Map<String, Sched> threads) {
    /** What the sync observed of memory.available, for a missed crossing's message. */
    String observed() {
      return plan.observations().stream()
          .filter(o -> o.signal() == Signal.MEMORY_AVAILABLE)
          .findFirst()
          .map(
              o ->
                  "available "
                      + o.available()
                      + " time "
                      + o.time()
                      + " conditions "
                      + plan.conditions()
                      + " signal "
                      + plan.signal()
                      + " thresholds "
                      + plan.thresholds()
                      + " warnings "
                      + plan.warnings())
          .orElse("-");
    }

    @Override
    public String toString() {
      return "Sync[nanos="
          + nanos
          + ", victim="
          + victim
          + ", failed="
          + failed
          + ", "
          + observed()
          + "]";
    }
  }

  /**
   * A thread's scheduler figures: nanoseconds on a CPU (its CPU-time clock: schedstat's lags by up
   * to a tick on a running thread), the run-queue delay and time slices of {@code schedstat} (the
   * delay also counts time this kernel keeps a sleeping thread queued, so it is shown, not used),
   * and how often it was preempted ({@code nonvoluntary_ctxt_switches} of {@code status}).
   */
  private record Sched(long run, long queued, long slices, long preempted) {
    static final Sched NONE = new Sched(0, 0, 0, 0);

    static Sched read(Path schedstat) {
      try {
        String[] f = Files.readString(schedstat).trim().split(" ");
        long preempted = 0;
        for (String line : Files.readAllLines(schedstat.resolveSibling("status"))) {
          if (line.startsWith("nonvoluntary_ctxt_switches:")) {
            preempted = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
          }
        }
        return new Sched(
            Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2]), preempted);
      } catch (IOException | RuntimeException e) {
        return NONE; // the thread ended
      }
    }

    Sched withRun(long cpuNanos) {
      return new Sched(cpuNanos, queued, slices, preempted);
    }

    Sched minus(Sched o) {
      return new Sched(run - o.run, queued - o.queued, slices - o.slices, preempted - o.preempted);
    }
  }

  /**
   * Every thread of this JVM by name (with its id, names repeat) and the dd, for the per-crossing
   * account of what else ran in a crossing.
   */
  private static Map<String, Sched> threads(long ddPid) {
    Map<String, Sched> m = new LinkedHashMap<>();
    try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
      for (Path t : tasks.toList()) {
        String comm;
        try {
          comm = Files.readString(t.resolve("comm")).trim();
        } catch (IOException e) {
          continue;
        }
        m.put(comm + "#" + t.getFileName(), Sched.read(t.resolve("schedstat")));
      }
    } catch (IOException e) {
      // no account for this crossing
    }
    m.put("dd", Sched.read(Path.of("/proc/" + ddPid + "/schedstat")));
    return m;
  }

  private EventToDecision() {}

  public static void main(String[] args) throws Exception {
    Path out = Path.of(args[0]);
    boolean podCgroups = args.length > 1 && args[1].equals("pod-cgroups");
    int crossings = args.length > 2 ? Integer.parseInt(args[2]) : 60;
    int warmUp = args.length > 3 ? Integer.parseInt(args[3]) : 15;
    if (!"root".equals(System.getProperty("user.name"))
        || !Files.isWritable(TestCgroup.MEMORY_ROOT.resolve("cgroup.event_control"))) {
      System.err.println(
          "event-to-decision: needs root and the cgroup v1 memory controller at "
              + TestCgroup.MEMORY_ROOT);
      System.exit(3);
    }
    Path tmp = Files.createTempDirectory("evictd-bench-e2d");
    TestCgroup cg = TestCgroup.create("bench-e2d");
    // cgroup, processes and files go also when the run is interrupted (SIGINT, SIGTERM) or fails
    Thread cleanup = new Thread(() -> cleanUp(cg, tmp), "bench-cleanup");
    Runtime.getRuntime().addShutdownHook(cleanup);
    try {
      run(cg, tmp, out, podCgroups, crossings, warmUp);
    } finally {
      cleanUp(cg, tmp);
      try {
        Runtime.getRuntime().removeShutdownHook(cleanup);
      } catch (IllegalStateException e) {
        // already shutting down: the hook finds everything removed
      }
    }
  }

  private static synchronized void cleanUp(TestCgroup cg, Path tmp) {
    try {
      cg.close();
    } catch (Exception e) {
      System.err.println("event-to-decision: cleaning up " + cg.dir() + ": " + e);
    }
    if (!Files.exists(tmp)) {
      return;
    }
    try (Stream<Path> s = Files.walk(tmp)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      System.err.println("event-to-decision: cleaning up " + tmp + ": " + e);
    }
  }

  private static void run(
      TestCgroup cg, Path tmp, Path out, boolean podCgroups, int crossings, int warmUp)
      throws Exception {
    List<BenchData.GenPod> gen = BenchData.generate(PODS, 42);
    List<Pod> pods = BenchData.pods(gen, true);
    BenchData.GenPod heavy = gen.get(PODS / 2);
    Path heavyCgroup = cg.dir();
    for (BenchData.GenPod g : podCgroups ? gen : List.<BenchData.GenPod>of()) {
      Path d = cg.mkdirs("kubepods/pod" + g.uid());
      if (g == heavy) {
        heavyCgroup = d;
      }
    }
    // a cgroup root whose memory hierarchy is the test cgroup: node memory is this cgroup's
    Path root = Files.createDirectory(tmp.resolve("cgroup"));
    Files.createSymbolicLink(root.resolve("memory"), cg.dir());
    Path fs = Files.createDirectory(tmp.resolve("fs"));
    HostPaths paths = new HostPaths(root, null, fs, fs, "kubepods");
    Clock clock = Clock.systemUTC();
    HostStatsProvider host = new HostStatsProvider(paths, "node", clock);

    Path file = cg.tmpfsFile("e2d");
    // pipe: this JVM writes the bytes to a dd's stdin; zero: a dd started in the cgroup for each
    // charge copies them from /dev/zero (the same 64 KiB writes), and no thread of this JVM is busy
    // meanwhile
    boolean fromZero = FEED.equals("zero");
    Process dd =
        cg.startIn(
            heavyCgroup,
            fromZero
                ? "while read n; do dd if=/dev/zero of=\"$2\" bs=64k count=$((n / 65536))"
                    + " oflag=append conv=notrunc status=none || exit 1; done"
                : "exec dd of=\"$2\" bs=64k oflag=append conv=notrunc status=none",
            file.toString());
    OutputStream in = dd.getOutputStream();
    byte[] chunk = new byte[(int) CHUNK];
    Arrays.fill(chunk, (byte) 7);
    java.util.function.IntConsumer charge =
        n -> {
          try {
            if (fromZero) {
              in.write((n + "\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            } else {
              in.write(chunk, 0, n);
            }
            in.flush();
          } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
          }
        };
    charge.accept(64 << 10);
    TestCgroup.awaitSize(file, 64 << 10);
    TestCgroup.truncate(file);
    Thread.sleep(200);

    Summary base = host.summary();
    long capacity = base.node().memory().availableBytes() + base.node().memory().workingSetBytes();
    // met 2 MiB and one byte above today's working set: a line off a page boundary, which the
    // kernel truncates to the page below when registered as is (the agent registers the first page
    // at which the threshold is met: MemcgLine)
    long line = base.node().memory().workingSetBytes() + (2L << 20) + 1;
    EvictionConfig config =
        BenchData.config(
            "evictionHard: {memory.available: \""
                + (capacity - line)
                + "\"}\nenforceNodeAllocatable: []\n",
            FsLayout.SHARED);
    Threshold threshold = config.thresholds().get(0);

    LinkedBlockingQueue<Event> events = new LinkedBlockingQueue<>();
    LinkedBlockingQueue<Sync> syncs = new LinkedBlockingQueue<>();
    long[] statsTimes = new long[2];
    com.sun.management.ThreadMXBean threadBean =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    // the sync thread's allocated bytes at its statistics read: a sync's allocation starts there
    long[] allocatedBefore = new long[1];
    StatsProvider timed =
        () -> {
          allocatedBefore[0] = threadBean.getCurrentThreadAllocatedBytes();
          statsTimes[0] = System.nanoTime();
          Summary s = host.summary();
          statsTimes[1] = System.nanoTime();
          return s;
        };
    Path[] syncTask = new Path[1];
    long[] syncThreadId = {-1};
    try (Planner planner = new Planner(RuleCompiler.compileDefault(), config);
        EvictionManager manager =
            new EvictionManager(
                planner,
                timed,
                PodSource.of(pods),
                new DryRunEvictor(),
                action -> true,
                EventSink.NONE,
                new AgentMetrics(clock),
                clock,
                new EvictionManager.Settings(
                    Duration.ofSeconds(60),
                    Duration.ofSeconds(30),
                    EvictionMethod.DRY_RUN,
                    true,
                    false));
        MemcgThresholdNotifier notifier =
            new MemcgThresholdNotifier(
                threshold,
                Cgroups.detect(root, "kubepods"),
                (MemcgThresholdCrossed e) -> {
                  // queued before the manager hears of it: the deciding sync never comes first
                  long gcs = collections();
                  long cpu =
                      Thread.currentThread().getId() == syncThreadId[0]
                          ? threadBean.getCurrentThreadCpuTime()
                          : -1;
                  events.add(new Event(System.nanoTime(), e.direction(), gcs, cpu));
                  manager.event(e, "memcg", e.direction() == Direction.UP);
                },
                clock,
                loopPoll(manager))) {
      if (!notifier.available()) {
        throw new IllegalStateException(
            "memcg notifier not available: " + notifier.unavailableReason());
      }
      // the agent's warm-up of the decision path, wired as evictd run wires it
      dev.evictd.agent.DecisionWarmUp agentWarmUp = AgentWarmUp.attach(manager);
      // the sync thread's own figures, read on it after each sync (outside the timed window)
      long ddPid = dd.pid();
      manager.addSyncListener(
          (Summary s, EvictionPlan p) -> {
            long now = System.nanoTime();
            // the thread's CPU time from the clock (schedstat's lags by up to a tick on a running
            // thread)
            long cpu = threadBean.getCurrentThreadCpuTime();
            long allocated = threadBean.getCurrentThreadAllocatedBytes();
            long gcs = collections();
            notifier.update(s);
            if (syncTask[0] == null) {
              syncThreadId[0] = Thread.currentThread().getId();
              try {
                syncTask[0] =
                    Path.of("/proc").resolve(Files.readSymbolicLink(Path.of("/proc/thread-self")));
              } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
            }
            boolean decided = !p.decisions().isEmpty();
            syncs.add(
                new Sync(
                    now,
                    statsTimes[0],
                    statsTimes[1],
                    decided ? p.decisions().get(0).pod().key() : null,
                    p.failed(),
                    p,
                    gcs,
                    Sched.read(syncTask[0].resolve("schedstat")).withRun(cpu),
                    allocated - allocatedBefore[0],
                    decided && THREADS ? threads(ddPid) : Map.of()));
          });
      manager.start();
      agentWarmUp.started();
      Sync first = syncs.poll(30, TimeUnit.SECONDS);
      if (first == null || first.victim() != null) {
        throw new IllegalStateException("the first sync did not run quietly: " + first);
      }
      if (notifier.registeredThreshold().isEmpty()) {
        throw new IllegalStateException("no memcg threshold registered after the first sync");
      }
      // the warm-up the first sync (near the line) started: the crossings come after it
      dev.evictd.agent.DecisionWarmUp.Result warmed = AgentWarmUp.await(agentWarmUp);

      List<Long> eventToDecision = new ArrayList<>();
      List<Long> writeToDecision = new ArrayList<>();
      List<Long> eventToSyncStart = new ArrayList<>();
      List<Long> statsRead = new ArrayList<>();
      List<Long> plan = new ArrayList<>();
      Map<String, Integer> victims = new LinkedHashMap<>();
      int missed = 0;
      int primes = 0;
      int labelledDown = 0;
      int undecidedAfterEvent = 0;
      // crossings whose write -> decision window held a collection (the tail a young GC makes),
      // and event -> decision of the others (what is left without it)
      int withGc = 0;
      List<Long> withoutGc = new ArrayList<>();
      // of the sync thread in the crossing: its CPU time, its run-queue wait (runnable, no CPU
      // free: preemption and load), event -> decision less that wait, and the bytes the deciding
      // sync allocated
      List<Long> syncCpu = new ArrayList<>();
      List<Long> offCpu = new ArrayList<>();
      List<Long> offCpuWithoutGc = new ArrayList<>();
      int preempted = 0;
      int writeInFlight = 0;
      long collectionsAtStart = 0; // of the measured crossings: what collections cost in all
      // the JVM's start on this clock (to the millisecond): a probe line's at_ms is the event's
      // uptime, as -Xlog's uptime decoration (e.g. -Xlog:jit+compilation=debug) prints it
      long jvmStart =
          System.nanoTime() - ManagementFactory.getRuntimeMXBean().getUptime() * 1_000_000L;

      List<Long> allocated = new ArrayList<>();
      for (int i = -warmUp; i < crossings; i++) {
        // Below the line and nothing in flight: no event for 50 ms (a sync runs in well under
        // that).
        quiesce(events, syncs);
        events.clear();
        syncs.clear();
        if (i == 0) {
          // the warm-up's crossings went through the same accounting and probe lines (so that
          // this harness's own code, the formatting included, is compiled before the measured
          // ones, not in them): dropped here
          collectionsAtStart = collections();
          labelledDown = 0;
          undecidedAfterEvent = 0;
          withGc = 0;
          preempted = 0;
          writeInFlight = 0;
          victims.clear();
          for (List<Long> l :
              List.of(
                  eventToDecision,
                  writeToDecision,
                  eventToSyncStart,
                  statsRead,
                  plan,
                  withoutGc,
                  syncCpu,
                  offCpu,
                  offCpuWithoutGc,
                  allocated)) {
            l.clear();
          }
        }
        Sched syncBefore =
            syncTask[0] == null
                ? Sched.NONE
                : Sched.read(syncTask[0].resolve("schedstat"))
                    .withRun(threadBean.getThreadCpuTime(syncThreadId[0]));
        Map<String, Sched> threadsBefore = THREADS ? threads(ddPid) : Map.of();
        long t0 = System.nanoTime();
        charge.accept((int) CHUNK);
        long written = System.nanoTime();
        Sync decided = null;
        List<Sync> seen = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        while (decided == null && System.nanoTime() < deadline) {
          Sync s = syncs.poll(100, TimeUnit.MILLISECONDS);
          if (s != null) {
            seen.add(s);
            if (s.victim() != null) {
              decided = s;
            }
          }
        }
        TestCgroup.awaitSize(file, CHUNK);
        if (fromZero) {
          written = System.nanoTime(); // the dd is done (within the 1 ms the wait polls at)
        }
        // The first kernel event after the write: the event that triggers the sync, which is what
        // is timed. The notifier labels an event by the usage it reads right after it; one
        // labelled DOWN for the crossing up is counted (labelled_down).
        Event up = events.peek();
        if (decided == null || up == null) {
          missed++;
          System.err.printf(
              "crossing %d: %s (events %s; syncs %s; usage %d, registered %s, line %d)%n",
              i,
              up == null ? "no event within 3 s" : "no deciding sync within 3 s",
              events,
              seen,
              cg.usage(),
              notifier.registeredThreshold(),
              line);
        } else {
          if (up.direction() != Direction.UP) {
            labelledDown++;
          }
          long early =
              seen.stream().filter(s -> s.victim() == null && s.statsStart() >= up.nanos()).count();
          if (early > 0) {
            // a sync that read statistics after the event and decided nothing: the crossing was
            // decided by a later one (the manager's re-check a second after an upward crossing)
            undecidedAfterEvent++;
            System.err.printf(
                "crossing %d: %d syncs after the event decided nothing (events %s; syncs %s)%n",
                i, early, events, seen);
          }
          long e2d = decided.nanos() - up.nanos();
          eventToDecision.add(e2d);
          boolean gc = decided.gcs() != up.gcs();
          Sched sync = decided.sched().minus(syncBefore);
          if (up.syncCpu() >= 0) {
            // the sync thread read the event itself: its CPU time from the event on
            sync = sync.withRun(decided.sched().run() - up.syncCpu());
          }
          if (gc) {
            withGc++;
          } else {
            withoutGc.add(e2d);
            offCpuWithoutGc.add(e2d - sync.run());
          }
          syncCpu.add(sync.run());
          offCpu.add(e2d - sync.run());
          if (sync.preempted() > 0) {
            preempted++;
          }
          if (written > up.nanos()) {
            writeInFlight++;
          }
          allocated.add(decided.allocated());
          // what else ran from the write to the decision: every thread of this JVM and the dd
          StringBuilder others = new StringBuilder();
          decided
              .threads()
              .forEach(
                  (name, after) -> {
                    Sched d = after.minus(threadsBefore.getOrDefault(name, Sched.NONE));
                    if (d.run() >= 50_000) {
                      others.append(
                          String.format(
                              Locale.ROOT, " %s=%d/%d", name, d.run() / 1000, d.queued() / 1000));
                    }
                  });
          System.err.printf(
              Locale.ROOT,
              "%s %d e2d_us %d gc %d sync_run_us %d off_cpu_us %d preempted %d queued_us %d slices %d alloc_kib %d syncs %d event_after_write_us %d write_done_after_decision_us %d to_sync_us %d at_ms %d threads(run/wait us)%s%n",
              i < 0 ? "warm-up" : "probe",
              i,
              e2d / 1000,
              decided.gcs() - up.gcs(),
              sync.run() / 1000,
              (e2d - sync.run()) / 1000,
              sync.preempted(),
              sync.queued() / 1000,
              sync.slices(),
              decided.allocated() >> 10,
              seen.size(),
              (up.nanos() - t0) / 1000,
              (written - decided.nanos()) / 1000,
              (decided.statsStart() - up.nanos()) / 1000,
              (up.nanos() - jvmStart) / 1_000_000,
              others);
          writeToDecision.add(decided.nanos() - t0);
          eventToSyncStart.add(decided.statsStart() - up.nanos());
          statsRead.add(decided.statsEnd() - decided.statsStart());
          plan.add(decided.nanos() - decided.statsEnd());
          victims.merge(decided.victim(), 1, Integer::sum);
        }
        // Back below the line. The kernel checks thresholds only every so many page events (per
        // CPU): after the
        // truncate it may not signal the way down at once, and then not the next way up either.
        // Charging and
        // freeing 1 MiB more (below the line) until the DOWN event has come makes it check.
        events.clear();
        TestCgroup.truncate(file);
        boolean down = false;
        for (int k = 0; k < 8 && !down; k++) {
          long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
          Event e;
          while (!down
              && (e = events.poll(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS))
                  != null) {
            down = e.direction() == Direction.DOWN;
          }
          if (down) {
            break;
          }
          charge.accept((int) PRIME);
          TestCgroup.awaitSize(file, PRIME);
          TestCgroup.truncate(file);
          primes++;
        }
        if (cg.usage() >= line) {
          throw new IllegalStateException(
              "usage " + cg.usage() + " still above the line " + line + " after truncating");
        }
      }
      in.close();
      dd.waitFor(5, TimeUnit.SECONDS);
      // never aborts on misses: they are a figure of the result ("missed"), and the percentiles
      // are of the crossings measured (null when none was)
      if (missed > 0) {
        System.err.printf(
            "event-to-decision: %d of %d crossings missed%n", missed, crossings + warmUp);
      }
      List<Long> firstHalf = eventToDecision.subList(0, eventToDecision.size() / 2);
      List<Long> secondHalf =
          eventToDecision.subList(eventToDecision.size() / 2, eventToDecision.size());
      String json =
          String.format(
              Locale.ROOT,
              "{\"pods\": %d, \"pod_cgroups\": %s, \"warm_up_crossings\": %d, \"crossings\": %d, \"missed\": %d, \"event_to_decision_missed\": %d, \"primes\": %d, \"labelled_down\": %d, \"undecided_after_event\": %d, \"event_to_decision_p50_ms\": %s, "
                  + "\"event_to_decision_p99_ms\": %s, \"event_to_decision_max_ms\": %s, "
                  + "\"write_to_decision_p50_ms\": %s, \"write_to_decision_p99_ms\": %s, "
                  + "\"event_to_sync_start_p50_ms\": %s, \"event_to_sync_start_p99_ms\": %s, "
                  + "\"stats_read_p50_ms\": %s, \"stats_read_p99_ms\": %s, "
                  + "\"plan_p50_ms\": %s, \"plan_p99_ms\": %s, \"crossings_with_gc\": %d, "
                  + "\"event_to_decision_p99_without_gc_ms\": %s, "
                  + "\"sync_cpu_p50_ms\": %s, \"sync_cpu_p99_ms\": %s, "
                  + "\"sync_off_cpu_p50_ms\": %s, \"sync_off_cpu_p99_ms\": %s, "
                  + "\"sync_off_cpu_p99_without_gc_ms\": %s, \"crossings_preempted\": %d, "
                  + "\"crossings_write_in_flight\": %d, \"collections\": %d, "
                  + "\"pressure_sync_allocated_kib_p50\": %s, \"pressure_sync_allocated_kib_max\": %s, "
                  + "\"event_to_decision_first_half_p50_ms\": %s, \"event_to_decision_first_half_p99_ms\": %s, "
                  + "\"event_to_decision_second_half_p50_ms\": %s, \"event_to_decision_second_half_p99_ms\": %s, "
                  + "\"sync_cpu_first_half_p50_ms\": %s, \"sync_cpu_second_half_p50_ms\": %s, "
                  + "%s\"victims\": \"%s\"}%n",
              PODS,
              podCgroups,
              warmUp,
              eventToDecision.size(),
              missed,
              missed,
              primes,
              labelledDown,
              undecidedAfterEvent,
              ms(eventToDecision, 50),
              ms(eventToDecision, 99),
              ms(eventToDecision, 100),
              ms(writeToDecision, 50),
              ms(writeToDecision, 99),
              ms(eventToSyncStart, 50),
              ms(eventToSyncStart, 99),
              ms(statsRead, 50),
              ms(statsRead, 99),
              ms(plan, 50),
              ms(plan, 99),
              withGc,
              ms(withoutGc, 99),
              ms(syncCpu, 50),
              ms(syncCpu, 99),
              ms(offCpu, 50),
              ms(offCpu, 99),
              ms(offCpuWithoutGc, 99),
              preempted,
              writeInFlight,
              collections() - collectionsAtStart,
              kib(allocated, 50),
              kib(allocated, 100),
              ms(firstHalf, 50),
              ms(firstHalf, 99),
              ms(secondHalf, 50),
              ms(secondHalf, 99),
              ms(syncCpu.subList(0, syncCpu.size() / 2), 50),
              ms(syncCpu.subList(syncCpu.size() / 2, syncCpu.size()), 50),
              AgentWarmUp.json(warmed),
              victims);
      // no crossing measured: no percentile (null), the misses still counted
      json = json.replace("NaN", "null");
      Files.createDirectories(out.toAbsolutePath().getParent());
      Files.writeString(out, json);
      System.out.print(json);
    }
  }

  /**
   * As the agent: the sync loop polls the memcg eventfd itself; with {@code
   * -De2d.notifierThread=true} the notifier has a thread of its own, which hands each event over to
   * the sync thread (as before 2026-12-02).
   */
  private static EventPoll loopPoll(EvictionManager manager) {
    EventPoll poll = Boolean.getBoolean("e2d.notifierThread") ? null : EventPoll.open();
    manager.waitOn(poll);
    return poll;
  }

  /** Collections so far, young and full (the decision's sync may pause in either). */
  private static long collections() {
    long n = 0;
    for (java.lang.management.GarbageCollectorMXBean gc :
        java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
      n += Math.max(0, gc.getCollectionCount());
    }
    return n;
  }

  /**
   * Waits until neither an event nor a sync has come for 50 ms (at most 3 s), dropping what came.
   */
  private static void quiesce(LinkedBlockingQueue<Event> events, LinkedBlockingQueue<Sync> syncs)
      throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
    long last = System.nanoTime();
    while (System.nanoTime() < end
        && System.nanoTime() - last < TimeUnit.MILLISECONDS.toNanos(50)) {
      Thread.sleep(5);
      if (events.poll() != null | syncs.poll() != null) {
        last = System.nanoTime();
        events.clear();
        syncs.clear();
      }
    }
  }

  /**
   * The {@code p}th percentile in milliseconds for the JSON: {@code null} when none was measured.
   */
  static String ms(List<Long> nanos, int p) {
    return nanos.isEmpty() ? "null" : String.format(Locale.ROOT, "%.3f", pct(nanos, p));
  }

  /** The {@code p}th percentile of byte counts in KiB for the JSON: {@code null} when none. */
  static String kib(List<Long> bytes, int p) {
    return bytes.isEmpty()
        ? "null"
        : String.format(Locale.ROOT, "%.0f", pct(bytes, p) * 1e6 / 1024);
  }

  /** The {@code p}th percentile (nearest rank) in milliseconds. */
  static double pct(List<Long> nanos, int p) {
    long[] s = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
    if (s.length == 0) {
      return Double.NaN;
    }
    int i = (int) Math.ceil(p / 100.0 * s.length) - 1;
    return s[Math.max(0, Math.min(s.length - 1, i))] / 1e6;
  }
}
