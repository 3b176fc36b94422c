package dev.evictd.k8s;

import dev.evictd.api.Quantity;
import java.math.BigInteger;
import java.util.Locale;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.ValueDeserializer;

/**
 * Reads a non-negative integer amount written either as a JSON/YAML integer or as a Kubernetes
 * quantity string. Fractional amounts round up, as {@code Quantity.Value()} does; negative,
 * non-integral or out-of-range values are refused with a message naming the value.
 */
public final class QuantityLongDeserializer extends ValueDeserializer<Long> {
  private static final BigInteger MAX = BigInteger.valueOf(Long.MAX_VALUE);

  @Override
  public Long deserialize(JsonParser p, DeserializationContext ctxt) {
    JsonToken t = p.currentToken();
    if (t == JsonToken.VALUE_NUMBER_INT) {
      JsonParser.NumberType type = p.getNumberType();
      if (type == JsonParser.NumberType.INT || type == JsonParser.NumberType.LONG) {
        // the usual case, read without a BigInteger (thousands of amounts in every summary)
        long v = p.getLongValue();
        if (v < 0) {
          return ctxt.reportInputMismatch(this, "amount must not be negative: %s", v);
        }
        return v;
      }
      BigInteger v = p.getBigIntegerValue();
      if (v.signum() < 0 || v.compareTo(MAX) > 0) {
        return ctxt.reportInputMismatch(this, "amount out of range (0 to 2^63-1): %s", v);
      }
      return v.longValue();
    }
    if (t == JsonToken.VALUE_STRING) {
      String s = p.getString();
      Quantity q;
      try {
        q = Quantity.parse(s.trim());
      } catch (IllegalArgumentException e) {
        return ctxt.reportInputMismatch(this, "not a quantity: \"%s\" (%s)", s, e.getMessage());
      }
      if (q.sign() < 0) {
        return ctxt.reportInputMismatch(this, "amount must not be negative: \"%s\"", s);
      }
      if (q.toBigDecimal().compareTo(new java.math.BigDecimal(MAX)) > 0) {
        return ctxt.reportInputMismatch(this, "amount out of range (0 to 2^63-1): \"%s\"", s);
      }
      return q.value();
    }
    if (t == JsonToken.VALUE_NULL) {
      return null;
    }
    String text = t == JsonToken.START_ARRAY || t == JsonToken.START_OBJECT ? null : p.getText();
    return ctxt.reportInputMismatch(
        this, "expected an integer or a quantity string, found %s", token(t, text));
  }

  /** A token as a document's reader sees it: {@code a list}, {@code a mapping}, {@code true}. */
  private static String token(JsonToken t, String text) {
    if (t == null) {
      return "nothing";
    }
    return switch (t) {
      case START_ARRAY -> "a list";
      case START_OBJECT -> "a mapping";
      case VALUE_TRUE -> "true";
      case VALUE_FALSE -> "false";
      case VALUE_NULL -> "null";
      case VALUE_STRING -> "\"" + Quantity.excerpt(text) + "\"";
      case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> Quantity.excerpt(text);
      default -> t.name().toLowerCase(Locale.ROOT).replace('_', ' ');
    };
  }
}
