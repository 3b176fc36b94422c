package dev.evictd.linux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.api.StatsException;
import dev.evictd.stats.Summary;
import dev.evictd.testing.Fixtures;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

class HostStatsProviderTest {
  private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");
  private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

  private static HostStatsProvider fixture(String host) {
    Path root = Fixtures.resource("hosts/" + host);
    return new HostStatsProvider(
        new HostPaths(root.resolve("cgroup"), root.resolve("proc"), root, root, "kubepods"),
        null,
        CLOCK);
  }

  private static Summary.FsStats fsOf(Path p) throws Exception {
    Filesystems.Usage u = Filesystems.usage(p);
    return new Summary.FsStats(
        NOW,
        u.availableBytes(),
        u.capacityBytes(),
        u.usedBytes(),
        u.inodesFree(),
        u.inodes(),
        u.inodesUsed());
  }

  @Test
  void cgroupV1TreeWithTheCgroupfsDriverParsesToTheExpectedSummary() throws Exception {
    Summary s = fixture("v1").summary();
    Summary.NodeStats n = s.node();
    assertThat(n.nodeName()).isEqualTo("fixture-v1");
    // MemTotal 16Gi; root usage 8Gi, total_inactive_file 2Gi
    assertThat(n.memory())
        .isEqualTo(new Summary.MemoryStats(NOW, 10L << 30, 8L << 30, 6L << 30, 4L << 30));
    // kubepods: usage 4Gi, inactive 1Gi, limit 14Gi
    assertThat(n.systemContainers())
        .containsExactly(
            new Summary.ContainerStats(
                "pods",
                new Summary.MemoryStats(NOW, 11L << 30, 4L << 30, 3L << 30, 2L << 30),
                null,
                null));
    assertThat(n.rlimit()).isEqualTo(new Summary.RlimitStats(NOW, 4194304L, 417L));
    Path root = Fixtures.resource("hosts/v1");
    Summary.FsStats fs = fsOf(root);
    assertThat(n.fs().capacityBytes()).isEqualTo(fs.capacityBytes());
    assertThat(n.fs().inodes()).isEqualTo(fs.inodes());
    assertThat(n.runtime().imageFs().capacityBytes()).isEqualTo(fs.capacityBytes());
    assertThat(n.runtime().containerFs()).isNull();

    assertThat(s.pods())
        .containsExactlyInAnyOrder(
            pod(
                "aaaaaaaa-0000-0000-0000-000000000001",
                1L << 30,
                (1L << 30) - (256L << 20),
                768L << 20,
                3),
            pod("bbbbbbbb-0000-0000-0000-000000000002", 512L << 20, 512L << 20, 512L << 20, 1),
            pod("cccccccc-0000-0000-0000-000000000003", 256L << 20, 0, 0, 0));
  }

  @Test
  void cgroupV2TreeWithTheSystemdDriverParsesToTheExpectedSummary() {
    Summary s = fixture("v2").summary();
    Summary.NodeStats n = s.node();
    assertThat(n.nodeName()).isEqualTo("fixture-v2");
    // MemTotal 8Gi; root usage anon 3Gi + file 2Gi, inactive_file 1Gi
    assertThat(n.memory())
        .isEqualTo(new Summary.MemoryStats(NOW, 4L << 30, 5L << 30, 4L << 30, 3L << 30));
    // kubepods.slice: memory.current 2Gi, inactive 512Mi, memory.max "max": capacity is MemTotal
    assertThat(n.systemContainer("pods").memory())
        .isEqualTo(
            new Summary.MemoryStats(
                NOW, (8L << 30) - (1536L << 20), 2L << 30, 1536L << 20, 1L << 30));
    assertThat(n.rlimit()).isEqualTo(new Summary.RlimitStats(NOW, 32768L, 250L));
    assertThat(s.pods())
        .containsExactlyInAnyOrder(
            pod("dddddddd-1111-2222-3333-444444444444", 1L << 30, 1L << 30, 1L << 30, 3),
            pod("eeeeeeee-5555-6666-7777-888888888888", 512L << 20, 384L << 20, 256L << 20, 1),
            pod("ffffffff-9999-aaaa-bbbb-cccccccccccc", 256L << 20, 192L << 20, 128L << 20, 2));
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(
      strings = {"kubepods", "kubepods.slice", "/kubepods.slice", "/kubepods", "kubepods.slice/"})
  void everyFormOfThePodsCgroupNameFindsEveryPodOnASystemdDriverTree(String name) {
    Path root = Fixtures.resource("hosts/v2");
    Summary expected = fixture("v2").summary();
    for (String form : List.of(name, root.resolve("cgroup").resolve("kubepods.slice").toString())) {
      Summary s =
          new HostStatsProvider(
                  new HostPaths(root.resolve("cgroup"), root.resolve("proc"), root, root, form),
                  null,
                  CLOCK)
              .summary();
      assertThat(s.pods()).as(form).hasSize(3).isEqualTo(expected.pods());
      assertThat(s.node().systemContainers())
          .as(form)
          .isEqualTo(expected.node().systemContainers());
    }
  }

  private static Summary.PodStats pod(String uid, long usage, long ws, long rss, long procs) {
    return new Summary.PodStats(
        new Summary.PodReference(null, null, uid),
        List.of(),
        new Summary.MemoryStats(NOW, null, usage, ws, rss),
        List.of(),
        null,
        new Summary.ProcessStats(procs));
  }

  @Test
  @Tag("cgroup")
  void thisHostsMemoryIsTheKubeletFormulaOverTheRootMemoryCgroup() throws Exception {
    Cgroups real = Cgroups.detect(HostPaths.DEFAULT_CGROUP_ROOT, null);
    org.junit.jupiter.api.Assumptions.assumeTrue(
        real.version().isPresent(), "no memory controller on this host");
    Path rootCgroup = real.memoryRoot().orElseThrow();
    long memTotal = Cgroups.readKeyed(Path.of("/proc/meminfo")).get("MemTotal");
    // The kubelet's formula (capacity - (usage - inactive_file)) over the same root cgroup files.
    // Those figures move between two reads on a busy host, so the provider's reading must lie
    // between the reads taken just before and just after it (not near MemAvailable, which counts
    // active page cache as available and so differs by design when much of it is active).
    Summary s = null;
    long[] ws = new long[2]; // lowest and highest working set of the two bracketing reads
    long[] usage = new long[2];
    for (int attempt = 0; attempt < 20; attempt++) {
      Cgroups.Memory before = real.memory(rootCgroup);
      s = new HostStatsProvider(HostPaths.defaults(), null, CLOCK).summary();
      Cgroups.Memory after = real.memory(rootCgroup);
      ws = bracket(before.workingSet(), after.workingSet());
      usage = bracket(before.usage(), after.usage());
      if (ws[1] - ws[0] < (16L << 20) && usage[1] - usage[0] < (16L << 20)) {
        break; // a quiet window: the bracket is tight
      }
    }
    Summary.MemoryStats m = s.node().memory();
    long slack = 16L << 20; // page cache that came and went inside the bracket
    assertThat(m.availableBytes() + m.workingSetBytes()).isEqualTo(memTotal);
    assertThat(m.workingSetBytes()).isBetween(ws[0] - slack, ws[1] + slack);
    assertThat(m.usageBytes()).isBetween(usage[0] - slack, usage[1] + slack);
    assertThat(s.node().rlimit().maxpid())
        .isEqualTo(Long.parseLong(sysctl("/proc/sys/kernel/pid_max")));
    assertThat(s.node().rlimit().curproc()).isPositive();
  }

  private static long[] bracket(long a, long b) {
    return new long[] {Math.min(a, b), Math.max(a, b)};
  }

  /** An integer sysctl, read in one call (a read at a later offset returns end of file). */
  private static String sysctl(String path) throws Exception {
    try (var in = new java.io.FileInputStream(path)) {
      return new String(in.readNBytes(64), java.nio.charset.StandardCharsets.US_ASCII).trim();
    }
  }

  @Test
  void missingKubeletAndRuntimeRootsFallBackToTheRootFilesystem() throws Exception {
    HostPaths p =
        new HostPaths(
            null, null, Path.of("/no/such/kubelet"), Path.of("/no/such/containerd"), null);
    assertThat(p.fallbackWarnings()).hasSize(2).allMatch(w -> w.contains("measured on /"));
    HostStatsProvider h = new HostStatsProvider(p, "n", CLOCK);
    assertThat(h.paths().kubeletRootDir()).isEqualTo(Path.of("/"));
    assertThat(h.paths().runtimeRootDir()).isEqualTo(Path.of("/"));
    Summary s = h.summary();
    assertThat(s.node().fs().capacityBytes())
        .isEqualTo(Filesystems.usage(Path.of("/")).capacityBytes());
    assertThat(s.node().nodeName()).isEqualTo("n");
  }

  @Test
  void aMissingProcRootIsAStatsError() {
    HostStatsProvider h =
        new HostStatsProvider(
            new HostPaths(null, Path.of("/no/such/proc"), null, null, null), "n", CLOCK);
    assertThatThrownBy(h::summary)
        .isInstanceOf(StatsException.class)
        .hasMessageContaining("/no/such/proc");
  }
}
