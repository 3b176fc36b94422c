package dev.evictd.linux;

import java.io.IOException;
import java.nio.file.Path;
import jnr.ffi.Pointer;

/**
 * One memory usage file kept open and read with one {@code pread} at offset 0 into a native buffer
 * allocated once, parsed in place: a read allocates nothing on the Java heap, so a poll every few
 * milliseconds costs the read and no garbage. Two kinds: a file holding one integer ({@code
 * memory.usage_in_bytes} on v1, {@code memory.current} on v2) and a v2 {@code memory.stat}, whose
 * {@code anon + file} is the usage of the v2 root cgroup (which has no {@code memory.current}).
 *
 * <p>Not thread-safe: one poll thread owns it.
 */
final class UsageFile implements AutoCloseable {
  /** What the file holds and how usage is taken from it. */
  enum Kind {
    /** One integer. */
    VALUE,
    /** {@code key value} lines; usage is {@code anon + file}. */
    STAT_ANON_PLUS_FILE
  }

  /** Big enough for a v2 root memory.stat (about 1.5 KiB on 6.1) with room to spare. */
  static final int BUFFER = 16 * 1024;

  private static final byte[] ANON = {'a', 'n', 'o', 'n', ' '};
  private static final byte[] FILE = {'f', 'i', 'l', 'e', ' '};

  private final Path path;
  private final Kind kind;
  private final Pointer buf;
  private final String what;
  private int fd;

  /** Opens {@code path}; throws with the path and strerror when it cannot. */
  UsageFile(Path path, Kind kind) throws IOException {
    this.path = path;
    this.kind = kind;
    this.buf = Native.directBuffer(BUFFER);
    this.what = "pread " + path;
    this.fd = Native.open(path, Native.O_RDONLY);
  }

  /** The file read. */
  Path path() {
    return path;
  }

  /** The kind of file. */
  Kind kind() {
    return kind;
  }

  /**
   * Reads the usage in bytes now; throws when the read fails or the text holds no usage (the file
   * named in the message).
   */
  long read() throws IOException {
    if (fd < 0) {
      throw new IOException(path + " is closed");
    }
    int n = Native.pread(fd, buf, BUFFER, 0, what);
    long v = kind == Kind.VALUE ? parseValue(buf, n) : parseAnonPlusFile(buf, n);
    if (v < 0) {
      throw new IOException(
          path + ": no " + (kind == Kind.VALUE ? "integer" : "anon and file lines") + " in it");
    }
    return v;
  }

  /** The leading non-negative integer of the first {@code n} bytes, or -1 when there is none. */
  static long parseValue(Pointer p, int n) {
    return number(p, 0, n);
  }

  private static long number(Pointer p, int from, int n) {
    long v = 0;
    int i = from;
    while (i < n && p.getByte(i) == ' ') {
      i++;
    }
    int start = i;
    while (i < n) {
      byte b = p.getByte(i);
      if (b < '0' || b > '9') {
        break;
      }
      v = v * 10 + (b - '0');
      i++;
    }
    return i == start ? -1 : v;
  }

  /** {@code anon + file} of memory.stat text, or -1 when either line is missing. */
  static long parseAnonPlusFile(Pointer p, int n) {
    long anon = -1;
    long file = -1;
    int line = 0;
    while (line < n && (anon < 0 || file < 0)) {
      if (anon < 0 && startsWith(p, line, n, ANON)) {
        anon = number(p, line + ANON.length, n);
      } else if (file < 0 && startsWith(p, line, n, FILE)) {
        file = number(p, line + FILE.length, n);
      }
      while (line < n && p.getByte(line) != '\n') {
        line++;
      }
      line++;
    }
    return anon < 0 || file < 0 ? -1 : anon + file;
  }

  private static boolean startsWith(Pointer p, int at, int n, byte[] key) {
    if (at + key.length > n) {
      return false;
    }
    for (int k = 0; k < key.length; k++) {
      if (p.getByte(at + k) != key[k]) {
        return false;
      }
    }
    return true;
  }

  @Override
  public void close() {
    Native.close(fd);
    fd = -1;
  }
}
