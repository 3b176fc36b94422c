package dev.evictd.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link YamlComposer#strictUtf8}: the ASCII shortcut decodes as the strict decoder does, and text
 * with any other byte still goes through that decoder (malformed input refused).
 */
class StrictUtf8Test {
  /** The strict decoder alone: what strictUtf8 must answer for every input. */
  private static String reference(byte[] bytes) {
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      return null;
    }
  }

  @Test
  void everyAsciiByteDecodesAsTheStrictDecoderDecodesIt() {
    byte[] all = new byte[128];
    for (int i = 0; i < all.length; i++) {
      all[i] = (byte) i;
    }
    String s = YamlComposer.strictUtf8(all);
    assertThat(s).isEqualTo(reference(all)).hasSize(128);
    assertThat(s.chars().toArray()).isEqualTo(java.util.stream.IntStream.range(0, 128).toArray());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "name: caf\u00e9\n",
        "a: \u4e2d\u6587\n",
        "emoji: \ud83d\ude00\n",
        "\ufeffname: bom\n",
        "x: \ufffd\n"
      })
  void textBeyondAsciiDecodesAsBefore(String text) {
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    assertThat(YamlComposer.strictUtf8(b)).isEqualTo(text).isEqualTo(reference(b));
  }

  @Test
  void malformedOrOverlongBytesAreRefusedWhereverTheyAre() {
    byte[][] bad = {
      {'a', ':', ' ', (byte) 0xC3}, // truncated sequence at the end
      {(byte) 0xC0, (byte) 0x80, 'a'}, // overlong NUL at the start
      {'a', (byte) 0xED, (byte) 0xA0, (byte) 0x80, 'b'}, // an encoded surrogate
      {'x', (byte) 0xFF, 'y'},
      {'a', (byte) 0x80}
    };
    for (byte[] b : bad) {
      assertThat(YamlComposer.strictUtf8(b)).as("%s", java.util.Arrays.toString(b)).isNull();
      assertThat(reference(b)).isNull();
    }
  }

  @Test
  void randomBytesAgreeWithTheStrictDecoder() {
    Random r = new Random(42);
    for (int i = 0; i < 2_000; i++) {
      byte[] b = new byte[r.nextInt(40)];
      for (int j = 0; j < b.length; j++) {
        // mostly ASCII, now and then a byte of a multi-byte sequence or a stray one
        b[j] = r.nextInt(8) == 0 ? (byte) (0x80 + r.nextInt(128)) : (byte) r.nextInt(128);
      }
      assertThat(YamlComposer.strictUtf8(b)).isEqualTo(reference(b));
    }
  }
}
