package dev.evictd.config;

/**
 * Where a node is from the document root ({@code steps[2].expect.evicted[0].pod}), kept as its
 * parent and its own key or index and spelt out only when asked (an error message): a 5,000-pod
 * fixture has a quarter of a million nodes, and a string each was most of what parsing it kept.
 */
final class YamlPath {
  /** The document itself. */
  static final YamlPath ROOT = new YamlPath(null, null, -1);

  private static final java.util.regex.Pattern IDENTIFIER =
      java.util.regex.Pattern.compile("[A-Za-z_][A-Za-z0-9_-]*");

  private final YamlPath parent;
  private final String key;
  private final int index;

  private YamlPath(YamlPath parent, String key, int index) {
    this.parent = parent;
    this.key = key;
    this.index = index;
  }

  /** The path of this mapping's value under {@code key}. */
  YamlPath key(String k) {
    return new YamlPath(this, k, -1);
  }

  /** The path of this sequence's item {@code i}. */
  YamlPath index(int i) {
    return new YamlPath(this, null, i);
  }

  /** The path as text; empty for the document. */
  @Override
  public String toString() {
    if (parent == null) {
      return "";
    }
    StringBuilder sb = new StringBuilder();
    append(sb);
    return sb.toString();
  }

  private void append(StringBuilder sb) {
    if (parent == null) {
      return;
    }
    parent.append(sb);
    if (key == null) {
      sb.append('[').append(index).append(']');
    } else if (IDENTIFIER.matcher(key).matches()) {
      if (sb.length() > 0) {
        sb.append('.');
      }
      sb.append(key);
    } else {
      sb.append("[\"").append(key.replace("\"", "\\\"")).append("\"]");
    }
  }
}
