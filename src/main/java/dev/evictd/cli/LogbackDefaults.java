package dev.evictd.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import ch.qos.logback.core.spi.ContextAwareBase;
import ch.qos.logback.core.status.NopStatusListener;
import java.util.Map;

/**
 * evictd's logging set up in code, found by logback as a service: text lines on stderr, Drools' and
 * the API client's chatter turned down ({@link Logging#json()} switches the agent to JSON lines).
 *
 * <p>In code rather than a {@code logback.xml} because reading an XML configuration loads logback's
 * configuration framework and the JDK's XML parser (about 500 classes) into every evictd process,
 * the agent's included, for a fixed handful of settings. A configuration file still wins when one
 * is given: {@code -Dlogback.configurationFile=FILE}, or a {@code logback-test.xml} on the class
 * path (the tests' quiet one).
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_NORMAL_PRIORITY)
public final class LogbackDefaults extends ContextAwareBase implements Configurator {
  /** The text line: time with offset, level, logger's simple name, message ({@link LogLine}). */
  static final String PATTERN = "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level %logger{0} - %msg%n";

  /** The root logger's level. */
  static final Level ROOT = Level.INFO;

  /** Loggers whose level differs from the root's. */
  static final Map<String, Level> LEVELS =
      Map.of(
          // Drools' own start-up chatter and compile diagnostics (evictd reports those itself)
          "org.drools", Level.ERROR,
          "org.kie", Level.ERROR,
          "org.drools.compiler.kie.builder.impl", Level.OFF,
          "io.fabric8", Level.WARN,
          "org.jboss", Level.WARN,
          // the pod informer reports its own failures once per streak; fabric8 would log a stack
          // trace per retry
          "io.fabric8.kubernetes.client.informers.impl.cache.Reflector", Level.ERROR);

  /** Made by logback's service lookup. */
  public LogbackDefaults() {}

  @Override
  public ExecutionStatus configure(LoggerContext context) {
    if (System.getProperty("logback.configurationFile") != null
        || LogbackDefaults.class.getClassLoader().getResource("logback-test.xml") != null) {
      // a configuration file was asked for or is present: logback's own configurator reads it
      return ExecutionStatus.INVOKE_NEXT_IF_ANY;
    }
    apply(context);
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }

  /** Sets evictd's levels and its stderr appender on a context. */
  static void apply(LoggerContext context) {
    // logback's own status messages stay quiet, as evictd reports its problems itself
    NopStatusListener quiet = new NopStatusListener();
    context.getStatusManager().add(quiet);
    LogLine layout = new LogLine(java.time.ZoneId.systemDefault());
    layout.setContext(context);
    layout.start();
    LayoutWrappingEncoder<ILoggingEvent> encoder = new LayoutWrappingEncoder<>();
    encoder.setContext(context);
    encoder.setLayout(layout);
    encoder.start();
    ConsoleAppender<ILoggingEvent> appender = new ConsoleAppender<>();
    appender.setContext(context);
    appender.setName("stderr");
    appender.setTarget("System.err");
    appender.setEncoder(encoder);
    appender.start();
    LEVELS.forEach((name, level) -> context.getLogger(name).setLevel(level));
    ch.qos.logback.classic.Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.setLevel(ROOT);
    root.addAppender(appender);
  }
}
