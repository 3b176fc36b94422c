package dev.evictd.stats;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Makes a summary share the objects of the one read before wherever they are equal. The kubelet
 * refreshes a pod's statistics every 10-15 s while evictd reads them every second, so most pods'
 * statistics are the same as the last read: without this, the agent keeps the last summary (for a
 * shadow sync of the next rule set) and the planner the last changed statistics of each pod, two
 * equal copies per pod that live long enough to be promoted (at 5,000 pods a full collection every
 * second or two).
 */
public final class SummaryReuse {
  private SummaryReuse() {}

  /**
   * {@code next}, with its node statistics and each pod's statistics replaced by the equal ones of
   * {@code previous} (matched by pod UID, in order first); {@code next} itself when nothing is
   * equal or there is no previous summary.
   */
  public static Summary reusing(Summary previous, Summary next) {
    if (previous == null || next == null || previous == next) {
      return next;
    }
    List<Summary.PodStats> before = previous.pods();
    List<Summary.PodStats> now = next.pods();
    Map<String, Summary.PodStats> byUid = null;
    List<Summary.PodStats> pods = new ArrayList<>(now.size());
    int reused = 0;
    for (int i = 0; i < now.size(); i++) {
      Summary.PodStats p = now.get(i);
      Summary.PodStats old = i < before.size() ? before.get(i) : null;
      if (old == null || !Objects.equals(uid(old), uid(p))) {
        if (byUid == null) {
          byUid = byUid(before);
        }
        old = byUid.get(uid(p));
      }
      if (old != null && old.equals(p)) {
        pods.add(old);
        reused++;
      } else {
        pods.add(p);
      }
    }
    Summary.NodeStats node =
        Objects.equals(previous.node(), next.node()) ? previous.node() : next.node();
    if (reused == 0 && node == next.node()) {
      return next;
    }
    return new Summary(node, pods);
  }

  private static String uid(Summary.PodStats p) {
    return p.podRef() == null ? null : p.podRef().uid();
  }

  private static Map<String, Summary.PodStats> byUid(List<Summary.PodStats> pods) {
    Map<String, Summary.PodStats> m = new HashMap<>(pods.size() * 2);
    for (Summary.PodStats p : pods) {
      String u = uid(p);
      if (u != null) {
        m.putIfAbsent(u, p);
      }
    }
    return m;
  }
}
