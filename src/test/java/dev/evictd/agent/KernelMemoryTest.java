package dev.evictd.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.evictd.stats.Summary;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class KernelMemoryTest {
  static final Instant OLD = Instant.parse("2026-01-01T00:00:00Z");
  static final Instant NOW = OLD.plusSeconds(8);

  static Summary.MemoryStats mem(Instant t, long available, long ws) {
    return new Summary.MemoryStats(t, available, ws, ws, null);
  }

  static Summary.PodStats pod(String uid, Summary.MemoryStats m, Long procs) {
    return new Summary.PodStats(
        new Summary.PodReference(uid.equals("u3") ? null : "p-" + uid, "ns", uid),
        List.of(new Summary.ContainerStats("c", m, null, null)),
        m,
        List.of(),
        null,
        procs == null ? null : new Summary.ProcessStats(procs));
  }

  @Test
  void memoryFromTheKernelTheRestFromTheSummary() {
    Summary.FsStats fs = new Summary.FsStats(OLD, 1L, 2L, 1L, 1L, 2L, 1L);
    Summary summary =
        new Summary(
            new Summary.NodeStats(
                "node",
                mem(OLD, 7000, 1000),
                fs,
                null,
                new Summary.RlimitStats(OLD, 100L, 10L),
                List.of(
                    new Summary.ContainerStats("kubelet", mem(OLD, 0, 5), null, null),
                    new Summary.ContainerStats("pods", mem(OLD, 6000, 900), null, null))),
            List.of(pod("u1", mem(OLD, 0, 500), 4L), pod("u2", mem(OLD, 0, 0), 1L)));
    Summary kernel =
        new Summary(
            new Summary.NodeStats(
                "node",
                mem(NOW, 200, 7800),
                null,
                null,
                null,
                List.of(new Summary.ContainerStats("pods", mem(NOW, 100, 7700), null, null))),
            List.of(
                pod("u2", mem(NOW, 0, 7000), null),
                pod("u1", mem(NOW, 0, 10), null),
                pod("u3", mem(NOW, 0, 600), null)));
    Summary out = KernelMemory.overlay(summary, kernel);
    assertThat(out.node().memory()).isEqualTo(mem(NOW, 200, 7800));
    assertThat(out.node().fs()).isSameAs(fs);
    assertThat(out.node().rlimit()).isEqualTo(summary.node().rlimit());
    assertThat(out.node().systemContainer("pods").memory()).isEqualTo(mem(NOW, 100, 7700));
    assertThat(out.node().systemContainer("kubelet"))
        .isEqualTo(summary.node().systemContainer("kubelet"));
    assertThat(out.pods()).extracting(p -> p.podRef().uid()).containsExactly("u1", "u2", "u3");
    assertThat(out.pods().get(1).memory().workingSetBytes()).isEqualTo(7000);
    assertThat(out.pods().get(1).processStats().processCount()).as("the Summary's").isEqualTo(1);
    assertThat(out.pods().get(1).podRef().name()).isEqualTo("p-u2");
    assertThat(out.pods().get(2).memory().workingSetBytes())
        .as("a pod the Summary's sample predates")
        .isEqualTo(600);
  }

  @Test
  void noKernelFiguresLeaveTheSummaryAsItIs() {
    Summary summary =
        new Summary(
            new Summary.NodeStats("node", mem(OLD, 7000, 1000), null, null, null, null), List.of());
    assertThat(KernelMemory.overlay(summary, null)).isSameAs(summary);
    Summary noPods =
        KernelMemory.overlay(
            summary,
            new Summary(
                new Summary.NodeStats("node", mem(NOW, 1, 2), null, null, null, null), List.of()));
    assertThat(noPods.node().systemContainers()).isNull();
    assertThat(noPods.node().memory()).isEqualTo(mem(NOW, 1, 2));
  }
}
