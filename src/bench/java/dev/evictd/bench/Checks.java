package dev.evictd.bench;

import dev.evictd.api.EvictionPlan;
import dev.evictd.reference.KubeletReference;

/** What a benchmarked sync must have done, so that a benchmark never silently measures nothing. */
final class Checks {
  private Checks() {}

  static void quiet(EvictionPlan p, String what) {
    if (p.failed() || !p.decisions().isEmpty() || p.signal() != null) {
      throw new IllegalStateException(what + ": expected a quiet sync, got " + describe(p));
    }
  }

  static void check(Scenario s, EvictionPlan p, String what) {
    if (p == null) {
      throw new IllegalStateException(what + ": no sync ran");
    }
    if (s.kind.equals("oscillate")) {
      return;
    }
    if (s.kind.equals("e2d")) {
      if (p.failed() || p.decisions().size() > 1) {
        throw new IllegalStateException(
            what + ": expected at most one decision, got " + describe(p));
      }
      return;
    }
    if (!s.decides) {
      quiet(p, what);
      return;
    }
    if (p.failed() || p.decisions().size() != 1 || p.ranking().size() != s.size) {
      throw new IllegalStateException(
          what + ": expected every pod ranked and one decision, got " + describe(p));
    }
  }

  static void check(Scenario s, KubeletReference.Result r, String what) {
    if (r == null) {
      throw new IllegalStateException(what + ": no sync ran");
    }
    if (s.kind.equals("oscillate") || s.kind.equals("e2d")) {
      return;
    }
    boolean decided = r.evictions().size() == 1 && r.ranking().size() == s.size;
    if (decided != s.decides) {
      throw new IllegalStateException(
          what + ": unexpected reference result " + r.signal() + " " + r.evictions());
    }
  }

  static void sameDecision(EvictionPlan p, KubeletReference.Result r, String what) {
    String planned = p.decisions().isEmpty() ? null : p.decisions().get(0).pod().key();
    String ref = r.evictions().isEmpty() ? null : r.evictions().get(0).pod();
    if (!java.util.Objects.equals(planned, ref)) {
      throw new IllegalStateException(
          what + ": planner evicts " + planned + ", the reference " + ref);
    }
  }

  private static String describe(EvictionPlan p) {
    return "failure="
        + p.failure()
        + " signal="
        + p.signal()
        + " ranked="
        + p.ranking().size()
        + " decisions="
        + p.decisions().stream().map(d -> d.pod().key()).toList()
        + " warnings="
        + p.warnings();
  }
}
