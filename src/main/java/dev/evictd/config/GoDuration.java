package dev.evictd.config;

import java.time.Duration;

/**
 * Go's {@code time.ParseDuration} and {@code Duration.String}, exactly: "300ms", "-1.5h", "2h45m",
 * "0".
 */
public final class GoDuration {
  private GoDuration() {}

  /**
   * Parses a Go duration string.
   *
   * @throws IllegalArgumentException with Go's message (e.g. {@code time: missing unit in duration
   *     "30"})
   */
  public static Duration parse(String s) {
    String orig = s;
    boolean neg = false;
    if (!s.isEmpty() && (s.charAt(0) == '-' || s.charAt(0) == '+')) {
      neg = s.charAt(0) == '-';
      s = s.substring(1);
    }
    if (s.equals("0")) {
      return Duration.ZERO;
    }
    if (s.isEmpty()) {
      throw invalid(orig);
    }
    // Go accumulates nanoseconds in a uint64 and refuses values past 1<<63.
    java.math.BigInteger total = java.math.BigInteger.ZERO;
    int i = 0;
    while (i < s.length()) {
      char c = s.charAt(i);
      if (!(c == '.' || (c >= '0' && c <= '9'))) {
        throw invalid(orig);
      }
      int start = i;
      while (i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
        i++;
      }
      String intPart = s.substring(start, i);
      boolean pre = !intPart.isEmpty();
      String frac = "";
      boolean post = false;
      if (i < s.length() && s.charAt(i) == '.') {
        i++;
        int fs = i;
        while (i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
          i++;
        }
        frac = s.substring(fs, i);
        post = !frac.isEmpty();
      }
      if (!pre && !post) {
        throw invalid(orig);
      }
      int us = i;
      while (i < s.length()) {
        char u = s.charAt(i);
        if (u == '.' || (u >= '0' && u <= '9')) {
          break;
        }
        i++;
      }
      if (us == i) {
        throw new IllegalArgumentException("time: missing unit in duration " + quote(orig));
      }
      String unit = s.substring(us, i);
      long unitNanos = unitNanos(unit);
      if (unitNanos < 0) {
        throw new IllegalArgumentException(
            "time: unknown unit " + quote(unit) + " in duration " + quote(orig));
      }
      java.math.BigDecimal v =
          new java.math.BigDecimal((pre ? intPart : "0") + (post ? "." + frac : ""));
      java.math.BigInteger nanos =
          v.multiply(java.math.BigDecimal.valueOf(unitNanos))
              .setScale(0, java.math.RoundingMode.DOWN)
              .toBigIntegerExact();
      total = total.add(nanos);
      if (total.bitLength() > 63
          && !(neg && total.equals(java.math.BigInteger.ONE.shiftLeft(63)))) {
        throw invalid(orig);
      }
    }
    long n = neg ? total.negate().longValue() : total.longValue();
    return Duration.ofNanos(n);
  }

  private static long unitNanos(String unit) {
    switch (unit) {
      case "ns":
        return 1L;
      case "us":
      case "\u00b5s":
      case "\u03bcs":
        return 1_000L;
      case "ms":
        return 1_000_000L;
      case "s":
        return 1_000_000_000L;
      case "m":
        return 60_000_000_000L;
      case "h":
        return 3_600_000_000_000L;
      default:
        return -1;
    }
  }

  private static IllegalArgumentException invalid(String orig) {
    return new IllegalArgumentException("time: invalid duration " + quote(orig));
  }

  private static String quote(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  /** Formats a duration as Go's {@code Duration.String} does: "1m30s", "500ms", "0s". */
  public static String format(Duration d) {
    long n = d.toNanos();
    if (n == 0) {
      return "0s";
    }
    boolean neg = n < 0;
    java.math.BigInteger u = java.math.BigInteger.valueOf(n).abs();
    StringBuilder sb = new StringBuilder();
    java.math.BigInteger second = java.math.BigInteger.valueOf(1_000_000_000L);
    if (u.compareTo(second) < 0) {
      long v = u.longValue();
      String unit;
      long div;
      if (v < 1_000L) {
        return (neg ? "-" : "") + v + "ns";
      } else if (v < 1_000_000L) {
        unit = "\u00b5s";
        div = 1_000L;
      } else {
        unit = "ms";
        div = 1_000_000L;
      }
      return (neg ? "-" : "") + fraction(v, div) + unit;
    }
    long v = u.longValue();
    long hours = v / 3_600_000_000_000L;
    v -= hours * 3_600_000_000_000L;
    long minutes = v / 60_000_000_000L;
    v -= minutes * 60_000_000_000L;
    if (neg) {
      sb.append('-');
    }
    if (hours > 0) {
      sb.append(hours).append('h');
    }
    if (hours > 0 || minutes > 0) {
      sb.append(minutes).append('m');
    }
    sb.append(fraction(v, 1_000_000_000L)).append('s');
    return sb.toString();
  }

  private static String fraction(long v, long div) {
    long whole = v / div;
    long rem = v % div;
    if (rem == 0) {
      return Long.toString(whole);
    }
    String digits = Long.toString(div + rem).substring(1);
    int end = digits.length();
    while (end > 0 && digits.charAt(end - 1) == '0') {
      end--;
    }
    return whole + "." + digits.substring(0, end);
  }
}
