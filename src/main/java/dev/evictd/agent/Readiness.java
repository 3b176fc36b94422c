package dev.evictd.agent;

import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * What {@code /readyz} answers: a small set of named conditions, each saying why it is not met (or
 * nothing when it is). The agent is ready when every condition is met; the body lists each one, so
 * an operator sees which is failing. Parts of the agent add their own conditions (e.g. fresh
 * statistics, a synced pod view). Thread-safe.
 */
public final class Readiness {
  /** One condition of readiness. */
  @FunctionalInterface
  public interface Condition {
    /** Why the condition is not met now, or null when it is. */
    String unmet();
  }

  // sorted by name: the body reads the same on every node
  private final Map<String, Condition> conditions = new ConcurrentSkipListMap<>();

  /** Adds (or replaces) the condition {@code name}. */
  public Readiness add(String name, Condition condition) {
    conditions.put(name, condition);
    return this;
  }

  /** Whether every condition is met now. */
  public boolean ready() {
    for (var e : conditions.entrySet()) {
      if (unmet(e.getKey(), e.getValue()) != null) {
        return false;
      }
    }
    return true;
  }

  /** One line per condition, {@code NAME: ok} or {@code NAME: REASON}. */
  public String describe() {
    StringBuilder b = new StringBuilder();
    for (var e : conditions.entrySet()) {
      String why = unmet(e.getKey(), e.getValue());
      b.append(e.getKey()).append(": ").append(why == null ? "ok" : why).append('\n');
    }
    return b.toString();
  }

  private static String unmet(String name, Condition c) {
    try {
      return c.unmet();
    } catch (RuntimeException e) {
      // a condition that cannot be evaluated is not met
      return "cannot tell: " + e;
    }
  }
}
