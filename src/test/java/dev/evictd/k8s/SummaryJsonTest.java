package dev.evictd.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.stats.Summary;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.DatabindException;
import tools.jackson.databind.json.JsonMapper;

class SummaryJsonTest {
  private static final JsonMapper WITH_MODULE =
      JsonMapper.builder().addModule(SummaryJson.module()).build();

  private static final String QUANTITIES =
      """
      {"node": {"nodeName": "n", "memory": {"availableBytes": "1500Mi", "workingSetBytes": 7},
                "rlimit": {"maxpid": "4Ki", "curproc": 12}},
       "pods": [{"podRef": {"name": "p", "namespace": "d", "uid": "u"},
                 "memory": {"workingSetBytes": "1.5Gi"},
                 "volume": [{"name": "v", "usedBytes": "1k", "inodesUsed": 3}],
                 "process_stats": {"process_count": "2"}}]}
      """;

  @Test
  void markedFieldsReadIntegersAndQuantityStrings() {
    Summary s = WITH_MODULE.readValue(QUANTITIES, Summary.class);
    assertThat(s.node().memory().availableBytes()).isEqualTo(1500L << 20);
    assertThat(s.node().memory().workingSetBytes()).isEqualTo(7L);
    assertThat(s.node().rlimit().maxpid()).isEqualTo(4096L);
    assertThat(s.node().rlimit().curproc()).isEqualTo(12L);
    Summary.PodStats p = s.pods().get(0);
    assertThat(p.memory().workingSetBytes()).isEqualTo(3L << 29);
    assertThat(p.volumes().get(0).usedBytes()).isEqualTo(1000L);
    assertThat(p.volumes().get(0).inodesUsed()).isEqualTo(3L);
    assertThat(p.processStats().processCount()).isEqualTo(2L);
  }

  @Test
  void aBadQuantityIsRefusedWithItsValue() {
    assertThatThrownBy(
            () ->
                WITH_MODULE.readValue(
                    "{\"node\": {\"memory\": {\"availableBytes\": \"-1Mi\"}}}", Summary.class))
        .isInstanceOf(DatabindException.class)
        .hasMessageContaining("amount must not be negative: \"-1Mi\"");
  }

  @Test
  void integersAreReadUpToTheRangeOfALongAndRefusedBeyondOrBelowZero() {
    String at = "{\"node\": {\"memory\": {\"availableBytes\": %s}}}";
    assertThat(
            WITH_MODULE
                .readValue(at.formatted("9223372036854775807"), Summary.class)
                .node()
                .memory()
                .availableBytes())
        .isEqualTo(Long.MAX_VALUE);
    assertThat(
            WITH_MODULE
                .readValue(at.formatted("0"), Summary.class)
                .node()
                .memory()
                .availableBytes())
        .isZero();
    assertThatThrownBy(
            () -> WITH_MODULE.readValue(at.formatted("9223372036854775808"), Summary.class))
        .isInstanceOf(DatabindException.class)
        .hasMessageContaining("amount out of range (0 to 2^63-1): 9223372036854775808");
    assertThatThrownBy(() -> WITH_MODULE.readValue(at.formatted("-5"), Summary.class))
        .isInstanceOf(DatabindException.class)
        .hasMessageContaining("amount must not be negative: -5");
  }

  @Test
  void withoutTheModuleTheMarkerBindsNothing() {
    // why every mapper that reads a Summary adds the module: the model names no reader itself
    assertThatThrownBy(() -> JsonMapper.builder().build().readValue(QUANTITIES, Summary.class))
        .isInstanceOf(DatabindException.class);
  }
}
