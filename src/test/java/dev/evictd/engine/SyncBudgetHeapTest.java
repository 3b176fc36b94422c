package dev.evictd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The allocation budget of a sync never exceeds what the heap can give the rules (issue 48). */
class SyncBudgetHeapTest {
  private static final long MI = 1024L * 1024;

  @Test
  void aSyncMayAllocateWhatIsFreeLessTheAgentsReserve() {
    // 192 MiB heap, 40 MiB live: 192 - 40 - 48 (a fourth) = 104 MiB, not 512 MiB plus per pod
    assertThat(SyncBudget.heapCap(192 * MI, 40 * MI)).isEqualTo(104 * MI);
    // a small heap keeps at least 32 MiB for the agent
    assertThat(SyncBudget.heapCap(96 * MI, 10 * MI)).isEqualTo(54 * MI);
    // a nearly full heap still lets a sync run its default rules
    assertThat(SyncBudget.heapCap(192 * MI, 180 * MI)).isEqualTo(16 * MI);
  }

  @Test
  void theDefaultBudgetIsBelowThisJvmsHeap() {
    long max = Runtime.getRuntime().maxMemory();
    assertThat(SyncBudget.DEFAULT.allocatedBytesFor(5000))
        .isLessThanOrEqualTo(max - SyncBudget.reserve(max))
        .isPositive();
    assertThat(SyncBudget.DEFAULT.withAllocation(0, 0).allocatedBytesFor(10)).isZero();
  }
}
