package dev.evictd.api;

import java.util.List;
import java.util.Map;

/**
 * What rules read of a pod object beyond the computed fields of {@link PodFact}: a value, copied
 * from the pod as the agent read it when the fact is built. Every field is a string, number, {@link
 * Quantity}, record of these or an unmodifiable list or map of them, so that nothing a rule can
 * reach from a fact can change what the agent read (the informer's store, the decision guard's
 * view). Field names follow the Kubernetes object ({@code pod.metadata.deletionTimestamp}); what
 * can hold secrets is not copied (env, command lines, probes, hooks, managed fields, the
 * last-applied-configuration annotation).
 *
 * @param metadata the pod's metadata
 * @param spec what eviction policies read of the spec
 * @param status what eviction policies read of the status
 */
public record PodObject(Metadata metadata, Spec spec, Status status) {

  /**
   * metadata.
   *
   * @param name metadata.name
   * @param namespace metadata.namespace ("default" when unset)
   * @param uid metadata.uid
   * @param generateName metadata.generateName, or null
   * @param labels metadata.labels
   * @param annotations metadata.annotations, without last-applied-configuration
   * @param ownerReferences metadata.ownerReferences
   * @param finalizers metadata.finalizers
   * @param creationTimestamp metadata.creationTimestamp (RFC 3339), or null
   * @param deletionTimestamp metadata.deletionTimestamp (RFC 3339), or null
   * @param deletionGracePeriodSeconds metadata.deletionGracePeriodSeconds, or null
   */
  public record Metadata(
      String name,
      String namespace,
      String uid,
      String generateName,
      Map<String, String> labels,
      Map<String, String> annotations,
      List<PodOwner> ownerReferences,
      List<String> finalizers,
      String creationTimestamp,
      String deletionTimestamp,
      Long deletionGracePeriodSeconds) {}

  /**
   * spec.
   *
   * @param nodeName spec.nodeName, or null
   * @param priority spec.priority, or null
   * @param priorityClassName spec.priorityClassName, or null
   * @param preemptionPolicy spec.preemptionPolicy, or null
   * @param serviceAccountName spec.serviceAccountName, or null
   * @param schedulerName spec.schedulerName, or null
   * @param runtimeClassName spec.runtimeClassName, or null
   * @param restartPolicy spec.restartPolicy, or null
   * @param hostNetwork spec.hostNetwork, or null
   * @param terminationGracePeriodSeconds spec.terminationGracePeriodSeconds as the API server hands
   *     it out, or null
   * @param activeDeadlineSeconds spec.activeDeadlineSeconds, or null
   * @param nodeSelector spec.nodeSelector
   * @param containers spec.containers
   * @param initContainers spec.initContainers
   * @param volumes the names of spec.volumes
   * @param resources the pod-level spec.resources, or null when unset
   */
  public record Spec(
      String nodeName,
      Integer priority,
      String priorityClassName,
      String preemptionPolicy,
      String serviceAccountName,
      String schedulerName,
      String runtimeClassName,
      String restartPolicy,
      Boolean hostNetwork,
      Long terminationGracePeriodSeconds,
      Long activeDeadlineSeconds,
      Map<String, String> nodeSelector,
      List<ContainerSpec> containers,
      List<ContainerSpec> initContainers,
      List<String> volumes,
      Resources resources) {}

  /**
   * A container of the spec, without env, command, args, probes and hooks.
   *
   * @param name its name
   * @param image its image
   * @param restartPolicy its restartPolicy (Always for a sidecar init container), or null
   * @param resources its resources (empty maps when none)
   */
  public record ContainerSpec(
      String name, String image, String restartPolicy, Resources resources) {}

  /**
   * Requests and limits by resource name, parsed.
   *
   * @param requests the requests
   * @param limits the limits
   */
  public record Resources(Map<String, Quantity> requests, Map<String, Quantity> limits) {}

  /**
   * status.
   *
   * @param phase status.phase, or null
   * @param qosClass status.qosClass as the API server reported it, or null (see {@link
   *     PodFact#qosClass()} for the computed one)
   * @param reason status.reason, or null
   * @param startTime status.startTime (RFC 3339), or null
   */
  public record Status(String phase, String qosClass, String reason, String startTime) {}
}
