package dev.evictd.testing.prop;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * A small property-based test runner: generates cases from seeded {@link Choices}, checks a
 * property on each, and shrinks the first failing case by simplifying its recorded choices
 * (deleting runs, zeroing, lowering values) while it still fails. The failure message carries the
 * seed, the shrunk case as the caller renders it, and the property's own description of what went
 * wrong.
 *
 * <p>{@code -Devictd.prop.seed=N} and {@code -Devictd.prop.tries=N} override the seed and the
 * number of cases.
 *
 * @param <T> the generated case
 */
public final class Property<T> {
  /** The outcome of checking one case: null when the property holds, else what went wrong. */
  @FunctionalInterface
  public interface Check<T> {
    String failure(T value) throws Exception;
  }

  private final String name;
  private final Function<Choices, T> generator;
  private final Check<T> check;
  private Function<T, String> render = String::valueOf;
  private long seed = 0x5EEDL;
  private int tries = 100;
  private int maxShrinkRuns = 2_000;
  private long maxShrinkMillis = 120_000;

  private Property(String name, Function<Choices, T> generator, Check<T> check) {
    this.name = name;
    this.generator = generator;
    this.check = check;
  }

  /** A property named {@code name} over the cases {@code generator} draws. */
  public static <T> Property<T> of(String name, Function<Choices, T> generator, Check<T> check) {
    return new Property<>(name, generator, check);
  }

  /** How a failing case is shown in the failure message. */
  public Property<T> render(Function<T, String> render) {
    this.render = render;
    return this;
  }

  /** The default seed (the system property {@code evictd.prop.seed} overrides it). */
  public Property<T> seed(long seed) {
    this.seed = seed;
    return this;
  }

  /** The default number of cases (the system property {@code evictd.prop.tries} overrides it). */
  public Property<T> tries(int tries) {
    this.tries = tries;
    return this;
  }

  /** Limits on shrinking: property runs and wall-clock time. */
  public Property<T> shrinkLimits(int runs, long millis) {
    this.maxShrinkRuns = runs;
    this.maxShrinkMillis = millis;
    return this;
  }

  /** The outcome of a run. */
  public record Report(int cases, long seed) {}

  /**
   * Checks the property on every case; throws {@link AssertionError} with the shrunk failing case.
   */
  public Report check() {
    long s = Long.getLong("evictd.prop.seed", seed);
    int n = Integer.getInteger("evictd.prop.tries", tries);
    for (int i = 0; i < n; i++) {
      long caseSeed = s + i * 0x9E3779B97F4A7C15L;
      Choices choices = Choices.random(caseSeed);
      T value = generator.apply(choices);
      String failure = evaluate(value);
      if (failure != null) {
        fail(i, s, choices.drawn(), value, failure);
      }
    }
    return new Report(n, s);
  }

  /** Runs the check on one case: the failure, or null. */
  private String evaluate(T value) {
    try {
      return check.failure(value);
    } catch (Throwable t) { // the property must never throw: any throwable is a failure to report
      if (t instanceof VirtualMachineError && !(t instanceof StackOverflowError)) {
        throw (VirtualMachineError) t;
      }
      return "threw " + t + stackHead(t);
    }
  }

  private static String stackHead(Throwable t) {
    StringBuilder b = new StringBuilder();
    StackTraceElement[] st = t.getStackTrace();
    for (int i = 0; i < Math.min(8, st.length); i++) {
      b.append("\n    at ").append(st[i]);
    }
    return b.toString();
  }

  private void fail(int index, long s, long[] original, T value, String failure) {
    Shrunk<T> shrunk = shrink(original, value, failure);
    throw new AssertionError(
        name
            + ": falsified at case "
            + index
            + " (seed "
            + s
            + "; rerun with -Devictd.prop.seed="
            + s
            + "), shrunk in "
            + shrunk.steps
            + " steps ("
            + shrunk.runs
            + " runs) from "
            + original.length
            + " to "
            + shrunk.choices.length
            + " choices.\n"
            + shrunk.failure
            + "\n--- shrunk case ---\n"
            + render.apply(shrunk.value));
  }

  private record Shrunk<T>(long[] choices, T value, String failure, int steps, int runs) {}

  /**
   * Greedy shrinking of the choice sequence; a candidate is kept when it is simpler and still
   * fails.
   */
  private Shrunk<T> shrink(long[] start, T startValue, String startFailure) {
    Shrinker s = new Shrinker(start, startValue, startFailure);
    boolean progress = true;
    while (progress && s.budgetLeft()) {
      progress = false;
      // delete whole structures (a step, a pod, a container, an optional part), the largest first
      List<int[]> spans = new ArrayList<>(s.spans);
      spans.sort((a, b) -> Integer.compare(b[1] - b[0], a[1] - a[0]));
      for (int[] span : spans) {
        if (!s.budgetLeft()) {
          break;
        }
        if (span[1] <= s.best.length) {
          // the structure deleted, or reduced to its simplest first choice (an optional part made
          // absent)
          long[] c = new long[s.best.length - (span[1] - span[0])];
          System.arraycopy(s.best, 0, c, 0, span[0]);
          System.arraycopy(s.best, span[1], c, span[0], s.best.length - span[1]);
          long[] z = new long[s.best.length - (span[1] - span[0]) + 1];
          System.arraycopy(s.best, 0, z, 0, span[0]);
          System.arraycopy(s.best, span[1], z, span[0] + 1, s.best.length - span[1]);
          if (s.tryCandidate(c) || (span[1] - span[0] > 1 && s.tryCandidate(z))) {
            progress = true;
            break; // the spans moved: recompute them
          }
        }
      }
      if (progress) {
        continue;
      }
      // simplest value for each choice
      for (int i = 0; i < s.best.length && s.budgetLeft(); i++) {
        if (s.best[i] != 0) {
          long[] c = s.best.clone();
          c[i] = 0;
          progress |= s.tryCandidate(c);
        }
      }
      // delete short runs of choices
      for (int k : new int[] {2, 1}) {
        for (int i = s.best.length - k; i >= 0 && s.budgetLeft(); i--) {
          long[] c = new long[s.best.length - k];
          System.arraycopy(s.best, 0, c, 0, i);
          System.arraycopy(s.best, i + k, c, i, s.best.length - i - k);
          progress |= s.tryCandidate(c);
        }
      }
      // lower single choices: halve, decrement
      for (int i = 0; i < s.best.length && s.budgetLeft(); i++) {
        long v = s.best[i];
        for (long lower : new long[] {v / 2, v - 1}) {
          if (lower > 0 && lower < v && s.best[i] == v) {
            long[] c = s.best.clone();
            c[i] = lower;
            if (s.tryCandidate(c)) {
              progress = true;
              break;
            }
          }
        }
      }
    }
    return new Shrunk<>(s.best, s.bestValue, s.bestFailure, s.steps, s.runs);
  }

  /** The state of one shrink: the simplest failing case so far and the budget spent. */
  private final class Shrinker {
    final long deadline = System.currentTimeMillis() + maxShrinkMillis;
    final java.util.Set<java.util.List<Long>> tried = new java.util.HashSet<>();
    long[] best;
    List<int[]> spans;
    T bestValue;
    String bestFailure;
    int steps;
    int runs;

    Shrinker(long[] best, T bestValue, String bestFailure) {
      Choices replay = Choices.replay(best);
      generator.apply(replay);
      this.spans = replay.spans();
      this.best = best;
      this.bestValue = bestValue;
      this.bestFailure = bestFailure;
    }

    boolean budgetLeft() {
      return runs < maxShrinkRuns && System.currentTimeMillis() < deadline;
    }

    /**
     * Replays {@code candidate}; keeps it when the case it generates is simpler and still fails.
     */
    boolean tryCandidate(long[] candidate) {
      Choices replay = Choices.replay(candidate);
      T value;
      try {
        value = generator.apply(replay);
      } catch (RuntimeException e) {
        return false; // a generator that cannot read this sequence: not a simpler case
      }
      long[] used = replay.drawn();
      if (!simpler(used, best) || !tried.add(java.util.Arrays.stream(used).boxed().toList())) {
        return false;
      }
      runs++;
      String failure = evaluate(value);
      if (failure == null) {
        return false;
      }
      best = used;
      spans = replay.spans();
      bestValue = value;
      bestFailure = failure;
      steps++;
      return true;
    }
  }

  /** Shortlex order: fewer choices, then smaller ones. */
  static boolean simpler(long[] a, long[] b) {
    if (a.length != b.length) {
      return a.length < b.length;
    }
    return Arrays.compare(a, b) < 0;
  }
}
