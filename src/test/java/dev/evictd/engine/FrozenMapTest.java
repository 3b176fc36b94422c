package dev.evictd.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import org.junit.jupiter.api.Test;

/** The frozen pod's small maps read, compare and print as the ordered maps they replace. */
class FrozenMapTest {
  private static LinkedHashMap<String, String> sample() {
    LinkedHashMap<String, String> m = new LinkedHashMap<>();
    m.put("zone", "b");
    m.put("app", "web");
    m.put(null, "no key");
    m.put("empty", null);
    return m;
  }

  @Test
  void readsComparesAndPrintsAsTheMapItWasMadeFrom() {
    LinkedHashMap<String, String> original = sample();
    Map<String, String> frozen = FrozenMap.of(original);

    assertThat(frozen).isEqualTo(original).hasSameHashCodeAs(original);
    assertThat(original).isEqualTo(frozen);
    assertThat(frozen).hasToString(original.toString());
    assertThat(frozen.size()).isEqualTo(4);
    assertThat(new ArrayList<>(frozen.keySet())).isEqualTo(new ArrayList<>(original.keySet()));
    assertThat(new ArrayList<>(frozen.values())).isEqualTo(new ArrayList<>(original.values()));
    assertThat(new ArrayList<>(frozen.entrySet())).isEqualTo(new ArrayList<>(original.entrySet()));
    assertThat(frozen.get("app")).isEqualTo("web");
    assertThat(frozen.get(null)).isEqualTo("no key");
    assertThat(frozen.get("missing")).isNull();
    assertThat(frozen.containsKey("empty")).isTrue();
    assertThat(frozen.get("empty")).isNull();
    assertThat(frozen.getOrDefault("empty", "d")).isNull();
    assertThat(frozen.getOrDefault("missing", "d")).isEqualTo("d");
    assertThat(frozen.containsValue("b")).isTrue();
    assertThat(frozen.containsValue(null)).isTrue();
    assertThat(frozen.containsValue("c")).isFalse();
    assertThat(frozen.keySet().contains("zone")).isTrue();
    List<String> seen = new ArrayList<>();
    frozen.forEach((k, v) -> seen.add(k + "=" + v));
    assertThat(seen).containsExactly("zone=b", "app=web", "null=no key", "empty=null");
    assertThat(FrozenMap.of(Map.of())).isEmpty();
    assertThat(FrozenMap.of(Map.of())).isEqualTo(Map.of());
  }

  @Test
  void cannotBeChangedThroughAnyMethodOrView() {
    Map<String, String> frozen = FrozenMap.of(sample());
    List<Runnable> changes =
        List.of(
            () -> frozen.put("a", "b"),
            () -> frozen.remove("app"),
            () -> frozen.remove("app", "web"),
            () -> frozen.putAll(Map.of("a", "b")),
            frozen::clear,
            () -> frozen.replaceAll((k, v) -> v),
            () -> frozen.putIfAbsent("a", "b"),
            () -> frozen.replace("app", "x"),
            () -> frozen.replace("app", "web", "x"),
            () -> frozen.computeIfAbsent("a", k -> "b"),
            () -> frozen.computeIfPresent("app", (k, v) -> "b"),
            () -> frozen.compute("app", (k, v) -> "b"),
            () -> frozen.merge("app", "b", (a, b) -> a + b),
            () -> frozen.keySet().remove("app"),
            () -> frozen.values().clear(),
            () -> frozen.entrySet().iterator().next().setValue("x"),
            () -> {
              Iterator<String> it = frozen.keySet().iterator();
              it.next();
              it.remove();
            });
    for (Runnable change : changes) {
      assertThatThrownBy(change::run).isInstanceOf(UnsupportedOperationException.class);
    }
    assertThat(frozen).isEqualTo(sample());
  }

  @Test
  void iteratesOnlyOverItsEntriesAndRefusesAMapTooLargeToScan() {
    Iterator<String> it = FrozenMap.of(Map.of("a", "b")).keySet().iterator();
    assertThat(it.next()).isEqualTo("a");
    assertThat(it.hasNext()).isFalse();
    assertThatThrownBy(it::next).isInstanceOf(NoSuchElementException.class);

    Map<String, String> large = new LinkedHashMap<>();
    for (int i = 0; i <= FrozenMap.MAX; i++) {
      large.put("k" + i, "v");
    }
    assertThatThrownBy(() -> FrozenMap.of(large)).isInstanceOf(IllegalArgumentException.class);
  }
}
