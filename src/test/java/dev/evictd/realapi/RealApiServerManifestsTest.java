package dev.evictd.realapi;

import static dev.evictd.testing.FakeKubeApiServer.await;
import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.testing.TestBed;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Every manifest in docker/ as a real kube-apiserver 1.32 takes it (skipped where the test bed is
 * not running): each file with a server-side dry run (the server's own validation: the admission
 * policy's rules and CEL expressions are compiled there), then both kustomizations applied for real
 * and removed again. The kinds of cert-manager and the Prometheus operator get stand-in CRDs that
 * accept any content, so that their files apply: their schemas are those projects' and are not
 * checked here.
 */
@Tag("apiserver")
class RealApiServerManifestsTest {
  private static final java.time.Duration WAIT = java.time.Duration.ofSeconds(10);

  private static final List<String> CRDS =
      List.of(
          "cert-manager.io Issuer issuers",
          "cert-manager.io Certificate certificates",
          "monitoring.coreos.com PodMonitor podmonitors",
          "monitoring.coreos.com PrometheusRule prometheusrules");

  private static String standInCrds() {
    StringBuilder b = new StringBuilder();
    for (String c : CRDS) {
      String[] f = c.split(" ");
      b.append("---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n")
          .append("metadata: {name: ")
          .append(f[2])
          .append('.')
          .append(f[0])
          .append("}\n")
          .append("spec:\n  group: ")
          .append(f[0])
          .append('\n')
          .append("  names: {kind: ")
          .append(f[1])
          .append(", plural: ")
          .append(f[2])
          .append(", listKind: ")
          .append(f[1])
          .append("List}\n")
          .append("  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n")
          .append("    storage: true\n    schema: {openAPIV3Schema: {type: object,")
          .append(" x-kubernetes-preserve-unknown-fields: true}}\n");
    }
    return b.toString();
  }

  private static List<Path> manifests() throws IOException {
    try (Stream<Path> s = Files.walk(Path.of("docker"))) {
      return s.filter(p -> p.toString().endsWith(".yaml"))
          .filter(p -> !p.getFileName().toString().equals("kustomization.yaml"))
          // evictd's own configuration and rules: ConfigMaps made by the kustomization
          .filter(p -> !p.equals(Path.of("docker/agent.yaml")))
          .filter(p -> !p.startsWith(Path.of("docker/rules")))
          .sorted()
          .toList();
    }
  }

  @Test
  void everyManifestIsAcceptedAndBothKustomizationsApply() throws IOException {
    TestBed bed = TestBed.require();
    List<Path> files = manifests();
    assertThat(files)
        .contains(Path.of("docker/admission-policy.yaml"), Path.of("docker/rbac.yaml"));
    bed.kubectl(standInCrds(), "apply", "-f", "-");
    try {
      bed.kubectl(null, "wait", "--for=condition=Established", "--timeout=60s", "crd", "--all");
      for (Path f : files) {
        // kubectl exits non-zero on any object the server refuses
        String out = bed.kubectl(null, "apply", "--dry-run=server", "-f", f.toString());
        assertThat(out).as(f.toString()).contains("(server dry run)");
      }
      bed.kubectl(null, "apply", "-k", "docker/");
      bed.kubectl(null, "apply", "-k", "docker/monitoring/");
      // the policy and its binding both exist: a refused policy left the binding alone before
      assertThat(
              bed.kubectl(
                  null,
                  "get",
                  "validatingadmissionpolicy,validatingadmissionpolicybinding",
                  "evictd-own-node",
                  "-o",
                  "name"))
          .contains("validatingadmissionpolicy.admissionregistration.k8s.io/evictd-own-node")
          .contains(
              "validatingadmissionpolicybinding.admissionregistration.k8s.io/evictd-own-node");
      assertThat(bed.kubectl(null, "get", "-n", "kube-system", "daemonset", "evictd", "-o", "name"))
          .contains("daemonset.apps/evictd");
    } finally {
      bed.kubectl(null, "delete", "--ignore-not-found", "-k", "docker/monitoring/");
      bed.kubectl(null, "delete", "--ignore-not-found", "-k", "docker/");
      bed.kubectl(standInCrds(), "delete", "--ignore-not-found", "-f", "-");
    }
  }

  @Test
  void captureThroughTheKubeletNeedsNodesProxyWhichOnlyTheOptInGrants() {
    TestBed bed = TestBed.require();
    try (var admin = bed.admin()) {
      var api = new dev.evictd.kube.KubeApi(admin, java.time.Duration.ofSeconds(10));
      bed.kubectl(null, "apply", "-f", "docker/rbac.yaml");
      try {
        // the kubelet (1.32) authorizes /stats/* as nodes/stats and /configz as nodes/proxy
        // (the authorizer learns of new bindings through its informers: a moment after the apply)
        assertThat(await(() -> allowed(api, "stats"), WAIT)).isTrue();
        assertThat(allowed(api, "proxy")).isFalse();
        bed.kubectl(null, "apply", "-f", "docker/rbac-kubelet-proxy.yaml");
        assertThat(await(() -> allowed(api, "proxy"), WAIT)).isTrue();
      } finally {
        bed.kubectl(
            null,
            "delete",
            "--ignore-not-found",
            "-f",
            "docker/rbac-kubelet-proxy.yaml",
            "-f",
            "docker/rbac.yaml");
      }
    }
  }

  /** A SubjectAccessReview as a kubelet sends it: may evictd's account get nodes/SUB of a node? */
  private static boolean allowed(dev.evictd.kube.KubeApi api, String subresource) {
    String review =
        "{\"apiVersion\":\"authorization.k8s.io/v1\",\"kind\":\"SubjectAccessReview\","
            + "\"spec\":{\"user\":\"system:serviceaccount:kube-system:evictd\","
            + "\"groups\":[\"system:serviceaccounts\",\"system:serviceaccounts:kube-system\",\"system:authenticated\"],"
            + "\"resourceAttributes\":{\"verb\":\"get\",\"resource\":\"nodes\","
            + "\"subresource\":\""
            + subresource
            + "\",\"name\":\"node-a\"}}}";
    var r = api.post("/apis/authorization.k8s.io/v1/subjectaccessreviews", review);
    assertThat(r.code()).as(r.describe()).isEqualTo(201);
    return Boolean.TRUE.equals(
        api.parse(
                r.body(),
                io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview.class)
            .getStatus()
            .getAllowed());
  }
}
