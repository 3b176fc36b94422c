package dev.evictd.cli;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.CoreConstants;
import ch.qos.logback.core.LayoutBase;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;

/**
 * evictd's text log line, {@link LogbackDefaults#PATTERN} written out in code: the time with its
 * offset, the level, the logger's simple name, the message, and a throwable's stack trace as
 * logback prints it.
 *
 * <p>In code rather than a {@code PatternLayout} because that layout's set-up (its pattern parser
 * and converter table, about 70 lambdas spun at run time, which no class-data archive of JDK 17
 * keeps) cost every evictd command tens of milliseconds of CPU before its first line.
 */
final class LogLine extends LayoutBase<ILoggingEvent> {
  private final ZoneId zone;

  LogLine(ZoneId zone) {
    this.zone = zone;
  }

  @Override
  public String doLayout(ILoggingEvent event) {
    StringBuilder b = new StringBuilder(128);
    time(b, Instant.ofEpochMilli(event.getTimeStamp()).atZone(zone));
    b.append(' ');
    String level = event.getLevel().toString();
    b.append(level);
    for (int i = level.length(); i < 5; i++) {
      b.append(' ');
    }
    b.append(' ');
    String logger = event.getLoggerName();
    b.append(logger, logger.lastIndexOf('.') + 1, logger.length());
    b.append(" - ").append(event.getFormattedMessage()).append(CoreConstants.LINE_SEPARATOR);
    IThrowableProxy t = event.getThrowableProxy();
    if (t != null) {
      b.append(ThrowableProxyUtil.asString(t));
    }
    return b.toString();
  }

  /** yyyy-MM-dd'T'HH:mm:ss.SSSXXX */
  private static void time(StringBuilder b, ZonedDateTime t) {
    digits(b, t.getYear(), 4).append('-');
    digits(b, t.getMonthValue(), 2).append('-');
    digits(b, t.getDayOfMonth(), 2).append('T');
    digits(b, t.getHour(), 2).append(':');
    digits(b, t.getMinute(), 2).append(':');
    digits(b, t.getSecond(), 2).append('.');
    digits(b, t.getNano() / 1_000_000, 3);
    int offset = t.getOffset().getTotalSeconds();
    if (offset == 0) {
      b.append('Z');
      return;
    }
    b.append(offset < 0 ? '-' : '+');
    int abs = Math.abs(offset);
    digits(b, abs / 3600, 2).append(':');
    digits(b, abs / 60 % 60, 2);
  }

  private static StringBuilder digits(StringBuilder b, int v, int width) {
    String s = Integer.toString(v);
    for (int i = s.length(); i < width; i++) {
      b.append('0');
    }
    return b.append(s);
  }
}
