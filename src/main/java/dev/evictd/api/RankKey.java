package dev.evictd.api;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A pod's rank for the signal acted on: a list of named components compared in order, each
 * ascending or descending; pods with equal keys keep their order in the active pod list. Rules
 * compute keys; the planner sorts by them (ranking pairwise in rules would be quadratic).
 */
public record RankKey(String uid, Signal signal, int position, List<Component> components)
    implements PerSyncFact, Comparable<RankKey> {

  /**
   * One level of the key. Levels compare by {@code exact}; {@code value} is the same amount
   * saturated to a long, for display. The kubelet compares usage above request as exact quantities:
   * a request past the range of a long (100Ei) or with a fraction of a byte (100m) must not tie
   * with another (found by the differential tests).
   *
   * @param name what the level measures
   * @param value its value for the pod, saturated to the range of a long
   * @param descending whether larger values rank first
   * @param bytes whether the value is an amount of bytes (shown as a quantity in explanations)
   * @param exact the exact value
   */
  public record Component(
      String name, long value, boolean descending, boolean bytes, BigDecimal exact) {
    public Component {
      exact = exact == null ? BigDecimal.valueOf(value) : exact;
    }

    /** A level whose value is a long. */
    public Component(String name, long value, boolean descending, boolean bytes) {
      this(name, value, descending, bytes, BigDecimal.valueOf(value));
    }

    /** The value as people read it: a binary-SI quantity for bytes. */
    public String shownValue() {
      if (bytes) {
        return Quantity.of(exact, Quantity.Format.BINARY_SI).toString();
      }
      return exact.compareTo(BigDecimal.valueOf(value)) == 0
          ? Long.toString(value)
          : exact.toPlainString();
    }

    @Override
    public String toString() {
      return name + "=" + shownValue() + (descending ? " (larger first)" : " (smaller first)");
    }
  }

  public RankKey {
    components = List.copyOf(components);
  }

  /** Starts a key for a pod and signal. */
  public static Builder of(PodFact pod, Signal signal) {
    return new Builder(pod.uid(), signal, pod.position());
  }

  /** {@code a - b}, saturated to the range of a long (usage minus request never wraps around). */
  public static long difference(long a, long b) {
    long r = a - b;
    if (((a ^ b) & (a ^ r)) < 0) {
      return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    return r;
  }

  /**
   * {@code usage - request}, exact (the kubelet subtracts quantities, which never wrap around or
   * round).
   */
  public static BigDecimal aboveRequest(BigInteger usage, Quantity request) {
    return new BigDecimal(usage).subtract(request.toBigDecimal());
  }

  /** {@code usage - request}, exact. */
  public static BigDecimal aboveRequest(long usage, Quantity request) {
    return BigDecimal.valueOf(usage).subtract(request.toBigDecimal()); // the same value and scale
  }

  /** The value of the named component, or null. */
  public Long value(String name) {
    for (Component c : components) {
      if (c.name.equals(name)) {
        return c.value;
      }
    }
    return null;
  }

  @Override
  public int compareTo(RankKey o) {
    int n = Math.min(components.size(), o.components.size());
    for (int i = 0; i < n; i++) {
      Component a = components.get(i);
      Component b = o.components.get(i);
      int c = a.exact.compareTo(b.exact);
      if (c != 0) {
        return a.descending ? -c : c;
      }
    }
    int c = Integer.compare(components.size(), o.components.size());
    return c != 0 ? c : Integer.compare(position, o.position);
  }

  /** Builds a rank key component by component, most significant first. */
  public static final class Builder {
    private final String uid;
    private final Signal signal;
    private final int position;
    private final List<Component> components = new ArrayList<>();

    private static final BigDecimal LONG_MAX = BigDecimal.valueOf(Long.MAX_VALUE);
    private static final BigDecimal LONG_MIN = BigDecimal.valueOf(Long.MIN_VALUE);

    private Builder(String uid, Signal signal, int position) {
      this.uid = uid;
      this.signal = signal;
      this.position = position;
    }

    /** Adds a level where larger values rank first (are evicted sooner). */
    public Builder larger(String name, long value) {
      components.add(new Component(name, value, true, false));
      return this;
    }

    /** Adds a level of bytes where larger amounts rank first. */
    public Builder largerBytes(String name, long bytes) {
      components.add(new Component(name, bytes, true, true));
      return this;
    }

    /** Adds a level of bytes where larger exact amounts rank first. */
    public Builder largerBytes(String name, BigDecimal bytes) {
      components.add(new Component(name, saturated(bytes), true, true, bytes));
      return this;
    }

    /** Adds a level where smaller values rank first (are evicted sooner). */
    public Builder smaller(String name, long value) {
      components.add(new Component(name, value, false, false));
      return this;
    }

    /** Adds a level where larger exact amounts rank first. */
    public Builder larger(String name, BigDecimal value) {
      components.add(new Component(name, saturated(value), true, false, value));
      return this;
    }

    /** Adds a level where smaller exact amounts rank first. */
    public Builder smaller(String name, BigDecimal value) {
      components.add(new Component(name, saturated(value), false, false, value));
      return this;
    }

    private static long saturated(BigDecimal v) {
      if (v.compareTo(LONG_MAX) > 0) {
        return Long.MAX_VALUE;
      }
      if (v.compareTo(LONG_MIN) < 0) {
        return Long.MIN_VALUE;
      }
      return v.setScale(0, java.math.RoundingMode.UP).longValue();
    }

    /** Adds a level where pods for which {@code condition} holds rank first. */
    public Builder first(String name, boolean condition) {
      return larger(name, condition ? 1 : 0);
    }

    /** The key. */
    public RankKey build() {
      return new RankKey(uid, signal, position, components);
    }
  }

  // equals and hashCode written out as the implicit ones compute them: those are linked through
  // ObjectMethods at their first call, which spins method-handle classes at every start
  // (RecordMethodsTest compares the two).
  @Override
  public boolean equals(Object other) {
    return this == other
        || other instanceof RankKey o
            && Objects.equals(uid, o.uid)
            && Objects.equals(signal, o.signal)
            && position == o.position
            && Objects.equals(components, o.components);
  }

  @Override
  public int hashCode() {
    int h = 0;
    h = 31 * h + Objects.hashCode(uid);
    h = 31 * h + Objects.hashCode(signal);
    h = 31 * h + Integer.hashCode(position);
    h = 31 * h + Objects.hashCode(components);
    return h;
  }
}
