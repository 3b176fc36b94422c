package dev.evictd.testing.prop;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * Property tests on jqwik over {@link Choices}: deterministic cases from a seed, replay, every case
 * checked, and shrinking to a minimal failing case.
 */
class PropertyTest {

  @Test
  void theSameSeedDrawsTheSameChoicesAndAReplayReproducesThem() {
    Choices a = Choices.random(42);
    List<Integer> first = a.listOf(0, 20, 0.7, () -> a.between(0, 1000));
    Choices b = Choices.random(42);
    assertThat(b.listOf(0, 20, 0.7, () -> b.between(0, 1000))).isEqualTo(first);
    Choices replay = Choices.replay(a.drawn());
    assertThat(replay.listOf(0, 20, 0.7, () -> replay.between(0, 1000))).isEqualTo(first);
  }

  @Test
  void aReplayPastItsEndDrawsTheSimplestChoices() {
    Choices c = Choices.replay(new long[0]);
    assertThat(c.listOf(0, 5, 0.9, () -> 1)).isEmpty();
    assertThat(c.between(3, 9)).isEqualTo(3);
    assertThat(c.chance(0.99)).isFalse();
    assertThat(c.pick("first", "second")).isEqualTo("first");
  }

  @Test
  void aPassingPropertyChecksEveryCase() {
    Properties.SEEN.set(0);
    assertThat(JqwikRun.failureOf(Properties.class, "nonNegative")).isNull();
    assertThat(Properties.SEEN.get()).isEqualTo(250);
  }

  @Test
  void aFailureIsShrunkToTheSmallestCase() {
    // fails when the list holds an element of at least 500: the smallest such case is [500]
    Throwable failure = JqwikRun.failureOf(Properties.class, "allSmall");
    assertThat(failure)
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("all small: an element >= 500")
        .hasMessageEndingWith(ChoicesArbitrary.CASE + "\n[500]");
  }

  @Test
  void anExceptionInTheCheckIsAFailureNotACrash() {
    Throwable failure = JqwikRun.failureOf(Properties.class, "throwsAboveThree");
    assertThat(failure)
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("threw java.lang.IllegalStateException: boom 4");
  }

  /** Properties the tests above run with jqwik (the build does not run them by themselves). */
  static class Properties {
    static final AtomicInteger SEEN = new AtomicInteger();

    @Property(tries = 250)
    void nonNegative(@ForAll("zeroToHundred") int v) {
      SEEN.incrementAndGet();
      ChoicesArbitrary.assertHolds("non-negative", v, x -> x >= 0 ? null : "negative", x -> "" + x);
    }

    @Property(tries = 1000, seed = "3")
    void allSmall(@ForAll("lists") List<Integer> l) {
      ChoicesArbitrary.assertHolds(
          "all small",
          l,
          x -> x.stream().anyMatch(e -> e >= 500) ? "an element >= 500" : null,
          String::valueOf);
    }

    @Property(tries = 200, seed = "1")
    void throwsAboveThree(@ForAll("zeroToTen") int v) {
      ChoicesArbitrary.assertHolds(
          "throws",
          v,
          x -> {
            if (x > 3) {
              throw new IllegalStateException("boom " + x);
            }
            return null;
          },
          x -> "" + x);
    }

    @Provide
    Arbitrary<Integer> zeroToHundred() {
      return ChoicesArbitrary.of(c -> c.between(0, 100));
    }

    @Provide
    Arbitrary<Integer> zeroToTen() {
      return ChoicesArbitrary.of(c -> c.between(0, 10));
    }

    @Provide
    Arbitrary<List<Integer>> lists() {
      return ChoicesArbitrary.of(c -> c.listOf(0, 10, 0.8, () -> c.between(0, 1000)));
    }
  }
}
