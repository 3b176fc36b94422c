package dev.evictd.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.invoke.CallSite;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.RecordComponent;
import java.lang.runtime.ObjectMethods;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The records whose {@code toString}, {@code equals} or {@code hashCode} are written out (to keep
 * their bootstrap off start-up) behave exactly as the implicit methods would: each is compared with
 * the method {@link ObjectMethods} makes for the same record, on instances that differ in one
 * component at a time.
 */
class RecordMethodsTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final Instant T1 = Instant.parse("2026-01-01T00:00:01.5Z");
  private static final Quantity GI = Quantity.parse("1Gi");
  private static final Quantity MI = Quantity.parse("100Mi");
  private static final ThresholdValue V1 = ThresholdValue.ofQuantity(GI, "1Gi");
  private static final ThresholdValue V2 = ThresholdValue.ofFraction(0.1f, "10%");
  private static final Threshold HARD =
      new Threshold(
          "hard memory.available",
          Signal.MEMORY_AVAILABLE,
          V1,
          Duration.ZERO,
          null,
          0,
          "evictionHard",
          false);
  private static final Threshold SOFT =
      new Threshold(
          "soft nodefs.available",
          Signal.NODEFS_AVAILABLE,
          V2,
          Duration.ofMinutes(1),
          V1,
          3,
          "evictionSoft",
          true);

  @Test
  void toStringIsTheImplicitOne() throws Throwable {
    List<Record> all =
        List.of(
            new ActionableThreshold(HARD),
            new ActionableThreshold(null),
            new ThresholdActive(SOFT),
            new NodeCondition(NodeConditionType.MemoryPressure),
            new NodeCondition(null),
            new GracePeriodMet(SOFT, T1),
            new GracePeriodMet(HARD, null),
            new ThresholdMet(HARD, GI, 12345L),
            new ThresholdMet(SOFT, null, -1L),
            new ReclaimTarget(HARD, GI, MI),
            new ReclaimTarget(SOFT, null, null),
            new Observation(Signal.MEMORY_AVAILABLE, 1L << 40, Long.MAX_VALUE, T0),
            new Observation(Signal.NODEFS_AVAILABLE, 0, -5, null),
            new SyncClock(7, T1),
            new SyncClock(-1, null),
            new EvictionDecision(
                new PodRef("ns", "web", "uid-1"),
                EvictionDecision.Kind.PRESSURE,
                "memory.available",
                30,
                "The node was low on resource: memory.",
                Map.of("starved_resource", "memory"),
                EvictionMethod.DEFAULT,
                List.of("evict the first pod", "rank")),
            new EvictionDecision(null, null, null, 0, null, null, null, null));
    for (Record r : all) {
      assertThat(r.toString()).as(r.getClass().getSimpleName()).isEqualTo(implicitToString(r));
    }
  }

  @Test
  void equalsAndHashCodeAreTheImplicitOnes() throws Throwable {
    check(
        List.of(
            V1,
            ThresholdValue.ofQuantity(GI, "1Gi"),
            ThresholdValue.ofQuantity(MI, "1Gi"),
            ThresholdValue.ofQuantity(GI, "1024Mi"),
            V2,
            ThresholdValue.ofFraction(0.1f, "10%"),
            ThresholdValue.ofFraction(0.2f, "10%"),
            ThresholdValue.ofFraction(-0.0f, "0%"),
            ThresholdValue.ofFraction(0.0f, "0%"),
            ThresholdValue.ofFraction(Float.NaN, "NaN"),
            ThresholdValue.ofFraction(Float.NaN, "NaN"),
            new ThresholdValue(null, 0f, null)));
    check(
        List.of(
            HARD,
            SOFT,
            new Threshold(
                "hard memory.available",
                Signal.MEMORY_AVAILABLE,
                ThresholdValue.ofQuantity(GI, "1Gi"),
                Duration.ZERO,
                null,
                0,
                "evictionHard",
                false),
            new Threshold(
                "x", Signal.MEMORY_AVAILABLE, V1, Duration.ZERO, null, 0, "evictionHard", false),
            new Threshold(
                HARD.id(),
                Signal.NODEFS_AVAILABLE,
                V1,
                Duration.ZERO,
                null,
                0,
                "evictionHard",
                false),
            new Threshold(
                HARD.id(), HARD.signal(), V2, Duration.ZERO, null, 0, "evictionHard", false),
            new Threshold(
                HARD.id(),
                HARD.signal(),
                V1,
                Duration.ofSeconds(1),
                null,
                0,
                "evictionHard",
                false),
            new Threshold(
                HARD.id(), HARD.signal(), V1, Duration.ZERO, V2, 0, "evictionHard", false),
            new Threshold(
                HARD.id(), HARD.signal(), V1, Duration.ZERO, null, 1, "evictionHard", false),
            new Threshold(HARD.id(), HARD.signal(), V1, Duration.ZERO, null, 0, "copy", false),
            new Threshold(
                HARD.id(), HARD.signal(), V1, Duration.ZERO, null, 0, "evictionHard", true),
            new Threshold(null, null, null, null, null, 0, null, false)));
    RankKey.Component c1 = new RankKey.Component("usage", 5, true, true);
    RankKey.Component c2 = new RankKey.Component("priority", -3, false, false, BigDecimal.ONE);
    check(
        List.of(
            new RankKey("uid-1", Signal.MEMORY_AVAILABLE, 0, List.of(c1, c2)),
            new RankKey("uid-1", Signal.MEMORY_AVAILABLE, 0, List.of(c1, c2)),
            new RankKey("uid-2", Signal.MEMORY_AVAILABLE, 0, List.of(c1, c2)),
            new RankKey("uid-1", Signal.NODEFS_AVAILABLE, 0, List.of(c1, c2)),
            new RankKey("uid-1", Signal.MEMORY_AVAILABLE, 1, List.of(c1, c2)),
            new RankKey("uid-1", Signal.MEMORY_AVAILABLE, 0, List.of(c2, c1)),
            new RankKey("uid-1", Signal.MEMORY_AVAILABLE, 0, List.of()),
            new RankKey(null, null, 0, List.of())));
  }

  /** Every pair's equals, and each one's hashCode, as the implicit methods give them. */
  private static void check(List<? extends Record> rs) throws Throwable {
    for (Record a : rs) {
      assertThat(a.hashCode()).as("hashCode of %s", a).isEqualTo(implicitHashCode(a));
      assertThat(a.equals(null)).isFalse();
      assertThat(a.equals("not a record")).isFalse();
      for (Record b : rs) {
        assertThat(a.equals(b)).as("%s equals %s", a, b).isEqualTo(implicitEquals(a, b));
      }
    }
  }

  private static String implicitToString(Record r) throws Throwable {
    return (String)
        implicit(r.getClass(), "toString", MethodType.methodType(String.class, r.getClass()))
            .invoke(r);
  }

  private static int implicitHashCode(Record r) throws Throwable {
    return (int)
        implicit(r.getClass(), "hashCode", MethodType.methodType(int.class, r.getClass()))
            .invoke(r);
  }

  private static boolean implicitEquals(Record a, Object b) throws Throwable {
    return (boolean)
        implicit(
                a.getClass(),
                "equals",
                MethodType.methodType(boolean.class, a.getClass(), Object.class))
            .invoke(a, b);
  }

  /** The method javac's implicit record method is linked to, made the same way. */
  private static MethodHandle implicit(Class<?> c, String name, MethodType type) throws Throwable {
    MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(c, MethodHandles.lookup());
    RecordComponent[] rc = c.getRecordComponents();
    MethodHandle[] getters = new MethodHandle[rc.length];
    for (int i = 0; i < rc.length; i++) {
      getters[i] = lookup.findGetter(c, rc[i].getName(), rc[i].getType());
    }
    String names = Arrays.stream(rc).map(RecordComponent::getName).collect(Collectors.joining(";"));
    CallSite site = (CallSite) ObjectMethods.bootstrap(lookup, name, type, c, names, getters);
    return site.dynamicInvoker();
  }
}
