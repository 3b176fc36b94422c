package dev.evictd.testing.prop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The property runner: deterministic cases from a seed, replay, and shrinking to a minimal failing
 * case.
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
    int[] seen = {0};
    Property.Report r =
        Property.of("non-negative", c -> c.between(0, 100), v -> v >= 0 ? null : "negative")
            .tries(250)
            .check();
    assertThat(r.cases()).isEqualTo(Integer.getInteger("evictd.prop.tries", 250));
    Property.of(
            "counts",
            c -> c.between(0, 1),
            v -> {
              seen[0]++;
              return null;
            })
        .tries(30)
        .check();
    assertThat(seen[0]).isEqualTo(Integer.getInteger("evictd.prop.tries", 30));
  }

  @Test
  void aFailureIsShrunkToTheSmallestCase() {
    // fails when the list holds an element of at least 500: the smallest such case is [500]
    Property<List<Integer>> p =
        Property.of(
                "all small",
                c -> c.listOf(0, 10, 0.8, () -> c.between(0, 1000)),
                l -> l.stream().anyMatch(x -> x >= 500) ? "an element >= 500" : null)
            .render(String::valueOf)
            .seed(3)
            .tries(1000);
    assertThatThrownBy(p::check)
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("all small: falsified")
        .hasMessageContaining("an element >= 500")
        .hasMessageEndingWith("--- shrunk case ---\n[500]");
  }

  @Test
  void anExceptionInTheCheckIsAFailureNotACrash() {
    Property<Integer> p =
        Property.of(
                "throws",
                c -> c.between(0, 10),
                v -> {
                  if (v > 3) {
                    throw new IllegalStateException("boom " + v);
                  }
                  return null;
                })
            .seed(1)
            .tries(200);
    assertThatThrownBy(p::check)
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("threw java.lang.IllegalStateException: boom 4");
  }
}
