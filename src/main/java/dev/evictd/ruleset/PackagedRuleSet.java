package dev.evictd.ruleset;

import dev.evictd.engine.RuleSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Run by the build ({@code prepare-package}): checks and compiles the packaged default rules once
 * and writes their rule-set cache entry ({@link RuleSetCache#PACKAGED_RESOURCE}) into the classes
 * that go into the jar, so that evictd started with the default rules does not lint them again. The
 * entry is verified at every load like any other (sources' hash, versions, digest).
 */
public final class PackagedRuleSet {
  private static final Logger LOG = LoggerFactory.getLogger(PackagedRuleSet.class);

  private PackagedRuleSet() {}

  /**
   * Writes the default rules' entry.
   *
   * @param args the file to write ({@code target/classes/evictd-rules.cache})
   * @throws IOException when it cannot be written
   */
  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      throw new IllegalArgumentException("usage: PackagedRuleSet OUT");
    }
    write(Path.of(args[0]));
  }

  /** Compiles the default rules and writes their entry to {@code out}. */
  static void write(Path out) throws IOException {
    List<RuleSource> sources = RuleCompiler.readDefault();
    String sha256 = RuleCompiler.sha256(sources);
    Path tmp = Files.createTempDirectory("evictd-rules-cache");
    try {
      RuleSetCache cache = RuleSetCache.at(tmp.resolve("cache"));
      RuleCompiler.compileFresh("default", sources, RuleCompiler.Options.STRICT.withCache(cache));
      Path entry = cache.entryFile(sha256);
      if (!Files.isRegularFile(entry)) {
        throw new IOException("the default rules' cache entry was not written");
      }
      Files.createDirectories(out.toAbsolutePath().getParent());
      Files.copy(entry, out, StandardCopyOption.REPLACE_EXISTING);
      LOG.info("default rules {} checked: cache entry {}", sha256, out);
    } finally {
      try (Stream<Path> s = Files.walk(tmp)) {
        for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }
}
