package dev.evictd.api;

/** The one unchecked exception root of evictd; the CLI maps subtypes to exit codes and one-line messages. */
public class EvictdException extends RuntimeException {
  public EvictdException(String message) {
    super(message);
  }

  public EvictdException(String message, Throwable cause) {
    super(message, cause);
  }
}
