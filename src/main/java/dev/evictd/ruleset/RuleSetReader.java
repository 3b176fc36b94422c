package dev.evictd.ruleset;

import dev.evictd.api.RulesException;
import dev.evictd.engine.RuleSource;
import java.io.IOException;
import java.io.InputStream;
import java.net.JarURLConnection;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads rule directories (the {@code rules.yaml} manifest, {@code extends} and {@code exclude}) and
 * the packaged default rules, checking the owners and modes of what it reads.
 */
final class RuleSetReader {
  /**
   * What a rule set's files may hold in all: 256 KiB (the default rules hold about 31 KiB). Checked
   * as they are read, so a larger set is never read whole.
   */
  static final int MAX_RULE_SET_BYTES = 256 * 1024;

  /** A manifest is a few lines. */
  private static final int MAX_MANIFEST_BYTES = 64 * 1024;

  private static final int MAX_EXTENDS_DEPTH = 8;
  private static final Logger LOG = LoggerFactory.getLogger(RuleCompiler.class);

  private final RuleCompiler.Ownership ownership;
  private final List<String> warnings;
  private final RuleProvenance provenance;

  /** The bytes of the rule files read so far (the base sets' included). */
  private long bytesRead;

  RuleSetReader(RuleCompiler.Ownership ownership, List<String> warnings) {
    this.ownership = ownership;
    this.warnings = warnings;
    this.provenance =
        ownership == RuleCompiler.Ownership.IGNORE ? null : RuleProvenance.forCurrentUser();
  }

  void checkOwnership(Path p) {
    if (provenance == null) {
      return;
    }
    List<String> problems = provenance.problems(p);
    if (problems.isEmpty()) {
      return;
    }
    if (ownership == RuleCompiler.Ownership.ENFORCE) {
      throw new RulesException(
          String.join("\n", problems)
              + "\n(rule files must be writable only by root or evictd's user)");
    }
    for (String w : problems) {
      LOG.warn("{}", w);
      warnings.add(w);
    }
  }

  /** The rule files of a directory, its manifest's base sets merged in. */
  List<RuleSource> read(Path dir) {
    return read(dir, new java.util.LinkedHashSet<>());
  }

  private List<RuleSource> read(Path dir, java.util.Set<Path> chain) {
    Path key = dir.toAbsolutePath().normalize();
    if (!chain.add(key)) {
      throw new RulesException(dir + ": rule sets extend each other in a cycle: " + chain);
    }
    if (chain.size() > MAX_EXTENDS_DEPTH) {
      throw new RulesException(
          dir + ": rule sets extend each other too deeply (more than " + MAX_EXTENDS_DEPTH + ")");
    }
    Path manifest = dir.resolve(RuleCompiler.MANIFEST);
    if (Files.isDirectory(dir)) {
      checkOwnership(dir);
    }
    if (!Files.isRegularFile(manifest)) {
      return readDir(dir, true);
    }
    checkOwnership(manifest);
    dev.evictd.config.YamlNode m;
    try {
      m =
          dev.evictd.config.YamlNode.parse(
              manifest.toString(),
              readText(manifest, MAX_MANIFEST_BYTES, 0).getBytes(StandardCharsets.UTF_8));
      if (!m.isMap()) {
        throw m.error("expected a mapping with \"extends\"");
      }
      m.requireKnownKeys(java.util.Set.of("extends", "exclude"));
    } catch (dev.evictd.api.ConfigException e) {
      throw new RulesException(e.getMessage());
    }
    dev.evictd.config.YamlNode ext = m.get("extends");
    if (ext == null || ext.isNull()) {
      throw new RulesException(
          m.where() + ": missing required key \"extends\" (default, or a rules directory)");
    }
    List<RuleSource> base;
    try {
      String e = ext.asString(false);
      base = e.equals("default") ? counted(readDefault()) : read(dir.resolve(e), chain);
    } catch (dev.evictd.api.ConfigException e) {
      throw new RulesException(e.getMessage());
    }
    java.util.Set<String> exclude = new java.util.HashSet<>();
    dev.evictd.config.YamlNode ex = m.get("exclude");
    if (ex != null) {
      for (dev.evictd.config.YamlNode n : ex.asListOrEmpty()) {
        String name = n.asString(false);
        if (base.stream().noneMatch(s -> s.name().equals(name))) {
          throw new RulesException(n.where() + ": the base rule set has no file " + name);
        }
        exclude.add(name);
      }
    }
    java.util.Map<String, RuleSource> merged = new java.util.LinkedHashMap<>();
    for (RuleSource s : base) {
      if (!exclude.contains(s.name())) {
        merged.put(s.name(), s);
      }
    }
    for (RuleSource s : readDir(dir, false)) {
      merged.put(s.name(), s);
    }
    List<RuleSource> out = new ArrayList<>(merged.values());
    out.sort(java.util.Comparator.comparing(RuleSource::name));
    return out;
  }

  private List<RuleSource> readDir(Path dir, boolean requireFiles) {
    long[] read = {bytesRead};
    List<RuleSource> out = RuleSetReader.listDir(dir, requireFiles, read);
    bytesRead = read[0];
    for (RuleSource s : out) {
      checkOwnership(Path.of(s.path()));
    }
    return out;
  }

  /** The packaged rules a manifest extends, counted with the set's files. */
  private List<RuleSource> counted(List<RuleSource> sources) {
    for (RuleSource s : sources) {
      bytesRead += s.text().getBytes(StandardCharsets.UTF_8).length;
      if (bytesRead > MAX_RULE_SET_BYTES) {
        throw tooLarge(s.path());
      }
    }
    return sources;
  }

  /** A rule set past {@link #MAX_RULE_SET_BYTES}, at the file {@code where} that takes it past. */
  static RulesException tooLarge(String where) {
    return new RulesException(
        where + ": too large: " + LIMIT + "; with this file the set's files hold more");
  }

  /** What a rule set may hold, in a message. */
  static final String LIMIT =
      "a rule set's files may hold "
          + (MAX_RULE_SET_BYTES / 1024)
          + " KiB ("
          + MAX_RULE_SET_BYTES
          + " bytes) in all";

  /**
   * Refuses a rule file whose name is not printable ASCII: a name with a look-alike letter
   * (Cyrillic "е" for "e"), an invisible or a control character could pass for, or hide beside, the
   * file it imitates.
   */
  static void checkName(Path f) {
    String name = f.getFileName().toString();
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c < 0x21 || c > 0x7e) {
        throw new RulesException(
            f.getParent()
                + ": rule file name \""
                + name
                + "\" has "
                + String.format("U+%04X", (int) c)
                + " at "
                + (i + 1)
                + ": rule file names must be printable ASCII (a look-alike or invisible character"
                + " could pass for another file)");
      }
    }
  }

  /**
   * The {@code .drl} files of a directory; {@code read[0]}, the bytes of the set's files read
   * before, grows by theirs.
   */
  private static List<RuleSource> listDir(Path dir, boolean requireFiles, long[] read) {
    if (!Files.isDirectory(dir)) {
      throw new RulesException(dir + ": not a directory of rules");
    }
    List<Path> files;
    try (Stream<Path> s = Files.list(dir)) {
      files = s.filter(p -> p.getFileName().toString().endsWith(".drl")).sorted().toList();
    } catch (IOException e) {
      throw new RulesException(
          dir + ": cannot list rules: " + dev.evictd.config.IoErrors.reason(e));
    }
    if (files.isEmpty() && requireFiles) {
      throw new RulesException(dir + ": no .drl rule files");
    }
    List<RuleSource> out = new ArrayList<>();
    for (Path f : files) {
      checkName(f);
      String text = readText(f, MAX_RULE_SET_BYTES, read[0]);
      read[0] += text.getBytes(StandardCharsets.UTF_8).length;
      out.add(new RuleSource(f.getFileName().toString(), f.toString(), text));
    }
    return out;
  }

  /** Reads the default rules from the classpath. */
  static List<RuleSource> readDefault() {
    return readDefault(RuleCompiler.class.getClassLoader());
  }

  /**
   * Reads the default rules as {@code loader} finds them. From a jar they are read with the jar's
   * {@link JarFile} (whose central directory the class loader has read already), not through a zip
   * file system: that opened the jar a second time and looked up the installed file system
   * providers in every jar of the class path, a tenth of loading the rules at start. The files,
   * their order and every message are those of the zip file system's listing of the directory (the
   * {@code .drl} files directly in it, in name order).
   */
  static List<RuleSource> readDefault(ClassLoader loader) {
    URL url = loader.getResource(RuleCompiler.DEFAULT_RULES_RESOURCE);
    if (url == null) {
      throw new RulesException("the packaged default rules are missing from the classpath");
    }
    try {
      URI uri = url.toURI();
      if ("jar".equals(uri.getScheme())) {
        return readJar(url);
      }
      List<RuleSource> out = new ArrayList<>();
      for (RuleSource s : listDir(Path.of(uri), true, new long[1])) {
        out.add(new RuleSource(s.name(), "default:" + s.name(), s.text()));
      }
      return out;
    } catch (URISyntaxException | IOException e) {
      throw new RulesException("cannot read the packaged default rules: " + e.getMessage());
    }
  }

  /** The default rules of the jar a {@code jar:} URL of their directory names. */
  private static List<RuleSource> readJar(URL url) throws IOException {
    String dir = "/" + RuleCompiler.DEFAULT_RULES_RESOURCE;
    String prefix = RuleCompiler.DEFAULT_RULES_RESOURCE + "/";
    JarURLConnection c = (JarURLConnection) url.openConnection();
    c.setUseCaches(false); // a JarFile of its own, closed here (the jar's data is shared)
    try (JarFile jar = c.getJarFile()) {
      List<String> names = new ArrayList<>();
      for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
        String n = e.nextElement().getName();
        if (n.startsWith(prefix)) {
          String name = n.substring(prefix.length());
          if (!name.isEmpty() && name.indexOf('/') < 0 && name.endsWith(".drl")) {
            names.add(name);
          }
        }
      }
      if (names.isEmpty()) {
        throw new RulesException(dir + ": no .drl rule files");
      }
      // in the zip file system's order of paths: their UTF-8 bytes, unsigned
      names.sort(
          (a, b) ->
              java.util.Arrays.compareUnsigned(
                  a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8)));
      List<RuleSource> out = new ArrayList<>();
      long read = 0;
      for (String name : names) {
        String shown = dir + "/" + name;
        JarEntry entry = jar.getJarEntry(prefix + name);
        byte[] bytes;
        try (InputStream in = jar.getInputStream(entry)) {
          bytes = in.readNBytes((int) (MAX_RULE_SET_BYTES - read) + 1);
        } catch (IOException e) {
          throw new RulesException(
              shown + ": cannot read: " + dev.evictd.config.IoErrors.reason(e));
        }
        read += bytes.length;
        if (read > MAX_RULE_SET_BYTES) {
          throw tooLarge(shown);
        }
        out.add(new RuleSource(name, "default:" + name, decode(shown, bytes)));
      }
      return out;
    }
  }

  /** A rule file on its own: at most a rule set's bytes. */
  static String readText(Path f) {
    return readText(f, MAX_RULE_SET_BYTES, 0);
  }

  /**
   * A file's text, read only as far as {@code max} bytes with the {@code before} already read: a
   * file that grows while it is read, or a device that never ends, reads no further. Only regular
   * files are read (a named pipe would wait for a writer forever).
   */
  private static String readText(Path f, int max, long before) {
    if (!Files.isRegularFile(f)) {
      throw new RulesException(f + ": not a regular file");
    }
    byte[] bytes;
    try (InputStream in = Files.newInputStream(f)) {
      bytes = in.readNBytes((int) Math.max(0, max - before) + 1);
    } catch (IOException e) {
      throw new RulesException(f + ": cannot read: " + dev.evictd.config.IoErrors.reason(e));
    }
    if (before + bytes.length > max) {
      if (max != MAX_RULE_SET_BYTES) {
        throw new RulesException(f + ": too large (more than " + max + " bytes)");
      }
      throw tooLarge(f.toString());
    }
    return decode(f.toString(), bytes);
  }

  /**
   * A rule file's text from its bytes, the one place rule files are decoded: UTF-8, without the
   * byte-order mark Windows editors write at its start. That mark is no part of the text: the lint,
   * the compiler, the SHA-256 and the caches all see the text without it, so a file saved with and
   * without one is the same rule set. A UTF-16 file and bytes that are not UTF-8 are refused with
   * the line of the first offending byte.
   */
  static String decode(String shown, byte[] bytes) {
    int start = 0;
    if (bytes.length >= 3
        && bytes[0] == (byte) 0xEF
        && bytes[1] == (byte) 0xBB
        && bytes[2] == (byte) 0xBF) {
      start = 3;
    } else if (bytes.length >= 2
        && ((bytes[0] == (byte) 0xFF && bytes[1] == (byte) 0xFE)
            || (bytes[0] == (byte) 0xFE && bytes[1] == (byte) 0xFF))) {
      throw new RulesException(
          shown
              + ":1: a UTF-16 text file (it starts with a UTF-16 byte-order mark): rule files are"
              + " UTF-8, save it as UTF-8");
    }
    java.nio.ByteBuffer in = java.nio.ByteBuffer.wrap(bytes, start, bytes.length - start);
    if (start == 0) {
      String ascii = dev.evictd.config.YamlNode.strictUtf8(bytes);
      if (ascii != null) {
        return ascii;
      }
    }
    java.nio.CharBuffer out = java.nio.CharBuffer.allocate(bytes.length - start);
    java.nio.charset.CharsetDecoder decoder =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
            .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT);
    java.nio.charset.CoderResult r = decoder.decode(in, out, true);
    if (!r.isError()) {
      r = decoder.flush(out);
    }
    if (r.isError()) {
      int at = in.position();
      int line = 1;
      for (int i = 0; i < at; i++) {
        if (bytes[i] == '\n') {
          line++;
        }
      }
      throw new RulesException(
          String.format(
              "%s:%d: not a UTF-8 text file (byte 0x%02X at offset %d)",
              shown, line, bytes[at] & 0xff, at));
    }
    return out.flip().toString();
  }
}
