package dev.evictd.testing;

import dev.evictd.kube.KubeClients;
import dev.evictd.kube.KubeSettings;
import dev.evictd.kube.RetryPolicy;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The real kube-apiserver 1.32 of the shared test bed ({@code ../shared/k8s}, its README), started
 * by {@code .ci/run} before the build: {@code K8S_TESTBED} names its work directory, {@code
 * EVICTD_TESTBED_SCRIPTS} its {@code testbed/} scripts. Tests that need it call {@link #require()},
 * which skips them (JUnit assumption, with the reason) when either is missing or the server does
 * not answer.
 *
 * @param work the test bed's work directory (pki/, kubeconfigs/, run/, logs/)
 * @param scripts the directory of up-apiserver.sh, kubectl.sh, set-running.sh...
 */
public record TestBed(Path work, Path scripts) {
  /** The API server's address: the test bed listens on loopback only. */
  public static final String URL = "https://127.0.0.1:6443";

  /** The settings evictd runs with, shorter request timeouts for tests. */
  public static final KubeSettings SETTINGS =
      new KubeSettings(
          Duration.ofSeconds(10),
          Duration.ofSeconds(3),
          new RetryPolicy(3, Duration.ofMillis(100), Duration.ofMillis(400)));

  /** The running test bed, or the test is skipped saying what is missing. */
  public static TestBed require() {
    String work = System.getenv("K8S_TESTBED");
    String scripts = System.getenv("EVICTD_TESTBED_SCRIPTS");
    org.junit.jupiter.api.Assumptions.assumeTrue(
        work != null && scripts != null,
        "no real API server: K8S_TESTBED and EVICTD_TESTBED_SCRIPTS are not set (.ci/run starts the"
            + " test bed of ../shared/k8s and sets them)");
    TestBed bed = new TestBed(Path.of(work), Path.of(scripts));
    org.junit.jupiter.api.Assumptions.assumeTrue(
        Files.isReadable(bed.kubeconfig()) && Files.isExecutable(bed.scripts.resolve("kubectl.sh")),
        "no real API server: " + bed.kubeconfig() + " or " + scripts + "/kubectl.sh missing");
    String kubectl = bed.kubectlVersion();
    org.junit.jupiter.api.Assumptions.assumeTrue(
        kubectl == null, "no kubectl 1.31-1.33 for the real API server: " + kubectl);
    String readyz = bed.readyz();
    org.junit.jupiter.api.Assumptions.assumeTrue(
        "ok".equals(readyz), "the real API server at " + URL + " is not ready: " + readyz);
    return bed;
  }

  /** Null when kubectl.sh has a kubectl it accepts, else what it said. */
  private String kubectlVersion() {
    try {
      kubectl(null, "version", "--client");
      return null;
    } catch (AssertionError e) {
      return e.getMessage();
    }
  }

  /** The admin's kubeconfig (system:masters). */
  public Path kubeconfig() {
    return work.resolve("kubeconfigs/admin.kubeconfig");
  }

  /** The test bed's CA. */
  public Path ca() {
    return work.resolve("pki/ca.crt");
  }

  /** A client with evictd's settings, as the admin. */
  public KubernetesClient admin() {
    try {
      return KubeClients.create(
          Config.fromKubeconfig(null, Files.readString(kubeconfig()), kubeconfig().toString()),
          SETTINGS);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A client with evictd's settings, authenticated by {@code token}. */
  public KubernetesClient as(String token) {
    return KubeClients.create(
        new ConfigBuilder(Config.empty())
            .withMasterUrl(URL)
            .withCaCertFile(ca().toString())
            .withOauthToken(token)
            .build(),
        SETTINGS);
  }

  /** /readyz as the admin: "ok", or what went wrong. */
  public String readyz() {
    try (KubernetesClient c = admin()) {
      return new dev.evictd.kube.KubeApi(c, Duration.ofSeconds(3)).get("/readyz").body().strip();
    } catch (RuntimeException e) {
      return e.toString();
    }
  }

  /**
   * Runs testbed/NAME with {@code args}: its standard output; fails the test on a non-zero exit.
   */
  public String script(String name, String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(scripts.resolve(name).toString());
    cmd.addAll(List.of(args));
    return run(cmd, null);
  }

  /** kubectl.sh with {@code args}, {@code stdin} fed to it (null: none); its standard output. */
  public String kubectl(String stdin, String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(scripts.resolve("kubectl.sh").toString());
    cmd.addAll(List.of(args));
    return run(cmd, stdin);
  }

  private String run(List<String> cmd, String stdin) {
    try {
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
      pb.environment().put("K8S_TESTBED", work.toString());
      Process p = pb.start();
      try (var in = p.getOutputStream()) {
        if (stdin != null) {
          in.write(stdin.getBytes(StandardCharsets.UTF_8));
        }
      }
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(120, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError(String.join(" ", cmd) + ": still running after 120 s");
      }
      if (p.exitValue() != 0) {
        throw new AssertionError(String.join(" ", cmd) + ": exit " + p.exitValue() + ":\n" + out);
      }
      return out;
    } catch (IOException e) {
      throw new AssertionError(String.join(" ", cmd) + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(String.join(" ", cmd) + ": interrupted");
    }
  }

  /**
   * Stops the kube-apiserver alone (etcd keeps running), by the PID the test bed recorded in
   * run/kube-apiserver.pid (the process .ci/run started), and waits until it is gone.
   */
  public void stopApiServer() {
    try {
      String[] pt = Files.readString(work.resolve("run/kube-apiserver.pid")).strip().split("\\s+");
      // the PID is the test bed's process only while its start time (field 22 of
      // /proc/PID/stat) is the one recorded
      String stat = Files.readString(Path.of("/proc", pt[0], "stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      if (!f[19].equals(pt[1])) {
        throw new AssertionError("PID " + pt[0] + " is no longer the test bed's kube-apiserver");
      }
      ProcessHandle p =
          ProcessHandle.of(Long.parseLong(pt[0]))
              .orElseThrow(() -> new AssertionError("kube-apiserver " + pt[0] + " not running"));
      p.destroy();
      p.onExit().get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new AssertionError("stopping kube-apiserver: " + e, e);
    }
  }

  /** Starts the kube-apiserver again (up-apiserver.sh keeps what runs) and waits until ready. */
  public void startApiServer() {
    script("up-apiserver.sh");
  }
}
