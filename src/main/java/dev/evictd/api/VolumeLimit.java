package dev.evictd.api;

/** An emptyDir volume of a pod with a positive {@code sizeLimit}. */
public record VolumeLimit(String name, Quantity sizeLimit) {

  /** Whether {@code usedBytes} (null: not reported) is over the size limit. */
  public boolean isExceededBy(Long usedBytes) {
    return usedBytes != null && sizeLimit.compareTo(usedBytes.longValue()) < 0;
  }
}
