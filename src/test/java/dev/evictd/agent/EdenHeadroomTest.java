package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class EdenHeadroomTest {
  private static final long KIB = 1024;

  /**
   * An eden whose use the test sets, and whose collection count goes up once {@code collectAfter}
   * more counts have been asked for while filling.
   */
  private static final class FakeEden implements EdenHeadroom.Eden {
    long used;
    long capacity = 6400 * KIB;
    long collections;
    int asked;
    int collectAfter = Integer.MAX_VALUE;

    @Override
    public long used() {
      return used;
    }

    @Override
    public long capacity() {
      return capacity;
    }

    @Override
    public long collections() {
      if (++asked > collectAfter) {
        collections++;
        collectAfter = Integer.MAX_VALUE;
        used = 0;
      }
      return collections;
    }
  }

  /** One sync of {@code bytes} on {@code eden}, then the headroom's turn. */
  private static long sync(EdenHeadroom h, FakeEden eden, long bytes) {
    h.beforeSync();
    eden.used += bytes;
    eden.asked = 0;
    return h.afterSync(() -> false);
  }

  @Test
  void fillsEdenOnlyWhenTheNextSyncWouldNotFit() {
    FakeEden eden = new FakeEden();
    EdenHeadroom h = new EdenHeadroom(eden);
    // 300 KiB a sync: nothing to do while 450 KiB (one and a half syncs) are free
    for (int i = 0; i < 19; i++) {
      assertThat(sync(h, eden, 300 * KIB)).isZero();
    }
    assertThat(eden.capacity - eden.used).isEqualTo(700 * KIB);
    // 400 KiB free after this one: the collection is brought forward, the fill stopping at it
    eden.collectAfter = 1 + 4; // the sync's own count, then four chunks
    long filled = sync(h, eden, 300 * KIB);
    assertThat(eden.collections).isEqualTo(1);
    assertThat(filled).isEqualTo(4L * EdenHeadroom.CHUNK);
    // the next sync starts on an empty eden
    assertThat(sync(h, eden, 300 * KIB)).isZero();
    assertThat(eden.used).isEqualTo(300 * KIB);
  }

  @Test
  void fillsNoMoreThanEdenHasFreeWhenNoCollectionCounts() {
    FakeEden eden = new FakeEden();
    EdenHeadroom h = new EdenHeadroom(eden);
    sync(h, eden, 300 * KIB);
    eden.used = eden.capacity - 200 * KIB;
    long filled = sync(h, eden, 0);
    // the learnt 300 KiB still hold (a sync that allocated nothing decays them by a sixteenth)
    assertThat(filled)
        .isGreaterThan(200 * KIB)
        .isLessThanOrEqualTo(200 * KIB + 3L * EdenHeadroom.CHUNK);
  }

  @Test
  void stopsAtOnceWhenASyncIsWanted() {
    FakeEden eden = new FakeEden();
    EdenHeadroom h = new EdenHeadroom(eden);
    sync(h, eden, 300 * KIB);
    eden.used = eden.capacity - 100 * KIB;
    h.beforeSync();
    assertThat(h.afterSync(() -> true)).isZero();
    assertThat(eden.collections).isZero();
    // the same without a sync wanted: it fills
    h.beforeSync();
    assertThat(h.afterSync(() -> false)).isPositive();
  }

  @Test
  void learnsNothingFromASyncThatCollectedAndLeavesBigSyncsAlone() {
    FakeEden eden = new FakeEden();
    EdenHeadroom h = new EdenHeadroom(eden);
    // a collection inside the sync: its eden use says nothing of what it allocated
    h.beforeSync();
    eden.used = eden.capacity - 100 * KIB;
    eden.collections++;
    assertThat(h.afterSync(() -> false)).isZero();
    // a sync that allocates more than half of eden collects anyway: filling would only double it
    eden.used = 0;
    assertThat(sync(h, eden, 3300 * KIB)).isZero();
    eden.used = eden.capacity - 100 * KIB;
    assertThat(sync(h, eden, 0)).isZero();
    assertThat(eden.collections).isEqualTo(1);
  }

  @Test
  void withoutAnEdenItDoesNothing() {
    EdenHeadroom h = new EdenHeadroom(null);
    h.beforeSync();
    assertThat(h.active()).isFalse();
    assertThat(h.afterSync(() -> false)).isZero();
  }

  /** Run in a child JVM: syncs of 300 KiB, printing what the headroom did and the collections. */
  public static final class Child {
    private Child() {}

    @SuppressWarnings("unused")
    private static volatile Object keep;

    public static void main(String[] args) {
      EdenHeadroom h = EdenHeadroom.forThisJvm();
      com.sun.management.ThreadMXBean threads =
          (com.sun.management.ThreadMXBean)
              java.lang.management.ManagementFactory.getThreadMXBean();
      long filled = 0;
      int inSync = 0;
      long gcs = collections();
      for (int i = 0; i < 400; i++) {
        h.beforeSync();
        long g0 = collections();
        long a0 = threads.getCurrentThreadAllocatedBytes();
        while (threads.getCurrentThreadAllocatedBytes() - a0 < 300 * KIB) {
          keep = new byte[1000];
        }
        if (collections() != g0) {
          inSync++;
        }
        filled += h.afterSync(() -> false);
      }
      System.out.println(
          "active "
              + h.active()
              + " syncs 400 collections "
              + (collections() - gcs)
              + " in-sync "
              + inSync
              + " filled "
              + filled);
    }

    private static long collections() {
      long n = 0;
      for (var c : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
        n += Math.max(0, c.getCollectionCount());
      }
      return n;
    }
  }

  private static String child(String... jvm) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(List.of(jvm));
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Child.class.getName()));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().remove("JAVA_TOOL_OPTIONS");
    pb.environment().remove("JDK_JAVA_OPTIONS");
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    return out;
  }

  @Test
  void withTheAgentsSmallSerialEdenTheCollectionsFallBetweenSyncs() throws Exception {
    String out = child("-XX:+UseSerialGC", "-Xms32m", "-Xmn8m");
    // 400 syncs of 300 KiB (117 MiB) in a 6.4 MiB eden: some 20 collections, all between syncs
    assertThat(out).matches("active true syncs 400 collections \\d+ in-sync 0 filled \\d+");
    long collections = Long.parseLong(out.replaceAll(".* collections (\\d+) .*", "$1"));
    assertThat(collections).isBetween(15L, 25L);
    assertThat(Long.parseLong(out.replaceAll(".* filled ", ""))).isPositive();
  }

  @Test
  void withG1ItStandsAside() throws Exception {
    String out = child("-XX:+UseG1GC", "-Xmx64m");
    assertThat(out).startsWith("active false ").endsWith(" filled 0");
  }
}
