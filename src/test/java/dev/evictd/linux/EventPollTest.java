package dev.evictd.linux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Poll loops with no thread of their own, polled by the thread that awaits their {@link EventPoll}
 * (the agent's sync loop), on real eventfds (any user; Linux with libc bound).
 */
@Tag("native")
class EventPollTest {
  private final List<String> calls = new CopyOnWriteArrayList<>();
  private final LinkedBlockingQueue<String> stops = new LinkedBlockingQueue<>();
  private EventPoll poll;

  @BeforeEach
  void needsLibc() {
    assumeTrue(Native.available(), String.valueOf(Native.unavailableReason()));
    poll = EventPoll.open();
    assertThat(poll).isNotNull();
  }

  @AfterEach
  void closePoll() {
    if (poll != null) {
      poll.close();
    }
  }

  private static boolean isEventfd(int fd) {
    try {
      return Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd))
          .toString()
          .equals("anon_inode:[eventfd]");
    } catch (IOException e) {
      return false;
    }
  }

  private static Thread pollThread(String name) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals(name))
        .findFirst()
        .orElse(null);
  }

  private PollLoop loop(String name) {
    return new PollLoop(name, stops::add, poll);
  }

  private PollLoop.Ready reads(int fd, String what) {
    return revents -> {
      Native.readEventfd(fd);
      calls.add(what + " on " + Thread.currentThread().getName());
    };
  }

  @Test
  void theAwaitingThreadCallsEveryReadyLoopsHandlerAndNoThreadIsStarted() throws Exception {
    PollLoop a = loop("driven-a");
    PollLoop b = loop("driven-b");
    int fa = Native.eventfd();
    int fb = Native.eventfd();
    assertThat(a.watch(fa, Native.POLLIN, reads(fa, "a"))).isTrue();
    assertThat(b.watch(fb, Native.POLLIN, reads(fb, "b"))).isTrue();
    assertThat(pollThread("driven-a")).as("no thread of its own").isNull();
    assertThat(poll.loops()).isEqualTo(2);
    poll.await(0); // takes the watches (the joins woke it)
    assertThat(calls).isEmpty();

    Native.signalEventfd(fb, 1);
    poll.await(10_000);
    assertThat(calls).containsExactly("b on " + Thread.currentThread().getName());
    Native.signalEventfd(fa, 1);
    Native.signalEventfd(fb, 1);
    poll.await(10_000);
    assertThat(calls).hasSize(3).contains("a on " + Thread.currentThread().getName());
    poll.await(0);
    assertThat(calls).as("each event read once").hasSize(3);
    a.close();
    b.close();
    assertThat(isEventfd(fa)).as("closed at once: nobody polls it").isFalse();
    assertThat(isEventfd(fb)).isFalse();
    poll.await(0);
    assertThat(poll.loops()).as("closed loops are dropped").isZero();
    assertThat(stops).isEmpty();
  }

  @Test
  void aReplacedDescriptorIsClosedByTheAwaitingThreadAtItsNextAwait() throws Exception {
    PollLoop a = loop("driven");
    int first = Native.eventfd();
    a.watch(first, Native.POLLIN, reads(first, "first"));
    poll.await(0);
    int second = Native.eventfd();
    a.watch(second, Native.POLLIN, reads(second, "second"));
    assertThat(isEventfd(first)).as("still the polled one until the next await").isTrue();
    poll.await(0); // the second is polled from now on
    assertThat(isEventfd(first)).isFalse();
    Native.signalEventfd(second, 1);
    poll.await(10_000);
    assertThat(calls).containsExactly("second on " + Thread.currentThread().getName());
    a.close();
    assertThat(isEventfd(second)).isFalse();
  }

  @Test
  void aWakeFromAnotherThreadEndsTheAwait() throws Exception {
    PollLoop a = loop("driven");
    int fd = Native.eventfd();
    a.watch(fd, Native.POLLIN, reads(fd, "a"));
    Thread waker =
        new Thread(
            () -> {
              try {
                Thread.sleep(50);
              } catch (InterruptedException e) {
                return;
              }
              poll.wake();
            });
    poll.await(0);
    waker.start();
    long before = System.nanoTime();
    poll.await(60_000);
    waker.join();
    assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - before))
        .as("woken, not the 60 s time-out")
        .isLessThan(30);
    assertThat(calls).isEmpty();
    a.close();
  }

  @Test
  void closingALoopAnotherThreadPollsWakesItAndItsDescriptorsAreClosedByThatThread()
      throws Exception {
    PollLoop a = loop("driven");
    int fd = Native.eventfd();
    a.watch(fd, Native.POLLIN, reads(fd, "a"));
    poll.await(0); // takes the watch
    LinkedBlockingQueue<String> awaited = new LinkedBlockingQueue<>();
    Thread awaiting =
        new Thread(
            () -> {
              try {
                poll.await(60_000);
                poll.await(60_000);
                awaited.add("done");
              } catch (IOException e) {
                awaited.add(e.toString());
              }
            });
    awaiting.start();
    while (poll.pollingThread() == null) {
      Thread.sleep(1);
    }
    a.close(); // waits for the awaiting thread to let go of the descriptors
    assertThat(isEventfd(fd)).isFalse();
    poll.wake();
    assertThat(awaited.poll(30, TimeUnit.SECONDS)).isEqualTo("done");
    awaiting.join();
    assertThat(poll.loops()).isZero();
    assertThat(stops).as("a close is not a failure").isEmpty();
  }

  @Test
  void aFailingHandlerStopsItsLoopAloneAndIsReportedOnce() throws Exception {
    PollLoop bad = loop("bad");
    PollLoop good = loop("good");
    int fb = Native.eventfd();
    int fg = Native.eventfd();
    bad.watch(
        fb,
        Native.POLLIN,
        revents -> {
          throw new IOException("handler broke");
        });
    good.watch(fg, Native.POLLIN, reads(fg, "good"));
    poll.await(0);
    Native.signalEventfd(fb, 1);
    poll.await(10_000);
    assertThat(stops).containsExactly("handler broke");
    assertThat(isEventfd(fb)).isFalse();
    assertThat(bad.closed()).isTrue();
    assertThat(poll.loops()).isEqualTo(1);
    Native.signalEventfd(fg, 1);
    poll.await(10_000);
    assertThat(calls).containsExactly("good on " + Thread.currentThread().getName());
    assertThat(stops).hasSize(1);
    good.close();
  }

  @Test
  void aClosedPollRefusesAwaitsAndNewLoops() throws Exception {
    poll.close();
    assertThatThrownBy(() -> poll.await(0)).isInstanceOf(IOException.class);
    PollLoop a = loop("late");
    int fd = Native.eventfd();
    assertThat(a.watch(fd, Native.POLLIN, reads(fd, "late"))).isTrue();
    assertThat(stops).containsExactly("the event poll is closed");
    assertThat(a.closed()).isTrue();
    assertThat(isEventfd(fd)).isFalse();
    poll.wake(); // harmless
    poll.close(); // idempotent
  }
}
