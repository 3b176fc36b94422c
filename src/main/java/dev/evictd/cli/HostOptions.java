package dev.evictd.cli;

import dev.evictd.agent.ConfigKey;
import dev.evictd.linux.HostPaths;
import java.nio.file.Path;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

/**
 * Where this host keeps cgroups, /proc and the kubelet's and runtime's data: one picocli mixin of
 * run, stats and doctor whose options are the {@code host} group of the agent's configuration keys
 * ({@code --cgroup-root}, {@code --proc-root}...), declared once on {@link
 * dev.evictd.agent.AgentConfig}.
 */
final class HostOptions {
  /** The {@link dev.evictd.agent.Setting#group} of the keys this mixin holds, and its name. */
  static final String GROUP = "host";

  private HostOptions() {}

  /** Adds the mixin to a command. */
  static CommandSpec addTo(CommandSpec command) {
    return AgentFlags.addMixin(command, GROUP);
  }

  /** Adds the mixin to the command it transforms ({@code @Command(modelTransformer = ...)}). */
  static final class Mixin implements CommandLine.IModelTransformer {
    @Override
    public CommandSpec transform(CommandSpec spec) {
      return addTo(spec);
    }
  }

  /**
   * The paths given, each else its key's default.
   *
   * @param command the command holding the mixin, after parsing
   */
  static HostPaths paths(CommandSpec command) {
    Map<String, Object> given = AgentFlags.given(command, k -> k.setting().group().equals(GROUP));
    return new HostPaths(
        (Path) value(given, "cgroupRoot"),
        (Path) value(given, "procRoot"),
        (Path) value(given, "kubeletRootDir"),
        (Path) value(given, "runtimeRootDir"),
        (String) value(given, "podsCgroup"));
  }

  private static Object value(Map<String, Object> given, String key) {
    Object v = given.get(key);
    return v != null ? v : ConfigKey.of(key).defaultValue();
  }
}
