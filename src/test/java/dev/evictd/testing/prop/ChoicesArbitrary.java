package dev.evictd.testing.prop;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Shrinkable;
import net.jqwik.api.ShrinkingDistance;

/**
 * A jqwik {@link Arbitrary} over cases that a generator draws from {@link Choices}, so that
 * generators keep describing a whole scenario (a node, its pods, steps of statistics) in one
 * function while jqwik runs, seeds, shrinks and reports. A case shrinks by simplifying the choices
 * it was drawn from (deleting a structure such as a pod or a step, zeroing, deleting runs, lowering
 * values) and drawing it again: any simpler sequence still generates a valid case.
 *
 * <p>Shrinking one failure tries at most a given number of simpler cases (2,000 by default), on top
 * of jqwik's time bound ({@code jqwik.shrinking.bounded.seconds}): lowering a choice one step at a
 * time could otherwise go on for a million steps.
 *
 * <p>{@code -Devictd.prop.seed=N} shifts every case's choices, to explore other cases than the
 * property's fixed jqwik seed draws.
 */
public final class ChoicesArbitrary {
  private ChoicesArbitrary() {}

  /** What one check found: null when the property holds, else what went wrong. */
  @FunctionalInterface
  public interface Check<T> {
    /** The failure, or null. */
    String failure(T value) throws Exception;
  }

  /** The cases {@code generator} draws; shrinking a failure tries at most 2,000 cases. */
  public static <T> Arbitrary<T> of(Function<Choices, T> generator) {
    return of(generator, 2_000);
  }

  /** The cases {@code generator} draws; shrinking a failure tries at most {@code shrinkRuns}. */
  public static <T> Arbitrary<T> of(Function<Choices, T> generator, int shrinkRuns) {
    long shift = Long.getLong("evictd.prop.seed", 0L);
    return Arbitraries.fromGenerator(
        (Random random) -> {
          Choices c = Choices.random(random.nextLong() + shift);
          T value = generator.apply(c);
          return new Drawn<>(generator, c.drawn(), c.spans(), value, new int[] {shrinkRuns});
        });
  }

  /**
   * Checks {@code value} against the property described by {@code property}; throws {@link
   * AssertionError} with the failure and the case as {@code render} shows it (for a scenario: a
   * fixture ready to be saved). A throwable of the check is a failure too, so that it shrinks and
   * is shown the same way.
   */
  public static <T> void assertHolds(
      String property, T value, Check<T> check, Function<T, String> render) {
    String failure;
    try {
      failure = check.failure(value);
    } catch (Throwable t) { // the check must never throw: any throwable is a failure to report
      if (t instanceof VirtualMachineError && !(t instanceof StackOverflowError)) {
        throw (VirtualMachineError) t;
      }
      failure = "threw " + t + stackHead(t);
    }
    if (failure != null) {
      throw new AssertionError(
          property + ": " + failure + "\n" + CASE + "\n" + render.apply(value));
    }
  }

  /** The line between a failure and the case it was found on. */
  public static final String CASE = "--- failing case ---";

  private static String stackHead(Throwable t) {
    StringBuilder b = new StringBuilder();
    StackTraceElement[] st = t.getStackTrace();
    for (int i = 0; i < Math.min(8, st.length); i++) {
      b.append("\n    at ").append(st[i]);
    }
    return b.toString();
  }

  /** Shortlex order: fewer choices, then smaller ones. */
  static boolean simpler(long[] a, long[] b) {
    if (a.length != b.length) {
      return a.length < b.length;
    }
    return Arrays.compare(a, b) < 0;
  }

  /** A drawn case with the choices it came from; its shrinks are simpler choice sequences. */
  private static final class Drawn<T> implements Shrinkable<T> {
    private final Function<Choices, T> generator;
    private final long[] choices;
    private final List<int[]> spans;
    private final T value;
    // the simpler cases this shrink may still try, shared by every case shrunk from one draw
    private final int[] runsLeft;

    Drawn(
        Function<Choices, T> generator,
        long[] choices,
        List<int[]> spans,
        T value,
        int[] runsLeft) {
      this.generator = generator;
      this.choices = choices;
      this.spans = spans;
      this.value = value;
      this.runsLeft = runsLeft;
    }

    @Override
    public T value() {
      return value;
    }

    /** Shortlex as a distance: the number of choices, then the choices. */
    @Override
    public ShrinkingDistance distance() {
      long[] d = new long[choices.length + 1];
      d[0] = choices.length;
      System.arraycopy(choices, 0, d, 1, choices.length);
      return ShrinkingDistance.of(d);
    }

    /**
     * The candidates, simplest moves first: delete a whole structure (the largest first) or reduce
     * it to its simplest first choice; zero one choice; delete runs of two and one choice; lower
     * one choice by half its value, a quarter, ... down to one. jqwik keeps the first that still
     * fails and asks it again.
     */
    @Override
    public Stream<Shrinkable<T>> shrink() {
      List<Supplier<long[]>> moves = new ArrayList<>();
      List<int[]> bySize = new ArrayList<>(spans);
      bySize.sort((a, b) -> Integer.compare(b[1] - b[0], a[1] - a[0]));
      for (int[] span : bySize) {
        if (span[1] > choices.length) {
          continue;
        }
        moves.add(() -> splice(span[0], span[1], new long[0]));
        if (span[1] - span[0] > 1) {
          moves.add(() -> splice(span[0], span[1], new long[] {0}));
        }
      }
      for (int i = 0; i < choices.length; i++) {
        int at = i;
        if (choices[at] != 0) {
          moves.add(() -> with(at, 0));
        }
      }
      for (int k : new int[] {2, 1}) {
        for (int i = choices.length - k; i >= 0; i--) {
          int at = i;
          moves.add(() -> splice(at, at + k, new long[0]));
        }
      }
      for (int i = 0; i < choices.length; i++) {
        int at = i;
        long v = choices[at];
        // the largest step down first (halving), then smaller ones down to one: a binary search
        // for the smallest value that still fails
        for (long step = v - v / 2; step > 0; step /= 2) {
          long lower = v - step;
          if (lower > 0) {
            moves.add(() -> with(at, lower));
          }
        }
      }
      return moves.stream()
          .takeWhile(m -> runsLeft[0] > 0)
          .map(m -> replay(m.get()))
          .flatMap(Optional::stream);
    }

    private long[] splice(int from, int to, long[] insert) {
      long[] c = new long[choices.length - (to - from) + insert.length];
      System.arraycopy(choices, 0, c, 0, from);
      System.arraycopy(insert, 0, c, from, insert.length);
      System.arraycopy(choices, to, c, from + insert.length, choices.length - to);
      return c;
    }

    private long[] with(int at, long v) {
      long[] c = choices.clone();
      c[at] = v;
      return c;
    }

    /** The case {@code candidate} generates, when it is simpler than this one. */
    private Optional<Shrinkable<T>> replay(long[] candidate) {
      Choices replay = Choices.replay(candidate);
      T v;
      try {
        v = generator.apply(replay);
      } catch (RuntimeException e) {
        return Optional.empty(); // a generator that cannot read this sequence: not a simpler case
      }
      long[] used = replay.drawn();
      if (!simpler(used, choices)) {
        return Optional.empty();
      }
      runsLeft[0]--;
      return Optional.of(new Drawn<>(generator, used, replay.spans(), v, runsLeft));
    }
  }
}
