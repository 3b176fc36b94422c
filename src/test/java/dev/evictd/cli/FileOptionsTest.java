package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.fixture.CapturedInputs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The options that name a file: a missing file, a directory where a file is expected and a file
 * that cannot be read or written each get their own plain line naming the option and the file.
 * (Permission denied is worded by {@link dev.evictd.config.IoErrors}, see its test: as root, as the
 * tests run here, every file is readable.)
 */
class FileOptionsTest {
  static final String FIXTURE = "fixtures/pid/pid-pressure.yaml";

  /** A command line reading {@code file} through one of its input options, by that option. */
  record Reads(String option, List<String> args) {}

  static List<Reads> readers(Path file) {
    String f = file.toString();
    String ok = FIXTURE; // a file that is there
    List<Reads> r = new ArrayList<>();
    r.add(new Reads("--config", List.of("plan", "--config", f, "--pods", ok, "--summary", ok)));
    r.add(new Reads("--pods", List.of("plan", "--config", ok, "--pods", f, "--summary", ok)));
    r.add(new Reads("--summary", List.of("plan", "--config", ok, "--pods", ok, "--summary", f)));
    r.add(new Reads("--config", List.of("run", "--config", f)));
    r.add(new Reads("--pods", List.of("doctor", "--pods", f)));
    r.add(
        new Reads(
            "--tls-cert-file",
            List.of("admission-webhook", "--tls-cert-file", f, "--tls-key-file", ok)));
    r.add(
        new Reads(
            "--tls-key-file",
            List.of("admission-webhook", "--tls-cert-file", ok, "--tls-key-file", f)));
    r.add(new Reads("FIXTURE", List.of("replay", f)));
    r.add(new Reads("FIXTURE", List.of("explain", f)));
    return r;
  }

  @Test
  void aMissingFileIsNoSuchFile(@TempDir Path dir) {
    Path missing = dir.resolve("missing.yaml");
    for (Reads r : readers(missing)) {
      CliTest.Run run = CliTest.run(r.args().toArray(String[]::new));
      assertThat(run.code()).as(r.args().toString()).isEqualTo(Main.BAD_INPUT);
      assertThat(run.err())
          .as(r.args().toString())
          .isEqualTo("evictd: " + r.option() + " " + missing + ": no such file\n");
      assertThat(run.out()).as(r.args().toString()).isEmpty();
    }
  }

  @Test
  void aDirectoryIsNotAFile(@TempDir Path dir) {
    for (Reads r : readers(dir)) {
      CliTest.Run run = CliTest.run(r.args().toArray(String[]::new));
      assertThat(run.code()).as(r.args().toString()).isEqualTo(Main.BAD_INPUT);
      assertThat(run.err())
          .as(r.args().toString())
          .isEqualTo("evictd: " + r.option() + " " + dir + ": is a directory, not a file\n");
    }
  }

  @Test
  void aDirectoryWhereAFileIsWrittenIsNotAFile(@TempDir Path dir) {
    CliTest.Run junit = CliTest.run("test", "--junit-xml", dir.toString(), "fixtures/pid");
    assertThat(junit.code()).isEqualTo(Main.BAD_INPUT);
    assertThat(junit.err())
        .isEqualTo("evictd: --junit-xml " + dir + ": is a directory, not a file\n");
    assertThat(junit.out()).as("refused before the fixtures run").isEmpty();
    CliTest.Run capture = CliTest.run("capture", "--node", "n", "-o", dir.toString());
    assertThat(capture.err())
        .isEqualTo("evictd: --output " + dir + ": is a directory, not a file\n");
    CliTest.Run html = CliTest.run("replay", "--html", dir.toString(), FIXTURE);
    assertThat(html.code()).isEqualTo(Main.BAD_INPUT);
    // it said "cannot write: FileSystemException DIR: Is a directory"
    assertThat(html.err()).isEqualTo("evictd: --html " + dir + ": is a directory, not a file\n");
  }

  @Test
  void theReadAfterTheCheckWordsItTheSame(@TempDir Path dir) throws IOException {
    // a file that goes away between the command line's check and the read
    Path sub = Files.createDirectory(dir.resolve("f.yaml"));
    assertThatThrownBy(() -> CapturedInputs.read(sub))
        .hasMessage(sub + ": is a directory, not a file");
    assertThatThrownBy(() -> CapturedInputs.read(dir.resolve("none")))
        .hasMessage(dir.resolve("none") + ": no such file");
  }
}
