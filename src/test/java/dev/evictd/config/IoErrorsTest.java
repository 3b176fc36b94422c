package dev.evictd.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IoErrorsTest {
  @Test
  void fileErrorsThatCarryOnlyThePathGetTheirReasonInWords() {
    // what Files.list throws for a directory without read permission: the message is the path
    AccessDeniedException denied = new AccessDeniedException("/etc/evictd/rules");
    assertThat(denied.getMessage()).isEqualTo("/etc/evictd/rules");
    assertThat(IoErrors.reason(denied)).isEqualTo("permission denied");
    assertThat(IoErrors.reason(new NoSuchFileException("/x")))
        .isEqualTo("no such file or directory");
    assertThat(IoErrors.reason(new FileSystemException("/x", null, "Input/output error")))
        .isEqualTo("Input/output error");
    assertThat(IoErrors.reason(new IOException("disk on fire"))).isEqualTo("disk on fire");
    assertThat(IoErrors.reason(new IOException())).isEqualTo("input/output error");
  }

  @Test
  void networkTlsAndFileFailuresAreWordsNotClassNames() {
    assertThat(IoErrors.words(new java.net.ConnectException())).isEqualTo("connection refused");
    assertThat(IoErrors.words(new java.net.ConnectException("Connection refused")))
        .isEqualTo("Connection refused");
    assertThat(IoErrors.words(new java.net.UnknownHostException("api.invalid")))
        .isEqualTo("unknown host api.invalid");
    assertThat(IoErrors.words(new javax.net.ssl.SSLHandshakeException("no trusted certificate")))
        .isEqualTo("TLS handshake failed: no trusted certificate");
    assertThat(
            IoErrors.words(new java.net.http.HttpConnectTimeoutException("HTTP connect timed out")))
        .isEqualTo("connect timed out");
    assertThat(IoErrors.words(new NoSuchFileException("/no/ca.crt")))
        .isEqualTo("/no/ca.crt: no such file");
    assertThat(IoErrors.words(new IllegalStateException())).isEqualTo("unexpected error");
    assertThat(IoErrors.words(new IOException("first\nsecond"))).isEqualTo("first");
  }

  @Test
  void aFileThatCannotBeReadOrWrittenSaysWhyInWords(@TempDir Path dir) throws IOException {
    Path file = Files.writeString(dir.resolve("f"), "x");
    Path missing = dir.resolve("missing");
    // what opening a file without read permission throws (as root, as the tests run, none is)
    assertThat(IoErrors.cannotRead(file, new AccessDeniedException(file.toString())))
        .isEqualTo("cannot read: permission denied");
    assertThat(IoErrors.cannotWrite(file, new AccessDeniedException(file.toString())))
        .isEqualTo("cannot write: permission denied");
    assertThat(IoErrors.cannotRead(missing, new NoSuchFileException(missing.toString())))
        .isEqualTo("no such file");
    // reading a directory: the JDK's reason is the C library's "Is a directory"
    IOException isDir = new FileSystemException(dir.toString(), null, "Is a directory");
    assertThat(IoErrors.cannotRead(dir, isDir)).isEqualTo("is a directory, not a file");
    assertThat(IoErrors.cannotWrite(dir, isDir)).isEqualTo("is a directory, not a file");

    assertThat(IoErrors.notAFile(file)).isNull();
    assertThat(IoErrors.unreadable(file)).isNull();
    assertThat(IoErrors.notAFile(missing)).isEqualTo("no such file");
    assertThat(IoErrors.unreadable(dir)).isEqualTo("is a directory, not a file");
    assertThat(IoErrors.notAFile(Path.of("/dev/null"))).isEqualTo("not a regular file");
    assertThat(IoErrors.notAFile(file.resolve("below"))).isEqualTo("cannot read: Not a directory");
  }
}
