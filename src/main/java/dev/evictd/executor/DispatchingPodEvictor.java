package dev.evictd.executor;

import dev.evictd.api.ConfigException;
import dev.evictd.api.EvictionDecision;
import dev.evictd.api.EvictionMethod;
import dev.evictd.api.EvictionOutcome;
import dev.evictd.ports.EvictionResult;
import dev.evictd.ports.PodEvictor;
import java.util.EnumMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out each decision with the method the rules chose ({@link EvictionDecision#method()}), or
 * the configured default for {@link EvictionMethod#DEFAULT}. A method without an evictor (e.g.
 * {@code kill} where it is not available) is FAILED, and an evictor that throws is FAILED too:
 * every attempt ends in an outcome. {@link EvictionMethod#KILL_AND_DELETE} (where both exist) stops
 * the pod's containers with the kill evictor, then deletes the pod with the delete evictor, whose
 * outcome is the attempt's: the kill frees the memory at once, the delete records the eviction (and
 * is sent whatever became of the kill).
 */
public final class DispatchingPodEvictor implements PodEvictor {
  private static final Logger LOG = LoggerFactory.getLogger(DispatchingPodEvictor.class);

  /** The kubelet-parity default method. */
  public static final EvictionMethod PARITY_DEFAULT = EvictionMethod.DELETE;

  private final EvictionMethod defaultMethod;
  private final Map<EvictionMethod, PodEvictor> evictors = new EnumMap<>(EvictionMethod.class);

  /**
   * Routes DELETE, EVICT, KILL and DRY_RUN to their evictors; {@code kill} may be null when
   * unavailable.
   *
   * @param defaultMethod the method for DEFAULT decisions (not DEFAULT itself)
   */
  public DispatchingPodEvictor(
      EvictionMethod defaultMethod,
      PodEvictor delete,
      PodEvictor evict,
      PodEvictor kill,
      PodEvictor dryRun) {
    if (defaultMethod == null || defaultMethod == EvictionMethod.DEFAULT) {
      throw new ConfigException(
          "the default eviction method must be delete, evict, kill or dry-run");
    }
    put(EvictionMethod.DELETE, delete);
    put(EvictionMethod.EVICT, evict);
    put(EvictionMethod.KILL, kill);
    put(EvictionMethod.DRY_RUN, dryRun);
    if (kill != null && delete != null) {
      put(
          EvictionMethod.KILL_AND_DELETE,
          new PodEvictor() {
            @Override
            public EvictionOutcome evict(EvictionDecision d) {
              return attempt(d).outcome();
            }

            @Override
            public EvictionResult attempt(EvictionDecision d) {
              return killThenDelete(kill, delete, d);
            }
          });
    }
    if (!evictors.containsKey(defaultMethod)) {
      throw new ConfigException(
          "the default eviction method " + defaultMethod + " is not available");
    }
    this.defaultMethod = defaultMethod;
  }

  private void put(EvictionMethod method, PodEvictor evictor) {
    if (evictor != null) {
      evictors.put(method, evictor);
    }
  }

  private static EvictionResult killThenDelete(
      PodEvictor kill, PodEvictor delete, EvictionDecision d) {
    EvictionOutcome killed;
    try {
      killed = kill.attempt(d).outcome();
    } catch (RuntimeException e) {
      killed = EvictionOutcome.FAILED;
      LOG.warn("evict {}: stopping its containers on the node failed: {}", d.pod(), e.toString());
    }
    EvictionResult deleted = delete.attempt(d);
    LOG.info(
        "evict {}: containers stopped on the node: {}; deleted: {}",
        d.pod(),
        killed,
        deleted == null ? null : deleted.outcome());
    return deleted;
  }

  /** The method a decision is carried out with. */
  public EvictionMethod methodFor(EvictionDecision decision) {
    return decision.method() == EvictionMethod.DEFAULT ? defaultMethod : decision.method();
  }

  @Override
  public EvictionOutcome evict(EvictionDecision decision) {
    return attempt(decision).outcome();
  }

  @Override
  public EvictionResult attempt(EvictionDecision decision) {
    EvictionMethod method = methodFor(decision);
    PodEvictor evictor = evictors.get(method);
    if (evictor == null) {
      LOG.warn("evict {}: method {} is not available on this agent", decision.pod(), method);
      return EvictionResult.of(EvictionOutcome.FAILED);
    }
    try {
      EvictionResult result = evictor.attempt(decision);
      return result == null ? EvictionResult.of(EvictionOutcome.FAILED) : result;
    } catch (RuntimeException e) {
      LOG.warn("evict {} ({}): {}", decision.pod(), method, e.toString());
      return EvictionResult.of(EvictionOutcome.FAILED);
    }
  }
}
