package dev.evictd.engine;

/** Thrown on the rule thread when a rule fails during a sync; its message is the sync's failure. */
final class RuleFailure extends RuntimeException {
  RuleFailure(String message) {
    super(message, null, false, false);
  }
}
