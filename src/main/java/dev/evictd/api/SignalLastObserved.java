package dev.evictd.api;

import java.time.Instant;

/** Planner state kept across syncs: the statistics time of a signal's previous observation (null: no time). */
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

  @Override
  public String toString() {
    return "SignalLastObserved[" + signal + ", " + time + "]";
  }
}
