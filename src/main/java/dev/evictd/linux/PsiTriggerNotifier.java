package dev.evictd.linux;

import dev.evictd.api.PressureResource;
import dev.evictd.api.PressureStall;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Objects;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A PSI trigger on a pressure file ({@code /proc/pressure/memory}, or a cgroup's {@code
 * memory.pressure}): the kernel wakes a {@code poll(POLLPRI)} when tasks stalled longer than the
 * trigger's stall within its window, at most once per window. Each wake-up becomes a {@link
 * PressureStall} given to the listener.
 *
 * <p>The trigger is written when the notifier is made; if the kernel refuses it (no PSI, a window
 * it does not take) the notifier logs one warning and reports itself {@linkplain #available()
 * unavailable} — the agent keeps polling. One daemon thread waits in poll with a time-out and stops
 * within a second of {@link #close()}, which is idempotent and closes the file (removing the
 * trigger).
 */
public final class PsiTriggerNotifier implements AutoCloseable {
  private static final int POLL_MILLIS = 250;
  private static final java.util.Set<String> KERNEL_FILE_SYSTEMS =
      java.util.Set.of("proc", "cgroup2", "cgroup");
  private static final Logger LOG = LoggerFactory.getLogger(PsiTriggerNotifier.class);

  private final Path file;
  private final PressureResource resource;
  private final PsiTrigger trigger;
  private final Consumer<PressureStall> listener;
  private final Clock clock;
  private final Object lock = new Object();
  private volatile String unavailable;
  private volatile boolean closed;
  private int fd = -1;
  private Thread thread;

  /**
   * Writes {@code trigger} to {@code file} (the pressure file of {@code resource}) and starts
   * waiting.
   */
  public PsiTriggerNotifier(
      Path file,
      PressureResource resource,
      PsiTrigger trigger,
      Consumer<PressureStall> listener,
      Clock clock) {
    this.file = file;
    this.resource = resource;
    this.trigger = trigger;
    this.listener = Objects.requireNonNull(listener, "listener");
    this.clock = clock;
    String reason = null;
    String fsType = fileSystemType(file);
    if (!Files.exists(file)) {
      reason = file + " does not exist (kernel without PSI, or booted with psi=0)";
    } else if (!KERNEL_FILE_SYSTEMS.contains(fsType)) {
      // a trigger written to a plain file would be taken and never fire (and change the file)
      reason = file + " is not a kernel pressure file (on " + fsType + ")";
    } else if (!Native.available()) {
      reason = Native.unavailableReason();
    } else {
      try {
        fd = Native.open(file, Native.O_RDWR | Native.O_NONBLOCK);
        Native.write(fd, trigger.toString(), true, "write trigger \"" + trigger + "\" to " + file);
      } catch (IOException e) {
        Native.close(fd);
        fd = -1;
        reason = e.getMessage();
        if (reason.contains("Invalid argument")
            && trigger.windowMicros() % PsiTrigger.UNPRIVILEGED_WINDOW_STEP_MICROS != 0) {
          reason += " (windows must be multiples of 2 s without CAP_SYS_RESOURCE)";
        }
      }
    }
    if (reason != null) {
      unavailable = reason;
      LOG.warn(
          "PSI trigger \"{}\" on {} not available: {}; the agent polls instead",
          trigger,
          file,
          reason);
      return;
    }
    thread = new Thread(this::run, "psi-notifier-" + resource.key());
    thread.setDaemon(true);
    thread.start();
  }

  private static String fileSystemType(Path file) {
    try {
      return Files.getFileStore(file).type();
    } catch (IOException | RuntimeException e) {
      return "unknown file system";
    }
  }

  /** The pressure file. */
  public Path file() {
    return file;
  }

  /** Whether the trigger is in place; false means the agent must rely on polling. */
  public boolean available() {
    return unavailable == null;
  }

  /** Why the trigger is not in place, or null when it is. */
  public String unavailableReason() {
    return unavailable;
  }

  /** The trigger. */
  public PsiTrigger trigger() {
    return trigger;
  }

  private void run() {
    int[] fds = {fd};
    short[] events = {Native.POLLPRI};
    short[] revents = new short[1];
    try {
      while (!closed) {
        int n = Native.poll(fds, events, revents, POLL_MILLIS);
        if (n <= 0 || closed) {
          continue;
        }
        if ((revents[0] & (Native.POLLERR | Native.POLLNVAL)) != 0) {
          throw new IOException("poll on " + file + " reported an error (triggers not supported)");
        }
        if ((revents[0] & Native.POLLPRI) != 0) {
          PressureStall fact =
              new PressureStall(
                  resource,
                  trigger.line(),
                  trigger.stallMicros(),
                  trigger.windowMicros(),
                  file.toString(),
                  clock.instant());
          try {
            listener.accept(fact);
          } catch (RuntimeException e) {
            LOG.warn("PSI listener failed on {}: {}", fact, e.toString());
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      if (!closed) {
        unavailable = e.getMessage();
        LOG.warn(
            "PSI trigger \"{}\" on {} stopped: {}; the agent polls instead",
            trigger,
            file,
            e.getMessage());
      }
    } finally {
      synchronized (lock) {
        Native.close(fd);
        fd = -1;
      }
    }
  }

  /** Stops waiting and removes the trigger; returns within about a second. Idempotent. */
  @Override
  public void close() {
    Thread t;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      t = thread;
      if (t == null) {
        Native.close(fd);
        fd = -1;
      }
    }
    if (t != null && t != Thread.currentThread()) {
      try {
        t.join(1000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
