package dev.evictd.cli;

import java.io.FilterWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;

/**
 * Everything a command prints, with the characters that could drive a terminal or hide text
 * escaped: C0 and C1 control characters other than newline and tab (an ESC starts a terminal escape
 * sequence), DEL, and format characters (bidirectional overrides, zero-width characters) become
 * {@code \xNN} or {@code \}{@code uNNNN}. Pod names, messages and rule names come from inputs and
 * rules, and are printed by every human output; escaping at the one writer every command prints
 * through covers them all.
 */
final class TerminalSafeWriter extends FilterWriter {
  private TerminalSafeWriter(Writer out) {
    super(out);
  }

  /** {@code out}, escaping as above. */
  static PrintWriter wrap(PrintWriter out) {
    return new PrintWriter(new TerminalSafeWriter(out), true);
  }

  static boolean unsafe(char c) {
    if (c == '\n' || c == '\t') {
      return false;
    }
    int type = Character.getType(c);
    return type == Character.CONTROL
        || type == Character.FORMAT
        || type == Character.LINE_SEPARATOR
        || type == Character.PARAGRAPH_SEPARATOR;
  }

  /** {@code c} as printed. */
  static String escaped(char c) {
    return c < 0x100 ? String.format("\\x%02x", (int) c) : String.format("\\u%04x", (int) c);
  }

  @Override
  public void write(int c) throws IOException {
    if (unsafe((char) c)) {
      out.write(escaped((char) c));
    } else {
      out.write(c);
    }
  }

  @Override
  public void write(char[] buf, int off, int len) throws IOException {
    int start = off;
    for (int i = off; i < off + len; i++) {
      if (unsafe(buf[i])) {
        out.write(buf, start, i - start);
        out.write(escaped(buf[i]));
        start = i + 1;
      }
    }
    out.write(buf, start, off + len - start);
  }

  @Override
  public void write(String s, int off, int len) throws IOException {
    write(s.toCharArray(), off, len);
  }
}
