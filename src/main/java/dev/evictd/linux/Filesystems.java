package dev.evictd.linux;

import java.io.IOException;
import java.nio.file.Path;

/** Filesystem capacity and inode figures through {@code statvfs(3)}. */
public final class Filesystems {
  private Filesystems() {}

  /**
   * Capacity, free space and inodes of the filesystem holding a path, as {@code df} reports them.
   *
   * @param capacityBytes {@code f_blocks × f_frsize}
   * @param freeBytes {@code f_bfree × f_frsize}, including blocks reserved for root
   * @param availableBytes {@code f_bavail × f_frsize}, what unprivileged users may still write
   * @param inodes {@code f_files}
   * @param inodesFree {@code f_ffree}
   */
  public record Usage(
      long capacityBytes, long freeBytes, long availableBytes, long inodes, long inodesFree) {
    /** Bytes in use, as df counts them: capacity − free. */
    public long usedBytes() {
      return capacityBytes - freeBytes;
    }

    /** Inodes in use: inodes − free inodes. */
    public long inodesUsed() {
      return inodes - inodesFree;
    }
  }

  /** Whether statvfs can be called (libc is bound). */
  public static boolean available() {
    return Native.available();
  }

  /** statvfs of the filesystem holding {@code path}. */
  public static Usage usage(Path path) throws IOException {
    Native.StatVfs s = Native.statvfs(path);
    long f = s.fragmentSize();
    return new Usage(
        s.blocks() * f, s.blocksFree() * f, s.blocksAvailable() * f, s.files(), s.filesFree());
  }
}
