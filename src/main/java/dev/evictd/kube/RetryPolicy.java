package dev.evictd.kube;

import dev.evictd.api.ConfigException;
import java.time.Duration;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bounded retries with exponential backoff for API calls: at most {@code maxAttempts} requests,
 * waiting {@code initialBackoff}, then twice as long each time up to {@code maxBackoff}, between
 * them.
 *
 * @param maxAttempts the number of requests at most (1: no retry)
 * @param initialBackoff the wait after the first failure
 * @param maxBackoff the longest wait between two attempts
 */
public record RetryPolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff) {
  private static final Logger LOG = LoggerFactory.getLogger(RetryPolicy.class);

  /** Three attempts, 200 ms then 400 ms apart. */
  public static final RetryPolicy DEFAULT =
      new RetryPolicy(3, Duration.ofMillis(200), Duration.ofSeconds(2));

  /**
   * The longest {@code Retry-After} a retry waits for, inside a sync; a server asking for longer
   * gets no retry now (the next sync asks again).
   */
  public static final Duration MAX_RETRY_AFTER = Duration.ofSeconds(5);

  /** One attempt. */
  public static final RetryPolicy NONE = new RetryPolicy(1, Duration.ZERO, Duration.ZERO);

  public RetryPolicy {
    if (maxAttempts < 1) {
      throw new ConfigException("retry attempts must be at least 1, got " + maxAttempts);
    }
    if (initialBackoff == null
        || initialBackoff.isNegative()
        || maxBackoff == null
        || maxBackoff.isNegative()) {
      throw new ConfigException("retry backoff must not be negative");
    }
  }

  /** The wait after failed attempt {@code attempt} (1-based). */
  public Duration backoff(int attempt) {
    Duration d = initialBackoff;
    for (int i = 1; i < attempt && d.compareTo(maxBackoff) < 0; i++) {
      d = d.multipliedBy(2);
    }
    return d.compareTo(maxBackoff) > 0 ? maxBackoff : d;
  }

  /**
   * Runs {@code call} until it returns a response {@code retryable} refuses, or the attempts are
   * used up; returns the last response. A response with {@code Retry-After} (throttling) is retried
   * after that wait instead of the backoff, when it is at most {@link #MAX_RETRY_AFTER}; a longer
   * one ends the retries. An interrupt during a backoff stops retrying (the interrupt flag is
   * kept).
   */
  public ApiResponse run(
      String what, Supplier<ApiResponse> call, Predicate<ApiResponse> retryable) {
    ApiResponse last = null;
    for (int attempt = 1; attempt <= maxAttempts; attempt++) {
      last = call.get();
      if (!retryable.test(last) || attempt == maxAttempts) {
        return last;
      }
      Duration wait = backoff(attempt);
      if (last.retryAfter() != null) {
        if (last.retryAfter().compareTo(MAX_RETRY_AFTER) > 0) {
          LOG.info(
              "{}: {} (attempt {} of {}): the server asks to wait longer than {} s; not retried now",
              what,
              last.describe(),
              attempt,
              maxAttempts,
              MAX_RETRY_AFTER.toSeconds());
          return last;
        }
        wait = last.retryAfter();
      }
      LOG.debug(
          "{}: {} (attempt {} of {}), retrying in {} ms",
          what,
          last.describe(),
          attempt,
          maxAttempts,
          wait.toMillis());
      try {
        Thread.sleep(wait.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return last;
      }
    }
    return last;
  }
}
