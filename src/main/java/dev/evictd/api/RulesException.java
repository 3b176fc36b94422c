package dev.evictd.api;

/** Thrown when a rule set cannot be compiled, is refused, or fails at runtime. */
public class RulesException extends EvictdException {
  public RulesException(String message) {
    super(message);
  }

  public RulesException(String message, Throwable cause) {
    super(message, cause);
  }
}
