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
 * unavailable} — the agent keeps polling. A {@link PollLoop} waits on the file and stops within a
 * second of {@link #close()}, which is idempotent and closes the file (removing the trigger).
 */
public final class PsiTriggerNotifier implements AutoCloseable {
  private static final java.util.Set<String> KERNEL_FILE_SYSTEMS =
      java.util.Set.of("proc", "cgroup2", "cgroup");
  private static final Logger LOG = LoggerFactory.getLogger(PsiTriggerNotifier.class);

  private final Path file;
  private final PressureResource resource;
  private final PsiTrigger trigger;
  private final Consumer<PressureStall> listener;
  private final Clock clock;
  private final PollLoop loop;
  private volatile String unavailable;

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
    this.loop =
        new PollLoop(
            "psi-notifier-" + resource.key(),
            why -> {
              unavailable = why;
              LOG.warn(
                  "PSI trigger \"{}\" on {} stopped: {}; the agent polls instead",
                  trigger,
                  file,
                  why);
            });
    int fd = -1;
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
    try {
      // the loop owns the file from now on: closing it removes the trigger
      loop.watch(fd, Native.POLLPRI, this::ready);
    } catch (IOException e) {
      unavailable = e.getMessage();
      LOG.warn(
          "PSI trigger \"{}\" on {} not available: {}; the agent polls instead",
          trigger,
          file,
          unavailable);
    }
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

  /** On the loop's thread: the pressure file reported {@code revents}. */
  private void ready(short revents) throws IOException {
    if ((revents & (Native.POLLERR | Native.POLLNVAL)) != 0) {
      throw new IOException("poll on " + file + " reported an error (triggers not supported)");
    }
    if ((revents & Native.POLLPRI) == 0) {
      return;
    }
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

  /** Stops waiting and removes the trigger; returns within about a second. Idempotent. */
  @Override
  public void close() {
    loop.close();
  }
}
