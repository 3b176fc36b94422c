package dev.evictd.bench;

import dev.evictd.api.EvictionPlan;
import java.util.Arrays;

/**
 * Runs one scenario's syncs in a loop, for profiling outside JMH (e.g. with {@code
 * -XX:StartFlightRecording}): {@code Profile KIND PODS SECONDS [rules|reference|inline]}; prints
 * the wall and CPU times and the allocation per sync of the last half. {@code inline} runs the
 * rules as the agent does, on a sync thread (the calling thread made one), with no hand-over to a
 * rule thread. When only some syncs decide an eviction (the {@code e2d} and {@code oscillate}
 * scenarios), the deciding syncs are also given on their own.
 *
 * <p>{@code -Dprofile.pauseMs=P -Dprofile.pausedSeconds=S}: the last S seconds sleep P ms before
 * each sync, as the agent's syncs wait for an event or the next interval, and the figures are of
 * those syncs alone (the code compiled by the back-to-back syncs before them; the core's caches
 * not).
 */
public final class Profile {
  private Profile() {}

  public static void main(String[] args) {
    String kind = args[0];
    int pods = Integer.parseInt(args[1]);
    long seconds = Long.parseLong(args[2]);
    boolean reference = args.length > 3 && args[3].equals("reference");
    if (args.length > 3 && args[3].equals("inline")) {
      dev.evictd.engine.SyncThread.adoptCurrentThread();
    }
    PlannerRun planner = reference ? null : new PlannerRun(kind, pods);
    ReferenceRun ref = reference ? new ReferenceRun(kind, pods) : null;
    long end = System.nanoTime() + seconds * 1_000_000_000L;
    int max = 1 << 20;
    long[] times = new long[max];
    long[] cpu = new long[max];
    long[] alloc = new long[max];
    boolean[] decided = new boolean[max];
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    long tid = Thread.currentThread().getId();
    long pauseMs = Long.getLong("profile.pauseMs", 0);
    long pausedFrom = end - Long.getLong("profile.pausedSeconds", seconds) * 1_000_000_000L;
    int firstPaused = -1;
    int n = 0;
    while (System.nanoTime() < end && n < max) {
      if (pauseMs > 0 && System.nanoTime() >= pausedFrom) {
        firstPaused = firstPaused < 0 ? n : firstPaused;
        try {
          Thread.sleep(pauseMs);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
      long a0 = mx.getThreadAllocatedBytes(tid);
      long c0 = mx.getCurrentThreadCpuTime();
      long t0 = System.nanoTime();
      if (reference) {
        ref.sync();
      } else {
        EvictionPlan p = planner.sync();
        decided[n] = !p.decisions().isEmpty();
      }
      times[n] = System.nanoTime() - t0;
      cpu[n] = mx.getCurrentThreadCpuTime() - c0;
      alloc[n++] = mx.getThreadAllocatedBytes(tid) - a0;
    }
    if (reference) {
      ref.checkLast();
    } else {
      planner.checkLast();
      planner.close();
    }
    String what = (reference ? "reference" : "rules") + " " + kind + " " + pods;
    int from = firstPaused >= 0 ? firstPaused : n / 2;
    String part = firstPaused >= 0 ? "the paused syncs" : "the last half";
    report(what + ": " + n + " syncs; " + part, times, cpu, alloc, from, n, null);
    long deciding = 0;
    for (int i = from; i < n; i++) {
      deciding += decided[i] ? 1 : 0;
    }
    if (deciding > 0 && deciding < n - from) {
      report(what + ": deciding syncs of " + part, times, cpu, alloc, from, n, decided);
    }
  }

  private static void report(
      String what, long[] times, long[] cpu, long[] alloc, int from, int to, boolean[] only) {
    int k = 0;
    long[] t = new long[to - from];
    long[] c = new long[to - from];
    long[] a = new long[to - from];
    for (int i = from; i < to; i++) {
      if (only == null || only[i]) {
        t[k] = times[i];
        c[k] = cpu[i];
        a[k++] = alloc[i];
      }
    }
    t = Arrays.copyOf(t, k);
    c = Arrays.copyOf(c, k);
    a = Arrays.copyOf(a, k);
    Arrays.sort(t);
    Arrays.sort(c);
    Arrays.sort(a);
    System.out.printf(
        "%s (%d): wall min %.3f median %.3f mean %.3f ms; cpu min %.3f median %.3f p90 %.3f p99"
            + " %.3f ms; allocated median %.0f KiB/sync%n",
        what,
        k,
        t[0] / 1e6,
        t[k / 2] / 1e6,
        Arrays.stream(t).average().orElse(0) / 1e6,
        c[0] / 1e6,
        c[k / 2] / 1e6,
        c[k * 9 / 10] / 1e6,
        c[k * 99 / 100] / 1e6,
        a[k / 2] / 1024.0);
  }
}
