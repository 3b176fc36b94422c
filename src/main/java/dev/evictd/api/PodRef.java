package dev.evictd.api;

/** Identifies a pod: namespace, name and uid. */
public record PodRef(String namespace, String name, String uid) {

  /** {@code namespace/name}, the form fixtures and messages use. */
  public String key() {
    return namespace + "/" + name;
  }

  @Override
  public String toString() {
    return key();
  }
}
