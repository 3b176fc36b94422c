package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class SyncPacingTest {
  static final long MS = 1_000_000;

  @Test
  void aSyncStartsAtLeastTheGapAfterTheOneBefore() {
    SyncPacing p = new SyncPacing(Duration.ofMillis(50));
    assertThat(p.waitNanos(1_000 * MS)).as("the first at once").isZero();
    p.started(1_000 * MS);
    assertThat(p.waitNanos(1_006 * MS)).isEqualTo(44 * MS);
    assertThat(p.waitNanos(1_050 * MS)).isZero();
    assertThat(p.waitNanos(5_000 * MS)).isZero();
  }

  @Test
  void anAskEveryFewMillisecondsGetsAtMostOneSyncPerGap() {
    SyncPacing p = new SyncPacing(SyncPacing.MIN_GAP);
    int syncs = 0;
    for (long t = 0; t < 1_000 * MS; t += 6 * MS) { // the poll's ~6 ms on the real node
      if (p.waitNanos(t) == 0) {
        p.started(t);
        syncs++;
      }
    }
    assertThat(syncs)
        .isLessThanOrEqualTo((int) (1000 / SyncPacing.MIN_GAP.toMillis()))
        .isPositive();
  }
}
