package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import ch.qos.logback.core.status.NopStatusListener;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

class LogbackDefaultsTest {
  static List<Appender<ILoggingEvent>> appenders(ch.qos.logback.classic.Logger logger) {
    List<Appender<ILoggingEvent>> all = new ArrayList<>();
    logger.iteratorForAppenders().forEachRemaining(all::add);
    return all;
  }

  @Test
  void theAgentsLevelsAndItsStderrLineAreSetInCode() {
    LoggerContext ctx = new LoggerContext();
    LogbackDefaults.apply(ctx);
    assertThat(ctx.getLogger("ROOT").getLevel()).isEqualTo(Level.INFO);
    assertThat(ctx.getLogger("org.drools").getLevel()).isEqualTo(Level.ERROR);
    assertThat(ctx.getLogger("org.kie").getLevel()).isEqualTo(Level.ERROR);
    assertThat(ctx.getLogger("org.drools.compiler.kie.builder.impl").getLevel())
        .isEqualTo(Level.OFF);
    assertThat(ctx.getLogger("io.fabric8").getLevel()).isEqualTo(Level.WARN);
    assertThat(ctx.getLogger("org.jboss").getLevel()).isEqualTo(Level.WARN);
    assertThat(
            ctx.getLogger("io.fabric8.kubernetes.client.informers.impl.cache.Reflector").getLevel())
        .isEqualTo(Level.ERROR);
    // inherited as before: a Drools logger below the ERROR line is quiet, evictd's own INFO is not
    assertThat(ctx.getLogger("org.drools.core.Foo").isWarnEnabled()).isFalse();
    assertThat(ctx.getLogger("dev.evictd.agent.Agent").isInfoEnabled()).isTrue();
    assertThat(ctx.getLogger("dev.evictd.agent.Agent").isDebugEnabled()).isFalse();
    assertThat(ctx.getStatusManager().getCopyOfStatusListenerList())
        .hasAtLeastOneElementOfType(NopStatusListener.class);

    List<Appender<ILoggingEvent>> root = appenders(ctx.getLogger("ROOT"));
    assertThat(root).hasSize(1);
    ConsoleAppender<ILoggingEvent> stderr = (ConsoleAppender<ILoggingEvent>) root.get(0);
    assertThat(stderr.getName()).isEqualTo("stderr");
    assertThat(stderr.getTarget()).isEqualTo("System.err");
    assertThat(stderr.isStarted()).isTrue();
    LayoutWrappingEncoder<ILoggingEvent> encoder =
        (LayoutWrappingEncoder<ILoggingEvent>) stderr.getEncoder();
    assertThat(encoder.getLayout()).isInstanceOf(LogLine.class);
    LoggingEvent e =
        new LoggingEvent(
            "x",
            ctx.getLogger("dev.evictd.agent.EvictionManager"),
            Level.INFO,
            "sync 1",
            null,
            null);
    String line = new String(encoder.encode(e), StandardCharsets.UTF_8);
    assertThat(line)
        .matches(
            "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}(Z|[+-]\\d\\d:\\d\\d) INFO "
                + " EvictionManager - sync 1\\R");
  }

  /** logback's own layout of the line the code writes out, in a given zone. */
  static PatternLayout reference(LoggerContext ctx, String zone) {
    PatternLayout p = new PatternLayout();
    p.setContext(ctx);
    // the line of the logback.xml this replaced, the zone made explicit
    p.setPattern(LogbackDefaults.PATTERN.replace("SSSXXX}", "SSSXXX, " + zone + "}"));
    p.start();
    return p;
  }

  @Test
  void theLineIsLogbacksPatternLineToTheCharacter() {
    assertThat(LogbackDefaults.PATTERN)
        .isEqualTo("%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level %logger{0} - %msg%n");
    LoggerContext ctx = new LoggerContext();
    Exception cause = new java.io.IOException("disk gone");
    Exception thrown = new IllegalStateException("boom", cause);
    thrown.addSuppressed(new RuntimeException("also"));
    long[] times = {
      0L, 1_764_633_600_123L, 1_764_633_600_007L, 951_782_400_999L, 4_102_444_799_000L, 86_399_999L
    };
    Level[] levels = {Level.TRACE, Level.DEBUG, Level.INFO, Level.WARN, Level.ERROR};
    String[] loggers = {"dev.evictd.agent.EvictionManager", "Root", "a.b.", "io.fabric8.X$Y"};
    int checked = 0;
    for (String zone : List.of("UTC", "Asia/Kolkata", "America/St_Johns", "Pacific/Chatham")) {
      PatternLayout ref = reference(ctx, zone);
      LogLine mine = new LogLine(java.time.ZoneId.of(zone));
      mine.setContext(ctx);
      mine.start();
      for (long t : times) {
        for (int i = 0; i < levels.length; i++) {
          LoggingEvent e =
              new LoggingEvent(
                  "x",
                  ctx.getLogger(loggers[i % loggers.length]),
                  levels[i],
                  "evicted {} of {} ({})",
                  i % 2 == 0 ? thrown : null,
                  new Object[] {"default/a", i, "ünïcode"});
          e.setTimeStamp(t);
          assertThat(mine.doLayout(e)).isEqualTo(ref.doLayout(e));
          checked++;
        }
      }
    }
    assertThat(checked).isEqualTo(4 * 6 * 5);
  }

  @Test
  void aConfigurationFileOnTheClassPathOrNamedByThePropertyWins() {
    // the tests' logback-test.xml is on this class path: logback's own configurator reads it
    assertThat(LogbackDefaults.class.getClassLoader().getResource("logback-test.xml")).isNotNull();
    LoggerContext ctx = new LoggerContext();
    LogbackDefaults d = new LogbackDefaults();
    d.setContext(ctx);
    assertThat(d.configure(ctx)).isEqualTo(Configurator.ExecutionStatus.INVOKE_NEXT_IF_ANY);
    assertThat(appenders(ctx.getLogger("ROOT"))).isEmpty();
    assertThat(ctx.getLogger("org.drools").getLevel()).isNull();
  }

  @Test
  void logbackFindsItAsAService() {
    assertThat(ServiceLoader.load(Configurator.class, LogbackDefaults.class.getClassLoader()))
        .anyMatch(c -> c instanceof LogbackDefaults);
  }
}
