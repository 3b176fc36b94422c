package dev.evictd.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.ConfigException;
import dev.evictd.api.EvictionConfig;
import dev.evictd.api.FsLayout;
import dev.evictd.api.Kubelet;
import dev.evictd.k8s.KubeletFeatureGates;
import dev.evictd.k8s.PodResources;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The kubelet's version and feature gates in the configuration loader: what each kubelet accepts,
 * refuses and does with its configuration.
 */
class KubeletVersionsTest {

  static EvictionConfig load(String yaml, String version) {
    YamlNode n = YamlNode.parse("kubelet.yaml", yaml.getBytes(StandardCharsets.UTF_8));
    return KubeletEvictionConfig.from(n, "node", FsLayout.SHARED, version);
  }

  @ParameterizedTest
  @ValueSource(strings = {"1.35", "v1.36.2", "1.37"})
  void aLockedGateSetToTheOtherValueIsRefusedWithTheKubeletsReason(String version) {
    assertThatThrownBy(
            () ->
                load(
                    "featureGates:\n  AllowOverwriteTerminationGracePeriodSeconds: true\n",
                    version))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("kubelet.yaml:2:")
        .hasMessageContaining(
            "cannot set feature gate AllowOverwriteTerminationGracePeriodSeconds to true,"
                + " feature is locked to false");
  }

  @ParameterizedTest
  @ValueSource(strings = {"1.32", "1.33", "v1.34.3"})
  void theDeprecatedGateIsStillSettableUpTo134(String version) {
    EvictionConfig c =
        load("featureGates:\n  AllowOverwriteTerminationGracePeriodSeconds: true\n", version);
    assertThat(c.kubelet().gate(Kubelet.ALLOW_OVERWRITE_TERMINATION_GRACE_PERIOD_SECONDS)).isTrue();
  }

  @Test
  void aGateTheKubeletDoesNotRegisterIsRefusedAsTheKubeletRefusesToStart() {
    assertThatThrownBy(() -> load("featureGates:\n  NoSuchGate: true\n", "1.34"))
        .hasMessageContaining("unrecognized feature gate: NoSuchGate");
    // SidecarContainers: GA and locked on in 1.33, removed in 1.37
    assertThatThrownBy(() -> load("featureGates:\n  SidecarContainers: true\n", "1.37"))
        .hasMessageContaining("unrecognized feature gate: SidecarContainers");
    assertThatThrownBy(() -> load("featureGates:\n  SidecarContainers: false\n", "1.33"))
        .hasMessageContaining("feature is locked to true");
  }

  @Test
  void gateDefaultsFollowTheVersion() {
    Map<String, Boolean> none = Map.of();
    List<String> w = new ArrayList<>();
    assertThat(KubeletFeatureGates.kubelet("1.33", none, w).gate(Kubelet.POD_LEVEL_RESOURCES))
        .isFalse();
    assertThat(KubeletFeatureGates.kubelet("1.34", none, w).gate(Kubelet.POD_LEVEL_RESOURCES))
        .isTrue();
    assertThat(KubeletFeatureGates.kubelet("1.34", none, w).podLevelResources()).isTrue();
    assertThat(
            KubeletFeatureGates.kubelet("1.33", Map.of(Kubelet.POD_LEVEL_RESOURCES, true), w)
                .podLevelResources())
        .isFalse();
    assertThat(w).isEmpty();
  }

  @Test
  void aVersionBeyondTheRangeFollowsTheNewestAndSaysSo() {
    Kubelet k = KubeletFeatureGates.kubelet("v1.40.1", Map.of(), new ArrayList<>());
    assertThat(k.minor()).isEqualTo(KubeletFeatureGates.NEWEST);
    assertThat(k.beyondRange()).isTrue();
    assertThat(k.describe())
        .isEqualTo(
            "kubelet v1.40.1: following 1."
                + KubeletFeatureGates.NEWEST
                + " (newer than the newest evictd knows)");
  }

  @ParameterizedTest
  @ValueSource(strings = {"1.31", "v1.20.3", "2.0", "one.thirty", ""})
  void versionsOutsideTheRangeOrNotVersionsAreRefused(String version) {
    assertThatThrownBy(() -> KubeletFeatureGates.minorOf(version))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(version.isEmpty() ? "is not a kubelet version" : version);
  }

  @Test
  void mergeDefaultEvictionSettingsIsDroppedBy132AndMergedFrom133() {
    String yaml = "evictionHard: {memory.available: 1Gi}\nmergeDefaultEvictionSettings: true\n";
    EvictionConfig old = load(yaml, "1.32");
    assertThat(old.thresholds())
        .extracting(t -> t.signal().key())
        .doesNotContain("nodefs.available");
    assertThat(old.warnings()).anyMatch(w -> w.contains("unknown to kubelet 1.32"));
    assertThat(load(yaml, "1.33").thresholds())
        .extracting(t -> t.signal().key())
        .contains("nodefs.available");
  }

  @Test
  void negativeGraceAndTransitionPeriodsAreAcceptedAsTheKubeletAcceptsThem() {
    EvictionConfig c =
        load("evictionMaxPodGracePeriod: -5\nevictionPressureTransitionPeriod: -1m\n", "1.34");
    assertThat(c.maxPodGracePeriodSeconds()).isEqualTo(-5);
    assertThat(c.pressureTransitionPeriod()).isEqualTo(Duration.ofMinutes(-1));
  }

  @Test
  void rankingRequestsFollowTheKubeletVersion() {
    Pod sidecar =
        new PodBuilder()
            .withNewMetadata()
            .withName("p")
            .endMetadata()
            .withNewSpec()
            .addNewInitContainer()
            .withName("proxy")
            .withRestartPolicy("Always")
            .withNewResources()
            .withRequests(Map.of("memory", new Quantity("150Mi")))
            .endResources()
            .endInitContainer()
            .addNewContainer()
            .withName("app")
            .withNewResources()
            .withRequests(Map.of("memory", new Quantity("100Mi")))
            .endResources()
            .endContainer()
            .endSpec()
            .build();
    List<String> w = new ArrayList<>();
    assertThat(
            PodResources.requestQuantity(
                    sidecar, "memory", KubeletFeatureGates.kubelet("1.33", Map.of(), w))
                .toString())
        .isEqualTo("150Mi");
    assertThat(
            PodResources.requestQuantity(
                    sidecar, "memory", KubeletFeatureGates.kubelet("1.34", Map.of(), w))
                .toString())
        .isEqualTo("250Mi");
  }

  @ParameterizedTest
  @ValueSource(strings = {"1.32", "1.37"})
  void splitFilesystemWithoutSeparateDiskGcDerivesNoContainerFsThresholds(String version) {
    String yaml = "evictionHard: {nodefs.available: 10Gi, containerfs.available: 3Gi}\n";
    YamlNode n = YamlNode.parse("kubelet.yaml", yaml.getBytes(StandardCharsets.UTF_8));
    YamlNode off =
        YamlNode.parse(
            "gates.yaml", "KubeletSeparateDiskGC: false\n".getBytes(StandardCharsets.UTF_8));
    EvictionConfig on = KubeletEvictionConfig.from(n, "node", FsLayout.SPLIT, version);
    assertThat(on.kubelet().firstSyncError(FsLayout.SPLIT)).isNull();
    // gate on: the user's containerfs threshold is replaced by the nodefs one
    assertThat(on.thresholds())
        .extracting(t -> t.signal().key() + " " + t.value())
        .containsExactly("nodefs.available 10Gi", "containerfs.available 10Gi");
    assertThat(on.warnings()).anyMatch(w -> w.contains("containerfs.available is replaced"));

    EvictionConfig c = KubeletEvictionConfig.from(n, "node", FsLayout.SPLIT, version, off);
    // the user's containerfs threshold stays as written, nothing is derived, nothing warned
    assertThat(c.thresholds())
        .extracting(t -> t.signal().key() + " " + t.value())
        .containsExactly("nodefs.available 10Gi", "containerfs.available 3Gi");
    assertThat(c.warnings()).noneMatch(w -> w.contains("replaced"));
    assertThat(c.kubelet().buildsEvictionFunctions(FsLayout.SPLIT)).isFalse();
    assertThat(c.kubelet().buildsEvictionFunctions(FsLayout.DEDICATED)).isTrue();
    assertThat(c.kubelet().firstSyncError(FsLayout.SPLIT))
        .isEqualTo("KubeletSeparateDiskGC is turned off but we still have a split filesystem");
    // other layouts derive as before
    assertThat(KubeletEvictionConfig.from(n, "node", FsLayout.SHARED, version, off).thresholds())
        .extracting(t -> t.signal().key() + " " + t.value())
        .containsExactly("nodefs.available 10Gi", "containerfs.available 10Gi");
  }
}
