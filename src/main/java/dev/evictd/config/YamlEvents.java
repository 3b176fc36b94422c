package dev.evictd.config;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.api.lowlevel.Parse;
import org.snakeyaml.engine.v2.events.CollectionStartEvent;
import org.snakeyaml.engine.v2.events.Event;
import org.snakeyaml.engine.v2.events.ScalarEvent;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.Tag;
import org.snakeyaml.engine.v2.resolver.ScalarResolver;

/**
 * Builds {@link YamlNode}s straight from snakeyaml's parser events, without its composer's node
 * tree: for a 5,000-pod fixture that tree was a second copy of the document on the heap while it
 * was converted, and most of the parse's time went to collecting it.
 *
 * <p>Only plain YAML takes this path: scalar keys, implicit tags, no aliases, no merge keys ({@code
 * <<}). At anything else, and at every error (syntax, duplicate key, nesting), it gives up and
 * returns null, and the caller parses the text again with the composer, whose results and messages
 * are the reference; so both paths agree on everything, by construction for the rest and by {@code
 * YamlEventsTest} for what is built here (tags resolved as the composer resolves them).
 */
final class YamlEvents {
  private static final int MAX_DEPTH = 200;

  /**
   * Scalars at most this long are resolved once per distinct text and kept as one string per parse
   * (a 5,000-pod fixture repeats its keys and most of its values thousands of times).
   */
  private static final int SHORT = 64;

  /** At most this many distinct short scalars are remembered per parse (hostile input). */
  private static final int MAX_REMEMBERED = 1 << 16;

  /** A plain scalar's text, one copy of it, and the tag it resolves to. */
  private record Resolved(String text, Tag tag) {}

  private YamlEvents() {}

  /** An open mapping or sequence. */
  private static final class Frame {
    final Frame parent;
    final YamlPath path;
    final int line;
    final int column;
    final int depth;
    final Map<String, YamlNode> map;
    final List<YamlNode> seq;
    final Tag tag;
    String key;

    Frame(Frame parent, YamlPath path, int line, int column, int depth, boolean isMap, Tag tag) {
      this.parent = parent;
      this.path = path;
      this.line = line;
      this.column = column;
      this.depth = depth;
      // most mappings of a fixture have one to three keys: a table of 4 instead of 16 to start
      this.map = isMap ? new LinkedHashMap<>(4) : null;
      this.seq = isMap ? null : new ArrayList<>();
      this.tag = tag;
    }
  }

  /** Every document of {@code text}, or null when the composer must parse it instead. */
  static List<YamlNode> build(String file, String text, LoadSettings settings) {
    return build(file, text, settings, null);
  }

  /**
   * As {@link #build(String, String, LoadSettings)}, offering each mapping item of a list under
   * {@code binder}'s key (null: none) to it as soon as the item is complete.
   */
  static List<YamlNode> build(
      String file, String text, LoadSettings settings, YamlNode.ItemBinder binder) {
    try {
      return events(file, text, settings, binder);
    } catch (YamlEngineException | IllegalStateException e) {
      return null; // the composer reports it (or whatever it throws), with its own message
    }
  }

  private static List<YamlNode> events(
      String file, String text, LoadSettings settings, YamlNode.ItemBinder binder) {
    ScalarResolver resolver = settings.getSchema().getScalarResolver();
    List<YamlNode> docs = new ArrayList<>();
    // resolution depends only on the text and whether it is plain (the composer's rule below)
    Map<String, Resolved> tags = new HashMap<>();
    Map<String, Resolved> quoted = new HashMap<>();
    Frame top = null;
    for (Event e : new Parse(settings).parseString(text)) {
      switch (e.getEventId()) {
        case Scalar -> {
          ScalarEvent s = (ScalarEvent) e;
          if (s.getTag().isPresent() && !"!".equals(s.getTag().get())) {
            return null; // an explicit tag
          }
          String value = s.getValue();
          boolean plain = s.getImplicit().canOmitTagInPlainScalar();
          Tag tag;
          Resolved known = value.length() <= SHORT ? (plain ? tags : quoted).get(value) : null;
          if (known != null) {
            value = known.text();
            tag = known.tag();
          } else {
            tag = resolver.resolve(value, plain);
            if (value.length() <= SHORT && tags.size() + quoted.size() < MAX_REMEMBERED) {
              (plain ? tags : quoted).put(value, new Resolved(value, tag));
            }
          }
          if (top != null && top.map != null && top.key == null) {
            if (Tag.MERGE.equals(tag) || top.map.containsKey(value)) {
              return null; // a merge key, or a duplicate key the composer's path refuses
            }
            top.key = value;
            continue;
          }
          YamlPath path = childPath(top);
          int depth = top == null ? 0 : top.depth + 1;
          if (depth > MAX_DEPTH) {
            return null;
          }
          Mark m = e.getStartMark().orElse(null);
          YamlNode n =
              Tag.NULL.equals(tag)
                  ? new YamlNode(
                      file, path, line(m), column(m), YamlNode.Kind.NULL, null, null, null, tag)
                  : new YamlNode(
                      file, path, line(m), column(m), YamlNode.Kind.SCALAR, null, null, value, tag);
          if (top == null) {
            docs.add(n);
          } else {
            add(top, n);
          }
        }
        case MappingStart, SequenceStart -> {
          CollectionStartEvent c = (CollectionStartEvent) e;
          if (c.getTag().isPresent() && !"!".equals(c.getTag().get())) {
            return null;
          }
          if (top != null && top.map != null && top.key == null) {
            return null; // a mapping or list as a key
          }
          boolean isMap = e.getEventId() == Event.ID.MappingStart;
          int depth = top == null ? 0 : top.depth + 1;
          if (depth > MAX_DEPTH) {
            return null;
          }
          Mark m = e.getStartMark().orElse(null);
          top =
              new Frame(
                  top, childPath(top), line(m), column(m), depth, isMap, isMap ? Tag.MAP : Tag.SEQ);
        }
        case MappingEnd, SequenceEnd -> {
          Frame f = top;
          YamlNode n =
              new YamlNode(
                  file,
                  f.path,
                  f.line,
                  f.column,
                  f.map != null ? YamlNode.Kind.MAP : YamlNode.Kind.SEQ,
                  f.map,
                  f.seq,
                  null,
                  f.tag);
          top = f.parent;
          if (binder != null
              && f.map != null
              && top != null
              && top.seq != null
              && top.parent != null
              && top.parent.map != null
              && binder.listKey().equals(top.parent.key)) {
            Object bound = binder.bind(n);
            if (bound != null) {
              n = n.boundTo(bound); // its entries are garbage from here on
            }
          }
          if (top == null) {
            docs.add(n);
          } else {
            add(top, n);
          }
        }
        case Alias -> {
          return null;
        }
        default -> {
          // stream and document boundaries (and comments, which these settings never emit)
        }
      }
    }
    return docs.isEmpty() ? null : docs; // no document: the composer's path says so
  }

  private static YamlPath childPath(Frame top) {
    if (top == null) {
      return YamlPath.ROOT;
    }
    return top.map != null ? top.path.key(top.key) : top.path.index(top.seq.size());
  }

  private static void add(Frame top, YamlNode n) {
    if (top.map != null) {
      top.map.put(top.key, n);
      top.key = null;
    } else {
      top.seq.add(n);
    }
  }

  private static int line(Mark m) {
    return m == null ? 0 : m.getLine() + 1;
  }

  private static int column(Mark m) {
    return m == null ? 0 : m.getColumn() + 1;
  }
}
