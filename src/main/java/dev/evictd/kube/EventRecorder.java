package dev.evictd.kube;

import dev.evictd.api.EvictionDecision;
import dev.evictd.api.PodRef;
import dev.evictd.ports.EventSink;
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
 * RBAC rules are {@code events} {@code create} and {@code patch} (repeats) in the core group.
 *
 * <p>Repeats are aggregated as the kubelet's recorder (client-go's event correlator) does: an Event
 * with the same namespace, involved object, reason and message as one recorded within {@link
 * #AGGREGATION_WINDOW} of its last occurrence is not created again; the existing object is patched
 * (a strategic merge patch of {@code count} and {@code lastTimestamp}, verb {@code patch} on {@code
 * events}). Under sustained pressure a node gets one {@code EvictionThresholdMet} object whose
 * count grows, not one per sync. An Event the server no longer has (404: Events expire) is created
 * afresh. At most {@link #MAX_REMEMBERED} distinct Events are remembered (least recently seen
 * forgotten first).
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

  /** How long after its last occurrence a repeat still updates the same Event. */
  public static final java.time.Duration AGGREGATION_WINDOW = java.time.Duration.ofMinutes(10);

  /** How many distinct Events are remembered for aggregation (as client-go's cache: 4096). */
  static final int MAX_REMEMBERED = 4096;

  private final KubeApi api;
  private final String nodeName;
  private final Clock clock;
  private final AtomicLong lastNanos = new AtomicLong();

  /** What makes two Events the same one. */
  private record Key(
      String namespace, String kind, String name, String uid, String reason, String message) {}

  /** An Event recorded: its object's name, count so far, and last occurrence. */
  private static final class Recorded {
    final String name;
    int count;
    Instant last;

    Recorded(String name, Instant last) {
      this.name = name;
      this.count = 1;
      this.last = last;
    }
  }

  private final Map<Key, Recorded> recorded =
      new java.util.LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Key, Recorded> eldest) {
          return size() > MAX_REMEMBERED;
        }
      };

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

  /**
   * Records the Event: patches the same Event when it was recorded within the window, else creates
   * it; returns whether the API server accepted it.
   */
  synchronized boolean record(
      String namespace,
      ObjectReference ref,
      String reason,
      String message,
      Map<String, String> annotations) {
    Instant now = clock.instant();
    String time = now.truncatedTo(ChronoUnit.SECONDS).toString();
    Key key = new Key(namespace, ref.getKind(), ref.getName(), ref.getUid(), reason, message);
    Recorded seen = recorded.get(key);
    if (seen != null && now.isBefore(seen.last.plus(AGGREGATION_WINDOW))) {
      Map<String, Object> patch = new java.util.LinkedHashMap<>();
      patch.put("count", seen.count + 1);
      patch.put("lastTimestamp", time);
      ApiResponse r =
          api.patch(
              KubeApi.eventsPath(namespace) + "/" + KubeApi.segment(seen.name),
              KubeApi.STRATEGIC_MERGE_PATCH,
              api.json(patch));
      if (r.isSuccess()) {
        seen.count++;
        seen.last = now;
        return true;
      }
      if (r.code() != 404) {
        LOG.warn(
            "event {} on {} {}: repeat {} not recorded: {}",
            reason,
            ref.getKind(),
            describe(ref),
            seen.count + 1,
            r.describe());
        return false;
      }
      // the server has let the Event expire: a new one
      recorded.remove(key);
    }
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
    if (r.isSuccess()) {
      recorded.put(key, new Recorded(event.getMetadata().getName(), now));
    } else {
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
