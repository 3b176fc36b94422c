package dev.evictd.stats;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** A summary shares the previous read's objects exactly where they are equal. */
class SummaryReuseTest {
  static Summary.PodStats pod(String uid, long workingSet) {
    return new Summary.PodStats(
        new Summary.PodReference(uid, "ns", uid),
        List.of(),
        new Summary.MemoryStats(null, null, null, workingSet, null),
        List.of(),
        null,
        null);
  }

  static Summary.NodeStats node(long available) {
    return new Summary.NodeStats(
        "n", new Summary.MemoryStats(null, available, null, null, null), null, null, null, null);
  }

  @Test
  void equalPodsAndNodeAreTheOldObjectsChangedOnesTheNew() {
    Summary before = new Summary(node(1), List.of(pod("a", 1), pod("b", 2), pod("c", 3)));
    Summary now = new Summary(node(1), List.of(pod("a", 1), pod("b", 20), pod("c", 3)));
    Summary r = SummaryReuse.reusing(before, now);
    assertThat(r).isEqualTo(now);
    assertThat(r.node()).isSameAs(before.node());
    assertThat(r.pods().get(0)).isSameAs(before.pods().get(0));
    assertThat(r.pods().get(1)).isSameAs(now.pods().get(1));
    assertThat(r.pods().get(2)).isSameAs(before.pods().get(2));
  }

  @Test
  void podsAreMatchedByUidWhenTheOrderChanged() {
    Summary before = new Summary(node(1), List.of(pod("a", 1), pod("b", 2), pod("c", 3)));
    Summary now = new Summary(node(2), List.of(pod("new", 9), pod("c", 3), pod("a", 1)));
    Summary r = SummaryReuse.reusing(before, now);
    assertThat(r).isEqualTo(now);
    assertThat(r.node()).isSameAs(now.node());
    assertThat(r.pods().get(0)).isSameAs(now.pods().get(0));
    assertThat(r.pods().get(1)).isSameAs(before.pods().get(2));
    assertThat(r.pods().get(2)).isSameAs(before.pods().get(0));
  }

  @Test
  void nothingEqualOrNothingBeforeGivesTheNewSummaryItself() {
    Summary now = new Summary(node(2), List.of(pod("a", 5)));
    assertThat(SummaryReuse.reusing(null, now)).isSameAs(now);
    Summary before = new Summary(node(1), List.of(pod("a", 1)));
    assertThat(SummaryReuse.reusing(before, now)).isSameAs(now);
  }
}
