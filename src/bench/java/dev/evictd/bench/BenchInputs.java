package dev.evictd.bench;

import static dev.evictd.bench.BenchData.MI;

import io.fabric8.kubernetes.api.model.PodListBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes the captured-data inputs of the process benchmarks to {@code args[0]}: a
 * KubeletConfiguration ({@code kubelet.yaml}: memory.available&lt;1Gi), pod lists ({@code
 * pods-110.json}, {@code pods-1000.json}) and a stats summary of the 110 pods under memory pressure
 * ({@code summary-110.json}) for {@code evictd plan}.
 */
public final class BenchInputs {
  private BenchInputs() {}

  public static void main(String[] args) throws Exception {
    Path dir = Files.createDirectories(Path.of(args[0]));
    JsonMapper json = JsonMapper.builder().build();
    Files.writeString(
        dir.resolve("kubelet.yaml"),
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
            + BenchData.MEMORY_CONFIG);
    for (int n : List.of(110, 1000)) {
      List<BenchData.GenPod> gen = BenchData.generate(n, 42);
      Files.writeString(
          dir.resolve("pods-" + n + ".json"),
          json.writeValueAsString(
              new PodListBuilder()
                  .withApiVersion("v1")
                  .withKind("PodList")
                  .withItems(BenchData.pods(gen, true))
                  .build()));
    }
    Files.writeString(
        dir.resolve("summary-110.json"),
        json.writeValueAsString(BenchData.memory(BenchData.generate(110, 42), 512 * MI, 0, -1)));
  }
}
