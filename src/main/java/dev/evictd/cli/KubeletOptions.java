package dev.evictd.cli;

import dev.evictd.agent.ConfigKey;
import dev.evictd.api.ConfigException;
import dev.evictd.kube.KubeletEndpoint;
import java.net.URI;
import java.nio.file.Path;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

/**
 * How to reach a kubelet directly, shared by {@code evictd run} and {@code evictd capture}: one
 * picocli mixin whose options are the {@code kubelet} group of the agent's configuration keys
 * ({@code --kubelet-url}, {@code --kubelet-ca-file}...), declared once on {@link
 * dev.evictd.agent.AgentConfig}.
 */
final class KubeletOptions {
  /** The {@link dev.evictd.agent.Setting#group} of the keys this mixin holds, and its name. */
  static final String GROUP = "kubelet";

  private KubeletOptions() {}

  /** Whether {@code k} is one of this mixin's keys. */
  static boolean holds(ConfigKey k) {
    return k.setting().group().equals(GROUP);
  }

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
   * The kubelet to read directly, checked (files, scheme), or null when no {@code --kubelet-url} is
   * given (capture then reads through the API server's node proxy).
   *
   * @param command the command holding the mixin, after parsing
   */
  static KubeletEndpoint endpoint(CommandSpec command) {
    Map<String, Object> given = AgentFlags.given(command, KubeletOptions::holds);
    String url = (String) given.get("kubeletUrl");
    if (url == null) {
      return null;
    }
    boolean insecure = given.containsKey("kubeletInsecureSkipTLSVerify");
    Path ca = (Path) given.get("kubeletCaFile");
    if (insecure && ca != null) {
      throw new ConfigException(
          ConfigKey.of("kubeletInsecureSkipTLSVerify").flag()
              + ": give either "
              + ConfigKey.of("kubeletCaFile").flag()
              + " or "
              + ConfigKey.of("kubeletInsecureSkipTLSVerify").flag()
              + ", not both");
    }
    Path token = (Path) given.get("kubeletTokenFile");
    KubeletEndpoint e =
        new KubeletEndpoint(
            URI.create(url),
            token == null ? KubeletEndpoint.SERVICE_ACCOUNT_TOKEN : token,
            ca == null ? KubeletEndpoint.SERVICE_ACCOUNT_CA : ca,
            insecure,
            (String) given.get("kubeletTlsServerName"),
            given.containsKey("kubeletAllowHttp"));
    e.check();
    return e;
  }
}
