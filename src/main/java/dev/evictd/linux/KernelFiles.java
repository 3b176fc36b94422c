package dev.evictd.linux;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads small kernel files (procfs, sysfs, cgroupfs). They report a size of zero, and integer sysctls such as
 * {@code /proc/sys/kernel/pid_max} answer only a read at offset zero — a read at a later offset returns end of file
 * — so {@link Files#readString}, which starts with a small read, returns "3" for 32768. Reading with a buffer larger
 * than any such file gets the whole text in the first read.
 */
final class KernelFiles {
  private static final int BUFFER = 64 * 1024;

  private KernelFiles() {}

  /** The whole text of a kernel file. */
  static String read(Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      byte[] buf = new byte[BUFFER];
      int n;
      while ((n = in.read(buf)) > 0) {
        out.write(buf, 0, n);
      }
      return out.toString(StandardCharsets.UTF_8);
    }
  }
}
