package dev.evictd.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class EvictionDecisionTest {
  private static EvictionDecision withAnnotations(Map<String, String> annotations) {
    return new EvictionDecision(
        new PodRef("ns", "p", "uid-1"),
        EvictionDecision.Kind.PRESSURE,
        "memory.available",
        0,
        "The node was low on resource: memory.",
        annotations,
        null,
        List.of("r"));
  }

  @Test
  void annotationsIterateInKeyOrderWhateverOrderTheyCameIn() {
    Map<String, String> given = new LinkedHashMap<>();
    given.put("starved_resource", "memory");
    given.put("offending_containers_usage", "10Mi");
    given.put("offending_containers", "c");
    given.put("a.example/z", "1");
    EvictionDecision d = withAnnotations(given);
    assertThat(List.copyOf(d.annotations().keySet()))
        .containsExactly(
            "a.example/z",
            "offending_containers",
            "offending_containers_usage",
            "starved_resource");
    assertThat(d.annotations()).isEqualTo(new HashMap<>(given));
    assertThat(d).isEqualTo(withAnnotations(new HashMap<>(given)));
  }

  @Test
  void annotationsAreACopyThatCannotBeChanged() {
    Map<String, String> given = new HashMap<>(Map.of("starved_resource", "memory"));
    EvictionDecision d = withAnnotations(given);
    given.put("late", "x");
    assertThat(d.annotations()).containsOnlyKeys("starved_resource");
    assertThatThrownBy(() -> d.annotations().put("k", "v"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThat(withAnnotations(null).annotations()).isEmpty();
  }

  @Test
  void aNullAnnotationValueIsRefusedAsBefore() {
    Map<String, String> given = new HashMap<>();
    given.put("starved_resource", null);
    assertThatThrownBy(() -> withAnnotations(given)).isInstanceOf(NullPointerException.class);
  }
}
