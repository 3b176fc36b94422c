package dev.evictd.linux;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Memory;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.Out;
import jnr.ffi.types.size_t;
import jnr.ffi.types.ssize_t;
import jnr.posix.POSIX;
import jnr.posix.POSIXFactory;

/**
 * The thin native layer: the few libc calls evictd uses (x86_64 / aarch64 Linux, glibc or musl),
 * bound with jnr-ffi, and {@code kill} through jnr-posix. Every failing call becomes an {@link
 * IOException} whose message names what was attempted and gives {@code strerror(errno)}.
 */
final class Native {
  static final int O_RDONLY = 0;
  static final int O_WRONLY = 1;
  static final int O_RDWR = 2;
  static final int O_NONBLOCK = 04000;
  static final int O_CLOEXEC = 02000000;
  static final int EFD_CLOEXEC = 02000000;

  static final short POLLIN = 0x1;
  static final short POLLPRI = 0x2;
  static final short POLLERR = 0x8;
  static final short POLLHUP = 0x10;
  static final short POLLNVAL = 0x20;

  static final int SIGKILL = 9;
  static final int SIGTERM = 15;

  static final int EINTR = 4;
  static final int ESRCH = 3;
  static final int EAGAIN = 11;

  /**
   * glibc's {@code struct statvfs} on 64-bit Linux: 11 unsigned longs, then 6 spare ints (checked
   * against df).
   */
  private static final int STATVFS_SIZE = 112;

  private static final int OFF_FRSIZE = 8;
  private static final int OFF_BLOCKS = 16;
  private static final int OFF_BFREE = 24;
  private static final int OFF_BAVAIL = 32;
  private static final int OFF_FILES = 40;
  private static final int OFF_FFREE = 48;

  /** The libc functions used, and nothing else. */
  public interface LibC {
    int eventfd(int initval, int flags);

    int poll(Pointer fds, @size_t long nfds, int timeoutMillis);

    @ssize_t
    long read(int fd, @Out byte[] buf, @size_t long count);

    @ssize_t
    long write(int fd, @In byte[] buf, @size_t long count);

    int open(String path, int flags);

    @ssize_t
    long pread(int fd, Pointer buf, @size_t long count, long offset);

    int close(int fd);

    int statvfs(String path, Pointer buf);

    String strerror(int errnum);
  }

  /** Figures of one {@code statvfs} call, in bytes and inodes. */
  record StatVfs(
      long fragmentSize,
      long blocks,
      long blocksFree,
      long blocksAvailable,
      long files,
      long filesFree) {}

  private static final class Loaded {
    static final LibC LIBC;
    static final Runtime RUNTIME;
    static final POSIX POSIX;
    static final String FAILURE;

    static {
      LibC libc = null;
      Runtime runtime = null;
      POSIX posix = null;
      String failure = null;
      try {
        if (!System.getProperty("os.name", "").toLowerCase().contains("linux")) {
          throw new UnsupportedOperationException(
              "not Linux (" + System.getProperty("os.name") + ")");
        }
        libc = LibraryLoader.create(LibC.class).load("c");
        runtime = Runtime.getRuntime(libc);
        posix = POSIXFactory.getNativePOSIX();
      } catch (RuntimeException | LinkageError e) {
        failure = "cannot load libc through jnr-ffi: " + e.getMessage();
        libc = null;
      }
      LIBC = libc;
      RUNTIME = runtime;
      POSIX = posix;
      FAILURE = failure;
    }
  }

  private Native() {}

  /** Whether libc could be bound; when not, {@link #unavailableReason()} says why. */
  static boolean available() {
    return Loaded.LIBC != null;
  }

  /** Why libc could not be bound, or null when it could. */
  static String unavailableReason() {
    return Loaded.FAILURE;
  }

  /**
   * The system's page size ({@code sysconf(_SC_PAGESIZE)}), or {@link MemcgLine#DEFAULT_PAGE_SIZE}
   * where libc is not bound or does not say.
   */
  static long pageSize() {
    if (Loaded.POSIX == null) {
      return MemcgLine.DEFAULT_PAGE_SIZE;
    }
    try {
      long p = Loaded.POSIX.sysconf(jnr.constants.platform.Sysconf._SC_PAGESIZE);
      return p > 0 ? p : MemcgLine.DEFAULT_PAGE_SIZE;
    } catch (RuntimeException | LinkageError e) {
      return MemcgLine.DEFAULT_PAGE_SIZE;
    }
  }

  private static LibC libc() throws IOException {
    if (Loaded.LIBC == null) {
      throw new IOException(Loaded.FAILURE);
    }
    return Loaded.LIBC;
  }

  private static int errno() {
    return Loaded.RUNTIME.getLastError();
  }

  private static IOException error(String what, int errno) {
    String text;
    try {
      text = Loaded.LIBC.strerror(errno);
    } catch (RuntimeException e) {
      text = "error";
    }
    return new IOException(what + ": " + text + " (errno " + errno + ")");
  }

  /** {@code open(path, flags)}; returns the file descriptor. */
  static int open(Path path, int flags) throws IOException {
    int fd = libc().open(path.toString(), flags | O_CLOEXEC);
    if (fd < 0) {
      throw error("open " + path, errno());
    }
    return fd;
  }

  /**
   * Closes {@code fd}, ignoring a negative one; a failure is returned as an exception, not thrown.
   */
  static IOException close(int fd) {
    if (fd < 0 || Loaded.LIBC == null) {
      return null;
    }
    if (Loaded.LIBC.close(fd) != 0) {
      return error("close fd " + fd, errno());
    }
    return null;
  }

  /** A new close-on-exec eventfd with counter 0. */
  static int eventfd() throws IOException {
    int fd = libc().eventfd(0, EFD_CLOEXEC);
    if (fd < 0) {
      throw error("eventfd", errno());
    }
    return fd;
  }

  /**
   * Writes all of {@code text} (UTF-8, with a trailing NUL when {@code nulTerminated}) to {@code
   * fd} in one call.
   */
  static void write(int fd, String text, boolean nulTerminated, String what) throws IOException {
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    int n = nulTerminated ? b.length + 1 : b.length;
    byte[] buf = new byte[n];
    System.arraycopy(b, 0, buf, 0, b.length);
    long w = libc().write(fd, buf, n);
    if (w < 0) {
      throw error(what, errno());
    }
    if (w != n) {
      throw new IOException(what + ": short write (" + w + " of " + n + " bytes)");
    }
  }

  /** Adds {@code value} to an eventfd's counter (wakes a poll on it). */
  static void signalEventfd(int fd, long value) throws IOException {
    byte[] buf = new byte[8];
    for (int i = 0; i < 8; i++) {
      buf[i] = (byte) (value >>> (8 * i));
    }
    long w = libc().write(fd, buf, 8);
    if (w != 8) {
      throw error("write eventfd " + fd, errno());
    }
  }

  /**
   * Reads and resets an eventfd's counter (8 bytes, native little-endian); blocks when it is zero.
   */
  static long readEventfd(int fd) throws IOException {
    byte[] buf = new byte[8];
    long r = libc().read(fd, buf, 8);
    if (r != 8) {
      throw error("read eventfd " + fd, errno());
    }
    long v = 0;
    for (int i = 7; i >= 0; i--) {
      v = (v << 8) | (buf[i] & 0xffL);
    }
    return v;
  }

  /**
   * {@code poll} on {@code fds} for {@code events}; fills {@code revents} and returns the number of
   * ready descriptors, 0 on time-out or when interrupted (EINTR).
   */
  static int poll(int[] fds, short[] events, short[] revents, int timeoutMillis)
      throws IOException {
    LibC c = libc();
    int n = fds.length;
    Pointer p = Memory.allocateDirect(Loaded.RUNTIME, 8 * n, true);
    for (int i = 0; i < n; i++) {
      p.putInt(8L * i, fds[i]);
      p.putShort(8L * i + 4, events[i]);
      p.putShort(8L * i + 6, (short) 0);
    }
    int r = c.poll(p, n, timeoutMillis);
    if (r < 0) {
      int e = errno();
      if (e == EINTR) {
        return 0;
      }
      throw error("poll", e);
    }
    for (int i = 0; i < n; i++) {
      revents[i] = p.getShort(8L * i + 6);
    }
    return r;
  }

  /**
   * A direct (native) buffer of {@code size} bytes for {@link #pread}: allocated once by the
   * caller, so repeated reads allocate nothing on the Java heap.
   */
  static Pointer directBuffer(int size) throws IOException {
    libc();
    return Memory.allocateDirect(Loaded.RUNTIME, size, true);
  }

  /**
   * {@code pread(fd, buf, count, offset)} into a direct buffer; returns the bytes read (0 at end of
   * file). Retries on EINTR.
   */
  static int pread(int fd, Pointer buf, int count, long offset, String what) throws IOException {
    LibC c = libc();
    while (true) {
      long r = c.pread(fd, buf, count, offset);
      if (r >= 0) {
        return (int) r;
      }
      int e = errno();
      if (e != EINTR) {
        throw error(what, e);
      }
    }
  }

  /** {@code statvfs(path)}. */
  static StatVfs statvfs(Path path) throws IOException {
    LibC c = libc();
    Pointer buf = Memory.allocateDirect(Loaded.RUNTIME, STATVFS_SIZE, true);
    if (c.statvfs(path.toString(), buf) != 0) {
      throw error("statvfs " + path, errno());
    }
    return new StatVfs(
        buf.getLong(OFF_FRSIZE),
        buf.getLong(OFF_BLOCKS),
        buf.getLong(OFF_BFREE),
        buf.getLong(OFF_BAVAIL),
        buf.getLong(OFF_FILES),
        buf.getLong(OFF_FFREE));
  }

  /**
   * Sends {@code signal} to process {@code pid} through jnr-posix; returns false when the process
   * no longer exists (ESRCH).
   */
  static boolean kill(int pid, int signal) throws IOException {
    libc();
    if (pid <= 0) {
      throw new IOException("kill " + pid + ": refusing a non-positive pid");
    }
    if (Loaded.POSIX.kill(pid, signal) == 0) {
      return true;
    }
    int e = Loaded.POSIX.errno();
    if (e == ESRCH) {
      return false;
    }
    throw error("kill -" + signal + " " + pid, e);
  }
}
