package dev.evictd.ruleset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.RulesException;
import dev.evictd.engine.RuleSet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Rule files others could write are refused, naming the path and mode; pins match the rule set's
 * SHA-256.
 */
class RuleProvenanceTest {
  static final String RULE =
      "package dev.evictd.rules;\nimport dev.evictd.api.*;\nrule \"r\" when PodFact() then end\n";

  @TempDir Path dir;
  Path rules;
  Path file;
  RuleProvenance me;

  @BeforeEach
  void rulesOnlyTheirOwnerCanWrite() throws IOException {
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    rules = Files.createDirectory(dir.resolve("rules"));
    Files.setPosixFilePermissions(rules, PosixFilePermissions.fromString("rwxr-xr-x"));
    file = Files.writeString(rules.resolve("r.drl"), RULE);
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
    me = RuleProvenance.forCurrentUser();
  }

  @Test
  void filesAndDirectoriesOnlyTheirOwnerCanWriteAreAccepted() {
    // the directories above (the temporary directory's parents, e.g. /tmp with its sticky bit) are
    // fine too
    assertThat(me.problems(file)).isEmpty();
    assertThat(me.problems(rules)).isEmpty();
  }

  @Test
  void aFileTheGroupOrOthersCanWriteIsRefusedWithItsMode() throws IOException {
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-rw-r--"));
    assertThat(me.problems(file)).containsExactly(file + ": writable by group (mode 0664)");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--rw-"));
    assertThat(me.problems(file)).containsExactly(file + ": writable by others (mode 0646)");
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-rw-rw-"));
    assertThat(me.problems(file))
        .containsExactly(file + ": writable by group and others (mode 0666)");
  }

  @Test
  void aDirectoryOthersCanWriteIsRefusedForTheFilesBelowIt() throws IOException {
    Files.setPosixFilePermissions(rules, PosixFilePermissions.fromString("rwxrwxrwx"));
    assertThat(me.problems(file))
        .containsExactly(rules + ": writable by group and others (mode 0777)");
    assertThat(me.problems(rules))
        .containsExactly(rules + ": writable by group and others (mode 0777)");
  }

  @Test
  void aFileOwnedBySomeoneElseIsRefused() throws IOException {
    int owner = ((Number) Files.getAttribute(file, "unix:uid")).intValue();
    if (owner == 0) {
      // running as root: hand the file to another user (root may), since root's files are always
      // trusted
      Files.setAttribute(file, "unix:uid", 4242);
      owner = 4242;
    }
    assertThat(new RuleProvenance(owner).problems(file)).isEmpty();
    int someoneElse = owner + 1;
    assertThat(new RuleProvenance(someoneElse).problems(file))
        .contains(
            file
                + ": owned by uid "
                + owner
                + ", not by root or evictd's user (uid "
                + someoneElse
                + ")");
  }

  @Test
  void aLinkIsJudgedByWhatItPointsTo() throws IOException {
    Path elsewhere = Files.createDirectory(dir.resolve("elsewhere"));
    Path target = Files.writeString(elsewhere.resolve("t.drl"), RULE);
    Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rw-rw-rw-"));
    Path link = Files.createSymbolicLink(rules.resolve("link.drl"), target);
    assertThat(me.problems(link))
        .containsExactly(
            link + " (" + target.toRealPath() + "): writable by group and others (mode 0666)");
  }

  @Test
  void loadingEnforcesOrWarnsAsAsked() throws IOException {
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-rw-rw-"));
    RuleCompiler.Options enforce =
        RuleCompiler.Options.STRICT.withOwnership(RuleCompiler.Ownership.ENFORCE);
    assertThatThrownBy(() -> RuleCompiler.compile(rules, enforce))
        .isInstanceOf(RulesException.class)
        .hasMessageStartingWith(file + ": writable by group and others (mode 0666)")
        .hasMessageEndingWith("(rule files must be writable only by root or evictd's user)");
    RuleSet warned =
        RuleCompiler.compile(rules, enforce.withOwnership(RuleCompiler.Ownership.WARN));
    assertThat(warned.warnings())
        .containsExactly(file + ": writable by group and others (mode 0666)");
    assertThat(RuleCompiler.compile(rules).warnings()).isEmpty();
  }

  @Test
  void aPinnedRuleSetLoadsOnlyWithItsSha256() {
    String sha = RuleCompiler.sha256(RuleCompiler.read(rules));
    assertThat(
            RuleCompiler.compile(
                    rules, RuleCompiler.Options.STRICT.withPin("SHA256:" + sha.toUpperCase()))
                .sha256())
        .isEqualTo(sha);
    String other = "0".repeat(64);
    assertThatThrownBy(
            () -> RuleCompiler.compile(rules, RuleCompiler.Options.STRICT.withPin(other)))
        .isInstanceOf(RulesException.class)
        .hasMessage(
            rules
                + ": the rule set's SHA-256 is "
                + sha
                + ", not the pinned "
                + other
                + " (--rules-sha256)");
    assertThatThrownBy(
            () -> RuleCompiler.compileDefault(RuleCompiler.Options.STRICT.withPin("abc")))
        .isInstanceOf(RulesException.class)
        .hasMessage("--rules-sha256: \"abc\" is not a SHA-256 (64 hexadecimal digits)");
  }
}
