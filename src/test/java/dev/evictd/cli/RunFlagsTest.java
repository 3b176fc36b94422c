package dev.evictd.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.agent.AgentConfig;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Every key of the agent's configuration file is also a flag of {@code evictd run}. */
class RunFlagsTest {
  @Test
  void everyConfigurationKeyIsAFlagOfRun() {
    CommandLine.Model.CommandSpec spec = new CommandLine(new RunCommand()).getCommandSpec();
    for (String key : AgentConfig.KEYS) {
      if (key.equals("eviction")) {
        continue; // the kubelet's eviction settings: a YAML block, given in the file only
      }
      assertThat(spec.findOption("--" + AgentConfig.flagName(key)))
          .as("flag for the key %s", key)
          .isNotNull();
    }
  }
}
