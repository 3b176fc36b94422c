package dev.evictd.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.engine.PodFacts;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Rank keys order exactly: usage above a request past a long or with fractions of a byte does not
 * tie.
 */
class RankKeyTest {

  private static RankKey key(String name, int position, BigDecimal aboveRequest) {
    Pod pod =
        new PodBuilder()
            .withNewMetadata()
            .withName(name)
            .endMetadata()
            .withNewSpec()
            .endSpec()
            .build();
    return RankKey.of(PodFacts.of(pod, position), Signal.MEMORY_AVAILABLE)
        .largerBytes("usageAboveRequest", aboveRequest)
        .build();
  }

  @Test
  void usageAboveRequestIsExact() {
    Quantity huge = Quantity.parse("100Ei");
    assertThat(RankKey.aboveRequest(100L << 20, huge))
        .isGreaterThan(RankKey.aboveRequest(100L << 20, huge.add(Quantity.parse("100Mi"))));
    assertThat(RankKey.aboveRequest(5, Quantity.parse("100m"))).isEqualByComparingTo("4.9");
  }

  @Test
  void keysThatSaturateTheSameLongStillOrderByTheirExactValues() {
    // decimal exa: Go caps only binary-SI amounts at 2^63-1 when parsing, so 100E and 200E stay
    // exact
    RankKey p0 = key("p0", 0, RankKey.aboveRequest(0, Quantity.parse("200E")));
    RankKey p1 = key("p1", 1, RankKey.aboveRequest(0, Quantity.parse("100E")));
    assertThat(p0.components().get(0).value())
        .isEqualTo(p1.components().get(0).value())
        .isEqualTo(Long.MIN_VALUE);
    List<RankKey> keys = new ArrayList<>(List.of(p0, p1));
    keys.sort(null);
    assertThat(keys).extracting(RankKey::uid).containsExactly("default/p1", "default/p0");
  }

  @Test
  void exactBytesAreShownAsAQuantity() {
    RankKey.Component c = key("p", 0, BigDecimal.valueOf(100L << 20)).components().get(0);
    assertThat(c.shownValue()).isEqualTo("100Mi");
    assertThat(c.value()).isEqualTo(100L << 20);
    assertThat(
            key("q", 0, RankKey.aboveRequest(0, Quantity.parse("1m")))
                .components()
                .get(0)
                .shownValue())
        .isEqualTo("-1m");
  }
}
