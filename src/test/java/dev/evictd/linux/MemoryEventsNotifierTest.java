package dev.evictd.linux;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.MemoryEventsChanged;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kernel marks memory.events modified (inotify IN_MODIFY on the cgroup directory) when a
 * counter moves; a plain directory gets the same event when the file is rewritten. The real kernel
 * is checked in the cgroup v2 VM (V2Checks).
 */
class MemoryEventsNotifierTest {
  private static String events(long high, long max, long oom, long oomKill) {
    return "low 0\nhigh "
        + high
        + "\nmax "
        + max
        + "\noom "
        + oom
        + "\noom_kill "
        + oomKill
        + "\noom_group_kill 0\n";
  }

  @Test
  void aChangedCounterIsOneFactWithTotalsAndDeltas(@TempDir Path cgroup) throws Exception {
    Path file = Files.writeString(cgroup.resolve("memory.events"), events(5, 0, 0, 0));
    LinkedBlockingQueue<MemoryEventsChanged> facts = new LinkedBlockingQueue<>();
    try (MemoryEventsNotifier n = new MemoryEventsNotifier(cgroup, facts::add, Clock.systemUTC())) {
      assertThat(n.available()).as(String.valueOf(n.unavailableReason())).isTrue();
      Files.writeString(cgroup.resolve("cgroup.events"), "populated 1\nfrozen 0\n");
      Files.writeString(file, events(5, 0, 0, 0)); // modified, counters unchanged
      assertThat(facts.poll(500, TimeUnit.MILLISECONDS)).as("no change, no fact").isNull();
      Files.writeString(file, events(9, 2, 1, 1));
      MemoryEventsChanged f = facts.poll(10, TimeUnit.SECONDS);
      assertThat(f).as("a fact for the change").isNotNull();
      assertThat(f)
          .isEqualTo(new MemoryEventsChanged(file.toString(), 9, 2, 1, 1, 4, 2, 1, 1, f.time()));
      assertThat(f.limitReached()).isTrue();
      Files.writeString(file, events(12, 2, 1, 1));
      MemoryEventsChanged high = facts.poll(10, TimeUnit.SECONDS);
      assertThat(high).isNotNull();
      assertThat(high.highDelta()).isEqualTo(3);
      assertThat(high.limitReached()).as("memory.high throttling only").isFalse();
    }
  }

  @Test
  void withoutTheFileTheNotifierSaysWhy(@TempDir Path cgroup) {
    try (MemoryEventsNotifier n = new MemoryEventsNotifier(cgroup, f -> {}, Clock.systemUTC())) {
      assertThat(n.available()).isFalse();
      assertThat(n.unavailableReason())
          .isEqualTo(
              cgroup.resolve("memory.events") + " does not exist (not a cgroup v2 memory cgroup)");
    }
  }
}
