package dev.evictd.api;

/**
 * One container's usage from the pod's statistics; null fields were not reported.
 *
 * @param name the container's name
 * @param memoryWorkingSetBytes memory working set
 * @param rootfsUsedBytes writable layer usage
 * @param logsUsedBytes log usage
 */
public record ContainerUsage(
    String name, Long memoryWorkingSetBytes, Long rootfsUsedBytes, Long logsUsedBytes) {}
