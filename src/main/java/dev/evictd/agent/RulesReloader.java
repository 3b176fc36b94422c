package dev.evictd.agent;

import dev.evictd.api.EvictdException;
import dev.evictd.engine.RuleCompiler;
import dev.evictd.engine.RuleSet;
import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches a rules directory and compiles a changed rule set off the hot path. A set that compiles
 * is handed over to be swapped in at the next sync boundary; one that does not is logged
 * (file:line) and counted, and the running rules stay. ConfigMap updates (an atomic symlink swap)
 * are seen as changes of the directory.
 */
public final class RulesReloader implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(RulesReloader.class);

  private final Path dir;
  private final Function<Path, RuleSet> compiler;
  private final Consumer<RuleSet> onLoaded;
  private final Consumer<String> onFailed;
  private final Duration debounce;
  private final WatchService watcher;
  private final Thread thread;
  private volatile String currentSha;
  private volatile boolean running = true;

  public RulesReloader(
      Path dir,
      String currentSha,
      Function<Path, RuleSet> compiler,
      Consumer<RuleSet> onLoaded,
      Consumer<String> onFailed,
      Duration debounce) {
    this.dir = dir;
    this.currentSha = currentSha;
    this.compiler = compiler;
    this.onLoaded = onLoaded;
    this.onFailed = onFailed;
    this.debounce = debounce;
    try {
      watcher = FileSystems.getDefault().newWatchService();
      dir.register(
          watcher,
          StandardWatchEventKinds.ENTRY_CREATE,
          StandardWatchEventKinds.ENTRY_MODIFY,
          StandardWatchEventKinds.ENTRY_DELETE);
    } catch (IOException e) {
      throw new dev.evictd.api.RulesException(
          dir + ": cannot watch for rule changes: " + e.getMessage());
    }
    thread = new Thread(this::run, "evictd-rules-reload");
    thread.setDaemon(true);
    thread.start();
  }

  private void run() {
    while (running) {
      try {
        WatchKey key = watcher.poll(1, TimeUnit.SECONDS);
        if (key == null) {
          continue;
        }
        key.pollEvents();
        key.reset();
        // let an editor or a ConfigMap update finish writing, then take everything that changed at
        // once
        Thread.sleep(debounce.toMillis());
        WatchKey more;
        while ((more = watcher.poll()) != null) {
          more.pollEvents();
          more.reset();
        }
        reload();
      } catch (InterruptedException | ClosedWatchServiceException e) {
        return;
      } catch (RuntimeException e) {
        LOG.error("rules reload failed unexpectedly: {}", e.toString());
      }
    }
  }

  /**
   * Compiles the directory now; hands a changed, valid rule set over. Returns true when a new set
   * was loaded.
   */
  public boolean reload() {
    RuleSet rs;
    try {
      rs = compiler.apply(dir);
    } catch (EvictdException e) {
      LOG.error("rules reload refused, the running rules stay: {}", e.getMessage());
      onFailed.accept(e.getMessage());
      return false;
    }
    if (rs.sha256().equals(currentSha)) {
      return false;
    }
    currentSha = rs.sha256();
    LOG.info("rules reloaded from {}: sha256 {}", dir, rs.sha256());
    onLoaded.accept(rs);
    return true;
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
