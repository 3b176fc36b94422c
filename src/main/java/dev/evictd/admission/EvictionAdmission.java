package dev.evictd.admission;

import dev.evictd.api.ConfigException;
import dev.evictd.api.EvictdException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The validating admission webhook's decision on {@code CREATE pods/eviction}: the evictd identity
 * may evict a pod only when the pod exists, is the one its Eviction names by uid, and its {@code
 * spec.nodeName} is the node in the identity's bound token ({@code
 * userInfo.extra["authentication.kubernetes.io/node-name"]}). The ValidatingAdmissionPolicy cannot
 * decide this (admission of an Eviction sees the Eviction, not the pod); this looks the pod up.
 *
 * <p>Everything in doubt is denied: no node claim, no uid precondition, a pod not found, on another
 * node or not scheduled, a uid that is not the pod's, a lookup that failed. The uid precondition is
 * required because it makes the check exact: a pod's node never changes, and the eviction's delete
 * acts only on the pod of that uid, so the pod checked here is the pod evicted (without it, a pod
 * recreated under the same name on another node - a StatefulSet's - between this check and the
 * delete could be evicted). evictd's Eviction always carries it.
 *
 * <p>Other users are allowed: the webhook's {@code matchConditions} do not send them here, and RBAC
 * alone decides for them; one that arrives all the same (a configuration without the match
 * condition) is allowed and logged once. Requests of the evictd identity other than {@code CREATE
 * pods/eviction} are denied: the webhook's rules should not send them. A body that is not an
 * AdmissionReview {@code admission.k8s.io/v1} with a request uid is answered 400 (the API server
 * then applies the webhook's {@code failurePolicy: Fail}: denied).
 */
public final class EvictionAdmission {
  private static final Logger LOG = LoggerFactory.getLogger(EvictionAdmission.class);

  /** The evictd agents' identity, as docker/rbac.yaml creates it. */
  public static final String DEFAULT_SERVICE_ACCOUNT = "system:serviceaccount:kube-system:evictd";

  /** The claim of a pod's bound service-account token that names the pod's node. */
  public static final String NODE_CLAIM = "authentication.kubernetes.io/node-name";

  static final String API_VERSION = "admission.k8s.io/v1";

  private static final int MAX_ECHO = 200;

  private static final JsonMapper JSON =
      JsonMapper.builder().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();

  /**
   * An HTTP answer: the AdmissionReview (JSON) or, for a body that is none, a line of text.
   *
   * @param status the HTTP status (200 for every review answered, allowed or not)
   * @param contentType its content type
   * @param body the body
   */
  public record Answer(int status, String contentType, String body) {}

  // the parts of an AdmissionReview this reads; everything else is ignored

  record Review(String apiVersion, String kind, Request request) {}

  record Request(
      String uid,
      Resource resource,
      String subResource,
      String name,
      String namespace,
      String operation,
      UserInfo userInfo,
      Eviction object) {}

  record Resource(String group, String version, String resource) {}

  record UserInfo(String username, Map<String, List<String>> extra) {}

  record Eviction(Metadata metadata, DeleteOptions deleteOptions) {}

  record Metadata(String name, String namespace) {}

  record DeleteOptions(Preconditions preconditions) {}

  record Preconditions(String uid) {}

  private final String serviceAccount;
  private final PodLookup pods;
  private final AtomicBoolean otherUserLogged = new AtomicBoolean();

  /**
   * Decides for {@code serviceAccount} ({@code system:serviceaccount:NAMESPACE:NAME}), looking pods
   * up with {@code pods}.
   */
  public EvictionAdmission(String serviceAccount, PodLookup pods) {
    this.serviceAccount = checkServiceAccount(serviceAccount);
    this.pods = pods;
  }

  /** {@code username} if it is a service account's user name, else a ConfigException. */
  public static String checkServiceAccount(String username) {
    String[] parts = username == null ? new String[0] : username.split(":", -1);
    if (parts.length != 4
        || !parts[0].equals("system")
        || !parts[1].equals("serviceaccount")
        || parts[2].isEmpty()
        || parts[3].isEmpty()) {
      throw new ConfigException(
          "--service-account "
              + username
              + ": expected system:serviceaccount:NAMESPACE:NAME (evictd's: "
              + DEFAULT_SERVICE_ACCOUNT
              + ")");
    }
    return username;
  }

  /** The identity this decides for. */
  public String serviceAccount() {
    return serviceAccount;
  }

  /** Answers one AdmissionReview request body. Never throws for any input. */
  public Answer review(byte[] body) {
    Review review;
    try {
      review = JSON.readValue(body, Review.class);
    } catch (MismatchedInputException e) {
      // valid JSON of the wrong shape: name the field, not the Java type it missed
      return badRequest("not an AdmissionReview: " + where(e) + " has the wrong type");
    } catch (JacksonException e) {
      return badRequest("not an AdmissionReview: " + firstLine(e.getOriginalMessage()));
    }
    if (review == null) {
      return badRequest("not an AdmissionReview: the body is null");
    }
    if (!API_VERSION.equals(review.apiVersion()) || !"AdmissionReview".equals(review.kind())) {
      return badRequest(
          "expected apiVersion "
              + API_VERSION
              + ", kind AdmissionReview; got "
              + echo(review.apiVersion())
              + ", "
              + echo(review.kind()));
    }
    Request r = review.request();
    if (r == null || r.uid() == null || r.uid().isEmpty()) {
      return badRequest("the AdmissionReview has no request.uid");
    }
    String denial;
    try {
      denial = denial(r);
    } catch (EvictdException e) {
      denial = "cannot be checked: " + e.getMessage();
    }
    return answer(r.uid(), denial);
  }

  /** Why {@code r} is denied, or null when it is allowed. */
  private String denial(Request r) {
    String user = r.userInfo() == null ? null : r.userInfo().username();
    if (!serviceAccount.equals(user)) {
      if (otherUserLogged.compareAndSet(false, true)) {
        LOG.warn(
            "a request of {} was sent to the webhook and allowed (RBAC decides for it): the"
                + " ValidatingWebhookConfiguration's matchConditions should send only {}'s",
            echo(user),
            serviceAccount);
      }
      return null;
    }
    String node = nodeClaim(r.userInfo());
    String who = node == null ? "evictd" : "evictd on node " + echo(node);
    String what =
        " may not "
            + echo(r.operation())
            + " "
            + (r.resource() == null ? "?" : echo(r.resource().resource()))
            + (r.subResource() == null || r.subResource().isEmpty()
                ? ""
                : "/" + echo(r.subResource()))
            + " "
            + (r.namespace() == null || r.namespace().isEmpty() ? "" : echo(r.namespace()) + "/")
            + (r.name() == null ? "" : echo(r.name()));
    if (!"CREATE".equals(r.operation())
        || r.resource() == null
        || !"".equals(r.resource().group())
        || !"pods".equals(r.resource().resource())
        || !"eviction".equals(r.subResource())) {
      return log(
          who + what + ": this webhook judges only CREATE pods/eviction (check its rules)", r);
    }
    if (node == null) {
      return log(
          who
              + what
              + ": the token names no node ("
              + NODE_CLAIM
              + "): evictd needs the bound service-account token of its pod, Kubernetes 1.30 or"
              + " later",
          r);
    }
    if (r.namespace() == null
        || r.namespace().isEmpty()
        || r.name() == null
        || r.name().isEmpty()) {
      return log(who + what + ": the request names no pod", r);
    }
    Eviction e = r.object();
    if (e == null) {
      return log(who + what + ": the request carries no Eviction", r);
    }
    if (e.metadata() != null) {
      // the API server acts on the pod of the URL; an Eviction naming another is refused there,
      // and here
      if (e.metadata().name() != null && !e.metadata().name().equals(r.name())) {
        return log(who + what + ": the Eviction names pod " + echo(e.metadata().name()), r);
      }
      if (e.metadata().namespace() != null
          && !e.metadata().namespace().isEmpty()
          && !e.metadata().namespace().equals(r.namespace())) {
        return log(
            who + what + ": the Eviction names namespace " + echo(e.metadata().namespace()), r);
      }
    }
    String uid =
        e.deleteOptions() == null || e.deleteOptions().preconditions() == null
            ? null
            : e.deleteOptions().preconditions().uid();
    if (uid == null || uid.isEmpty()) {
      return log(
          who
              + what
              + ": the Eviction has no deleteOptions.preconditions.uid (without it the pod"
              + " checked might not be the pod evicted)",
          r);
    }
    PodLookup.Result found = pods.pod(r.namespace(), r.name());
    if (found instanceof PodLookup.NotFound) {
      return log(who + what + ": the pod was not found", r);
    }
    if (found instanceof PodLookup.Failed f) {
      return log(who + what + ": cannot check the pod's node: " + f.reason(), r);
    }
    PodLookup.Found pod = (PodLookup.Found) found;
    if (!pod.uid().equals(uid)) {
      return log(
          who
              + what
              + ": the Eviction is for uid "
              + echo(uid)
              + ", the pod of that name is "
              + echo(pod.uid()),
          r);
    }
    if (!node.equals(pod.nodeName())) {
      return log(
          who
              + what
              + (pod.nodeName().isEmpty()
                  ? ": the pod is not on a node"
                  : ": the pod is on node " + echo(pod.nodeName())),
          r);
    }
    LOG.info(
        "allowed: {} evicts {}/{} (uid {})", who, echo(r.namespace()), echo(r.name()), echo(uid));
    return null;
  }

  private static String log(String denial, Request r) {
    // every value of the request in it went through echo(): one line, no control characters
    LOG.info("denied (request {}): {}", echo(r.uid()), denial);
    return denial;
  }

  /** The node a bound token names: exactly one non-empty value, else null. */
  private static String nodeClaim(UserInfo user) {
    if (user.extra() == null) {
      return null;
    }
    List<String> values = user.extra().get(NODE_CLAIM);
    if (values == null || values.size() != 1 || values.get(0) == null || values.get(0).isEmpty()) {
      return null;
    }
    return values.get(0);
  }

  private static Answer answer(String uid, String denial) {
    ObjectNode review = JSON.createObjectNode();
    review.put("apiVersion", API_VERSION);
    review.put("kind", "AdmissionReview");
    ObjectNode response = review.putObject("response");
    response.put("uid", uid);
    response.put("allowed", denial == null);
    if (denial != null) {
      ObjectNode status = response.putObject("status");
      status.put("code", 403);
      status.put("reason", "Forbidden");
      status.put("message", denial);
    }
    return new Answer(200, "application/json", JSON.writeValueAsString(review));
  }

  private static Answer badRequest(String why) {
    LOG.warn("refused a request body: {}", why);
    return new Answer(400, "text/plain; charset=utf-8", "evictd admission webhook: " + why + "\n");
  }

  /** A value from the request, fit for one line of a message. */
  private static String echo(String s) {
    if (s == null) {
      return "(none)";
    }
    String one = EvictdException.oneLine(s);
    return one.length() > MAX_ECHO ? one.substring(0, MAX_ECHO) + "..." : one;
  }

  private static String where(JacksonException e) {
    StringBuilder b = new StringBuilder();
    for (JacksonException.Reference r : e.getPath()) {
      if (r.getPropertyName() != null) {
        b.append(b.length() == 0 ? "" : ".").append(echo(r.getPropertyName()));
      } else if (r.getIndex() >= 0) {
        b.append('[').append(r.getIndex()).append(']');
      }
    }
    return b.length() == 0 ? "the body" : b.toString();
  }

  private static String firstLine(String m) {
    return m == null ? "unreadable" : echo(m.lines().findFirst().orElse(m).strip());
  }
}
