package dev.evictd.agent;

import dev.evictd.api.EvictdException;
import dev.evictd.engine.RuleSet;
import dev.evictd.ruleset.RuleCompiler;
import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches a rules directory and compiles a changed rule set off the hot path. A set that compiles
 * is handed over (to probation, then the next sync boundary); one that does not is logged
 * (file:line) and counted, and the running rules stay. The watch follows the directory through
 * deletion and recreation and through ConfigMap updates (kubelet swaps a {@code ..data} symlink
 * with an atomic rename; the files are links into it): besides the directory's change events, a
 * fingerprint of what its entries resolve to is compared every second, so a missed event, a
 * re-pointed link or a directory that came back are all seen. Every attempt is logged.
 */
public final class RulesReloader implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RulesReloader.class);

  /** How often the directory's fingerprint is compared when no event came. */
  static final long CHECK_MILLIS = 1000;

  private final Path dir;
  private final Function<Path, RuleSet> compiler;
  private final Consumer<RuleSet> onLoaded;
  private final Consumer<String> onFailed;
  private final Consumer<String> onUnchanged;
  private final Duration debounce;
  private final WatchService watcher;
  private final Thread thread;
  private WatchKey key;
  private Object dirKey;
  private String fingerprint;
  private boolean missing;
  private volatile String currentSha;
  private volatile String refusal;
  private volatile boolean running = true;

  /** Watches {@code dir}; unchanged attempts are logged only. */
  public RulesReloader(
      Path dir,
      String currentSha,
      Function<Path, RuleSet> compiler,
      Consumer<RuleSet> onLoaded,
      Consumer<String> onFailed,
      Duration debounce) {
    this(dir, currentSha, compiler, onLoaded, onFailed, why -> {}, debounce);
  }

  /**
   * Watches {@code dir}.
   *
   * @param currentSha the SHA-256 of the set the directory holds now (not handed over again)
   * @param onLoaded a changed set that compiled
   * @param onFailed why a changed set did not compile
   * @param onUnchanged why an attempt found the set already loaded
   * @param debounce how long to let a writer finish before compiling
   */
  public RulesReloader(
      Path dir,
      String currentSha,
      Function<Path, RuleSet> compiler,
      Consumer<RuleSet> onLoaded,
      Consumer<String> onFailed,
      Consumer<String> onUnchanged,
      Duration debounce) {
    this.dir = dir;
    this.currentSha = currentSha;
    this.compiler = compiler;
    this.onLoaded = onLoaded;
    this.onFailed = onFailed;
    this.onUnchanged = onUnchanged;
    this.debounce = debounce;
    try {
      watcher = FileSystems.getDefault().newWatchService();
    } catch (IOException e) {
      throw new dev.evictd.api.RulesException(
          dir + ": cannot watch for rule changes: " + e.getMessage());
    }
    if (!register()) {
      try {
        watcher.close();
      } catch (IOException e) {
        LOG.debug("closing the rules watcher: {}", e.getMessage());
      }
      throw new dev.evictd.api.RulesException(dir + ": cannot watch for rule changes");
    }
    fingerprint = fingerprint(dir);
    thread = new Thread(this::run, "evictd-rules-reload");
    thread.setDaemon(true);
    thread.start();
  }

  /** Registers the directory with the watch service; false when it is not there. */
  private boolean register() {
    try {
      dirKey = fileKey(dir);
      key =
          dir.register(
              watcher,
              StandardWatchEventKinds.ENTRY_CREATE,
              StandardWatchEventKinds.ENTRY_MODIFY,
              StandardWatchEventKinds.ENTRY_DELETE);
      return true;
    } catch (IOException e) {
      key = null;
      return false;
    }
  }

  private void run() {
    while (running) {
      try {
        WatchKey k = watcher.poll(CHECK_MILLIS, TimeUnit.MILLISECONDS);
        String why = null;
        if (k != null) {
          k.pollEvents();
          k.reset();
          why = "a change in the directory";
          // let an editor or a ConfigMap update finish writing, then take everything that changed
          // at once
          Thread.sleep(debounce.toMillis());
          WatchKey more;
          while ((more = watcher.poll()) != null) {
            more.pollEvents();
            more.reset();
          }
        }
        if (!Files.isDirectory(dir)) {
          if (!missing) {
            missing = true;
            LOG.warn("rules directory {} is gone; the running rules stay until it is back", dir);
          }
          continue;
        }
        if (missing
            || key == null
            || !key.isValid()
            || !java.util.Objects.equals(dirKey, fileKey(dir))) {
          // deleted and recreated (or replaced): the old registration watches nothing any more
          if (key != null) {
            key.cancel();
          }
          if (!register()) {
            continue;
          }
          if (missing) {
            why = "the directory is back";
          } else if (why == null) {
            why = "the directory was replaced";
          }
          missing = false;
        }
        String now = fingerprint(dir);
        if (why == null && !now.equals(fingerprint)) {
          why = "the files changed";
        }
        if (why != null) {
          fingerprint = now;
          attempt(why);
        }
      } catch (InterruptedException | ClosedWatchServiceException e) {
        return;
      } catch (RuntimeException e) {
        LOG.error("rules reload failed unexpectedly: {}", e.toString());
      }
    }
  }

  private static Object fileKey(Path p) {
    try {
      return Files.readAttributes(p, BasicFileAttributes.class).fileKey();
    } catch (IOException e) {
      return null;
    }
  }

  /**
   * What the directory's entries resolve to (real path, size, modification time): it changes when a
   * file changes, a link is re-pointed or the directory is replaced, whatever events were seen.
   */
  static String fingerprint(Path dir) {
    StringBuilder sb = new StringBuilder();
    try (Stream<Path> s = Files.list(dir)) {
      for (Path p : s.sorted().toList()) {
        sb.append(p.getFileName()).append('\0');
        try {
          Path real = p.toRealPath();
          BasicFileAttributes a = Files.readAttributes(real, BasicFileAttributes.class);
          sb.append(real).append('\0').append(a.size()).append('\0');
          sb.append(a.lastModifiedTime().toMillis()).append('\0').append(a.fileKey());
        } catch (IOException e) {
          sb.append("?");
        }
        sb.append('\n');
      }
      sb.append(dir.toRealPath());
    } catch (IOException | java.io.UncheckedIOException e) {
      return "unreadable: " + e.getMessage();
    }
    return sb.toString();
  }

  private void attempt(String why) {
    LOG.info("rules reload attempt from {} ({})", dir, why);
    reload();
  }

  /**
   * Compiles the directory now; hands a changed, valid rule set over. Returns true when a new set
   * was handed over.
   */
  public boolean reload() {
    RuleSet rs;
    try {
      rs = compiler.apply(dir);
    } catch (EvictdException e) {
      LOG.error("rules reload refused, the running rules stay: {}", e.getMessage());
      refusal = e.getMessage();
      onFailed.accept(e.getMessage());
      return false;
    } catch (RuntimeException | StackOverflowError e) {
      // a compiler that fails in a way of its own: the set is refused all the same, and the watch
      // goes on (an Error would end its thread: no reload would ever be seen again)
      String why =
          dir
              + ": rules cannot be compiled: "
              + (e instanceof StackOverflowError
                  ? "nested too deeply (the stack ran out)"
                  : "the compiler failed");
      LOG.error("rules reload refused, the running rules stay: {}", why);
      LOG.debug("rules reload from {}: the compiler failed", dir, e);
      refusal = why;
      onFailed.accept(why);
      return false;
    }
    refusal = null;
    if (rs.sha256().equals(currentSha)) {
      LOG.info("rules reload from {}: sha256 {} is loaded already", dir, rs.sha256());
      onUnchanged.accept(rs.sha256());
      return false;
    }
    currentSha = rs.sha256();
    LOG.info("rules compiled from {}: sha256 {}", dir, rs.sha256());
    onLoaded.accept(rs);
    return true;
  }

  /**
   * Why the last reload was refused (each finding {@code file:line[:col]: reason} on a line of its
   * own), or null when it was not: the running rules stayed.
   */
  public String lastRefusal() {
    return refusal;
  }

  /** The default compiler: {@link RuleCompiler#compile(Path)}. */
  public static Function<Path, RuleSet> defaultCompiler() {
    return RuleCompiler::compile;
  }

  @Override
  public void close() {
    running = false;
    try {
      watcher.close();
    } catch (IOException e) {
      LOG.debug("closing the rules watcher: {}", e.getMessage());
    }
    thread.interrupt();
  }
}
