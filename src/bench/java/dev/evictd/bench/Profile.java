package dev.evictd.bench;

import java.util.Arrays;

/**
 * Runs one scenario's syncs in a loop, for profiling outside JMH (e.g. with {@code
 * -XX:StartFlightRecording}): {@code Profile KIND PODS SECONDS [rules|reference]}; prints the
 * minimum, median and mean of the last half.
 */
public final class Profile {
  private Profile() {}

  public static void main(String[] args) {
    String kind = args[0];
    int pods = Integer.parseInt(args[1]);
    long seconds = Long.parseLong(args[2]);
    boolean reference = args.length > 3 && args[3].equals("reference");
    PlannerRun planner = reference ? null : new PlannerRun(kind, pods);
    ReferenceRun ref = reference ? new ReferenceRun(kind, pods) : null;
    long end = System.nanoTime() + seconds * 1_000_000_000L;
    long[] times = new long[1 << 20];
    long[] cpu = new long[1 << 20];
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    long tid = Thread.currentThread().getId();
    long alloc0 = 0;
    int allocFrom = -1;
    int n = 0;
    long half = System.nanoTime() + seconds * 500_000_000L;
    while (System.nanoTime() < end && n < times.length) {
      if (allocFrom < 0 && System.nanoTime() > half) {
        allocFrom = n;
        alloc0 = mx.getThreadAllocatedBytes(tid);
      }
      long c0 = mx.getCurrentThreadCpuTime();
      long t0 = System.nanoTime();
      if (reference) {
        ref.sync();
      } else {
        planner.sync();
      }
      times[n] = System.nanoTime() - t0;
      cpu[n++] = mx.getCurrentThreadCpuTime() - c0;
    }
    if (reference) {
      ref.checkLast();
    } else {
      planner.checkLast();
      planner.close();
    }
    double allocPerSync =
        (mx.getThreadAllocatedBytes(tid) - alloc0) / (double) Math.max(1, n - allocFrom);
    long[] last = Arrays.copyOfRange(times, n / 2, n);
    long[] lastCpu = Arrays.copyOfRange(cpu, n / 2, n);
    Arrays.sort(last);
    Arrays.sort(lastCpu);
    System.out.printf(
        "%s %s %d: %d syncs; last half: wall min %.3f median %.3f mean %.3f ms; cpu min %.3f median %.3f ms; %.0f KiB allocated/sync%n",
        reference ? "reference" : "rules",
        kind,
        pods,
        n,
        last[0] / 1e6,
        last[last.length / 2] / 1e6,
        Arrays.stream(last).average().orElse(0) / 1e6,
        lastCpu[0] / 1e6,
        lastCpu[lastCpu.length / 2] / 1e6,
        allocPerSync / 1024);
  }
}
