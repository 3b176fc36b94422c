package dev.evictd.linux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.MemcgThresholdCrossed.Direction;
import dev.evictd.api.Quantity;
import dev.evictd.api.Signal;
import dev.evictd.api.Threshold;
import dev.evictd.api.ThresholdValue;
import dev.evictd.stats.Summary;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class MemcgLineTest {
  private static final long PAGE = 4096;

  private static Threshold hard(String quantity) {
    return new Threshold(
        "hard memory.available",
        Signal.MEMORY_AVAILABLE,
        ThresholdValue.ofQuantity(Quantity.parse(quantity), quantity),
        Duration.ZERO,
        null,
        0,
        "test",
        false);
  }

  private static Summary node(Long available, Long usage, Long workingSet) {
    Summary.MemoryStats m = new Summary.MemoryStats(null, available, usage, workingSet, null);
    return new Summary(new Summary.NodeStats("n", m, null, null, null, null), List.of());
  }

  /** The eviction threshold's own test: memory.available < quantity, available = capacity − ws. */
  private static boolean met(long capacity, long quantity, long usage, long inactiveFile) {
    return capacity - (usage - inactiveFile) < quantity;
  }

  @Test
  void registeredValueIsTheFirstWholePageAboveTheKubeletLine() {
    assertThat(MemcgLine.registeredBytes(0, PAGE)).isEqualTo(PAGE);
    assertThat(MemcgLine.registeredBytes(1, PAGE)).isEqualTo(PAGE);
    assertThat(MemcgLine.registeredBytes(PAGE - 1, PAGE)).isEqualTo(PAGE);
    // usage equal to the line does not meet the threshold (strictly above is needed)
    assertThat(MemcgLine.registeredBytes(PAGE, PAGE)).isEqualTo(2 * PAGE);
    assertThat(MemcgLine.registeredBytes(10 * PAGE + 1, PAGE)).isEqualTo(11 * PAGE);
    assertThat(MemcgLine.registeredBytes(10 * PAGE + 1, 65536)).isEqualTo(65536);
    assertThatThrownBy(() -> MemcgLine.registeredBytes(1, 0))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void theKernelLineOfTheRegisteredValueIsWhereTheThresholdBecomesMet() {
    // the reported case: a line 1 byte past a page; the kernel truncates a value registered as is
    // to the page below, where memory.available is still 1 byte above the quantity
    long capacity = 25_000L * 1_048_576;
    for (long line : new long[] {2L << 20, (2L << 20) + 1, (2L << 20) + PAGE - 1, 12345678}) {
      long quantity = capacity - line;
      long asIs = MemcgLine.kernelLine(line, PAGE);
      long registered = MemcgLine.kernelLine(MemcgLine.registeredBytes(line, PAGE), PAGE);
      assertThat(met(capacity, quantity, asIs, 0)).as("as is, line %d", line).isFalse();
      assertThat(met(capacity, quantity, registered, 0)).as("registered, line %d", line).isTrue();
      assertThat(met(capacity, quantity, registered - PAGE, 0))
          .as("one page below the registered value, line %d", line)
          .isFalse();
    }
  }

  @Test
  void sideComparesUsageWithTheKernelLine() {
    assertThat(MemcgLine.kernelLine(10 * PAGE + 1, PAGE)).isEqualTo(10 * PAGE);
    assertThat(MemcgLine.side(10 * PAGE, MemcgLine.kernelLine(10 * PAGE + 1, PAGE)))
        .as("usage at a value registered off a page boundary: the kernel counts it as crossed")
        .isEqualTo(Direction.UP);
    assertThat(MemcgLine.side(10 * PAGE - PAGE, 10 * PAGE)).isEqualTo(Direction.DOWN);
  }

  @Test
  void crossingBeforeRegistrationNeedsStatisticsBelowAndUsageNowAtOrAbove() {
    assertThat(MemcgLine.crossedBeforeRegistration(PAGE, 2 * PAGE, 2 * PAGE)).isTrue();
    assertThat(MemcgLine.crossedBeforeRegistration(PAGE, 2 * PAGE, 2 * PAGE - 1)).isFalse();
    assertThat(MemcgLine.crossedBeforeRegistration(2 * PAGE, 2 * PAGE, 3 * PAGE))
        .as("the statistics already showed it: the sync saw it")
        .isFalse();
    assertThat(MemcgLine.crossedBeforeRegistration(null, 2 * PAGE, 3 * PAGE)).isFalse();
  }

  @Test
  void kubeletLineIsCapacityMinusQuantityPlusInactiveFile() {
    // capacity 6Gi + 2Gi; inactive_file 3Gi − 2Gi
    assertThat(MemcgLine.kubeletLine(hard("100Mi"), node(6L << 30, 3L << 30, 2L << 30)))
        .hasValue((8L << 30) - (100L << 20) + (1L << 30));
    assertThat(MemcgLine.kubeletLine(hard("100Mi"), node(6L << 30, null, 2L << 30))).isEmpty();
    assertThat(MemcgLine.kubeletLine(hard("100Mi"), new Summary(null, List.of()))).isEmpty();
  }
}
