package dev.evictd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The kept-facts budget's estimates reuse one table of objects seen from sync to sync: the
 * estimates must be those of a fresh table, and the table must hold no fact between estimates.
 */
class KeptFactsTest {
  /** A fact of a type whose fields are followed (its package is below dev.evictd). */
  static final class Node {
    Object a;
    Object b;

    Node(Object a, Object b) {
      this.a = a;
      this.b = b;
    }
  }

  private static List<Object> facts(int n, Object shared) {
    List<Object> facts = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      facts.add(new Node(shared, "fact " + i));
    }
    return facts;
  }

  @Test
  void aReusedTableGivesTheEstimatesOfAFreshOne() {
    KeptFacts.Seen seen = new KeptFacts.Seen();
    long[] big = new long[1 << 12];
    List<List<Object>> syncs =
        List.of(facts(100, big), facts(3, "x"), facts(100, big), facts(500, new Node(big, big)));
    for (List<Object> facts : syncs) {
      long fresh = KeptFacts.estimate(facts, 0);
      assertThat(KeptFacts.estimate(facts, 0, seen)).isEqualTo(fresh);
      // the shared array counted once, as a fresh table counts it: nothing of the last sync stays
      assertThat(fresh).isLessThan(facts.size() * 8L * big.length);
      assertThat(KeptFacts.estimate(facts, 1000, seen)).isEqualTo(KeptFacts.estimate(facts, 1000));
    }
  }

  @Test
  void theTableIsGivenBackEmptyAndKeptOnlyWhileSmall() {
    KeptFacts.Seen seen = new KeptFacts.Seen();
    assertThat(seen.holdsTable()).isFalse();
    KeptFacts.estimate(facts(10, "x"), 0, seen);
    assertThat(seen.holdsTable()).isTrue();
    java.util.IdentityHashMap<Object, Boolean> table = seen.take(10);
    assertThat(table).isEmpty(); // no fact is held between syncs
    seen.give(table);
    KeptFacts.estimate(facts(KeptFacts.KEPT_TABLE, "x"), 0, seen); // some 32,000 objects
    assertThat(seen.holdsTable()).isFalse();
    KeptFacts.estimate(facts(10, "x"), 0, seen);
    assertThat(seen.holdsTable()).isTrue();
  }

  @Test
  void anEstimateThatThrowsGivesTheTableBackEmpty() {
    KeptFacts.Seen seen = new KeptFacts.Seen();
    KeptFacts.estimate(facts(10, "x"), 0, seen);
    List<Object> failing =
        new ArrayList<>(facts(10, "x")) {
          @Override
          public java.util.Iterator<Object> iterator() {
            java.util.Iterator<Object> it = super.iterator();
            return new java.util.Iterator<>() {
              int n;

              @Override
              public boolean hasNext() {
                return it.hasNext();
              }

              @Override
              public Object next() {
                if (++n > 5) {
                  throw new IllegalStateException("changed while walked");
                }
                return it.next();
              }
            };
          }
        };
    assertThatThrownBy(() -> KeptFacts.estimate(failing, 0, seen))
        .isInstanceOf(IllegalStateException.class);
    assertThat(seen.holdsTable()).isTrue();
    java.util.IdentityHashMap<Object, Boolean> table = seen.take(10);
    assertThat(table).isEmpty();
    assertThat(seen.todoEmpty()).isTrue();
  }

  @Test
  void anEstimateOverItsLimitLeavesNothingQueued() {
    KeptFacts.Seen seen = new KeptFacts.Seen();
    List<Object> facts = facts(100, new long[1 << 12]);
    assertThat(KeptFacts.estimate(facts, 100, seen)).isGreaterThan(100);
    assertThat(seen.todoEmpty()).isTrue();
    assertThat(KeptFacts.estimate(facts, 0, seen)).isEqualTo(KeptFacts.estimate(facts, 0));
  }

  @Test
  void rankKeysAreReadByTheirAccessorsAndEstimatedAsByReflection() {
    assertThat(KeptFacts.readsByAccessors(dev.evictd.api.RankKey.class)).isTrue();
    assertThat(KeptFacts.readsByAccessors(dev.evictd.api.RankKey.Component.class)).isTrue();
    assertThat(KeptFacts.readsByAccessors(Node.class)).isFalse();
    java.util.Random r = new java.util.Random(18);
    for (int round = 0; round < 50; round++) {
      List<Object> facts = new ArrayList<>();
      String shared = "level" + round;
      for (int i = 0, n = r.nextInt(40); i < n; i++) {
        List<dev.evictd.api.RankKey.Component> cs = new ArrayList<>();
        for (int l = r.nextInt(5); l > 0; l--) {
          String name = r.nextBoolean() ? shared : "level \u20ac" + r.nextInt(1000);
          long v = r.nextInt(3) == 0 ? r.nextLong() : r.nextInt(20);
          java.math.BigDecimal exact =
              r.nextBoolean()
                  ? java.math.BigDecimal.valueOf(v)
                  : new java.math.BigDecimal(java.math.BigInteger.ONE.shiftLeft(r.nextInt(300)));
          cs.add(new dev.evictd.api.RankKey.Component(name, v, r.nextBoolean(), false, exact));
        }
        dev.evictd.api.RankKey k =
            new dev.evictd.api.RankKey(
                "uid-" + r.nextInt(50), dev.evictd.api.Signal.MEMORY_AVAILABLE, i, cs);
        facts.add(k);
        if (r.nextInt(4) == 0) {
          facts.add(new Node(k, k.components())); // shared with a fact read by reflection
        }
      }
      long byReflection = KeptFacts.estimateByReflection(facts);
      assertThat(KeptFacts.estimate(facts, 0)).isEqualTo(byReflection);
      assertThat(KeptFacts.estimate(facts, 0, new KeptFacts.Seen())).isEqualTo(byReflection);
    }
  }
}
