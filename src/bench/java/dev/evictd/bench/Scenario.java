package dev.evictd.bench;

import static dev.evictd.bench.BenchData.GI;
import static dev.evictd.bench.BenchData.MI;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.FsLayout;
import dev.evictd.engine.PlannerHooks;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;

/**
 * One benchmarked sync, at a scale: the node's configuration and pods, the summary of a first
 * (quiet) sync that puts the pods in place, and two summaries the benchmark alternates between so
 * that every invocation really changes the statistics it is about.
 *
 * <ul>
 *   <li>{@code steady}: nothing under pressure; between the two summaries one pod's working set
 *       moves by 1Mi (and node memory with it).
 *   <li>{@code pressure}: memory.available below its 1Gi hard threshold; every pod's working set
 *       moves by 1Mi between the two summaries: every pod is ranked and one is evicted, every sync.
 *   <li>{@code disk}: nodefs.available below its 10Gi hard threshold on a shared filesystem;
 *       node-level reclaim (containers, images) frees too little; every pod's writable layer moves
 *       by 1Mi: ranking and a decision.
 * </ul>
 */
public final class Scenario {
  public final String kind;
  public final int size;
  public final EvictionConfig config;
  public final List<Pod> pods;
  public final Summary initial;
  public final Summary[] summaries;

  /** Statistics after node-level reclaim, per summary (null: reclaim is not expected). */
  public final Summary[] afterReclaim;

  /** Whether every sync of the alternating summaries must decide an eviction. */
  public final boolean decides;

  private Scenario(
      String kind,
      int size,
      EvictionConfig config,
      List<Pod> pods,
      Summary initial,
      Summary[] summaries,
      Summary[] afterReclaim,
      boolean decides) {
    this.kind = kind;
    this.size = size;
    this.config = config;
    this.pods = pods;
    this.initial = initial;
    this.summaries = summaries;
    this.afterReclaim = afterReclaim;
    this.decides = decides;
  }

  /** The scenario {@code kind} (steady, pressure, disk) with {@code size} pods. */
  public static Scenario of(String kind, int size) {
    switch (kind) {
      case "steady":
        {
          int bumped = size / 2;
          return memory(
              kind,
              size,
              gen ->
                  new Summary[] {
                    BenchData.memory(gen, 8 * GI, 0, -1),
                    BenchData.memory(gen, 8 * GI - MI, 0, bumped)
                  },
              false);
        }
      case "pressure":
        return memory(
            kind,
            size,
            gen ->
                new Summary[] {
                  BenchData.memory(gen, 512 * MI, 0, -1), BenchData.memory(gen, 511 * MI, 1, -1)
                },
            true);
      case "oscillate":
        // not a JMH benchmark: for profiling what a memcg crossing costs (quiet sync, pressure
        // sync, quiet...)
        return memory(
            kind,
            size,
            gen ->
                new Summary[] {
                  BenchData.memory(gen, 8 * GI, 0, -1), BenchData.memory(gen, 512 * MI, 1, -1)
                },
            false);
      case "e2d":
        {
          // not a JMH benchmark: the event path's syncs as bench/run.sh's e2d part has them (pods
          // from a file, no pod statistics: the node's alone), a quiet sync then a pressure sync
          List<BenchData.GenPod> gen = BenchData.generate(size, 42);
          return new Scenario(
              kind,
              size,
              BenchData.config(BenchData.MEMORY_CONFIG, FsLayout.SHARED),
              BenchData.pods(gen, true),
              nodeOnly(BenchData.memory(gen, 8 * GI, 0, -1)),
              new Summary[] {
                nodeOnly(BenchData.memory(gen, 8 * GI, 0, -1)),
                nodeOnly(BenchData.memory(gen, 512 * MI, 0, -1))
              },
              new Summary[] {null, null},
              false);
        }
      case "disk":
        {
          List<BenchData.GenPod> gen = BenchData.generate(size, 7);
          return new Scenario(
              kind,
              size,
              BenchData.config(BenchData.DISK_CONFIG, FsLayout.SHARED),
              BenchData.pods(gen, false),
              BenchData.disk(gen, 100 * GI, 0),
              new Summary[] {BenchData.disk(gen, 5 * GI, 0), BenchData.disk(gen, 5 * GI - MI, 1)},
              new Summary[] {
                nodeOnly(BenchData.disk(gen, 6 * GI, 0)),
                nodeOnly(BenchData.disk(gen, 6 * GI - MI, 1))
              },
              true);
        }
      default:
        throw new IllegalArgumentException("unknown scenario " + kind);
    }
  }

  /**
   * A memory scenario: the memory configuration, pods with memory statistics, a quiet first sync,
   * then the two summaries {@code steps} makes of the generated pods.
   */
  private static Scenario memory(
      String kind,
      int size,
      java.util.function.Function<List<BenchData.GenPod>, Summary[]> steps,
      boolean decides) {
    List<BenchData.GenPod> gen = BenchData.generate(size, 42);
    return new Scenario(
        kind,
        size,
        BenchData.config(BenchData.MEMORY_CONFIG, FsLayout.SHARED),
        BenchData.pods(gen, true),
        BenchData.memory(gen, 8 * GI, 0, -1),
        steps.apply(gen),
        new Summary[] {null, null},
        decides);
  }

  private static Summary nodeOnly(Summary s) {
    return new Summary(s.node(), List.of());
  }

  /** The planner hooks of summary {@code i}: reclaim succeeds and leaves {@link #afterReclaim}. */
  public PlannerHooks hooks(int i) {
    Summary after = afterReclaim[i] == null ? summaries[i] : afterReclaim[i];
    return PlannerHooks.noReclaim(after);
  }
}
