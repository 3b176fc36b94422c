package dev.evictd.k8s;

import static dev.evictd.api.Quantity.Format.BINARY_SI;
import static dev.evictd.api.Quantity.Format.DECIMAL_SI;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.evictd.api.ConfigException;
import dev.evictd.api.Quantity;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.dataformat.yaml.YAMLMapper;

class PodResourcesTest {

  private static final YAMLMapper YAML = new YAMLMapper();

  private static Pod pod(String yaml) {
    return YAML.readValue(yaml, Pod.class);
  }

  /**
   * A pod {@code default/web} whose spec is the given YAML (indented by two spaces under {@code
   * spec:}).
   */
  private static Pod spec(String specYaml) {
    return pod(
        "metadata:\n  name: web\n  namespace: default\nspec:\n" + specYaml.stripTrailing() + "\n");
  }

  private static Quantity q(String s) {
    return Quantity.parse(s);
  }

  // -------------------------------------------------------------------------------------------------------------
  // requestQuantity (GetResourceRequestQuantity)
  // -------------------------------------------------------------------------------------------------------------

  @Nested
  class RequestQuantity {

    @Test
    void sumsRegularContainers() {
      Pod p =
          spec(
              """
            containers:
            - name: a
              resources: {requests: {memory: 100Mi, cpu: 100m}}
            - name: b
              resources: {requests: {memory: 200Mi, cpu: "1.5"}}
            - name: c
          """);
      Quantity memory = PodResources.requestQuantity(p, "memory");
      assertThat(memory.toString()).isEqualTo("300Mi");
      assertThat(memory.format()).isEqualTo(BINARY_SI);
      assertThat(PodResources.requestQuantity(p, "cpu").toString()).isEqualTo("1600m");
      assertThat(PodResources.requestQuantity(p, "cpu").milliValue()).isEqualTo(1600);
    }

    private static final String ONE_BARE_CONTAINER =
        """
            containers:
            - name: a
          """;

    @ParameterizedTest
    @ValueSource(strings = {"memory", "storage", "ephemeral-storage"})
    void absentResourceIsZeroInTheResourcesDefaultFormat(String name) {
      Quantity r = PodResources.requestQuantity(spec(ONE_BARE_CONTAINER), name);
      assertThat(r.isZero()).isTrue();
      assertThat(r.format()).as(name).isEqualTo(BINARY_SI);
      assertThat(r.toString()).isEqualTo("0");
    }

    @ParameterizedTest
    @ValueSource(strings = {"cpu", "pods", "nvidia.com/gpu", "hugepages-2Mi"})
    void absentResourceOtherThanBytesIsZeroInDecimalSi(String name) {
      assertThat(PodResources.requestQuantity(spec(ONE_BARE_CONTAINER), name).format())
          .as(name)
          .isEqualTo(DECIMAL_SI);
    }

    @Test
    void zeroStartAdoptsTheFormatOfTheFirstRequest() {
      // Go adds the PodRequests entry to a zero BinarySI quantity: a zero receiver takes the
      // argument's format.
      Pod p =
          spec(
              """
            containers:
            - name: a
              resources: {requests: {memory: 1G, ephemeral-storage: 2e9}}
          """);
      Quantity memory = PodResources.requestQuantity(p, "memory");
      assertThat(memory.format()).isEqualTo(DECIMAL_SI);
      assertThat(memory.toString()).isEqualTo("1G");
      Quantity disk = PodResources.requestQuantity(p, "ephemeral-storage");
      assertThat(disk.format()).isEqualTo(Quantity.Format.DECIMAL_EXPONENT);
      assertThat(disk.toString()).isEqualTo("2e9");
    }

    @Test
    void aggregateKeepsTheFirstContainersFormat() {
      Pod p =
          spec(
              """
            containers:
            - name: a
              resources: {requests: {memory: 1G}}
            - name: b
              resources: {requests: {memory: 1Mi}}
          """);
      Quantity memory = PodResources.requestQuantity(p, "memory");
      assertThat(memory.format()).isEqualTo(DECIMAL_SI);
      assertThat(memory.toString()).isEqualTo("1001048576");
    }

    @Test
    void addingClearsGosCachedSpellingButThePodRequestsMapKeepsIt() {
      Pod p =
          spec(
              """
            containers:
            - name: a
              resources: {requests: {memory: +100Mi, cpu: "1.500"}}
          """);
      assertThat(PodResources.podRequests(p).get("memory").toString()).isEqualTo("+100Mi");
      assertThat(PodResources.podRequests(p).get("cpu").toString()).isEqualTo("1.500");
      assertThat(PodResources.requestQuantity(p, "memory").toString()).isEqualTo("100Mi");
      assertThat(PodResources.requestQuantity(p, "cpu").toString()).isEqualTo("1500m");
    }

    @Test
    void regularInitContainerBiggerThanTheSumWins() {
      Pod p =
          spec(
              """
            initContainers:
            - name: init
              resources: {requests: {memory: 500Mi}}
            containers:
            - name: a
              resources: {requests: {memory: 100Mi}}
            - name: b
              resources: {requests: {memory: 100Mi}}
          """);
      assertThat(PodResources.requestQuantity(p, "memory").toString()).isEqualTo("500Mi");
    }

    @Test
    void regularInitContainerSmallerThanTheSumLoses() {
      Pod p =
          spec(
              """
            initContainers:
            - name: init
              resources: {requests: {memory: 150Mi, cpu: "2"}}
            containers:
            - name: a
              resources: {requests: {memory: 100Mi}}
            - name: b
              resources: {requests: {memory: 100Mi}}
          """);
      assertThat(PodResources.requestQuantity(p, "memory").toString()).isEqualTo("200Mi");
      // only the init container asks for cpu: max(nothing, 2) is 2
      assertThat(PodResources.requestQuantity(p, "cpu").toString()).isEqualTo("2");
    }

    @Test
    void sidecarsAddUpAndCountOnlyForInitContainersAfterThem() {
      Pod p =
          spec(
              """
            initContainers:
            - name: sidecar1
              restartPolicy: Always
              resources: {requests: {memory: 50Mi}}
            - name: init
              resources: {requests: {memory: 200Mi}}
            - name: sidecar2
              restartPolicy: Always
              resources: {requests: {memory: 30Mi}}
            containers:
            - name: a
              resources: {requests: {memory: 100Mi}}
          """);
      // running: 100 + 50 + 30 = 180; init phase peak: 200 + 50 (sidecar1 only) = 250
      assertThat(PodResources.requestQuantity(p, "memory").toString()).isEqualTo("250Mi");
    }

    @Test
    void sidecarsBeforeAnInitContainerAddToIt() {
      Pod p =
          spec(
              """
            initContainers:
            - name: sidecar1
              restartPolicy: Always
              resources: {requests: {memory: 50Mi}}
            - name: sidecar2
              restartPolicy: Always
              resources: {requests: {memory: 30Mi}}
            - name: init
              resources: {requests: {memory: 200Mi}}
            containers:
            - name: a
              resources: {requests: {memory: 100Mi}}
          """);
      assertThat(PodResources.requestQuantity(p, "memory").toString()).isEqualTo("280Mi");
    }

    @Test
    void sidecarsWinWhenTheRunningSumIsBigger() {
      Pod p =
          spec(
              """
            initContainers:
            - name: init
              resources: {requests: {memory: 100Mi}}
            - name: sidecar
              restartPolicy: Always
              resources: {requests: {memory: 1Gi}}
            containers:
            - name: a
              resources: {requests: {memory: 1Gi}}
          """);
      assertThat(PodResources.requestQuantity(p, "memory").toString()).isEqualTo("2Gi");
    }

    @Test
    void initRestartPolicyOtherThanAlwaysIsARegularInitContainer() {
      Pod p =
          spec(
              """
            initContainers:
            - name: init
              restartPolicy: OnFailure
              resources: {requests: {memory: 50Mi}}
            containers:
            - name: a
              resources: {requests: {memory: 100Mi}}
          """);
      assertThat(PodResources.requestQuantity(p, "memory").toString()).isEqualTo("100Mi");
    }

    @Test
    void overheadIsAddedToANonZeroTotal() {
      Pod p =
          spec(
              """
            overhead: {memory: 10Mi, cpu: 250m}
            containers:
            - name: a
              resources: {requests: {memory: 100Mi}}
          """);
      assertThat(PodResources.requestQuantity(p, "memory").toString()).isEqualTo("110Mi");
      // no cpu requests: the total is zero, so the overhead is not added
      assertThat(PodResources.requestQuantity(p, "cpu").isZero()).isTrue();
      assertThat(PodResources.requestQuantity(p, "cpu").format()).isEqualTo(DECIMAL_SI);
      // PodRequests itself excludes overhead here
      assertThat(PodResources.podRequests(p).get("memory").toString()).isEqualTo("100Mi");
    }

    @Test
    void overheadIsNotAddedToAnExplicitZeroRequest() {
      Pod p =
          spec(
              """
            overhead: {memory: 10Mi}
            containers:
            - name: a
              resources: {requests: {memory: "0"}}
          """);
      Quantity memory = PodResources.requestQuantity(p, "memory");
      assertThat(memory.isZero()).isTrue();
      assertThat(memory.format()).isEqualTo(DECIMAL_SI); // adopted from the "0" request
      assertThat(PodResources.podRequests(p)).containsKey("memory");
    }

    @Test
    void podLevelRequestsReplaceContainerLevel() {
      Pod p =
          spec(
              """
            resources:
              requests: {memory: 1Gi, cpu: "2"}
              limits: {memory: 2Gi}
            overhead: {memory: 64Mi}
            containers:
            - name: a
              resources: {requests: {memory: 100Mi, cpu: 100m, ephemeral-storage: 1Gi}}
          """);
      assertThat(PodResources.isPodLevelResourcesSet(p)).isTrue();
      assertThat(PodResources.isPodLevelRequestsSet(p)).isTrue();
      assertThat(PodResources.requestQuantity(p, "memory").toString()).isEqualTo("1088Mi");
      assertThat(PodResources.requestQuantity(p, "cpu").toString()).isEqualTo("2");
      // container-level resources are skipped for every resource once pod-level resources are set
      assertThat(PodResources.requestQuantity(p, "ephemeral-storage").isZero()).isTrue();
      assertThat(PodResources.podRequests(p)).containsOnlyKeys("memory", "cpu");
    }

    @Test
    void podLevelLimitsAloneSkipContainerRequests() {
      Pod p =
          spec(
              """
            resources:
              limits: {cpu: "1"}
            containers:
            - name: a
              resources: {requests: {memory: 100Mi, cpu: 100m}}
          """);
      assertThat(PodResources.isPodLevelResourcesSet(p)).isTrue();
      assertThat(PodResources.isPodLevelRequestsSet(p)).isFalse();
      assertThat(PodResources.requestQuantity(p, "memory").isZero()).isTrue();
      assertThat(PodResources.requestQuantity(p, "cpu").isZero()).isTrue();
      assertThat(PodResources.podRequests(p)).isEmpty();
    }

    @Test
    void unsupportedPodLevelResourcesAreIgnored() {
      Pod p =
          spec(
              """
            resources:
              requests: {ephemeral-storage: 5Gi}
            containers:
            - name: a
              resources: {requests: {memory: 100Mi, ephemeral-storage: 1Gi}}
          """);
      assertThat(PodResources.isPodLevelResourcesSet(p)).isFalse();
      assertThat(PodResources.requestQuantity(p, "memory").toString()).isEqualTo("100Mi");
      assertThat(PodResources.requestQuantity(p, "ephemeral-storage").toString()).isEqualTo("1Gi");
    }

    @Test
    void hugepagesArePodLevelResources() {
      Pod p =
          spec(
              """
            resources:
              requests: {hugepages-2Mi: 4Mi}
            containers:
            - name: a
              resources: {requests: {memory: 100Mi}}
          """);
      assertThat(PodResources.isPodLevelResourcesSet(p)).isTrue();
      assertThat(PodResources.requestQuantity(p, "hugepages-2Mi").toString()).isEqualTo("4Mi");
      assertThat(PodResources.requestQuantity(p, "memory").isZero()).isTrue();
      assertThat(PodResources.isSupportedPodLevelResource("hugepages-1Gi")).isTrue();
      assertThat(PodResources.isSupportedPodLevelResource("ephemeral-storage")).isFalse();
      assertThat(PodResources.isSupportedPodLevelResource(null)).isFalse();
    }

    @Test
    void emptyPodLevelResourcesAreNotSet() {
      Pod p =
          spec(
              """
            resources: {}
            containers:
            - name: a
              resources: {requests: {memory: 100Mi}}
          """);
      assertThat(PodResources.isPodLevelResourcesSet(p)).isFalse();
      assertThat(PodResources.requestQuantity(p, "memory").toString()).isEqualTo("100Mi");
    }

    @Test
    void fractionalAndExoticSpellings() {
      Pod p =
          spec(
              """
            containers:
            - name: a
              resources: {requests: {cpu: 0.5, memory: " 1Gi "}}
            - name: b
              resources: {requests: {cpu: 250m, memory: "1.5Gi"}}
          """);
      assertThat(PodResources.requestQuantity(p, "cpu").toString()).isEqualTo("750m");
      assertThat(PodResources.requestQuantity(p, "memory").toString()).isEqualTo("2560Mi");
    }

    @Test
    void nullEntriesArePresentAndZero() {
      Pod p =
          spec(
              """
            containers:
            - name: a
              resources: {requests: {memory: null}}
          """);
      assertThat(PodResources.podRequests(p)).containsKey("memory");
      assertThat(PodResources.requestQuantity(p, "memory").isZero()).isTrue();
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // podLimits (PodLimits with default options)
  // -------------------------------------------------------------------------------------------------------------

  @Nested
  class PodLimits {

    @Test
    void foundOnlyWhenSomeContainerDeclaresIt() {
      Pod p =
          spec(
              """
            containers:
            - name: a
              resources: {limits: {memory: 100Mi}}
            - name: b
              resources: {limits: {memory: 200Mi, ephemeral-storage: 1Gi}}
          """);
      Map<String, Quantity> limits = PodResources.podLimits(p);
      assertThat(limits).containsOnlyKeys("memory", "ephemeral-storage");
      assertThat(limits.get("memory").toString()).isEqualTo("300Mi");
      assertThat(limits.get("ephemeral-storage").toString()).isEqualTo("1Gi");

      Pod none =
          spec(
              """
            containers:
            - name: a
              resources: {limits: {memory: 100Mi}}
          """);
      assertThat(PodResources.podLimits(none)).doesNotContainKey("ephemeral-storage");
    }

    @Test
    void aContainerWithoutALimitDoesNotMakeItUnfound() {
      // Go sums what is declared: an unlimited container does not make the pod unlimited here
      Pod p =
          spec(
              """
            containers:
            - name: a
              resources: {limits: {ephemeral-storage: 1Gi}}
            - name: b
          """);
      assertThat(PodResources.podLimits(p).get("ephemeral-storage").toString()).isEqualTo("1Gi");
    }

    @Test
    void initContainerLimitsAreFound() {
      Pod p =
          spec(
              """
            initContainers:
            - name: init
              resources: {limits: {ephemeral-storage: 2Gi}}
            containers:
            - name: a
              resources: {limits: {ephemeral-storage: 1Gi}}
          """);
      assertThat(PodResources.podLimits(p).get("ephemeral-storage").toString()).isEqualTo("2Gi");
      Pod onlyInit =
          spec(
              """
            initContainers:
            - name: init
              resources: {limits: {ephemeral-storage: 2Gi}}
            containers:
            - name: a
          """);
      assertThat(PodResources.podLimits(onlyInit)).containsKey("ephemeral-storage");
    }

    @Test
    void sidecarLimitsAddUp() {
      Pod p =
          spec(
              """
            initContainers:
            - name: sidecar
              restartPolicy: Always
              resources: {limits: {ephemeral-storage: 1Gi}}
            containers:
            - name: a
              resources: {limits: {ephemeral-storage: 1Gi}}
          """);
      assertThat(PodResources.podLimits(p).get("ephemeral-storage").toString()).isEqualTo("2Gi");
    }

    @Test
    void zeroLimitIsFoundAndGetsNoOverhead() {
      Pod p =
          spec(
              """
            overhead: {ephemeral-storage: 100Mi, memory: 10Mi, cpu: 100m}
            containers:
            - name: a
              resources: {limits: {ephemeral-storage: "0", memory: 100Mi}}
          """);
      Map<String, Quantity> limits = PodResources.podLimits(p);
      assertThat(limits).containsOnlyKeys("ephemeral-storage", "memory");
      assertThat(limits.get("ephemeral-storage").isZero()).isTrue();
      assertThat(limits.get("memory").toString())
          .isEqualTo("110Mi"); // overhead added to a non-zero limit
    }

    @Test
    void podLevelLimitsOverrideCpuAndMemoryOnly() {
      Pod p =
          spec(
              """
            resources:
              limits: {memory: 1Gi, cpu: "2", ephemeral-storage: 9Gi}
            containers:
            - name: a
              resources: {limits: {memory: 100Mi, ephemeral-storage: 1Gi}}
          """);
      Map<String, Quantity> limits = PodResources.podLimits(p);
      assertThat(limits).containsOnlyKeys("memory", "cpu", "ephemeral-storage");
      assertThat(limits.get("memory").toString()).isEqualTo("1Gi");
      assertThat(limits.get("cpu").toString()).isEqualTo("2");
      assertThat(limits.get("ephemeral-storage").toString()).isEqualTo("1Gi");
    }

    @Test
    void podLevelRequestsAloneKeepContainerLimits() {
      Pod p =
          spec(
              """
            resources:
              requests: {memory: 1Gi}
            containers:
            - name: a
              resources: {limits: {memory: 100Mi}}
          """);
      assertThat(PodResources.podLimits(p).get("memory").toString()).isEqualTo("100Mi");
    }

    @Test
    void singleLimitKeepsItsCachedSpelling() {
      Pod p =
          spec(
              """
            containers:
            - name: a
              resources: {limits: {memory: "+1Gi"}}
          """);
      assertThat(PodResources.podLimits(p).get("memory").toString()).isEqualTo("+1Gi");
    }

    @Test
    void resultIsUnmodifiable() {
      Map<String, Quantity> limits = PodResources.podLimits(spec("  containers: []\n"));
      assertThat(limits).isEmpty();
      assertThatThrownBy(() -> limits.put("x", Quantity.ZERO))
          .isInstanceOf(UnsupportedOperationException.class);
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // containerLimit / containerRequest
  // -------------------------------------------------------------------------------------------------------------

  @Nested
  class ContainerLevel {

    @Test
    void limitIsNullWhenAbsent() {
      Container c = new ContainerBuilder().withName("a").build();
      assertThat(PodResources.containerLimit(c, "memory")).isNull();
      assertThat(PodResources.containerLimit(null, "memory")).isNull();
      Container d =
          new ContainerBuilder()
              .withName("d")
              .withNewResources()
              .addToLimits("memory", new io.fabric8.kubernetes.api.model.Quantity("1Gi"))
              .endResources()
              .build();
      assertThat(PodResources.containerLimit(d, "memory").toString()).isEqualTo("1Gi");
      assertThat(PodResources.containerLimit(d, "cpu")).isNull();
    }

    @Test
    void requestIsGosZeroWhenAbsent() {
      Container c = new ContainerBuilder().withName("a").build();
      assertThat(PodResources.containerRequest(c, "memory")).isSameAs(Quantity.ZERO);
      assertThat(PodResources.containerRequest(c, "memory").toString()).isEqualTo("0");
      Container d =
          new ContainerBuilder()
              .withName("d")
              .withNewResources()
              .addToRequests("cpu", new io.fabric8.kubernetes.api.model.Quantity("250", "m"))
              .endResources()
              .build();
      assertThat(PodResources.containerRequest(d, "cpu").toString()).isEqualTo("250m");
    }

    @Test
    void malformedNamesTheContainer() {
      Container d =
          new ContainerBuilder()
              .withName("nginx")
              .withNewResources()
              .addToLimits("memory", new io.fabric8.kubernetes.api.model.Quantity("12X"))
              .endResources()
              .build();
      assertThatThrownBy(() -> PodResources.containerLimit(d, "memory"))
          .isInstanceOf(ConfigException.class)
          .hasMessageStartingWith(
              "container nginx: resources.limits.memory: not a quantity: \"12X\"");
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // Malformed quantities and null-safety
  // -------------------------------------------------------------------------------------------------------------

  @Nested
  class Errors {

    @Test
    void malformedContainerRequest() {
      Pod p =
          spec(
              """
            containers:
            - name: nginx
              resources: {requests: {memory: 12X}}
          """);
      assertThatThrownBy(() -> PodResources.requestQuantity(p, "memory"))
          .isInstanceOf(ConfigException.class)
          .hasMessage(
              "pod default/web: container nginx: resources.requests.memory: not a quantity: \"12X\" ("
                  + Quantity.ERR_FORMAT_WRONG
                  + ")")
          .hasCauseInstanceOf(IllegalArgumentException.class);
      // Go cannot even decode such a pod, so any function reading the requests refuses it
      assertThatThrownBy(() -> PodResources.requestQuantity(p, "cpu"))
          .isInstanceOf(ConfigException.class);
    }

    @Test
    void malformedInitContainerLimit() {
      Pod p =
          spec(
              """
            initContainers:
            - name: setup
              resources: {limits: {cpu: 1ki}}
            containers:
            - name: nginx
          """);
      assertThatThrownBy(() -> PodResources.podLimits(p))
          .isInstanceOf(ConfigException.class)
          .hasMessage(
              "pod default/web: init container setup: resources.limits.cpu: not a quantity: \"1ki\" ("
                  + Quantity.ERR_SUFFIX
                  + ")");
    }

    @Test
    void malformedOverheadAndPodLevel() {
      Pod overhead =
          spec(
              """
            overhead: {memory: "1.2.3"}
            containers:
            - name: nginx
              resources: {requests: {memory: 1Gi}}
          """);
      assertThatThrownBy(() -> PodResources.requestQuantity(overhead, "memory"))
          .hasMessageStartingWith("pod default/web: overhead.memory: not a quantity: \"1.2.3\"");
      Pod podLevel =
          spec(
              """
            resources: {requests: {memory: abc}}
            containers:
            - name: nginx
          """);
      assertThatThrownBy(() -> PodResources.requestQuantity(podLevel, "memory"))
          .hasMessageStartingWith(
              "pod default/web: resources.requests.memory: not a quantity: \"abc\"");
      assertThatThrownBy(() -> PodResources.qosClass(podLevel)).isInstanceOf(ConfigException.class);
    }

    @Test
    void emptyQuantityIsMalformed() {
      // fabric8's own deserializer refuses "", but a Quantity object can still carry an empty or
      // null amount
      Container c =
          new ContainerBuilder()
              .withName("nginx")
              .withNewResources()
              .addToLimits("memory", new io.fabric8.kubernetes.api.model.Quantity(null, null))
              .endResources()
              .build();
      Pod p =
          new PodBuilder()
              .withNewMetadata()
              .withName("web")
              .withNamespace("default")
              .endMetadata()
              .withNewSpec()
              .withContainers(c)
              .endSpec()
              .build();
      assertThatThrownBy(() -> PodResources.podLimits(p))
          .hasMessageStartingWith(
              "pod default/web: container nginx: resources.limits.memory: not a quantity: \"\"");
    }

    @Test
    void podWithoutNamespaceIsInTheDefaultNamespace() {
      Pod p =
          pod(
              """
          metadata: {name: solo}
          spec:
            containers:
            - name: c
              resources: {requests: {memory: "1 Gi"}}
          """);
      assertThatThrownBy(() -> PodResources.requestQuantity(p, "memory"))
          .hasMessageStartingWith(
              "pod default/solo: container c: resources.requests.memory: not a quantity: \"1 Gi\"");
    }

    @Test
    void nullSafeEverywhere() {
      Pod empty = new Pod();
      Pod noContainers = new PodBuilder().withNewSpec().endSpec().build();
      PodSpec nullLists = new PodSpec();
      nullLists.setContainers(null);
      nullLists.setInitContainers(null);
      nullLists.setVolumes(null);
      nullLists.setOverhead(null);
      Pod nulls = new PodBuilder().withSpec(nullLists).build();
      Container bare = new Container();
      bare.setResources(null);
      Pod bareContainer = new PodBuilder().withNewSpec().withContainers(bare).endSpec().build();
      Container nullMaps = new ContainerBuilder().withNewResources().endResources().build();
      nullMaps.getResources().setRequests(null);
      nullMaps.getResources().setLimits(null);
      Pod nullMapsPod =
          new PodBuilder()
              .withNewSpec()
              .withContainers(nullMaps)
              .withInitContainers(nullMaps)
              .endSpec()
              .build();
      for (Pod p : new Pod[] {null, empty, noContainers, nulls, bareContainer, nullMapsPod}) {
        assertThat(PodResources.requestQuantity(p, "memory").isZero()).isTrue();
        assertThat(PodResources.podRequests(p)).isEmpty();
        assertThat(PodResources.podLimits(p)).isEmpty();
        assertThat(PodResources.qosClass(p)).isEqualTo(PodResources.BEST_EFFORT);
        assertThat(PodResources.podQosClass(p)).isEqualTo(PodResources.BEST_EFFORT);
        assertThat(PodResources.isStatic(p)).isFalse();
        assertThat(PodResources.isMirror(p)).isFalse();
        assertThat(PodResources.isCritical(p)).isFalse();
        assertThat(PodResources.priority(p)).isZero();
        assertThat(PodResources.localVolumeNames(p)).isEmpty();
        assertThat(PodResources.isPodLevelResourcesSet(p)).isFalse();
      }
      assertThat(PodResources.containerRequest(bare, "memory").isZero()).isTrue();
      assertThat(PodResources.requestQuantity(spec("  containers: [{name: a}]\n"), null).isZero())
          .isTrue();
      assertThat(PodResources.containerLimit(bare, null)).isNull();
      assertThat(PodResources.containerLimit(nullMaps, "memory")).isNull();
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // QoS
  // -------------------------------------------------------------------------------------------------------------

  @Nested
  class Qos {

    private String qos(String specYaml) {
      return PodResources.qosClass(spec(specYaml));
    }

    /** The cases of ComputePodQOS: what each shows, the pod's spec, its class. */
    static Stream<Arguments> qosTable() {
      return Stream.of(
          arguments(
              "bestEffort",
              """
            containers:
            - name: a
            - name: b
              resources: {}
          """,
              PodResources.BEST_EFFORT),
          arguments(
              "bestEffort: only cpu and memory are QoS compute resources",
              """
            containers:
            - name: a
              resources: {requests: {ephemeral-storage: 1Gi}, limits: {nvidia.com/gpu: "1"}}
          """,
              PodResources.BEST_EFFORT),
          arguments(
              "bestEffort: explicit zero requests",
              """
            containers:
            - name: a
              resources: {requests: {cpu: "0", memory: "0"}}
          """,
              PodResources.BEST_EFFORT),
          arguments("bestEffort: no containers", "  containers: []\n", PodResources.BEST_EFFORT),
          arguments(
              "guaranteed",
              """
            initContainers:
            - name: init
              resources: {requests: {cpu: "1", memory: 1Gi}, limits: {cpu: 1000m, memory: "1073741824"}}
            containers:
            - name: a
              resources: {requests: {cpu: 500m, memory: 1Gi}, limits: {cpu: "0.5", memory: 1Gi}}
            - name: b
              resources:
                requests: {cpu: "2", memory: 2Gi, ephemeral-storage: 1Gi}
                limits: {cpu: "2", memory: 2Gi}
          """,
              PodResources.GUARANTEED),
          arguments(
              "burstable: requests only",
              """
            containers:
            - name: a
              resources: {requests: {cpu: 100m, memory: 100Mi}}
          """,
              PodResources.BURSTABLE),
          arguments(
              "burstable: requests below limits",
              """
            containers:
            - name: a
              resources: {requests: {cpu: 100m, memory: 100Mi}, limits: {cpu: 200m, memory: 100Mi}}
          """,
              PodResources.BURSTABLE),
          arguments(
              "burstable: cpu only, even when request equals limit: memory is best effort, cpu is guaranteed",
              """
            containers:
            - name: a
              resources: {requests: {cpu: "1"}, limits: {cpu: "1"}}
          """,
              PodResources.BURSTABLE),
          arguments(
              "burstable: one guaranteed container and one best-effort container",
              """
            containers:
            - name: a
              resources: {requests: {cpu: "1", memory: 1Gi}, limits: {cpu: "1", memory: 1Gi}}
            - name: b
          """,
              PodResources.BURSTABLE),
          arguments(
              "burstable: a best-effort init container spoils a guaranteed pod",
              """
            initContainers:
            - name: init
            containers:
            - name: a
              resources: {requests: {cpu: "1", memory: 1Gi}, limits: {cpu: "1", memory: 1Gi}}
          """,
              PodResources.BURSTABLE),
          arguments(
              "burstable: a zero limit does not match a non-zero request",
              """
            containers:
            - name: a
              resources: {requests: {cpu: "1", memory: 1Gi}, limits: {cpu: "0", memory: 1Gi}}
          """,
              PodResources.BURSTABLE),
          arguments(
              "limitsOnlyAreBurstableUntilDefaultingCopiesThemToRequests: ComputePodQOS does not default: a raw pod with limits only is Burstable",
              """
            containers:
            - name: a
              resources: {limits: {cpu: "1", memory: 1Gi}}
          """,
              PodResources.BURSTABLE),
          arguments(
              "limitsOnlyAreBurstableUntilDefaultingCopiesThemToRequests: the API server defaults requests to limits, and the defaulted pod is Guaranteed",
              """
            containers:
            - name: a
              resources: {limits: {cpu: "1", memory: 1Gi}, requests: {cpu: "1", memory: 1Gi}}
          """,
              PodResources.GUARANTEED),
          arguments(
              "podLevelResourcesDecide",
              """
            resources:
              requests: {cpu: "1", memory: 1Gi}
              limits: {cpu: "1", memory: 1Gi}
            containers:
            - name: a
              resources: {requests: {cpu: 100m}}
          """,
              PodResources.GUARANTEED),
          arguments(
              "podLevelResourcesDecide",
              """
            resources:
              requests: {cpu: "1", memory: 1Gi}
            containers:
            - name: a
              resources: {requests: {cpu: "1", memory: 1Gi}, limits: {cpu: "1", memory: 1Gi}}
          """,
              PodResources.BURSTABLE),
          arguments(
              "podLevelResourcesDecide: present but empty pod-level resources make the pod BestEffort whatever its containers say",
              """
            resources: {}
            containers:
            - name: a
              resources: {requests: {cpu: "1", memory: 1Gi}, limits: {cpu: "1", memory: 1Gi}}
          """,
              PodResources.BEST_EFFORT));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("qosTable")
    void qosClass(String what, String specYaml, String expected) {
      assertThat(qos(specYaml)).as(what).isEqualTo(expected);
    }

    @Test
    void podQosClassPrefersStatus() {
      Pod p =
          pod(
              """
          spec:
            containers:
            - name: a
          status: {qosClass: Guaranteed}
          """);
      assertThat(PodResources.qosClass(p)).isEqualTo(PodResources.BEST_EFFORT);
      assertThat(PodResources.podQosClass(p)).isEqualTo(PodResources.GUARANTEED);
      Pod noStatusClass =
          pod(
              """
          spec:
            containers:
            - name: a
              resources: {requests: {cpu: 1m}}
          status: {qosClass: ""}
          """);
      assertThat(PodResources.podQosClass(noStatusClass)).isEqualTo(PodResources.BURSTABLE);
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // Static / mirror / critical / priority
  // -------------------------------------------------------------------------------------------------------------

  @Nested
  class Criticality {

    private Pod annotated(Map<String, String> annotations, Integer priority) {
      return new PodBuilder()
          .withNewMetadata()
          .withName("p")
          .withAnnotations(annotations)
          .endMetadata()
          .withNewSpec()
          .withPriority(priority)
          .endSpec()
          .build();
    }

    static Stream<Arguments> staticTable() {
      return Stream.of(
          arguments("kubernetes.io/config.source", "file", true),
          arguments("kubernetes.io/config.source", "http", true),
          arguments("kubernetes.io/config.source", "", true),
          arguments("kubernetes.io/config.source", "api", false),
          arguments(null, null, false), // no annotation
          arguments("kubernetes.io/config.source", null, true));
    }

    @ParameterizedTest
    @MethodSource("staticTable")
    void staticPods(String key, String value, boolean expected) {
      assertThat(PodResources.isStatic(annotated(annotation(key, value), null)))
          .isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource({
      "kubernetes.io/config.mirror, abc, true",
      "kubernetes.io/config.mirror, '', true",
      "kubernetes.io/config.source, api, false",
    })
    void mirrorPods(String key, String value, boolean expected) {
      assertThat(PodResources.isMirror(annotated(Map.of(key, value), null))).isEqualTo(expected);
    }

    static Stream<Arguments> criticalTable() {
      return Stream.of(
          arguments(Map.of(), 2_000_000_000, true),
          arguments(Map.of(), 2_000_001_000, true),
          arguments(Map.of(), 1_999_999_999, false),
          arguments(Map.of(), null, false),
          arguments(Map.of(), -5, false),
          arguments(Map.of("kubernetes.io/config.source", "file"), 0, true),
          arguments(Map.of("kubernetes.io/config.mirror", "x"), -10, true),
          arguments(Map.of("kubernetes.io/config.source", "api"), 10, false));
    }

    @ParameterizedTest
    @MethodSource("criticalTable")
    void criticalPods(Map<String, String> annotations, Integer priority, boolean expected) {
      assertThat(PodResources.isCritical(annotated(annotations, priority))).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource({", 0", "1000, 1000", "-7, -7", "2000001000, 2000001000"})
    void priority(Integer priority, int expected) {
      assertThat(PodResources.priority(annotated(Map.of(), priority))).isEqualTo(expected);
    }

    /** One annotation (its value may be null), or none when the key is null. */
    private static Map<String, String> annotation(String key, String value) {
      Map<String, String> m = new HashMap<>();
      if (key != null) {
        m.put(key, value);
      }
      return m;
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // Local volumes
  // -------------------------------------------------------------------------------------------------------------

  @Test
  void localVolumeNamesFollowIsLocalEphemeralVolume() {
    Pod p =
        spec(
            """
          containers:
          - name: a
          volumes:
          - name: host
            hostPath: {path: /var/log}
          - name: scratch
            emptyDir: {}
          - name: scratch-default
            emptyDir: {medium: ""}
          - name: tmpfs
            emptyDir: {medium: Memory}
          - name: huge
            emptyDir: {medium: HugePages}
          - name: huge-2mi
            emptyDir: {medium: HugePages-2Mi}
          - name: cm
            configMap: {name: settings}
          - name: git
            gitRepo: {repository: "https://example.invalid/r.git"}
          - name: secret
            secret: {secretName: s}
          - name: downward
            downwardAPI: {items: []}
          - name: projected
            projected: {sources: []}
          - name: claim
            persistentVolumeClaim: {claimName: data}
          - name: generic-ephemeral
            ephemeral: {volumeClaimTemplate: {spec: {}}}
          - name: csi
            csi: {driver: example.invalid}
          - name: image
            image: {reference: busybox}
        """);
    assertThat(PodResources.localVolumeNames(p))
        .containsExactly("host", "scratch", "scratch-default", "cm", "git");
    assertThatThrownBy(() -> PodResources.localVolumeNames(p).add("x"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThat(PodResources.isLocalEphemeralVolume(null)).isFalse();
  }
}
