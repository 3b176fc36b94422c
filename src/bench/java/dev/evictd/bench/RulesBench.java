package dev.evictd.bench;

import dev.evictd.api.EvictionPlan;
import dev.evictd.engine.SyncThread;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One sync of the rules planner (a long-lived Drools session, as in the agent). Each invocation
 * alternates between two summaries, so the statistics really change; set-up checks against the
 * kubelet reference that pressure syncs rank every pod and decide the same eviction, tear-down that
 * the last measured sync still did.
 *
 * <p>The steady and pressure syncs run as the agent's do: {@code Planner.sync} called on a sync
 * thread ({@link SyncThread#adoptCurrentThread}: the JMH thread is made one), which runs the rules
 * inline under the shared watchdog with the agent's time and allocation budgets, with no hand-over
 * to a rule thread. What is measured is the whole {@code Planner.sync} call: the fact updates, the
 * rule phases and the plan. The disk sync keeps the hand-over to the planner's rule thread (the
 * path of the CLI's {@code plan} and of fixtures, which do not run on a sync thread).
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 6, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class RulesBench {

  @State(Scope.Thread)
  public static class Steady {
    @Param({"110", "1000", "5000"})
    public int pods;

    PlannerRun run;

    @Setup(Level.Trial)
    public void setUp() {
      SyncThread.adoptCurrentThread(); // Scope.Thread: set-up runs on the benchmark's thread
      run = new PlannerRun("steady", pods);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      run.checkLast();
      run.close();
    }
  }

  @State(Scope.Thread)
  public static class Pressure {
    @Param({"110", "1000", "5000"})
    public int pods;

    PlannerRun run;

    @Setup(Level.Trial)
    public void setUp() {
      SyncThread.adoptCurrentThread();
      run = new PlannerRun("pressure", pods);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      run.checkLast();
      run.close();
    }
  }

  @State(Scope.Thread)
  public static class Disk {
    @Param({"1000"})
    public int pods;

    PlannerRun run;

    @Setup(Level.Trial)
    public void setUp() {
      run = new PlannerRun("disk", pods);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      run.checkLast();
      run.close();
    }
  }

  @Benchmark
  public EvictionPlan steady(Steady s) {
    return s.run.sync();
  }

  @Benchmark
  public EvictionPlan pressure(Pressure s) {
    return s.run.sync();
  }

  @Benchmark
  public EvictionPlan disk(Disk s) {
    return s.run.sync();
  }
}
