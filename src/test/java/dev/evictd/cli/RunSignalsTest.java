package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Real signals to a real {@code evictd run} process (this JVM's classpath, a child JVM). */
class RunSignalsTest {
  static int status(int port, String path) {
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(1000);
      s.getOutputStream()
          .write(
              ("GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                  .getBytes(StandardCharsets.US_ASCII));
      String line = new String(s.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
      return line.startsWith("HTTP/1.1 ") ? Integer.parseInt(line.substring(9, 12)) : -1;
    } catch (IOException | NumberFormatException e) {
      return -1;
    }
  }

  static boolean await(java.util.function.BooleanSupplier c, Duration timeout)
      throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < end) {
      if (c.getAsBoolean()) {
        return true;
      }
      Thread.sleep(100);
    }
    return c.getAsBoolean();
  }

  static void signal(Process p, String sig) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + sig, Long.toString(p.pid())).start();
    assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(kill.exitValue()).isZero();
  }

  /** This JVM's class path without the test classes. */
  static String agentClassPath() {
    return java.util.Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
        .filter(e -> !Path.of(e).endsWith("test-classes"))
        .collect(java.util.stream.Collectors.joining(File.pathSeparator));
  }

  @Test
  void sighupLeavesTheAgentRunningAndSigtermStopsItPromptly(@TempDir Path dir) throws Exception {
    Path log = dir.resolve("evictd.log");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p =
        new ProcessBuilder(
                List.of(
                    java,
                    "-XX:+UseSerialGC",
                    "-XX:TieredStopAtLevel=1",
                    "-cp",
                    // without the test classes: the agent's own logging (INFO, LogbackDefaults),
                    // not the tests' quiet logback-test.xml
                    agentClassPath(),
                    "dev.evictd.cli.Main",
                    "run",
                    "--standalone",
                    "--metrics-address",
                    // a port of its own choosing, read from its log: a port found free here could
                    // be taken by another process before the child binds it
                    "127.0.0.1:0",
                    "--interval",
                    "1s",
                    "--memcg-notifier",
                    "false",
                    "--fs-layout",
                    "shared",
                    "--kubelet-root-dir",
                    dir.toString(),
                    "--state-dir",
                    dir.resolve("state").toString(),
                    "--runtime-root-dir",
                    dir.toString()))
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    try {
      assertThat(await(() -> boundPort(log) > 0, Duration.ofSeconds(60)))
          .as("the endpoints' address is logged; log:\n%s", read(log))
          .isTrue();
      int port = boundPort(log);
      assertThat(await(() -> status(port, "/readyz") == 200, Duration.ofSeconds(60)))
          .as("ready; log:\n%s", read(log))
          .isTrue();

      signal(p, "HUP");
      // logged when the signal arrives, or at start when evictd was started with SIGHUP ignored
      // (nohup), which the JVM keeps: either way the agent must go on
      assertThat(
              await(
                  () ->
                      read(log).contains("SIGHUP ignored")
                          || read(log).contains("SIGHUP is ignored (it was when evictd started"),
                  Duration.ofSeconds(10)))
          .as("log:\n%s", read(log))
          .isTrue();
      Thread.sleep(1000);
      assertThat(p.isAlive()).as("SIGHUP does not stop the agent").isTrue();
      assertThat(status(port, "/healthz")).isEqualTo(200);

      long t0 = System.nanoTime();
      signal(p, "TERM");
      assertThat(p.waitFor(10, TimeUnit.SECONDS)).as("exits within 10 s of SIGTERM").isTrue();
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
      // 143 = 128 + SIGTERM: the JVM's exit status after its shutdown hooks ran
      assertThat(p.exitValue()).isEqualTo(143);
      assertThat(read(log)).contains("evictd stopping", "evictd stopped");
    } finally {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
    }
  }

  private static final java.util.regex.Pattern BOUND =
      java.util.regex.Pattern.compile("/healthz and /readyz on \\S*:(\\d+)");

  /** The port the agent's endpoints bound, from its start-up line; -1 before it is logged. */
  static int boundPort(Path log) {
    java.util.regex.Matcher m = BOUND.matcher(read(log));
    return m.find() ? Integer.parseInt(m.group(1)) : -1;
  }

  static String read(Path log) {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      return "";
    }
  }
}
