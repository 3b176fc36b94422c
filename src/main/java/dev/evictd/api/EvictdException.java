package dev.evictd.api;

/**
 * The one unchecked exception root of evictd; the CLI maps subtypes to exit codes and one-line
 * messages.
 *
 * <p>Messages about input are kept to one line of bounded length whatever they quote: control
 * characters (a newline in a quoted value) are escaped, and a message past {@value #MAX_MESSAGE}
 * characters (an enormous value echoed back) keeps its head, where the file and line are, and its
 * tail. Rule set errors list one problem per line and keep them (see {@link RulesException}).
 */
public class EvictdException extends RuntimeException {
  /** The longest message kept whole. */
  public static final int MAX_MESSAGE = 1_000;

  public EvictdException(String message) {
    super(oneLine(message));
  }

  public EvictdException(String message, Throwable cause) {
    super(oneLine(message), cause);
  }

  /**
   * A message kept as written when {@code keepLines} (one problem per line), else made one bounded
   * line.
   */
  protected EvictdException(String message, Throwable cause, boolean keepLines) {
    super(keepLines ? message : oneLine(message), cause);
  }

  /** {@code message} as one line of at most about {@link #MAX_MESSAGE} characters. */
  public static String oneLine(String message) {
    if (message == null) {
      return null;
    }
    StringBuilder b = new StringBuilder(Math.min(message.length(), MAX_MESSAGE + 64));
    int n = message.length();
    for (int i = 0; i < n; i++) {
      if (n > MAX_MESSAGE && i == MAX_MESSAGE * 7 / 10) {
        int tail = n - MAX_MESSAGE * 3 / 10;
        b.append("... (").append(tail - i).append(" characters) ...");
        i = tail;
      }
      char c = message.charAt(i);
      switch (c) {
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20 || c == 0x7f || c == '\u0085' || c == '\u2028' || c == '\u2029') {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.toString();
  }
}
