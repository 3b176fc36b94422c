package dev.evictd.linux;

import dev.evictd.api.MemcgThresholdCrossed;
import dev.evictd.api.PressureResource;
import dev.evictd.api.Signal;
import dev.evictd.api.Threshold;
import dev.evictd.stats.Summary;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

/**
 * The real kernel event sources, by what the kernel offers. On cgroup v1: a memcg threshold per
 * memory threshold (the fast path) and the configured PSI trigger on {@code /proc/pressure/memory}.
 * On cgroup v2, which has no memory usage thresholds: a PSI trigger on the root's and on the pods
 * cgroup's {@code memory.pressure} (the configured one, else {@link #DEFAULT_V2_TRIGGER}) and the
 * pods cgroup's {@code memory.events}. On both: the adaptive memory poll ({@link MemoryPoll}), the
 * v2 path to a crossing within milliseconds and the v1 safety net.
 */
public final class LinuxNotifiers implements NotifierFactory {
  /** The source name of memcg threshold crossings. */
  public static final String MEMCG_SOURCE = "memcg";

  /** The source name of PSI trigger wake-ups. */
  public static final String PSI_SOURCE = "psi";

  /**
   * The PSI trigger on cgroup v2 when none is configured: 150 ms of stall within 2 s (a window the
   * kernel takes without CAP_SYS_RESOURCE).
   */
  public static final String DEFAULT_V2_TRIGGER = "some 150000 2000000";

  @Override
  public List<Notifier> start(Spec spec, Sink sink, Clock clock) {
    List<Notifier> out = new ArrayList<>();
    Cgroups cgroups = spec.cgroups();
    boolean v2 = cgroups.version().orElse(null) == Cgroups.Version.V2;
    try {
      if (spec.memcg() && !v2) {
        for (Threshold t : memory(spec.memoryThresholds())) {
          out.add(memcg(t, cgroups, sink, clock, spec.eventPoll()));
        }
      }
      for (Path f : psiFiles(spec, cgroups, v2)) {
        PsiTrigger trigger =
            spec.psiTrigger() != null ? spec.psiTrigger() : PsiTrigger.parse(DEFAULT_V2_TRIGGER);
        out.add(psi(f, trigger, sink, clock));
      }
      if (v2 && cgroups.podsCgroup().isPresent()) {
        out.add(memoryEvents(cgroups.podsCgroup().get(), sink, clock));
      }
      if (spec.adaptivePoll() && !memory(spec.memoryThresholds()).isEmpty()) {
        out.add(poll(spec, sink, clock));
      }
    } catch (RuntimeException e) {
      out.forEach(Notifier::close);
      throw e;
    }
    return out;
  }

  private static List<Threshold> memory(List<Threshold> thresholds) {
    return thresholds.stream()
        .filter(
            t ->
                t.signal() == Signal.MEMORY_AVAILABLE
                    || t.signal() == Signal.ALLOCATABLE_MEMORY_AVAILABLE)
        .toList();
  }

  /**
   * The pressure files a trigger goes on: v1 {@code /proc/pressure/memory} when one is configured;
   * v2 the root's and the pods cgroup's {@code memory.pressure} (the system-wide file where the
   * root has none).
   */
  static List<Path> psiFiles(Spec spec, Cgroups cgroups, boolean v2) {
    List<Path> files = new ArrayList<>();
    Path proc = PsiReader.file(spec.paths().procRoot(), PressureResource.MEMORY);
    if (!v2) {
      if (spec.psiTrigger() != null) {
        files.add(proc);
      }
      return files;
    }
    Path root = cgroups.memoryRoot().orElseThrow().resolve("memory.pressure");
    files.add(Files.exists(root) ? root : proc);
    cgroups.podsCgroup().map(p -> p.resolve("memory.pressure")).ifPresent(files::add);
    return files;
  }

  private static Notifier memcg(
      Threshold t, Cgroups cgroups, Sink sink, Clock clock, EventPoll poll) {
    MemcgThresholdNotifier n =
        new MemcgThresholdNotifier(
            t,
            cgroups,
            (MemcgThresholdCrossed e) ->
                sink.event(e, MEMCG_SOURCE, e.direction() == MemcgThresholdCrossed.Direction.UP),
            clock,
            poll);
    return new Adapter(
        MEMCG_SOURCE,
        "memcg threshold for " + t.signal().key() + " on " + n.cgroup(),
        n,
        n::available,
        n::unavailableReason,
        n::update);
  }

  private static Notifier psi(Path file, PsiTrigger trigger, Sink sink, Clock clock) {
    PsiTriggerNotifier n =
        new PsiTriggerNotifier(
            file, PressureResource.MEMORY, trigger, s -> sink.event(s, PSI_SOURCE, true), clock);
    return new Adapter(
        PSI_SOURCE,
        "PSI trigger \"" + trigger + "\" on " + file,
        n,
        n::available,
        n::unavailableReason,
        null);
  }

  private static Notifier memoryEvents(Path cgroup, Sink sink, Clock clock) {
    MemoryEventsNotifier n =
        new MemoryEventsNotifier(
            cgroup, e -> sink.event(e, MemoryEventsNotifier.SOURCE, e.limitReached()), clock);
    return new Adapter(
        MemoryEventsNotifier.SOURCE,
        "memory.events watch on " + n.file(),
        n,
        n::available,
        n::unavailableReason,
        null);
  }

  private static Notifier poll(Spec spec, Sink sink, Clock clock) {
    MemoryPoll p =
        new MemoryPoll(
            spec.memoryThresholds(),
            spec.cgroups(),
            spec.interval(),
            e ->
                sink.event(
                    e, MemoryPoll.SOURCE, e.direction() == MemcgThresholdCrossed.Direction.UP),
            clock);
    p.start();
    return new Adapter(
        MemoryPoll.SOURCE,
        "adaptive memory poll of "
            + p.files()
            + " every "
            + MemoryPoll.MIN_INTERVAL.toMillis()
            + " ms to "
            + spec.interval().toMillis()
            + " ms by headroom",
        p,
        p::available,
        p::unavailableReason,
        p::update);
  }

  /** A notifier class seen through the seam. */
  private record Adapter(
      String source,
      String describe,
      AutoCloseable target,
      java.util.function.BooleanSupplier availableFn,
      java.util.function.Supplier<String> reasonFn,
      java.util.function.Consumer<Summary> updateFn)
      implements Notifier {
    @Override
    public boolean available() {
      return availableFn.getAsBoolean();
    }

    @Override
    public String unavailableReason() {
      return reasonFn.get();
    }

    @Override
    public void update(Summary summary) {
      if (updateFn != null) {
        updateFn.accept(summary);
      }
    }

    @Override
    public void close() {
      try {
        target.close();
      } catch (Exception e) {
        org.slf4j.LoggerFactory.getLogger(LinuxNotifiers.class)
            .warn("closing {}: {}", describe, e.toString());
      }
    }
  }
}
