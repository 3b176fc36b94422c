package dev.evictd.agent;

import dev.evictd.api.ConfigException;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.FsLayout;
import dev.evictd.config.GoDuration;
import dev.evictd.config.YamlNode;
import java.lang.reflect.RecordComponent;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * One key of the agent's configuration, read from its {@link Setting} on a component of {@link
 * AgentConfig}: the YAML key, the flag, the type and its parser, the default, the help. The file,
 * the flags of {@code evictd run} and the docs are all made from {@link #ALL}.
 *
 * @param key the YAML key (the flag is its kebab case)
 * @param component the record component holding the value
 * @param setting the component's declaration
 */
public record ConfigKey(String key, RecordComponent component, Setting setting) {
  /** The eviction methods a configuration may name (the rules' {@code DEFAULT} is no method). */
  private static final List<EvictionMethod> METHODS =
      List.of(
          EvictionMethod.DRY_RUN,
          EvictionMethod.DELETE,
          EvictionMethod.EVICT,
          EvictionMethod.KILL,
          EvictionMethod.KILL_AND_DELETE);

  /** The types a key may have: each has a parser below. */
  private static final Set<Class<?>> PARSED =
      Set.of(
          String.class,
          Path.class,
          boolean.class,
          int.class,
          Duration.class,
          EvictionMethod.class,
          FsLayout.class,
          Set.class,
          YamlNode.class);

  /** Refuses, at class initialisation, a key whose type has no parser. */
  public ConfigKey {
    Class<?> t = component.getType();
    boolean methodSet =
        t == Set.class
            && component
                .getGenericType()
                .getTypeName()
                .equals("java.util.Set<" + EvictionMethod.class.getName() + ">");
    if (!PARSED.contains(t) || (t == Set.class && !methodSet)) {
      throw new IllegalStateException(
          "AgentConfig." + component.getName() + ": no parser for " + component.getGenericType());
    }
  }

  /** Every key, in the order of {@link AgentConfig}'s components. */
  public static final List<ConfigKey> ALL =
      Arrays.stream(AgentConfig.class.getRecordComponents())
          .map(
              c -> {
                Setting s = c.getAnnotation(Setting.class);
                if (s == null) {
                  throw new IllegalStateException("AgentConfig." + c.getName() + ": no @Setting");
                }
                return new ConfigKey(s.key().isEmpty() ? c.getName() : s.key(), c, s);
              })
          .toList();

  /** The key named {@code key}. */
  public static ConfigKey of(String key) {
    for (ConfigKey k : ALL) {
      if (k.key.equals(key)) {
        return k;
      }
    }
    throw new IllegalArgumentException("no configuration key " + key);
  }

  /** The value's type (the record component's). */
  public Class<?> type() {
    return component.getType();
  }

  /** The flag of {@code evictd run}: {@code --metrics-address} for {@code metricsAddress}. */
  public String flag() {
    return "--" + AgentConfig.flagName(key);
  }

  /** Whether the flag is a switch (a boolean flag given without a value). */
  public boolean isSwitch() {
    return type() == boolean.class && setting.label().isEmpty();
  }

  /** The flag's parameter label. */
  public String label() {
    return setting.label();
  }

  /** The help text, with the default when there is one. */
  public String help() {
    String h = setting.help();
    if (setting.dflt().isEmpty()) {
      return h;
    }
    return (h.endsWith(".") ? h.substring(0, h.length() - 1) : h)
        + " (default "
        + setting.dflt()
        + ").";
  }

  /** The values the key accepts, for completion and help; empty when any text is accepted. */
  public List<String> candidates() {
    if (setting.choices().length > 0) {
      return List.of(setting.choices());
    }
    if (type() == boolean.class) {
      return List.of("true", "false");
    }
    if (type() == EvictionMethod.class || type() == Set.class) {
      return METHODS.stream().map(AgentConfig::methodName).toList();
    }
    if (type() == FsLayout.class) {
      List<String> l = new ArrayList<>(List.of("auto"));
      Arrays.stream(FsLayout.values()).map(FsLayout::key).forEach(l::add);
      return l;
    }
    return List.of();
  }

  /**
   * The value used when the key is not given: its default, false for a switch, else null (none, or
   * worked out by the resolver).
   */
  public Object defaultValue() {
    if (setting.dflt().isEmpty()) {
      return type() == boolean.class ? Boolean.FALSE : null;
    }
    return parse(setting.dflt(), key);
  }

  /**
   * Parses and checks a value given as text (a scalar of the file, a flag's argument).
   *
   * @param text the value
   * @param where its place for messages: {@code file:line: key} or {@code --flag}
   * @throws ConfigException naming the place and the value
   */
  public Object parse(String text, String where) {
    Object v = convert(text, where);
    setting.check().check(where, text, v);
    return v;
  }

  /**
   * A value as the resolver gets it: a YAML node of the file, a flag's text, or a value a flag
   * parser already typed.
   */
  Object read(Object given, String where) {
    if (given instanceof YamlNode n) {
      if (type() == YamlNode.class) {
        n.asMap();
        return n;
      }
      if (n.kind() == YamlNode.Kind.SCALAR) {
        return parse(n.asText(), where);
      }
      if (type() == Set.class && n.isSeq()) {
        List<String> names = new ArrayList<>();
        for (YamlNode e : n.asList()) {
          names.add(e.asString(false));
        }
        return methods(names, where);
      }
      throw new ConfigException(where + ": expected a value, found " + n.describe());
    }
    if (given instanceof String s) {
      return parse(s, where);
    }
    if (type() == boolean.class && given instanceof Boolean) {
      return given;
    }
    if (!type().isPrimitive() && type().isInstance(given)) {
      return given;
    }
    if (type() == int.class && given instanceof Integer) {
      return given;
    }
    throw new IllegalArgumentException(key + ": a " + given.getClass().getSimpleName());
  }

  private Object convert(String text, String where) {
    Class<?> t = type();
    if (t == String.class) {
      if (setting.choices().length > 0 && !List.of(setting.choices()).contains(text)) {
        throw unknownValue(text, where);
      }
      return text;
    }
    if (t == Path.class) {
      try {
        return Path.of(text);
      } catch (InvalidPathException e) {
        throw new ConfigException(where + ": not a path: " + e.getReason());
      }
    }
    if (t == boolean.class) {
      String s = text.toLowerCase(Locale.ROOT);
      if (s.equals("true") || s.equals("false")) {
        return s.equals("true");
      }
      throw new ConfigException(where + ": expected true or false, found \"" + s + "\"");
    }
    if (t == Duration.class) {
      try {
        return GoDuration.parse(text);
      } catch (IllegalArgumentException e) {
        throw new ConfigException(where + ": " + e.getMessage());
      }
    }
    if (t == int.class) {
      // every count the agent takes is at least one
      try {
        int n = Integer.parseInt(text.trim());
        if (n >= 1) {
          return n;
        }
      } catch (NumberFormatException e) {
        // refused below
      }
      throw new ConfigException(
          where + ": expected a whole number of at least 1, found \"" + text + "\"");
    }
    if (t == EvictionMethod.class) {
      for (EvictionMethod m : METHODS) {
        if (AgentConfig.methodName(m).equals(text)) {
          return m;
        }
      }
      throw unknownValue(text, where);
    }
    if (t == FsLayout.class) {
      if (text.equals("auto")) {
        return null; // inferred from the first summary
      }
      return FsLayout.fromKey(text).orElseThrow(() -> unknownValue(text, where));
    }
    if (t == Set.class) { // a set of eviction methods, the one list key
      List<String> names = new ArrayList<>();
      for (String part : text.split(",", -1)) {
        names.add(part.trim());
      }
      return methods(names, where);
    }
    throw new IllegalStateException(key + ": no parser for " + t.getSimpleName());
  }

  private ConfigException unknownValue(String text, String where) {
    return new ConfigException(
        where
            + ": unknown value \""
            + text
            + "\" (expected one of "
            + new TreeSet<>(candidates())
            + ")");
  }

  /** Eviction method names: a list in the file, comma-separated as a flag. */
  private Set<EvictionMethod> methods(List<String> names, String where) {
    EnumSet<EvictionMethod> out = EnumSet.noneOf(EvictionMethod.class);
    for (String g : names) {
      EvictionMethod found = null;
      for (EvictionMethod m : METHODS) {
        if (AgentConfig.methodName(m).equals(g)) {
          found = m;
        }
      }
      if (found == null) {
        throw new ConfigException(
            where
                + ": unknown method \""
                + g
                + "\" (expected some of "
                + new TreeSet<>(candidates())
                + ")");
      }
      out.add(found);
    }
    if (out.isEmpty()) {
      throw new ConfigException(where + ": at least one method is needed");
    }
    return Collections.unmodifiableSet(out);
  }
}
