package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/**
 * Control and format characters from inputs are escaped in every human output (issue 48, class 5: a
 * pod name with a terminal escape printed raw by {@code plan}).
 */
class TerminalSafeOutputTest {
  @Test
  void escapesControlAndFormatCharactersAndKeepsNewlinesAndTabs() {
    StringWriter s = new StringWriter();
    PrintWriter w = TerminalSafeWriter.wrap(new PrintWriter(s));
    w.println("pod \u001b[2Jweb\u202e\u200b\tok\r");
    w.flush();
    assertThat(s.toString()).isEqualTo("pod \\x1b[2Jweb\\u202e\\u200b\tok\\x0d\n");
  }

  @Test
  void aCommandsOutputCarriesNoRawEscape() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code =
        Main.execute(
            new String[] {"rules", "check", "/nonexistent/\u001b]0;owned\u0007rules"},
            new PrintWriter(out),
            new PrintWriter(err));
    assertThat(code).isNotZero();
    String all = out + "" + err;
    assertThat(all).contains("\\x1b]0;owned\\x07rules");
    assertThat(all.chars().filter(c -> c == 0x1b || c == 0x07)).isEmpty();
  }
}
