package dev.evictd.hostile;

import dev.evictd.api.EvictdException;
import dev.evictd.testing.prop.Choices;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Hostile inputs and the contract every loader keeps with them: it returns, or throws an {@link
 * EvictdException} whose message is one line naming the file, within a time limit. Never another
 * exception, a stack overflow, a hang or a message that echoes an enormous value.
 */
final class Hostile {
  /** How long one load may take: long enough for a slow shared machine, short of a hang. */
  static final long TIMEOUT_SECONDS = 60;

  /** Longest acceptable error message: a message must not echo an enormous value. */
  static final int MAX_MESSAGE = 2_000;

  private static final ExecutorService EXEC =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(null, r, "hostile-input", 16L * 1024 * 1024);
            t.setDaemon(true);
            return t;
          });

  private Hostile() {}

  /** Values that break types, ranges and parsers. */
  static final List<String> VALUES =
      List.of(
          "-1Gi",
          "-1",
          "99999999999999999999999999999",
          "9223372036854775808",
          "-9223372036854775809",
          "1e400",
          "1e-400",
          "NaN",
          ".inf",
          "-.inf",
          "true",
          "null",
          "~",
          "[]",
          "{}",
          "[1, [2, [3]]]",
          "{a: {b: {c: d}}}",
          "\"\\u0000\"",
          "\"\\uFFFF\"",
          "0x7fffffff",
          "0o777",
          "1.5",
          "abc",
          "memory.availabel",
          "bogus.signal",
          "-0",
          "1E",
          "100000000000000000000Ei",
          "0.000000001n",
          "1e18Ei",
          "12:30:45",
          "2026-01-01",
          "!!binary AAAA",
          "!!str 1Gi",
          "!!int x",
          "!!timestamp nope",
          "&anchor 1Gi",
          "*undefined",
          "'single ''quoted'''",
          "|\n  literal\n",
          "-5m",
          "300000000000000h",
          "1h2x",
          "-100%",
          "1000%",
          "50.5.5%",
          "%",
          "%%");

  /** Tokens that break YAML structure when inserted anywhere. */
  static final List<String> TOKENS =
      List.of(
          "{",
          "}",
          "[",
          "]",
          ":",
          "- ",
          "? ",
          "&a ",
          "*a ",
          "!!python/object:x ",
          "%YAML 1.1\n",
          "\t",
          "\"",
          "'",
          "\\",
          "\n",
          "---\n",
          "...\n",
          "|",
          ">",
          "#",
          ",",
          "@",
          "`",
          "\u0085",
          "\u2028",
          "\uFEFF",
          "\uD83D\uDE00",
          "<<: *a\n");

  /** A deeply nested flow sequence (a parser that recurses overflows its stack). */
  static String deepNesting(int depth) {
    return "[".repeat(depth) + "]".repeat(depth) + "\n";
  }

  /** A deeply nested block mapping. */
  static String deepMapping(int depth) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < depth; i++) {
      b.append(" ".repeat(i)).append("a:\n");
    }
    return b.append(" ".repeat(depth)).append("b\n").toString();
  }

  /** The billion-laughs alias bomb. */
  static String aliasBomb() {
    StringBuilder b =
        new StringBuilder(
            "a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
    for (int i = 1; i < 10; i++) {
      b.append("a").append(i).append(": &a").append(i).append(" [");
      for (int j = 0; j < 9; j++) {
        b.append(j == 0 ? "" : ",").append("*a").append(i - 1);
      }
      b.append("]\n");
    }
    return b.toString();
  }

  /**
   * Mutates a valid document: truncations, inserted tokens, replaced scalars and keys, byte-level
   * damage (NUL, invalid UTF-8, BOM, UTF-16), or the whole text replaced by a bomb.
   */
  static byte[] mutate(Choices c, String valid) {
    String text = valid;
    int n = c.between(1, 3);
    byte[] bytes = null;
    for (int i = 0; i < n; i++) {
      int op = c.between(0, 9);
      int at = text.isEmpty() ? 0 : c.between(0, text.length());
      switch (op) {
        case 0 -> text = text.substring(0, at); // truncation
        case 1 -> text = text.substring(0, at) + c.pick(TOKENS) + text.substring(at);
        case 2, 3 -> text = replaceScalar(c, text, c.pick(VALUES));
        case 4 -> text = replaceKey(c, text);
        case 5 ->
            text =
                replaceScalar(
                    c, text, "\"" + "x".repeat(c.pick(10_000, 200_000, 2_000_000)) + "\"");
        case 6 ->
            text =
                c.pick(
                    deepNesting(c.pick(1_000, 20_000)),
                    deepMapping(c.pick(300, 1_500)),
                    aliasBomb());
        case 7 ->
            text =
                text.substring(0, at) + "\n" + aliasBomb().replace("a", "z") + text.substring(at);
        default -> {
          byte[] b = text.getBytes(StandardCharsets.UTF_8);
          int pos = b.length == 0 ? 0 : c.between(0, b.length - 1);
          byte[][] damage = {
            {0},
            {(byte) 0xC3, 0x28},
            {(byte) 0xFF},
            {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF},
            {(byte) 0x80}
          };
          byte[] d = c.pick(damage);
          if (c.chance(0.2)) {
            return text.getBytes(StandardCharsets.UTF_16);
          }
          byte[] out = new byte[b.length + d.length];
          System.arraycopy(b, 0, out, 0, pos);
          System.arraycopy(d, 0, out, pos, d.length);
          System.arraycopy(b, pos, out, pos + d.length, b.length - pos);
          bytes = out;
        }
      }
      if (bytes != null) {
        return bytes;
      }
    }
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /** Replaces the value after the n-th "key: " with {@code value}. */
  private static String replaceScalar(Choices c, String text, String value) {
    List<Integer> colons = new java.util.ArrayList<>();
    for (int i = text.indexOf(": "); i >= 0; i = text.indexOf(": ", i + 1)) {
      colons.add(i);
    }
    if (colons.isEmpty()) {
      return text + value;
    }
    int at = c.pick(colons) + 2;
    int end = at;
    while (end < text.length() && ",}\n]".indexOf(text.charAt(end)) < 0) {
      end++;
    }
    return text.substring(0, at) + value + text.substring(end);
  }

  /** Replaces the n-th key with an unknown or misspelled one. */
  private static String replaceKey(Choices c, String text) {
    List<Integer> colons = new java.util.ArrayList<>();
    for (int i = text.indexOf(": "); i >= 0; i = text.indexOf(": ", i + 1)) {
      colons.add(i);
    }
    if (colons.isEmpty()) {
      return text;
    }
    int end = c.pick(colons);
    int start = end;
    while (start > 0 && " {,\n-".indexOf(text.charAt(start - 1)) < 0) {
      start--;
    }
    String key =
        c.pick(
            "stepz",
            "evictionHardd",
            "memory.availabel",
            "bogus.signal",
            "kind",
            "__proto__",
            "\"\"");
    return text.substring(0, start) + key + text.substring(end);
  }

  /**
   * Runs {@code load} with a time limit: null when it returned or threw a clear {@link
   * EvictdException} (one line, naming {@code file}, not enormous); otherwise what went wrong.
   */
  static String contract(String file, Callable<?> load) {
    Future<?> f = EXEC.submit(load);
    try {
      f.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
      return null;
    } catch (TimeoutException e) {
      f.cancel(true);
      return "did not finish within " + TIMEOUT_SECONDS + " s";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "interrupted";
    } catch (ExecutionException e) {
      return clearError(file, e.getCause());
    }
  }

  /**
   * Null when {@code t} is a clear one-line error naming {@code file}; otherwise what is wrong with
   * it.
   */
  static String clearError(String file, Throwable t) {
    if (!(t instanceof EvictdException)) {
      StringBuilder b = new StringBuilder("threw ").append(t);
      StackTraceElement[] st = t.getStackTrace();
      for (int i = 0; i < Math.min(10, st.length); i++) {
        b.append("\n    at ").append(st[i]);
      }
      return b.toString();
    }
    String m = t.getMessage();
    if (m == null || m.isBlank()) {
      return "an EvictdException without a message";
    }
    if (m.length() > MAX_MESSAGE) {
      return "a message of " + m.length() + " characters: " + m.substring(0, 300) + "...";
    }
    if (m.indexOf('\n') >= 0 || m.indexOf('\r') >= 0) {
      return "a message of more than one line: " + m;
    }
    if (!m.contains(file)) {
      return "a message that does not name the file " + file + ": " + m;
    }
    return null;
  }

  /** A printable excerpt of hostile bytes for failure messages. */
  static String show(byte[] bytes) {
    String s = new String(bytes, StandardCharsets.UTF_8);
    if (s.length() > 3_000) {
      s =
          s.substring(0, 1_500)
              + "\n... ("
              + s.length()
              + " characters) ...\n"
              + s.substring(s.length() - 1_500);
    }
    StringBuilder b = new StringBuilder();
    s.codePoints()
        .forEach(
            cp -> {
              if (cp == '\n' || (cp >= 0x20 && cp < 0x7f)) {
                b.appendCodePoint(cp);
              } else {
                b.append(String.format("\\u{%x}", cp));
              }
            });
    return b.toString();
  }
}
