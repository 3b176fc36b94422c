package dev.evictd.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.RankKey;
import dev.evictd.api.Signal;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The planner sorts rank keys through longs when it can: the order must be exactly their natural
 * order.
 */
class RankOrderTest {
  private static final long[] EDGES = {
    Long.MIN_VALUE, Long.MIN_VALUE + 1, -1, 0, 1, Long.MAX_VALUE - 1, Long.MAX_VALUE
  };

  private static long value(Random r) {
    switch (r.nextInt(4)) {
      case 0:
        return EDGES[r.nextInt(EDGES.length)];
      case 1:
        return r.nextInt(3);
      default:
        return r.nextLong() >> r.nextInt(64);
    }
  }

  private static List<RankKey> keys(Random r, int n, boolean sameShape, boolean exactOnly) {
    List<RankKey> keys = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      List<RankKey.Component> cs = new ArrayList<>();
      int levels = sameShape ? 4 : 3 + r.nextInt(2);
      for (int l = 0; l < levels; l++) {
        boolean descending = l % 2 == 0; // keys of mixed directions have no consistent order at all
        long v = value(r);
        if (!exactOnly && r.nextInt(20) == 0) {
          // an amount past a long, or with a fraction: saturated value, exact amount
          BigDecimal exact =
              r.nextBoolean()
                  ? BigDecimal.valueOf(v).multiply(BigDecimal.TEN.pow(20))
                  : BigDecimal.valueOf(v).add(new BigDecimal("0.5"));
          cs.add(new RankKey.Component("l" + l, v, descending, false, exact));
        } else {
          cs.add(new RankKey.Component("l" + l, v, descending, r.nextBoolean()));
        }
      }
      // positions repeat now and then: equal keys keep their list order
      keys.add(new RankKey("uid-" + i, Signal.MEMORY_AVAILABLE, r.nextInt(n / 2 + 1), cs));
    }
    return keys;
  }

  @Test
  void sortsExactlyAsTheNaturalOrder() {
    Random r = new Random(8);
    for (int round = 0; round < 300; round++) {
      List<RankKey> keys = keys(r, 1 + r.nextInt(200), round % 3 != 0, round % 2 == 0);
      List<RankKey> expected = new ArrayList<>(keys);
      expected.sort(Comparator.naturalOrder());
      assertThat(RankOrder.sorted(keys)).as("round " + round).containsExactlyElementsOf(expected);
    }
  }
}
