package dev.evictd.stats;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Instant;
import java.util.List;

/**
 * The kubelet stats summary ({@code GET /api/v1/nodes/NODE/proxy/stats/summary}), reduced to the
 * fields eviction uses, with the statsapi JSON field names. Every field may be null: a missing
 * field means "no observation", never zero. A mapper that reads it adds {@code
 * dev.evictd.k8s.SummaryJson.module()}, which reads the amounts (integers or quantity strings) and
 * skips the JSON fields these records leave out, telling a listener of those the statsapi schema
 * does not have (typos).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Summary(NodeStats node, List<PodStats> pods) {

  public Summary {
    pods = present(pods);
  }

  /**
   * A list without its null entries: Go decodes a {@code null} item to an empty entry (no pod
   * reference, no usage), which eviction matches to nothing, so leaving it out is the same.
   */
  static <T> List<T> present(List<T> items) {
    if (items == null) {
      return List.of();
    }
    for (T t : items) {
      if (t == null) {
        return items.stream().filter(java.util.Objects::nonNull).toList();
      }
    }
    return List.copyOf(items);
  }

  /** Node-level statistics. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record NodeStats(
      String nodeName,
      MemoryStats memory,
      FsStats fs,
      RuntimeStats runtime,
      RlimitStats rlimit,
      List<ContainerStats> systemContainers) {

    /** The system container with {@code name} (e.g. "pods", the allocatable cgroup), or null. */
    public ContainerStats systemContainer(String name) {
      if (systemContainers == null) {
        return null;
      }
      for (ContainerStats c : systemContainers) {
        if (c != null && name.equals(c.name())) {
          return c;
        }
      }
      return null;
    }
  }

  /** Memory statistics of the node, a system container, a pod or a container. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record MemoryStats(
      Instant time,
      @JsonDeserializeQuantity Long availableBytes,
      @JsonDeserializeQuantity Long usageBytes,
      @JsonDeserializeQuantity Long workingSetBytes,
      @JsonDeserializeQuantity Long rssBytes) {}

  /** Filesystem statistics: bytes and inodes. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record FsStats(
      Instant time,
      @JsonDeserializeQuantity Long availableBytes,
      @JsonDeserializeQuantity Long capacityBytes,
      @JsonDeserializeQuantity Long usedBytes,
      @JsonDeserializeQuantity Long inodesFree,
      @JsonDeserializeQuantity Long inodes,
      @JsonDeserializeQuantity Long inodesUsed) {}

  /** Container runtime filesystems: images, and container writable layers when split. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record RuntimeStats(FsStats imageFs, FsStats containerFs) {}

  /** Process limits of the node: the maximum PID and the number of running processes. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record RlimitStats(
      Instant time, @JsonDeserializeQuantity Long maxpid, @JsonDeserializeQuantity Long curproc) {}

  /** A container (or system container) of the node or of a pod. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record ContainerStats(String name, MemoryStats memory, FsStats rootfs, FsStats logs) {}

  /** The identity of a pod in the summary; pods are matched to pod objects by uid. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record PodReference(String name, String namespace, String uid) {}

  /** A pod's process statistics. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record ProcessStats(
      @JsonProperty("process_count") @JsonDeserializeQuantity Long processCount) {}

  /** A pod volume's filesystem usage. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record VolumeStats(
      String name,
      Instant time,
      @JsonDeserializeQuantity Long availableBytes,
      @JsonDeserializeQuantity Long capacityBytes,
      @JsonDeserializeQuantity Long usedBytes,
      @JsonDeserializeQuantity Long inodesFree,
      @JsonDeserializeQuantity Long inodes,
      @JsonDeserializeQuantity Long inodesUsed) {}

  /** Statistics of one pod. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record PodStats(
      PodReference podRef,
      List<ContainerStats> containers,
      MemoryStats memory,
      @JsonProperty("volume") List<VolumeStats> volumes,
      @JsonProperty("ephemeral-storage") FsStats ephemeralStorage,
      @JsonProperty("process_stats") ProcessStats processStats) {

    public PodStats {
      containers = present(containers);
      volumes = present(volumes);
    }
  }
}
