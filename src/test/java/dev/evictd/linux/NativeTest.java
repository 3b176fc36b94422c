package dev.evictd.linux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class NativeTest {
  @BeforeAll
  static void bound() {
    assertThat(Native.available()).as(String.valueOf(Native.unavailableReason())).isTrue();
  }

  @Test
  void statvfsOfRootAgreesWithDf() throws Exception {
    Process df =
        new ProcessBuilder("df", "-B1", "--output=size,used,avail,itotal,iused,iavail", "/")
            .redirectErrorStream(true)
            .start();
    String text = new String(df.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(df.waitFor(10, TimeUnit.SECONDS)).isTrue();
    String[] f = text.lines().skip(1).findFirst().orElseThrow().trim().split("\\s+");
    Filesystems.Usage u = Filesystems.usage(Path.of("/"));
    assertThat(u.capacityBytes()).isEqualTo(Long.parseLong(f[0]));
    assertThat(u.inodes()).isEqualTo(Long.parseLong(f[3]));
    // used and free space move while other processes write: compare within 64 MiB / 1000 inodes
    assertThat(u.usedBytes()).isCloseTo(Long.parseLong(f[1]), within(64L << 20));
    assertThat(u.availableBytes()).isCloseTo(Long.parseLong(f[2]), within(64L << 20));
    assertThat(u.inodesUsed()).isCloseTo(Long.parseLong(f[4]), within(1000L));
    assertThat(u.inodesFree()).isCloseTo(Long.parseLong(f[5]), within(1000L));
    assertThat(u.freeBytes()).isGreaterThanOrEqualTo(u.availableBytes());
  }

  @Test
  void statvfsOfAMissingPathNamesThePathAndStrerror() {
    assertThatThrownBy(() -> Native.statvfs(Path.of("/no/such/evictd/path")))
        .isInstanceOf(IOException.class)
        .hasMessage("statvfs /no/such/evictd/path: No such file or directory (errno 2)");
  }

  @Test
  void openOfAMissingPathNamesThePathAndStrerror() {
    assertThatThrownBy(() -> Native.open(Path.of("/no/such/evictd/file"), Native.O_RDONLY))
        .isInstanceOf(IOException.class)
        .hasMessage("open /no/such/evictd/file: No such file or directory (errno 2)");
  }

  @Test
  void eventfdCountsSignalsAndPollTimesOutWhenNothingHappened() throws Exception {
    int fd = Native.eventfd();
    try {
      int[] fds = {fd};
      short[] events = {Native.POLLIN};
      short[] revents = new short[1];
      long t0 = System.nanoTime();
      assertThat(Native.poll(fds, events, revents, 50)).isZero();
      assertThat(System.nanoTime() - t0).isGreaterThanOrEqualTo(40_000_000L);
      Native.signalEventfd(fd, 2);
      Native.signalEventfd(fd, 3);
      assertThat(Native.poll(fds, events, revents, 1000)).isEqualTo(1);
      assertThat(revents[0] & Native.POLLIN).isEqualTo(Native.POLLIN);
      assertThat(Native.readEventfd(fd)).isEqualTo(5);
      assertThat(Native.poll(fds, events, revents, 0)).isZero();
    } finally {
      assertThat(Native.close(fd)).isNull();
    }
    assertThat(Native.close(fd)).isNotNull().hasMessageContaining("Bad file descriptor");
  }

  @Test
  void killReportsAProcessThatIsGoneAndSignalsALiveOne() throws Exception {
    Process p = new ProcessBuilder("sleep", "30").start();
    try {
      assertThat(Native.kill((int) p.pid(), 0)).isTrue();
      assertThat(Native.kill((int) p.pid(), Native.SIGTERM)).isTrue();
      assertThat(p.waitFor(5, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).isEqualTo(128 + Native.SIGTERM);
      assertThat(Native.kill((int) p.pid(), 0)).as("reaped process").isFalse();
    } finally {
      p.destroyForcibly();
    }
    assertThatThrownBy(() -> Native.kill(0, Native.SIGKILL))
        .hasMessageContaining("non-positive pid");
  }
}
