package dev.evictd.bench;

import static dev.evictd.bench.BenchData.MI;

import dev.evictd.agent.AgentMetrics;
import dev.evictd.agent.EvictionManager;
import dev.evictd.agent.HttpEndpoints;
import dev.evictd.agent.Readiness;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.FsLayout;
import dev.evictd.engine.Planner;
import dev.evictd.engine.PodCompaction;
import dev.evictd.executor.DryRunEvictor;
import dev.evictd.k8s.SummaryJson;
import dev.evictd.ports.EventSink;
import dev.evictd.ports.PodSource;
import dev.evictd.ruleset.RuleCompiler;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * The agent's loop at scale for the footprint benchmark: the default rules, the real manager,
 * metrics and endpoints, {@code args[0]} pods of which {@code args[2]} are replaced by new ones
 * (new names and uids) every sync, and a kubelet summary of them serialized and parsed again each
 * sync as the kubelet provider does; every tenth sync is under memory pressure (ranking and a
 * dry-run decision). Runs syncs every second for {@code args[1]} seconds; prints one line per ten
 * syncs so the caller knows it is turning. With {@code args[3]} {@code real}, the pods are {@link
 * RealPods}: a Deployment's pods parsed from JSON as the informer gets them.
 */
public final class ChurnAgent {
  private ChurnAgent() {}

  public static void main(String[] args) throws Exception {
    int n = Integer.parseInt(args[0]);
    int seconds = Integer.parseInt(args[1]);
    int churn = Integer.parseInt(args[2]);
    boolean real = args.length > 3 && args[3].equals("real");
    java.util.function.Function<List<BenchData.GenPod>, List<Pod>> make =
        g -> real ? g.stream().map(RealPods::pod).toList() : BenchData.pods(g, true);
    Clock clock = Clock.systemUTC();
    JsonMapper json =
        JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .addModule(SummaryJson.module())
            .build();
    Random random = new Random(7);
    List<BenchData.GenPod> gen = new ArrayList<>(BenchData.generate(n, 42));
    int[] next = {n};
    int[] syncs = {0};
    Object lock = new Object();
    // like an informer's store: unchanged pods keep their objects, a new pod is a new object, kept
    // as NodePodInformer's store keeps it
    List<Pod> store = new ArrayList<>(make.apply(gen));
    store.replaceAll(PodCompaction::forStore);
    List<List<Pod>> view = new ArrayList<>(List.of(List.copyOf(store)));
    PodSource pods =
        () -> {
          synchronized (lock) {
            return view.get(0);
          }
        };
    dev.evictd.ports.StatsProvider stats =
        () -> {
          synchronized (lock) {
            // churn: pods replaced by new ones, as deployments roll
            for (int i = 0; i < churn; i++) {
              int at = random.nextInt(gen.size());
              BenchData.GenPod old = gen.get(at);
              int k = next[0]++;
              BenchData.GenPod fresh =
                  new BenchData.GenPod(
                      k,
                      old.ns(),
                      String.format("pod-%07d", k),
                      old.priority(),
                      old.requestMi(),
                      16 + random.nextInt(768),
                      old.diskMi());
              gen.set(at, fresh);
              store.set(at, PodCompaction.forStore(make.apply(List.of(fresh)).get(0)));
            }
            view.set(0, List.copyOf(store));
            boolean pressure = ++syncs[0] % 10 == 0;
            Summary s = BenchData.memory(gen, pressure ? 512 * MI : 8192 * MI, 0, -1);
            // what the kubelet provider does with every answer
            return json.readValue(json.writeValueAsBytes(s), Summary.class);
          }
        };
    AgentMetrics metrics = new AgentMetrics(clock);
    Planner planner =
        new Planner(
            RuleCompiler.compileDefault(),
            BenchData.config(BenchData.MEMORY_CONFIG, FsLayout.SHARED));
    try (EvictionManager m =
            new EvictionManager(
                planner,
                stats,
                pods,
                new DryRunEvictor(),
                a -> true,
                EventSink.NONE,
                metrics,
                clock,
                new EvictionManager.Settings(
                    Duration.ofSeconds(1), Duration.ZERO, EvictionMethod.DRY_RUN, true, false));
        HttpEndpoints http =
            new HttpEndpoints("127.0.0.1:0", metrics::scrape, m::healthy, () -> true, () -> "")) {
      Readiness readiness = new Readiness();
      m.addReadinessConditions(readiness);
      m.start();
      long end = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
      int reported = 0;
      while (System.nanoTime() < end) {
        Thread.sleep(200);
        int done;
        synchronized (lock) {
          done = syncs[0];
        }
        if (done / 10 > reported) {
          reported = done / 10;
          System.out.println("churn-agent: " + done + " syncs, " + readiness.describe().strip());
        }
      }
    }
    planner.close();
  }
}
