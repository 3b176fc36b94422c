package dev.evictd.linux;

import dev.evictd.api.PressureLine;

/**
 * A PSI trigger: notify when tasks stalled for {@code stallMicros} within any {@code windowMicros}
 * window, written to a pressure file as {@code "some|full <stall µs> <window µs>"}. The kernel
 * takes windows from 500 ms to 10 s; without CAP_SYS_RESOURCE (as evictd usually runs, and on this
 * project's hosts) windows must be multiples of 2 s.
 */
public record PsiTrigger(PressureLine line, long stallMicros, long windowMicros) {
  /** The shortest window the kernel accepts. */
  public static final long MIN_WINDOW_MICROS = 500_000;

  /** The longest window the kernel accepts. */
  public static final long MAX_WINDOW_MICROS = 10_000_000;

  /** Windows must be multiples of this without CAP_SYS_RESOURCE. */
  public static final long UNPRIVILEGED_WINDOW_STEP_MICROS = 2_000_000;

  public PsiTrigger {
    if (line == null) {
      throw new IllegalArgumentException("PSI trigger without a line (some or full)");
    }
    if (windowMicros < MIN_WINDOW_MICROS || windowMicros > MAX_WINDOW_MICROS) {
      throw new IllegalArgumentException(
          "PSI trigger window " + windowMicros + " µs is outside 500000..10000000 µs");
    }
    if (stallMicros <= 0 || stallMicros > windowMicros) {
      throw new IllegalArgumentException(
          "PSI trigger stall "
              + stallMicros
              + " µs must be positive and at most the window ("
              + windowMicros
              + " µs)");
    }
  }

  /**
   * Parses {@code "some 150000 2000000"}; throws IllegalArgumentException naming the text when
   * malformed.
   */
  public static PsiTrigger parse(String text) {
    String[] f = text == null ? new String[0] : text.trim().split("\\s+");
    if (f.length != 3 || !(f[0].equals("some") || f[0].equals("full"))) {
      throw new IllegalArgumentException(
          "not a PSI trigger: \"" + text + "\" (expected \"some|full <stall µs> <window µs>\")");
    }
    try {
      return new PsiTrigger(
          f[0].equals("some") ? PressureLine.SOME : PressureLine.FULL,
          Long.parseLong(f[1]),
          Long.parseLong(f[2]));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "not a PSI trigger: \"" + text + "\" (expected \"some|full <stall µs> <window µs>\")");
    }
  }

  /** The text written to the pressure file. */
  @Override
  public String toString() {
    return line.key() + " " + stallMicros + " " + windowMicros;
  }
}
