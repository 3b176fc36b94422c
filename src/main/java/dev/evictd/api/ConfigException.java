package dev.evictd.api;

/** Thrown when a configuration (kubelet eviction settings or agent config) is invalid. */
public class ConfigException extends EvictdException {
  public ConfigException(String message) {
    super(message);
  }

  public ConfigException(String message, Throwable cause) {
    super(message, cause);
  }
}
