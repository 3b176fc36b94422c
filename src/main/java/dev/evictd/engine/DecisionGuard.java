package dev.evictd.engine;

import dev.evictd.api.ConfigException;
import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionPlan.Refusal;
import dev.evictd.api.EvictionPlan.RefusedDecision;
import dev.evictd.api.PodFact;
import dev.evictd.api.PodRef;
import dev.evictd.api.Signal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The one check between the rules and the executor: every {@link EvictionDecision} the rules made
 * is validated against the node's real state of this sync before anything acts on it. Rules are
 * untrusted code; whatever they wrote into a decision is a claim, not a fact.
 *
 * <ul>
 *   <li>The decision must name, by uid, a pod of this sync's active pod list, bound to this node
 *       (or to none), with the namespace and name that pod has. The accepted decision carries that
 *       pod's own reference: the executor never sees a namespace, name or uid the rules built.
 *   <li>A pod is decided once per sync (the first decision wins), never while it is exempt, and
 *       never when it is static, mirror or system-critical (the kubelet's own evictPod refuses
 *       those whatever its policy).
 *   <li>The method must be one the configuration allows ({@link EvictionMethod#DEFAULT} always is);
 *       the signal an eviction signal or local-storage limit (it labels metrics); the grace period
 *       between 0 and the node's {@code evictionMaxPodGracePeriod} when it is set, else the pod's
 *       own termination grace period (30 s when unset, as the API server defaults it), at least 1
 *       s.
 *   <li>The message (it goes into the pod's condition, the Evicted Event and the log) and the Event
 *       annotations are bounded in length, with control and format characters replaced; annotations
 *       whose key is not a valid Kubernetes annotation key are dropped.
 * </ul>
 *
 * A refused decision is dropped and reported with the reason and the rules that made it.
 */
public final class DecisionGuard {
  /**
   * The default bound of a decision's message, in characters (an Event's note is at most 1 KiB).
   */
  public static final int MAX_MESSAGE_LENGTH = 1024;

  /** The most annotations a decision's Event carries. */
  public static final int MAX_ANNOTATIONS = 16;

  /** The grace period the API server gives a pod that sets none. */
  public static final long DEFAULT_POD_GRACE_PERIOD_SECONDS = 30;

  /** The local-storage limits a {@link EvictionDecision.Kind#LOCAL_STORAGE} decision names. */
  public static final Set<String> LOCAL_STORAGE_LIMITS =
      Set.of("emptydirfs.limit", "ephemeralpodfs.limit", "ephemeralcontainerfs.limit");

  // a Kubernetes annotation key: an optional DNS subdomain prefix and a name of at most 63
  // characters
  private static final Pattern ANNOTATION_KEY =
      Pattern.compile(
          "([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
              + "[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?");

  /**
   * What the configuration allows.
   *
   * @param methods the methods a decision may name, besides {@link EvictionMethod#DEFAULT} (and
   *     {@link EvictionMethod#KILL_AND_DELETE} where both of its parts are allowed)
   * @param maxMessageLength the longest message and annotation value, in characters
   */
  public record Limits(Set<EvictionMethod> methods, int maxMessageLength) {
    /** Every method, messages of at most {@value DecisionGuard#MAX_MESSAGE_LENGTH} characters. */
    public static final Limits DEFAULT =
        new Limits(
            EnumSet.of(
                EvictionMethod.DELETE,
                EvictionMethod.EVICT,
                EvictionMethod.KILL,
                EvictionMethod.DRY_RUN),
            MAX_MESSAGE_LENGTH);

    public Limits {
      if (maxMessageLength < 16) {
        throw new ConfigException(
            "the longest eviction message must be at least 16 characters, not " + maxMessageLength);
      }
      EnumSet<EvictionMethod> m = EnumSet.noneOf(EvictionMethod.class);
      m.addAll(methods);
      m.add(EvictionMethod.DEFAULT);
      if (m.contains(EvictionMethod.KILL) && m.contains(EvictionMethod.DELETE)) {
        m.add(EvictionMethod.KILL_AND_DELETE); // the two together
      }
      methods = java.util.Collections.unmodifiableSet(m);
    }
  }

  /**
   * The guard's verdict on one sync's decisions.
   *
   * @param accepted the decisions to carry out, in the order given, each naming its active pod
   * @param made for each accepted decision, at the same index, the decision as the rules made it
   * @param refused the decisions dropped, with why
   * @param warnings what was changed in accepted decisions (a message cut, an annotation dropped)
   */
  public record Review(
      List<EvictionDecision> accepted,
      List<EvictionDecision> made,
      List<RefusedDecision> refused,
      List<String> warnings) {
    public Review {
      accepted = List.copyOf(accepted);
      made = List.copyOf(made);
      refused = List.copyOf(refused);
      warnings = List.copyOf(warnings);
    }
  }

  private final EvictionConfig config;
  private final Limits limits;

  /** A guard for the node of {@code config}, allowing what {@code limits} allows. */
  public DecisionGuard(EvictionConfig config, Limits limits) {
    this.config = config;
    this.limits = limits;
  }

  /** The limits this guard applies. */
  public Limits limits() {
    return limits;
  }

  /**
   * One sync's decisions in the order {@link #review} must see them, since the first decision for a
   * pod wins and the others are refused as {@link Refusal#DUPLICATE}: local-storage decisions first
   * (the kubelet acts on local-storage limits before node pressure), then by the pod's place in the
   * active list, decisions that name no active pod last (review refuses them); ties keep the order
   * given.
   *
   * @param activeByUid this sync's active pods by uid (null for a uid that is not one)
   */
  public static List<EvictionDecision> reviewOrder(
      List<EvictionDecision> decisions, Function<String, PodFact> activeByUid) {
    Map<String, Integer> positions = new HashMap<>();
    for (EvictionDecision d : decisions) {
      String uid = d.pod() == null ? null : d.pod().uid();
      PodFact pod = uid == null ? null : activeByUid.apply(uid);
      positions.put(uid, pod == null ? Integer.MAX_VALUE : pod.position());
    }
    List<EvictionDecision> sorted = new ArrayList<>(decisions);
    sorted.sort(
        Comparator.comparing(
                (EvictionDecision d) -> d.kind() != EvictionDecision.Kind.LOCAL_STORAGE)
            .thenComparing(d -> positions.get(d.pod() == null ? null : d.pod().uid())));
    return sorted;
  }

  /**
   * Reviews one sync's decisions in the order given (the first decision for a pod wins; {@link
   * #reviewOrder} is the order the planner gives).
   *
   * @param decisions the decisions the rules made, each with the rules behind it
   * @param activeByUid this sync's active pods by uid (null for a uid that is not one)
   * @param exemptions why each exempt pod (by uid) is exempt
   */
  public Review review(
      List<EvictionDecision> decisions,
      Function<String, PodFact> activeByUid,
      Map<String, List<String>> exemptions) {
    List<EvictionDecision> accepted = new ArrayList<>();
    List<EvictionDecision> made = new ArrayList<>();
    List<RefusedDecision> refused = new ArrayList<>();
    List<String> warnings = new ArrayList<>();
    Set<String> decided = new HashSet<>();
    for (EvictionDecision d : decisions) {
      PodRef named = d.pod();
      if (named == null || d.kind() == null) {
        refused.add(
            refusal(d, Refusal.INVALID, named == null ? "the decision names no pod" : "no kind"));
        continue;
      }
      PodFact pod = named.uid() == null ? null : activeByUid.apply(named.uid());
      if (pod == null) {
        refused.add(
            refusal(
                d,
                Refusal.UNKNOWN_POD,
                "no active pod of this node has uid \"" + clean(named.uid(), 64) + "\""));
        continue;
      }
      if (!pod.namespace().equals(named.namespace()) || !pod.name().equals(named.name())) {
        refused.add(
            refusal(
                d,
                Refusal.POD_MISMATCH,
                "uid "
                    + pod.uid()
                    + " is pod "
                    + pod.key()
                    + ", not \""
                    + clean(named.namespace() + "/" + named.name(), 128)
                    + "\""));
        continue;
      }
      String node = nodeOf(pod);
      if (node != null && !node.equals(config.nodeName())) {
        refused.add(
            refusal(d, Refusal.OTHER_NODE, "pod " + pod.key() + " is bound to node " + node));
        continue;
      }
      if (!decided.add(pod.uid())) {
        refused.add(
            refusal(
                d,
                Refusal.DUPLICATE,
                "pod " + pod.key() + " was decided more than once; the first decision is kept"));
        continue;
      }
      List<String> exempt = exemptions.get(pod.uid());
      if (exempt != null) {
        refused.add(
            refusal(d, Refusal.EXEMPT, "pod " + pod.key() + " is exempt (" + join(exempt) + ")"));
        continue;
      }
      if (pod.critical()) {
        // the kubelet's evictPod refuses these itself, below its policy: so does evictd, even when
        // a rule set removed their exemption
        refused.add(
            refusal(
                d,
                Refusal.CRITICAL,
                "pod "
                    + pod.key()
                    + " is "
                    + (pod.staticPod()
                        ? "a static pod"
                        : pod.mirrorPod() ? "a mirror pod" : "critical")
                    + ": never evicted"));
        continue;
      }
      if (d.method() == null || !limits.methods().contains(d.method())) {
        refused.add(
            refusal(
                d,
                Refusal.METHOD,
                "method "
                    + d.method()
                    + " is not allowed (allowed: "
                    + limits.methods().stream().filter(m -> m != EvictionMethod.DEFAULT).toList()
                    + ")"));
        continue;
      }
      if (d.signal() == null
          || (Signal.fromKey(d.signal()).isEmpty() && !LOCAL_STORAGE_LIMITS.contains(d.signal()))) {
        refused.add(
            refusal(
                d,
                Refusal.SIGNAL,
                "\""
                    + clean(String.valueOf(d.signal()), 64)
                    + "\" is not an eviction signal or local-storage limit"));
        continue;
      }
      long maxGrace = maxGracePeriodSeconds(pod);
      if (d.gracePeriodSeconds() < 0 || d.gracePeriodSeconds() > maxGrace) {
        refused.add(
            refusal(
                d,
                Refusal.GRACE_PERIOD,
                "grace period "
                    + d.gracePeriodSeconds()
                    + "s is outside 0.."
                    + maxGrace
                    + "s for pod "
                    + pod.key()));
        continue;
      }
      String message = d.message() == null ? "" : d.message();
      String cleaned = clean(message, limits.maxMessageLength());
      if (message.length() > limits.maxMessageLength()) {
        warnings.add(
            "the message for pod "
                + pod.key()
                + " was cut to "
                + limits.maxMessageLength()
                + " characters");
      }
      accepted.add(
          new EvictionDecision(
              pod.ref(),
              d.kind(),
              d.signal(),
              d.gracePeriodSeconds(),
              cleaned,
              annotations(d, pod, warnings),
              d.method(),
              d.rules()));
      made.add(d);
    }
    return new Review(accepted, made, refused, warnings);
  }

  /**
   * The longest grace period a decision may give {@code pod}: rules may shorten what the node
   * allows, never lengthen it. A configured {@code evictionMaxPodGracePeriod} is the bound whatever
   * the pod asks for (the kubelet never gives an eviction more); without one, the pod's own
   * termination grace period (30 s when unset) is. Never below 1 s.
   */
  long maxGracePeriodSeconds(PodFact pod) {
    long own =
        pod.terminationGracePeriodSeconds() == null
            ? DEFAULT_POD_GRACE_PERIOD_SECONDS
            : pod.terminationGracePeriodSeconds();
    long configured = config.maxPodGracePeriodSeconds();
    return Math.max(1, configured > 0 ? configured : own);
  }

  private Map<String, String> annotations(EvictionDecision d, PodFact pod, List<String> warnings) {
    Map<String, String> out = new LinkedHashMap<>();
    for (var e : new java.util.TreeMap<>(d.annotations()).entrySet()) {
      String key = e.getKey();
      if (key.length() > 253 + 1 + 63 || !ANNOTATION_KEY.matcher(key).matches()) {
        warnings.add(
            "an annotation of the decision for pod "
                + pod.key()
                + " is dropped: \""
                + clean(key, 64)
                + "\" is not an annotation key");
        continue;
      }
      if (out.size() == MAX_ANNOTATIONS) {
        warnings.add(
            "the decision for pod "
                + pod.key()
                + " has more than "
                + MAX_ANNOTATIONS
                + " annotations; the others are dropped");
        break;
      }
      out.put(key, clean(e.getValue(), limits.maxMessageLength()));
    }
    return out;
  }

  private static String nodeOf(PodFact pod) {
    String node = pod.pod() == null ? null : pod.pod().spec().nodeName();
    return node == null || node.isEmpty() ? null : node;
  }

  private static RefusedDecision refusal(EvictionDecision d, Refusal reason, String detail) {
    PodRef p = d.pod();
    PodRef shown =
        p == null
            ? null
            : new PodRef(clean(p.namespace(), 253), clean(p.name(), 253), clean(p.uid(), 64));
    return new RefusedDecision(shown, reason, detail, d.rules());
  }

  private static String join(List<String> reasons) {
    return String.join(", ", reasons);
  }

  /**
   * {@code text} with every control, format (bidirectional overrides, zero-width characters) and
   * line or paragraph separator character replaced by a space, cut to at most {@code max}
   * characters (ending in "...") without splitting a surrogate pair; null stays null.
   */
  public static String clean(String text, int max) {
    if (text == null) {
      return null;
    }
    StringBuilder b = new StringBuilder(Math.min(text.length(), max));
    int limit = text.length() > max ? max - 3 : max;
    for (int i = 0; i < text.length(); ) {
      int cp = text.codePointAt(i);
      int n = Character.charCount(cp);
      if (b.length() + n > limit) {
        break;
      }
      int type = Character.getType(cp);
      boolean hidden =
          type == Character.CONTROL
              || type == Character.FORMAT
              || type == Character.LINE_SEPARATOR
              || type == Character.PARAGRAPH_SEPARATOR
              || type == Character.SURROGATE;
      if (hidden) {
        b.append(' ');
      } else {
        b.appendCodePoint(cp);
      }
      i += n;
    }
    if (text.length() > max) {
      b.append("...");
    }
    return b.toString();
  }
}
