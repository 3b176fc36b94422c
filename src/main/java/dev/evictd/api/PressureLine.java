package dev.evictd.api;

/** The two lines of a PSI file: some tasks stalled, or all non-idle tasks stalled at once. */
public enum PressureLine {
  SOME("some"),
  FULL("full");

  private final String key;

  PressureLine(String key) {
    this.key = key;
  }

  /** The kernel's word for the line. */
  public String key() {
    return key;
  }

  @Override
  public String toString() {
    return key;
  }
}
