package dev.evictd.ruleset.lint;

import static dev.evictd.ruleset.lint.CompiledCodeCheck.expression;

import java.lang.reflect.Field;
import java.lang.reflect.InaccessibleObjectException;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.drools.base.definitions.rule.impl.RuleImpl;
import org.kie.api.KieBase;
import org.kie.api.definition.KiePackage;

/**
 * What MVEL interprets at run time, found by walking a compiled rule: the text of its constraints,
 * sources, accumulate arguments, salience and {@code enabled}, checked as the lint checks an
 * expression (by {@link CompiledCodeCheck}); MVEL consequences and {@code eval}s, and {@code
 * matches} left to MVEL, are refused.
 */
final class InterpretedMvelWalk {
  private InterpretedMvelWalk() {}

  /** Engine objects walked at most per rule (a rule's own structure is far smaller). */
  private static final int MAX_WALKED = 50_000;

  private static final Map<Class<?>, Field[]> FIELDS = new ConcurrentHashMap<>();

  /**
   * Walks a compiled rule — its conditions, sources, accumulate functions, salience, enabled and
   * consequence — and checks every piece of MVEL it holds.
   */
  static void interpreted(
      RuleImpl rule, PolicyLint.Location at, PolicyLint.Report report, Set<PolicyFinding> out) {
    Set<String> expressions = new LinkedHashSet<>();
    Set<String> dialects = new LinkedHashSet<>();
    Deque<Object> todo = new ArrayDeque<>();
    Map<Object, Boolean> seen = new IdentityHashMap<>();
    // the rule itself: its conditions, sources, salience, enabled, timer, (named) consequences
    todo.add(rule);
    while (!todo.isEmpty()) {
      Object o = todo.poll();
      if (o == null || seen.put(o, Boolean.TRUE) != null) {
        continue;
      }
      if (seen.size() > MAX_WALKED) {
        out.add(
            new PolicyFinding(
                at.file(),
                at.line(),
                at.where(),
                "the compiled rule",
                "cannot be analysed: too large to walk"));
        return;
      }
      if (o instanceof org.drools.mvel.expr.MVELCompilationUnit u) {
        expressions.add(u.getExpression());
        continue;
      }
      String text = mvelText(o);
      if (text != null) {
        expressions.add(text);
      }
      if (o instanceof org.drools.mvel.expr.MVELConsequence
          || o instanceof org.drools.mvel.expr.MVELEvalExpression) {
        dialects.add(o.getClass().getSimpleName().replace("MVEL", "MVEL "));
      }
      walk(o, todo);
    }
    for (String d : dialects) {
      out.add(
          new PolicyFinding(
              at.file(),
              at.line(),
              at.where(),
              d + " (compiled code)",
              "MVEL dialect (dynamic code the lint cannot check)"));
    }
    for (String e : expressions) {
      if (e == null || e.isBlank()) {
        continue;
      }
      if (regexOperator(e)) {
        out.add(
            new PolicyFinding(
                at.file(),
                at.line(),
                at.where(),
                "matches in \"" + shorten(e) + "\" (compiled code)",
                "the engine leaves it to MVEL, on java.util.regex, which can backtrack for ever:"
                    + " give it a constraint of its own, or call RuleRegex.matches"));
        continue;
      }
      expression(e, at, report, out);
    }
  }

  private static final Map<Class<?>, java.util.Optional<java.lang.reflect.Method>> TEXT =
      new ConcurrentHashMap<>();

  /**
   * The MVEL text an engine object of Drools' MVEL support compiles ({@code getExpression()}: the
   * constraints, field readers of bindings, data providers, accumulators...), or null.
   */
  private static String mvelText(Object o) {
    Class<?> c = o.getClass();
    if (!c.getName().startsWith("org.drools.mvel.")) {
      return null;
    }
    java.util.Optional<java.lang.reflect.Method> m =
        TEXT.computeIfAbsent(
            c,
            k -> {
              try {
                java.lang.reflect.Method g = k.getMethod("getExpression");
                return g.getReturnType() == String.class && g.getParameterCount() == 0
                    ? java.util.Optional.of(g)
                    : java.util.Optional.empty();
              } catch (NoSuchMethodException e) {
                return java.util.Optional.empty();
              }
            });
    if (m.isEmpty()) {
      return null;
    }
    try {
      return (String) m.get().invoke(o);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }

  private static String shorten(String e) {
    String s = e.strip().replaceAll("\\s+", " ");
    return s.length() > 120 ? s.substring(0, 117) + "..." : s;
  }

  /**
   * Whether MVEL text uses its regular-expression operator {@code ~=} (outside string literals).
   */
  static boolean regexOperator(String e) {
    char quote = 0;
    for (int i = 0; i < e.length(); i++) {
      char c = e.charAt(i);
      if (quote != 0) {
        if (c == '\\') {
          i++;
        } else if (c == quote) {
          quote = 0;
        }
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '~' && i + 1 < e.length() && e.charAt(i + 1) == '=') {
        return true;
      }
    }
    return false;
  }

  /** Queues what an engine object holds: its fields, and the elements of arrays and collections. */
  private static void walk(Object o, Deque<Object> todo) {
    Class<?> c = o.getClass();
    if (c.isArray()) {
      if (!c.getComponentType().isPrimitive()) {
        for (Object e : (Object[]) o) {
          if (walked(e)) {
            todo.add(e);
          }
        }
      }
      return;
    }
    if (o instanceof Collection<?> col && c.getName().startsWith("java.")) {
      for (Object e : col) {
        if (walked(e)) {
          todo.add(e);
        }
      }
      return;
    }
    if (o instanceof Map<?, ?> m && c.getName().startsWith("java.")) {
      for (Map.Entry<?, ?> e : m.entrySet()) {
        if (walked(e.getKey())) {
          todo.add(e.getKey());
        }
        if (walked(e.getValue())) {
          todo.add(e.getValue());
        }
      }
      return;
    }
    if (!engineClass(c)) {
      return;
    }
    for (Field f : FIELDS.computeIfAbsent(c, InterpretedMvelWalk::engineFields)) {
      try {
        Object v = f.get(o);
        if (walked(v)) {
          todo.add(v);
        }
      } catch (IllegalAccessException e) {
        // not readable: nothing of the rule's is kept where Drools' own fields cannot be read
      }
    }
  }

  /** Whether an object may hold rule code: engine objects, arrays and JDK collections. */
  private static boolean walked(Object v) {
    if (v == null) {
      return false;
    }
    Class<?> c = v.getClass();
    if (c.isArray()) {
      return !c.getComponentType().isPrimitive();
    }
    if (v instanceof Collection<?> || v instanceof Map<?, ?>) {
      return c.getName().startsWith("java.");
    }
    return engineClass(c)
        && !(v instanceof KieBase)
        && !(v instanceof KiePackage)
        && !(v instanceof ClassLoader)
        && !(v instanceof org.drools.base.rule.TypeDeclaration);
  }

  private static boolean engineClass(Class<?> c) {
    String n = c.getName();
    return n.startsWith("org.drools.")
        || n.startsWith("org.kie.")
        || n.startsWith("dev.evictd.engine.");
  }

  private static Field[] engineFields(Class<?> c) {
    List<Field> out = new ArrayList<>();
    for (Class<?> k = c; k != null && engineClass(k); k = k.getSuperclass()) {
      for (Field f : k.getDeclaredFields()) {
        if (Modifier.isStatic(f.getModifiers()) || f.getType().isPrimitive()) {
          continue;
        }
        try {
          f.setAccessible(true);
          out.add(f);
        } catch (InaccessibleObjectException | SecurityException e) {
          // skipped
        }
      }
    }
    return out.toArray(new Field[0]);
  }
}
