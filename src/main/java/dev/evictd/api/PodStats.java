package dev.evictd.api;

import java.math.BigInteger;
import java.util.List;
import java.util.Map;

/**
 * The statistics of one active pod in this sync, matched by uid. A pod without statistics has no
 * PodStats fact. Missing amounts count as zero, as in the kubelet.
 *
 * @param uid the pod's uid
 * @param memoryWorkingSetBytes pod memory working set
 * @param processCount number of processes
 *     <p>The sums are also kept exact in {@code totals}: the kubelet adds quantities, which never
 *     wrap around, while the long sums saturate at the range of a long.
 * @param rootfsBytes sum of the containers' writable layer usage
 * @param rootfsInodes sum of the containers' writable layer inodes
 * @param logsBytes sum of the containers' log usage
 * @param logsInodes sum of the containers' log inodes
 * @param localVolumeBytes usage of the pod's local volumes (see {@link PodFact#localVolumes()})
 * @param localVolumeInodes inodes of the pod's local volumes
 * @param ephemeralStorageBytes the pod's total ephemeral storage usage, null when not reported
 * @param volumeUsedBytes used bytes per volume name (volumes that report them)
 * @param containers per-container usage, in the order the statistics list them
 * @param memoryReported whether the summary reported the pod's memory statistics
 * @param totals the same sums, exact; null when each fits in its long field ({@link #totals()} then
 *     makes them from those: most pods' sums do, and a pod's statistics fact lives as long as the
 *     pod)
 */
public record PodStats(
    String uid,
    long memoryWorkingSetBytes,
    long processCount,
    long rootfsBytes,
    long rootfsInodes,
    long logsBytes,
    long logsInodes,
    long localVolumeBytes,
    long localVolumeInodes,
    Long ephemeralStorageBytes,
    Map<String, Long> volumeUsedBytes,
    List<ContainerUsage> containers,
    boolean memoryReported,
    Totals totals) {

  /**
   * The exact sums of the containers' writable layers and logs and the pod's local volumes, bytes
   * and inodes.
   */
  public record Totals(
      BigInteger rootfsBytes,
      BigInteger rootfsInodes,
      BigInteger logsBytes,
      BigInteger logsInodes,
      BigInteger localVolumeBytes,
      BigInteger localVolumeInodes) {

    /**
     * The exact usage of the parts measured: writable layers, logs, local volumes; bytes or inodes.
     */
    public BigInteger usage(boolean rootfs, boolean logs, boolean localVolumes, boolean inodes) {
      BigInteger sum = BigInteger.ZERO;
      if (rootfs) {
        sum = sum.add(inodes ? rootfsInodes : rootfsBytes);
      }
      if (logs) {
        sum = sum.add(inodes ? logsInodes : logsBytes);
      }
      if (localVolumes) {
        sum = sum.add(inodes ? localVolumeInodes : localVolumeBytes);
      }
      return sum;
    }
  }

  /** The exact sums: as given, or made from the long fields when none was given. */
  public Totals totals() {
    if (totals != null) {
      return totals;
    }
    return new Totals(
        BigInteger.valueOf(rootfsBytes),
        BigInteger.valueOf(rootfsInodes),
        BigInteger.valueOf(logsBytes),
        BigInteger.valueOf(logsInodes),
        BigInteger.valueOf(localVolumeBytes),
        BigInteger.valueOf(localVolumeInodes));
  }

  /**
   * Whether the pod's total ephemeral storage usage (0 when not reported) is over {@code limit}.
   */
  public boolean ephemeralStorageUsedExceeds(Quantity limit) {
    return limit.compareTo(ephemeralStorageBytes == null ? 0L : ephemeralStorageBytes.longValue())
        < 0;
  }

  /** Used bytes of the named volume, or null when not reported. */
  public Long volumeUsed(String volume) {
    return volumeUsedBytes.get(volume);
  }
}
