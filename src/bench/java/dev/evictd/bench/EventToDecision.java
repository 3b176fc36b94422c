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
 * Writes {@code args[0]} (JSON). Root and the cgroup v1 memory controller are needed; every cgroup,
 * process and file is removed at the end, also on failure.
 */
public final class EventToDecision {
  private static final int PODS = 110;
  private static final long CHUNK = 4L << 20;

  /**
   * Charged and freed after a crossing back down until the kernel signals it (the line is 2 MiB
   * above the baseline).
   */
  private static final long PRIME = 1L << 20;

  private record Event(long nanos, Direction direction) {}

  private record Sync(
      long nanos, long statsStart, long statsEnd, String victim, boolean failed, String observed) {}

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
    Process dd =
        cg.startIn(
            heavyCgroup,
            "exec dd of=\"$2\" bs=64k oflag=append conv=notrunc status=none",
            file.toString());
    OutputStream in = dd.getOutputStream();
    byte[] chunk = new byte[(int) CHUNK];
    Arrays.fill(chunk, (byte) 7);
    in.write(chunk, 0, 64 << 10);
    in.flush();
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
    StatsProvider timed =
        () -> {
          statsTimes[0] = System.nanoTime();
          Summary s = host.summary();
          statsTimes[1] = System.nanoTime();
          return s;
        };
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
                  events.add(new Event(System.nanoTime(), e.direction()));
                  manager.event(e, "memcg", e.direction() == Direction.UP);
                },
                clock)) {
      if (!notifier.available()) {
        throw new IllegalStateException(
            "memcg notifier not available: " + notifier.unavailableReason());
      }
      manager.addSyncListener(
          (Summary s, EvictionPlan p) -> {
            long now = System.nanoTime();
            notifier.update(s);
            syncs.add(
                new Sync(
                    now,
                    statsTimes[0],
                    statsTimes[1],
                    p.decisions().isEmpty() ? null : p.decisions().get(0).pod().key(),
                    p.failed(),
                    p.observations().stream()
                        .filter(o -> o.signal() == Signal.MEMORY_AVAILABLE)
                        .findFirst()
                        .map(
                            o ->
                                "available "
                                    + o.available()
                                    + " time "
                                    + o.time()
                                    + " conditions "
                                    + p.conditions()
                                    + " signal "
                                    + p.signal()
                                    + " thresholds "
                                    + p.thresholds()
                                    + " warnings "
                                    + p.warnings())
                        .orElse("-")));
          });
      manager.start();
      Sync first = syncs.poll(30, TimeUnit.SECONDS);
      if (first == null || first.victim() != null) {
        throw new IllegalStateException("the first sync did not run quietly: " + first);
      }
      if (notifier.registeredThreshold().isEmpty()) {
        throw new IllegalStateException("no memcg threshold registered after the first sync");
      }

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
      for (int i = -warmUp; i < crossings; i++) {
        // Below the line and nothing in flight: no event for 50 ms (a sync runs in well under
        // that).
        quiesce(events, syncs);
        events.clear();
        syncs.clear();
        long gcs = collections();
        long t0 = System.nanoTime();
        in.write(chunk);
        in.flush();
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
        } else if (i >= 0) {
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
          eventToDecision.add(decided.nanos() - up.nanos());
          if (collections() != gcs) {
            withGc++;
          } else {
            withoutGc.add(decided.nanos() - up.nanos());
          }
          writeToDecision.add(decided.nanos() - t0);
          eventToSyncStart.add(decided.statsStart() - up.nanos());
          statsRead.add(decided.statsEnd() - decided.statsStart());
          plan.add(decided.nanos() - decided.statsEnd());
          victims.merge(decided.victim(), 1, Integer::sum);
        }
        TestCgroup.awaitSize(file, CHUNK);
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
          in.write(chunk, 0, (int) PRIME);
          in.flush();
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
      String json =
          String.format(
              Locale.ROOT,
              "{\"pods\": %d, \"pod_cgroups\": %s, \"warm_up_crossings\": %d, \"crossings\": %d, \"missed\": %d, \"event_to_decision_missed\": %d, \"primes\": %d, \"labelled_down\": %d, \"undecided_after_event\": %d, \"event_to_decision_p50_ms\": %s, "
                  + "\"event_to_decision_p99_ms\": %s, \"event_to_decision_max_ms\": %s, "
                  + "\"write_to_decision_p50_ms\": %s, \"write_to_decision_p99_ms\": %s, "
                  + "\"event_to_sync_start_p50_ms\": %s, \"event_to_sync_start_p99_ms\": %s, "
                  + "\"stats_read_p50_ms\": %s, \"stats_read_p99_ms\": %s, "
                  + "\"plan_p50_ms\": %s, \"plan_p99_ms\": %s, \"crossings_with_gc\": %d, "
                  + "\"event_to_decision_p99_without_gc_ms\": %s, \"victims\": \"%s\"}%n",
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
              victims);
      // no crossing measured: no percentile (null), the misses still counted
      json = json.replace("NaN", "null");
      Files.createDirectories(out.toAbsolutePath().getParent());
      Files.writeString(out, json);
      System.out.print(json);
    }
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
