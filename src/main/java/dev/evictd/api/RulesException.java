package dev.evictd.api;

/**
 * Thrown when a rule set cannot be compiled, is refused, or fails at runtime. Its message lists one
 * problem per line ({@code file:line: reason}) and is kept as written.
 */
public class RulesException extends EvictdException {
  public RulesException(String message) {
    super(message, null, true);
  }

  public RulesException(String message, Throwable cause) {
    super(message, cause, true);
  }
}
