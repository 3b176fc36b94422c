package dev.evictd.linux;

import dev.evictd.api.Threshold;
import dev.evictd.stats.Summary;
import java.time.Clock;
import java.time.Duration;
import java.util.List;

/**
 * Makes the kernel event sources the agent listens to (memcg thresholds, PSI triggers,
 * memory.events, the adaptive memory poll): the seam between the agent and the kernel. {@link
 * LinuxNotifiers} is the real one; tests pass a fake that fires facts by hand.
 */
public interface NotifierFactory {
  /**
   * What the agent asks for.
   *
   * @param memoryThresholds the configured memory thresholds ({@code memory.available}, {@code
   *     allocatableMemory.available}); others are ignored
   * @param cgroups the cgroup hierarchy
   * @param paths where /proc is (for {@code /proc/pressure/memory})
   * @param memcg whether to register memcg thresholds (cgroup v1)
   * @param psiTrigger the configured PSI trigger, or null for the default on cgroup v2 and none on
   *     v1
   * @param adaptivePoll whether to run the adaptive memory poll
   * @param interval the monitoring interval (the poll's interval far from any line)
   * @param eventPoll where the sync loop waits: memcg thresholds' eventfds are polled there, by the
   *     thread that syncs, instead of by a thread each; null: a thread each
   */
  record Spec(
      List<Threshold> memoryThresholds,
      Cgroups cgroups,
      HostPaths paths,
      boolean memcg,
      PsiTrigger psiTrigger,
      boolean adaptivePoll,
      Duration interval,
      EventPoll eventPoll) {
    /** A spec whose event sources each have a thread of their own. */
    public Spec(
        List<Threshold> memoryThresholds,
        Cgroups cgroups,
        HostPaths paths,
        boolean memcg,
        PsiTrigger psiTrigger,
        boolean adaptivePoll,
        Duration interval) {
      this(memoryThresholds, cgroups, paths, memcg, psiTrigger, adaptivePoll, interval, null);
    }
  }

  /** Where the facts go (the agent's eviction manager). */
  @FunctionalInterface
  interface Sink {
    /**
     * A fact for the next sync, from {@code source}; {@code urgent} also ends a wait for evicted
     * pods.
     */
    void event(Object fact, String source, boolean urgent);
  }

  /** One running event source. */
  interface Notifier extends AutoCloseable {
    /** The source name its facts carry ({@code memcg}, {@code psi}, {@code poll}, ...). */
    String source();

    /** What it watches, in one line (for the log and the doctor). */
    String describe();

    /** Whether it works; false means the agent relies on the others and on polling. */
    boolean available();

    /** Why it does not work, or null. */
    String unavailableReason();

    /** After each sync that read statistics (e.g. to move thresholds); nothing by default. */
    default void update(Summary summary) {}

    /** Stops it; idempotent, never throws. */
    @Override
    void close();
  }

  /**
   * Starts every event source {@code spec} asks for and the kernel offers; never throws for what
   * the kernel lacks.
   */
  List<Notifier> start(Spec spec, Sink sink, Clock clock);
}
