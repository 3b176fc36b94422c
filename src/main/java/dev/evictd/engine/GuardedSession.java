package dev.evictd.engine;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import org.kie.api.runtime.ClassObjectFilter;
import org.kie.api.runtime.KieSession;
import org.kie.api.runtime.rule.ConsequenceException;
import org.kie.api.runtime.rule.FactHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The planner's Drools session under supervision: work on it runs on the rule thread ({@link
 * RuleRunner}) within a {@link SyncBudget} (time, rule firings, bytes allocated, facts kept). Work
 * that fails or overruns comes back as a one-line reason naming the rule; the session is then
 * dropped, and when its thread is stuck in a rule it is abandoned with that thread: every call
 * checks, once the engine returns, that the session was not abandoned meanwhile, so a thread that
 * comes back late stops before it touches anything the planner still uses.
 */
final class GuardedSession implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(GuardedSession.class);

  private final SyncBudget budget;

  /** How many pods the planner holds (the allocation budget grows with them). */
  private final IntSupplier podCount;

  private final RuleRunner runner = new RuleRunner();
  private volatile Live live;
  private volatile SessionRecord record = new SessionRecord();

  /** Bytes the rule thread may still allocate in this sync (0: unlimited). */
  private long allocationLeft;

  /** Why the last sync failed when the watchdog abandoned its sync thread, until reported. */
  private volatile String abandonedSync;

  /** A session and whether it was abandoned. */
  private static final class Live {
    final KieSession kie;
    volatile boolean abandoned;

    Live(KieSession kie) {
      this.kie = kie;
    }

    <T> T alive(T result) {
      if (abandoned) {
        throw new IllegalStateException("session abandoned after its time budget");
      }
      return result;
    }
  }

  GuardedSession(SyncBudget budget, IntSupplier podCount) {
    this.budget = budget;
    this.podCount = podCount;
  }

  /**
   * Opens a new session on {@code rules} with a fresh record and its listener, disposing the one
   * before. Runs on the rule thread.
   */
  void open(RuleSet rules) {
    KieSession s = rules.kieBase().newKieSession();
    Live old = live;
    if (old != null) {
      old.kie.dispose();
    }
    live = new Live(s);
    SessionRecord fresh = new SessionRecord();
    record = fresh;
    SessionListener.attach(s, fresh);
  }

  /** Whether a session is open (none after a failure dropped it). */
  boolean isOpen() {
    return live != null;
  }

  /** What the listeners of the current session record. */
  SessionRecord record() {
    return record;
  }

  private Live live() {
    Live l = live;
    if (l == null) {
      throw new IllegalStateException("session abandoned after its time budget");
    }
    return l;
  }

  FactHandle insert(Object o) {
    Live l = live();
    return l.alive(l.kie.insert(o));
  }

  void update(FactHandle h, Object o) {
    Live l = live();
    l.kie.update(h, o);
    l.alive(h);
  }

  void delete(FactHandle h) {
    Live l = live();
    l.kie.delete(h);
    l.alive(h);
  }

  /** Whether a fact is still in the session (a rule may have deleted it). */
  boolean present(FactHandle h) {
    if (h instanceof org.drools.core.common.InternalFactHandle ih) {
      return ih.isValid(); // what getObject would answer, without the object store's lookups
    }
    Live l = live();
    return l.alive(l.kie.getObject(h)) != null;
  }

  /** The session's facts of one class (the object store visits those only). */
  Collection<?> objectsOf(Class<?> type) {
    Live l = live();
    return l.alive(new ArrayList<>(l.kie.getObjects(new ClassObjectFilter(type))));
  }

  /** Sets what the rule thread may allocate from now on in this sync, for {@code pods} pods. */
  void budgetFor(int pods) {
    allocationLeft = budget.allocatedBytesFor(pods);
  }

  /**
   * Runs session work on the rule thread within the time budget. Returns null when it finished,
   * else why not; the session is then dropped (and abandoned with its thread when stuck), so the
   * next sync opens a new one from the state kept before the sync.
   */
  String guarded(String what, Runnable work) {
    budgetFor(podCount.getAsInt());
    String failure = until(() -> what, System.nanoTime() + budget.time().toNanos(), work, false);
    if (failure != null) {
      drop();
    }
    return failure;
  }

  /**
   * Runs work on the rule thread until {@code deadline} ({@link System#nanoTime}); null when it
   * finished, else the failure. {@code what} is read when a failure is reported (the work may say
   * what it is doing). The session is dropped only when the heap ran out or the thread is stuck. On
   * a {@link SyncThread} the work runs inline; should the watchdog abandon the thread, the failure
   * is kept for {@link #takeAbandonedSync} and the thread never comes back here.
   */
  String until(Supplier<String> what, long deadline, Runnable work) {
    return until(what, deadline, work, true);
  }

  private String until(Supplier<String> what, long deadline, Runnable work, boolean inline) {
    long limit = allocationLeft;
    try {
      runner.run(
          () -> {
            work.run();
            return null;
          },
          deadline,
          limit,
          this::halt,
          inline ? o -> abandonedSync = overrun(what.get(), o, limit) : null);
      return null;
    } catch (RuleFailure e) {
      return e.getMessage();
    } catch (OutOfMemoryError e) {
      // Rule code filled the heap (or asked for an impossible array): what it built goes with the
      // session, which the next sync rebuilds from the state kept before this one.
      String rule = record.lastRule;
      drop();
      return ruleFailed(rule)
          + " while "
          + what.get()
          + ": "
          + describe(e)
          + "; the session is rebuilt from the state kept before this sync";
    } catch (RuntimeException | StackOverflowError e) {
      return ruleFailed(record.lastRule) + " while " + what.get() + ": " + describe(e);
    } catch (RuleRunner.Overrun o) {
      return overrun(what.get(), o, limit);
    } finally {
      long used = runner.lastAllocated();
      if (allocationLeft > 0 && used > 0 && !SyncThread.abandonedHere()) {
        allocationLeft = Math.max(1, allocationLeft - used);
      }
    }
  }

  /** The failure of work that overran; the session goes with a stuck thread. */
  private String overrun(String what, RuleRunner.Overrun o, long limit) {
    String m = o.allocated() >= 0 ? allocationMessage(what, o, limit) : overrunMessage(what, o);
    if (o.stuck()) {
      drop(true);
    }
    return m;
  }

  /**
   * Why the sync whose sync thread the watchdog abandoned failed, once (null when none was): the
   * next sync reports it as that sync's outcome.
   */
  String takeAbandonedSync() {
    String m = abandonedSync;
    if (m != null) {
      abandonedSync = null;
    }
    return m;
  }

  private static String ruleFailed(String rule) {
    return rule == null ? "rules failed" : "rule \"" + rule + "\" failed";
  }

  /**
   * Fires the given phases (agenda groups) in order with at most {@code firingsLeft} firings in
   * all; returns the firings left. Runs on the rule thread.
   *
   * @throws RuleFailure when a rule fails, too many fire, or the rules were halted
   */
  long fire(List<String> phases, long firingsLeft) {
    SessionRecord st = record;
    for (String p : phases) {
      st.phase = p;
      int fired;
      try {
        Live l = live();
        l.kie.getAgenda().getAgendaGroup(p).setFocus();
        fired = l.alive(l.kie.fireAllRules((int) Math.min(Integer.MAX_VALUE, firingsLeft + 1)));
      } catch (ConsequenceException e) {
        String rule = e.getMatch() == null ? "?" : e.getMatch().getRule().getName();
        Throwable cause = e.getCause() == null ? e : e.getCause();
        throw new RuleFailure(
            "rule \"" + rule + "\" failed in phase " + p + ": " + describe(cause));
      } catch (RuntimeException | StackOverflowError e) {
        throw new RuleFailure(ruleFailed(st.lastRule) + " in phase " + p + ": " + describe(e));
      }
      // an OutOfMemoryError goes up as it is: until() drops the session before anything else
      firingsLeft -= fired;
      if (st.stopRequested) {
        // halted at the end of the time budget: the caller reports it; stop before the next phase
        throw new RuleFailure("rules stopped at the end of the time budget in phase " + p);
      }
      if (firingsLeft < 0) {
        String rule = st.lastRule == null ? "?" : st.lastRule;
        throw new RuleFailure(
            "too many rule firings in one sync (limit reached in phase "
                + p
                + ", last rule \""
                + rule
                + "\"): a rule may be looping");
      }
    }
    st.phase = "";
    return firingsLeft;
  }

  /**
   * Fails the sync when the facts the rules inserted and left in the session are more, or hold
   * more, than the budget allows: the failure drops the session, and with it what they kept.
   */
  void checkKept(int pods) {
    Map<FactHandle, Object> inserted = record.ruleInserted;
    long maxFacts = budget.keptFactsFor(pods);
    if (inserted.size() > maxFacts) {
      throw new RuleFailure(
          "rules keep "
              + inserted.size()
              + " facts they inserted in the session (at most "
              + maxFacts
              + " with "
              + pods
              + " pods): the session is rebuilt from the state kept before this sync");
    }
    if (budget.keptBytes() == 0) {
      return; // no size limit
    }
    long bytes = KeptFacts.estimate(inserted.values(), budget.keptBytes(), record.keptSeen);
    if (bytes > budget.keptBytes()) {
      throw new RuleFailure(
          "the facts rules inserted hold more than "
              + mebibytes(budget.keptBytes())
              + " (at least "
              + mebibytes(bytes)
              + ", "
              + KeptFacts.largest(inserted.values())
              + "): the session is rebuilt from the state kept before this sync");
    }
  }

  /**
   * Asks the rules to stop: halts the engine (ends a loop of firings; a consequence stuck in Java
   * runs on).
   */
  private void halt() {
    SessionRecord state = record;
    state.firingAtTimeout = state.currentFiring;
    state.phaseAtTimeout = state.phase;
    state.stopRequested = true;
    Live s = live;
    if (s != null) {
      s.kie.halt();
    }
  }

  private String overrunMessage(String what, RuleRunner.Overrun o) {
    SessionRecord state = record;
    Firing f = state.firingAtTimeout;
    String limit = "the time budget of " + dev.evictd.config.GoDuration.format(budget.time());
    String phase = state.phaseAtTimeout.isEmpty() ? "" : " in phase " + state.phaseAtTimeout;
    String last =
        state.lastRule == null ? "" : "; the last rule fired was \"" + state.lastRule + "\"";
    String m;
    if (f != null) {
      m = "rule \"" + f.rule() + "\" did not finish within " + limit + phase;
    } else if (o.stuck()) {
      m =
          "rules did not finish within "
              + limit
              + " while "
              + what
              + phase
              + " (in a condition"
              + last
              + ")";
    } else {
      m =
          "rules were still firing at the end of "
              + limit
              + " while "
              + what
              + phase
              + last
              + ": a rule may be looping";
    }
    return o.stuck() ? m + abandonedNote() : m;
  }

  private String allocationMessage(String what, RuleRunner.Overrun o, long limit) {
    SessionRecord state = record;
    String rule = state.lastRule;
    String m =
        (rule == null ? "rules" : "rule \"" + rule + "\"")
            + " allocated more than the budget of "
            + mebibytes(budget.allocatedBytesFor(podCount.getAsInt()))
            + " in one sync ("
            + mebibytes(o.allocated())
            + " while "
            + what
            + (state.phase.isEmpty() ? "" : " in phase " + state.phase)
            + ")";
    return o.stuck() ? m + abandonedNote() : m;
  }

  private String abandonedNote() {
    return "; its thread did not stop and is abandoned (" + runner.abandoned() + " so far)";
  }

  static String mebibytes(long bytes) {
    return String.format(Locale.ROOT, "%.1f MiB", bytes / (1024.0 * 1024.0));
  }

  /** The throwable on one line: its class, message, and a VM error at its root. */
  static String describe(Throwable t) {
    String m = t.getMessage();
    Throwable root = t;
    for (int i = 0; i < 10 && root.getCause() != null && root.getCause() != root; i++) {
      root = root.getCause();
    }
    // the engine wraps what a condition threw: a stack overflow or exhausted heap is named
    String cause =
        root != t && root instanceof VirtualMachineError ? " (" + describe(root) + ")" : "";
    return t.getClass().getSimpleName()
        + (m == null ? "" : ": " + m.lines().findFirst().orElse(""))
        + cause;
  }

  /** Forgets the session and disposes it. */
  void drop() {
    drop(false);
  }

  /**
   * Forgets the session; a stuck thread keeps it, and its listeners keep writing to a record no one
   * reads.
   */
  private void drop(boolean stuck) {
    Live s = live;
    live = null;
    record = new SessionRecord();
    if (s == null) {
      return;
    }
    s.abandoned = true;
    if (!stuck) {
      try {
        s.kie.dispose();
      } catch (RuntimeException e) {
        LOG.debug("disposing a failed session: {}", e.toString());
      }
    }
  }

  /** How many rule threads were abandoned because a rule did not stop. */
  int abandoned() {
    return runner.abandoned();
  }

  /** How many abandoned rule threads are still running (never blocks). */
  int aliveAbandoned() {
    return runner.aliveAbandoned();
  }

  /** Disposes the session on the rule thread, then ends the rule thread. */
  @Override
  public void close() {
    Live s = live;
    if (s != null) {
      guarded("closing", () -> s.kie.dispose());
      live = null;
    }
    runner.close();
  }
}
