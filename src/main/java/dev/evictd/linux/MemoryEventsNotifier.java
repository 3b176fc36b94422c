package dev.evictd.linux;

import dev.evictd.api.MemoryEventsChanged;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Clock;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches a cgroup v2 {@code memory.events} (of the pods cgroup: {@code max} and {@code oom} there
 * mean allocatable memory ran out): the kernel marks the file modified when a counter moves, which
 * inotify reports on the cgroup directory. Each change of the {@code high}, {@code max}, {@code
 * oom} or {@code oom_kill} counters becomes a {@link MemoryEventsChanged} given to the listener.
 *
 * <p>The file is kept open: the kernel sends the modification only for a file whose inode is in
 * memory. Where the file or inotify is missing the notifier logs one warning and reports itself
 * {@linkplain #available() unavailable}. One daemon thread; {@link #close()} stops it within a
 * quarter of a second and is idempotent.
 */
public final class MemoryEventsNotifier implements AutoCloseable {
  /** The event source name of the facts. */
  public static final String SOURCE = "memory.events";

  /** The file name. */
  public static final String FILE = "memory.events";

  private static final Logger LOG = LoggerFactory.getLogger(MemoryEventsNotifier.class);

  private final Path file;
  private final Consumer<MemoryEventsChanged> listener;
  private final Clock clock;
  private volatile String unavailable;
  private volatile boolean closed;
  private FileChannel held;
  private WatchService watch;
  private Thread thread;
  private long[] last;

  /** Watches {@code cgroup}/memory.events and starts the thread. */
  public MemoryEventsNotifier(Path cgroup, Consumer<MemoryEventsChanged> listener, Clock clock) {
    this.file = cgroup.resolve(FILE);
    this.listener = Objects.requireNonNull(listener, "listener");
    this.clock = clock;
    String reason = null;
    try {
      if (!Files.isRegularFile(file)) {
        throw new IOException(file + " does not exist (not a cgroup v2 memory cgroup)");
      }
      last = counters(read(file));
      if (last == null) {
        throw new IOException(file + " lacks the high, max, oom and oom_kill counters");
      }
      held = FileChannel.open(file, StandardOpenOption.READ);
      watch = cgroup.getFileSystem().newWatchService();
      cgroup.register(watch, StandardWatchEventKinds.ENTRY_MODIFY);
    } catch (IOException | RuntimeException e) {
      reason = e.getMessage();
      closeQuietly();
    }
    if (reason != null) {
      unavailable = reason;
      LOG.warn("memory.events watch on {} not available: {}", file, reason);
      return;
    }
    thread = new Thread(this::run, "memory-events");
    thread.setDaemon(true);
    thread.start();
  }

  /** The file watched. */
  public Path file() {
    return file;
  }

  /** Whether the file is watched. */
  public boolean available() {
    return unavailable == null;
  }

  /** Why the file is not watched, or null when it is. */
  public String unavailableReason() {
    return unavailable;
  }

  /** The counters of memory.events text: high, max, oom, oom_kill; null when one is missing. */
  static long[] counters(Map<String, Long> keyed) {
    Long high = keyed.get("high");
    Long max = keyed.get("max");
    Long oom = keyed.get("oom");
    Long oomKill = keyed.get("oom_kill");
    if (high == null || max == null || oom == null || oomKill == null) {
      return null;
    }
    return new long[] {high, max, oom, oomKill};
  }

  private static Map<String, Long> read(Path file) throws IOException {
    Map<String, Long> m = Cgroups.readKeyed(file);
    if (m.isEmpty() && !Files.isReadable(file)) {
      throw new IOException("cannot read " + file);
    }
    return m;
  }

  private void run() {
    try {
      while (!closed) {
        WatchKey key = watch.poll(250, TimeUnit.MILLISECONDS);
        if (key == null) {
          continue;
        }
        boolean ours = false;
        for (WatchEvent<?> e : key.pollEvents()) {
          ours |=
              e.kind() == StandardWatchEventKinds.OVERFLOW
                  || (e.context() instanceof Path p && p.toString().equals(FILE));
        }
        key.reset();
        if (ours) {
          check();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ClosedWatchServiceException e) {
      // closed
    } catch (RuntimeException e) {
      if (!closed) {
        unavailable = e.getMessage();
        LOG.warn("memory.events watch on {} stopped: {}", file, e.toString());
      }
    } finally {
      closeQuietly();
    }
  }

  /** Reads the file and reports a change of its counters. */
  void check() {
    long[] now;
    try {
      now = counters(read(file));
    } catch (IOException e) {
      LOG.debug("memory.events: {}", e.getMessage());
      return;
    }
    long[] before = last;
    if (now == null || java.util.Arrays.equals(now, before)) {
      return;
    }
    for (int i = 0; i < now.length; i++) {
      if (now[i] < before[i]) {
        return; // the counters only grow: a reading that went back is not a whole one
      }
    }
    last = now;
    MemoryEventsChanged fact =
        new MemoryEventsChanged(
            file.toString(),
            now[0],
            now[1],
            now[2],
            now[3],
            now[0] - before[0],
            now[1] - before[1],
            now[2] - before[2],
            now[3] - before[3],
            clock.instant());
    LOG.debug("memory.events changed: {}", fact);
    try {
      listener.accept(fact);
    } catch (RuntimeException e) {
      LOG.warn("memory.events listener failed on {}: {}", fact, e.toString());
    }
  }

  private synchronized void closeQuietly() {
    try {
      if (watch != null) {
        watch.close();
      }
    } catch (IOException e) {
      LOG.debug("closing the watch on {}: {}", file, e.getMessage());
    }
    try {
      if (held != null) {
        held.close();
      }
    } catch (IOException e) {
      LOG.debug("closing {}: {}", file, e.getMessage());
    }
  }

  /** Stops watching; returns within about a second. Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    Thread t = thread;
    if (t == null) {
      closeQuietly();
      return;
    }
    if (t != Thread.currentThread()) {
      try {
        t.join(1000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
