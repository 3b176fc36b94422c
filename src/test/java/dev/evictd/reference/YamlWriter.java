package dev.evictd.reference;

import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Writes a document tree (maps with string keys, lists, strings, integers, booleans, null) as
 * block-style YAML that reads back to the same tree. Small maps and lists of scalars are written in
 * flow style, as hand-written fixtures do. Strings are written plain only when YAML cannot read
 * them as anything but that string; otherwise they are double-quoted with escapes.
 */
public final class YamlWriter {
  private static final int FLOW_WIDTH = 100;
  private static final Pattern PLAIN_WORD = Pattern.compile("[A-Za-z_][A-Za-z0-9._/-]*");
  // quantities and durations: digits then a letter suffix (never a YAML number, bool or date)
  private static final Pattern PLAIN_AMOUNT =
      Pattern.compile("[0-9]+(\\.[0-9]+)?[A-Za-z]+([0-9]+(\\.[0-9]+)?[A-Za-z]+)*");
  private static final Pattern FLOAT_LIKE = Pattern.compile("[0-9]+(\\.[0-9]*)?[eE][-+]?[0-9]+");
  private static final Pattern RESERVED =
      Pattern.compile("(?i)(true|false|yes|no|on|off|y|n|null|nan|inf)");

  private YamlWriter() {}

  /** The tree as YAML text ending with a newline. */
  public static String write(Object tree) {
    StringBuilder b = new StringBuilder();
    if (tree instanceof Map<?, ?> m && !m.isEmpty()) {
      writeMap(b, m, 0);
    } else if (tree instanceof List<?> l && !l.isEmpty()) {
      writeList(b, l, 0);
    } else {
      b.append(scalarOrFlow(tree)).append('\n');
    }
    return b.toString();
  }

  private static void writeMap(StringBuilder b, Map<?, ?> m, int indent) {
    for (Map.Entry<?, ?> e : m.entrySet()) {
      pad(b, indent).append(scalar(String.valueOf(e.getKey()))).append(':');
      writeValue(b, e.getValue(), indent);
    }
  }

  /**
   * Writes a value after "key:" or "-": inline when it is a scalar or fits in flow style, else as a
   * block.
   */
  private static void writeValue(StringBuilder b, Object v, int indent) {
    String flow = flow(v);
    if (flow != null) {
      b.append(' ').append(flow).append('\n');
    } else if (v instanceof Map<?, ?> m) {
      b.append('\n');
      writeMap(b, m, indent + 2);
    } else {
      b.append('\n');
      writeList(b, (List<?>) v, indent + 2);
    }
  }

  private static void writeList(StringBuilder b, List<?> l, int indent) {
    for (Object item : l) {
      if (item instanceof Map<?, ?> m && !m.isEmpty() && flow(item) == null) {
        // "- key: value" then the other keys aligned under the first
        boolean first = true;
        for (Map.Entry<?, ?> e : m.entrySet()) {
          if (first) {
            pad(b, indent).append("- ");
            first = false;
          } else {
            pad(b, indent + 2);
          }
          b.append(scalar(String.valueOf(e.getKey()))).append(':');
          writeValue(b, e.getValue(), indent + 2);
        }
      } else {
        pad(b, indent).append('-');
        writeValue(b, item, indent);
      }
    }
  }

  /**
   * The flow form of a scalar, an empty collection, or a short collection of scalars; null when too
   * big.
   */
  private static String flow(Object v) {
    if (v instanceof Map<?, ?> m) {
      if (m.isEmpty()) {
        return "{}";
      }
      StringBuilder b = new StringBuilder("{");
      for (Map.Entry<?, ?> e : m.entrySet()) {
        if (e.getValue() instanceof Map<?, ?> || e.getValue() instanceof List<?>) {
          String inner = flow(e.getValue());
          if (inner == null) {
            return null;
          }
          b.append(b.length() > 1 ? ", " : "")
              .append(scalar(String.valueOf(e.getKey())))
              .append(": ")
              .append(inner);
        } else {
          b.append(b.length() > 1 ? ", " : "")
              .append(scalar(String.valueOf(e.getKey())))
              .append(": ")
              .append(scalarOrFlow(e.getValue()));
        }
        if (b.length() > FLOW_WIDTH) {
          return null;
        }
      }
      return b.append('}').toString();
    }
    if (v instanceof List<?> l) {
      if (l.isEmpty()) {
        return "[]";
      }
      StringBuilder b = new StringBuilder("[");
      for (Object item : l) {
        if (item instanceof Map<?, ?> || item instanceof List<?>) {
          return null;
        }
        b.append(b.length() > 1 ? ", " : "").append(scalarOrFlow(item));
        if (b.length() > FLOW_WIDTH) {
          return null;
        }
      }
      return b.append(']').toString();
    }
    return scalarOrFlow(v);
  }

  private static String scalarOrFlow(Object v) {
    if (v == null) {
      return "null";
    }
    if (v instanceof Boolean || v instanceof Integer || v instanceof Long) {
      return v.toString();
    }
    if (v instanceof Map<?, ?> || v instanceof List<?>) {
      String f = flow(v);
      if (f == null) {
        throw new IllegalArgumentException("not a flow value: " + v);
      }
      return f;
    }
    return scalar(v.toString());
  }

  /** A string as a YAML scalar that reads back as that string. */
  static String scalar(String s) {
    if ((PLAIN_WORD.matcher(s).matches() && !RESERVED.matcher(s).matches())
        || (PLAIN_AMOUNT.matcher(s).matches() && !FLOAT_LIKE.matcher(s).matches())) {
      return s;
    }
    StringBuilder b = new StringBuilder("\"");
    s.codePoints()
        .forEach(
            c -> {
              switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\t' -> b.append("\\t");
                case '\r' -> b.append("\\r");
                default -> {
                  if (c < 0x20
                      || c == 0x7f
                      || (c >= 0x80 && c < 0xa0)
                      || c == 0xfeff
                      || c == 0x2028
                      || c == 0x2029) {
                    b.append(String.format("\\u%04x", c));
                  } else {
                    b.appendCodePoint(c);
                  }
                }
              }
            });
    return b.append('"').toString();
  }

  private static StringBuilder pad(StringBuilder b, int n) {
    for (int i = 0; i < n; i++) {
      b.append(' ');
    }
    return b;
  }
}
