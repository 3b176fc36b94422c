package dev.evictd.config;

import dev.evictd.api.ConfigException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.api.lowlevel.Compose;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;
import org.snakeyaml.engine.v2.nodes.Tag;
import org.snakeyaml.engine.v2.schema.CoreSchema;

/**
 * Turns the bytes of a file into {@link YamlNode}s: strict UTF-8, snakeyaml-engine's composer with
 * the core schema (no duplicate or recursive keys, few aliases, bounded size and depth), and each
 * node's file, line, column and path from the document root. Every problem is one {@link
 * ConfigException} line naming the file and, where known, the line.
 */
final class YamlComposer {
  private static final int MAX_DEPTH = 200;
  private static final int MAX_CODE_POINTS = 256 * 1024 * 1024;

  /**
   * The characters snakeyaml's reader takes in at a time. Its reader copies the window from the
   * start of the token being scanned at each refill, so a long scalar costs its length squared over
   * this: with the default 1,024 a 5 MB plain scalar took 30 s to read.
   */
  static final int BUFFER_CHARS = 64 * 1024;

  /**
   * The longest run of bytes read without one of {@link #SEPARATES}: snakeyaml scans such a run as
   * one piece, at a cost of its length squared over {@link #BUFFER_CHARS} (a 20 MB one took 12 s).
   * 1 MiB is four times the API server's limit on all of a pod's annotations together.
   */
  static final int MAX_RUN = 1024 * 1024;

  /** Bytes that end a piece of snakeyaml's scan: white space, quotes, flow indicators. */
  private static final boolean[] SEPARATES = new boolean[256];

  static {
    for (char c : " \t\r\n\"',:{}[]#\\".toCharArray()) {
      SEPARATES[c] = true;
    }
  }

  private YamlComposer() {}

  /** Decodes {@code bytes} as strict UTF-8 and composes every YAML document in it. */
  static List<YamlNode> parseAll(String file, byte[] bytes) {
    return parseAll(file, bytes, null);
  }

  /**
   * As {@link #parseAll(String, byte[])}, offering list items to {@code binder} on the event path
   * (the composer's path, for what the event path hands back, binds nothing).
   */
  static List<YamlNode> parseAll(String file, byte[] bytes, YamlNode.ItemBinder binder) {
    String text = decode(file, bytes);
    if (text.isBlank()) {
      throw new ConfigException(file + ": file is empty");
    }
    LoadSettings settings = settings(file);
    List<YamlNode> docs = YamlEvents.build(file, text, settings, binder);
    return docs != null ? docs : composeAll(file, text, settings);
  }

  /** What {@link #parseAll} gives through snakeyaml's composer alone: the reference for tests. */
  static List<YamlNode> parseAllComposed(String file, byte[] bytes) {
    String text = decode(file, bytes);
    if (text.isBlank()) {
      throw new ConfigException(file + ": file is empty");
    }
    return composeAll(file, text, settings(file));
  }

  /** The loader settings: the limits that refuse hostile input (aliases, size) and the schema. */
  static LoadSettings settings(String file) {
    return LoadSettings.builder()
        .setLabel(file)
        .setAllowDuplicateKeys(false)
        .setAllowRecursiveKeys(false)
        .setMaxAliasesForCollections(50)
        .setCodePointLimit(MAX_CODE_POINTS)
        .setBufferSize(BUFFER_CHARS)
        .setSchema(new CoreSchema())
        .build();
  }

  /**
   * The reference path: snakeyaml's composer builds its node tree, then each node is converted. It
   * is what every file the event path hands back (anything but plain YAML, and every error) goes
   * through, so messages and results are its own.
   */
  static List<YamlNode> composeAll(String file, String text, LoadSettings settings) {
    List<YamlNode> docs = new ArrayList<>();
    try {
      for (Node n : new Compose(settings).composeAllFromString(text)) {
        docs.add(convert(file, YamlPath.ROOT, n, 0));
      }
    } catch (MarkedYamlEngineException e) {
      Mark m = e.getProblemMark().orElse(e.getContextMark().orElse(null));
      String where = m == null ? file : file + ":" + (m.getLine() + 1) + ":" + (m.getColumn() + 1);
      throw new ConfigException(where + ": not valid YAML: " + firstLine(e.getProblem()));
    } catch (YamlEngineException e) {
      throw new ConfigException(file + ": not valid YAML: " + firstLine(e.getMessage()));
    } catch (StackOverflowError e) {
      throw new ConfigException(file + ": not valid YAML: nesting too deep");
    }
    if (docs.isEmpty()) {
      throw new ConfigException(file + ": file is empty");
    }
    return docs;
  }

  private static String decode(String file, byte[] bytes) {
    int run = 0;
    int line = 1;
    for (int i = 0; i < bytes.length; i++) {
      byte b = bytes[i];
      if (b == 0) {
        throw new ConfigException(file + ": not a text file (NUL byte at offset " + i + ")");
      }
      if (b == '\n') {
        line++;
      }
      if (SEPARATES[b & 0xff]) {
        run = 0;
      } else if (++run > MAX_RUN) {
        throw new ConfigException(
            file
                + ":"
                + line
                + ": more than "
                + MAX_RUN
                + " bytes without a space, line break, quote or separator (a value this long is"
                + " not read)");
      }
    }
    String text = strictUtf8(bytes);
    if (text == null) {
      throw new ConfigException(file + ": not a UTF-8 text file");
    }
    return text;
  }

  /**
   * Decodes {@code bytes} as UTF-8, refusing malformed input: null when they are not UTF-8 text.
   */
  static String strictUtf8(byte[] bytes) {
    if (ascii(bytes)) {
      // the same string, one copy: the decoder widens every byte to a char and the string then
      // narrows them back (1.7 MB of fixture: 40 -> 23 ms in a fresh JVM with C1 alone)
      return new String(bytes, StandardCharsets.ISO_8859_1);
    }
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      return null;
    }
  }

  /** Whether every byte is 7-bit ASCII, where UTF-8 and ISO 8859-1 decode alike. */
  private static boolean ascii(byte[] bytes) {
    for (byte b : bytes) {
      if (b < 0) {
        return false;
      }
    }
    return true;
  }

  private static String firstLine(String s) {
    if (s == null) {
      return "syntax error";
    }
    int nl = s.indexOf('\n');
    return (nl < 0 ? s : s.substring(0, nl)).trim();
  }

  private static YamlNode convert(String file, YamlPath path, Node n, int depth) {
    Mark start = n.getStartMark().orElse(null);
    int line = start == null ? 0 : start.getLine() + 1;
    int col = start == null ? 0 : start.getColumn() + 1;
    if (depth > MAX_DEPTH) {
      throw new ConfigException(
          file + ":" + line + ": " + YamlNode.display(path.toString()) + ": nesting too deep");
    }
    if (n instanceof MappingNode mn) {
      Map<String, YamlNode> m = new LinkedHashMap<>();
      for (NodeTuple t : mn.getValue()) {
        if (!(t.getKeyNode() instanceof ScalarNode k)) {
          throw new ConfigException(
              file
                  + ":"
                  + line
                  + ": "
                  + YamlNode.display(path.toString())
                  + ": mapping keys must be plain strings");
        }
        String key = k.getValue();
        if (m.containsKey(key)) {
          int kl = k.getStartMark().map(mk -> mk.getLine() + 1).orElse(line);
          throw new ConfigException(
              file
                  + ":"
                  + kl
                  + ": "
                  + YamlNode.display(path.toString())
                  + ": duplicate key "
                  + key);
        }
        m.put(key, convert(file, path.key(key), t.getValueNode(), depth + 1));
      }
      return new YamlNode(file, path, line, col, YamlNode.Kind.MAP, m, null, null, n.getTag());
    }
    if (n instanceof SequenceNode sn) {
      List<YamlNode> l = new ArrayList<>();
      int i = 0;
      for (Node c : sn.getValue()) {
        l.add(convert(file, path.index(i), c, depth + 1));
        i++;
      }
      return new YamlNode(file, path, line, col, YamlNode.Kind.SEQ, null, l, null, n.getTag());
    }
    ScalarNode s = (ScalarNode) n;
    if (Tag.NULL.equals(s.getTag())) {
      return new YamlNode(file, path, line, col, YamlNode.Kind.NULL, null, null, null, s.getTag());
    }
    return new YamlNode(
        file, path, line, col, YamlNode.Kind.SCALAR, null, null, s.getValue(), s.getTag());
  }
}
