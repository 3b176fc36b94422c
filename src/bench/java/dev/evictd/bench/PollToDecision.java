package dev.evictd.bench;

import dev.evictd.agent.AgentMetrics;
import dev.evictd.agent.EvictionManager;
import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.FsLayout;
import dev.evictd.api.MemcgThresholdCrossed.Direction;
import dev.evictd.api.MemoryPollCrossed;
import dev.evictd.api.Threshold;
import dev.evictd.engine.Planner;
import dev.evictd.executor.DryRunEvictor;
import dev.evictd.linux.Cgroups;
import dev.evictd.linux.HostPaths;
import dev.evictd.linux.HostStatsProvider;
import dev.evictd.linux.MemoryPoll;
import dev.evictd.ports.EventSink;
import dev.evictd.ports.PodSource;
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
import java.util.List;
import java.util.Locale;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

/**
 * The adaptive poll on the real kernel with the memcg notifier off (what the agent has on cgroup
 * v2): the eviction manager's sync loop, host statistics, the planner and {@link MemoryPoll} on a
 * test memory cgroup standing in for the node, with 110 pods. A {@code dd} in that cgroup appends 1
 * MiB chunks (about 200 MiB/s) to a tmpfs file until its usage crosses the line 24 MiB above the
 * working set at which memory.available meets the hard threshold; truncating the file goes back.
 *
 * <p>Measured per crossing: from the instant this harness read the usage at or above the line right
 * after the chunk that crossed it (the event) to the end of the sync that decided an eviction (the
 * decision); from the event to the poll's fact. Then the process CPU while idle, with no sync due
 * for 60 s: far from the line (the poll at the configured 10 s interval) and near it (1 MiB of
 * headroom: the poll at its 10 ms floor), 20 s each, as percent of one core. Writes {@code args[0]}
 * (JSON). Needs root and the cgroup v1 memory controller; every cgroup, process and file is removed
 * at the end, also on failure.
 */
public final class PollToDecision {
  private static final int PODS = 110;
  private static final int CHUNK = 1 << 20;
  private static final long HEADROOM = 24L << 20;
  private static final long PACE_MILLIS = 4;

  private record Sync(long nanos, String victim) {}

  private PollToDecision() {}

  public static void main(String[] args) throws Exception {
    Path out = Path.of(args[0]);
    int crossings = args.length > 1 ? Integer.parseInt(args[1]) : 100;
    int warmUp = args.length > 2 ? Integer.parseInt(args[2]) : 20;
    long idleMillis = args.length > 3 ? Long.parseLong(args[3]) : 20_000;
    if (!"root".equals(System.getProperty("user.name"))
        || !Files.isWritable(TestCgroup.MEMORY_ROOT.resolve("cgroup.event_control"))) {
      System.err.println(
          "poll-to-decision: needs root and the cgroup v1 memory controller at "
              + TestCgroup.MEMORY_ROOT);
      System.exit(3);
    }
    Path tmp = Files.createTempDirectory("evictd-bench-poll");
    TestCgroup cg = TestCgroup.create("bench-poll");
    Thread cleanup = new Thread(() -> cleanUp(cg, tmp), "bench-cleanup");
    Runtime.getRuntime().addShutdownHook(cleanup);
    try {
      run(cg, tmp, out, crossings, warmUp, idleMillis);
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
      System.err.println("poll-to-decision: cleaning up " + cg.dir() + ": " + e);
    }
    if (!Files.exists(tmp)) {
      return;
    }
    try (Stream<Path> s = Files.walk(tmp)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      System.err.println("poll-to-decision: cleaning up " + tmp + ": " + e);
    }
  }

  private static EvictionConfig config(long quantity) {
    return BenchData.config(
        "evictionHard: {memory.available: \"" + quantity + "\"}\nenforceNodeAllocatable: []\n",
        FsLayout.SHARED);
  }

  private static void run(
      TestCgroup cg, Path tmp, Path out, int crossings, int warmUp, long idleMillis)
      throws Exception {
    List<Pod> pods = BenchData.pods(BenchData.generate(PODS, 42), true);
    Path root = Files.createDirectory(tmp.resolve("cgroup"));
    Files.createSymbolicLink(root.resolve("memory"), cg.dir());
    Path fs = Files.createDirectory(tmp.resolve("fs"));
    HostPaths paths = new HostPaths(root, null, fs, fs, "kubepods");
    Clock clock = Clock.systemUTC();
    HostStatsProvider host = new HostStatsProvider(paths, "node", clock);
    Cgroups cgroups = Cgroups.detect(root, "kubepods");

    Path file = cg.tmpfsFile("poll");
    Process dd =
        cg.startIn(
            cg.dir(),
            "exec dd of=\"$2\" bs=64k oflag=append conv=notrunc status=none",
            file.toString());
    OutputStream in = dd.getOutputStream();
    byte[] chunk = new byte[CHUNK];
    Arrays.fill(chunk, (byte) 7);
    in.write(chunk, 0, 64 << 10);
    in.flush();
    TestCgroup.awaitSize(file, 64 << 10);
    TestCgroup.truncate(file);
    Thread.sleep(200);

    Summary base = host.summary();
    long capacity = base.node().memory().availableBytes() + base.node().memory().workingSetBytes();
    long ws = base.node().memory().workingSetBytes();
    long line = ws + HEADROOM + 1;
    Threshold crossing = config(capacity - line).thresholds().get(0);

    LinkedBlockingQueue<Long> facts = new LinkedBlockingQueue<>();
    LinkedBlockingQueue<Sync> syncs = new LinkedBlockingQueue<>();
    AtomicReference<MemoryPoll> pollRef = new AtomicReference<>();
    String json;
    try (Planner planner = new Planner(RuleCompiler.compileDefault(), config(capacity - line));
        EvictionManager manager =
            new EvictionManager(
                planner,
                host,
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
        MemoryPoll poll =
            new MemoryPoll(
                List.of(crossing),
                cgroups,
                Duration.ofSeconds(10),
                (MemoryPollCrossed e) -> {
                  if (e.direction() == Direction.UP) {
                    facts.add(System.nanoTime());
                  }
                  manager.event(e, MemoryPoll.SOURCE, e.direction() == Direction.UP);
                },
                clock)) {
      if (!poll.available()) {
        throw new IllegalStateException("memory poll not available: " + poll.unavailableReason());
      }
      pollRef.set(poll);
      // the agent's warm-up of the decision path, wired as evictd run wires it
      dev.evictd.agent.DecisionWarmUp agentWarmUp = AgentWarmUp.attach(manager);
      manager.addSyncListener(
          (Summary s, EvictionPlan p) -> {
            long now = System.nanoTime();
            pollRef.get().update(s);
            syncs.add(
                new Sync(now, p.decisions().isEmpty() ? null : p.decisions().get(0).pod().key()));
          });
      poll.start();
      manager.start();
      agentWarmUp.started();
      Sync first = syncs.poll(30, TimeUnit.SECONDS);
      if (first == null || first.victim() != null) {
        throw new IllegalStateException("the first sync did not run quietly: " + first);
      }
      // the warm-up the first sync (near the line) started: the crossings come after it
      AgentWarmUp.await(agentWarmUp);

      List<Long> eventToDecision = new ArrayList<>();
      List<Long> eventToFact = new ArrayList<>();
      int missed = 0;
      for (int i = -warmUp; i < crossings; i++) {
        quiesce(facts, syncs);
        long written = 0;
        long event = -1;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        while (event < 0 && System.nanoTime() < deadline) {
          in.write(chunk);
          in.flush();
          written += CHUNK;
          TestCgroup.awaitSize(file, written);
          if (cg.usage() >= line) {
            event = System.nanoTime();
            // one chunk more: usage just over the line may be the kernel's per-CPU charge stock,
            // which it can give back, taking the crossing with it
            in.write(chunk);
            in.flush();
            written += CHUNK;
            break;
          }
          Thread.sleep(PACE_MILLIS);
        }
        Sync decided = null;
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        while (decided == null && System.nanoTime() < until) {
          Sync s = syncs.poll(100, TimeUnit.MILLISECONDS);
          if (s != null && s.victim() != null) {
            decided = s;
          }
        }
        Long fact = facts.peek();
        if (event < 0 || decided == null || fact == null) {
          missed++;
          System.err.printf(
              "crossing %d: %s (usage %d, line %d)%n",
              i,
              event < 0 ? "the hog did not cross" : decided == null ? "no decision" : "no fact",
              cg.usage(),
              line);
        } else if (i >= 0) {
          eventToDecision.add(Math.max(0, decided.nanos() - event));
          eventToFact.add(Math.max(0, fact - event));
        }
        TestCgroup.truncate(file);
        long back = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        while (cg.usage() >= line && System.nanoTime() < back) {
          Thread.sleep(5);
        }
      }

      // Idle: no sync due for 60 s, a poll alone reading the usage file: far from its line (a
      // threshold of 1 MiB: the line is gigabytes away) and near it (1 MiB of headroom).
      quiesce(facts, syncs);
      poll.close();
      Summary s = host.summary();
      long available = s.node().memory().availableBytes();
      long[] intervals = new long[2];
      double[] cpu = new double[2];
      long[] quantities = {1L << 20, available - (1L << 20)};
      for (int k = 0; k < 2; k++) {
        try (MemoryPoll idle =
            new MemoryPoll(
                List.of(config(quantities[k]).thresholds().get(0)),
                cgroups,
                Duration.ofSeconds(10),
                e -> {},
                clock)) {
          idle.update(s);
          idle.start();
          Thread.sleep(200);
          cpu[k] = cpuPercent(idleMillis);
          intervals[k] = idle.currentInterval().toMillis();
        }
      }
      double far = cpu[0];
      double nearPct = cpu[1];
      long farInterval = intervals[0];
      long nearInterval = intervals[1];
      in.close();
      dd.waitFor(5, TimeUnit.SECONDS);
      if (eventToDecision.size() < Math.min(50, crossings)) {
        throw new IllegalStateException(
            "only " + eventToDecision.size() + " of " + crossings + " crossings measured");
      }
      json =
          String.format(
              Locale.ROOT,
              "{\"poll_crossings\": %d, \"poll_missed\": %d, \"poll_event_to_decision_p50_ms\": %.3f, "
                  + "\"poll_event_to_decision_p99_ms\": %.3f, \"poll_event_to_decision_max_ms\": %.3f, "
                  + "\"poll_event_to_fact_p50_ms\": %.3f, \"poll_event_to_fact_p99_ms\": %.3f, "
                  + "\"poll_idle_cpu_far_pct\": %.3f, \"poll_idle_cpu_near_pct\": %.3f, "
                  + "\"poll_interval_far_ms\": %d, \"poll_interval_near_ms\": %d}%n",
              eventToDecision.size(),
              missed,
              EventToDecision.pct(eventToDecision, 50),
              EventToDecision.pct(eventToDecision, 99),
              EventToDecision.pct(eventToDecision, 100),
              EventToDecision.pct(eventToFact, 50),
              EventToDecision.pct(eventToFact, 99),
              far,
              nearPct,
              farInterval,
              nearInterval);
    }
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.writeString(out, json);
    System.out.print(json);
  }

  /** This process's CPU time over {@code millis} of wall time, in percent of one core. */
  private static double cpuPercent(long millis) throws InterruptedException {
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    long c0 = os.getProcessCpuTime();
    long t0 = System.nanoTime();
    Thread.sleep(millis);
    long c1 = os.getProcessCpuTime();
    long t1 = System.nanoTime();
    return 100.0 * (c1 - c0) / (t1 - t0);
  }

  /** Waits until neither a fact nor a sync has come for 50 ms (at most 3 s). */
  private static void quiesce(LinkedBlockingQueue<Long> facts, LinkedBlockingQueue<Sync> syncs)
      throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
    long last = System.nanoTime();
    while (System.nanoTime() < end
        && System.nanoTime() - last < TimeUnit.MILLISECONDS.toNanos(50)) {
      Thread.sleep(5);
      if (facts.poll() != null | syncs.poll() != null) {
        last = System.nanoTime();
      }
    }
    facts.clear();
    syncs.clear();
  }
}
