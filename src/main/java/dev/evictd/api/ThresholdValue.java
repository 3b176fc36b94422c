package dev.evictd.api;

import java.util.Objects;

/**
 * A threshold or minimum-reclaim amount: either a quantity or a fraction of capacity (the kubelet's
 * float32 percentage / 100). Exactly one of the two is used: the quantity when present.
 *
 * @param quantity the absolute amount, or null for a percentage
 * @param percentage the fraction of capacity (float32, as the kubelet keeps it), used when quantity
 *     is null
 * @param text the value as written in the configuration, for display
 */
public record ThresholdValue(Quantity quantity, float percentage, String text) {

  /** A quantity value. */
  public static ThresholdValue ofQuantity(Quantity q, String text) {
    return new ThresholdValue(q, 0f, text);
  }

  /** A percentage value; {@code fraction} is the float32 percentage / 100. */
  public static ThresholdValue ofFraction(float fraction, String text) {
    return new ThresholdValue(null, fraction, text);
  }

  /**
   * The amount this value stands for on a resource of {@code capacity}: the quantity itself, or
   * {@code int64(float64(capacity) * float64(percentage))} in binary SI, as the kubelet computes
   * it.
   */
  public Quantity resolve(long capacity) {
    if (quantity != null) {
      return quantity;
    }
    return Quantity.of((long) ((double) capacity * (double) percentage), Quantity.Format.BINARY_SI);
  }

  /**
   * Whether two values are the same as the kubelet compares them (quantities by value, percentages
   * exactly).
   */
  public boolean sameAs(ThresholdValue o) {
    if (quantity != null) {
      return o.quantity != null && quantity.compareTo(o.quantity) == 0;
    }
    return o.quantity == null && Float.compare(percentage, o.percentage) == 0;
  }

  @Override
  public String toString() {
    return text;
  }

  // equals and hashCode written out as the implicit ones compute them: those are linked through
  // ObjectMethods at their first call, which spins method-handle classes at every start
  // (RecordMethodsTest compares the two).
  @Override
  public boolean equals(Object other) {
    return this == other
        || other instanceof ThresholdValue o
            && Objects.equals(quantity, o.quantity)
            && Float.compare(percentage, o.percentage) == 0
            && Objects.equals(text, o.text);
  }

  @Override
  public int hashCode() {
    int h = 0;
    h = 31 * h + Objects.hashCode(quantity);
    h = 31 * h + Float.hashCode(percentage);
    h = 31 * h + Objects.hashCode(text);
    return h;
  }
}
