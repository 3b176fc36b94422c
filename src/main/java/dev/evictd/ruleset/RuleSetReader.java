package dev.evictd.ruleset;

import dev.evictd.api.RulesException;
import dev.evictd.engine.RuleSource;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads rule directories (the {@code rules.yaml} manifest, {@code extends} and {@code exclude}) and
 * the packaged default rules, checking the owners and modes of what it reads.
 */
final class RuleSetReader {
  private static final long MAX_RULE_FILE_BYTES = 4L * 1024 * 1024;
  private static final int MAX_EXTENDS_DEPTH = 8;
  private static final Logger LOG = LoggerFactory.getLogger(RuleCompiler.class);

  private final RuleCompiler.Ownership ownership;
  private final List<String> warnings;
  private final RuleProvenance provenance;

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
              manifest.toString(), readText(manifest).getBytes(StandardCharsets.UTF_8));
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
      base = e.equals("default") ? readDefault() : read(dir.resolve(e), chain);
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
    List<RuleSource> out = RuleSetReader.listDir(dir, requireFiles);
    for (RuleSource s : out) {
      checkOwnership(Path.of(s.path()));
    }
    return out;
  }

  private static List<RuleSource> listDir(Path dir, boolean requireFiles) {
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
      out.add(new RuleSource(f.getFileName().toString(), f.toString(), readText(f)));
    }
    return out;
  }

  /** Reads the default rules from the classpath. */
  static List<RuleSource> readDefault() {
    return readDefault(RuleCompiler.class.getClassLoader());
  }

  /**
   * Serialises the reads from a jar: a jar's zip file system is open once at a time, and a second
   * thread opening it meanwhile gets FileSystemAlreadyExistsException (two fixtures' rule sets
   * resolved at once in {@code evictd test}).
   */
  private static final Object JAR_READS = new Object();

  /** Reads the default rules as {@code loader} finds them. */
  static List<RuleSource> readDefault(ClassLoader loader) {
    URL url = loader.getResource(RuleCompiler.DEFAULT_RULES_RESOURCE);
    if (url == null) {
      throw new RulesException("the packaged default rules are missing from the classpath");
    }
    try {
      URI uri = url.toURI();
      if ("jar".equals(uri.getScheme())) {
        synchronized (JAR_READS) {
          try (FileSystem fs = FileSystems.newFileSystem(uri, Map.of())) {
            List<RuleSource> sources =
                listDir(fs.getPath("/" + RuleCompiler.DEFAULT_RULES_RESOURCE), true);
            List<RuleSource> out = new ArrayList<>();
            for (RuleSource s : sources) {
              out.add(new RuleSource(s.name(), "default:" + s.name(), s.text()));
            }
            return out;
          }
        }
      }
      List<RuleSource> out = new ArrayList<>();
      for (RuleSource s : listDir(Path.of(uri), true)) {
        out.add(new RuleSource(s.name(), "default:" + s.name(), s.text()));
      }
      return out;
    } catch (URISyntaxException | IOException e) {
      throw new RulesException("cannot read the packaged default rules: " + e.getMessage());
    }
  }

  static String readText(Path f) {
    try {
      long size = Files.size(f);
      if (size > MAX_RULE_FILE_BYTES) {
        throw new RulesException(f + ": rule file too large (" + size + " bytes)");
      }
      byte[] bytes;
      try (InputStream in = Files.newInputStream(f)) {
        bytes = in.readAllBytes();
      }
      String text = dev.evictd.config.YamlNode.strictUtf8(bytes);
      if (text == null) {
        throw new RulesException(f + ": not a UTF-8 text file");
      }
      return text;
    } catch (IOException e) {
      throw new RulesException(f + ": cannot read: " + dev.evictd.config.IoErrors.reason(e));
    }
  }
}
