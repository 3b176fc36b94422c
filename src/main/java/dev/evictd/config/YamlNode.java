package dev.evictd.config;

import dev.evictd.api.ConfigException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.snakeyaml.engine.v2.nodes.Tag;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * A parsed YAML value that remembers where it came from (file, line, column, path from the document
 * root), so every error about it can name the place. Mappings keep key order; duplicate keys are
 * refused.
 */
public final class YamlNode {
  /** The shape of a node. */
  public enum Kind {
    MAP,
    SEQ,
    SCALAR,
    NULL
  }

  private final String file;
  private final YamlPath path;
  private final int line;
  private final int column;
  private final Kind kind;
  private final Map<String, YamlNode> map;
  private final List<YamlNode> seq;
  private final String scalar;
  private final Tag tag;
  private final Object bound;

  /**
   * Binds the mapping items of a list while the file is parsed, so that each item's subtree is
   * garbage as soon as it is bound instead of staying on the heap until the whole file is parsed:
   * for a 5,000-pod fixture most of the parse's live heap, and most of its garbage collection.
   */
  public interface ItemBinder {
    /** The key whose list's mapping items are offered to {@link #bind}, e.g. {@code pods}. */
    String listKey();

    /**
     * What {@code item} binds to, or null to keep it whole (a binding error is reported later, by
     * the caller's own reading of the item, in the order it reads the file). Must not throw.
     */
    Object bind(YamlNode item);
  }

  /** A node as {@link YamlComposer} builds it from the composed YAML. */
  YamlNode(
      String file,
      YamlPath path,
      int line,
      int column,
      Kind kind,
      Map<String, YamlNode> map,
      List<YamlNode> seq,
      String scalar,
      Tag tag) {
    this.file = file;
    this.path = path;
    this.line = line;
    this.column = column;
    this.kind = kind;
    this.map = map;
    this.seq = seq;
    this.scalar = scalar;
    this.tag = tag;
    this.bound = null;
  }

  /** A bound item: its place (file, line, path), the value it bound to, none of its entries. */
  private YamlNode(YamlNode item, Object bound) {
    this.file = item.file;
    this.path = item.path;
    this.line = item.line;
    this.column = item.column;
    this.kind = item.kind;
    this.map = Map.of();
    this.seq = null;
    this.scalar = null;
    this.tag = item.tag;
    this.bound = bound;
  }

  /** This mapping replaced by what it bound to. */
  YamlNode boundTo(Object value) {
    return new YamlNode(this, value);
  }

  /** Decodes {@code bytes} as strict UTF-8 and parses every YAML document in it. */
  public static List<YamlNode> parseAll(String file, byte[] bytes) {
    return YamlComposer.parseAll(file, bytes);
  }

  /** Parses a file that must hold exactly one YAML document. */
  public static YamlNode parse(String file, byte[] bytes) {
    return parse(file, bytes, null);
  }

  /**
   * Parses a file that must hold exactly one YAML document, offering the mapping items of lists
   * under {@code binder}'s key to it as they are parsed (null: none). An item it binds is kept as
   * {@link #bound()}, without its entries; the rest of the tree, every message and every limit are
   * as {@link #parse(String, byte[])} gives them.
   */
  public static YamlNode parse(String file, byte[] bytes, ItemBinder binder) {
    List<YamlNode> docs = YamlComposer.parseAll(file, bytes, binder);
    if (docs.size() != 1) {
      throw new ConfigException(file + ": expected one YAML document, found " + docs.size());
    }
    return docs.get(0);
  }

  /**
   * Decodes {@code bytes} as UTF-8, refusing malformed input: null when they are not UTF-8 text.
   */
  public static String strictUtf8(byte[] bytes) {
    return YamlComposer.strictUtf8(bytes);
  }

  static String display(String path) {
    return path.isEmpty() ? "(document)" : path;
  }

  /** The file the node came from. */
  public String file() {
    return file;
  }

  /** 1-based line of the node's start. */
  public int line() {
    return line;
  }

  /** 1-based column of the node's start. */
  int column() {
    return column;
  }

  /** The tag snakeyaml resolved (or was given) for the node. */
  Tag tag() {
    return tag;
  }

  /** The node's path from the document root, e.g. {@code steps[2].expect.evicted[0].pod}. */
  public String path() {
    return path.toString();
  }

  /**
   * What the parse's {@link ItemBinder} bound this mapping to, or null when it was not bound (a
   * bound mapping keeps its place but none of its entries).
   */
  public Object bound() {
    return bound;
  }

  /** The node's shape. */
  public Kind kind() {
    return kind;
  }

  /** {@code file:line: path}: the prefix of every message about this node. */
  public String where() {
    return file + ":" + line + ": " + display(path.toString());
  }

  /** A configuration error located at this node. */
  public ConfigException error(String message) {
    return new ConfigException(where() + ": " + message);
  }

  public boolean isNull() {
    return kind == Kind.NULL;
  }

  public boolean isMap() {
    return kind == Kind.MAP;
  }

  public boolean isSeq() {
    return kind == Kind.SEQ;
  }

  /** Whether the scalar was written as a YAML integer. */
  public boolean isInt() {
    return kind == Kind.SCALAR && Tag.INT.equals(tag);
  }

  /** The mapping's entries (order kept); refuses other shapes. */
  public Map<String, YamlNode> asMap() {
    if (kind != Kind.MAP) {
      throw error("expected a mapping, found " + describe());
    }
    return Collections.unmodifiableMap(map);
  }

  /** The mapping's entries, or an empty map when the node is null. */
  public Map<String, YamlNode> asMapOrEmpty() {
    return kind == Kind.NULL ? Map.of() : asMap();
  }

  /** The sequence's items; refuses other shapes. */
  public List<YamlNode> asList() {
    if (kind != Kind.SEQ) {
      throw error("expected a list, found " + describe());
    }
    return Collections.unmodifiableList(seq);
  }

  /** The sequence's items, or an empty list when the node is null. */
  public List<YamlNode> asListOrEmpty() {
    return kind == Kind.NULL ? List.of() : asList();
  }

  /** A child of a mapping, or null when absent. */
  public YamlNode get(String key) {
    return asMap().get(key);
  }

  /** The scalar's text (strings, numbers and booleans alike); refuses mappings, lists and null. */
  public String asText() {
    if (kind != Kind.SCALAR) {
      throw error("expected a value, found " + describe());
    }
    return scalar;
  }

  /** The scalar as a string; refuses non-string scalars unless {@code acceptNumbers}. */
  public String asString(boolean acceptNumbers) {
    String s = asText();
    if (!Tag.STR.equals(tag)
        && !(acceptNumbers && (Tag.INT.equals(tag) || Tag.FLOAT.equals(tag)))) {
      throw error("expected a string, found " + describe());
    }
    return s;
  }

  /** The scalar as a YAML boolean. */
  public boolean asBoolean() {
    if (kind == Kind.SCALAR && Tag.BOOL.equals(tag)) {
      return Boolean.parseBoolean(scalar.toLowerCase(java.util.Locale.ROOT));
    }
    throw error("expected true or false, found " + describe());
  }

  /** The scalar as a YAML integer within [min, max]. */
  public long asLong(long min, long max) {
    if (kind == Kind.SCALAR && Tag.INT.equals(tag)) {
      try {
        java.math.BigInteger v = parseYamlInt(scalar);
        if (v.compareTo(java.math.BigInteger.valueOf(min)) < 0
            || v.compareTo(java.math.BigInteger.valueOf(max)) > 0) {
          throw error("value " + scalar + " out of range [" + min + ", " + max + "]");
        }
        return v.longValue();
      } catch (NumberFormatException e) {
        throw error("not an integer: " + scalar);
      }
    }
    throw error("expected an integer, found " + describe());
  }

  /** The longest number a document may hold, as Jackson's JSON parser limits it. */
  static final int MAX_NUMBER_TEXT = 1_000;

  private static java.math.BigInteger parseYamlInt(String s) {
    if (s.length() > MAX_NUMBER_TEXT) {
      throw new NumberFormatException("more than " + MAX_NUMBER_TEXT + " characters");
    }
    String t = s.replace("_", "");
    boolean neg = t.startsWith("-");
    if (t.startsWith("-") || t.startsWith("+")) {
      t = t.substring(1);
    }
    java.math.BigInteger v;
    if (t.startsWith("0x")) {
      v = new java.math.BigInteger(t.substring(2), 16);
    } else if (t.startsWith("0o")) {
      v = new java.math.BigInteger(t.substring(2), 8);
    } else {
      v = new java.math.BigInteger(t);
    }
    return neg ? v.negate() : v;
  }

  /** Refuses keys of this mapping that are not in {@code allowed}, naming the key and its line. */
  public void requireKnownKeys(Set<String> allowed) {
    for (Map.Entry<String, YamlNode> e : asMap().entrySet()) {
      if (!allowed.contains(e.getKey())) {
        YamlNode v = e.getValue();
        throw new ConfigException(
            file
                + ":"
                + v.line
                + ": "
                + display(path.toString())
                + ": unknown key \""
                + e.getKey()
                + "\""
                + KeySuggestions.suggestion(e.getKey(), allowed));
      }
    }
  }

  /** A short description of the node's shape and value for messages. */
  public String describe() {
    switch (kind) {
      case MAP:
        return "a mapping";
      case SEQ:
        return "a list";
      case NULL:
        return "null";
      default:
        String shown = scalar.length() > 60 ? scalar.substring(0, 60) + "..." : scalar;
        return (Tag.STR.equals(tag) ? "\"" + shown + "\"" : shown);
    }
  }

  /**
   * Converts the node to a Jackson tree (for binding Kubernetes objects), typing scalars as YAML
   * resolved them.
   */
  public JsonNode toJson() {
    if (bound != null) {
      throw new IllegalStateException(where() + ": already bound, its entries are not kept");
    }
    return toJson(this, JsonNodeFactory.instance);
  }

  /**
   * The smallest Jackson number node that holds {@code v}: binders such as fabric8's int-or-string
   * accept only an int node, as from JSON, for a port like {@code 8080}.
   */
  private static JsonNode intNode(java.math.BigInteger v, JsonNodeFactory f) {
    if (v.bitLength() < Integer.SIZE) {
      return f.numberNode(v.intValue());
    }
    if (v.bitLength() < Long.SIZE) {
      return f.numberNode(v.longValue());
    }
    return f.numberNode(v);
  }

  private static JsonNode toJson(YamlNode n, JsonNodeFactory f) {
    switch (n.kind) {
      case MAP:
        ObjectNode o = f.objectNode();
        n.map.forEach((k, v) -> o.set(k, toJson(v, f)));
        return o;
      case SEQ:
        ArrayNode a = f.arrayNode();
        n.seq.forEach(v -> a.add(toJson(v, f)));
        return a;
      case NULL:
        return f.nullNode();
      default:
        if ((Tag.INT.equals(n.tag) || Tag.FLOAT.equals(n.tag))
            && n.scalar.length() > MAX_NUMBER_TEXT) {
          // reading it takes time that grows with the square of its digits (a megabyte of them:
          // half a minute), and no field of a pod, a summary or a configuration holds such a number
          throw n.error(
              "a number of "
                  + n.scalar.length()
                  + " characters (at most "
                  + MAX_NUMBER_TEXT
                  + " are read)");
        }
        if (Tag.INT.equals(n.tag)) {
          try {
            return intNode(parseYamlInt(n.scalar), f);
          } catch (NumberFormatException e) {
            return f.textNode(n.scalar);
          }
        }
        if (Tag.FLOAT.equals(n.tag)) {
          try {
            return f.numberNode(new java.math.BigDecimal(n.scalar.replace("_", "")));
          } catch (NumberFormatException e) {
            return f.textNode(n.scalar);
          }
        }
        if (Tag.BOOL.equals(n.tag)) {
          return f.booleanNode(Boolean.parseBoolean(n.scalar.toLowerCase(java.util.Locale.ROOT)));
        }
        return f.textNode(n.scalar);
    }
  }

  /**
   * Finds the node at a Jackson-style path below this node ({@code a.b[2].c}) to report where a
   * binding error occurred; returns the deepest node found.
   */
  public YamlNode locate(List<Object> pathElements) {
    YamlNode cur = this;
    for (Object el : pathElements) {
      YamlNode next = null;
      if (el instanceof Integer i && cur.kind == Kind.SEQ && i >= 0 && i < cur.seq.size()) {
        next = cur.seq.get(i);
      } else if (el instanceof String s && cur.kind == Kind.MAP) {
        next = cur.map.get(s);
      }
      if (next == null) {
        break;
      }
      cur = next;
    }
    return cur;
  }

  /** Maps each child of a mapping through {@code f}, keeping order. */
  public <T> Map<String, T> mapValues(Function<YamlNode, T> f) {
    Map<String, T> out = new LinkedHashMap<>();
    asMapOrEmpty().forEach((k, v) -> out.put(k, f.apply(v)));
    return out;
  }
}
