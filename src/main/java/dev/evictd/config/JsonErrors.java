package dev.evictd.config;

import java.util.Collection;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.core.JacksonException;
import tools.jackson.core.exc.InputCoercionException;
import tools.jackson.databind.exc.MismatchedInputException;

/**
 * Says what a binding error means in the words of a Kubernetes document: Jackson's messages name
 * Java types and tokens ({@code Cannot deserialize value of type `java.lang.Integer` from Array
 * value (token `JsonToken.START_ARRAY`)}), which an operator cannot act on. Each becomes "expected
 * an integer, found a list".
 */
public final class JsonErrors {
  private static final Pattern QUOTED_TYPE = Pattern.compile("`([\\w.$]+)`");

  private JsonErrors() {}

  /**
   * The message for {@code e}, raised while binding a value that {@code found} describes (e.g.
   * {@code a list}, {@code "abc"}): what was expected and what was found.
   */
  public static String message(JacksonException e, String found) {
    Class<?> target = null;
    if (e instanceof InputCoercionException c) {
      target = c.getTargetType();
      String range = range(target);
      if (range != null) {
        return found + " is out of range for " + expected(target) + " (" + range + ")";
      }
    } else if (e instanceof MismatchedInputException m) {
      target = m.getTargetType();
    }
    String original = e.getOriginalMessage();
    if (original != null && original.contains("cannot coerce value")) {
      // a tree node read as text (fabric8's quantities and int-or-strings read it so)
      return "expected a string, found " + found;
    }
    if (target != null && (original == null || original.startsWith("Cannot "))) {
      // Jackson's own wording names the Java type: replace it
      return "expected " + expected(target) + ", found " + found;
    }
    return words(original == null ? "unreadable value" : firstLine(original));
  }

  /**
   * {@link #message} for a document read from a stream, where the value is not at hand: the field's
   * path first ({@code node.memory.availableBytes: expected an integer, found ...}).
   */
  public static String located(JacksonException e) {
    StringBuilder path = new StringBuilder();
    for (var ref : e.getPath()) {
      if (ref.getPropertyName() != null) {
        path.append(path.length() == 0 ? "" : ".").append(ref.getPropertyName());
      } else if (ref.getIndex() >= 0) {
        path.append('[').append(ref.getIndex()).append(']');
      }
    }
    String m = message(e, "a value of another type");
    return path.length() == 0 ? m : path + ": " + m;
  }

  /** What a value bound to {@code type} is, in a document's terms. */
  public static String expected(Class<?> type) {
    if (type == null) {
      return "another value";
    }
    String scalar =
        type.isPrimitive() || type.getName().startsWith("java.")
            ? scalar(type.getSimpleName())
            : null;
    if (scalar != null) {
      return scalar;
    }
    if (type == String.class || CharSequence.class.isAssignableFrom(type)) {
      return "a string";
    }
    if (type.isEnum()) {
      StringBuilder b = new StringBuilder("one of ");
      Object[] values = type.getEnumConstants();
      for (int i = 0; i < values.length; i++) {
        b.append(i == 0 ? "" : ", ").append(values[i]);
      }
      return b.toString();
    }
    if (type.isArray() || Collection.class.isAssignableFrom(type)) {
      return "a list";
    }
    if (type.getSimpleName().equals("IntOrString")) {
      return "an integer or a string";
    }
    if (type.getSimpleName().equals("Quantity")) {
      return "a quantity";
    }
    if (Map.class.isAssignableFrom(type) || !type.getName().startsWith("java.")) {
      return "a mapping";
    }
    return "another value";
  }

  /** A JDK number, boolean or string type by its simple name, in a document's terms; else null. */
  private static String scalar(String simpleName) {
    return switch (simpleName) {
      case "Integer", "int", "Short", "short" -> "a 32-bit integer";
      case "Long", "long", "BigInteger" -> "an integer";
      case "Double", "double", "Float", "float", "BigDecimal" -> "a number";
      case "Boolean", "boolean" -> "true or false";
      case "String" -> "a string";
      default -> null;
    };
  }

  private static String range(Class<?> type) {
    if (type == Integer.class || type == int.class) {
      return Integer.MIN_VALUE + " to " + Integer.MAX_VALUE;
    }
    if (type == Long.class || type == long.class) {
      return Long.MIN_VALUE + " to " + Long.MAX_VALUE;
    }
    if (type == Short.class || type == short.class) {
      return Short.MIN_VALUE + " to " + Short.MAX_VALUE;
    }
    return null;
  }

  /** A message of Jackson's other than a type mismatch, its Java type names put in words. */
  private static String words(String message) {
    Matcher m = QUOTED_TYPE.matcher(message);
    StringBuilder b = new StringBuilder();
    while (m.find()) {
      String name = m.group(1);
      String simple = name.substring(name.lastIndexOf('.') + 1);
      String replacement = scalar(simple);
      if (replacement == null) {
        replacement =
            switch (simple) {
              case "List", "ArrayList", "Collection", "Set" -> "a list";
              default -> name.startsWith("java.") || !name.contains(".") ? simple : "a mapping";
            };
      }
      m.appendReplacement(b, Matcher.quoteReplacement(replacement));
    }
    m.appendTail(b);
    return b.toString();
  }

  private static String firstLine(String s) {
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }

  private static String excerpt(String s) {
    if (s == null) {
      return "";
    }
    return s.length() > 60 ? s.substring(0, 60) + "..." : s;
  }
}
