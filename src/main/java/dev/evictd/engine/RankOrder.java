package dev.evictd.engine;

import dev.evictd.api.RankKey;
import dev.evictd.api.Ranking;
import dev.evictd.api.ReclaimTarget;
import dev.evictd.api.Signal;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;

/**
 * The rank order: the pods of the signal the rules selected for reclaim, sorted by the rank keys
 * the rules computed for them ({@link RankKey#compareTo}), as the {@link Ranking} fact the decide
 * phase reads.
 */
final class RankOrder {
  private RankOrder() {}

  /**
   * The ranking of this sync, or null when the rules selected no signal or ranked no active pod.
   * Only the first rank key of a pod counts (a warning says so for the others). The record keeps
   * the ranking with its pods, in order, for the plan.
   */
  static Ranking rank(SessionFacts facts, SessionRecord record, List<String> warnings) {
    List<ReclaimTarget> targets = record.perSyncFacts.of(ReclaimTarget.class);
    if (targets.isEmpty()) {
      return null;
    }
    Signal signal = targets.get(0).signal();
    long seq = facts.seq();
    List<Ranked> ranked = new ArrayList<>();
    for (RankKey k : record.perSyncFacts.of(RankKey.class)) {
      PodEntry e;
      if (k.signal() != signal || (e = facts.entryOf(k)) == null) {
        continue;
      }
      if (e.rankedAt == seq) {
        warnings.add("pod " + e.fact.key() + " has more than one rank key; the first is used");
        continue;
      }
      e.rankedAt = seq;
      ranked.add(new Ranked(k, e));
    }
    if (ranked.isEmpty()) {
      return null;
    }
    sort(ranked);
    List<RankKey> order = new ArrayList<>(ranked.size());
    List<PodEntry> entries = new ArrayList<>(ranked.size());
    for (Ranked r : ranked) {
      order.add(r.key);
      entries.add(r.entry);
    }
    Ranking ranking = new Ranking(signal, order, record.exemptions.keySet());
    record.lastRanking = ranking;
    record.lastRankingEntries = entries;
    return ranking;
  }

  /** The keys in the order {@link #rank} puts them in (the same as their natural order). */
  static List<RankKey> sorted(List<RankKey> keys) {
    List<Ranked> ranked = new ArrayList<>(keys.size());
    for (RankKey k : keys) {
      ranked.add(new Ranked(k, null));
    }
    if (!ranked.isEmpty()) {
      sort(ranked);
    }
    return ranked.stream().map(r -> r.key).toList();
  }

  /** A rank key with its pod, and the key's levels as longs when they fit (see {@link #sort}). */
  private static final class Ranked {
    final RankKey key;
    final PodEntry entry;
    long[] levels;

    Ranked(RankKey key, PodEntry entry) {
      this.key = key;
      this.entry = entry;
    }
  }

  /**
   * Sorts by rank key, as {@link RankKey#compareTo} orders them. When every key has the same levels
   * (count and direction) and every level's exact amount is a long, which is the rule, the keys are
   * compared as arrays of longs (a descending level stored as its bitwise complement, which
   * reverses the order): the same order without walking each key's objects at every comparison.
   */
  private static void sort(List<Ranked> ranked) {
    List<RankKey.Component> shape = ranked.get(0).key.components();
    int n = shape.size();
    for (Ranked r : ranked) {
      List<RankKey.Component> cs = r.key.components();
      if (cs.size() != n) {
        ranked.sort((a, b) -> a.key.compareTo(b.key));
        return;
      }
      long[] levels = new long[n];
      for (int i = 0; i < n; i++) {
        RankKey.Component c = cs.get(i);
        BigDecimal x = c.exact();
        if (c.descending() != shape.get(i).descending()
            || x.scale() != 0
            || x.precision() > 18
            || x.longValue() != c.value()) {
          ranked.sort((a, b) -> a.key.compareTo(b.key));
          return;
        }
        levels[i] = c.descending() ? ~c.value() : c.value();
      }
      r.levels = levels;
    }
    ranked.sort(
        (a, b) -> {
          long[] x = a.levels;
          long[] y = b.levels;
          for (int i = 0; i < x.length; i++) {
            if (x[i] != y[i]) {
              return x[i] < y[i] ? -1 : 1;
            }
          }
          return Integer.compare(a.key.position(), b.key.position());
        });
  }
}
