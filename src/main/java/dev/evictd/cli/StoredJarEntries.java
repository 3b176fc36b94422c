package dev.evictd.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;

/**
 * A build step (the {@code pom.xml}'s {@code package} phase, on {@code target/lib}): rewrites each
 * jar of the distribution so that every resource (an entry other than a class file) of up to 64 KiB
 * is stored, not deflated. Same entries, same order, same bytes once read; class files and larger
 * resources keep their compression.
 *
 * <p>Why: the class loader reads each jar's manifest when it opens the jar (its {@code Class-Path}
 * and {@code Multi-Release} attributes), and the service lookups of SLF4J, logback and Drools open
 * every jar of the class path. A deflated entry is read through an {@code Inflater} that the JDK
 * then keeps in that jar's cache until the jar is closed, which the application class loader never
 * does: about 33 KiB of zlib state and window each, about 3 MiB for the 95 jars, resident for the
 * life of the agent. Stored entries are read without one. The classes themselves come from the
 * class-data sharing archive and are not read from the jars.
 */
public final class StoredJarEntries {

  /** The largest resource stored (bytes); larger ones keep their compression. */
  static final long LARGEST_STORED = 64 * 1024;

  private StoredJarEntries() {}

  /**
   * Rewrites every {@code *.jar} in each directory given.
   *
   * @param args directories of jars
   * @throws IOException if a jar cannot be read or written (the build fails, naming the jar)
   */
  public static void main(String[] args) throws IOException {
    if (args.length == 0) {
      throw new IllegalArgumentException("usage: StoredJarEntries DIR...");
    }
    for (String dir : args) {
      try (DirectoryStream<Path> jars = Files.newDirectoryStream(Path.of(dir), "*.jar")) {
        for (Path jar : jars) {
          rewrite(jar);
        }
      }
    }
  }

  /**
   * Rewrites one jar in place (through a temporary file beside it) if any entry other than a class
   * file is compressed; leaves it untouched (its modification time included) otherwise.
   *
   * @return whether the jar was rewritten
   */
  static boolean rewrite(Path jar) throws IOException {
    Path tmp = jar.resolveSibling(jar.getFileName() + ".tmp");
    try (ZipFile zip = new ZipFile(jar.toFile())) {
      List<ZipEntry> entries = new ArrayList<>();
      boolean needed = false;
      for (Enumeration<? extends ZipEntry> e = zip.entries(); e.hasMoreElements(); ) {
        ZipEntry entry = e.nextElement();
        entries.add(entry);
        needed |= storedHere(entry) && entry.getMethod() != ZipEntry.STORED;
      }
      if (!needed) {
        return false;
      }
      try (OutputStream file = Files.newOutputStream(tmp);
          ZipOutputStream out = new ZipOutputStream(file)) {
        if (zip.getComment() != null) {
          out.setComment(zip.getComment());
        }
        for (ZipEntry entry : entries) {
          copy(zip, entry, out);
        }
      }
    } catch (IOException | RuntimeException e) {
      Files.deleteIfExists(tmp);
      throw new IOException(jar + ": cannot store its entries: " + e, e);
    }
    Files.move(tmp, jar, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    return true;
  }

  /**
   * Whether an entry is one to store: a resource (not a class file, nor a directory) of at most
   * {@link #LARGEST_STORED} bytes. The larger ones (Jandex indexes, other platforms' native
   * libraries) are read once or never, and stored they would add about 8 MB to the distribution.
   */
  static boolean storedHere(ZipEntry entry) {
    return !entry.isDirectory()
        && !entry.getName().endsWith(".class")
        && entry.getSize() >= 0
        && entry.getSize() <= LARGEST_STORED;
  }

  private static void copy(ZipFile zip, ZipEntry entry, ZipOutputStream out) throws IOException {
    byte[] bytes;
    try (InputStream in = zip.getInputStream(entry)) {
      bytes = in.readAllBytes();
    }
    ZipEntry copy = new ZipEntry(entry.getName());
    copy.setTime(entry.getTime());
    if (entry.getComment() != null) {
      copy.setComment(entry.getComment());
    }
    if (entry.getExtra() != null) {
      copy.setExtra(entry.getExtra());
    }
    if (storedHere(entry) || entry.getMethod() == ZipEntry.STORED) {
      CRC32 crc = new CRC32();
      crc.update(bytes);
      copy.setMethod(ZipEntry.STORED);
      copy.setSize(bytes.length);
      copy.setCompressedSize(bytes.length);
      copy.setCrc(crc.getValue());
    } else {
      copy.setMethod(ZipEntry.DEFLATED);
    }
    out.putNextEntry(copy);
    out.write(bytes);
    out.closeEntry();
  }
}
