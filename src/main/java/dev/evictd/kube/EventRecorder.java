package dev.evictd.kube;

import dev.evictd.agent.EventSink;
import dev.evictd.api.EvictionDecision;
import dev.evictd.api.PodRef;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records the eviction manager's Events as the kubelet does: {@code Evicted} on the pod, with the
 * eviction message and the annotations {@code offending_containers}, {@code
 * offending_containers_usage} and {@code starved_resource} on the Event object, and {@code
 * EvictionThresholdMet} on the node.
 *
 * <p>Events are core/v1 Events, like the kubelet's own (its recorder still writes core/v1): tools
 * that watch the kubelet's eviction Events ({@code kubectl describe}, alerting on reason {@code
 * Evicted}) see evictd's the same way, and the annotations sit where the kubelet puts them. The
 * RBAC rule is {@code events} {@code create} in the core group.
 *
 * <p>Events are best effort: one request; a failure is logged, never thrown.
 */
public final class EventRecorder implements EventSink {
  private static final Logger LOG = LoggerFactory.getLogger(EventRecorder.class);

  /** The reason of the pod Event. */
  public static final String EVICTED = "Evicted";

  /** The reason of the node Event. */
  public static final String THRESHOLD_MET = "EvictionThresholdMet";

  /** The component named as the Events' source. */
  public static final String COMPONENT = "evictd";

  /** The namespace of Events about cluster-scoped objects (the node), as client-go uses. */
  public static final String NODE_EVENT_NAMESPACE = "default";

  private final KubeApi api;
  private final String nodeName;
  private final Clock clock;
  private final AtomicLong lastNanos = new AtomicLong();

  /** Records Events through {@code api}, naming {@code nodeName} as the reporting host. */
  public EventRecorder(KubeApi api, String nodeName, Clock clock) {
    this.api = api;
    this.nodeName = nodeName;
    this.clock = clock;
  }

  /** Records {@code Evicted} (Warning) on the decision's pod. */
  @Override
  public void podEvicted(EvictionDecision decision) {
    PodRef pod = decision.pod();
    ObjectReference ref =
        new ObjectReferenceBuilder()
            .withApiVersion("v1")
            .withKind("Pod")
            .withNamespace(pod.namespace())
            .withName(pod.name())
            .withUid(KubeApi.isUid(pod.uid()) ? pod.uid() : null)
            .build();
    record(pod.namespace(), ref, EVICTED, decision.message(), decision.annotations());
  }

  /**
   * Records {@code EvictionThresholdMet} (Warning) on the node: "Attempting to reclaim RESOURCE",
   * the resource as {@link dev.evictd.api.Signal#resource()} names it (memory, ephemeral-storage,
   * inodes, pids).
   */
  @Override
  public void thresholdMet(String resource) {
    // the kubelet's node reference uses the node's name as its uid
    ObjectReference ref =
        new ObjectReferenceBuilder()
            .withApiVersion("v1")
            .withKind("Node")
            .withName(nodeName)
            .withUid(nodeName)
            .build();
    record(NODE_EVENT_NAMESPACE, ref, THRESHOLD_MET, "Attempting to reclaim " + resource, Map.of());
  }

  /** Creates the Event; returns whether the API server accepted it. */
  boolean record(
      String namespace,
      ObjectReference ref,
      String reason,
      String message,
      Map<String, String> annotations) {
    Instant now = clock.instant();
    String time = now.truncatedTo(ChronoUnit.SECONDS).toString();
    // the name client-go gives Events: the object's name and the time in hexadecimal nanoseconds,
    // kept strictly
    // increasing so two Events within one clock tick get different names
    long clockNanos = now.getEpochSecond() * 1_000_000_000L + now.getNano();
    long nanos = lastNanos.updateAndGet(last -> Math.max(last + 1, clockNanos));
    Event event =
        new EventBuilder()
            .withNewMetadata()
            .withName(ref.getName() + "." + Long.toHexString(nanos))
            .withNamespace(namespace)
            .withAnnotations(annotations.isEmpty() ? null : Map.copyOf(annotations))
            .endMetadata()
            .withInvolvedObject(ref)
            .withReason(reason)
            .withMessage(message)
            .withType("Warning")
            .withNewSource()
            .withComponent(COMPONENT)
            .withHost(nodeName)
            .endSource()
            .withReportingComponent(COMPONENT)
            .withReportingInstance(nodeName)
            .withFirstTimestamp(time)
            .withLastTimestamp(time)
            .withCount(1)
            .build();
    ApiResponse r = api.post(KubeApi.eventsPath(namespace), api.json(event));
    if (!r.isSuccess()) {
      LOG.warn(
          "event {} on {} {}: not recorded: {}",
          reason,
          ref.getKind(),
          describe(ref),
          r.describe());
      return false;
    }
    return true;
  }

  private static String describe(ObjectReference ref) {
    return ref.getNamespace() == null ? ref.getName() : ref.getNamespace() + "/" + ref.getName();
  }
}
