package dev.evictd.docker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.admission.EvictionAdmission;
import dev.evictd.admission.PodLookup;
import dev.evictd.testing.AdmissionPolicy;
import dev.evictd.testing.AdmissionPolicy.Decision;
import dev.evictd.testing.Rbac;
import dev.evictd.testing.Rbac.Access;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * docker/admission-policy.yaml: every CEL expression of the ValidatingAdmissionPolicy evaluated
 * with CEL for Java on admission requests built as the API server builds them (AdmissionRequest
 * JSON, omitempty fields absent), for the evictd identity on its own node, on another node, without
 * the node claim, for another user, and for Node updates that touch more than evictd's taints.
 */
class AdmissionPolicyTest {
  static final Path MANIFEST = Path.of("docker/admission-policy.yaml");
  static final String EVICTD = "system:serviceaccount:kube-system:evictd";
  static final String CLAIM = "authentication.kubernetes.io/node-name";
  static final String MEMORY_TAINT = "evictd.dev/memory-pressure";

  static AdmissionPolicy policy;

  /** The policy has no parameters (its binding no paramRef): the API server passes null. */
  static final Map<String, Object> NO_PARAMS = null;

  @BeforeAll
  static void load() throws Exception {
    policy = AdmissionPolicy.load(MANIFEST, "evictd-own-node");
  }

  // ---- admission requests as the API server builds them

  /** A user with a bound token of {@code node} (null: a token without the claim). */
  static Map<String, Object> user(String username, String node) {
    Map<String, Object> u = new LinkedHashMap<>();
    u.put("username", username);
    u.put("uid", "4f6a-uid");
    u.put("groups", List.of("system:serviceaccounts", "system:authenticated"));
    Map<String, Object> extra = new LinkedHashMap<>();
    extra.put("authentication.kubernetes.io/credential-id", List.of("JTI=abc"));
    extra.put("authentication.kubernetes.io/pod-name", List.of("evictd-x7k2p"));
    if (node != null) {
      extra.put(CLAIM, List.of(node));
    }
    u.put("extra", extra);
    return u;
  }

  static Map<String, Object> request(
      Map<String, Object> user,
      String operation,
      String group,
      String resource,
      String subResource,
      String namespace,
      String name) {
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("uid", "705ab4f5-6393-11e8-b7cc-42010a800002");
    r.put("resource", Map.of("group", group, "version", "v1", "resource", resource));
    if (!subResource.isEmpty()) {
      r.put("subResource", subResource);
    }
    if (!namespace.isEmpty()) {
      r.put("namespace", namespace);
    }
    if (!name.isEmpty()) {
      r.put("name", name);
    }
    r.put("operation", operation);
    r.put("userInfo", user);
    r.put("dryRun", false);
    return r;
  }

  static Map<String, Object> pod(String node) {
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("apiVersion", "v1");
    p.put("kind", "Pod");
    p.put("metadata", Map.of("name", "web", "namespace", "apps", "uid", "u-web"));
    p.put("spec", Map.of("nodeName", node, "containers", List.of(Map.of("name", "c"))));
    p.put("status", Map.of("phase", "Running"));
    return p;
  }

  static Map<String, Object> taint(String key, String effect) {
    return Map.of("key", key, "effect", effect);
  }

  static Map<String, Object> node(String name, List<Map<String, Object>> taints) {
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("podCIDR", "10.244.1.0/24");
    spec.put("providerID", "kind://docker/kind/" + name);
    if (!taints.isEmpty()) {
      spec.put("taints", taints);
    }
    Map<String, Object> n = new LinkedHashMap<>();
    n.put("apiVersion", "v1");
    n.put("kind", "Node");
    n.put(
        "metadata",
        new LinkedHashMap<>(
            Map.of(
                "name",
                name,
                "labels",
                Map.of("kubernetes.io/hostname", name),
                "resourceVersion",
                "1")));
    n.put("spec", spec);
    n.put("status", Map.of("conditions", List.of()));
    return n;
  }

  static final Map<String, Object> OTHER_TAINT = taint("example.com/dedicated", "NoSchedule");

  Decision deletePod(Map<String, Object> user, String podNode) {
    return policy.evaluate(
        request(user, "DELETE", "", "pods", "", "apps", "web"), null, pod(podNode), NO_PARAMS);
  }

  Decision patchPodStatus(Map<String, Object> user, String podNode) {
    return policy.evaluate(
        request(user, "UPDATE", "", "pods", "status", "apps", "web"),
        pod(podNode),
        pod(podNode),
        NO_PARAMS);
  }

  static Map<String, Object> evictionOf(String namespace, String name, String uid) {
    return Map.of(
        "apiVersion",
        "policy/v1",
        "kind",
        "Eviction",
        "metadata",
        Map.of("name", name, "namespace", namespace),
        "deleteOptions",
        Map.of("preconditions", Map.of("uid", uid)));
  }

  Decision evictPod(Map<String, Object> user) {
    return policy.evaluate(
        request(user, "CREATE", "", "pods", "eviction", "apps", "web"),
        evictionOf("apps", "web", "u-web"),
        null,
        NO_PARAMS);
  }

  Decision updateNode(
      Map<String, Object> user, String name, Map<String, Object> old, Map<String, Object> now) {
    return policy.evaluate(request(user, "UPDATE", "", "nodes", "", "", name), now, old, NO_PARAMS);
  }

  Decision taintNode(Map<String, Object> user, String name) {
    return updateNode(
        user,
        name,
        node(name, List.of(OTHER_TAINT)),
        node(name, List.of(OTHER_TAINT, taint(MEMORY_TAINT, "NoSchedule"))));
  }

  Decision createEvent(Map<String, Object> user, String kind, String name) {
    Map<String, Object> event =
        Map.of(
            "apiVersion", "v1",
            "kind", "Event",
            "metadata", Map.of("name", "x.1", "namespace", "apps"),
            "involvedObject", Map.of("kind", kind, "name", name),
            "reason", "Evicted");
    return policy.evaluate(
        request(user, "CREATE", "", "events", "", "apps", ""), event, null, NO_PARAMS);
  }

  static void assertAllowed(Decision d) {
    assertThat(d.matched()).as("the policy applies").isTrue();
    assertThat(d.allowed()).as("allowed (%s)", d.message()).isTrue();
  }

  static void assertDenied(Decision d, String... messageParts) {
    assertThat(d.matched()).as("the policy applies").isTrue();
    assertThat(d.allowed()).as("denied").isFalse();
    assertThat(d.message()).doesNotContain("failed:");
    if (messageParts.length > 0) {
      assertThat(d.message()).contains(messageParts);
    }
  }

  // ---- pods

  @Test
  void deletesPodsOfItsOwnNodeOnly() {
    assertAllowed(deletePod(user(EVICTD, "node-a"), "node-a"));
    assertDenied(
        deletePod(user(EVICTD, "node-a"), "node-b"),
        "evictd on node node-a may not DELETE pods apps/web");
  }

  @Test
  void patchesTheStatusOfPodsOfItsOwnNodeOnly() {
    assertAllowed(patchPodStatus(user(EVICTD, "node-a"), "node-a"));
    assertDenied(
        patchPodStatus(user(EVICTD, "node-a"), "node-b"), "may not UPDATE pods/status apps/web");
  }

  /**
   * The webhook of docker/admission-webhook.yaml on an Eviction of {@code apps/web} whose pod (as
   * the webhook's lookup finds it) is on {@code podNode}. The lookup against a real (fake) API
   * server is EvictionAdmissionTest's; here the pod is given.
   */
  static JsonNode webhookOnEviction(Map<String, Object> user, String podNode) {
    EvictionAdmission webhook =
        new EvictionAdmission(EVICTD, (ns, name) -> new PodLookup.Found("u-web", podNode));
    Map<String, Object> review =
        Map.of(
            "apiVersion",
            "admission.k8s.io/v1",
            "kind",
            "AdmissionReview",
            "request",
            new LinkedHashMap<>(
                Map.of(
                    "uid",
                    "r-1",
                    "resource",
                    Map.of("group", "", "version", "v1", "resource", "pods"),
                    "subResource",
                    "eviction",
                    "namespace",
                    "apps",
                    "name",
                    "web",
                    "operation",
                    "CREATE",
                    "userInfo",
                    user,
                    "object",
                    evictionOf("apps", "web", "u-web"))));
    EvictionAdmission.Answer a =
        webhook.review(
            JsonMapper.builder()
                .build()
                .writeValueAsString(review)
                .getBytes(java.nio.charset.StandardCharsets.UTF_8));
    assertThat(a.status()).isEqualTo(200);
    return JsonMapper.builder().build().readTree(a.body()).path("response");
  }

  @Test
  void evictionsPassThePolicyWithTheNodeClaimAndTheWebhookChecksTheirNode() {
    // the policy cannot see the pod of an Eviction: it lets evictd's through, with the claim
    assertAllowed(evictPod(user(EVICTD, "node-a")));
    assertDenied(evictPod(user(EVICTD, null)), "token names no node");
    // the webhook sees the pod: allowed on the own node, denied on another
    assertThat(webhookOnEviction(user(EVICTD, "node-a"), "node-a").path("allowed").asBoolean(false))
        .isTrue();
    JsonNode other = webhookOnEviction(user(EVICTD, "node-a"), "node-b");
    assertThat(other.path("allowed").asBoolean(true)).isFalse();
    assertThat(other.path("status").path("message").asString())
        .isEqualTo(
            "evictd on node node-a may not CREATE pods/eviction apps/web: the pod is on node"
                + " node-b");
    assertThat(webhookOnEviction(user(EVICTD, null), "node-a").path("allowed").asBoolean(true))
        .isFalse();
  }

  @Test
  void aTokenWithoutTheNodeClaimMayDoNothing() {
    Map<String, Object> noClaim = user(EVICTD, null);
    assertDenied(deletePod(noClaim, "node-a"), "the token names no node");
    assertDenied(patchPodStatus(noClaim, "node-a"), "the token names no node");
    assertDenied(taintNode(noClaim, "node-a"), "the token names no node");
    assertDenied(createEvent(noClaim, "Pod", "web"), "the token names no node");
    // no extra at all (a legacy Secret token carries none)
    Map<String, Object> legacy = new LinkedHashMap<>(user(EVICTD, null));
    legacy.remove("extra");
    assertDenied(deletePod(legacy, "node-a"), "the token names no node");
    // an empty claim names no node either
    Map<String, Object> empty = new LinkedHashMap<>(user(EVICTD, null));
    empty.put("extra", Map.of(CLAIM, List.of()));
    assertDenied(deletePod(empty, "node-a"), "the token names no node");
  }

  @Test
  void otherUsersAreLeftToTheirOwnRbac() {
    for (String other :
        List.of(
            "system:serviceaccount:kube-system:evictd-other",
            "system:serviceaccount:default:evictd",
            "system:node:node-a",
            "kubernetes-admin")) {
      assertThat(deletePod(user(other, "node-a"), "node-b").matched()).as(other).isFalse();
      assertThat(taintNode(user(other, null), "node-b").matched()).as(other).isFalse();
    }
    Map<String, Object> anonymous = new LinkedHashMap<>(user(EVICTD, "node-a"));
    anonymous.remove("username");
    assertThat(deletePod(anonymous, "node-b").matched()).isFalse();
  }

  @Test
  void everyOtherWriteIsDenied() {
    Map<String, Object> u = user(EVICTD, "node-a");
    // creating a pod on its own node (a privileged pod would be the node's root)
    assertDenied(
        policy.evaluate(
            request(u, "CREATE", "", "pods", "", "apps", ""), pod("node-a"), null, NO_PARAMS),
        "may not CREATE pods apps/");
    // updating its own node's pod (the main resource: labels, images)
    assertDenied(
        policy.evaluate(
            request(u, "UPDATE", "", "pods", "", "apps", "web"),
            pod("node-a"),
            pod("node-a"),
            NO_PARAMS),
        "may not UPDATE pods apps/web");
    // exec into a pod of its own node
    assertDenied(
        policy.evaluate(
            request(u, "CONNECT", "", "pods", "exec", "apps", "web"),
            Map.of("kind", "PodExecOptions"),
            null,
            NO_PARAMS),
        "may not CONNECT pods/exec apps/web");
    assertDenied(
        policy.evaluate(
            request(u, "CONNECT", "", "nodes", "proxy", "", "node-a"),
            Map.of("kind", "NodeProxyOptions"),
            null,
            NO_PARAMS),
        "may not CONNECT nodes/proxy node-a");
    assertDenied(
        policy.evaluate(
            request(u, "CREATE", "", "secrets", "", "kube-system", ""),
            Map.of("kind", "Secret", "metadata", Map.of("name", "s")),
            null,
            NO_PARAMS),
        "may not CREATE secrets kube-system/");
    assertDenied(
        policy.evaluate(
            request(u, "UPDATE", "", "nodes", "status", "", "node-a"),
            node("node-a", List.of()),
            node("node-a", List.of()),
            NO_PARAMS),
        "may not UPDATE nodes/status node-a");
    assertDenied(
        policy.evaluate(
            request(u, "DELETE", "", "nodes", "", "", "node-a"),
            null,
            node("node-a", List.of()),
            NO_PARAMS),
        "may not DELETE nodes node-a");
    assertDenied(
        policy.evaluate(
            request(u, "UPDATE", "apps", "daemonsets", "", "kube-system", "evictd"),
            Map.of("kind", "DaemonSet", "metadata", Map.of("name", "evictd")),
            Map.of("kind", "DaemonSet", "metadata", Map.of("name", "evictd")),
            NO_PARAMS),
        "may not UPDATE daemonsets kube-system/evictd");
  }

  // ---- taints on its own Node

  @Test
  void setsAndClearsItsTaintsOnItsOwnNode() {
    Map<String, Object> u = user(EVICTD, "node-a");
    assertAllowed(taintNode(u, "node-a"));
    // every evictd taint, on a node without taints
    List<Map<String, Object>> all =
        List.of(
            taint(MEMORY_TAINT, "NoSchedule"),
            taint("evictd.dev/disk-pressure", "NoSchedule"),
            taint("evictd.dev/pid-pressure", "NoSchedule"));
    assertAllowed(updateNode(u, "node-a", node("node-a", List.of()), node("node-a", all)));
    // cleared again, the other taint kept
    assertAllowed(
        updateNode(
            u,
            "node-a",
            node("node-a", List.of(OTHER_TAINT, taint(MEMORY_TAINT, "NoSchedule"))),
            node("node-a", List.of(OTHER_TAINT))));
    // a no-op patch
    assertAllowed(
        updateNode(
            u,
            "node-a",
            node("node-a", List.of(OTHER_TAINT)),
            node("node-a", List.of(OTHER_TAINT))));
  }

  @Test
  void neverAnotherNodesTaints() {
    assertDenied(taintNode(user(EVICTD, "node-a"), "node-b"), "may not UPDATE nodes node-b");
  }

  @Test
  void neverATaintThatIsNotEvictds() {
    Map<String, Object> u = user(EVICTD, "node-a");
    // adding someone else's taint
    assertDenied(
        updateNode(
            u,
            "node-a",
            node("node-a", List.of()),
            node("node-a", List.of(taint("node.kubernetes.io/unschedulable", "NoSchedule")))),
        "may not UPDATE nodes node-a");
    // removing someone else's taint
    assertDenied(
        updateNode(u, "node-a", node("node-a", List.of(OTHER_TAINT)), node("node-a", List.of())),
        "may not UPDATE nodes node-a");
    // changing another taint's effect (NoSchedule -> NoExecute would evict every pod)
    assertDenied(
        updateNode(
            u,
            "node-a",
            node("node-a", List.of(OTHER_TAINT)),
            node("node-a", List.of(taint("example.com/dedicated", "NoExecute")))),
        "may not UPDATE nodes node-a");
    // an evictd taint with another effect, and an unknown evictd.dev key
    assertDenied(
        updateNode(
            u,
            "node-a",
            node("node-a", List.of()),
            node("node-a", List.of(taint(MEMORY_TAINT, "NoExecute")))),
        "may not UPDATE nodes node-a");
    assertDenied(
        updateNode(
            u,
            "node-a",
            node("node-a", List.of()),
            node("node-a", List.of(taint("evictd.dev/everything", "NoSchedule")))),
        "may not UPDATE nodes node-a");
  }

  @Test
  void nothingOfItsNodeButTheTaints() {
    Map<String, Object> u = user(EVICTD, "node-a");
    Map<String, Object> old = node("node-a", List.of());
    Map<String, Object> cordoned = node("node-a", List.of(taint(MEMORY_TAINT, "NoSchedule")));
    @SuppressWarnings("unchecked")
    Map<String, Object> spec = (Map<String, Object>) cordoned.get("spec");
    spec.put("unschedulable", true);
    assertDenied(updateNode(u, "node-a", old, cordoned), "may not UPDATE nodes node-a");

    Map<String, Object> relabelled = node("node-a", List.of(taint(MEMORY_TAINT, "NoSchedule")));
    @SuppressWarnings("unchecked")
    Map<String, Object> meta = (Map<String, Object>) relabelled.get("metadata");
    meta.put("labels", Map.of("kubernetes.io/hostname", "node-a", "node-role", "control-plane"));
    assertDenied(updateNode(u, "node-a", old, relabelled), "may not UPDATE nodes node-a");

    Map<String, Object> annotated = node("node-a", List.of());
    @SuppressWarnings("unchecked")
    Map<String, Object> meta2 = (Map<String, Object>) annotated.get("metadata");
    meta2.put("annotations", Map.of("x", "y"));
    assertDenied(updateNode(u, "node-a", old, annotated), "may not UPDATE nodes node-a");

    // server-maintained fields change on every write and do not count
    Map<String, Object> bumped = node("node-a", List.of(taint(MEMORY_TAINT, "NoSchedule")));
    @SuppressWarnings("unchecked")
    Map<String, Object> meta3 = (Map<String, Object>) bumped.get("metadata");
    meta3.put("resourceVersion", "2");
    assertAllowed(updateNode(u, "node-a", old, bumped));
  }

  // ---- events

  @Test
  void eventsAreLeftToRbacButNotAboutAnotherNode() {
    Map<String, Object> u = user(EVICTD, "node-a");
    assertAllowed(createEvent(u, "Pod", "web"));
    assertAllowed(createEvent(u, "Node", "node-a"));
    assertDenied(createEvent(u, "Node", "node-b"), "may not CREATE events apps/");
  }

  // ---- the manifest against RBAC and the kustomization

  /**
   * Every write rbac.yaml grants has a case here, allowed on the own node and (for node-scoped
   * objects) denied on another: a new grant without a case fails this test.
   */
  @Test
  void everyWriteRbacGrantsIsAllowedOnTheOwnNodeAndDeniedOnAnother() throws Exception {
    Map<String, Object> own = user(EVICTD, "node-a");
    List<String> uncovered = new ArrayList<>();
    for (Access a : Rbac.load(Path.of("docker/rbac.yaml")).grants("evictd")) {
      if (List.of("get", "list", "watch").contains(a.verb())) {
        continue; // reads never reach admission
      }
      String key = a.group() + ":" + a.resource() + ":" + a.verb();
      switch (key) {
        case ":pods:delete" -> {
          assertAllowed(deletePod(own, "node-a"));
          assertDenied(deletePod(own, "node-b"));
        }
        case ":pods/status:patch" -> {
          assertAllowed(patchPodStatus(own, "node-a"));
          assertDenied(patchPodStatus(own, "node-b"));
        }
        case ":pods/eviction:create" -> {
          // the policy lets it through, the webhook decides by the pod's node
          assertAllowed(evictPod(own));
          assertThat(webhookOnEviction(own, "node-a").path("allowed").asBoolean(false)).isTrue();
          assertThat(webhookOnEviction(own, "node-b").path("allowed").asBoolean(true)).isFalse();
        }
        case ":nodes:patch", ":nodes:update" -> {
          assertAllowed(taintNode(own, "node-a"));
          assertDenied(taintNode(own, "node-b"));
        }
        case ":events:create" -> {
          assertAllowed(createEvent(own, "Pod", "web"));
          assertDenied(createEvent(own, "Node", "node-b"));
        }
        case ":events:patch", ":events:update" -> {
          Map<String, Object> event =
              Map.of(
                  "kind",
                  "Event",
                  "involvedObject",
                  Map.of("kind", "Node", "name", "node-a"),
                  "count",
                  2);
          assertAllowed(
              policy.evaluate(
                  request(own, "UPDATE", "", "events", "", "default", "e.1"),
                  event,
                  event,
                  NO_PARAMS));
        }
        default -> uncovered.add(a.toString());
      }
    }
    assertThat(uncovered).as("writes granted by rbac.yaml without an admission case").isEmpty();
  }

  @Test
  void theBindingDeniesAndFindsItsPolicy() throws Exception {
    List<JsonNode> docs = AdmissionPolicy.documents(MANIFEST);
    JsonNode binding =
        docs.stream()
            .filter(d -> "ValidatingAdmissionPolicyBinding".equals(d.path("kind").asString()))
            .findFirst()
            .orElseThrow();
    assertThat(binding.path("apiVersion").asString()).isEqualTo("admissionregistration.k8s.io/v1");
    assertThat(binding.path("spec").path("policyName").asString()).isEqualTo("evictd-own-node");
    assertThat(binding.path("spec").path("validationActions").get(0).asString()).isEqualTo("Deny");
    // no parameters: nothing a ConfigMap could switch (evictions are the webhook's)
    assertThat(binding.path("spec").has("paramRef")).isFalse();
    assertThat(policy.spec().has("paramKind")).isFalse();
    List<String> kinds = docs.stream().map(d -> d.path("kind").asString()).toList();
    assertThat(kinds)
        .containsExactly("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding");

    JsonNode spec = policy.spec();
    assertThat(spec.path("failurePolicy").asString()).isEqualTo("Fail");
    JsonNode rule = spec.path("matchConstraints").path("resourceRules").get(0);
    assertThat(rule.path("operations").valueStream().map(JsonNode::asString).toList())
        .containsExactlyInAnyOrder("CREATE", "UPDATE", "DELETE", "CONNECT");
    assertThat(rule.path("resources").valueStream().map(JsonNode::asString).toList())
        .containsExactly("*/*");
    assertThat(rule.path("apiGroups").get(0).asString()).isEqualTo("*");
  }

  @Test
  void thePolicyNamesTheServiceAccountOfRbacYamlAndIsInTheKustomization() throws Exception {
    JsonNode sa = Rbac.load(Path.of("docker/rbac.yaml")).documents("ServiceAccount").get(0);
    String username =
        "system:serviceaccount:"
            + sa.path("metadata").path("namespace").asString()
            + ":"
            + sa.path("metadata").path("name").asString();
    assertThat(username).isEqualTo(EVICTD);
    assertThat(policy.spec().path("matchConditions").get(0).path("expression").asString())
        .contains("'" + username + "'");
    List<String> resources = new ArrayList<>();
    DockerManifestsTest.at(DockerManifestsTest.docs("kustomization.yaml").get(0), "resources")
        .asList()
        .forEach(r -> resources.add(r.asText()));
    // the policy lets evictions through for the webhook to check: never one without the other
    assertThat(resources).contains("admission-policy.yaml", "admission-webhook.yaml");
  }
}
