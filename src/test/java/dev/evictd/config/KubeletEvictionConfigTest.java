package dev.evictd.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.ConfigException;
import dev.evictd.api.EvictionConfig;
import dev.evictd.api.FsLayout;
import dev.evictd.api.Signal;
import dev.evictd.api.Threshold;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class KubeletEvictionConfigTest {

  static EvictionConfig load(String yaml) {
    return load(yaml, FsLayout.SHARED);
  }

  static EvictionConfig load(String yaml, FsLayout layout) {
    YamlNode n = YamlNode.parse("kubelet.yaml", yaml.getBytes(StandardCharsets.UTF_8));
    return KubeletEvictionConfig.from(n, "node", layout);
  }

  static List<String> ids(EvictionConfig c) {
    return c.thresholds().stream().map(t -> t.id() + "<" + t.value()).toList();
  }

  @Test
  void absentConfigurationGivesTheKubeletDefaults() {
    EvictionConfig c = KubeletEvictionConfig.from(null, "n", FsLayout.SHARED);
    assertThat(ids(c))
        .containsExactly(
            "hard memory.available<100Mi",
            "hard nodefs.available<10%",
            "hard nodefs.inodesFree<5%",
            "hard imagefs.available<15%",
            "hard imagefs.inodesFree<5%",
            "hard allocatableMemory.available (copy of memory.available)<100Mi",
            "hard containerfs.available<10%",
            "hard containerfs.inodesFree<5%");
    assertThat(c.pressureTransitionPeriod()).isEqualTo(Duration.ofMinutes(5));
    assertThat(c.maxPodGracePeriodSeconds()).isZero();
    assertThat(c.localStorageCapacityIsolation()).isTrue();
  }

  @Test
  void nullEvictionHardGivesDefaultsAndEmptyMapGivesNone() {
    assertThat(load("evictionHard:\n").thresholds()).hasSize(8);
    assertThat(load("evictionHard: {}\n").thresholds()).isEmpty();
  }

  @Test
  void givenEvictionHardDropsUnlistedDefaultsUnlessMerged() {
    assertThat(ids(load("evictionHard: {memory.available: 1Gi}\nenforceNodeAllocatable: []\n")))
        .containsExactly("hard memory.available<1Gi");
    assertThat(
            ids(
                load(
                    "evictionHard: {memory.available: 1Gi}\nmergeDefaultEvictionSettings: true\nenforceNodeAllocatable: []\n")))
        .startsWith("hard memory.available<1Gi", "hard nodefs.available<10%")
        .hasSize(7);
  }

  @Test
  void allocatableCopyFollowsHardMemoryThresholdsWithMinReclaim() {
    EvictionConfig c =
        load(
            "evictionHard: {memory.available: 1Gi}\n"
                + "evictionSoft: {memory.available: 2Gi}\n"
                + "evictionSoftGracePeriod: {memory.available: 1m}\n"
                + "evictionMinimumReclaim: {memory.available: 500Mi}\n");
    assertThat(ids(c))
        .containsExactly(
            "hard memory.available<1Gi",
            "soft memory.available<2Gi",
            "hard allocatableMemory.available (copy of memory.available)<1Gi");
    Threshold copy = c.thresholds().get(2);
    assertThat(copy.signal()).isEqualTo(Signal.ALLOCATABLE_MEMORY_AVAILABLE);
    assertThat(copy.minReclaim().text()).isEqualTo("500Mi");
    assertThat(c.thresholds().get(1).gracePeriod()).isEqualTo(Duration.ofMinutes(1));
  }

  @Test
  void zeroAndHundredPercentDisableAThreshold() {
    assertThat(
            load("evictionHard: {memory.available: \"0%\", nodefs.available: \"100%\"}\n")
                .thresholds())
        .isEmpty();
  }

  @Test
  void percentageIsFloat32OfTheValueOverAHundred() {
    Threshold t = load("evictionHard: {nodefs.available: \"10%\"}\n").thresholds().get(0);
    // 10000Mi * float32(10)/100 -> float32(0.1) = 0.100000001490116...
    assertThat(t.quantity(10000L * 1024 * 1024).value()).isEqualTo(1048576015L);
  }

  @Test
  void yamlIntegersAreAcceptedAsThresholdValues() {
    assertThat(ids(load("evictionHard: {pid.available: 1200}\n")))
        .containsExactly("hard pid.available<1200");
  }

  @Test
  void softThresholdWithZeroGraceIsHard() {
    EvictionConfig c =
        load(
            "evictionHard: {}\nevictionSoft: {memory.available: 1Gi}\nevictionSoftGracePeriod: {memory.available: 0s}\n");
    assertThat(c.thresholds().get(0).isHard()).isTrue();
    assertThat(ids(c)).hasSize(2); // and it gets an allocatable copy, as the kubelet does
  }

  @Test
  void transitionPeriodZeroDefaultsToFiveMinutes() {
    assertThat(load("evictionPressureTransitionPeriod: 0s\n").pressureTransitionPeriod())
        .isEqualTo(Duration.ofMinutes(5));
    assertThat(load("evictionPressureTransitionPeriod: 30s\n").pressureTransitionPeriod())
        .isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void containerFsThresholdsFollowTheLayout() {
    String cfg =
        "evictionHard: {nodefs.available: 10%, imagefs.available: 20%, containerfs.available: 30%}\nenforceNodeAllocatable: []\n";
    EvictionConfig shared = load(cfg, FsLayout.SHARED);
    assertThat(ids(shared))
        .contains("hard containerfs.available<10%")
        .doesNotContain("hard containerfs.available<30%");
    assertThat(shared.warnings())
        .singleElement()
        .asString()
        .contains("containerfs.available", "replaced", "nodefs.available");
    assertThat(ids(load(cfg, FsLayout.DEDICATED))).contains("hard containerfs.available<20%");
    assertThat(ids(load(cfg, FsLayout.SPLIT))).contains("hard containerfs.available<10%");
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "evictionHard: {swap.available: 1Gi}|kubelet.yaml:1: evictionHard[\"swap.available\"]: unsupported eviction signal swap.available",
        "evictionHard: {memory.available: \"-5%\"}|eviction percentage threshold memory.available must be >= 0%: -5%",
        "evictionHard: {memory.available: \"150%\"}|eviction percentage threshold memory.available must be <= 100%: 150%",
        "evictionHard: {memory.available: \"0\"}|eviction threshold memory.available must be positive: 0",
        "evictionHard: {memory.available: \"-1Gi\"}|eviction threshold memory.available must be positive: -1Gi",
        "evictionHard: {memory.available: 1Gb}|evictionHard[\"memory.available\"]: invalid quantity \"1Gb\"",
        "evictionHard: {memory.available: abc%}|invalid percentage \"abc%\"",
        "evictionSoft: {memory.available: 1Gi}|grace period must be specified for the soft eviction threshold memory.available",
        "evictionSoftGracePeriod: {memory.available: \"-1m\"}|invalid eviction grace period specified: -1m, must be a positive value",
        "evictionSoftGracePeriod: {memory.available: 30}|time: missing unit in duration \"30\"",
        "evictionSoftGracePeriod: {memory.available: 2d}|time: unknown unit \"d\" in duration \"2d\"",
        "evictionSoftGracePeriod: {nodefs.bogus: 1m}|unsupported eviction signal nodefs.bogus",
        "evictionMinimumReclaim: {memory.available: \"0%\"}|eviction percentage minimum reclaim memory.available must be positive: 0%",
        "evictionMinimumReclaim: {memory.available: \"-1Mi\"}|negative eviction minimum reclaim specified for memory.available",
        "evictionMinimumReclaim: {foo: 1Mi}|unsupported eviction signal foo",
        "evictionPressureTransitionPeriod: 5 minutes|evictionPressureTransitionPeriod: time: unknown unit \" minutes\" in duration \"5 minutes\"",
        "evictionMaxPodGracePeriod: \"30s\"|evictionMaxPodGracePeriod: expected an integer",
        "enforceNodeAllocatable: [pods, pods]|duplicated enforcements \"pods\"",
        "enforceNodeAllocatable: [everything]|option \"everything\" specified for enforceNodeAllocatable",
        "enforceNodeAllocatable: [none, pods]|may not contain additional enforcements when \"none\" is specified",
        "evictionHrad: {memory.available: 1Gi}|unknown key \"evictionHrad\" (did you mean \"evictionHard\"?)",
        "localStorageCapacityIsolation: maybe|localStorageCapacityIsolation: expected true or false",
        "evictionHard: [memory.available]|evictionHard: expected a mapping",
      })
  void kubeletValidationErrorsNameTheFieldAndValue(String yaml, String message) {
    assertThatThrownBy(() -> load(yaml.replace("\\n", "\n")))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(message)
        .hasMessageStartingWith("kubelet.yaml:");
  }

  @Test
  void otherKubeletFieldsAreIgnored() {
    EvictionConfig c =
        load(
            "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 110\n"
                + "authentication: {anonymous: {enabled: false}}\nevictionHard: {memory.available: 300Mi}\n");
    assertThat(c.thresholds()).hasSize(2);
  }
}
