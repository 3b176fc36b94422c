package dev.evictd.ruleset;

import dev.evictd.api.RulesException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Where a rule set comes from and whether to trust it: rule files and the directories above them
 * must be writable only by root or evictd's own user (whoever else could write them could run code
 * as evictd), and a rule set may be pinned to the SHA-256 of its sources.
 */
public final class RuleProvenance {
  private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");
  private static final int GROUP_WRITE = 0020;
  private static final int OTHERS_WRITE = 0002;
  private static final int STICKY = 01000;

  private final int uid;
  private final Set<Path> checked = new HashSet<>();

  /** A check trusting root and the given user id. */
  public RuleProvenance(int uid) {
    this.uid = uid;
  }

  /** A check trusting root and the user evictd runs as. */
  public static RuleProvenance forCurrentUser() {
    return new RuleProvenance(currentUid());
  }

  /** The user id this process runs as. */
  static int currentUid() {
    try {
      return (int) new com.sun.security.auth.module.UnixSystem().getUid();
    } catch (RuntimeException | LinkageError e) {
      try {
        return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).intValue();
      } catch (IOException | RuntimeException e2) {
        throw new IllegalStateException("cannot tell which user evictd runs as", e2);
      }
    }
  }

  /**
   * The problems with a rule file or directory: it, and every directory above it (links resolved),
   * must be owned by root or this user and not writable by group or others; a directory above it
   * may be writable by others when its sticky bit is set ({@code /tmp}), since others cannot then
   * replace what is in it. Empty when it is safe.
   */
  public List<String> problems(Path path) {
    List<String> out = new ArrayList<>();
    Path real;
    try {
      real = path.toRealPath();
    } catch (IOException e) {
      out.add(path + ": cannot resolve: " + dev.evictd.config.IoErrors.reason(e));
      return out;
    }
    check(path, real, false, out);
    for (Path p = real.getParent(); p != null; p = p.getParent()) {
      check(p, p, true, out);
    }
    return out;
  }

  private void check(Path shown, Path real, boolean ancestor, List<String> out) {
    if (ancestor && !checked.add(real)) {
      return;
    }
    int mode;
    int owner;
    try {
      Map<String, Object> a =
          Files.readAttributes(real, "unix:mode,uid", LinkOption.NOFOLLOW_LINKS);
      mode = ((Number) a.get("mode")).intValue();
      owner = ((Number) a.get("uid")).intValue();
    } catch (UnsupportedOperationException | IllegalArgumentException e) {
      posix(shown, real, ancestor, out);
      return;
    } catch (IOException e) {
      out.add(shown + ": cannot read its owner and mode: " + dev.evictd.config.IoErrors.reason(e));
      return;
    }
    String what = shown.equals(real) ? shown.toString() : shown + " (" + real + ")";
    if (owner != 0 && owner != uid) {
      out.add(
          what + ": owned by uid " + owner + ", not by root or evictd's user (uid " + uid + ")");
    }
    boolean writable = (mode & (GROUP_WRITE | OTHERS_WRITE)) != 0;
    boolean sticky = (mode & STICKY) != 0 && Files.isDirectory(real);
    if (writable && !(ancestor && sticky)) {
      out.add(
          what
              + ": writable by "
              + ((mode & GROUP_WRITE) != 0
                  ? ((mode & OTHERS_WRITE) != 0 ? "group and others" : "group")
                  : "others")
              + " (mode "
              + String.format("%04o", mode & 07777)
              + ")");
    }
  }

  /**
   * The same check where the file system has no "unix" attribute view: owner by name, no sticky
   * bit.
   */
  private void posix(Path shown, Path real, boolean ancestor, List<String> out) {
    try {
      PosixFileAttributes a =
          Files.readAttributes(real, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      String owner = a.owner().getName();
      String me = System.getProperty("user.name");
      if (!owner.equals("root") && !owner.equals(me)) {
        out.add(shown + ": owned by " + owner + ", not by root or evictd's user (" + me + ")");
      }
      Set<PosixFilePermission> p = a.permissions();
      if (p.contains(PosixFilePermission.GROUP_WRITE)
          || p.contains(PosixFilePermission.OTHERS_WRITE)) {
        out.add(shown + ": writable by group or others (" + PosixFilePermissions.toString(p) + ")");
      }
    } catch (IOException e) {
      out.add(shown + ": cannot read its owner and mode: " + dev.evictd.config.IoErrors.reason(e));
    } catch (UnsupportedOperationException e) {
      out.add(shown + ": cannot read its owner and mode: " + e.getMessage());
    }
  }

  /**
   * The pin as 64 lower-case hexadecimal digits; {@code sha256:} in front is accepted.
   *
   * @throws RulesException when it is not a SHA-256
   */
  public static String normalizePin(String pin) {
    String p = pin.trim().toLowerCase(Locale.ROOT);
    if (p.startsWith("sha256:")) {
      p = p.substring("sha256:".length());
    }
    if (!SHA256.matcher(p).matches()) {
      throw new RulesException(
          "--rules-sha256: \"" + pin + "\" is not a SHA-256 (64 hexadecimal digits)");
    }
    return p;
  }

  /** Refuses a rule set whose SHA-256 is not the pinned one. */
  public static void requirePinned(String source, String sha256, String pin) {
    String expected = normalizePin(pin);
    if (!expected.equals(sha256)) {
      throw new RulesException(
          source
              + ": the rule set's SHA-256 is "
              + sha256
              + ", not the pinned "
              + expected
              + " (--rules-sha256)");
    }
  }
}
