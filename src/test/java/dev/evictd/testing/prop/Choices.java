package dev.evictd.testing.prop;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Supplier;

/**
 * The random choices a generator makes, recorded so that a case can be replayed and shrunk. Every
 * draw is a number in {@code [0, bound)}; generators are written so that 0 is the simplest choice
 * (no element, the first option, the feature absent), so shrinking the recorded numbers toward 0
 * (and deleting runs of them) simplifies the case.
 *
 * <p>A replayed sequence that runs out, or that holds a number out of the new bound, is read
 * leniently (0, or the number modulo the bound): any sequence generates some valid case.
 */
public final class Choices {
  /** Draws past this many read 0, so that no generator can run away on a mutated sequence. */
  static final int MAX_DRAWS = 200_000;

  private final long[] prefix;
  private final SplittableRandom random;
  private final List<Long> drawn = new ArrayList<>();
  private final List<int[]> spans = new ArrayList<>();

  private Choices(long[] prefix, SplittableRandom random) {
    this.prefix = prefix;
    this.random = random;
  }

  /** Fresh random choices from {@code seed}. */
  public static Choices random(long seed) {
    return new Choices(new long[0], new SplittableRandom(seed));
  }

  /** Replays {@code sequence}; draws past its end read 0. */
  public static Choices replay(long[] sequence) {
    return new Choices(sequence.clone(), null);
  }

  /** The choices drawn so far. */
  public long[] drawn() {
    long[] out = new long[drawn.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = drawn.get(i);
    }
    return out;
  }

  /**
   * The {@code [start, end)} ranges of draws that made one structure (a list element, an optional
   * part): deleting one deletes the structure, which is how shrinking removes a pod or a step.
   */
  public List<int[]> spans() {
    return List.copyOf(spans);
  }

  /** Draws {@code part} as one structure (see {@link #spans()}). */
  public <T> T span(Supplier<T> part) {
    int start = drawn.size();
    T value = part.get();
    if (drawn.size() > start) {
      spans.add(new int[] {start, drawn.size()});
    }
    return value;
  }

  /**
   * With probability {@code p} the part, else null; one structure whose simplest form is absent.
   */
  public <T> T optional(double p, Supplier<T> part) {
    return span(() -> chance(p) ? part.get() : null);
  }

  /** A number in {@code [0, bound)}. */
  public long below(long bound) {
    if (bound <= 0) {
      throw new IllegalArgumentException("bound must be positive: " + bound);
    }
    int i = drawn.size();
    long v;
    if (i >= MAX_DRAWS) {
      v = 0;
    } else if (i < prefix.length) {
      v = prefix[i];
      v = v >= 0 && v < bound ? v : Math.floorMod(v, bound);
    } else if (random != null) {
      v = random.nextLong(bound);
    } else {
      v = 0;
    }
    drawn.add(v);
    return v;
  }

  /** An int in {@code [lo, hi]}, {@code lo} being the simplest. */
  public int between(int lo, int hi) {
    return (int) (lo + below((long) hi - lo + 1));
  }

  /** True with probability {@code p}; false is the simplest. */
  public boolean chance(double p) {
    long v = below(1_000_000);
    return v >= Math.round((1 - p) * 1_000_000);
  }

  /** One of {@code options}, the first being the simplest. */
  @SafeVarargs
  public final <T> T pick(T... options) {
    return options[(int) below(options.length)];
  }

  /** One of {@code options}, the first being the simplest. */
  public <T> T pick(List<T> options) {
    return options.get((int) below(options.size()));
  }

  /**
   * A list of at most {@code max} elements: before each element a draw decides whether there is one
   * more (with probability {@code more}), so deleting an element's draws deletes the element.
   */
  public <T> List<T> listOf(int max, double more, Supplier<T> element) {
    return listOf(0, max, more, element);
  }

  /**
   * A list of {@code min} to {@code max} elements, each a structure (see {@link #listOf(int,
   * double, Supplier)}).
   */
  public <T> List<T> listOf(int min, int max, double more, Supplier<T> element) {
    List<T> out = new ArrayList<>();
    while (out.size() < max) {
      boolean required = out.size() < min;
      T next =
          span(
              () -> {
                if (!required && !chance(more)) {
                  return null;
                }
                return element.get();
              });
      if (next == null) {
        break;
      }
      out.add(next);
    }
    return out;
  }

  @Override
  public String toString() {
    return Arrays.toString(drawn());
  }
}
