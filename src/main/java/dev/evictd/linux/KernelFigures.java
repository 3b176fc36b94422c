package dev.evictd.linux;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The figures small kernel files hold, parsed: {@code key value [kB]} tables (memory.stat,
 * memory.events, /proc/meminfo), files holding one integer, and limit files where "max" or the v1
 * "unlimited" value means no limit. A file that cannot be read gives no figures, never an error.
 */
final class KernelFigures {
  private KernelFigures() {}

  /**
   * {@code key value} lines (memory.stat, /proc/meminfo without units) as a map; empty when
   * unreadable.
   */
  static Map<String, Long> readKeyed(Path file) {
    Map<String, Long> out = new LinkedHashMap<>();
    String text;
    try {
      text = KernelFiles.read(file);
    } catch (IOException e) {
      return out;
    }
    // by hand, not with a regular expression and a list of lines: a sync reads /proc/meminfo and
    // memory.stat files, and the garbage of a split per line made the collector run more often
    int n = text.length();
    int i = 0;
    while (i < n) {
      int end = text.indexOf('\n', i);
      if (end < 0) {
        end = n;
      }
      parseKeyed(text, i, end, out);
      i = end + 1;
    }
    return out;
  }

  /** What {@link #readSelected} gives for a key the file does not hold. */
  static final long MISSING = Long.MIN_VALUE;

  /**
   * The values of {@code keys} in a {@code key value [kB]} file, read as {@link #readKeyed} reads
   * them (the last line of a key counts), into {@code out} ({@link #MISSING} where a key is absent
   * or the file unreadable), without a map, a string per line or a boxed value: a sync reads
   * memory.stat of every pod cgroup, where building the map of its 30-50 lines was most of the
   * reading.
   */
  static void readSelected(Path file, String[] keys, long[] out) {
    java.util.Arrays.fill(out, 0, keys.length, MISSING);
    String text;
    try {
      text = KernelFiles.read(file);
    } catch (IOException e) {
      return;
    }
    int n = text.length();
    int i = 0;
    while (i < n) {
      int end = text.indexOf('\n', i);
      if (end < 0) {
        end = n;
      }
      int k = i;
      while (k < end && Character.isWhitespace(text.charAt(k))) {
        k++;
      }
      int keyEnd = k;
      while (keyEnd < end && !separator(text.charAt(keyEnd))) {
        keyEnd++;
      }
      for (int j = 0; j < keys.length; j++) {
        String key = keys[j];
        if (key.length() == keyEnd - k && text.startsWith(key, k)) {
          long v = value(text, keyEnd, end);
          if (v != MISSING) {
            out[j] = v;
          }
        }
      }
      i = end + 1;
    }
  }

  /** The value after a key ending at {@code from}, in bytes; {@link #MISSING} when none. */
  private static long value(String text, int from, int to) {
    int v = from;
    while (v < to && separator(text.charAt(v))) {
      v++;
    }
    if (v == to) {
      return MISSING;
    }
    int valueEnd = v;
    while (valueEnd < to && !separator(text.charAt(valueEnd))) {
      valueEnd++;
    }
    long value;
    try {
      value = Long.parseLong(text, v, valueEnd, 10);
    } catch (NumberFormatException e) {
      return MISSING;
    }
    int u = valueEnd;
    while (u < to && separator(text.charAt(u))) {
      u++;
    }
    int unitEnd = u;
    while (unitEnd < to && !separator(text.charAt(unitEnd))) {
      unitEnd++;
    }
    if (unitEnd - u == 2 && text.startsWith("kB", u)) {
      value *= 1024;
    }
    return value;
  }

  private static boolean separator(char c) {
    return c == ':' || Character.isWhitespace(c);
  }

  /**
   * One {@code key value [kB]} line (fields separated by colons and white space): the value in
   * bytes ({@code kB} multiplied out); lines without an integer value are skipped.
   */
  private static void parseKeyed(String text, int from, int to, Map<String, Long> out) {
    int k = from;
    while (k < to && Character.isWhitespace(text.charAt(k))) {
      k++;
    }
    int keyEnd = k;
    while (keyEnd < to && !separator(text.charAt(keyEnd))) {
      keyEnd++;
    }
    if (keyEnd == k) {
      return;
    }
    long value = value(text, keyEnd, to);
    if (value == MISSING) {
      return; // no value, or not a number: not a figure we use
    }
    out.put(text.substring(k, keyEnd), value);
  }

  /** A file holding one integer; empty when missing or not an integer. */
  static OptionalLong readLong(Path file) {
    try {
      return OptionalLong.of(Long.parseLong(KernelFiles.read(file).trim()));
    } catch (IOException | NumberFormatException e) {
      return OptionalLong.empty();
    }
  }

  /** A limit file: empty when missing, "max" (v2) or the v1 "unlimited" value (close to 2^63). */
  static OptionalLong readLimit(Path file) {
    OptionalLong v = readLong(file);
    if (v.isPresent() && v.getAsLong() >= (Long.MAX_VALUE / 2)) {
      return OptionalLong.empty();
    }
    return v;
  }
}
