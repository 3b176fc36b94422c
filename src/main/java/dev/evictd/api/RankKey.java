package dev.evictd.api;

import java.util.ArrayList;
import java.util.List;

/**
 * A pod's rank for the signal acted on: a list of named components compared in order, each ascending or
 * descending; pods with equal keys keep their order in the active pod list. Rules compute keys; the planner sorts
 * by them (ranking pairwise in rules would be quadratic).
 */
public record RankKey(String uid, Signal signal, int position, List<Component> components)
    implements PerSyncFact, Comparable<RankKey> {

  /**
   * One level of the key.
   *
   * @param name what the level measures
   * @param value its value for the pod
   * @param descending whether larger values rank first
   * @param bytes whether the value is an amount of bytes (shown as a quantity in explanations)
   */
  public record Component(String name, long value, boolean descending, boolean bytes) {
    /** The value as people read it: a binary-SI quantity for bytes. */
    public String shownValue() {
      return bytes ? Quantity.of(value, Quantity.Format.BINARY_SI).toString() : Long.toString(value);
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
      int c = Long.compare(a.value, b.value);
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

    /** Adds a level where smaller values rank first (are evicted sooner). */
    public Builder smaller(String name, long value) {
      components.add(new Component(name, value, false, false));
      return this;
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
}
