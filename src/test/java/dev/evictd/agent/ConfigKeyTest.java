package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.ConfigException;
import dev.evictd.config.YamlNode;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The configuration keys as {@link AgentConfig}'s {@link Setting}s declare them. */
class ConfigKeyTest {
  static YamlNode yaml(String s) {
    return YamlNode.parse("agent.yaml", s.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void everyComponentIsAKeyWithAHelpAndAParsableDefault() {
    assertThat(ConfigKey.ALL).hasSize(AgentConfig.class.getRecordComponents().length);
    assertThat(AgentConfig.KEYS).hasSize(ConfigKey.ALL.size());
    for (ConfigKey k : ConfigKey.ALL) {
      assertThat(k.setting().help()).as(k.key()).isNotBlank();
      // a default that does not parse would fail every start
      k.defaultValue();
      assertThat(k.isSwitch() || k.setting().fileOnly() || !k.label().isEmpty())
          .as("%s: a flag with a value needs a label", k.key())
          .isTrue();
      for (String c : k.candidates()) {
        assertThat(k.parse(c, k.flag()) != null || c.equals("auto")).as(k.key() + " " + c).isTrue();
      }
    }
  }

  @Test
  void aBadValueGetsTheSameMessageInTheFileAndAsAFlag() {
    Map<String, String> env = Map.of("NODE_NAME", "n");
    String[][] cases = {
      {"executor", "nuke"},
      {"fsLayout", "flat"},
      {"stats", "disk"},
      {"logFormat", "xml"},
      {"interval", "soon"},
      {"podCleanupTimeout", "-1s"},
      {"rulesProbationSyncs", "0"},
      {"memcgNotifier", "yes"},
      {"kubeletUrl", "ftp://x"},
      {"rulesSha256", "abc"}
    };
    for (String[] c : cases) {
      String key = c[0];
      String flag = ConfigKey.of(key).flag();
      String fromFlag = message(() -> AgentConfig.resolve(null, Map.of(key, c[1]), env));
      String fromFile =
          message(() -> AgentConfig.resolve(yaml(key + ": \"" + c[1] + "\"\n"), Map.of(), env));
      assertThat(fromFlag).as(key).startsWith(flag + ": ");
      assertThat(fromFile).as(key).startsWith("agent.yaml:1: " + key + ": ");
      assertThat(fromFile.substring(("agent.yaml:1: " + key).length()))
          .as(key)
          .isEqualTo(fromFlag.substring(flag.length()));
    }
  }

  @Test
  void typedFlagValuesWinOverTheFile() {
    Map<String, String> env = Map.of("NODE_NAME", "n");
    AgentConfig c =
        AgentConfig.resolve(
            yaml("interval: 5s\nfsLayout: shared\nmemcgNotifier: true\n"),
            Map.of(
                "interval",
                ConfigKey.of("interval").parse("2s", "--interval"),
                "fsLayout",
                "auto",
                "memcgNotifier",
                false),
            env);
    assertThat(c.interval()).hasSeconds(2);
    assertThat(c.fsLayout()).as("auto given as a flag: inferred, not the file's").isNull();
    assertThat(c.memcgNotifier()).isFalse();
  }

  @Test
  void aListKeyIsAListInTheFileOnly() {
    Map<String, String> env = Map.of("NODE_NAME", "n");
    assertThatThrownBy(() -> AgentConfig.resolve(yaml("interval: [1s]\n"), Map.of(), env))
        .isInstanceOf(ConfigException.class)
        .hasMessage("agent.yaml:1: interval: expected a value, found a list");
    assertThatThrownBy(() -> AgentConfig.resolve(yaml("eviction: 5\n"), Map.of(), env))
        .isInstanceOf(ConfigException.class)
        .hasMessage("agent.yaml:1: eviction: expected a mapping, found 5");
  }

  private static String message(Runnable r) {
    try {
      r.run();
    } catch (ConfigException e) {
      return e.getMessage();
    }
    throw new AssertionError("accepted");
  }
}
