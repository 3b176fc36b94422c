package dev.evictd.linux;

import dev.evictd.api.MemcgThresholdCrossed.Direction;
import dev.evictd.api.Signal;
import dev.evictd.api.Threshold;
import dev.evictd.k8s.Observations;
import dev.evictd.stats.Summary;
import java.util.OptionalLong;

/**
 * The arithmetic of a memcg usage threshold, without the kernel: where the kubelet's line is, which
 * value to register so that the kernel signals exactly when the eviction threshold is met, and
 * which way a signal went.
 *
 * <p>A {@code memory.available} threshold is met when {@code capacity − working set < quantity},
 * that is when {@code usage − inactive_file > capacity − quantity}, that is when usage is strictly
 * above the kubelet's line {@code capacity − quantity + inactive_file}. The kernel compares whole
 * pages: it truncates a registered value to a page ({@code page_counter_memparse}) and signals when
 * usage reaches it ({@code threshold <= usage}). Registering the kubelet's line as is therefore
 * signals at up to a page <em>below</em> the point where the threshold is met: a sync reading
 * statistics at that instant finds {@code available} one byte above the threshold, and the kernel,
 * seeing usage already above its value, never signals the rest of the climb. {@link
 * #registeredBytes} registers the first page at which the threshold is met instead.
 */
public final class MemcgLine {
  /** The page size assumed where the system does not say (x86_64 and most aarch64 kernels). */
  public static final long DEFAULT_PAGE_SIZE = 4096;

  private MemcgLine() {}

  /**
   * The kubelet's memcg threshold for {@code threshold} given a summary: {@code capacity −
   * threshold quantity + inactive_file}, where capacity = available + working set and inactive_file
   * = usage − working set of the node memory (or of the "pods" system container for {@code
   * allocatableMemory.available}). The threshold is met when usage is strictly above it. Empty when
   * the summary lacks a figure.
   */
  public static OptionalLong kubeletLine(Threshold threshold, Summary summary) {
    Summary.MemoryStats m = memoryOf(threshold.signal(), summary);
    if (m == null
        || m.usageBytes() == null
        || m.workingSetBytes() == null
        || m.availableBytes() == null) {
      return OptionalLong.empty();
    }
    long inactiveFile = m.usageBytes() - m.workingSetBytes();
    long capacity = m.availableBytes() + m.workingSetBytes();
    long quantity = threshold.quantity(capacity).value();
    return OptionalLong.of(capacity - quantity + inactiveFile);
  }

  /**
   * The memory figures {@code signal} is observed from (node memory or the pods container), or null
   * when the summary has none.
   */
  public static Summary.MemoryStats memoryOf(Signal signal, Summary summary) {
    if (summary == null || summary.node() == null) {
      return null;
    }
    if (signal == Signal.ALLOCATABLE_MEMORY_AVAILABLE) {
      Summary.ContainerStats pods =
          summary.node().systemContainer(Observations.PODS_SYSTEM_CONTAINER);
      return pods == null ? null : pods.memory();
    }
    return summary.node().memory();
  }

  /**
   * The value to register for a kubelet line: the smallest whole page strictly above it, the first
   * usage at which the threshold is met. The kernel then signals upward exactly when the threshold
   * becomes met (with the statistics the line was computed from) and downward when it stops.
   *
   * @throws IllegalArgumentException when {@code pageSize} is not positive
   */
  public static long registeredBytes(long kubeletLine, long pageSize) {
    requirePage(pageSize);
    return Math.floorDiv(kubeletLine, pageSize) * pageSize + pageSize;
  }

  /**
   * The value the kernel compares usage with for {@code registered} bytes: it keeps whole pages
   * only.
   */
  public static long kernelLine(long registered, long pageSize) {
    requirePage(pageSize);
    return Math.floorDiv(registered, pageSize) * pageSize;
  }

  /**
   * Which side of the kernel's line {@code usage} is on: {@code UP} when the kernel counts it as
   * crossed ({@code usage >= kernelLine}), else {@code DOWN}.
   */
  public static Direction side(long usage, long kernelLine) {
    return usage >= kernelLine ? Direction.UP : Direction.DOWN;
  }

  /**
   * Whether usage went past a newly registered kernel line after the statistics it was computed
   * from were read: the kernel signals crossings, not levels, so such a crossing would never be
   * signalled. Usage the statistics already showed at or above the line is not a new crossing (the
   * sync saw it).
   */
  public static boolean crossedBeforeRegistration(Long seenUsage, long kernelLine, long usageNow) {
    return seenUsage != null && seenUsage < kernelLine && usageNow >= kernelLine;
  }

  private static void requirePage(long pageSize) {
    if (pageSize <= 0) {
      throw new IllegalArgumentException("page size must be positive: " + pageSize);
    }
  }
}
