package dev.evictd.cli;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import org.slf4j.LoggerFactory;

/** Switches the agent's logs between text (the default, {@link LogbackDefaults}) and JSON lines. */
final class Logging {
  private Logging() {}

  /** Logs JSON lines to stderr, keeping the configured levels. */
  static void json() {
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx)) {
      return;
    }
    ch.qos.logback.classic.Logger root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.detachAndStopAllAppenders();
    JsonEncoder encoder = new JsonEncoder();
    encoder.setContext(ctx);
    encoder.setWithSequenceNumber(false);
    encoder.setWithNanoseconds(false);
    encoder.setWithContext(false);
    encoder.setWithArguments(false);
    encoder.setWithFormattedMessage(true);
    encoder.setWithMessage(false);
    encoder.start();
    ConsoleAppender<ILoggingEvent> appender = new ConsoleAppender<>();
    appender.setContext(ctx);
    appender.setName("stderr-json");
    appender.setTarget("System.err");
    appender.setEncoder(encoder);
    appender.start();
    root.addAppender(appender);
  }
}
