package dev.evictd.linux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The shared poll/wake loop on real eventfds (any user; Linux with libc bound). */
@Tag("native")
class PollLoopTest {
  private final LinkedBlockingQueue<String> calls = new LinkedBlockingQueue<>();
  private final LinkedBlockingQueue<String> stops = new LinkedBlockingQueue<>();
  private PollLoop loop;

  @BeforeEach
  void needsLibc() {
    assumeTrue(Native.available(), String.valueOf(Native.unavailableReason()));
    loop = new PollLoop("poll-loop-test", stops::add);
  }

  @AfterEach
  void closeLoop() {
    if (loop != null) {
      loop.close();
    }
  }

  /** Whether {@code fd} is an open eventfd of this process. */
  private static boolean isEventfd(int fd) {
    try {
      return Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd))
          .toString()
          .equals("anon_inode:[eventfd]");
    } catch (IOException e) {
      return false;
    }
  }

  private static void awaitClosed(int fd) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
    while (isEventfd(fd) && System.nanoTime() < end) {
      Thread.sleep(5);
    }
  }

  @Test
  void callsTheHandlerOnItsThreadWhenTheDescriptorIsReadyAndClosesAReplacedOne() throws Exception {
    int first = Native.eventfd();
    assertThat(
            loop.watch(
                first,
                Native.POLLIN,
                revents -> {
                  Native.readEventfd(first);
                  calls.add("first on " + Thread.currentThread().getName());
                }))
        .isTrue();
    Native.signalEventfd(first, 1);
    assertThat(calls.poll(2, TimeUnit.SECONDS)).isEqualTo("first on poll-loop-test");

    int second = Native.eventfd();
    assertThat(
            loop.watch(
                second,
                Native.POLLIN,
                revents -> {
                  Native.readEventfd(second);
                  calls.add("second");
                }))
        .isTrue();
    Native.signalEventfd(second, 1);
    assertThat(calls.poll(2, TimeUnit.SECONDS)).isEqualTo("second");
    awaitClosed(first);
    assertThat(isEventfd(first)).as("the replaced descriptor is closed by the loop").isFalse();
    assertThat(stops).isEmpty();

    loop.close();
    awaitClosed(second);
    assertThat(isEventfd(second)).as("closed with the loop").isFalse();
    assertThat(loop.watch(Native.eventfd(), Native.POLLIN, r -> {})).as("closed").isFalse();
    loop.close(); // idempotent
    assertThat(stops).as("close is not a failure").isEmpty();
  }

  @Test
  void aFailingHandlerStopsTheLoopClosesItsDescriptorsAndIsReportedOnce() throws Exception {
    int fd = Native.eventfd();
    loop.watch(
        fd,
        Native.POLLIN,
        revents -> {
          throw new IOException("handler broke");
        });
    Native.signalEventfd(fd, 1);
    assertThat(stops.poll(2, TimeUnit.SECONDS)).isEqualTo("handler broke");
    awaitClosed(fd);
    assertThat(isEventfd(fd)).isFalse();
    assertThat(loop.closed()).isTrue();
    int another = Native.eventfd();
    assertThat(loop.watch(another, Native.POLLIN, r -> {})).isFalse();
    assertThat(isEventfd(another)).as("refused descriptors are closed too").isFalse();
    assertThat(stops.poll(100, TimeUnit.MILLISECONDS)).isNull();
  }

  @Test
  void closeStopsTheThreadWithinASecond() throws Exception {
    loop.watch(Native.eventfd(), Native.POLLIN, r -> {});
    Thread t =
        Thread.getAllStackTraces().keySet().stream()
            .filter(x -> x.getName().equals("poll-loop-test"))
            .findFirst()
            .orElseThrow();
    loop.close();
    t.join(1500);
    assertThat(t.isAlive()).isFalse();
  }
}
