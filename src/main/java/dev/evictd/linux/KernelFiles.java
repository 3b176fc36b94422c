package dev.evictd.linux;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads small kernel files (procfs, sysfs, cgroupfs). They report a size of zero, and integer
 * sysctls such as {@code /proc/sys/kernel/pid_max} answer only a read at offset zero — a read at a
 * later offset returns end of file — so {@link Files#readString}, which starts with a small read,
 * returns "3" for 32768. Reading with a buffer larger than any such file gets the whole text in the
 * first read.
 */
final class KernelFiles {
  private static final int BUFFER = 64 * 1024;

  private KernelFiles() {}

  /**
   * One read buffer per thread: a sync reads dozens of these files, and a fresh 64 KiB each time
   * fed the GC.
   */
  private static final ThreadLocal<byte[]> BUFFERS =
      ThreadLocal.withInitial(() -> new byte[BUFFER]);

  /** The whole text of a kernel file. */
  static String read(Path file) throws IOException {
    byte[] buf = BUFFERS.get();
    try (InputStream in = Files.newInputStream(file)) {
      ByteArrayOutputStream more = null; // only for a file larger than the buffer
      int len = 0;
      int n;
      while ((n = in.read(buf, len, buf.length - len)) > 0) {
        len += n;
        if (len == buf.length) {
          if (more == null) {
            more = new ByteArrayOutputStream();
          }
          more.write(buf, 0, len);
          len = 0;
        }
      }
      if (more == null) {
        return new String(buf, 0, len, StandardCharsets.UTF_8);
      }
      more.write(buf, 0, len);
      return more.toString(StandardCharsets.UTF_8);
    }
  }
}
