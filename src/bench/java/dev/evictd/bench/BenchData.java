package dev.evictd.bench;

import dev.evictd.api.EvictionConfig;
import dev.evictd.api.FsLayout;
import dev.evictd.config.KubeletEvictionConfig;
import dev.evictd.config.YamlNode;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Benchmark inputs: a node's pods and stats summaries at any scale, built as the agent receives
 * them (pod objects from the informer, a freshly deserialized summary each sync: equal statistics
 * are equal objects, never the same ones). Seeded: every run sees the same pods.
 */
public final class BenchData {
  static final long MI = 1024L * 1024;
  static final long GI = 1024L * MI;

  private BenchData() {}

  /** One generated pod. */
  public record GenPod(
      int index, String ns, String name, int priority, long requestMi, long usageMi, long diskMi) {
    public String uid() {
      return "uid-" + ns + "-" + name;
    }
  }

  /**
   * {@code n} pods: priorities 0..4000, a memory request on three pods in four, usage 16..783 Mi,
   * disk 1..4096 Mi.
   */
  public static List<GenPod> generate(int n, long seed) {
    Random r = new Random(seed);
    List<GenPod> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      int priority = r.nextInt(5) * 1000;
      long request = r.nextInt(4) == 0 ? 0 : 64 + r.nextInt(512);
      long usage = 16 + r.nextInt(768);
      long disk = 1 + r.nextInt(4096);
      out.add(
          new GenPod(
              i, "ns" + (i % 20), String.format("pod-%05d", i), priority, request, usage, disk));
    }
    return out;
  }

  /** The pod objects, with memory requests when {@code memoryRequests}. */
  public static List<Pod> pods(List<GenPod> gen, boolean memoryRequests) {
    List<Pod> out = new ArrayList<>(gen.size());
    for (GenPod g : gen) {
      ContainerBuilder c = new ContainerBuilder().withName("c").withImage("registry.example/app:1");
      if (memoryRequests && g.requestMi() > 0) {
        c.withNewResources()
            .addToRequests("memory", new Quantity(g.requestMi() + "Mi"))
            .endResources();
      }
      out.add(
          new PodBuilder()
              .withNewMetadata()
              .withNamespace(g.ns())
              .withName(g.name())
              .withUid(g.uid())
              .withCreationTimestamp(
                  String.format("2026-01-01T00:%02d:%02dZ", (g.index() / 60) % 60, g.index() % 60))
              .addToLabels("app", "app-" + (g.index() % 37))
              .endMetadata()
              .withNewSpec()
              .withNodeName("node")
              .withPriority(g.priority())
              .withContainers(c.build())
              .endSpec()
              .withNewStatus()
              .withPhase("Running")
              .endStatus()
              .build());
    }
    return out;
  }

  /**
   * A memory summary: node memory {@code availableBytes} of 64Gi, every pod at its usage plus
   * {@code extraMi}, and pod {@code bumped} (-1: none) one more Mi.
   */
  public static Summary memory(List<GenPod> gen, long availableBytes, long extraMi, int bumped) {
    List<Summary.PodStats> pods = new ArrayList<>(gen.size());
    for (GenPod g : gen) {
      long ws = (g.usageMi() + extraMi + (g.index() == bumped ? 1 : 0)) * MI;
      pods.add(
          new Summary.PodStats(
              new Summary.PodReference(g.name(), g.ns(), g.uid()),
              List.of(
                  new Summary.ContainerStats(
                      "c", new Summary.MemoryStats(null, null, ws, ws, ws), null, null)),
              new Summary.MemoryStats(null, null, ws, ws, ws),
              List.of(),
              null,
              new Summary.ProcessStats(3L)));
    }
    return new Summary(node(availableBytes, 64 * GI - availableBytes, null), pods);
  }

  /**
   * A nodefs summary on a shared filesystem (2000Gi): {@code availableBytes} free, every pod's
   * writable layer at its disk usage plus {@code extraMi}, logs 1Mi.
   */
  public static Summary disk(List<GenPod> gen, long availableBytes, long extraMi) {
    List<Summary.PodStats> pods = new ArrayList<>(gen.size());
    for (GenPod g : gen) {
      long rootfs = (g.diskMi() + extraMi) * MI;
      pods.add(
          new Summary.PodStats(
              new Summary.PodReference(g.name(), g.ns(), g.uid()),
              List.of(
                  new Summary.ContainerStats(
                      "c",
                      new Summary.MemoryStats(null, null, g.usageMi() * MI, g.usageMi() * MI, null),
                      new Summary.FsStats(null, null, null, rootfs, null, null, 100L),
                      new Summary.FsStats(null, null, null, MI, null, null, 2L))),
              new Summary.MemoryStats(null, null, g.usageMi() * MI, g.usageMi() * MI, null),
              List.of(),
              null,
              new Summary.ProcessStats(3L)));
    }
    Summary.FsStats fs =
        new Summary.FsStats(
            null,
            availableBytes,
            2000 * GI,
            2000 * GI - availableBytes,
            1_000_000L,
            2_000_000L,
            1_000_000L);
    return new Summary(node(32 * GI, 32 * GI, fs), pods);
  }

  private static Summary.NodeStats node(long memAvailable, long memWorkingSet, Summary.FsStats fs) {
    return new Summary.NodeStats(
        "node",
        new Summary.MemoryStats(null, memAvailable, memWorkingSet, memWorkingSet, null),
        fs,
        null,
        null,
        null);
  }

  /** A kubelet eviction configuration from KubeletConfiguration YAML. */
  public static EvictionConfig config(String kubeletYaml, FsLayout layout) {
    return KubeletEvictionConfig.from(
        YamlNode.parse("bench", kubeletYaml.getBytes(StandardCharsets.UTF_8)), "node", layout);
  }

  /** memory.available hard threshold at 1Gi (memory pressure below it). */
  public static final String MEMORY_CONFIG =
      "evictionHard: {memory.available: 1Gi}\nenforceNodeAllocatable: []\n";

  /** nodefs.available hard threshold at 10Gi. */
  public static final String DISK_CONFIG =
      "evictionHard: {nodefs.available: 10Gi}\nenforceNodeAllocatable: []\n";
}
