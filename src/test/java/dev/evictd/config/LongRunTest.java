package dev.evictd.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.ConfigException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A run of bytes snakeyaml would scan as one piece, longer than {@link YamlComposer#MAX_RUN}, is
 * refused before it is scanned (it cost its length squared); anything shorter, and long values
 * broken by spaces or separators, as in compact JSON, read as before.
 */
class LongRunTest {
  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void aPlainOrQuotedValueLongerThanTheLimitIsRefusedWithItsLine() {
    String run = "x".repeat(YamlComposer.MAX_RUN + 1);
    for (String text : new String[] {"a: 1\nb: " + run + "\n", "a: 1\nb: \"" + run + "\"\n"}) {
      assertThatThrownBy(() -> YamlNode.parse("f.yaml", bytes(text)))
          .isInstanceOf(ConfigException.class)
          .hasMessageStartingWith("f.yaml:2: more than 1048576 bytes without a space");
    }
  }

  @Test
  void valuesUpToTheLimitAndLongTextsOfShortPiecesAreRead() {
    String run = "y".repeat(YamlComposer.MAX_RUN);
    assertThat(YamlNode.parse("f.yaml", bytes("b: " + run + "\n")).get("b").asText())
        .isEqualTo(run);
    // 4 MB of words, and a compact JSON list of 200,000 numbers on one line
    String words = "w ".repeat(2 * 1024 * 1024).strip();
    assertThat(YamlNode.parse("f.yaml", bytes("b: " + words + "\n")).get("b").asText())
        .hasSize(words.length());
    StringBuilder json = new StringBuilder("{\"n\":[");
    for (int i = 0; i < 200_000; i++) {
      json.append(i == 0 ? "" : ",").append(1_000_000 + i);
    }
    json.append("]}");
    assertThat(YamlNode.parse("f.json", bytes(json.toString())).get("n").asList()).hasSize(200_000);
  }
}
