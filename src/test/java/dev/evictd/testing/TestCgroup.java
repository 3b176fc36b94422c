package dev.evictd.testing;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * A uniquely named cgroup v1 memory cgroup for real-kernel tests, with the processes and tmpfs
 * files the test puts in it. {@link #close()} kills the processes, deletes the files and removes
 * the cgroup tree, also after a failure.
 */
public final class TestCgroup implements AutoCloseable {
  /** The real cgroup v1 memory hierarchy. */
  public static final Path MEMORY_ROOT = Path.of("/sys/fs/cgroup/memory");

  private static final Path SHM = Path.of("/dev/shm");

  private final Path dir;
  private final List<Process> processes = new ArrayList<>();
  private final List<Path> files = new ArrayList<>();

  private TestCgroup(Path dir) {
    this.dir = dir;
  }

  /**
   * Skips the test unless it runs as root on a host whose memory controller is cgroup v1 (with
   * /dev/shm).
   */
  public static void assumeRootWithCgroupV1() {
    assumeTrue(
        "root".equals(System.getProperty("user.name")),
        "needs root to create memory cgroups (runs as " + System.getProperty("user.name") + ")");
    assumeTrue(
        Files.isWritable(MEMORY_ROOT.resolve("cgroup.event_control")),
        "needs the cgroup v1 memory controller at " + MEMORY_ROOT);
    assumeTrue(Files.isDirectory(SHM), "needs a tmpfs at " + SHM);
  }

  /** Creates {@code /sys/fs/cgroup/memory/evictd-test-<name>-<random>}. */
  public static TestCgroup create(String name) throws IOException {
    Path d =
        MEMORY_ROOT.resolve(
            "evictd-test-" + name + "-" + UUID.randomUUID().toString().substring(0, 8));
    Files.createDirectory(d);
    return new TestCgroup(d);
  }

  /** The cgroup directory. */
  public Path dir() {
    return dir;
  }

  /** Creates a child cgroup (relative path) and returns it. */
  public Path mkdirs(String relative) throws IOException {
    return Files.createDirectories(dir.resolve(relative));
  }

  /** A fresh tmpfs path that {@link #close()} deletes. */
  public Path tmpfsFile(String name) {
    Path f = SHM.resolve(dir.getFileName() + "-" + name);
    files.add(f);
    return f;
  }

  /**
   * Starts {@code sh -c script} after moving the shell into {@code cgroup} ({@code $1} is the
   * cgroup, further arguments follow as {@code $2}...); output goes to the inherited stderr.
   */
  public Process startIn(Path cgroup, String script, String... args) throws IOException {
    List<String> cmd =
        new ArrayList<>(
            List.of(
                "sh",
                "-c",
                "echo $$ > \"$1/cgroup.procs\" || exit 99; " + script,
                "sh",
                cgroup.toString()));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    processes.add(p);
    return p;
  }

  /** {@code memory.usage_in_bytes} of this cgroup. */
  public long usage() throws IOException {
    return Long.parseLong(Files.readString(dir.resolve("memory.usage_in_bytes")).trim());
  }

  /**
   * Truncates {@code file} to zero bytes (uncharging its pages from the cgroup that wrote them).
   */
  public static void truncate(Path file) throws IOException {
    try (java.nio.channels.FileChannel ch =
        java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE)) {
      ch.truncate(0);
    }
  }

  /** Waits until {@code file} holds at least {@code size} bytes (at most 5 s). */
  public static void awaitSize(Path file, long size) throws IOException, InterruptedException {
    long end = System.nanoTime() + 5_000_000_000L;
    while (!(Files.exists(file) && Files.size(file) >= size)) {
      if (System.nanoTime() > end) {
        throw new AssertionError(file + " did not reach " + size + " bytes in 5 s");
      }
      Thread.sleep(1);
    }
  }

  /**
   * Waits until the process list of {@code cgroup} holds at least {@code count} processes (at most
   * 5 s).
   */
  public static void awaitProcesses(Path cgroup, int count)
      throws IOException, InterruptedException {
    long end = System.nanoTime() + 5_000_000_000L;
    while (System.nanoTime() < end) {
      String procs =
          new String(Files.readAllBytes(cgroup.resolve("cgroup.procs")), StandardCharsets.UTF_8)
              .trim();
      if ((procs.isEmpty() ? 0 : procs.split("\n").length) >= count) {
        return;
      }
      Thread.sleep(10);
    }
    throw new AssertionError("cgroup " + cgroup + " did not reach " + count + " processes in 5 s");
  }

  /**
   * Waits until process {@code p} ignores signal {@code signal} (its {@code SigIgn} mask in {@code
   * /proc/PID/status} has it), at most 5 s: a shell that runs {@code trap '' TERM} is in its cgroup
   * before it has run the trap.
   */
  public static void awaitIgnoring(Process p, int signal) throws IOException, InterruptedException {
    Path status = Path.of("/proc", Long.toString(p.pid()), "status");
    long bit = 1L << (signal - 1);
    long end = System.nanoTime() + 5_000_000_000L;
    while (System.nanoTime() < end && p.isAlive()) {
      for (String line : Files.readAllLines(status)) {
        if (line.startsWith("SigIgn:")
            && (Long.parseUnsignedLong(line.substring(7).trim(), 16) & bit) != 0) {
          return;
        }
      }
      Thread.sleep(5);
    }
    throw new AssertionError("process " + p.pid() + " did not ignore signal " + signal + " in 5 s");
  }

  @Override
  public void close() throws IOException, InterruptedException {
    for (Process p : processes) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
      p.waitFor();
    }
    for (Path f : files) {
      Files.deleteIfExists(f);
    }
    if (!Files.exists(dir)) {
      return;
    }
    List<Path> dirs;
    try (Stream<Path> s = Files.walk(dir)) {
      dirs = s.filter(Files::isDirectory).sorted(Comparator.reverseOrder()).toList();
    }
    for (Path d : dirs) {
      for (String pid : Files.readString(d.resolve("cgroup.procs")).split("\n")) {
        if (!pid.isBlank()) {
          ProcessHandle.of(Long.parseLong(pid.trim())).ifPresent(ProcessHandle::destroyForcibly);
        }
      }
      for (int i = 0; ; i++) {
        try {
          Files.delete(d);
          break;
        } catch (IOException e) {
          if (i > 100) {
            throw new IOException("cannot remove test cgroup " + d + ": " + e, e);
          }
          Thread.sleep(20);
        }
      }
    }
  }
}
