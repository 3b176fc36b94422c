package dev.evictd.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Rule directories and files for the agent, created with explicit modes (0755, 0644) whatever the
 * umask. The agent refuses rules writable by group or others; with a umask of 002 (usual for users
 * with a group of their own) every file a test writes the plain way is group-writable, and the
 * agent tests failed on that host state alone.
 */
public final class RuleFiles {
  private RuleFiles() {}

  /** Creates the directory {@code dir} with mode 0755. */
  public static Path createDirectory(Path dir) throws IOException {
    return Files.createDirectory(
        dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
  }

  /** Writes {@code text} (UTF-8) to {@code file}, creating it with mode 0644 when it is missing. */
  public static Path write(Path file, String text) throws IOException {
    return write(file, text.getBytes(StandardCharsets.UTF_8));
  }

  /** Copies {@code from} over {@code to}, creating it with mode 0644 when it is missing. */
  public static Path copy(Path from, Path to) throws IOException {
    return write(to, Files.readAllBytes(from));
  }

  private static Path write(Path file, byte[] bytes) throws IOException {
    if (!Files.exists(file, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      Files.createFile(
          file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r--r--")));
    }
    return Files.write(file, bytes);
  }
}
