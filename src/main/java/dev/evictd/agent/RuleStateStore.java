package dev.evictd.agent;

import dev.evictd.engine.RuleSource;
import dev.evictd.ruleset.RuleCompiler;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * What the agent remembers about rule sets across restarts, in its state directory ({@code
 * stateDir}, a hostPath on a node): the SHA-256 of every rule set that was rolled back or left a
 * stuck rule thread behind (never loaded again until its content changes), and the sources of the
 * last rule set that passed its probation (used at start when the configured set is a bad one).
 * Without a usable directory it remembers in memory only, and says so once.
 */
public final class RuleStateStore {
  private static final Logger LOG = LoggerFactory.getLogger(RuleStateStore.class);

  /** The file of bad rule sets: one JSON object, SHA-256 to the reason and time. */
  static final String BAD_FILE = "bad-rule-sets.json";

  /** The file holding the last good rule set's sources (names and texts, in load order). */
  static final String LAST_GOOD_FILE = "last-good-rules.json";

  /**
   * The file naming the rule set the agent runs while that set is not the packaged default: written
   * before the set first runs, removed when the agent stops cleanly. Found at start, it names a set
   * that was running when the process ended without stopping (a crash, an OutOfMemoryError that
   * took the process, a kill): such a set is not trusted again (see the constructor).
   */
  static final String RUNNING_FILE = "running-rules.json";

  /** How many bad rule sets are remembered (the oldest are forgotten first). */
  static final int MAX_BAD = 32;

  private static final JsonMapper JSON = JsonMapper.builder().build();

  /** A rule set remembered as bad. */
  public record BadRuleSet(String sha256, String reason, Instant at) {}

  /** The last good rule set: its SHA-256 and its sources in load order. */
  public record LastGood(String sha256, List<RuleSource> sources) {}

  private final Path dir;
  private final Map<String, BadRuleSet> bad = new LinkedHashMap<>();
  private LastGood lastGood;
  private boolean usable;

  /**
   * Opens the state directory; it is created (mode 0700) when something is first remembered.
   *
   * @param dir the state directory, or null to remember in memory only
   */
  public RuleStateStore(Path dir) {
    this.dir = dir;
    if (dir == null) {
      return;
    }
    usable = !Files.exists(dir) || (Files.isDirectory(dir) && Files.isWritable(dir));
    if (!usable) {
      LOG.warn(
          "stateDir {}: not a writable directory; bad rule sets are remembered until evictd"
              + " restarts only",
          dir);
    }
    readBad();
    readLastGood();
    crashed();
  }

  /**
   * A set left named as running by a process that did not stop cleanly: on probation then, it is
   * bad; trusted then, it is trusted no more (it must pass probation again, and is bad if the
   * process ends again while it is on probation).
   */
  private void crashed() {
    JsonNode root = read(RUNNING_FILE);
    if (root == null) {
      return;
    }
    String sha = root.path("sha256").asString("");
    boolean onProbation = root.path("probation").asBoolean(true);
    if (!sha.matches("[0-9a-f]{64}")) {
      return;
    }
    String why = "the agent ended without stopping while these rules ran";
    if (onProbation) {
      LOG.error(
          "rules sha256 {} were on probation when {}: not loaded again", sha, why.substring(4));
      markBad(sha, why + " on probation", Instant.now());
    } else if (lastGood != null && lastGood.sha256().equals(sha)) {
      LOG.error("trusted rules sha256 {}: {}; they are on probation again", sha, why);
      lastGood = null;
      delete(LAST_GOOD_FILE);
    }
    delete(RUNNING_FILE);
  }

  private String runningSha;
  private boolean runningOnProbation;

  /**
   * Records, before they run, the rules the agent runs and whether they are on probation (written
   * when that changes); null: the packaged default rules, nothing to record.
   */
  public synchronized void running(String sha256, boolean onProbation) {
    if (java.util.Objects.equals(sha256, runningSha) && onProbation == runningOnProbation) {
      return;
    }
    runningSha = sha256;
    runningOnProbation = onProbation;
    if (sha256 == null) {
      delete(RUNNING_FILE);
      return;
    }
    ObjectNode root = JSON.createObjectNode();
    root.put("sha256", sha256);
    root.put("probation", onProbation);
    write(RUNNING_FILE, root);
  }

  /** The agent stops cleanly: no set is left named as running. */
  public synchronized void stoppedCleanly() {
    runningSha = null;
    delete(RUNNING_FILE);
  }

  private void delete(String name) {
    if (dir == null || !usable) {
      return;
    }
    try {
      Files.deleteIfExists(dir.resolve(name));
    } catch (IOException e) {
      LOG.warn("{}: cannot delete it: {}", dir.resolve(name), e.toString());
    }
  }

  /** The state directory, or null. */
  public Path dir() {
    return dir;
  }

  /** Why the rule set with this SHA-256 is bad, or null when it is not known to be. */
  public synchronized BadRuleSet bad(String sha256) {
    return bad.get(sha256);
  }

  /** Remembers a rule set as bad, on disk when possible. */
  public synchronized void markBad(String sha256, String reason, Instant at) {
    bad.remove(sha256);
    bad.put(sha256, new BadRuleSet(sha256, reason, at));
    while (bad.size() > MAX_BAD) {
      bad.remove(bad.keySet().iterator().next());
    }
    ObjectNode root = JSON.createObjectNode();
    for (BadRuleSet b : bad.values()) {
      ObjectNode o = root.putObject(b.sha256());
      o.put("reason", b.reason());
      o.put("at", b.at().toString());
    }
    write(BAD_FILE, root);
  }

  /** The last rule set that passed its probation, or null. */
  public synchronized LastGood lastGood() {
    return lastGood;
  }

  /**
   * Remembers the sources of a rule set that passed its probation; ignored when they do not hash to
   * {@code sha256} (the directory changed since it was compiled).
   */
  public synchronized void saveLastGood(String sha256, List<RuleSource> sources) {
    if (!RuleCompiler.sha256(sources).equals(sha256)) {
      LOG.info("the rules changed on disk since {} was compiled; last good set not saved", sha256);
      return;
    }
    lastGood = new LastGood(sha256, List.copyOf(sources));
    ObjectNode root = JSON.createObjectNode();
    root.put("sha256", sha256);
    ArrayNode files = root.putArray("files");
    for (RuleSource s : sources) {
      files.addObject().put("name", s.name()).put("text", s.text());
    }
    write(LAST_GOOD_FILE, root);
  }

  private void readBad() {
    JsonNode root = read(BAD_FILE);
    if (root == null) {
      return;
    }
    for (var e : root.properties()) {
      JsonNode v = e.getValue();
      Instant at;
      try {
        at = Instant.parse(v.path("at").asString(""));
      } catch (RuntimeException ex) {
        at = Instant.EPOCH;
      }
      if (e.getKey().matches("[0-9a-f]{64}")) {
        bad.put(e.getKey(), new BadRuleSet(e.getKey(), v.path("reason").asString(""), at));
      }
    }
  }

  private void readLastGood() {
    JsonNode root = read(LAST_GOOD_FILE);
    if (root == null) {
      return;
    }
    String sha = root.path("sha256").asString("");
    List<RuleSource> sources = new ArrayList<>();
    for (JsonNode f : root.path("files")) {
      String name = f.path("name").asString("");
      sources.add(
          new RuleSource(
              name, dir.resolve(LAST_GOOD_FILE) + ":" + name, f.path("text").asString("")));
    }
    if (sources.isEmpty() || !RuleCompiler.sha256(sources).equals(sha)) {
      LOG.warn("{}: its rules do not hash to its sha256; ignored", dir.resolve(LAST_GOOD_FILE));
      return;
    }
    lastGood = new LastGood(sha, List.copyOf(sources));
  }

  private JsonNode read(String name) {
    if (dir == null) {
      return null;
    }
    Path f = dir.resolve(name);
    if (!Files.isRegularFile(f)) {
      return null;
    }
    try {
      return JSON.readTree(Files.readString(f, StandardCharsets.UTF_8));
    } catch (IOException | RuntimeException e) {
      LOG.warn("{}: cannot read it ({}); ignored", f, e.getMessage());
      return null;
    }
  }

  /** Writes a file whole or not at all (a temporary file renamed over it). */
  private void write(String name, JsonNode content) {
    if (!usable) {
      return;
    }
    Path f = dir.resolve(name);
    Path tmp = dir.resolve(name + ".tmp");
    try {
      if (!Files.isDirectory(dir)) {
        Files.createDirectories(dir);
        try {
          Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        } catch (UnsupportedOperationException e) {
          LOG.debug("no POSIX permissions on {}", dir);
        }
      }
      Files.writeString(tmp, JSON.writeValueAsString(content), StandardCharsets.UTF_8);
      try {
        Files.move(tmp, f, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(tmp, f, StandardCopyOption.REPLACE_EXISTING);
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("{}: cannot write it: {}", f, e.toString());
    }
  }
}
