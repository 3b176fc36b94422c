package dev.evictd.api;

/** A node-level reclaim action the kubelet runs before evicting pods for disk pressure. */
public enum ReclaimAction {
  /** Delete all unused (exited) containers. */
  CONTAINERS("containers"),
  /** Delete unused images. */
  IMAGES("images");

  private final String key;

  ReclaimAction(String key) {
    this.key = key;
  }

  /** The name fixtures use: {@code containers} or {@code images}. */
  public String key() {
    return key;
  }

  @Override
  public String toString() {
    return key;
  }
}
