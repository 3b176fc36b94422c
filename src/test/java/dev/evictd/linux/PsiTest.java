package dev.evictd.linux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.evictd.api.PressureLine;
import dev.evictd.api.PressureObservation;
import dev.evictd.api.PressureResource;
import dev.evictd.api.PressureStall;
import dev.evictd.testing.Fixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

class PsiTest {
  private static final Path PROC_MEMORY = Path.of("/proc/pressure/memory");
  private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");

  @Test
  void parsesBothLinesOfAPressureFile() {
    List<PressureObservation> obs =
        PsiReader.parse(
            PressureResource.IO,
            "some avg10=1.50 avg60=2.25 avg300=3.00 total=123\nfull avg10=0.50 avg60=0.25 avg300=0.00 total=45\n",
            NOW);
    assertThat(obs)
        .containsExactly(
            new PressureObservation(
                PressureResource.IO, PressureLine.SOME, 1.5, 2.25, 3.0, 123, NOW),
            new PressureObservation(
                PressureResource.IO, PressureLine.FULL, 0.5, 0.25, 0.0, 45, NOW));
  }

  @Test
  void aMalformedLineIsRefusedWithTheLine() {
    assertThatThrownBy(() -> PsiReader.parse(PressureResource.CPU, "most avg10=1\n", NOW))
        .hasMessage("not a PSI line: \"most avg10=1\"");
    assertThatThrownBy(
            () -> PsiReader.parse(PressureResource.CPU, "some avg10=x avg60=1 avg300=1\n", NOW))
        .hasMessageContaining("not a PSI line");
    assertThatThrownBy(() -> PsiReader.parse(PressureResource.CPU, "some avg10=1 total=5\n", NOW))
        .hasMessageContaining("without avg10/avg60/avg300");
  }

  @Test
  void readsEveryResourceOfAFixtureProcTree() {
    PsiReader r =
        new PsiReader(Fixtures.resource("hosts/v1/proc"), Clock.fixed(NOW, ZoneOffset.UTC));
    assertThat(r.available()).isTrue();
    List<PressureObservation> obs = r.read();
    assertThat(obs).hasSize(5); // the fixture's cpu file has no full line, like kernels before 5.13
    assertThat(obs.get(0))
        .isEqualTo(
            new PressureObservation(
                PressureResource.MEMORY, PressureLine.SOME, 1.5, 42.25, 10.0, 123456, NOW));
  }

  @Test
  void withoutPsiTheReaderWarnsOnceAndObservesNothing() {
    PsiReader r = new PsiReader(Fixtures.resource("hosts/v2/proc"), Clock.systemUTC());
    assertThat(r.available()).isFalse();
    String err =
        MemcgThresholdNotifierTest.captureStderr(
            () -> {
              assertThat(r.read()).isEmpty();
              assertThat(r.read()).isEmpty();
            });
    assertThat(err.lines().filter(l -> l.contains("PSI not available"))).hasSize(1);
  }

  @Test
  @Tag("psi")
  void readsThisHostsPressure() {
    assumeTrue(Files.isReadable(PROC_MEMORY), "no PSI on this host");
    List<PressureObservation> obs = new PsiReader(Path.of("/proc"), Clock.systemUTC()).read();
    assertThat(obs)
        .anySatisfy(
            o ->
                assertThat(o)
                    .extracting(PressureObservation::resource, PressureObservation::line)
                    .containsExactly(PressureResource.MEMORY, PressureLine.SOME));
    assertThat(obs).allSatisfy(o -> assertThat(o.avg10()).isBetween(0.0, 100.0));
    assertThat(obs)
        .extracting(PressureObservation::resource)
        .contains(PressureResource.IO, PressureResource.CPU);
  }

  @Test
  void triggersAreValidatedAndPrintedAsTheKernelReadsThem() {
    PsiTrigger t = PsiTrigger.parse("some 150000 2000000");
    assertThat(t).isEqualTo(new PsiTrigger(PressureLine.SOME, 150_000, 2_000_000));
    assertThat(t.toString()).isEqualTo("some 150000 2000000");
    assertThatThrownBy(() -> PsiTrigger.parse("some 150000"))
        .hasMessageContaining("not a PSI trigger: \"some 150000\"");
    assertThatThrownBy(() -> PsiTrigger.parse("full 100 400000"))
        .hasMessageContaining("outside 500000..10000000");
    assertThatThrownBy(() -> PsiTrigger.parse("full 3000000 2000000"))
        .hasMessageContaining("at most the window");
  }

  @Test
  @Tag("psi")
  void theKernelAcceptsAMemoryTriggerAndCloseRemovesItOnce() throws Exception {
    assumeTrue(Files.isReadable(PROC_MEMORY), "no PSI on this host");
    PsiTriggerNotifier n =
        new PsiTriggerNotifier(
            PROC_MEMORY,
            PressureResource.MEMORY,
            PsiTrigger.parse("full 100000 2000000"),
            s -> {},
            Clock.systemUTC());
    assertThat(n.available()).as(String.valueOf(n.unavailableReason())).isTrue();
    Thread t = thread("psi-notifier-memory");
    assertThat(t).isNotNull();
    long start = System.nanoTime();
    n.close();
    n.close();
    t.join(1000);
    assertThat(t.isAlive()).isFalse();
    assertThat(System.nanoTime() - start).isLessThan(1_000_000_000L);
  }

  @Test
  @Tag("psi")
  void aWindowThatIsNoMultipleOfTwoSecondsIsRefusedWithoutCapSysResource() throws Exception {
    assumeTrue(Files.isReadable(PROC_MEMORY), "no PSI on this host");
    assumeTrue(
        !hasCapSysResource(),
        "this process has CAP_SYS_RESOURCE: any window from 0.5 s to 10 s is accepted");
    PsiTriggerNotifier n =
        new PsiTriggerNotifier(
            PROC_MEMORY,
            PressureResource.MEMORY,
            PsiTrigger.parse("some 150000 1000000"),
            s -> {},
            Clock.systemUTC());
    try {
      assertThat(n.available()).isFalse();
      assertThat(n.unavailableReason())
          .isEqualTo(
              "write trigger \"some 150000 1000000\" to /proc/pressure/memory: Invalid argument (errno 22)"
                  + " (windows must be multiples of 2 s without CAP_SYS_RESOURCE)");
    } finally {
      n.close();
    }
  }

  private static boolean hasCapSysResource() throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("CapEff:")) {
        long caps = Long.parseUnsignedLong(line.substring(7).trim(), 16);
        return (caps & (1L << 24)) != 0;
      }
    }
    return false;
  }

  @Test
  @Tag("psi")
  void cpuPressureRaisesAStallFact() throws Exception {
    Path cpu = Path.of("/proc/pressure/cpu");
    assumeTrue(Files.isReadable(cpu), "no PSI on this host");
    LinkedBlockingQueue<PressureStall> stalls = new LinkedBlockingQueue<>();
    AtomicBoolean spin = new AtomicBoolean(true);
    List<Thread> spinners = new ArrayList<>();
    try (PsiTriggerNotifier n =
        new PsiTriggerNotifier(
            cpu,
            PressureResource.CPU,
            PsiTrigger.parse("some 50000 2000000"),
            stalls::add,
            Clock.systemUTC())) {
      assertThat(n.available()).as(String.valueOf(n.unavailableReason())).isTrue();
      // more runnable threads than CPUs: some of them always wait for a CPU
      for (int i = 0; i < Runtime.getRuntime().availableProcessors() * 3; i++) {
        Thread t =
            new Thread(
                () -> {
                  long x = 0;
                  while (spin.get()) {
                    x++;
                  }
                },
                "spinner-" + i);
        t.setDaemon(true);
        t.start();
        spinners.add(t);
      }
      PressureStall s = stalls.poll(8, TimeUnit.SECONDS);
      assertThat(s).as("a cpu stall event within 8 s").isNotNull();
      assertThat(s.resource()).isEqualTo(PressureResource.CPU);
      assertThat(s.line()).isEqualTo(PressureLine.SOME);
      assertThat(s.stallMicros()).isEqualTo(50_000);
      assertThat(s.windowMicros()).isEqualTo(2_000_000);
      assertThat(s.source()).isEqualTo(cpu.toString());
    } finally {
      spin.set(false);
      for (Thread t : spinners) {
        t.join();
      }
    }
  }

  @Test
  void aMissingPressureFileIsUnavailable() {
    Path missing = Path.of("/no/such/pressure/memory");
    PsiTriggerNotifier n =
        new PsiTriggerNotifier(
            missing,
            PressureResource.MEMORY,
            PsiTrigger.parse("some 150000 2000000"),
            s -> {},
            Clock.systemUTC());
    assertThat(n.available()).isFalse();
    assertThat(n.unavailableReason()).contains(missing.toString()).contains("does not exist");
    n.close();
  }

  private static Thread thread(String name) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals(name))
        .findFirst()
        .orElse(null);
  }
}
