package dev.evictd.docker;

import static dev.evictd.testing.TestPods.pod;
import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.admission.AdmissionWebhookServer;
import dev.evictd.admission.EvictionAdmission;
import dev.evictd.admission.PodLookup;
import dev.evictd.cli.Main;
import dev.evictd.kube.KubeApi;
import dev.evictd.kube.KubeSettings;
import dev.evictd.testing.AdmissionPolicy;
import dev.evictd.testing.FakeKubeApiServer;
import dev.evictd.testing.Rbac;
import dev.evictd.testing.Rbac.Access;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * docker/admission-webhook.yaml and its certificate, checked statically against the server they run
 * (its path, port, options and defaults), the ServiceAccount of rbac.yaml, and the requests the
 * webhook's pod lookup makes.
 */
class AdmissionWebhookManifestTest {
  static final Path MANIFEST = Path.of("docker/admission-webhook.yaml");
  static final Path CERTIFICATE = Path.of("docker/admission-webhook-certificate.yaml");
  static final String WEBHOOK_ACCOUNT = "evictd-admission-webhook";

  static List<JsonNode> docs;
  static List<JsonNode> certDocs;

  @BeforeAll
  static void load() throws Exception {
    docs = AdmissionPolicy.documents(MANIFEST);
    certDocs = AdmissionPolicy.documents(CERTIFICATE);
  }

  static JsonNode only(List<JsonNode> from, String kind) {
    List<JsonNode> found =
        from.stream().filter(d -> kind.equals(d.path("kind").asString())).toList();
    assertThat(found).as(kind).hasSize(1);
    return found.get(0);
  }

  static JsonNode named(List<JsonNode> from, String kind, String name) {
    return from.stream()
        .filter(d -> kind.equals(d.path("kind").asString()))
        .filter(d -> name.equals(d.path("metadata").path("name").asString()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + kind + " " + name));
  }

  static List<String> strings(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asString()));
    return out;
  }

  static JsonNode webhook() {
    JsonNode config = only(docs, "ValidatingWebhookConfiguration");
    assertThat(config.path("apiVersion").asString()).isEqualTo("admissionregistration.k8s.io/v1");
    assertThat(config.path("webhooks")).hasSize(1);
    return config.path("webhooks").get(0);
  }

  static JsonNode podSpec() {
    return only(docs, "Deployment").path("spec").path("template").path("spec");
  }

  static JsonNode container() {
    JsonNode containers = podSpec().path("containers");
    assertThat(containers).hasSize(1);
    return containers.get(0);
  }

  /** The container's {@code --name=value} arguments. */
  static Map<String, String> flags() {
    Map<String, String> flags = new LinkedHashMap<>();
    for (String a : strings(container().path("args"))) {
      if (a.startsWith("--") && a.contains("=")) {
        flags.put(a.substring(2, a.indexOf('=')), a.substring(a.indexOf('=') + 1));
      }
    }
    return flags;
  }

  static String evictdUser() throws Exception {
    JsonNode sa = Rbac.load(Path.of("docker/rbac.yaml")).documents("ServiceAccount").get(0);
    return "system:serviceaccount:"
        + sa.path("metadata").path("namespace").asString()
        + ":"
        + sa.path("metadata").path("name").asString();
  }

  @Test
  void sendsOnlyCreatePodsEvictionAndFailsClosed() {
    JsonNode w = webhook();
    assertThat(w.path("name").asString()).isEqualTo("evictions.evictd.dev");
    assertThat(strings(w.path("admissionReviewVersions"))).containsExactly("v1");
    assertThat(w.path("sideEffects").asString()).isEqualTo("None");
    assertThat(w.path("failurePolicy").asString()).isEqualTo("Fail");
    assertThat(w.path("rules")).hasSize(1);
    JsonNode rule = w.path("rules").get(0);
    assertThat(strings(rule.path("apiGroups"))).containsExactly("");
    assertThat(strings(rule.path("apiVersions"))).containsExactly("v1");
    assertThat(strings(rule.path("operations"))).containsExactly("CREATE");
    assertThat(strings(rule.path("resources"))).containsExactly("pods/eviction");
    // the API server allows 1 to 30 s; the server's lookup gives up before the API server does
    long timeout = w.path("timeoutSeconds").asLong();
    assertThat(timeout).isBetween(1L, 30L);
    assertThat(Duration.ofSeconds(timeout)).isGreaterThan(PodLookup.DEFAULT_TIMEOUT);
    // and before the server's own bound on answering, which counts the lookup
    assertThat(PodLookup.DEFAULT_TIMEOUT)
        .isLessThan(Duration.ofSeconds(AdmissionWebhookServer.RESPONSE_TIMEOUT_SECONDS));
  }

  @Test
  void matchesTheEvictdServiceAccountOnlyAsTheServerJudgesIt() throws Exception {
    AdmissionPolicy conditions = AdmissionPolicy.webhookMatchConditions(webhook());
    String evictd = evictdUser();
    assertThat(evictd).isEqualTo(EvictionAdmission.DEFAULT_SERVICE_ACCOUNT);
    assertThat(flags()).containsEntry("service-account", evictd);
    assertThat(
            conditions.evaluate(eviction(evictd), Map.of("kind", "Eviction"), null, null).matched())
        .isTrue();
    for (String other :
        List.of(
            "system:serviceaccount:kube-system:evictd-admission-webhook",
            "system:serviceaccount:default:evictd",
            "system:serviceaccount:kube-system:evictd2",
            "system:node:node-a",
            "kubernetes-admin")) {
      assertThat(
              conditions
                  .evaluate(eviction(other), Map.of("kind", "Eviction"), null, null)
                  .matched())
          .as(other)
          .isFalse();
    }
    Map<String, Object> noUser = eviction(evictd);
    noUser.put("userInfo", Map.of("groups", List.of("system:unauthenticated")));
    assertThat(conditions.evaluate(noUser, Map.of("kind", "Eviction"), null, null).matched())
        .isFalse();
  }

  static Map<String, Object> eviction(String username) {
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("uid", "r-1");
    r.put("resource", Map.of("group", "", "version", "v1", "resource", "pods"));
    r.put("subResource", "eviction");
    r.put("namespace", "apps");
    r.put("name", "web");
    r.put("operation", "CREATE");
    r.put(
        "userInfo",
        Map.of(
            "username",
            username,
            "extra",
            Map.of(EvictionAdmission.NODE_CLAIM, List.of("node-a"))));
    return r;
  }

  @Test
  void theServiceReachesTheServerOnItsPathAndPort() {
    JsonNode service = webhook().path("clientConfig").path("service");
    assertThat(webhook().path("clientConfig").has("url")).isFalse();
    JsonNode svc = named(docs, "Service", service.path("name").asString());
    assertThat(svc.path("metadata").path("namespace").asString())
        .isEqualTo(service.path("namespace").asString())
        .isEqualTo("kube-system");
    assertThat(service.path("path").asString()).isEqualTo(AdmissionWebhookServer.PATH);
    int port = service.path("port").asInt(443);
    JsonNode svcPort = null;
    for (JsonNode p : svc.path("spec").path("ports")) {
      if (p.path("port").asInt() == port) {
        svcPort = p;
      }
    }
    assertThat(svcPort).as("the Service has port " + port).isNotNull();
    // the Service's target is the container port the server listens on
    String target = svcPort.path("targetPort").asString();
    JsonNode containerPort = null;
    for (JsonNode p : container().path("ports")) {
      if (target.equals(p.path("name").asString())) {
        containerPort = p;
      }
    }
    assertThat(containerPort).as("container port " + target).isNotNull();
    String address = flags().get("address");
    assertThat(address).isEqualTo("$(POD_IP):" + AdmissionWebhookServer.DEFAULT_PORT);
    assertThat(containerPort.path("containerPort").asInt())
        .isEqualTo(AdmissionWebhookServer.DEFAULT_PORT);
    JsonNode env = container().path("env").get(0);
    assertThat(env.path("name").asString()).isEqualTo("POD_IP");
    assertThat(env.path("valueFrom").path("fieldRef").path("fieldPath").asString())
        .isEqualTo("status.podIP");
    // the Service selects the Deployment's pods
    JsonNode labels =
        only(docs, "Deployment").path("spec").path("template").path("metadata").path("labels");
    svc.path("spec")
        .path("selector")
        .properties()
        .forEach(
            e ->
                assertThat(labels.path(e.getKey()).asString())
                    .as("pod label " + e.getKey())
                    .isEqualTo(e.getValue().asString()));
    // probes over HTTPS on the server's health path
    for (String probe : List.of("readinessProbe", "livenessProbe", "startupProbe")) {
      JsonNode get = container().path(probe).path("httpGet");
      assertThat(get.path("path").asString())
          .as(probe)
          .isEqualTo(AdmissionWebhookServer.HEALTH_PATH);
      assertThat(get.path("scheme").asString()).as(probe).isEqualTo("HTTPS");
      assertThat(get.path("port").asString()).as(probe).isEqualTo(target);
    }
  }

  @Test
  void theContainerRunsTheCommandWithTheMountedCertificate() {
    List<String> args = strings(container().path("args"));
    assertThat(args.get(0)).isEqualTo("admission-webhook");
    Map<String, String> flags = flags();
    // the Secret cert-manager writes is the one mounted, and the files are where the flags say
    String secret =
        named(certDocs, "Certificate", "evictd-admission-webhook")
            .path("spec")
            .path("secretName")
            .asString();
    JsonNode volume = null;
    for (JsonNode v : podSpec().path("volumes")) {
      if (secret.equals(v.path("secret").path("secretName").asString())) {
        volume = v;
      }
    }
    assertThat(volume).as("a volume of Secret " + secret).isNotNull();
    String mountPath = null;
    for (JsonNode m : container().path("volumeMounts")) {
      if (volume.path("name").asString().equals(m.path("name").asString())) {
        mountPath = m.path("mountPath").asString();
        assertThat(m.path("readOnly").asBoolean(false)).isTrue();
      }
    }
    assertThat(mountPath).isNotNull();
    assertThat(flags)
        .containsEntry("tls-cert-file", mountPath + "/tls.crt")
        .containsEntry("tls-key-file", mountPath + "/tls.key");
    // the arguments parse and are valid (address as the kubelet expands it): the command gets as
    // far as reading the certificate, which is not here
    List<String> run = new ArrayList<>();
    for (String a : args) {
      run.add(a.replace("$(POD_IP)", "127.0.0.1"));
    }
    StringWriter err = new StringWriter();
    int code =
        Main.execute(
            run.toArray(new String[0]), new PrintWriter(new StringWriter()), new PrintWriter(err));
    assertThat(code).isEqualTo(Main.BAD_INPUT);
    assertThat(err.toString().strip())
        .isEqualTo("evictd: --tls-cert-file " + mountPath + "/tls.crt: no such file");
  }

  @Test
  void twoReplicasLeastPrivilegedWithTheirOwnAccount() {
    JsonNode deployment = only(docs, "Deployment");
    assertThat(deployment.path("spec").path("replicas").asInt()).isEqualTo(2);
    assertThat(podSpec().path("serviceAccountName").asString()).isEqualTo(WEBHOOK_ACCOUNT);
    assertThat(podSpec().path("securityContext").path("runAsNonRoot").asBoolean(false)).isTrue();
    JsonNode sc = container().path("securityContext");
    assertThat(sc.path("readOnlyRootFilesystem").asBoolean(false)).isTrue();
    assertThat(sc.path("allowPrivilegeEscalation").asBoolean(true)).isFalse();
    assertThat(strings(sc.path("capabilities").path("drop"))).containsExactly("ALL");
    assertThat(sc.path("capabilities").has("add")).isFalse();
    assertThat(container().path("resources").path("limits").path("memory").asString()).isNotBlank();
    // one replica stays through a drain
    JsonNode pdb = only(docs, "PodDisruptionBudget");
    assertThat(pdb.path("spec").path("minAvailable").asInt()).isEqualTo(1);
    assertThat(pdb.path("spec").path("selector").path("matchLabels"))
        .isEqualTo(deployment.path("spec").path("selector").path("matchLabels"));
  }

  @Test
  void theWebhookAccountMayGetPodsAndNothingElse() throws Exception {
    Rbac rbac = Rbac.load(MANIFEST);
    Set<Access> granted = rbac.grants(WEBHOOK_ACCOUNT);
    assertThat(granted).containsExactly(new Access("", "pods", "get"));
    JsonNode sa = only(docs, "ServiceAccount");
    assertThat(sa.path("metadata").path("name").asString()).isEqualTo(WEBHOOK_ACCOUNT);
    JsonNode binding = only(docs, "ClusterRoleBinding");
    assertThat(binding.path("roleRef").path("name").asString()).isEqualTo(WEBHOOK_ACCOUNT);
    assertThat(binding.path("subjects")).hasSize(1);
    assertThat(binding.path("subjects").get(0).path("name").asString()).isEqualTo(WEBHOOK_ACCOUNT);
    assertThat(binding.path("subjects").get(0).path("namespace").asString())
        .isEqualTo("kube-system");
    // not the agents' account, and the agents' role is not the webhook's
    assertThat(WEBHOOK_ACCOUNT).isNotEqualTo("evictd");
    for (JsonNode b : Rbac.load(Path.of("docker/rbac.yaml")).documents("ClusterRoleBinding")) {
      b.path("subjects")
          .forEach(s -> assertThat(s.path("name").asString()).isNotEqualTo(WEBHOOK_ACCOUNT));
    }

    // what the lookup does (found, not found) is exactly what is granted
    Set<Access> used = new LinkedHashSet<>();
    try (FakeKubeApiServer api = FakeKubeApiServer.start();
        KubernetesClient client = api.client(KubeSettings.DEFAULTS)) {
      api.create(pod("apps", "web", "node-a"));
      PodLookup lookup = PodLookup.api(new KubeApi(client, Duration.ofSeconds(5)));
      assertThat(lookup.pod("apps", "web")).isInstanceOf(PodLookup.Found.class);
      assertThat(lookup.pod("apps", "gone")).isInstanceOf(PodLookup.NotFound.class);
      api.requests().forEach(r -> used.add(Rbac.apiServer(r.method(), r.path())));
    }
    assertThat(used).isEqualTo(granted);
  }

  @Test
  void certManagerIssuesAPkcs8CertificateForTheServiceAndInjectsItsCa() throws Exception {
    JsonNode config = only(docs, "ValidatingWebhookConfiguration");
    JsonNode cert = named(certDocs, "Certificate", "evictd-admission-webhook");
    assertThat(
            config
                .path("metadata")
                .path("annotations")
                .path("cert-manager.io/inject-ca-from")
                .asString())
        .isEqualTo(
            cert.path("metadata").path("namespace").asString()
                + "/"
                + cert.path("metadata").path("name").asString());
    JsonNode service = webhook().path("clientConfig").path("service");
    // the name the API server dials: SERVICE.NAMESPACE.svc
    assertThat(strings(cert.path("spec").path("dnsNames")))
        .contains(
            service.path("name").asString() + "." + service.path("namespace").asString() + ".svc");
    assertThat(cert.path("spec").path("privateKey").path("encoding").asString()).isEqualTo("PKCS8");
    assertThat(cert.path("spec").path("isCA").asBoolean(false)).isFalse();
    // the serving certificate's issuer is a CA of its own (the caBundle outlives renewals), which a
    // self-signed issuer makes
    JsonNode caIssuer =
        named(certDocs, "Issuer", cert.path("spec").path("issuerRef").path("name").asString());
    String caSecret = caIssuer.path("spec").path("ca").path("secretName").asString();
    JsonNode ca =
        certDocs.stream()
            .filter(d -> "Certificate".equals(d.path("kind").asString()))
            .filter(d -> caSecret.equals(d.path("spec").path("secretName").asString()))
            .findFirst()
            .orElseThrow();
    assertThat(ca.path("spec").path("isCA").asBoolean(false)).isTrue();
    JsonNode root =
        named(certDocs, "Issuer", ca.path("spec").path("issuerRef").path("name").asString());
    assertThat(root.path("spec").has("selfSigned")).isTrue();
    // every piece in kube-system, and in the kustomization with the webhook
    for (JsonNode d : certDocs) {
      assertThat(d.path("metadata").path("namespace").asString()).isEqualTo("kube-system");
    }
    List<String> resources = new ArrayList<>();
    DockerManifestsTest.at(DockerManifestsTest.docs("kustomization.yaml").get(0), "resources")
        .asList()
        .forEach(r -> resources.add(r.asText()));
    assertThat(resources).contains("admission-webhook.yaml", "admission-webhook-certificate.yaml");
  }
}
