package dev.evictd.api;

import java.util.Optional;

/**
 * How the node's filesystems are laid out, which decides containerfs thresholds, disk ranking and
 * reclaim.
 */
public enum FsLayout {
  /** One filesystem: images, container layers, logs and volumes all on nodefs. */
  SHARED("shared"),
  /** A dedicated image filesystem holding images and container writable layers. */
  DEDICATED("dedicated"),
  /** Images on imagefs, container writable layers on nodefs (KubeletSeparateDiskGC). */
  SPLIT("split");

  private final String key;

  FsLayout(String key) {
    this.key = key;
  }

  /** The fixture/config name. */
  public String key() {
    return key;
  }

  /** Whether images live on their own filesystem. */
  public boolean hasImageFs() {
    return this != SHARED;
  }

  /** Whether container writable layers are separate from images. */
  public boolean splitContainerFs() {
    return this == SPLIT;
  }

  /** The layout named {@code key}. */
  public static Optional<FsLayout> fromKey(String key) {
    for (FsLayout l : values()) {
      if (l.key.equals(key)) {
        return Optional.of(l);
      }
    }
    return Optional.empty();
  }

  @Override
  public String toString() {
    return key;
  }
}
