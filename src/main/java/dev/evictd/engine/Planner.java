package dev.evictd.engine;

import dev.evictd.api.ActionableThreshold;
import dev.evictd.api.EvictionConfig;
import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionExempt;
import dev.evictd.api.EvictionPlan;
import dev.evictd.api.GracePeriodMet;
import dev.evictd.api.NodeCondition;
import dev.evictd.api.NodeConditionType;
import dev.evictd.api.Observation;
import dev.evictd.api.PerSyncFact;
import dev.evictd.api.PodFact;
import dev.evictd.api.PodStats;
import dev.evictd.api.RankKey;
import dev.evictd.api.Ranking;
import dev.evictd.api.ReclaimAction;
import dev.evictd.api.ReclaimObservation;
import dev.evictd.api.ReclaimRequest;
import dev.evictd.api.ReclaimResolved;
import dev.evictd.api.ReclaimTarget;
import dev.evictd.api.Signal;
import dev.evictd.api.SyncClock;
import dev.evictd.api.Threshold;
import dev.evictd.api.ThresholdActive;
import dev.evictd.api.ThresholdMet;
import dev.evictd.api.ThresholdState;
import dev.evictd.api.ThresholdUnresolved;
import dev.evictd.stats.Summary;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.kie.api.event.rule.AfterMatchFiredEvent;
import org.kie.api.event.rule.BeforeMatchFiredEvent;
import org.kie.api.event.rule.DefaultAgendaEventListener;
import org.kie.api.event.rule.ObjectDeletedEvent;
import org.kie.api.event.rule.ObjectInsertedEvent;
import org.kie.api.event.rule.ObjectUpdatedEvent;
import org.kie.api.event.rule.RuleRuntimeEventListener;
import org.kie.api.runtime.KieSession;
import org.kie.api.runtime.rule.FactHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The eviction planner: one long-lived Drools session per node. Each {@link #sync} updates the input facts in
 * place (clock, observations, pods and their statistics), fires the rule phases in order, runs node-level reclaim
 * when the rules ask for it, sorts the pods by the rank keys the rules computed, and returns the plan. State the
 * kubelet keeps between syncs lives in the session as facts.
 */
public final class Planner implements AutoCloseable {
  /** The rule phases (agenda groups), in firing order. */
  public static final List<String> PHASES =
      List.of(
          "observe",
          "track",
          "grace",
          "local-storage",
          "select",
          "reclaim-check",
          "rank",
          "decide",
          "commit");

  private static final Logger LOG = LoggerFactory.getLogger(Planner.class);
  private static final int TRACE_LIMIT_PER_RULE = 20;

  private final EvictionConfig config;
  private RuleSet rules;
  private KieSession session;
  private FactHandle clockHandle;
  private SyncClock clock = new SyncClock(0, Instant.EPOCH);
  private String lastRule;
  private final Map<Signal, FactHandle> observationHandles = new EnumMap<>(Signal.class);
  private final Map<Signal, Observation> observations = new EnumMap<>(Signal.class);
  private final Map<String, PodEntry> pods = new HashMap<>();
  private final List<FactHandle> perSyncHandles = new ArrayList<>();
  private final SyncFacts perSyncFacts = new SyncFacts();
  /** The active pods of this sync, in order. */
  private List<PodEntry> activeEntries = List.of();
  /** The ranking the planner inserted in this sync and its pods, in rank order. */
  private Ranking lastRanking;
  private List<PodEntry> lastRankingEntries;
  private final Map<String, List<String>> exemptions = new HashMap<>();
  private final Set<ThresholdState> thresholdStates =
      java.util.Collections.newSetFromMap(new IdentityHashMap<>());
  private final Map<Object, Firing> producedBy = new IdentityHashMap<>();
  private final List<Firing> firings = new ArrayList<>();
  private final long maxFiringsBase;
  private long seq;
  private String phase = "";
  private Firing currentFiring;
  private boolean closed;

  /**
   * One firing of a rule in the current sync. Equal only to itself: firings are collected in sets, and hashing
   * what they matched (a Ranking holds every pod's key) would cost more than the sync.
   */
  private static final class Firing {
    private final String phase;
    private final String rule;
    private final List<Object> matched;
    private final List<Object> produced = new ArrayList<>(1);
    /** The firing as the plan shows it, rendered once (the trace and the decisions' provenance share it). */
    private EvictionPlan.RuleFiring rendered;

    Firing(String phase, String rule, List<Object> matched) {
      this.phase = phase;
      this.rule = rule;
      this.matched = matched;
    }

    String phase() {
      return phase;
    }

    String rule() {
      return rule;
    }

    List<Object> matched() {
      return matched;
    }

    List<Object> produced() {
      return produced;
    }
  }

  /**
   * The facts that hold for this sync only, by class: the plan reads them type by type, and a pressure sync holds
   * a rank key per pod. Lists keep insertion order; the types read are records (final), so a type's facts come
   * from one list.
   */
  private static final class SyncFacts {
    private final Map<Class<?>, List<Object>> byType = new HashMap<>();

    void add(Object o) {
      byType.computeIfAbsent(o.getClass(), k -> new ArrayList<>()).add(o);
    }

    void remove(Object o) {
      List<Object> l = byType.get(o.getClass());
      if (l != null) {
        l.remove(o);
      }
    }

    void clear() {
      for (List<Object> l : byType.values()) {
        l.clear();
      }
    }

    @SuppressWarnings("unchecked")
    <T> List<T> of(Class<T> type) {
      List<T> out = null;
      for (Map.Entry<Class<?>, List<Object>> e : byType.entrySet()) {
        if (type.isAssignableFrom(e.getKey()) && !e.getValue().isEmpty()) {
          if (out == null) {
            out = new ArrayList<>((List<T>) e.getValue());
          } else {
            out.addAll((List<T>) e.getValue());
          }
        }
      }
      return out == null ? new ArrayList<>() : out;
    }
  }

  /** What the planner holds for one active pod. */
  private static final class PodEntry {
    String uid;
    /** The sync that last listed the pod as active (duplicates and pods gone are found by it). */
    long seenAt = -1;
    /** The sync that last ranked the pod (a second rank key for it is ignored). */
    long rankedAt = -1;
    /** During {@link #updatePods}: the pod object, its new fact (null when unchanged) and its statistics. */
    Pod next;
    PodFact nextFact;
    Summary.PodStats nextRaw;
    Pod pod;
    PodFact fact;
    FactHandle factHandle;
    Summary.PodStats rawStats;
    PodStats stats;
    FactHandle statsHandle;
  }

  /** Creates the planner's session for a node's configuration. */
  public Planner(RuleSet rules, EvictionConfig config) {
    this(rules, config, 200_000);
  }

  /**
   * Creates the planner's session.
   *
   * @param maxFiringsBase rule firings allowed per sync on top of a per-pod allowance; a sync past it fails
   */
  public Planner(RuleSet rules, EvictionConfig config, long maxFiringsBase) {
    this.config = config;
    this.maxFiringsBase = maxFiringsBase;
    openSession(rules, List.of());
  }

  /**
   * Opens a session on {@code rules} holding the planner's input facts and the given state facts. Used at
   * construction, to swap rule sets (state carried over), and to recover from a failed sync.
   */
  private void openSession(RuleSet newRules, List<Object> state) {
    KieSession s = newRules.kieBase().newKieSession();
    if (session != null) {
      session.dispose();
    }
    session = s;
    rules = newRules;
    perSyncHandles.clear();
    perSyncFacts.clear();
    exemptions.clear();
    thresholdStates.clear();
    producedBy.clear();
    session.addEventListener(new Listener());
    session.addEventListener(new Tracer());
    session.insert(config);
    for (Threshold t : config.thresholds()) {
      session.insert(t);
    }
    clockHandle = session.insert(clock);
    for (Map.Entry<Signal, Observation> e : observations.entrySet()) {
      observationHandles.put(e.getKey(), session.insert(e.getValue()));
    }
    for (PodEntry e : pods.values()) {
      e.factHandle = session.insert(e.fact);
      e.statsHandle = e.stats == null ? null : session.insert(e.stats);
    }
    for (Object o : state) {
      session.insert(o);
    }
    java.util.ArrayDeque<Map.Entry<dev.evictd.api.EvictionAttempt, FactHandle>> kept = new java.util.ArrayDeque<>();
    for (Map.Entry<dev.evictd.api.EvictionAttempt, FactHandle> a : attempts) {
      kept.add(Map.entry(a.getKey(), session.insert(a.getKey())));
    }
    attempts.clear();
    attempts.addAll(kept);
  }

  /** The state facts the planner carries between syncs (first-observed times, conditions, last observations). */
  private List<Object> stateFacts() {
    return new ArrayList<>(
        session.getObjects(
            o ->
                o instanceof ThresholdState
                    || o instanceof dev.evictd.api.ConditionState
                    || o instanceof dev.evictd.api.SignalLastObserved));
  }

  /**
   * Replaces the rule set at a sync boundary, keeping the session's state (first-observed times, conditions,
   * thresholds acted on, last observation times, eviction attempts).
   */
  public synchronized void swapRules(RuleSet newRules) {
    if (closed) {
      throw new IllegalStateException("planner is closed");
    }
    openSession(newRules, stateFacts());
  }

  /** The configuration the planner was built for. */
  public EvictionConfig config() {
    return config;
  }

  /** The rule set in use. */
  public RuleSet rules() {
    return rules;
  }

  /** Runs one sync: observes, decides and returns the plan. Never throws for a rule failure: the plan carries it. */
  public EvictionPlan sync(Instant now, Summary summary, List<Pod> activePods, PlannerHooks hooks) {
    return sync(now, summary, activePods, hooks, List.of());
  }

  /**
   * Runs one sync with extra facts that hold for this sync only: events since the last sync (memcg threshold
   * crossings, pressure stalls) and observations beyond the summary (PSI averages).
   */
  public synchronized EvictionPlan sync(
      Instant now, Summary summary, List<Pod> activePods, PlannerHooks hooks, java.util.Collection<?> facts) {
    if (closed) {
      throw new IllegalStateException("planner is closed");
    }
    seq++;
    phase = "";
    List<String> warnings = new ArrayList<>();
    clearPerSync();
    expireAttempts(now);
    clock = new SyncClock(seq, now);
    session.update(clockHandle, clock);
    for (Object f : facts) {
      FactHandle h = session.insert(f);
      if (!(f instanceof PerSyncFact)) {
        perSyncHandles.add(h);
        perSyncFacts.add(f);
      }
    }
    updateObservations(Observations.of(summary));
    updatePods(activePods, summary, warnings);

    long budget = maxFiringsBase + 50L * pods.size();
    List<ReclaimAction> reclaimed = new ArrayList<>();
    String failure = null;
    try {
      budget = fire(List.of("observe", "track", "grace", "local-storage", "select"), budget);
      List<ReclaimRequest> requests = factsOf(ReclaimRequest.class);
      if (!requests.isEmpty()) {
        requests.sort(Comparator.comparingInt(ReclaimRequest::position));
        for (ReclaimRequest r : requests) {
          if (!hooks.reclaim(r.action())) {
            warnings.add("node-level reclaim of " + r.action() + " failed");
          }
          reclaimed.add(r.action());
        }
        Summary after = null;
        try {
          after = hooks.summaryAfterReclaim();
        } catch (RuntimeException e) {
          warnings.add("cannot read statistics after reclaim: " + e.getMessage());
        }
        if (after != null) {
          for (Observation o : Observations.of(after).values()) {
            insertPerSync(new ReclaimObservation(o.signal(), o.available(), o.capacity()));
          }
          budget = fire(List.of("reclaim-check"), budget);
        } else {
          warnings.add("no statistics after reclaim: pods are evicted as if reclaim freed nothing");
        }
      }
      budget = fire(List.of("rank"), budget);
      rank(warnings);
      budget = fire(List.of("decide", "commit"), budget);
    } catch (RuleFailure e) {
      failure = e.getMessage();
      LOG.warn("sync {} failed: {}", seq, failure);
    }
    EvictionPlan plan = buildPlan(now, reclaimed, warnings, failure);
    if (failure != null) {
      // A failed sync leaves the agenda mid-phase: start a clean session with the state kept.
      openSession(rules, stateFacts());
    }
    return plan;
  }

  /** Thrown when a rule fails during a sync. */
  private static final class RuleFailure extends RuntimeException {
    RuleFailure(String message) {
      super(message, null, false, false);
    }
  }

  private long fire(List<String> phases, long budget) {
    for (String p : phases) {
      phase = p;
      session.getAgenda().getAgendaGroup(p).setFocus();
      int fired;
      try {
        fired = session.fireAllRules((int) Math.min(Integer.MAX_VALUE, budget + 1));
      } catch (org.kie.api.runtime.rule.ConsequenceException e) {
        String rule = e.getMatch() == null ? "?" : e.getMatch().getRule().getName();
        Throwable cause = e.getCause() == null ? e : e.getCause();
        throw new RuleFailure(
            "rule \"" + rule + "\" failed in phase " + p + ": " + describe(cause));
      } catch (RuntimeException | StackOverflowError e) {
        String rule = lastRule;
        throw new RuleFailure(
            (rule == null ? "rules failed" : "rule \"" + rule + "\" failed")
                + " in phase "
                + p
                + ": "
                + describe(e));
      }
      budget -= fired;
      if (budget < 0) {
        String rule = lastRule == null ? "?" : lastRule;
        throw new RuleFailure(
            "too many rule firings in one sync (limit reached in phase "
                + p
                + ", last rule \""
                + rule
                + "\"): a rule may be looping");
      }
    }
    phase = "";
    return budget;
  }

  private static String describe(Throwable t) {
    String m = t.getMessage();
    return t.getClass().getSimpleName() + (m == null ? "" : ": " + m.lines().findFirst().orElse(""));
  }

  private void clearPerSync() {
    for (FactHandle h : perSyncHandles) {
      if (alive(h)) {
        session.delete(h);
      }
    }
    perSyncHandles.clear();
    perSyncFacts.clear();
    lastRanking = null;
    lastRankingEntries = null;
    producedBy.clear();
    firings.clear();
    currentFiring = null;
    lastRule = null;
  }

  /** Whether a fact is still in the session (a rule may have deleted it). */
  private boolean alive(FactHandle h) {
    if (h instanceof org.drools.core.common.InternalFactHandle ih) {
      return ih.isValid(); // what getObject would answer, without the object store's lookups
    }
    return session.getObject(h) != null;
  }

  private void insertPerSync(Object o) {
    session.insert(o);
  }

  private void updateObservations(Map<Signal, Observation> now) {
    for (Signal s : Signal.values()) {
      Observation o = now.get(s);
      FactHandle h = observationHandles.get(s);
      if (o == null) {
        if (h != null) {
          session.delete(h);
          observationHandles.remove(s);
          observations.remove(s);
        }
      } else if (h == null) {
        observationHandles.put(s, session.insert(o));
        observations.put(s, o);
      } else if (!o.equals(observations.get(s))) {
        session.update(h, o);
        observations.put(s, o);
      } else {
        // Same statistics as last sync: still re-evaluated, since rules join the clock.
        session.update(h, o);
      }
    }
  }

  private void updatePods(List<Pod> activePods, Summary summary, List<String> warnings) {
    // The active pods in order, a duplicate uid ignored; facts for new and changed pods are built before the session
    // is touched (a pod that cannot be read fails the sync with the session as it was).
    List<PodEntry> active = new ArrayList<>(activePods.size());
    Map<String, PodEntry> fresh = null;
    int position = 0;
    for (Pod pod : activePods) {
      String uid = PodFacts.uid(pod);
      PodEntry e = pods.get(uid);
      if (e == null && fresh != null) {
        e = fresh.get(uid);
      }
      if (e != null && e.seenAt == seq) {
        warnings.add("pod " + PodFacts.namespace(pod) + "/" + PodFacts.name(pod) + ": duplicate uid " + uid + " ignored");
        continue;
      }
      if (e == null) {
        e = new PodEntry();
        e.uid = uid;
        if (fresh == null) {
          fresh = new HashMap<>();
        }
        fresh.put(uid, e);
        e.nextFact = PodFacts.of(pod, position);
      } else if (e.pod != pod && !e.pod.equals(pod)) {
        e.nextFact = PodFacts.of(pod, position);
      } else {
        e.nextFact = null;
      }
      e.seenAt = seq;
      e.next = pod;
      e.nextRaw = null;
      active.add(e);
      position++;
    }
    // Their statistics: the kubelet's cachedStatsFunc fills a map in summary order, a later entry for a uid wins.
    if (summary != null) {
      for (Summary.PodStats ps : summary.pods()) {
        if (ps != null && ps.podRef() != null && ps.podRef().uid() != null) {
          String uid = ps.podRef().uid();
          PodEntry e = pods.get(uid);
          if (e == null && fresh != null) {
            e = fresh.get(uid);
          }
          if (e != null && e.seenAt == seq) {
            e.nextRaw = ps;
          }
        }
      }
    }
    position = 0;
    for (PodEntry e : active) {
      Pod pod = e.next;
      e.next = null;
      if (e.factHandle == null) {
        e.pod = pod;
        e.fact = e.nextFact;
        e.factHandle = session.insert(e.fact);
        pods.put(e.uid, e);
      } else if (e.nextFact != null) {
        e.pod = pod;
        e.fact = e.nextFact;
        session.update(e.factHandle, e.fact);
        e.rawStats = null; // local volumes may have changed: rebuild the statistics fact
      } else {
        e.pod = pod;
        if (e.fact.position() != position) {
          e.fact = e.fact.withPosition(position);
          session.update(e.factHandle, e.fact);
        }
      }
      e.nextFact = null;
      Summary.PodStats raw = e.nextRaw;
      e.nextRaw = null;
      if (raw == null) {
        if (e.statsHandle != null) {
          session.delete(e.statsHandle);
          e.statsHandle = null;
          e.stats = null;
          e.rawStats = null;
        }
      } else if (e.rawStats == null || !e.rawStats.equals(raw)) {
        e.rawStats = raw;
        e.stats = PodFacts.stats(e.fact, raw);
        if (e.statsHandle == null) {
          e.statsHandle = session.insert(e.stats);
        } else {
          session.update(e.statsHandle, e.stats);
        }
      }
      position++;
    }
    activeEntries = active;
    var it = pods.values().iterator();
    while (it.hasNext()) {
      PodEntry e = it.next();
      if (e.seenAt != seq) {
        session.delete(e.factHandle);
        if (e.statsHandle != null) {
          session.delete(e.statsHandle);
        }
        it.remove();
      }
    }
  }

  private void rank(List<String> warnings) {
    List<ReclaimTarget> targets = factsOf(ReclaimTarget.class);
    if (targets.isEmpty()) {
      return;
    }
    Signal signal = targets.get(0).signal();
    List<Ranked> ranked = new ArrayList<>();
    for (RankKey k : factsOf(RankKey.class)) {
      PodEntry e;
      if (k.signal() != signal || (e = entryOf(k)) == null) {
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
      return;
    }
    sort(ranked);
    List<RankKey> order = new ArrayList<>(ranked.size());
    List<PodEntry> entries = new ArrayList<>(ranked.size());
    for (Ranked r : ranked) {
      order.add(r.key);
      entries.add(r.entry);
    }
    Ranking ranking = new Ranking(signal, order, exemptions.keySet());
    lastRanking = ranking;
    lastRankingEntries = entries;
    insertPerSync(ranking);
  }

  /** The active pod a rank key is for: by its position in the active list, else by uid; null when not active. */
  private PodEntry entryOf(RankKey k) {
    int p = k.position();
    if (p >= 0 && p < activeEntries.size()) {
      PodEntry e = activeEntries.get(p);
      if (e.uid.equals(k.uid())) {
        return e;
      }
    }
    return pods.get(k.uid());
  }

  /** The keys in the order {@link #rank} puts them in (for tests: the same as their natural order). */
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
   * Sorts by rank key, as {@link RankKey#compareTo} orders them. When every key has the same levels (count and
   * direction) and every level's exact amount is a long, which is the rule, the keys are compared as arrays of
   * longs (a descending level stored as its bitwise complement, which reverses the order): the same order without
   * walking each key's objects at every comparison.
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
        java.math.BigDecimal x = c.exact();
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

  private <T> List<T> factsOf(Class<T> type) {
    return perSyncFacts.of(type);
  }

  private EvictionPlan buildPlan(
      Instant now, List<ReclaimAction> reclaimed, List<String> warnings, String failure) {
    Set<Threshold> met = new java.util.HashSet<>();
    Map<Threshold, ThresholdMet> metFacts = new HashMap<>();
    for (ThresholdMet m : factsOf(ThresholdMet.class)) {
      metFacts.put(m.threshold(), m);
    }
    Set<Threshold> unresolved = new java.util.HashSet<>();
    factsOf(ThresholdUnresolved.class).forEach(u -> unresolved.add(u.threshold()));
    Set<Threshold> active = new java.util.HashSet<>();
    factsOf(ThresholdActive.class).forEach(a -> active.add(a.threshold()));
    Set<Threshold> graceMet = new java.util.HashSet<>();
    factsOf(GracePeriodMet.class).forEach(g -> graceMet.add(g.threshold()));
    Set<Threshold> actionable = new java.util.HashSet<>();
    factsOf(ActionableThreshold.class).forEach(a -> actionable.add(a.threshold()));
    Map<Threshold, Instant> first = new HashMap<>();
    for (ThresholdState st : thresholdStates) {
      first.put(st.getThreshold(), st.getFirstObservedAt());
    }
    met.addAll(metFacts.keySet());
    List<EvictionPlan.ThresholdStatus> statuses = new ArrayList<>();
    for (Threshold t : config.thresholds()) {
      Observation o = observations.get(t.signal());
      statuses.add(
          new EvictionPlan.ThresholdStatus(
              t,
              o == null ? null : t.quantity(o.capacity()),
              o == null ? null : o.available(),
              met.contains(t),
              unresolved.contains(t),
              active.contains(t),
              first.get(t),
              graceMet.contains(t),
              actionable.contains(t)));
    }
    List<NodeConditionType> conditions =
        factsOf(NodeCondition.class).stream().map(NodeCondition::type).distinct().sorted().toList();
    List<ReclaimTarget> targets = factsOf(ReclaimTarget.class);
    Signal signal = targets.isEmpty() ? null : targets.get(0).signal();
    if (targets.size() > 1) {
      warnings.add("rules selected " + targets.size() + " thresholds to reclaim; the first is reported");
    }
    List<EvictionPlan.RankedPod> ranking = new ArrayList<>();
    List<Ranking> rankings = factsOf(Ranking.class);
    if (!rankings.isEmpty()) {
      List<RankKey> order = rankings.get(0).order();
      // the planner's own ranking (rules may replace it) comes with its pods
      List<PodEntry> entries = rankings.get(0) == lastRanking ? lastRankingEntries : null;
      for (int i = 0; i < order.size(); i++) {
        RankKey k = order.get(i);
        PodEntry e = entries != null ? entries.get(i) : pods.get(k.uid());
        List<String> reasons = exemptions.isEmpty() ? null : exemptions.get(k.uid());
        ranking.add(
            new EvictionPlan.RankedPod(
                e.fact.ref(), k.components(), reasons == null ? null : String.join(", ", reasons)));
      }
    }
    List<EvictionDecision> decisions = new ArrayList<>();
    Map<String, List<EvictionPlan.RuleFiring>> decisionTrace = new HashMap<>();
    if (failure == null) {
      List<EvictionDecision> raw = factsOf(EvictionDecision.class);
      Map<String, Integer> positions = new HashMap<>();
      for (EvictionDecision d : raw) {
        PodEntry e = pods.get(d.pod().uid());
        positions.put(d.pod().uid(), e == null ? Integer.MAX_VALUE : e.fact.position());
      }
      List<EvictionDecision> sorted = new ArrayList<>(raw);
      sorted.sort(
          Comparator.comparing((EvictionDecision d) -> d.kind() != EvictionDecision.Kind.LOCAL_STORAGE)
              .thenComparing(d -> positions.get(d.pod().uid())));
      Set<String> decided = new java.util.HashSet<>();
      for (EvictionDecision d : sorted) {
        if (!decided.add(d.pod().uid())) {
          warnings.add("pod " + d.pod() + " was decided more than once; the first decision is kept");
          continue;
        }
        if (exemptions.containsKey(d.pod().uid())) {
          warnings.add(
              "a rule decided to evict exempt pod "
                  + d.pod()
                  + " ("
                  + String.join(", ", exemptions.get(d.pod().uid()))
                  + "); the decision is dropped");
          continue;
        }
        List<Firing> chain = provenance(d);
        decisions.add(
            new EvictionDecision(
                d.pod(),
                d.kind(),
                d.signal(),
                d.gracePeriodSeconds(),
                d.message(),
                d.annotations(),
                d.method(),
                chain.stream().map(Firing::rule).distinct().toList()));
        decisionTrace.put(d.pod().uid(), chain.stream().map(Planner::describe).toList());
      }
    }
    return new EvictionPlan(
        seq,
        now,
        new ArrayList<>(observations.values()),
        statuses,
        conditions,
        signal,
        reclaimed,
        !factsOf(ReclaimResolved.class).isEmpty(),
        ranking,
        decisions,
        traceOf(),
        decisionTrace,
        warnings,
        failure);
  }

  private static EvictionPlan.RuleFiring describe(Firing f) {
    if (f.rendered == null) {
      f.rendered =
          new EvictionPlan.RuleFiring(
              f.phase(),
              f.rule(),
              f.matched().stream().map(Planner::shortDescription).toList(),
              f.produced().stream().map(Planner::shortDescription).toList());
    }
    return f.rendered;
  }

  /** The firings that produced a fact: the one that inserted it, then those behind the facts it matched. */
  private List<Firing> provenance(Object fact) {
    Set<Firing> out = new LinkedHashSet<>();
    java.util.ArrayDeque<Object> todo = new java.util.ArrayDeque<>();
    Set<Object> visited = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
    todo.add(fact);
    while (!todo.isEmpty()) {
      Object o = todo.poll();
      if (!visited.add(o)) {
        continue;
      }
      Firing f = producedBy.get(o);
      if (f == null) {
        continue;
      }
      out.add(f);
      todo.addAll(f.matched());
    }
    return new ArrayList<>(out);
  }

  private List<EvictionPlan.RuleFiring> traceOf() {
    Map<String, Integer> counts = new HashMap<>();
    for (Firing f : firings) {
      counts.merge(f.rule(), 1, Integer::sum);
    }
    List<EvictionPlan.RuleFiring> out = new ArrayList<>();
    Set<String> summarized = new java.util.HashSet<>();
    for (Firing f : firings) {
      int n = counts.get(f.rule());
      if (n > TRACE_LIMIT_PER_RULE) {
        if (summarized.add(f.rule())) {
          out.add(new EvictionPlan.RuleFiring(f.phase(), f.rule(), List.of("fired " + n + " times"), List.of()));
        }
        continue;
      }
      out.add(describe(f));
    }
    return out;
  }

  /** A one-line description of a fact for traces. */
  static String shortDescription(Object o) {
    if (o instanceof java.util.Collection<?> c) {
      return c.stream().map(Planner::shortDescription).collect(java.util.stream.Collectors.joining(", ", "[", "]"));
    }
    if (o != null && o.getClass().getName().startsWith("org.drools.")) {
      return "(initial fact)";
    }
    if (o instanceof PodFact p) {
      return "PodFact[" + p.key() + "]";
    }
    if (o instanceof PodStats s) {
      return "PodStats[" + s.uid() + ", memory " + s.memoryWorkingSetBytes() + ", processes " + s.processCount() + "]";
    }
    if (o instanceof Threshold t) {
      return "Threshold[" + t.id() + "<" + t.value() + "]";
    }
    if (o instanceof Ranking r) {
      return "Ranking[" + r.signal() + ", " + r.order().size() + " pods]";
    }
    if (o instanceof EvictionConfig) {
      return "EvictionConfig";
    }
    String s = String.valueOf(o);
    return s.length() > 200 ? s.substring(0, 200) + "..." : s;
  }

  /** How long eviction attempts stay in the session for rules to see. */
  public static final java.time.Duration ATTEMPT_RETENTION = java.time.Duration.ofHours(1);

  private final java.util.ArrayDeque<Map.Entry<dev.evictd.api.EvictionAttempt, FactHandle>> attempts =
      new java.util.ArrayDeque<>();

  /** Records what the executor did with a decision; rules see it as an {@code EvictionAttempt} fact for an hour. */
  public synchronized void recordAttempt(dev.evictd.api.EvictionAttempt attempt) {
    if (!closed) {
      attempts.add(Map.entry(attempt, session.insert(attempt)));
    }
  }

  private void expireAttempts(Instant now) {
    while (!attempts.isEmpty()
        && attempts.peekFirst().getKey().time().plus(ATTEMPT_RETENTION).isBefore(now)) {
      session.delete(attempts.pollFirst().getValue());
    }
  }

  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      session.dispose();
    }
  }

  /** Tracks per-sync facts (to retract them next sync), exemptions, and which firing produced each fact. */
  private final class Listener implements RuleRuntimeEventListener {
    @Override
    public void objectInserted(ObjectInsertedEvent event) {
      Object o = event.getObject();
      if (o instanceof PerSyncFact) {
        perSyncHandles.add(event.getFactHandle());
        perSyncFacts.add(o);
      } else if (o instanceof EvictionExempt x) {
        exemptions.computeIfAbsent(x.uid(), k -> new ArrayList<>()).add(x.reason());
      } else if (o instanceof ThresholdState st) {
        thresholdStates.add(st);
      }
      if (currentFiring != null) {
        currentFiring.produced().add(o);
        producedBy.put(o, currentFiring);
      }
    }

    @Override
    public void objectUpdated(ObjectUpdatedEvent event) {
      Object old = event.getOldObject();
      Object o = event.getObject();
      if (old instanceof PerSyncFact && old != o) {
        perSyncFacts.remove(old);
        perSyncFacts.add(o);
      }
    }

    @Override
    public void objectDeleted(ObjectDeletedEvent event) {
      Object o = event.getOldObject();
      if (o instanceof ThresholdState st) {
        thresholdStates.remove(st);
      }
      if (o instanceof EvictionExempt x) {
        List<String> l = exemptions.get(x.uid());
        if (l != null) {
          l.remove(x.reason());
          if (l.isEmpty()) {
            exemptions.remove(x.uid());
          }
        }
      } else if (o instanceof PerSyncFact && !phase.isEmpty()) {
        perSyncFacts.remove(o);
      }
    }
  }

  /** Records rule firings for the plan's trace and the decisions' provenance. */
  private final class Tracer extends DefaultAgendaEventListener {
    @Override
    public void beforeMatchFired(BeforeMatchFiredEvent event) {
      currentFiring = new Firing(phase, event.getMatch().getRule().getName(), event.getMatch().getObjects());
      firings.add(currentFiring);
      lastRule = currentFiring.rule();
    }

    @Override
    public void afterMatchFired(AfterMatchFiredEvent event) {
      currentFiring = null;
    }
  }
}
