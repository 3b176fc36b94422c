package dev.evictd.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.evictd.stats.Summary;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

/**
 * The statsapi schema table, and the summary binding that checks the fields evictd does not bind
 * against it: a field outside it reaches the read's listener with its path, one inside it (bound or
 * not) does not, and a read without a listener skips both as before.
 */
class SummaryFieldsTest {
  private static final JsonMapper MAPPER =
      JsonMapper.builder().addModule(SummaryJson.module()).build();

  /** The records of the model, each with the schema type it binds. */
  private static final List<Class<?>> RECORDS =
      List.of(
          Summary.class,
          Summary.NodeStats.class,
          Summary.MemoryStats.class,
          Summary.FsStats.class,
          Summary.RuntimeStats.class,
          Summary.RlimitStats.class,
          Summary.ContainerStats.class,
          Summary.PodReference.class,
          Summary.ProcessStats.class,
          Summary.VolumeStats.class,
          Summary.PodStats.class);

  @Test
  void everyFieldEvictdBindsIsInTheSchemaOfItsType() throws NoSuchFieldException {
    for (Class<?> r : RECORDS) {
      String type = SummaryJson.schemaType(r);
      assertThat(type).as(r.getSimpleName()).isNotNull();
      for (RecordComponent c : r.getRecordComponents()) {
        // on the component's field: JsonProperty does not target record components
        JsonProperty named = r.getDeclaredField(c.getName()).getAnnotation(JsonProperty.class);
        String json = named != null ? named.value() : c.getName();
        assertThat(SummaryFields.fields(type)).as(type).contains(json);
      }
    }
  }

  @Test
  void theSchemaHasTheStatsapiNamesEvenThoseEvictdDoesNotRead() {
    assertThat(SummaryFields.fields("PodStats"))
        .contains("podRef", "ephemeral-storage", "process_stats", "volume", "swap", "io");
    assertThat(SummaryFields.fields("ContainerStats"))
        .contains("accelerators", "userDefinedMetrics", "rootfs", "logs");
    assertThat(SummaryFields.fields("VolumeStats"))
        .contains("inodesUsed", "pvcRef", "volumeHealthStats");
    assertThat(SummaryFields.fields("NetworkStats")).contains("rxBytes", "interfaces");
    assertThat(SummaryFields.fields("MemoryStats")).contains("majorPageFaults", "psi");
    assertThat(SummaryFields.fields("RuntimeStats"))
        .containsExactlyInAnyOrder("imageFs", "containerFs");
    assertThat(SummaryFields.fields("FsStats")).doesNotContain("name");
    assertThat(SummaryFields.fields("NoSuchType")).isEmpty();
  }

  private static List<String> unknown(String json) {
    List<String> found = new ArrayList<>();
    Consumer<SummaryFields.Unknown> sink = u -> found.add(u.shown() + " in " + u.type());
    Summary s =
        MAPPER
            .readerFor(Summary.class)
            .withAttribute(SummaryJson.UNKNOWN_FIELDS, sink)
            .readValue(json);
    assertThat(s).isNotNull();
    return found;
  }

  @Test
  void aFieldOutsideTheSchemaReachesTheListenerWithItsPath() {
    String json =
        """
        {"node": {"nodeName": "n",
                  "memory": {"availabeBytes": 5, "workingSetBytes": 7, "pageFaults": 1},
                  "cpu": {"usageNanoCores": 1, "psi": {"full": {"avg10": 0, "avg11": 1}}},
                  "systemContainers": [{"name": "pods", "memory": {"workingSetByte": 1}}],
                  "fs": {"inodesFre": 3, "inodes": 10}},
         "pods": [{"podRef": {"name": "a", "namespace": "d", "uid": "u"}},
                  {"podref": {"name": "b"}, "volume": [{"name": "v"}, {"nme": "w"}],
                   "network": {"rxBytes": 1, "interfaces": [{"name": "eth0", "txByte": 2}]}}]}
        """;
    assertThat(unknown(json))
        .containsExactlyInAnyOrder(
            "node.memory.availabeBytes in MemoryStats",
            "node.cpu.psi.full.avg11 in PSIData",
            "node.systemContainers[0].memory.workingSetByte in MemoryStats",
            "node.fs.inodesFre in FsStats",
            "pods[1].podref in PodStats",
            "pods[1].volume[1].nme in VolumeStats",
            "pods[1].network.interfaces[0].txByte in InterfaceStats");
  }

  @Test
  void aFullKubeletAnswerHasNothingOutsideTheSchemaAndBindsAsBefore() {
    String json =
        """
        {"node": {"nodeName": "n", "startTime": "2026-01-01T00:00:00Z",
                  "cpu": {"time": "2026-01-01T00:00:00Z", "usageNanoCores": 1, "usageCoreNanoSeconds": 2},
                  "memory": {"time": "2026-01-01T00:00:00Z", "availableBytes": 1, "usageBytes": 2,
                             "workingSetBytes": 3, "rssBytes": 4, "pageFaults": 5, "majorPageFaults": 6},
                  "network": {"time": "2026-01-01T00:00:00Z", "name": "eth0", "rxBytes": 1,
                              "rxErrors": 0, "txBytes": 1, "txErrors": 0,
                              "interfaces": [{"name": "eth0", "rxBytes": 1}]},
                  "fs": {"availableBytes": 1, "capacityBytes": 2, "usedBytes": 1, "inodesFree": 1,
                         "inodes": 2, "inodesUsed": 1},
                  "runtime": {"imageFs": {"availableBytes": 1}, "containerFs": {"availableBytes": 1}},
                  "rlimit": {"time": "2026-01-01T00:00:00Z", "maxpid": 10, "curproc": 1},
                  "swap": {"swapAvailableBytes": 0, "swapUsageBytes": 0},
                  "io": {"psi": {"some": {"total": 1, "avg10": 0, "avg60": 0, "avg300": 0}}}},
         "pods": [{"podRef": {"name": "a", "namespace": "d", "uid": "u"},
                   "startTime": "2026-01-01T00:00:00Z",
                   "containers": [{"name": "c", "startTime": "2026-01-01T00:00:00Z",
                                   "rootfs": {"usedBytes": 1}, "logs": {"usedBytes": 1},
                                   "accelerators": [{"make": "x", "model": "y", "id": "0",
                                                     "memoryTotal": 1, "memoryUsed": 0, "dutyCycle": 0}],
                                   "userDefinedMetrics": [{"name": "m", "type": "gauge", "units": "u",
                                                           "labels": {"anything": "goes"}, "value": 1}]}],
                   "volume": [{"name": "v", "usedBytes": 1, "pvcRef": {"name": "p", "namespace": "d"},
                               "volumeHealthStats": {"abnormal": false}}],
                   "ephemeral-storage": {"usedBytes": 3}, "process_stats": {"process_count": 2}}]}
        """;
    assertThat(unknown(json)).isEmpty();
    Summary withListener =
        MAPPER
            .readerFor(Summary.class)
            .withAttribute(SummaryJson.UNKNOWN_FIELDS, (Consumer<SummaryFields.Unknown>) u -> {})
            .readValue(json);
    assertThat(withListener).isEqualTo(MAPPER.readValue(json, Summary.class));
    assertThat(withListener.node().memory().workingSetBytes()).isEqualTo(3L);
    assertThat(withListener.pods().get(0).processStats().processCount()).isEqualTo(2L);
  }

  @Test
  void withoutAListenerAFieldOutsideTheSchemaIsSkippedAsBefore() {
    Summary s =
        MAPPER.readValue(
            "{\"node\": {\"memory\": {\"availabeBytes\": 5, \"workingSetBytes\": 7}}}",
            Summary.class);
    assertThat(s.node().memory().availableBytes()).isNull();
    assertThat(s.node().memory().workingSetBytes()).isEqualTo(7L);
  }

  @Test
  void theSameFieldInEveryPodIsOneField() {
    SummaryFields.Unknown u =
        new SummaryFields.Unknown(
            List.of("pods", 3, "containers", 0, "memory", "x"), "MemoryStats");
    assertThat(u.shown()).isEqualTo("pods[3].containers[0].memory.x");
    assertThat(u.field()).isEqualTo("pods[].containers[].memory.x");
    assertThat(u.name()).isEqualTo("x");
    assertThat(u.known()).contains("workingSetBytes");
  }
}
