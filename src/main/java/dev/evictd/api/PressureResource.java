package dev.evictd.api;

/** A resource the kernel reports pressure stall information (PSI) for. */
public enum PressureResource {
  MEMORY("memory"),
  IO("io"),
  CPU("cpu");

  private final String key;

  PressureResource(String key) {
    this.key = key;
  }

  /**
   * The kernel's name: the file name under {@code /proc/pressure} and the prefix of {@code
   * <key>.pressure}.
   */
  public String key() {
    return key;
  }

  @Override
  public String toString() {
    return key;
  }
}
