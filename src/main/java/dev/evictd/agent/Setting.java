package dev.evictd.agent;

import dev.evictd.api.ConfigException;
import dev.evictd.config.GoDuration;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.time.Duration;

/**
 * Declares a component of {@link AgentConfig} as a configuration key: the one place a key is
 * declared. The component's name is the YAML key (unless {@link #key}), its type says how values
 * are parsed, and the flag of {@code evictd run} is the key in kebab case ({@link
 * AgentConfig#flagName}); {@link ConfigKey} reads these for the file, the flags and the docs.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.RECORD_COMPONENT)
public @interface Setting {
  /** What the key does, for {@code evictd run --help} and the docs (the default is appended). */
  String help();

  /** The YAML key when it is not the component's name (an acronym spelt as Kubernetes does). */
  String key() default "";

  /**
   * The flag's parameter label ({@code DIR}, {@code DURATION}...); empty for a boolean switch that
   * takes no value.
   */
  String label() default "";

  /**
   * The default, written as in the file; empty when there is none or it is worked out from other
   * settings or the environment (the help says how).
   */
  String dflt() default "";

  /** The accepted values of a text key (every other is refused, naming these). */
  String[] choices() default {};

  /** A check of the parsed value beyond its type. */
  Check check() default Check.NONE;

  /** A key of the file only (a YAML block), with no flag. */
  boolean fileOnly() default false;

  /**
   * The group of flags the key belongs to, a mixin other commands share with {@code run}: {@code
   * kubelet} (the kubelet connection options, also of {@code capture}), {@code host} (where this
   * host keeps cgroups, /proc and the kubelet's and runtime's data, also of {@code stats} and
   * {@code doctor}).
   */
  String group() default "";

  /** Other names of the flag (a command's older spelling, still accepted). */
  String[] aliases() default {};

  /** Checks of single values; each refuses with {@code where: message}. */
  enum Check {
    /** No check beyond the type. */
    NONE {
      @Override
      void check(String where, String text, Object value) {}
    },
    /** 64 lowercase hex digits. */
    SHA256 {
      @Override
      void check(String where, String text, Object value) {
        if (!text.matches("[0-9a-f]{64}")) {
          throw new ConfigException(
              where + ": expected 64 lowercase hex digits, found \"" + text + "\"");
        }
      }
    },
    /** An http or https URL. */
    HTTP_URL {
      @Override
      void check(String where, String text, Object value) {
        if (!text.matches("https?://[^\\s]+")) {
          throw new ConfigException(where + ": expected an http(s) URL, found \"" + text + "\"");
        }
      }
    },
    /** HOST:PORT to listen on. */
    HOST_PORT {
      @Override
      void check(String where, String text, Object value) {
        HttpEndpoints.parse(text);
      }
    },
    /** A monitoring interval: at least 100ms. */
    AT_LEAST_100MS {
      @Override
      void check(String where, String text, Object value) {
        Duration d = (Duration) value;
        if (d.compareTo(Duration.ofMillis(100)) < 0) {
          throw new ConfigException(where + ": must be at least 100ms: " + GoDuration.format(d));
        }
      }
    },
    /** A duration that is not negative. */
    NOT_NEGATIVE {
      @Override
      void check(String where, String text, Object value) {
        if (((Duration) value).isNegative()) {
          throw new ConfigException(where + ": must not be negative");
        }
      }
    };

    /**
     * Refuses a bad value.
     *
     * @param where the value's place ({@code file:line: key} or {@code --flag})
     * @param text the value as given
     * @param value the value parsed
     */
    abstract void check(String where, String text, Object value);
  }
}
