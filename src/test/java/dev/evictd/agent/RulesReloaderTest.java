package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.engine.RuleCompiler;
import dev.evictd.engine.RuleSet;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RulesReloaderTest {
  static final String EXTRA_RULE =
      "package dev.evictd.rules;\nimport dev.evictd.api.*;\n"
          + "rule \"an extra rule\"\n    ruleflow-group \"observe\"\nwhen\n    $p: PodFact(priority > 5)\nthen\nend\n";

  static void await(List<?> list, int n) throws InterruptedException {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (list.size() < n && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
  }

  @Test
  void aValidChangeIsHandedOverAndABrokenOneIsRefused(@TempDir Path dir) throws Exception {
    Files.writeString(dir.resolve("rules.yaml"), "extends: default\n");
    RuleSet initial = RuleCompiler.compile(dir);
    List<RuleSet> loaded = new CopyOnWriteArrayList<>();
    List<String> failed = new CopyOnWriteArrayList<>();
    try (RulesReloader r =
        new RulesReloader(
            dir,
            initial.sha256(),
            RuleCompiler::compile,
            loaded::add,
            failed::add,
            Duration.ofMillis(200))) {
      Files.writeString(dir.resolve("extra.drl"), EXTRA_RULE);
      await(loaded, 1);
      assertThat(loaded).hasSize(1);
      assertThat(loaded.get(0).files()).contains("extra.drl");
      assertThat(loaded.get(0).sha256()).isNotEqualTo(initial.sha256());

      Files.writeString(
          dir.resolve("extra.drl"), EXTRA_RULE.replace("priority > 5", "priority >>> 5"));
      await(failed, 1);
      assertThat(failed).singleElement().asString().contains("extra.drl:6");
      assertThat(loaded).hasSize(1); // the running rules stay

      // an unchanged set (same sha) is not handed over again
      assertThat(r.reload()).isFalse();
    }
  }
}
