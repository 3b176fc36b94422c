package dev.evictd.ruleset;

import dev.evictd.api.RulesException;
import dev.evictd.engine.RuleSource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The short-lived child process that builds a rule set's executable model ({@link ModelBuild#main})
 * for {@link ModelCache}: started with this Java and class path, bounded in time, killed with its
 * descendants, its private work directory removed whatever happens.
 */
final class ModelBuildChild {
  private static final int MAX_RESULT_BYTES = 64 * 1024 * 1024;
  private static final Logger LOG = LoggerFactory.getLogger(ModelBuildChild.class);

  /** How long a child may take to build a model; after that it is killed and the set compiled. */
  static volatile Duration timeout =
      Duration.ofSeconds(Long.getLong("evictd.rules.modelBuildTimeoutSeconds", 120));

  /** The JVM options a child takes from its parent (heap, stack, class-data sharing archive). */
  private static final List<String> INHERITED_OPTIONS =
      List.of(
          "-Xmx",
          "-Xss",
          "-XX:MaxRAM=",
          "-XX:MaxRAMPercentage=",
          "-XX:MaxMetaspaceSize=",
          "-XX:SharedArchiveFile=",
          "-Xshare:");

  private static final java.util.concurrent.atomic.AtomicLong CHILD_BUILDS =
      new java.util.concurrent.atomic.AtomicLong();

  private ModelBuildChild() {}

  /** How many child processes this process started to build models (for tests). */
  static long childBuilds() {
    return CHILD_BUILDS.get();
  }

  /**
   * Runs {@link ModelBuild} in a child process in a private directory of the cache's; its result's
   * bytes, or null when it failed or ran past {@link #timeout} (logged once).
   *
   * @throws RulesException when the child's checks refused the set
   */
  static byte[] run(String source, List<RuleSource> sources, Path cacheDir) {
    Path work;
    try {
      work =
          Files.createTempDirectory(
              cacheDir,
              ".build-",
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    } catch (IOException | RuntimeException e) {
      logOnce(
          cacheDir.toString(),
          "rule-set cache " + cacheDir + ": cannot build a model there: " + e.getMessage());
      return null;
    }
    Process p = null;
    try {
      ModelBuild.request(work, source, sources);
      ProcessBuilder pb = new ProcessBuilder(childCommand(work));
      // the child's options are the ones chosen above, not the environment's
      pb.environment().remove("JAVA_TOOL_OPTIONS");
      pb.environment().remove("JDK_JAVA_OPTIONS");
      pb.redirectErrorStream(true);
      pb.redirectOutput(work.resolve("log").toFile());
      pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
      Duration limit = timeout;
      p = pb.start();
      CHILD_BUILDS.incrementAndGet();
      if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
        kill(p);
        childFailed(source, "ran longer than " + limit.toSeconds() + " s and was killed", work);
        return null;
      }
      if (p.exitValue() != 0) {
        childFailed(source, "exited with status " + p.exitValue(), work);
        return null;
      }
      Path refused = work.resolve(ModelBuild.REFUSED);
      if (Files.exists(refused)) {
        throw new RulesException(Files.readString(refused, StandardCharsets.UTF_8));
      }
      Path result = work.resolve(ModelBuild.RESULT);
      if (!Files.isRegularFile(result) || Files.size(result) > MAX_RESULT_BYTES) {
        childFailed(source, "left no result", work);
        return null;
      }
      return Files.readAllBytes(result);
    } catch (IOException e) {
      childFailed(source, "could not be run: " + dev.evictd.config.IoErrors.reason(e), work);
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    } finally {
      if (p != null && p.isAlive()) {
        kill(p);
      }
      deleteTree(work);
    }
  }

  /** The child's command line: this Java, the inherited options, this class path. */
  static List<String> childCommand(Path work) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    List<String> parent = new ArrayList<>();
    String tool = System.getenv("JAVA_TOOL_OPTIONS");
    if (tool != null) {
      parent.addAll(List.of(tool.trim().split("\\s+")));
    }
    ProcessHandle.current().info().arguments().ifPresent(a -> parent.addAll(List.of(a)));
    for (String o : parent) {
      if (!o.startsWith("-")) {
        break; // the main class or jar: what follows are the program's arguments
      }
      if (INHERITED_OPTIONS.stream().anyMatch(o::startsWith)) {
        cmd.add(o);
      }
    }
    // a compile, not the agent: no server compiler, the small collector
    cmd.add("-XX:+UseSerialGC");
    cmd.add("-XX:TieredStopAtLevel=1");
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(ModelBuild.class.getName());
    cmd.add(work.toString());
    return cmd;
  }

  private static void kill(Process p) {
    p.descendants().forEach(ProcessHandle::destroyForcibly);
    p.destroyForcibly();
    try {
      p.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void childFailed(String source, String what, Path work) {
    String last = "";
    try {
      List<String> lines = Files.readAllLines(work.resolve("log"), StandardCharsets.UTF_8);
      last =
          lines.stream()
              .filter(l -> !l.isBlank() && !l.startsWith("Picked up"))
              .reduce((a, b) -> b)
              .map(l -> ": " + (l.length() > 300 ? l.substring(0, 300) + "..." : l.strip()))
              .orElse("");
    } catch (IOException | RuntimeException e) {
      // no log: nothing to add
    }
    logOnce(
        source + what,
        source
            + ": the child process building the rules' executable model "
            + what
            + last
            + "; compiling them in this process instead");
  }

  private static void deleteTree(Path dir) {
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException | RuntimeException e) {
      LOG.debug("{}: not removed: {}", dir, e.getMessage());
    }
  }

  private static void logOnce(String key, String message) {
    RuleSetCache.warnOnce(LOG, key, message);
  }
}
