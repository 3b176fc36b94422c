package dev.evictd.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import org.junit.jupiter.api.Test;

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
  }
}
