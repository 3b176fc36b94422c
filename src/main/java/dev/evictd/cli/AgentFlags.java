package dev.evictd.cli;

import dev.evictd.agent.ConfigKey;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParseResult;

/**
 * The flags made from the agent's configuration keys ({@link ConfigKey}): one typed picocli option
 * per key, parsed and checked by the key's own parser, so a bad flag gets the same one-line message
 * as the same value in the file.
 */
final class AgentFlags {
  private AgentFlags() {}

  /** Adds an option for every key {@code which} selects (keys of the file only have none). */
  static CommandSpec addTo(CommandSpec spec, Predicate<ConfigKey> which) {
    for (ConfigKey k : ConfigKey.ALL) {
      if (!k.setting().fileOnly() && which.test(k)) {
        spec.addOption(option(k));
      }
    }
    return spec;
  }

  /**
   * Adds the mixin of a {@link dev.evictd.agent.Setting#group}, named as the group: the options of
   * its keys.
   */
  static CommandSpec addMixin(CommandSpec command, String group) {
    command.addMixin(group, addTo(CommandSpec.create(), k -> k.setting().group().equals(group)));
    return command;
  }

  /** The option of one key. */
  static OptionSpec option(ConfigKey k) {
    String[] names = new String[1 + k.setting().aliases().length];
    names[0] = k.flag();
    System.arraycopy(k.setting().aliases(), 0, names, 1, names.length - 1);
    OptionSpec.Builder b = OptionSpec.builder(names).description(k.help());
    if (k.isSwitch()) {
      return b.type(Boolean.class).arity("0").build();
    }
    b.arity("1").paramLabel(k.label()).type(typeOf(k)).converters(text -> k.parse(text, k.flag()));
    if (!k.candidates().isEmpty()) {
      b.completionCandidates(k.candidates());
    }
    return b.build();
  }

  private static Class<?> typeOf(ConfigKey k) {
    Class<?> t = k.type();
    if (t == boolean.class) {
      // not Boolean: picocli reads an empty value of a Boolean option as false without asking the
      // converter (--taints '' was false), where the file refuses it
      return Object.class;
    }
    if (t == int.class) {
      return Integer.class;
    }
    // a list given in one flag (comma-separated), not a repeated option: picocli must not see a
    // collection
    return t == Set.class ? Object.class : t;
  }

  /**
   * The values of the flags of the keys {@code which} selects given on the command line, by key
   * (flags not given are absent, so the file's values stand).
   */
  static Map<String, Object> given(CommandSpec spec, Predicate<ConfigKey> which) {
    ParseResult pr = spec.commandLine().getParseResult();
    Map<String, Object> given = new LinkedHashMap<>();
    for (ConfigKey k : ConfigKey.ALL) {
      OptionSpec o = which.test(k) ? pr.matchedOption(k.flag()) : null;
      if (o != null) {
        Object v = o.getValue();
        // a value that parses to null (fsLayout auto) is handed on as given, to win over the file
        given.put(k.key(), v != null ? v : o.stringValues().get(0));
      }
    }
    return given;
  }
}
