package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import org.junit.jupiter.api.Test;

class AgentMetricsTest {
  @Test
  void theActiveRuleSetIsExposedAsTheDocumentedInfoMetric() {
    AgentMetrics m = new AgentMetrics(Clock.systemUTC());
    m.activeRules("aaa");
    assertThat(m.scrape()).contains("evictd_rules_info{sha256=\"aaa\"} 1");
    m.activeRules("bbb");
    assertThat(m.scrape())
        .contains("evictd_rules_info{sha256=\"bbb\"} 1")
        .doesNotContain("sha256=\"aaa\"")
        .doesNotContain("evictd_rules{");
  }
}
