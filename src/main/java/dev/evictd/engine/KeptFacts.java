package dev.evictd.engine;

import java.lang.reflect.Field;
import java.lang.reflect.InaccessibleObjectException;
import java.lang.reflect.Modifier;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.RandomAccess;
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

  /** How an object is counted: decided by its class alone, so found once per class. */
  private enum Kind {
    STRING,
    STRING_BUILDER,
    ARRAY,
    COLLECTION,
    MAP,
    BIG_INTEGER,
    BIG_DECIMAL,
    OPTIONAL,
    FOLLOWED,
    OTHER,
    /**
     * Anything else (a BitSet, a lambda, any JDK object that is no plain value): what it holds
     * cannot be told, so it counts as more than any limit.
     */
    UNMEASURED
  }

  /** What an object that cannot be measured counts as: past any limit, without overflowing. */
  static final long UNMEASURED_BYTES = Long.MAX_VALUE / 4;

  /**
   * How objects of a class are counted; for followed classes, how many instance fields they have
   * and those that hold references (the ones followed).
   */
  private record Shape(Kind kind, int fieldCount, Field[] references, Reader reader) {
    static Shape of(Class<?> c) {
      Kind k = kindOf(c);
      if (k != Kind.FOLLOWED) {
        return new Shape(k, 0, new Field[0], null);
      }
      Field[] all = instanceFields(c);
      Field[] references =
          Arrays.stream(all).filter(f -> !f.getType().isPrimitive()).toArray(Field[]::new);
      Reader reader = READERS.get(c);
      boolean same =
          reader != null
              && Arrays.equals(
                  reader.fields(), Arrays.stream(references).map(Field::getName).toArray());
      return new Shape(k, all.length, references, same ? reader : null);
    }
  }

  /**
   * Reads the reference fields of one of evictd's own final record types, the ones a pressure sync
   * walks a hundred times (every pod's rank key and its levels), with the records' accessors:
   * reading them by reflection was a quarter of the walk under C1. A reader is used only when its
   * fields are the class's reference fields, in the order reflection gives them (checked when the
   * class's shape is made); it adds their values in that order, as the reflective walk does.
   */
  private interface Reader {
    /** The reference fields read, in reflection's order. */
    String[] fields();

    /** Adds the fields' values to the walk; returns whether it is over its limits. */
    boolean read(Object o, Walk w);
  }

  /** A rank key's uid, signal and levels. */
  private static final class RankKeyReader implements Reader {
    @Override
    public String[] fields() {
      return new String[] {"uid", "signal", "components"};
    }

    @Override
    public boolean read(Object o, Walk w) {
      dev.evictd.api.RankKey k = (dev.evictd.api.RankKey) o;
      return w.add(k.uid()) || w.add(k.signal()) || w.add(k.components());
    }
  }

  /** A rank key level's name and exact value. */
  private static final class ComponentReader implements Reader {
    @Override
    public String[] fields() {
      return new String[] {"name", "exact"};
    }

    @Override
    public boolean read(Object o, Walk w) {
      dev.evictd.api.RankKey.Component c = (dev.evictd.api.RankKey.Component) o;
      return w.add(c.name()) || w.add(c.exact());
    }
  }

  // classes, not lambdas: nothing to link at the first sync's estimate
  private static final Map<Class<?>, Reader> READERS =
      Map.of(
          dev.evictd.api.RankKey.class,
          new RankKeyReader(),
          dev.evictd.api.RankKey.Component.class,
          new ComponentReader());

  /** Whether the walk reads {@code c}'s fields with its record accessors (for tests). */
  static boolean readsByAccessors(Class<?> c) {
    return SHAPES.computeIfAbsent(c, Shape::of).reader() != null;
  }

  /** {@link #estimate(Collection, long)} reading every class's fields by reflection (for tests). */
  static long estimateByReflection(Collection<?> facts) {
    Walk w = new Walk(0, new IdentityHashMap<>(), new ArrayDeque<>());
    w.reflectOnly = true;
    for (Object f : facts) {
      w.add(f);
    }
    return w.run();
  }

  /** Shapes by class (a map lookup costs less than a ClassValue's under C1). */
  private static final Map<Class<?>, Shape> SHAPES = new ConcurrentHashMap<>();

  private static Kind kindOf(Class<?> c) {
    // the order of the tests is the order the kinds are told apart in (a class may be both)
    if (c.getName().startsWith("dev.evictd.rules.") && extendsUnfollowed(c)) {
      // a declared type that extends a JDK class (declare Hoard extends java.util.ArrayList): its
      // own fields are not the JDK class's, and the JDK class's are not read
      return Kind.UNMEASURED;
    } else if (CharSequence.class.isAssignableFrom(c) && !StringBuilder.class.isAssignableFrom(c)) {
      return Kind.STRING;
    } else if (StringBuilder.class.isAssignableFrom(c)) {
      return Kind.STRING_BUILDER;
    } else if (c.isArray()) {
      return Kind.ARRAY;
    } else if (Collection.class.isAssignableFrom(c)) {
      return Kind.COLLECTION;
    } else if (Map.class.isAssignableFrom(c)) {
      return Kind.MAP;
    } else if (BigInteger.class.isAssignableFrom(c)) {
      return Kind.BIG_INTEGER;
    } else if (BigDecimal.class.isAssignableFrom(c)) {
      return Kind.BIG_DECIMAL;
    } else if (java.util.Optional.class == c) {
      return Kind.OPTIONAL;
    } else if (followed(c)) {
      return Kind.FOLLOWED;
    } else if (plainValue(c)) {
      return Kind.OTHER;
    }
    return Kind.UNMEASURED;
  }

  /** Whether a superclass of {@code c} below Object is not followed (a JDK class, say). */
  private static boolean extendsUnfollowed(Class<?> c) {
    for (Class<?> k = c.getSuperclass(); k != null && k != Object.class; k = k.getSuperclass()) {
      if (!followed(k) && !k.isEnum() && k != Enum.class && k != Record.class) {
        return true;
      }
    }
    return false;
  }

  /**
   * JDK values of a small fixed size: enums, java.lang's values (boxed numbers, Boolean, Character,
   * Object) and java.time's. Not lambdas or other hidden classes, which can hold anything they
   * captured, nor exceptions, which hold a message, a cause and suppressed exceptions.
   */
  private static boolean plainValue(Class<?> c) {
    if (c.isSynthetic() || c.isHidden() || Throwable.class.isAssignableFrom(c)) {
      return false;
    }
    String n = c.getName();
    return c.isEnum()
        || (c.getSuperclass() != null && c.getSuperclass().isEnum())
        || (n.startsWith("java.lang.") && n.indexOf('.', "java.lang.".length()) < 0)
        || n.startsWith("java.time.");
  }

  private KeptFacts() {}

  /** Estimated bytes held by {@code facts}, stopping once past {@code limit} (0: no limit). */
  static long estimate(Collection<?> facts, long limit) {
    return estimate(facts, limit, new Seen());
  }

  /**
   * {@link #estimate(Collection, long)} with its table of objects seen and its work list taken from
   * {@code seen} and given back empty.
   */
  static long estimate(Collection<?> facts, long limit, Seen seen) {
    Walk w = new Walk(limit, seen.take(facts.size()), seen.todo);
    try {
      for (Object f : facts) {
        if (w.add(f)) {
          break;
        }
      }
      return w.run();
    } finally {
      seen.give(w.seen);
    }
  }

  /**
   * The table of objects an estimate has seen and its work list, kept from one estimate to the next
   * (a planner's estimates run one at a time, once a sync): a pressure sync's walk sees some
   * thousand objects, and a new table and list for each were a sixteenth of what the sync
   * allocated. Given back empty (they hold no fact past the walk); a table grown past {@value
   * #KEPT_TABLE} objects is not kept.
   */
  static final class Seen {
    private IdentityHashMap<Object, Boolean> table;
    private final ArrayDeque<Object> todo = new ArrayDeque<>();

    IdentityHashMap<Object, Boolean> take(int facts) {
      IdentityHashMap<Object, Boolean> t = table;
      table = null;
      // room for a few objects per fact: growing the table is most of a small walk's cost
      return t != null ? t : new IdentityHashMap<>(Math.min(MAX_VISITED, Math.max(32, facts * 8)));
    }

    void give(IdentityHashMap<Object, Boolean> t) {
      boolean keep = t.size() <= KEPT_TABLE;
      t.clear();
      todo.clear(); // a walk over its limit leaves objects in it
      table = keep ? t : null;
    }

    /** Whether a table is kept for the next estimate (for tests). */
    boolean holdsTable() {
      return table != null;
    }

    /** Whether the work list is empty (for tests). */
    boolean todoEmpty() {
      return todo.isEmpty();
    }
  }

  /** Objects seen past which an estimate's table is not kept for the next. */
  static final int KEPT_TABLE = 16_384;

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
    final Deque<Object> todo;
    final IdentityHashMap<Object, Boolean> seen;
    long total;
    boolean reflectOnly;

    Walk(long limit, IdentityHashMap<Object, Boolean> seen, Deque<Object> todo) {
      this.limit = limit;
      this.seen = seen;
      this.todo = todo;
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
      Shape shape = SHAPES.get(c);
      if (shape == null) {
        shape = SHAPES.computeIfAbsent(c, Shape::of);
      }
      switch (shape.kind()) {
        case STRING -> {
          CharSequence s = (CharSequence) o;
          total +=
              HEADER + 24 + (long) s.length() * (o instanceof String str && latin1(str) ? 1 : 2);
        }
        case STRING_BUILDER -> total += HEADER + 24 + (long) ((StringBuilder) o).capacity() * 2;
        case ARRAY -> array(o, c.getComponentType());
        case COLLECTION -> {
          Collection<?> col = (Collection<?>) o;
          total += HEADER + 32 + (long) col.size() * REFERENCE * 2;
          if (col instanceof List<?> l && col instanceof RandomAccess) {
            // by index: the JDK's lists give the iterator's order, without an iterator per list
            for (int i = 0, n = l.size(); i < n; i++) {
              if (add(l.get(i))) {
                return;
              }
            }
            return;
          }
          for (Object e : col) {
            if (add(e)) {
              return;
            }
          }
        }
        case MAP -> {
          Map<?, ?> m = (Map<?, ?>) o;
          total += HEADER + 48 + (long) m.size() * 32;
          for (Map.Entry<?, ?> e : m.entrySet()) {
            if (add(e.getKey()) || add(e.getValue())) {
              return;
            }
          }
        }
        case BIG_INTEGER -> total += HEADER + 24 + ((BigInteger) o).bitLength() / 8;
        case BIG_DECIMAL -> total += HEADER + 40 + unscaledBitLength((BigDecimal) o) / 8;
        case OPTIONAL -> {
          total += HEADER + REFERENCE;
          add(((java.util.Optional<?>) o).orElse(null));
        }
        case FOLLOWED -> fields(o, shape);
        case UNMEASURED -> total += total < UNMEASURED_BYTES ? UNMEASURED_BYTES : 0;
        default -> total += OTHER; // JDK values (Instant, Duration, boxed numbers, enums...)
      }
    }

    /**
     * {@code b.unscaledValue().bitLength()} without building the BigInteger (a compact value's
     * unscaled long is its value when the scale is 0).
     */
    private static long unscaledBitLength(BigDecimal b) {
      if (b.scale() == 0 && b.precision() <= 18) {
        long v = b.longValue();
        return 64 - Long.numberOfLeadingZeros(v < 0 ? ~v : v);
      }
      return b.unscaledValue().bitLength();
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

    private void fields(Object o, Shape shape) {
      total += HEADER + (long) shape.fieldCount() * 8;
      if (shape.reader() != null && !reflectOnly) {
        shape.reader().read(o, this);
        return;
      }
      for (Field f : shape.references()) {
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
