package dev.evictd.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class GoDurationTest {
  @ParameterizedTest
  @CsvSource({
    "0, 0",
    "5s, 5000000000",
    "1m30s, 90000000000",
    "1.5h, 5400000000000",
    "300ms, 300000000",
    "-2m, -120000000000",
    "+10ns, 10",
    "1h0m0.5s, 3600500000000",
    ".5s, 500000000",
    "2us, 2000",
  })
  void parsesLikeGo(String text, long nanos) {
    assertThat(GoDuration.parse(text)).isEqualTo(Duration.ofNanos(nanos));
  }

  @ParameterizedTest
  @CsvSource({
    "'', invalid duration",
    "5, missing unit",
    "1d, unknown unit",
    "1.2.3s, missing unit",
    "s, invalid duration",
    "9999999999h, invalid duration",
    "- 5s, invalid duration"
  })
  void refusesLikeGo(String text, String message) {
    assertThatThrownBy(() -> GoDuration.parse(text)).hasMessageContaining(message);
  }

  @Test
  void formatsLikeGo() {
    assertThat(GoDuration.format(Duration.ofSeconds(90))).isEqualTo("1m30s");
    assertThat(GoDuration.format(Duration.ofMinutes(5))).isEqualTo("5m0s");
    assertThat(GoDuration.format(Duration.ofMillis(1500))).isEqualTo("1.5s");
    assertThat(GoDuration.format(Duration.ofMillis(20))).isEqualTo("20ms");
    assertThat(GoDuration.format(Duration.ZERO)).isEqualTo("0s");
    assertThat(GoDuration.format(Duration.ofHours(2))).isEqualTo("2h0m0s");
  }
}
