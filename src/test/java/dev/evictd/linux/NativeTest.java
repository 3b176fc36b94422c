package dev.evictd.linux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
    // Other processes write to / while df runs, so its figures are compared with a statvfs read
    // just before and one just after: each must lie between the two (a few tries, for a window in
    // which usage went both up and down). A wrong binding lands far outside.
    String failure = null;
    for (int attempt = 0; attempt < 10; attempt++) {
      Filesystems.Usage before = Filesystems.usage(Path.of("/"));
      String[] f = df();
      Filesystems.Usage after = Filesystems.usage(Path.of("/"));
      assertThat(before.capacityBytes()).isEqualTo(Long.parseLong(f[0]));
      assertThat(before.inodes()).isEqualTo(Long.parseLong(f[3]));
      assertThat(after.freeBytes()).isGreaterThanOrEqualTo(after.availableBytes());
      failure = outside("used bytes", Long.parseLong(f[1]), before.usedBytes(), after.usedBytes());
      if (failure == null) {
        failure =
            outside(
                "available bytes",
                Long.parseLong(f[2]),
                before.availableBytes(),
                after.availableBytes());
      }
      if (failure == null) {
        failure =
            outside("inodes used", Long.parseLong(f[4]), before.inodesUsed(), after.inodesUsed());
      }
      if (failure == null) {
        failure =
            outside("inodes free", Long.parseLong(f[5]), before.inodesFree(), after.inodesFree());
      }
      if (failure == null) {
        return;
      }
    }
    assertThat(failure).as("df within the statvfs reads around it").isNull();
  }

  private static String[] df() throws Exception {
    Process df =
        new ProcessBuilder("df", "-B1", "--output=size,used,avail,itotal,iused,iavail", "/")
            .redirectErrorStream(true)
            .start();
    String text = new String(df.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(df.waitFor(10, TimeUnit.SECONDS)).isTrue();
    return text.lines().skip(1).findFirst().orElseThrow().trim().split("\\s+");
  }

  private static String outside(String what, long df, long before, long after) {
    long lo = Math.min(before, after);
    long hi = Math.max(before, after);
    return df >= lo && df <= hi
        ? null
        : what + ": df " + df + ", statvfs " + before + " before and " + after + " after";
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
