package dev.evictd.ruleset;

import dev.evictd.ruleset.lint.PolicyFinding;
import dev.evictd.ruleset.lint.StoredLint;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * Rule sets already checked, so that an unchanged set is not linted (nor, for {@code rules check},
 * compiled) again. An entry is keyed by the SHA-256 of the set's sources (every file that defines
 * it, the base sets it extends included), evictd's version and the Drools version; it holds the
 * lint's result and the compiled-code check's findings. Nothing in it is trusted blindly: an entry
 * is refused (and the set checked afresh, logged once) when its sources' hash or versions differ,
 * when its own digest does not match its content, or when the entry or a directory above it is not
 * owned by root or evictd's user or is writable by group or others (the rules directory's own
 * ownership rule, {@link RuleProvenance}). The sandbox itself is never cached: a set that runs is
 * compiled, and its compiled code checked, every time.
 *
 * <p>The packaged default rules come with an entry made at build time ({@link #PACKAGED_RESOURCE},
 * in the jar, as trusted as evictd's own classes).
 */
public final class RuleSetCache {
  /** The format of an entry; a change refuses every older entry. */
  static final String FORMAT = "evictd-rule-set-cache/1";

  /** Where the build puts the default rules' entry on the class path. */
  public static final String PACKAGED_RESOURCE = "evictd-rules.cache";

  private static final String SUFFIX = ".entry";
  private static final int MAX_ENTRY_BYTES = 16 * 1024 * 1024;
  private static final Logger LOG = LoggerFactory.getLogger(RuleSetCache.class);
  private static final Set<String> LOGGED = ConcurrentHashMap.newKeySet();

  /**
   * The classes whose code decides what the lint and the compiled-code check refuse: their bytes
   * are part of the version, so that a rebuilt evictd (same version number) checks sets afresh.
   */
  private static final List<String> CHECKER_CLASSES =
      List.of(
          "dev/evictd/ruleset/RuleCompiler.class",
          "dev/evictd/ruleset/lint/PolicyLint.class",
          "dev/evictd/ruleset/lint/DrlFileCheck.class",
          "dev/evictd/ruleset/lint/CodeCheck.class",
          "dev/evictd/ruleset/lint/DrlExpressionNodes.class",
          "dev/evictd/ruleset/lint/FragmentLines.class",
          "dev/evictd/ruleset/lint/CompiledCodeCheck.class",
          "dev/evictd/ruleset/lint/CompiledClassNames.class",
          "dev/evictd/ruleset/lint/BytecodeInspector.class",
          "dev/evictd/ruleset/lint/CompiledCodeRefusals.class",
          "dev/evictd/ruleset/lint/InterpretedMvelWalk.class",
          "dev/evictd/ruleset/lint/PolicyAllowlist.class",
          "dev/evictd/ruleset/lint/RuleNames.class",
          "dev/evictd/ruleset/lint/StoredLint.class",
          "dev/evictd/ruleset/lint/ModelCodeCheck.class",
          "dev/evictd/ruleset/ModelBuild.class",
          "dev/evictd/ruleset/ModelCache.class");

  private static volatile String evictdVersion;
  private static volatile String droolsVersion;

  /**
   * What an entry records of a rule set that passed.
   *
   * @param format {@link #FORMAT}
   * @param evictdVersion evictd's version (with a digest of its checker classes)
   * @param droolsVersion the Drools version that compiled it
   * @param sourcesSha256 the SHA-256 of the set's sources ({@link RuleCompiler#sha256})
   * @param files the rule files, in load order
   * @param rules how many rules the compiled set has
   * @param lint the lint's result
   * @param compiledFindings what the compiled-code check refused (kept only with unsafe rules
   *     allowed)
   */
  public record Entry(
      String format,
      String evictdVersion,
      String droolsVersion,
      String sourcesSha256,
      List<String> files,
      long rules,
      StoredLint lint,
      List<PolicyFinding> compiledFindings) {
    public Entry {
      files = List.copyOf(files);
      compiledFindings = List.copyOf(compiledFindings);
    }
  }

  /** The mapper entries are written with, made on first use (reading needs none). */
  private static final class Writer {
    static final JsonMapper JSON = JsonMapper.builder().build();
  }

  /**
   * How the executable models of rule sets other than the packaged defaults are built for this
   * cache (then kept in it beside the entries, see {@link ModelCache}).
   */
  public enum ModelBuilds {
    /** In a short-lived child process: the compiler never loads into this one (the default). */
    CHILD_PROCESS,
    /** In this process (where no process may be started). */
    IN_PROCESS,
    /** None: every set other than the packaged defaults is compiled from its DRL, as before. */
    OFF
  }

  private final Path dir;
  private final ModelBuilds modelBuilds;

  private RuleSetCache(Path dir, ModelBuilds modelBuilds) {
    this.dir = dir;
    this.modelBuilds = modelBuilds;
  }

  /**
   * A cache in {@code dir} (created, mode 0755, when the first entry is stored), whose sets' models
   * are built in a child process.
   */
  public static RuleSetCache at(Path dir) {
    return new RuleSetCache(dir, ModelBuilds.CHILD_PROCESS);
  }

  /** This cache with its models built another way. */
  public RuleSetCache withModelBuilds(ModelBuilds m) {
    return new RuleSetCache(dir, m);
  }

  /** The cache's directory. */
  public Path dir() {
    return dir;
  }

  /** How models are built for this cache. */
  public ModelBuilds modelBuilds() {
    return modelBuilds;
  }

  /**
   * The entry for a rule set, when there is one and it holds: null otherwise (a refused entry is
   * logged, once per entry file and process).
   */
  public Entry lookup(String source, String sourcesSha256) {
    Path file = dir.resolve(key(sourcesSha256) + SUFFIX);
    if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
      return null;
    }
    List<String> problems = new RuleProvenance(RuleProvenance.currentUid()).problems(file);
    if (!problems.isEmpty()) {
      refused(file, source, String.join("; ", problems));
      return null;
    }
    byte[] bytes;
    try {
      if (Files.size(file) > MAX_ENTRY_BYTES) {
        refused(file, source, "larger than " + MAX_ENTRY_BYTES + " bytes");
        return null;
      }
      bytes = Files.readAllBytes(file);
    } catch (IOException e) {
      refused(file, source, "cannot read: " + dev.evictd.config.IoErrors.reason(e));
      return null;
    }
    return verified(file.toString(), source, sourcesSha256, bytes, false);
  }

  /** The packaged default rules' entry, when it is there and holds for these sources. */
  static Entry packaged(String sourcesSha256) {
    try (InputStream in =
        RuleSetCache.class.getClassLoader().getResourceAsStream(PACKAGED_RESOURCE)) {
      if (in == null) {
        return null;
      }
      return verified(
          "classpath:" + PACKAGED_RESOURCE, "default", sourcesSha256, in.readAllBytes(), true);
    } catch (IOException e) {
      LOG.warn("classpath:{}: cannot read: {}", PACKAGED_RESOURCE, e.getMessage());
      return null;
    }
  }

  /**
   * Checks an entry's digest, format, versions and sources' hash; null (logged) if any differs.
   *
   * @param otherSetsQuiet whether an entry for other sources is passed over without a word (the
   *     packaged entry, looked at for every set)
   */
  static Entry verified(
      String where, String source, String sourcesSha256, byte[] bytes, boolean otherSetsQuiet) {
    String text = new String(bytes, StandardCharsets.UTF_8);
    int nl = text.indexOf('\n');
    if (nl < 0 || !text.startsWith("sha256:")) {
      refused(where, source, "not a rule-set cache entry");
      return null;
    }
    String digest = text.substring("sha256:".length(), nl);
    String body = text.substring(nl + 1);
    if (!digest.equals(sha256(body))) {
      refused(
          where, source, "its content does not match its digest (changed after it was written)");
      return null;
    }
    Entry e;
    try {
      e = EntryReader.read(body);
    } catch (JacksonException ex) {
      refused(where, source, "unreadable: " + ex.getOriginalMessage());
      return null;
    } catch (IllegalArgumentException ex) {
      refused(where, source, "unreadable: " + ex.getMessage());
      return null;
    }
    if (otherSetsQuiet && !sourcesSha256.equals(e.sourcesSha256())) {
      return null;
    }
    String why = null;
    if (!FORMAT.equals(e.format())) {
      why = "format " + e.format() + ", not " + FORMAT;
    } else if (!sourcesSha256.equals(e.sourcesSha256())) {
      why = "made for sources " + e.sourcesSha256() + ", not " + sourcesSha256;
    } else if (!evictdVersion().equals(e.evictdVersion())) {
      why = "made by evictd " + e.evictdVersion() + ", not " + evictdVersion();
    } else if (!droolsVersion().equals(e.droolsVersion())) {
      why = "made with Drools " + e.droolsVersion() + ", not " + droolsVersion();
    } else if (e.lint() == null) {
      why = "no lint result";
    }
    if (why != null) {
      refused(where, source, why);
      return null;
    }
    return e;
  }

  /**
   * Stores an entry (atomically: written aside, then renamed). A directory that is not safe (see
   * {@link RuleProvenance}) gets nothing; failures are logged, never thrown.
   */
  public void store(Entry e) {
    try {
      if (!Files.isDirectory(dir)) {
        try {
          Files.createDirectories(
              dir,
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        } catch (FileAlreadyExistsException ignored) {
          // made by another process meanwhile
        }
      }
      List<String> problems = new RuleProvenance(RuleProvenance.currentUid()).problems(dir);
      if (!problems.isEmpty()) {
        logOnce(
            dir.toString(), "rule-set cache " + dir + " not used: " + String.join("; ", problems));
        return;
      }
      writeAtomically(dir, dir.resolve(key(e.sourcesSha256()) + SUFFIX), encode(e));
    } catch (IOException | RuntimeException ex) {
      logOnce(
          dir.toString(), "rule-set cache " + dir + ": cannot store an entry: " + ex.getMessage());
    }
  }

  /**
   * Writes a cache file whole or not at all: aside in the same directory (0644), then renamed over
   * the old one, so that a reader never sees half a file.
   */
  static void writeAtomically(Path dir, Path file, byte[] bytes) throws IOException {
    Path tmp =
        Files.createTempFile(
            dir,
            ".cache",
            ".tmp",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r--r--")));
    try {
      Files.write(tmp, bytes);
      try {
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException ex) {
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
      }
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  /** The entry file this cache holds for a set, if any (for the build's packaged entry). */
  Path entryFile(String sourcesSha256) {
    return dir.resolve(key(sourcesSha256) + SUFFIX);
  }

  /** An entry's bytes: the SHA-256 of its JSON on the first line, then the JSON. */
  static byte[] encode(Entry e) {
    String body = Writer.JSON.writeValueAsString(e);
    return ("sha256:" + sha256(body) + "\n" + body).getBytes(StandardCharsets.UTF_8);
  }

  /** The entry file name's key: the sources' hash with the evictd and Drools versions. */
  static String key(String sourcesSha256) {
    return sha256(FORMAT + "\0" + evictdVersion() + "\0" + droolsVersion() + "\0" + sourcesSha256);
  }

  /**
   * evictd's version from the jar, with a digest of the classes that decide what is refused (so a
   * rebuild that changes them does not reuse what an older build let through).
   */
  static String evictdVersion() {
    String v = evictdVersion;
    if (v == null) {
      String declared = declaredVersion();
      StringBuilder all = new StringBuilder();
      for (String c : CHECKER_CLASSES) {
        all.append(c).append('=').append(classStamp(c)).append(';');
      }
      v =
          (declared == null ? "unversioned" : declared)
              + "+"
              + sha256(all.toString()).substring(0, 16);
      evictdVersion = v;
    }
    return v;
  }

  /**
   * What a class file on evictd's class path is, for telling one build's from another's: its length
   * and CRC-32 ({@code -} when there is none, {@code unreadable} when it cannot be read). Not a
   * defence against anyone who can write the jar (that one runs whatever they like); a SHA-256 per
   * class cost a fresh JVM 15-25 ms of the rules' start, the only thread that hashes 200 KB before
   * the C1 compiler has made its hashing code (the CRC is the JVM's intrinsic).
   */
  static String classStamp(String resource) {
    try (InputStream in = RuleSetCache.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        return "-";
      }
      byte[] b = in.readAllBytes();
      java.util.zip.CRC32 crc = new java.util.zip.CRC32();
      crc.update(b);
      return b.length + ":" + Long.toHexString(crc.getValue());
    } catch (IOException e) {
      return "unreadable";
    }
  }

  /**
   * The version the build wrote into {@code version.properties} (the same in and out of the jar).
   */
  private static String declaredVersion() {
    try (InputStream in = RuleSetCache.class.getResourceAsStream("version.properties")) {
      if (in != null) {
        Properties p = new Properties();
        p.load(in);
        String v = p.getProperty("version");
        if (v != null && !v.isBlank() && !v.startsWith("${")) {
          return v.trim();
        }
      }
    } catch (IOException e) {
      // fall through: unknown
    }
    return RuleSetCache.class.getPackage().getImplementationVersion();
  }

  /** The version of the Drools compiler on the class path. */
  static String droolsVersion() {
    String v = droolsVersion;
    if (v == null) {
      v = readDroolsVersion();
      droolsVersion = v;
    }
    return v;
  }

  private static String readDroolsVersion() {
    try (InputStream in =
        RuleSetCache.class
            .getClassLoader()
            .getResourceAsStream("META-INF/maven/org.drools/drools-compiler/pom.properties")) {
      if (in != null) {
        Properties p = new Properties();
        p.load(in);
        String v = p.getProperty("version");
        if (v != null) {
          return v;
        }
      }
    } catch (IOException e) {
      // fall through: unknown
    }
    return "unknown";
  }

  private static void refused(Path file, String source, String why) {
    refused(file.toString(), source, why);
  }

  private static void refused(String where, String source, String why) {
    logOnce(
        where,
        "rule-set cache entry "
            + where
            + " for "
            + source
            + " refused ("
            + why
            + "): checking the rules afresh");
  }

  private static void logOnce(String key, String message) {
    warnOnce(LOG, key, message);
  }

  /**
   * Logs a warning about the cache once per process (per key and message), for this class and the
   * model cache's: a refused entry or an unusable directory is met again at every load.
   */
  static void warnOnce(Logger log, String key, String message) {
    if (LOGGED.add(key + "\0" + message)) {
      log.warn("{}", message);
    }
  }

  private static String sha256(String s) {
    return sha256(s.getBytes(StandardCharsets.UTF_8));
  }

  private static String sha256(byte[] b) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
