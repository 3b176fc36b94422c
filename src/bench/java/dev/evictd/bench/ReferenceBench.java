package dev.evictd.bench;

import dev.evictd.reference.KubeletReference;
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
 * One sync of the plain-Java kubelet reference ({@code KubeletReference}, test scope), on the same
 * scenarios as {@link RulesBench}, in the same run: the ratio of the two is what the targets are
 * about.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 6, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ReferenceBench {

  @State(Scope.Thread)
  public static class Steady {
    @Param({"110", "1000", "5000"})
    public int pods;

    ReferenceRun run;

    @Setup(Level.Trial)
    public void setUp() {
      run = new ReferenceRun("steady", pods);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      run.checkLast();
    }
  }

  @State(Scope.Thread)
  public static class Pressure {
    @Param({"110", "1000", "5000"})
    public int pods;

    ReferenceRun run;

    @Setup(Level.Trial)
    public void setUp() {
      run = new ReferenceRun("pressure", pods);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      run.checkLast();
    }
  }

  @State(Scope.Thread)
  public static class Disk {
    @Param({"1000"})
    public int pods;

    ReferenceRun run;

    @Setup(Level.Trial)
    public void setUp() {
      run = new ReferenceRun("disk", pods);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      run.checkLast();
    }
  }

  @Benchmark
  public KubeletReference.Result steady(Steady s) {
    return s.run.sync();
  }

  @Benchmark
  public KubeletReference.Result pressure(Pressure s) {
    return s.run.sync();
  }

  @Benchmark
  public KubeletReference.Result disk(Disk s) {
    return s.run.sync();
  }
}
