package dev.evictd.api;

/** Thrown when node statistics cannot be read. */
public class StatsException extends EvictdException {
  public StatsException(String message) {
    super(message);
  }

  public StatsException(String message, Throwable cause) {
    super(message, cause);
  }
}
