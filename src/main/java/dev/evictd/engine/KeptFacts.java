package dev.evictd.engine;

import java.lang.reflect.Field;
import java.lang.reflect.InaccessibleObjectException;
import java.lang.reflect.Modifier;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Estimates the heap the facts rules inserted hold: strings, arrays, collections and maps, big
 * numbers, and the fields of evictd's fact types and the rules' declared types, followed once each
 * (by identity). Other objects count as a small fixed size and are not followed: what rules can
 * build is limited by the policy allowlist to these kinds. The estimate is a lower bound meant to
 * catch rules that keep megabytes across syncs, not an exact measure; the walk stops as soon as it
 * passes the limit (or visits too many objects), so a huge graph costs no more than a big one.
 */
final class KeptFacts {
  /** Objects visited at most; past it the estimate is reported as over any limit. */
  static final int MAX_VISITED = 200_000;

  private static final long HEADER = 16;
  private static final long REFERENCE = 4;
  private static final long OTHER = 24;
  private static final Map<Class<?>, Field[]> FIELDS = new ConcurrentHashMap<>();

  private KeptFacts() {}

  /** Estimated bytes held by {@code facts}, stopping once past {@code limit} (0: no limit). */
  static long estimate(Collection<?> facts, long limit) {
    Walk w = new Walk(limit);
    for (Object f : facts) {
      if (w.add(f)) {
        break;
      }
    }
    return w.run();
  }

  /** The largest single fact, described for a message ({@code long[6291456] of about 48.0 MiB}). */
  static String largest(Collection<?> facts) {
    Object best = null;
    long bestSize = -1;
    for (Object f : new ArrayList<>(facts)) {
      long s = estimate(List.of(f), 0);
      if (s > bestSize) {
        best = f;
        bestSize = s;
      }
    }
    if (best == null) {
      return "no fact";
    }
    Class<?> c = best.getClass();
    String type =
        c.isArray()
            ? c.getComponentType().getSimpleName()
                + "["
                + java.lang.reflect.Array.getLength(best)
                + "]"
            : c.getSimpleName();
    return String.format(
        java.util.Locale.ROOT, "the largest a %s of about %.1f MiB", type, bestSize / 1048576.0);
  }

  /** One estimate: a work list, the objects seen, the running total. */
  private static final class Walk {
    final long limit;
    final Deque<Object> todo = new ArrayDeque<>();
    final Map<Object, Boolean> seen = new IdentityHashMap<>();
    long total;

    Walk(long limit) {
      this.limit = limit;
    }

    /** Queues an object; returns whether the walk is already over its limits. */
    boolean add(Object o) {
      if (o != null && seen.put(o, Boolean.TRUE) == null) {
        todo.add(o);
      }
      return over();
    }

    boolean over() {
      return (limit > 0 && total > limit) || seen.size() > MAX_VISITED;
    }

    long run() {
      while (!todo.isEmpty() && !over()) {
        visit(todo.poll());
      }
      return seen.size() > MAX_VISITED ? Math.max(total, limit + 1) : total;
    }

    private void visit(Object o) {
      Class<?> c = o.getClass();
      if (o instanceof CharSequence s && !(o instanceof StringBuilder)) {
        total += HEADER + 24 + (long) s.length() * (o instanceof String str && latin1(str) ? 1 : 2);
      } else if (o instanceof StringBuilder sb) {
        total += HEADER + 24 + (long) sb.capacity() * 2;
      } else if (c.isArray()) {
        array(o, c.getComponentType());
      } else if (o instanceof Collection<?> col) {
        total += HEADER + 32 + (long) col.size() * REFERENCE * 2;
        for (Object e : col) {
          if (add(e)) {
            return;
          }
        }
      } else if (o instanceof Map<?, ?> m) {
        total += HEADER + 48 + (long) m.size() * 32;
        for (Map.Entry<?, ?> e : m.entrySet()) {
          if (add(e.getKey()) || add(e.getValue())) {
            return;
          }
        }
      } else if (o instanceof BigInteger b) {
        total += HEADER + 24 + b.bitLength() / 8;
      } else if (o instanceof BigDecimal b) {
        total += HEADER + 40 + b.unscaledValue().bitLength() / 8;
      } else if (o instanceof java.util.Optional<?> opt) {
        total += HEADER + REFERENCE;
        add(opt.orElse(null));
      } else if (followed(c)) {
        fields(o, c);
      } else {
        total += OTHER; // JDK values (Instant, Duration, boxed numbers, enums...), lambdas
      }
    }

    private static boolean latin1(String s) {
      for (int i = 0; i < s.length(); i++) {
        if (s.charAt(i) > 0xff) {
          return false;
        }
      }
      return true;
    }

    private void array(Object o, Class<?> component) {
      int n = java.lang.reflect.Array.getLength(o);
      if (!component.isPrimitive()) {
        total += HEADER + (long) n * REFERENCE;
        for (Object e : (Object[]) o) {
          if (add(e)) {
            return;
          }
        }
        return;
      }
      long width =
          component == long.class || component == double.class
              ? 8
              : component == int.class || component == float.class
                  ? 4
                  : component == short.class || component == char.class ? 2 : 1;
      total += HEADER + n * width;
    }

    private void fields(Object o, Class<?> c) {
      Field[] fs = FIELDS.computeIfAbsent(c, KeptFacts::instanceFields);
      total += HEADER + (long) fs.length * 8;
      for (Field f : fs) {
        if (f.getType().isPrimitive()) {
          continue;
        }
        Object v;
        try {
          v = f.get(o);
        } catch (IllegalAccessException e) {
          continue;
        }
        if (add(v)) {
          return;
        }
      }
    }
  }

  /**
   * Whether a class's fields are followed: evictd's own types and the rules' declared types (their
   * package is the rules' package).
   */
  private static boolean followed(Class<?> c) {
    String n = c.getName();
    // the rules' package (dev.evictd.rules) is below dev.evictd
    return !c.isSynthetic() && !c.isHidden() && n.startsWith("dev.evictd.");
  }

  private static Field[] instanceFields(Class<?> c) {
    List<Field> out = new ArrayList<>();
    for (Class<?> k = c; k != null && k != Object.class; k = k.getSuperclass()) {
      if (!followed(k)) {
        break;
      }
      for (Field f : k.getDeclaredFields()) {
        if (Modifier.isStatic(f.getModifiers())) {
          continue;
        }
        try {
          f.setAccessible(true);
          out.add(f);
        } catch (InaccessibleObjectException | SecurityException e) {
          // not readable: counted in the fixed size only
        }
      }
    }
    return out.toArray(new Field[0]);
  }
}
