package dev.evictd.admission;

import static dev.evictd.testing.TestPods.decision;
import static dev.evictd.testing.TestPods.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.executor.ApiEvictionEvictor;
import dev.evictd.kube.KubeApi;
import dev.evictd.kube.KubeSettings;
import dev.evictd.kube.RetryPolicy;
import dev.evictd.testing.FakeKubeApiServer;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The webhook's decision on AdmissionReviews built as the API server builds them for {@code CREATE
 * pods/eviction}, with the pods looked up in the fake API server (as {@code evictd
 * admission-webhook} looks them up: one GET through {@link KubeApi}).
 */
class EvictionAdmissionTest {
  static final String EVICTD = EvictionAdmission.DEFAULT_SERVICE_ACCOUNT;
  static final JsonMapper JSON = JsonMapper.builder().build();

  FakeKubeApiServer api;
  KubernetesClient client;
  EvictionAdmission admission;

  @BeforeEach
  void start() {
    api = FakeKubeApiServer.start();
    client = api.client(KubeSettings.DEFAULTS);
    admission =
        new EvictionAdmission(EVICTD, PodLookup.api(new KubeApi(client, Duration.ofSeconds(5))));
  }

  @AfterEach
  void stop() {
    // server first: see FakeKubeApiServer#close
    api.close();
    client.close();
  }

  // ---- AdmissionReviews as the API server sends them

  /** userInfo of a pod's bound token on {@code node} (null: a token without the claim). */
  static Map<String, Object> user(String username, String node) {
    Map<String, Object> extra = new LinkedHashMap<>();
    extra.put("authentication.kubernetes.io/credential-id", List.of("JTI=7f3e"));
    extra.put("authentication.kubernetes.io/pod-name", List.of("evictd-x7k2p"));
    extra.put("authentication.kubernetes.io/pod-uid", List.of("0b1c-pod"));
    if (node != null) {
      extra.put(EvictionAdmission.NODE_CLAIM, List.of(node));
    }
    Map<String, Object> u = new LinkedHashMap<>();
    u.put("username", username);
    u.put("uid", "4f6a-sa-uid");
    u.put(
        "groups",
        List.of(
            "system:serviceaccounts",
            "system:serviceaccounts:kube-system",
            "system:authenticated"));
    u.put("extra", extra);
    return u;
  }

  /**
   * The Eviction evictd posts for {@code pod} (name, namespace, grace period, uid precondition).
   */
  static Map<String, Object> eviction(String namespace, String name, String uid) {
    Map<String, Object> options = new LinkedHashMap<>();
    options.put("gracePeriodSeconds", 30);
    if (uid != null) {
      options.put("preconditions", Map.of("uid", uid));
    }
    Map<String, Object> e = new LinkedHashMap<>();
    e.put("kind", "Eviction");
    e.put("apiVersion", "policy/v1");
    e.put("metadata", Map.of("name", name, "namespace", namespace));
    e.put("deleteOptions", options);
    return e;
  }

  static Map<String, Object> review(
      Map<String, Object> user,
      String operation,
      String resource,
      String subResource,
      String namespace,
      String name,
      Object object) {
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("uid", "705ab4f5-6393-11e8-b7cc-42010a800002");
    r.put("kind", Map.of("group", "policy", "version", "v1", "kind", "Eviction"));
    r.put("resource", Map.of("group", "", "version", "v1", "resource", resource));
    if (!subResource.isEmpty()) {
      r.put("subResource", subResource);
      r.put("requestSubResource", subResource);
    }
    r.put("requestKind", Map.of("group", "policy", "version", "v1", "kind", "Eviction"));
    r.put("requestResource", Map.of("group", "", "version", "v1", "resource", resource));
    r.put("name", name);
    r.put("namespace", namespace);
    r.put("operation", operation);
    r.put("userInfo", user);
    r.put("object", object);
    r.put("oldObject", null);
    r.put("dryRun", false);
    r.put("options", Map.of("kind", "CreateOptions", "apiVersion", "meta.k8s.io/v1"));
    Map<String, Object> review = new LinkedHashMap<>();
    review.put("kind", "AdmissionReview");
    review.put("apiVersion", "admission.k8s.io/v1");
    review.put("request", r);
    return review;
  }

  static Map<String, Object> evictionReview(Map<String, Object> user, Pod pod) {
    String ns = pod.getMetadata().getNamespace();
    String name = pod.getMetadata().getName();
    return review(
        user,
        "CREATE",
        "pods",
        "eviction",
        ns,
        name,
        eviction(ns, name, pod.getMetadata().getUid()));
  }

  static byte[] bytes(Object review) {
    return JSON.writeValueAsString(review).getBytes(StandardCharsets.UTF_8);
  }

  /** The AdmissionReview answered (HTTP 200, JSON, the request's uid). */
  JsonNode send(Object review) {
    EvictionAdmission.Answer a = admission.review(bytes(review));
    assertThat(a.status()).as(a.body()).isEqualTo(200);
    assertThat(a.contentType()).isEqualTo("application/json");
    JsonNode out = JSON.readTree(a.body());
    assertThat(out.path("apiVersion").asString()).isEqualTo("admission.k8s.io/v1");
    assertThat(out.path("kind").asString()).isEqualTo("AdmissionReview");
    assertThat(out.path("response").path("uid").asString())
        .isEqualTo("705ab4f5-6393-11e8-b7cc-42010a800002");
    return out.path("response");
  }

  static void assertAllowed(JsonNode response) {
    assertThat(response.path("allowed").asBoolean(false))
        .as("allowed (%s)", response.path("status").path("message").asString(""))
        .isTrue();
    assertThat(response.has("status")).isFalse();
  }

  static void assertDenied(JsonNode response, String... messageParts) {
    assertThat(response.path("allowed").isBoolean()).isTrue();
    assertThat(response.path("allowed").asBoolean(true)).as("denied").isFalse();
    assertThat(response.path("status").path("code").asInt()).isEqualTo(403);
    assertThat(response.path("status").path("reason").asString()).isEqualTo("Forbidden");
    assertThat(response.path("status").path("message").asString()).contains(messageParts);
  }

  List<FakeKubeApiServer.Request> lookups() {
    return api.requests("GET", "/api/v1/namespaces/[^/]+/pods/[^/]+");
  }

  // ---- the evictd identity

  @Test
  void allowsEvictdToEvictAPodOfItsOwnNode() {
    Pod web = api.create(pod("apps", "web", "node-a"));
    assertAllowed(send(evictionReview(user(EVICTD, "node-a"), web)));
    assertThat(lookups())
        .extracting(FakeKubeApiServer.Request::path)
        .containsExactly("/api/v1/namespaces/apps/pods/web");
  }

  @Test
  void deniesAPodOfAnotherNode() {
    Pod web = api.create(pod("apps", "web", "node-b"));
    assertDenied(
        send(evictionReview(user(EVICTD, "node-a"), web)),
        "evictd on node node-a may not CREATE pods/eviction apps/web: the pod is on node node-b");
  }

  @Test
  void deniesAPodOnNoNode() {
    Pod pending = api.create(pod("apps", "pending", null));
    assertDenied(
        send(evictionReview(user(EVICTD, "node-a"), pending)),
        "apps/pending: the pod is not on a node");
  }

  @Test
  void deniesATokenWithoutTheNodeClaim() {
    Pod web = api.create(pod("apps", "web", "node-a"));
    assertDenied(
        send(evictionReview(user(EVICTD, null), web)),
        "evictd may not CREATE pods/eviction apps/web: the token names no node"
            + " (authentication.kubernetes.io/node-name)");
    // no extra at all (a legacy Secret token), an empty claim, two nodes
    Map<String, Object> legacy = new LinkedHashMap<>(user(EVICTD, null));
    legacy.remove("extra");
    assertDenied(send(evictionReview(legacy, web)), "the token names no node");
    Map<String, Object> empty = new LinkedHashMap<>(user(EVICTD, null));
    empty.put("extra", Map.of(EvictionAdmission.NODE_CLAIM, List.of()));
    assertDenied(send(evictionReview(empty, web)), "the token names no node");
    Map<String, Object> two = new LinkedHashMap<>(user(EVICTD, null));
    two.put("extra", Map.of(EvictionAdmission.NODE_CLAIM, List.of("node-a", "node-b")));
    assertDenied(send(evictionReview(two, web)), "the token names no node");
    Map<String, Object> blank = new LinkedHashMap<>(user(EVICTD, null));
    blank.put("extra", Map.of(EvictionAdmission.NODE_CLAIM, List.of("")));
    assertDenied(send(evictionReview(blank, web)), "the token names no node");
    assertThat(lookups()).as("nothing looked up without a node").isEmpty();
  }

  @Test
  void deniesAPodThatIsNotFound() {
    assertDenied(
        send(
            review(
                user(EVICTD, "node-a"),
                "CREATE",
                "pods",
                "eviction",
                "apps",
                "gone",
                eviction("apps", "gone", "u-gone"))),
        "evictd on node node-a may not CREATE pods/eviction apps/gone: the pod was not found");
  }

  @Test
  void deniesAnEvictionForAnotherPodOfTheSameName() {
    // the pod evictd meant was replaced by one of the same name (a StatefulSet's): another uid
    Pod web = api.create(pod("apps", "web", "node-a"));
    Map<String, Object> r =
        review(
            user(EVICTD, "node-a"),
            "CREATE",
            "pods",
            "eviction",
            "apps",
            "web",
            eviction("apps", "web", "0000-old-uid"));
    assertDenied(
        send(r),
        "the Eviction is for uid 0000-old-uid, the pod of that name is "
            + web.getMetadata().getUid());
  }

  @Test
  void deniesAnEvictionWithoutAUidPrecondition() {
    api.create(pod("apps", "web", "node-a"));
    Map<String, Object> r =
        review(
            user(EVICTD, "node-a"),
            "CREATE",
            "pods",
            "eviction",
            "apps",
            "web",
            eviction("apps", "web", null));
    assertDenied(send(r), "apps/web: the Eviction has no deleteOptions.preconditions.uid");
    Map<String, Object> noOptions = eviction("apps", "web", null);
    noOptions.remove("deleteOptions");
    assertDenied(
        send(
            review(user(EVICTD, "node-a"), "CREATE", "pods", "eviction", "apps", "web", noOptions)),
        "no deleteOptions.preconditions.uid");
    assertDenied(
        send(review(user(EVICTD, "node-a"), "CREATE", "pods", "eviction", "apps", "web", null)),
        "the request carries no Eviction");
    assertThat(lookups()).isEmpty();
  }

  @Test
  void deniesAnEvictionThatNamesAnotherPodThanItsPath() {
    Pod own = api.create(pod("apps", "own", "node-a"));
    Map<String, Object> r =
        review(
            user(EVICTD, "node-a"),
            "CREATE",
            "pods",
            "eviction",
            "apps",
            "own",
            eviction("apps", "other", own.getMetadata().getUid()));
    assertDenied(send(r), "the Eviction names pod other");
    Map<String, Object> otherNs =
        review(
            user(EVICTD, "node-a"),
            "CREATE",
            "pods",
            "eviction",
            "apps",
            "own",
            eviction("kube-system", "own", own.getMetadata().getUid()));
    assertDenied(send(otherNs), "the Eviction names namespace kube-system");
  }

  @Test
  void deniesWhenThePodCannotBeLookedUp() {
    Pod web = api.create(pod("apps", "web", "node-a"));
    api.fail("GET", "/api/v1/namespaces/apps/pods/web", 500, 1);
    assertDenied(
        send(evictionReview(user(EVICTD, "node-a"), web)),
        "apps/web: cannot check the pod's node: GET /api/v1/namespaces/apps/pods/web: HTTP 500");
    // the webhook's own account not allowed to read pods
    api.fail("GET", "/api/v1/namespaces/apps/pods/web", 403, 1);
    assertDenied(
        send(evictionReview(user(EVICTD, "node-a"), web)),
        "cannot check the pod's node: GET /api/v1/namespaces/apps/pods/web: HTTP 403: not authorized");
    // and afterwards, the same review is allowed again
    assertAllowed(send(evictionReview(user(EVICTD, "node-a"), web)));
  }

  @Test
  void deniesWhenTheApiServerDoesNotAnswerInTime() {
    Pod web = api.create(pod("apps", "web", "node-a"));
    EvictionAdmission impatient =
        new EvictionAdmission(EVICTD, PodLookup.api(new KubeApi(client, Duration.ofMillis(300))));
    api.delay("GET", "/api/v1/namespaces/apps/pods/web", Duration.ofSeconds(2), 1);
    long start = System.nanoTime();
    EvictionAdmission.Answer a =
        impatient.review(bytes(evictionReview(user(EVICTD, "node-a"), web)));
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
    JsonNode response = JSON.readTree(a.body()).path("response");
    assertDenied(response, "cannot check the pod's node", "no response within 300 ms");
  }

  @Test
  void deniesEveryOtherRequestOfEvictd() {
    Pod web = api.create(pod("apps", "web", "node-a"));
    assertDenied(
        send(review(user(EVICTD, "node-a"), "DELETE", "pods", "", "apps", "web", null)),
        "evictd on node node-a may not DELETE pods apps/web: this webhook judges only CREATE"
            + " pods/eviction");
    assertDenied(
        send(
            review(
                user(EVICTD, "node-a"),
                "UPDATE",
                "pods",
                "eviction",
                "apps",
                "web",
                eviction("apps", "web", web.getMetadata().getUid()))),
        "may not UPDATE pods/eviction apps/web");
    assertThat(lookups()).isEmpty();
  }

  @Test
  void valuesOfTheRequestCannotForgeLinesInTheMessage() {
    Map<String, Object> r =
        review(
            user(EVICTD, "node-a\nallowed: evictd on node node-a evicts kube-system/x"),
            "CREATE",
            "pods",
            "eviction",
            "apps",
            "web\r\nallowed: evictd evicts kube-system/y",
            eviction("apps", "web\r\nallowed: evictd evicts kube-system/y", "u"));
    String message = send(r).path("status").path("message").asString();
    assertThat(message).doesNotContain("\n", "\r").startsWith("evictd on node node-a\\nallowed: ");
  }

  // ---- everyone else

  @Test
  void leavesOtherUsersToRbac() {
    Pod web = api.create(pod("apps", "web", "node-b"));
    for (String other :
        List.of(
            "system:serviceaccount:kube-system:evictd-other",
            "system:serviceaccount:default:evictd",
            "system:node:node-a",
            "kubernetes-admin")) {
      assertAllowed(send(evictionReview(user(other, "node-a"), web)));
    }
    Map<String, Object> anonymous = new LinkedHashMap<>(user(EVICTD, "node-a"));
    anonymous.remove("username");
    assertAllowed(send(evictionReview(anonymous, web)));
    assertThat(lookups()).as("no lookup for other users").isEmpty();
  }

  // ---- what is not an AdmissionReview

  @Test
  void aBodyThatIsNoAdmissionReviewIsABadRequestOfOneLine() {
    Map<String, Object> noUid =
        review(
            user(EVICTD, "node-a"),
            "CREATE",
            "pods",
            "eviction",
            "a",
            "b",
            eviction("a", "b", "u"));
    ((Map<?, ?>) noUid.get("request")).remove("uid");
    Map<String, Object> v1beta1 = new LinkedHashMap<>(noUid);
    v1beta1.put("apiVersion", "admission.k8s.io/v1beta1");
    Map<String, Object> badExtra = evictionReview(user(EVICTD, "node-a"), pod("a", "b", "node-a"));
    @SuppressWarnings("unchecked")
    Map<String, Object> u =
        (Map<String, Object>) ((Map<String, Object>) badExtra.get("request")).get("userInfo");
    u.put("extra", Map.of(EvictionAdmission.NODE_CLAIM, Map.of("not", "a list")));
    Map<String, String> cases = new LinkedHashMap<>();
    cases.put("", "not an AdmissionReview");
    cases.put("{\"kind\": \"AdmissionReview\", \"apiVersion\": ", "not an AdmissionReview");
    cases.put("null", "not an AdmissionReview");
    cases.put("[1, 2]", "not an AdmissionReview: the body has the wrong type");
    cases.put("<AdmissionReview/>", "not an AdmissionReview");
    cases.put(
        "{\"kind\": \"AdmissionReview\", \"apiVersion\": \"admission.k8s.io/v1\"}",
        "no request.uid");
    cases.put(JSON.writeValueAsString(noUid), "no request.uid");
    cases.put(
        JSON.writeValueAsString(v1beta1),
        "expected apiVersion admission.k8s.io/v1, kind AdmissionReview; got admission.k8s.io/v1beta1");
    cases.put(
        JSON.writeValueAsString(badExtra),
        "not an AdmissionReview: request.userInfo.extra.authentication.kubernetes.io/node-name has"
            + " the wrong type");
    cases.put(
        "{\"kind\": \"Pod\", \"apiVersion\": \"v1\", \"request\": {\"uid\": \"x\"}}",
        "got v1, Pod");
    for (var c : cases.entrySet()) {
      EvictionAdmission.Answer a = admission.review(c.getKey().getBytes(StandardCharsets.UTF_8));
      assertThat(a.status()).as(c.getKey()).isEqualTo(400);
      assertThat(a.contentType()).startsWith("text/plain");
      assertThat(a.body())
          .as(c.getKey())
          .startsWith("evictd admission webhook: ")
          .contains(c.getValue());
      assertThat(a.body().strip().lines()).as("one line").hasSize(1);
      assertThat(a.body())
          .doesNotContain("Exception", "\tat ", "tools.jackson", "dev.evictd", "java.");
    }
    assertThat(lookups()).isEmpty();
  }

  // ---- with the Eviction evictd's executor really sends

  @Test
  void theEvictionEvictdSendsCarriesTheUidAndIsAllowedOnItsOwnNodeOnly() {
    Pod own = api.create(pod("apps", "own", "node-a"));
    Pod other = api.create(pod("apps", "other", "node-b"));
    ApiEvictionEvictor evictor =
        new ApiEvictionEvictor(new KubeApi(client, Duration.ofSeconds(5)), RetryPolicy.NONE);
    // the fake API server records each Eviction's body: they are the objects admission gets
    assertThat(evictor.evict(decision(own, 30, EvictionMethod.EVICT)))
        .isEqualTo(EvictionOutcome.EVICTED);
    assertThat(evictor.evict(decision(other, 30, EvictionMethod.EVICT)))
        .isEqualTo(EvictionOutcome.EVICTED);
    List<JsonNode> bodies =
        api.requests("POST", "/api/v1/namespaces/apps/pods/[^/]+/eviction").stream()
            .map(r -> JSON.readTree(r.body()))
            .toList();
    assertThat(bodies).hasSize(2);
    assertThat(bodies.get(0).path("deleteOptions").path("preconditions").path("uid").asString())
        .isEqualTo(own.getMetadata().getUid());
    // pods bound to a node stay (being deleted) until their kubelet removes them: still found
    assertAllowed(
        send(
            review(
                user(EVICTD, "node-a"),
                "CREATE",
                "pods",
                "eviction",
                "apps",
                "own",
                bodies.get(0))));
    assertDenied(
        send(
            review(
                user(EVICTD, "node-a"),
                "CREATE",
                "pods",
                "eviction",
                "apps",
                "other",
                bodies.get(1))),
        "apps/other: the pod is on node node-b");
  }

  @Test
  void theServiceAccountMustBeOne() {
    for (String bad :
        List.of("evictd", "system:serviceaccount:kube-system", "system:node:x:y", "")) {
      org.assertj.core.api.Assertions.assertThatThrownBy(
              () -> new EvictionAdmission(bad, (ns, n) -> new PodLookup.NotFound()))
          .isInstanceOf(dev.evictd.api.ConfigException.class)
          .hasMessageStartingWith("--service-account " + bad + ": expected system:serviceaccount:");
    }
  }
}
