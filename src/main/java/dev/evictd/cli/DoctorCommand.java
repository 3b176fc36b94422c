package dev.evictd.cli;

import dev.evictd.linux.NodeDoctor;
import java.io.PrintWriter;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/** {@code evictd doctor}: checks what evictd needs from this node. Exit 1 when a check fails. */
@Command(
    name = "doctor",
    mixinStandardHelpOptions = true,
    modelTransformer = HostOptions.Mixin.class,
    description =
        "Check this node: cgroup version and memory controller, memcg threshold notifications (on a temporary child cgroup), PSI triggers, paths, host statistics. One line per check: ok, warn or fail.")
final class DoctorCommand implements Callable<Integer> {
  /** Made on first use: picocli creates every command at start-up, and a mapper costs start-up. */
  private static final class Json {
    static final JsonMapper MAPPER =
        JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();
  }

  @Mixin OutputOption.Table output = new OutputOption.Table();

  @Option(
      names = "--pods",
      converter = Converters.InputFile.class,
      paramLabel = "FILE",
      description =
          "Pods of this node (PodList, List or YAML list, e.g. kubectl get pods -o yaml): warn when a running one has no pod cgroup.")
  java.nio.file.Path podsFile;

  @Option(
      names = "--kubelet-version",
      paramLabel = "VERSION",
      description =
          "The node's kubelet version (kubectl get node NODE -o jsonpath='{.status.nodeInfo.kubeletVersion}'): say which"
              + " kubelet evictd follows there.")
  String kubeletVersion;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  /** Which kubelet evictd follows for {@code version}: ok, warn (newer than known), fail. */
  static NodeDoctor.Check kubeletCheck(String version) {
    try {
      dev.evictd.api.Kubelet k =
          dev.evictd.k8s.KubeletFeatureGates.kubelet(
              version, java.util.Map.of(), new java.util.ArrayList<>());
      return new NodeDoctor.Check(
          "kubelet", k.beyondRange() ? NodeDoctor.Status.WARN : NodeDoctor.Status.OK, k.describe());
    } catch (IllegalArgumentException e) {
      return new NodeDoctor.Check("kubelet", NodeDoctor.Status.FAIL, e.getMessage());
    }
  }

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    NodeDoctor doctor = new NodeDoctor(HostOptions.paths(spec), Clock.systemUTC());
    if (podsFile != null) {
      java.util.Map<String, String> running = new java.util.LinkedHashMap<>();
      for (io.fabric8.kubernetes.api.model.Pod p :
          dev.evictd.fixture.CapturedInputs.pods(podsFile)) {
        String phase = p.getStatus() == null ? null : p.getStatus().getPhase();
        if (p.getMetadata() != null
            && p.getMetadata().getUid() != null
            && "Running".equals(phase)) {
          running.put(
              p.getMetadata().getUid(),
              p.getMetadata().getNamespace() + "/" + p.getMetadata().getName());
        }
      }
      doctor = doctor.withPods(running);
    }
    List<NodeDoctor.Check> checks = new java.util.ArrayList<>(doctor.run());
    if (kubeletVersion != null) {
      checks.add(kubeletCheck(kubeletVersion));
    }
    boolean passed = NodeDoctor.passed(checks);
    if (output.json()) {
      ObjectNode root = Json.MAPPER.createObjectNode();
      root.put("passed", passed);
      ArrayNode arr = root.putArray("checks");
      for (NodeDoctor.Check c : checks) {
        arr.addObject()
            .put("name", c.name())
            .put("status", c.status().toString())
            .put("detail", c.detail());
      }
      out.println(Json.MAPPER.writeValueAsString(root));
    } else {
      for (NodeDoctor.Check c : checks) {
        out.printf("%-4s  %-22s %s%n", c.status(), c.name(), c.detail());
      }
    }
    out.flush();
    return passed ? Main.OK : Main.FAILED;
  }
}
