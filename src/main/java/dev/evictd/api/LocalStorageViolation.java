package dev.evictd.api;

/**
 * A pod using more local storage than a limit allows: an emptyDir over its sizeLimit, the pod over
 * its ephemeral-storage limit, or a container over its own.
 *
 * @param uid the pod
 * @param limit the limit's eviction signal name: emptydirfs.limit, ephemeralpodfs.limit,
 *     ephemeralcontainerfs.limit
 * @param order the kubelet's checking order within the pod (the first violation is the one
 *     reported)
 * @param message the kubelet's eviction message
 */
public record LocalStorageViolation(String uid, String limit, int order, String message)
    implements PerSyncFact {}
