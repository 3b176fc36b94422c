package dev.evictd.linux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.evictd.testing.Fixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CgroupsTest {
  private final Path v1 = Fixtures.resource("hosts/v1/cgroup");
  private final Path v2 = Fixtures.resource("hosts/v2/cgroup");

  @Test
  void detectsWhereTheMemoryControllerLives(@TempDir Path empty) throws Exception {
    Cgroups c1 = Cgroups.detect(v1, null);
    assertThat(c1.version()).contains(Cgroups.Version.V1);
    assertThat(c1.memoryRoot()).contains(v1.resolve("memory"));
    assertThat(c1.podsCgroupName()).isEqualTo("kubepods");
    Cgroups c2 = Cgroups.detect(v2, "kubepods");
    assertThat(c2.version()).contains(Cgroups.Version.V2);
    assertThat(c2.memoryRoot()).contains(v2);
    assertThat(c2.describe()).isEqualTo("cgroup v2, memory controller at " + v2);

    Cgroups none = Cgroups.detect(empty, "kubepods");
    assertThat(none.version()).isEmpty();
    assertThat(none.podCgroups()).isEmpty();
    assertThat(none.describe()).isEqualTo("no memory controller under " + empty);

    // hybrid: v1 hierarchies without memory, and memory in the unified hierarchy
    Files.createDirectories(empty.resolve("unified"));
    Files.writeString(empty.resolve("unified/cgroup.controllers"), "cpu io memory pids\n");
    assertThat(Cgroups.detect(empty, null).memoryRoot()).contains(empty.resolve("unified"));
  }

  @Test
  void findsPodCgroupsUnderTheCgroupfsNamingInEveryQosClass() {
    Cgroups c = Cgroups.detect(v1, "kubepods");
    Path pods = v1.resolve("memory/kubepods");
    assertThat(c.podsCgroup()).contains(pods);
    assertThat(c.podCgroups())
        .containsOnlyKeys(
            "aaaaaaaa-0000-0000-0000-000000000001",
            "bbbbbbbb-0000-0000-0000-000000000002",
            "cccccccc-0000-0000-0000-000000000003");
    assertThat(c.podCgroup("aaaaaaaa-0000-0000-0000-000000000001"))
        .contains(pods.resolve("podaaaaaaaa-0000-0000-0000-000000000001"));
    assertThat(c.podCgroup("bbbbbbbb-0000-0000-0000-000000000002"))
        .contains(pods.resolve("burstable/podbbbbbbbb-0000-0000-0000-000000000002"));
    assertThat(c.podCgroup("cccccccc-0000-0000-0000-000000000003"))
        .contains(pods.resolve("besteffort/podcccccccc-0000-0000-0000-000000000003"));
    assertThat(c.podCgroup("ffffffff-0000-0000-0000-000000000009")).isEmpty();
    assertThat(c.podCgroup("../memory")).isEmpty();
  }

  @Test
  void findsPodCgroupsUnderTheSystemdNaming() {
    Cgroups c = Cgroups.detect(v2, "kubepods");
    Path pods = v2.resolve("kubepods.slice");
    assertThat(c.podsCgroup()).contains(pods);
    assertThat(c.driver()).contains(Cgroups.Driver.SYSTEMD);
    assertThat(c.podCgroups())
        .containsOnlyKeys(
            "dddddddd-1111-2222-3333-444444444444",
            "eeeeeeee-5555-6666-7777-888888888888",
            "ffffffff-9999-aaaa-bbbb-cccccccccccc");
    assertThat(c.podCgroup("dddddddd-1111-2222-3333-444444444444"))
        .contains(pods.resolve("kubepods-poddddddddd_1111_2222_3333_444444444444.slice"));
    assertThat(c.podCgroup("eeeeeeee-5555-6666-7777-888888888888"))
        .contains(
            pods.resolve(
                "kubepods-burstable.slice/kubepods-burstable-podeeeeeeee_5555_6666_7777_888888888888.slice"));
    assertThat(c.podCgroup("ffffffff-9999-aaaa-bbbb-cccccccccccc"))
        .contains(
            pods.resolve(
                "kubepods-besteffort.slice/kubepods-besteffort-podffffffff_9999_aaaa_bbbb_cccccccccccc.slice"));
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(
      strings = {"kubepods", "kubepods.slice", "/kubepods", "/kubepods.slice", "kubepods.slice/"})
  void everyFormOfTheNameFindsTheSameDirectoryAndEveryPodUnderBothDrivers(String name) {
    Cgroups systemd = Cgroups.detect(v2, name);
    assertThat(systemd.podsCgroup()).contains(v2.resolve("kubepods.slice"));
    assertThat(systemd.driver()).contains(Cgroups.Driver.SYSTEMD);
    assertThat(systemd.podCgroups()).isEqualTo(Cgroups.detect(v2, null).podCgroups()).hasSize(3);
    for (String uid : systemd.podCgroups().keySet()) {
      assertThat(systemd.podCgroup(uid)).as(uid).contains(systemd.podCgroups().get(uid));
    }
    Cgroups cgroupfs = Cgroups.detect(v1, name);
    assertThat(cgroupfs.podsCgroup()).contains(v1.resolve("memory/kubepods"));
    assertThat(cgroupfs.driver()).contains(Cgroups.Driver.CGROUPFS);
    assertThat(cgroupfs.podCgroups()).hasSize(3);
    for (String uid : cgroupfs.podCgroups().keySet()) {
      assertThat(cgroupfs.podCgroup(uid)).as(uid).contains(cgroupfs.podCgroups().get(uid));
    }
  }

  @Test
  void anAbsolutePathBelowTheMemoryControllerIsTheSameCgroup() {
    assertThat(Cgroups.detect(v2, v2.resolve("kubepods.slice").toString()).podCgroups()).hasSize(3);
    assertThat(Cgroups.detect(v1, v1.resolve("memory/kubepods").toString()).podCgroups())
        .hasSize(3);
  }

  @Test
  void aNameThatCannotBeThePodsCgroupIsRefusedInOneLine() {
    for (String bad : new String[] {"/", "../kubepods", "kubepods/../..", "a//b"}) {
      assertThatThrownBy(() -> Cgroups.detect(v2, bad))
          .as(bad)
          .isInstanceOf(dev.evictd.api.ConfigException.class)
          .hasMessageStartingWith("--pods-cgroup " + bad + ": ")
          .hasMessageNotContaining("\n");
    }
    // on v1 the memory controller has its own hierarchy: the cgroup root itself is not below it
    String outside = v1.resolve("kubepods").toString();
    assertThatThrownBy(() -> Cgroups.detect(v1, outside))
        .isInstanceOf(dev.evictd.api.ConfigException.class)
        .hasMessage(
            "--pods-cgroup "
                + outside
                + ": not below the memory controller at "
                + v1.resolve("memory")
                + " (give the cgroup name, e.g. kubepods or kubepods.slice)");
  }

  @Test
  void aNestedPodsCgroupIsFoundInEitherDriversForm(@TempDir Path root) throws Exception {
    Files.writeString(root.resolve("cgroup.controllers"), "cpu memory pids\n");
    Path pods = root.resolve("kubelet.slice/kubelet-kubepods.slice");
    Path pod =
        Files.createDirectories(
            pods.resolve(
                "kubelet-kubepods-burstable.slice/kubelet-kubepods-burstable-pod12_34.slice"));
    Path guaranteed = Files.createDirectories(pods.resolve("kubelet-kubepods-pod56_78.slice"));
    for (String name :
        new String[] {
          "/kubelet/kubepods",
          "kubelet.slice/kubelet-kubepods.slice",
          "kubelet.slice/kubelet-kubepods"
        }) {
      Cgroups c = Cgroups.detect(root, name);
      assertThat(c.podsCgroup()).as(name).contains(pods);
      assertThat(c.podCgroups()).as(name).containsOnlyKeys("12-34", "56-78");
      assertThat(c.podCgroup("12-34")).as(name).contains(pod);
      assertThat(c.podCgroup("56-78")).as(name).contains(guaranteed);
    }
    assertThat(Cgroups.detect(root, "kubepods").podsCgroup()).isEmpty();
  }

  @Test
  void podUidFromDirectoryNames() {
    assertThat(Cgroups.podUid("pod1234-ab", false)).isEqualTo("1234-ab");
    assertThat(Cgroups.podUid("burstable", false)).isNull();
    assertThat(Cgroups.podUid("kubepods-besteffort-pod12_34.slice", true)).isEqualTo("12-34");
    assertThat(Cgroups.podUid("kubepods-besteffort.slice", true)).isNull();
    assertThat(Cgroups.podUid("cri-containerd-1.scope", true)).isNull();
  }

  @Test
  void readsMemoryFiguresOfBothVersions() {
    Cgroups c1 = Cgroups.detect(v1, null);
    Cgroups.Memory root1 = c1.memory(v1.resolve("memory"));
    // the hierarchical total_* figures, not the cgroup's own
    assertThat(root1).isEqualTo(new Cgroups.Memory(8L << 30, 2L << 30, 4L << 30, null));
    assertThat(root1.workingSet()).isEqualTo(6L << 30);
    Cgroups.Memory besteffort =
        c1.memory(v1.resolve("memory/kubepods/besteffort/podcccccccc-0000-0000-0000-000000000003"));
    assertThat(besteffort.workingSet()).as("floored at zero").isZero();

    Cgroups c2 = Cgroups.detect(v2, null);
    // the v2 root has no memory.current: anon + file
    assertThat(c2.memory(v2)).isEqualTo(new Cgroups.Memory(5L << 30, 1L << 30, 3L << 30, null));
    assertThat(c2.memory(v2.resolve("kubepods.slice")))
        .isEqualTo(new Cgroups.Memory(2L << 30, 1L << 29, 1L << 30, null));
  }

  @Test
  void countsProcessesOfACgroupTree() {
    assertThat(
            Cgroups.processes(
                v1.resolve("memory/kubepods/podaaaaaaaa-0000-0000-0000-000000000001")))
        .containsExactly(101, 102, 103);
    assertThat(Cgroups.processes(v1.resolve("memory/nothing-here"))).isEmpty();
  }

  @Test
  @Tag("cgroup-v1")
  void walkerFindsEveryNestedCgroupOnTheRealHierarchy() throws Exception {
    dev.evictd.testing.TestCgroup.assumeRootWithCgroupV1();
    try (dev.evictd.testing.TestCgroup cg = dev.evictd.testing.TestCgroup.create("walker")) {
      Path pod = cg.mkdirs("pod");
      Path a = cg.mkdirs("pod/a");
      Path deep = cg.mkdirs("pod/b/c/d");
      cg.mkdirs("pod/e");
      Process inPod = cg.startIn(pod, "exec sleep 30");
      Process inA = cg.startIn(a, "exec sleep 30");
      Process inDeep = cg.startIn(deep, "exec sleep 30");
      dev.evictd.testing.TestCgroup.awaitProcesses(pod, 1);
      dev.evictd.testing.TestCgroup.awaitProcesses(a, 1);
      dev.evictd.testing.TestCgroup.awaitProcesses(deep, 1);
      Cgroups.ProcessWalker walker = new Cgroups.ProcessWalker();
      for (int round = 0;
          round < 3;
          round++) { // later rounds skip the control files remembered by the first
        assertThat(walker.processes(pod))
            .as("round %d", round)
            .containsExactlyInAnyOrder((int) inPod.pid(), (int) inA.pid(), (int) inDeep.pid());
      }
      assertThat(Cgroups.processes(pod)).isEqualTo(walker.processes(pod));
      assertThat(walker.processes(cg.dir().resolve("pod/e"))).isEmpty();
    }
  }

  @Test
  void walkerLooksAtEveryEntryWhereLinkCountsAreNotKept(@TempDir Path tmp) throws Exception {
    // a plain directory tree: the walker must not depend on cgroupfs
    Path pod = Files.createDirectories(tmp.resolve("pod"));
    Files.writeString(pod.resolve("cgroup.procs"), "7\n");
    Files.writeString(pod.resolve("memory.stat"), "");
    for (String c : new String[] {"c1", "c2", "c2/x", "c3"}) {
      Files.createDirectories(pod.resolve(c));
    }
    Files.writeString(pod.resolve("c1/cgroup.procs"), "8\n9\n");
    Files.writeString(pod.resolve("c2/x/cgroup.procs"), "10\n");
    Files.writeString(pod.resolve("c3/cgroup.procs"), "");
    Cgroups.ProcessWalker walker = new Cgroups.ProcessWalker();
    assertThat(walker.processes(pod)).containsExactly(7, 8, 9, 10);
    assertThat(walker.processes(pod)).containsExactly(7, 8, 9, 10);
    Files.delete(pod.resolve("c2/x/cgroup.procs"));
    Files.delete(pod.resolve("c2/x"));
    assertThat(walker.processes(pod)).as("a removed cgroup").containsExactly(7, 8, 9);
  }

  @Test
  void readsKeyedFiguresLikeMeminfoAndMemoryStat(@TempDir Path tmp) throws Exception {
    Path f = tmp.resolve("keyed");
    Files.writeString(
        f,
        "MemTotal:       24576000 kB\n"
            + "Inactive(file):  1024 kB\n"
            + "  cache 4096\n"
            + "hierarchical_memory_limit 9223372036854771712\n"
            + "\n"
            + "HugePages_Total:       0\n"
            + "not_a_number abc\n"
            + "too_big 99999999999999999999\n"
            + "key_only\n"
            + "rss\t12 pages\n"
            + "last 7");
    assertThat(Cgroups.readKeyed(f))
        .containsExactly(
            java.util.Map.entry("MemTotal", 24576000L * 1024),
            java.util.Map.entry("Inactive(file)", 1024L * 1024),
            java.util.Map.entry("cache", 4096L),
            java.util.Map.entry("hierarchical_memory_limit", 9223372036854771712L),
            java.util.Map.entry("HugePages_Total", 0L),
            java.util.Map.entry("rss", 12L),
            java.util.Map.entry("last", 7L));
    assertThat(Cgroups.readKeyed(tmp.resolve("missing"))).isEmpty();

    // the selective read gives what the map gives, key by key, and MISSING where the map has none
    String[] keys = {
      "MemTotal",
      "Inactive(file)",
      "cache",
      "rss",
      "last",
      "not_a_number",
      "key_only",
      "absent",
      "Mem"
    };
    long[] out = new long[keys.length];
    KernelFigures.readSelected(f, keys, out);
    java.util.Map<String, Long> map = Cgroups.readKeyed(f);
    for (int i = 0; i < keys.length; i++) {
      assertThat(out[i] == KernelFigures.MISSING ? null : out[i])
          .as(keys[i])
          .isEqualTo(map.get(keys[i]));
    }
    java.nio.file.Files.writeString(f, "dup 1\ndup 2\ndup x\n");
    KernelFigures.readSelected(f, new String[] {"dup"}, out);
    assertThat(out[0]).as("the last number of a repeated key, as the map keeps it").isEqualTo(2L);
    KernelFigures.readSelected(tmp.resolve("missing"), new String[] {"dup"}, out);
    assertThat(out[0]).isEqualTo(KernelFigures.MISSING);
  }

  @Test
  void podMemoryIsTheCgroupsMemoryWithoutItsLimit(@TempDir Path tmp) throws Exception {
    // hierarchies of their own: the shared host fixtures are read by other tests
    Path r1 = tmp.resolve("v1");
    Path pod = Files.createDirectories(r1.resolve("memory/kubepods/podp1"));
    Files.writeString(r1.resolve("memory/memory.usage_in_bytes"), "8589934592\n");
    Files.writeString(pod.resolve("memory.usage_in_bytes"), "3221225472\n");
    Files.writeString(
        pod.resolve("memory.stat"),
        "rss 5\ninactive_file 7\ntotal_rss 1048576\ntotal_inactive_file 4096\n");
    Files.writeString(pod.resolve("memory.limit_in_bytes"), "1073741824\n");
    Cgroups c1 = Cgroups.detect(r1, null);
    assertThat(c1.memory(pod)).isEqualTo(new Cgroups.Memory(3L << 30, 4096L, 1L << 20, 1L << 30));
    assertThat(c1.podMemory(pod)).isEqualTo(new Cgroups.Memory(3L << 30, 4096L, 1L << 20, null));

    Path r2 = tmp.resolve("v2");
    Path slice = Files.createDirectories(r2.resolve("kubepods.slice"));
    Files.writeString(r2.resolve("cgroup.controllers"), "cpu memory pids\n");
    Files.writeString(slice.resolve("memory.current"), "2147483648\n");
    Files.writeString(slice.resolve("memory.stat"), "anon 1024\nfile 2048\ninactive_file 512\n");
    Files.writeString(slice.resolve("memory.max"), "2147483648\n");
    Cgroups c2 = Cgroups.detect(r2, null);
    assertThat(c2.memory(slice)).isEqualTo(new Cgroups.Memory(2L << 30, 512L, 1024L, 2L << 30));
    assertThat(c2.podMemory(slice)).isEqualTo(new Cgroups.Memory(2L << 30, 512L, 1024L, null));
  }
}
