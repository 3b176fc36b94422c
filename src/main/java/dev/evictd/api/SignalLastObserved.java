package dev.evictd.api;

import java.time.Instant;

/**
 * Planner state kept across syncs: the statistics time of a signal's previous observation (null: no
 * time).
 */
public final class SignalLastObserved {
  private final Signal signal;
  private Instant time;

  public SignalLastObserved(Signal signal, Instant time) {
    this.signal = signal;
    this.time = time;
  }

  public Signal getSignal() {
    return signal;
  }

  public Instant getTime() {
    return time;
  }

  public void setTime(Instant time) {
    this.time = time;
  }

  /**
   * Whether an observation's statistics are not newer than this previous one (the kubelet would not
   * act on it).
   */
  public boolean isOlderThan(Observation o) {
    return o.isNewerThan(time);
  }

  @Override
  public String toString() {
    return "SignalLastObserved[" + signal + ", " + time + "]";
  }
}
