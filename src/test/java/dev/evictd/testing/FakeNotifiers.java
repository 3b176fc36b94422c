package dev.evictd.testing;

import dev.evictd.linux.NotifierFactory;
import dev.evictd.stats.Summary;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A {@link NotifierFactory} without a kernel: it records what the agent asked for, hands back one
 * notifier that records the summaries it is given, and lets a test deliver facts as the kernel
 * would ({@link #fire}).
 */
public final class FakeNotifiers implements NotifierFactory {
  private volatile Spec spec;
  private volatile Sink sink;
  private final List<Summary> updates = new CopyOnWriteArrayList<>();
  private final AtomicBoolean closed = new AtomicBoolean();

  @Override
  public List<Notifier> start(Spec spec, Sink sink, Clock clock) {
    this.spec = spec;
    this.sink = sink;
    return List.of(
        new Notifier() {
          @Override
          public String source() {
            return "fake";
          }

          @Override
          public String describe() {
            return "fake event source";
          }

          @Override
          public boolean available() {
            return true;
          }

          @Override
          public String unavailableReason() {
            return null;
          }

          @Override
          public void update(Summary summary) {
            updates.add(summary);
          }

          @Override
          public void close() {
            closed.set(true);
          }
        });
  }

  /** What the agent asked for, or null before it started. */
  public Spec spec() {
    return spec;
  }

  /** Delivers {@code fact} from {@code source} as a kernel event source would. */
  public void fire(Object fact, String source, boolean urgent) {
    if (sink == null) {
      throw new IllegalStateException("the agent has not started the notifiers");
    }
    sink.event(fact, source, urgent);
  }

  /** The summaries the agent passed on after its syncs. */
  public List<Summary> updates() {
    return updates;
  }

  /** Whether the agent closed the notifier. */
  public boolean closed() {
    return closed.get();
  }
}
