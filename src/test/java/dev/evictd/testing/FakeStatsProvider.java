package dev.evictd.testing;

import dev.evictd.api.StatsException;
import dev.evictd.ports.StatsProvider;
import dev.evictd.stats.Summary;
import java.util.ArrayList;
import java.util.List;

/** Statistics set by the test; can be made to fail. */
public final class FakeStatsProvider implements StatsProvider {
  private volatile Summary summary;
  private volatile boolean failing;
  private volatile int reads;
  // when each read began (System.nanoTime), so a test measures the agent's spacing of reads, not
  // how late its own polling thread noticed them on a busy machine
  private final List<Long> readNanos = new java.util.concurrent.CopyOnWriteArrayList<>();

  public void set(Summary s) {
    summary = s;
  }

  public void fail(boolean f) {
    failing = f;
  }

  public int reads() {
    return reads;
  }

  /** The {@link System#nanoTime()} at which read number {@code n} (1 = the first) began. */
  public long readNanos(int n) {
    return readNanos.get(n - 1);
  }

  @Override
  public Summary summary() {
    readNanos.add(System.nanoTime());
    reads++;
    if (failing) {
      throw new StatsException("kubelet unreachable");
    }
    return summary;
  }

  /**
   * A node with memory available/working set (MiB) and pods' working sets (MiB), uid =
   * default/NAME.
   */
  public static Summary memory(long availableMi, long workingSetMi, Object... podNameAndMi) {
    long mi = 1024 * 1024;
    List<Summary.PodStats> pods = new ArrayList<>();
    for (int i = 0; i < podNameAndMi.length; i += 2) {
      String name = (String) podNameAndMi[i];
      long ws = ((Number) podNameAndMi[i + 1]).longValue() * mi;
      pods.add(
          new Summary.PodStats(
              new Summary.PodReference(name, "default", "default/" + name),
              List.of(),
              new Summary.MemoryStats(null, null, null, ws, null),
              List.of(),
              null,
              null));
    }
    return new Summary(
        new Summary.NodeStats(
            "node",
            new Summary.MemoryStats(null, availableMi * mi, null, workingSetMi * mi, null),
            null,
            null,
            null,
            null),
        pods);
  }
}
