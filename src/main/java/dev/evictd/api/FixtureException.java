package dev.evictd.api;

/** Thrown when a fixture file cannot be loaded. */
public class FixtureException extends EvictdException {
  public FixtureException(String message) {
    super(message);
  }

  public FixtureException(String message, Throwable cause) {
    super(message, cause);
  }
}
