package dev.evictd.api;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Objects;

/**
 * An exact, immutable reproduction of Kubernetes' {@code
 * k8s.io/apimachinery/pkg/api/resource.Quantity} ({@code quantity.go}, with the suffixes of {@code
 * suffix.go}).
 *
 * <p>The value is held exactly as {@code unscaled × 10^exponent} (never as a floating point
 * number). What is reproduced, following the newest upstream sources:
 *
 * <ul>
 *   <li>{@link #parse}: Go's {@code ParseQuantity} scanner and suffix rules, byte for byte: the
 *       same accepted syntax (including Go's leniencies, e.g. {@code "Gi"}, {@code "."} and {@code
 *       "-"} parse as zero because the scanner accepts a digit-less mantissa on its int64 fast
 *       path), the same three error messages, the same format inference, values finer than 1n
 *       rounded away from zero to 1n, a BinarySI value silently capped at {@code 2^63-1} in
 *       magnitude and a BinarySI value strictly between -1 and 1 re-labelled DecimalSI. Decimal
 *       exponents ({@code e}/{@code E}) must lie in {@code [-2^31+1, 2^31-1]}, as upstream now
 *       enforces.
 *   <li>{@link #toString}: Go's {@code String()}, <em>including its cache</em>: when the parse fast
 *       path judged the input already canonical, Go keeps the input text verbatim and {@code
 *       String()} returns it, so {@code parse("1.441")} prints {@code "1.441"}, {@code parse("+1")}
 *       prints {@code "+1"} and {@code parse("1E3")} prints {@code "1E3"} (upstream issue #141166
 *       pins this). {@link #canonical} gives {@code CanonicalizeBytes}, which is what every
 *       computed quantity prints.
 *   <li>{@link #add}/{@link #sub}: exact; a zero receiver adopts the argument's format, otherwise
 *       the receiver's format is kept; the result never carries a cached string (Go clears it).
 *   <li>{@link #value}/{@link #milliValue}: rounded to an integer <em>away from zero</em> and
 *       saturated at the int64 bounds, as the newest {@code Value()}/{@code MilliValue()} document
 *       for both of Go's backends.
 * </ul>
 *
 * <p>Where Go misbehaves in ways no caller can rely on, this class is exact instead: int32 scale
 * wrap-around at exponents near {@code ±2^31}, and the "hang class" of upstream #141166 (inf.Dec
 * writing out 10^delta digits). To bound the work, {@link #add} and {@link #sub} of two non-zero
 * values whose decimal exponents differ by more than {@value #MAX_ALIGN_DIGITS} throw {@link
 * ArithmeticException} where Go would build a number of that many digits (or hang). Parsing never
 * materialises an exponent: {@code "1e2147483647"} and {@code "1e-2147483647"} parse in constant
 * time, like Go's int64 fast path.
 *
 * <p>Equality: {@link #equals} and {@link #hashCode} compare the exact value <em>and</em> the
 * format, ignoring the cached text ({@code parse("1.441")} equals {@code parse("1441m")}). {@link
 * #compareTo} compares values only, like Go's {@code Cmp}, so the natural ordering is inconsistent
 * with equals (as for {@link BigDecimal}).
 */
public final class Quantity implements Comparable<Quantity> {

  /** The three serialisation formats of a quantity. */
  public enum Format {
    /** E.g. {@code 12e6}. */
    DECIMAL_EXPONENT("DecimalExponent"),
    /** E.g. {@code 12Mi} (12 × 2^20). */
    BINARY_SI("BinarySI"),
    /** E.g. {@code 12M} (12 × 10^6). */
    DECIMAL_SI("DecimalSI");

    private final String goName;

    Format(String goName) {
      this.goName = goName;
    }

    /** The Go constant's string value, e.g. {@code BinarySI}. */
    public String goName() {
      return goName;
    }
  }

  /** Largest exponent gap {@link #add}/{@link #sub} will align; see the class comment. */
  public static final int MAX_ALIGN_DIGITS = 100_000;

  /** Go's {@code ErrFormatWrong} text. */
  public static final String ERR_FORMAT_WRONG =
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

  /** Go's {@code ErrNumeric} text. */
  public static final String ERR_NUMERIC = "unable to parse numeric part of quantity";

  /** Go's {@code ErrSuffix} text. */
  public static final String ERR_SUFFIX = "unable to parse quantity's suffix";

  /** Zero in DecimalSI (Go's zero {@code Quantity} prints {@code "0"} too). */
  public static final Quantity ZERO = new Quantity(BigInteger.ZERO, 0, Format.DECIMAL_SI, null);

  private static final BigInteger MAX_INT64 = BigInteger.valueOf(Long.MAX_VALUE);
  private static final BigInteger MIN_INT64 = BigInteger.valueOf(Long.MIN_VALUE);
  private static final BigInteger TEN_POW_18 = BigInteger.TEN.pow(18);

  /** 10^0 to 10^18. */
  private static final long[] LONG_POW10 = new long[19];

  static {
    LONG_POW10[0] = 1;
    for (int i = 1; i < LONG_POW10.length; i++) {
      LONG_POW10[i] = LONG_POW10[i - 1] * 10;
    }
  }

  private static final String SUFFIX_LETTERS = "eEinumkKMGTP";
  private static final String[] BINARY_SUFFIXES = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  private static final int NANO = -9;

  /**
   * The longest text {@link #parse} reads: far beyond any quantity of a real object, and parsed in
   * milliseconds (reading digits takes time that grows with their square: a million took half a
   * minute).
   */
  public static final int MAX_TEXT = 32_768;

  /** A quantity's text as an error message shows it: at most its first 60 characters. */
  public static String excerpt(String text) {
    return text.length() <= 60
        ? text
        : text.substring(0, 60) + "... (" + text.length() + " characters)";
  }

  /** Normalised: no trailing decimal zeros (zero is {@code 0 × 10^0}). */
  private final BigInteger unscaled;

  /** Base-10 exponent of {@link #unscaled}; a long because normalisation may push it past int32. */
  private final long exponent;

  private final Format format;

  /** Go's {@code Quantity.s} as set by the parse fast path; {@code null} when not cached. */
  private final String cached;

  /** Decimal digits of |unscaled| (1 for zero). */
  private final int precision;

  private volatile String canonicalText;

  private Quantity(BigInteger unscaled, long exponent, Format format, String cached) {
    this.unscaled = unscaled;
    this.exponent = exponent;
    this.format = format;
    this.cached = cached;
    this.precision = digits(unscaled);
  }

  /** Builds a quantity from {@code u × 10^e}, normalising away trailing zeros. */
  private static Quantity create(BigInteger u, long e, Format format, String cached) {
    if (u.signum() == 0) {
      return new Quantity(BigInteger.ZERO, 0, format, cached);
    }
    if (u.bitLength() < 63) {
      long v = u.longValue();
      boolean stripped = false;
      while (v % 10 == 0) {
        v /= 10;
        e++;
        stripped = true;
      }
      return new Quantity(stripped ? BigInteger.valueOf(v) : u, e, format, cached);
    }
    while (true) {
      BigInteger[] qr = u.divideAndRemainder(TEN_POW_18);
      if (qr[1].signum() != 0) {
        break;
      }
      u = qr[0];
      e += 18;
    }
    while (true) {
      BigInteger[] qr = u.divideAndRemainder(BigInteger.TEN);
      if (qr[1].signum() != 0) {
        break;
      }
      u = qr[0];
      e++;
    }
    return new Quantity(u, e, format, cached);
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Construction
  // ---------------------------------------------------------------------------------------------------------------

  /** Go {@code NewQuantity(value, format)}. */
  public static Quantity of(long value, Format format) {
    return create(BigInteger.valueOf(value), 0, Objects.requireNonNull(format, "format"), null);
  }

  /** Go {@code NewDecimalQuantity(value, format)}: the exact value, not rounded to nano. */
  public static Quantity of(BigDecimal value, Format format) {
    Objects.requireNonNull(value, "value");
    return create(
        value.unscaledValue(),
        -(long) value.scale(),
        Objects.requireNonNull(format, "format"),
        null);
  }

  /** Go {@code NewMilliQuantity(value, format)}: {@code value / 1000}. */
  public static Quantity ofMilli(long value, Format format) {
    return create(BigInteger.valueOf(value), -3, Objects.requireNonNull(format, "format"), null);
  }

  /** Go {@code NewScaledQuantity(value, scale)}: {@code value × 10^scale} in DecimalSI. */
  public static Quantity ofScaled(long value, int scale) {
    if (scale == Integer.MIN_VALUE) {
      // Go cannot represent this scale in inf.Dec either (upstream #141166); refuse rather than
      // guess.
      throw new IllegalArgumentException("scale out of range: " + scale);
    }
    return create(BigInteger.valueOf(value), scale, Format.DECIMAL_SI, null);
  }

  /** Go {@code Quantity{Format: format}}: zero in the given format. */
  public static Quantity zero(Format format) {
    Objects.requireNonNull(format, "format");
    return format == Format.DECIMAL_SI ? ZERO : new Quantity(BigInteger.ZERO, 0, format, null);
  }

  /**
   * Go {@code ParseQuantity}: parses {@code s} or throws {@link IllegalArgumentException} with Go's
   * message.
   */
  public static Quantity parse(String s) {
    Objects.requireNonNull(s, "s");
    if (s.isEmpty()) {
      throw new IllegalArgumentException(ERR_FORMAT_WRONG);
    }
    if (s.equals("0")) {
      return new Quantity(BigInteger.ZERO, 0, Format.DECIMAL_SI, s);
    }
    if (s.length() > MAX_TEXT) {
      throw new IllegalArgumentException(
          "quantity longer than " + MAX_TEXT + " characters (" + s.length() + ")");
    }
    Scan sc = scan(s);
    Suffix suf = interpret(sc.suffix);
    if (suf == null) {
      throw new IllegalArgumentException(ERR_SUFFIX);
    }

    // Go's int64 fast path: decides whether the input text is cached, and whether a digit-less
    // mantissa is accepted.
    if (suf.format != Format.BINARY_SI) {
      int digits = sc.num.length() + sc.denom.length();
      int precision = 19 - digits;
      boolean forceRecanonicalize = precision <= 0;
      long scale = (long) suf.exponent - sc.denom.length();
      if (precision >= 0 && scale >= NANO) {
        String shifted = sc.num + sc.denom;
        long magnitude =
            Long.parseUnsignedLong(shifted); // at most 19 digits: always fits 64 bits unsigned
        boolean inRange =
            Long.compareUnsigned(magnitude, Long.MAX_VALUE) <= 0
                || (!sc.positive && magnitude == Long.MIN_VALUE);
        if (inRange) {
          BigInteger v = new BigInteger(Long.toUnsignedString(magnitude));
          if (!sc.positive) {
            v = v.negate();
          }
          boolean canonicalInput =
              !forceRecanonicalize
                  && scale % 3 == 0
                  && !shifted.endsWith("000")
                  && shifted.charAt(0) != '0';
          return create(v, scale, suf.format, canonicalInput ? s : null);
        }
      }
    } else if (sc.denom.isEmpty()) {
      int precision = 15 - sc.num.length() - (suf.exponent * 3 / 10) - 1;
      if (precision >= 0) {
        long v = Long.parseUnsignedLong(sc.num); // precision >= 0 implies at most 11 digits
        if (v <= (Long.MAX_VALUE >> suf.exponent)) {
          BigInteger result = BigInteger.valueOf(v).shiftLeft(suf.exponent);
          if (!sc.positive) {
            result = result.negate();
          }
          boolean canonicalInput = suf.exponent % 10 == 0 && (v & 0x07) != 0;
          return create(result, 0, Format.BINARY_SI, canonicalInput ? s : null);
        }
      }
    }

    // Go's inf.Dec path.
    if (!containsDigit(sc.value)) {
      throw new IllegalArgumentException(ERR_NUMERIC);
    }
    BigInteger n = new BigInteger(sc.num + sc.denom);
    long exp10 = -(long) sc.denom.length();
    if (suf.base == 10) {
      exp10 += suf.exponent;
    } else {
      n = n.shiftLeft(suf.exponent);
    }
    Format format = suf.format;
    if (n.signum() != 0 && exp10 < NANO) {
      // Round away from zero to nano without materialising 10^-exp10.
      long k = NANO - exp10;
      if (k > digits(n)) {
        n = BigInteger.ONE;
      } else {
        BigInteger[] qr = n.divideAndRemainder(BigInteger.TEN.pow((int) k));
        n = qr[1].signum() != 0 ? qr[0].add(BigInteger.ONE) : qr[0];
      }
      exp10 = NANO;
    }
    Quantity magnitude = create(n, exp10, format, null);
    if (format == Format.BINARY_SI && magnitude.compareTo(Long.MAX_VALUE) > 0) {
      magnitude = create(MAX_INT64, 0, format, null);
    }
    if (format == Format.BINARY_SI && magnitude.signum() > 0 && magnitude.compareTo(1) < 0) {
      format = Format.DECIMAL_SI;
    }
    BigInteger u = sc.positive ? magnitude.unscaled : magnitude.unscaled.negate();
    return create(u, magnitude.exponent, format, null);
  }

  private static boolean containsDigit(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c >= '0' && c <= '9') {
        return true;
      }
    }
    return false;
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  /** The parts Go's {@code parseQuantityString} returns. */
  private record Scan(boolean positive, String value, String num, String denom, String suffix) {}

  /** Go {@code parseQuantityString}, statement for statement. */
  private static Scan scan(String str) {
    boolean positive = true;
    int pos = 0;
    int end = str.length();
    if (pos < end) {
      char c = str.charAt(0);
      if (c == '-') {
        positive = false;
        pos++;
      } else if (c == '+') {
        pos++;
      }
    }
    // strip leading zeros
    for (int i = pos; ; i++) {
      if (i >= end) {
        return new Scan(positive, "0", "0", "", "");
      }
      if (str.charAt(i) != '0') {
        break;
      }
      pos++;
    }
    // numerator
    String num;
    for (int i = pos; ; i++) {
      if (i >= end) {
        return new Scan(positive, str, str.substring(pos), "", "");
      }
      if (!isDigit(str.charAt(i))) {
        num = str.substring(pos, i);
        pos = i;
        break;
      }
    }
    if (num.isEmpty()) {
      num = "0";
    }
    // denominator
    String denom = "";
    if (pos < end && str.charAt(pos) == '.') {
      pos++;
      for (int i = pos; ; i++) {
        if (i >= end) {
          return new Scan(positive, str, num, str.substring(pos), "");
        }
        if (!isDigit(str.charAt(i))) {
          denom = str.substring(pos, i);
          pos = i;
          break;
        }
      }
    }
    String value = str.substring(0, pos);
    // suffix: letters, an optional sign, digits
    int suffixStart = pos;
    for (int i = pos; ; i++) {
      if (i >= end) {
        return new Scan(positive, value, num, denom, str.substring(suffixStart));
      }
      if (SUFFIX_LETTERS.indexOf(str.charAt(i)) < 0) {
        pos = i;
        break;
      }
    }
    if (pos < end && (str.charAt(pos) == '-' || str.charAt(pos) == '+')) {
      pos++;
    }
    for (int i = pos; ; i++) {
      if (i >= end) {
        return new Scan(positive, value, num, denom, str.substring(suffixStart));
      }
      if (!isDigit(str.charAt(i))) {
        break;
      }
    }
    throw new IllegalArgumentException(ERR_FORMAT_WRONG);
  }

  private record Suffix(int base, int exponent, Format format) {}

  /** Go {@code quantitySuffixer.interpret}; {@code null} when the suffix is not understood. */
  private static Suffix interpret(String s) {
    switch (s) {
      case "":
        return new Suffix(10, 0, Format.DECIMAL_SI);
      case "n":
        return new Suffix(10, -9, Format.DECIMAL_SI);
      case "u":
        return new Suffix(10, -6, Format.DECIMAL_SI);
      case "m":
        return new Suffix(10, -3, Format.DECIMAL_SI);
      case "k":
        return new Suffix(10, 3, Format.DECIMAL_SI);
      case "M":
        return new Suffix(10, 6, Format.DECIMAL_SI);
      case "G":
        return new Suffix(10, 9, Format.DECIMAL_SI);
      case "T":
        return new Suffix(10, 12, Format.DECIMAL_SI);
      case "P":
        return new Suffix(10, 15, Format.DECIMAL_SI);
      case "E":
        return new Suffix(10, 18, Format.DECIMAL_SI);
      case "Ki":
        return new Suffix(2, 10, Format.BINARY_SI);
      case "Mi":
        return new Suffix(2, 20, Format.BINARY_SI);
      case "Gi":
        return new Suffix(2, 30, Format.BINARY_SI);
      case "Ti":
        return new Suffix(2, 40, Format.BINARY_SI);
      case "Pi":
        return new Suffix(2, 50, Format.BINARY_SI);
      case "Ei":
        return new Suffix(2, 60, Format.BINARY_SI);
      default:
        break;
    }
    if (s.length() > 1 && (s.charAt(0) == 'e' || s.charAt(0) == 'E')) {
      long parsed;
      try {
        parsed =
            Long.parseLong(
                s.substring(1)); // strconv.ParseInt(s[1:], 10, 64); the scanner admits ASCII only
      } catch (NumberFormatException e) {
        return null;
      }
      if (parsed > Integer.MAX_VALUE || parsed < -Integer.MAX_VALUE) {
        return null; // the exponent must fit the int32 scale and its negation
      }
      return new Suffix(10, (int) parsed, Format.DECIMAL_EXPONENT);
    }
    return null;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Arithmetic and comparison
  // ---------------------------------------------------------------------------------------------------------------

  /**
   * Go {@code q.Add(y)}: the exact sum; a zero receiver takes {@code y}'s format, else keeps its
   * own.
   */
  public Quantity add(Quantity y) {
    Objects.requireNonNull(y, "y");
    Format f = isZero() ? y.format : format;
    return create(sum(this, y.unscaled, y.exponent), resultExponent(this, y), f, null);
  }

  /**
   * Go {@code q.Sub(y)}: the exact difference; a zero receiver takes {@code y}'s format, else keeps
   * its own.
   */
  public Quantity sub(Quantity y) {
    Objects.requireNonNull(y, "y");
    Format f = isZero() ? y.format : format;
    return create(sum(this, y.unscaled.negate(), y.exponent), resultExponent(this, y), f, null);
  }

  /** Go {@code q.Neg()}: the negated value in the same format. */
  public Quantity negate() {
    return create(unscaled.negate(), exponent, format, null);
  }

  private static long resultExponent(Quantity x, Quantity y) {
    if (y.isZero()) {
      return x.exponent;
    }
    if (x.isZero()) {
      return y.exponent;
    }
    return Math.min(x.exponent, y.exponent);
  }

  /** Unscaled value of {@code x + yu × 10^ye} at exponent {@link #resultExponent}. */
  private static BigInteger sum(Quantity x, BigInteger yu, long ye) {
    if (yu.signum() == 0) {
      return x.unscaled;
    }
    if (x.isZero()) {
      return yu;
    }
    long gap = Math.abs(x.exponent - ye);
    if (gap > MAX_ALIGN_DIGITS) {
      throw new ArithmeticException(
          "quantity arithmetic needs more than "
              + MAX_ALIGN_DIGITS
              + " digits: exponents "
              + x.exponent
              + " and "
              + ye);
    }
    if (x.exponent > ye) {
      return x.unscaled.multiply(pow10(gap)).add(yu);
    }
    return x.unscaled.add(yu.multiply(pow10(gap)));
  }

  /**
   * Go {@code Cmp}: -1, 0 or 1 as this value is less than, equal to or greater than {@code o}'s.
   */
  @Override
  public int compareTo(Quantity o) {
    int s = signum();
    int os = o.signum();
    if (s != os) {
      return s < os ? -1 : 1;
    }
    if (s == 0) {
      return 0;
    }
    long adjusted = precision + exponent;
    long otherAdjusted = o.precision + o.exponent;
    if (adjusted != otherAdjusted) {
      return adjusted > otherAdjusted ? s : -s;
    }
    // Same order of magnitude: the exponent gap is bounded by the digit counts.
    if (exponent > o.exponent) {
      return unscaled.multiply(pow10(exponent - o.exponent)).compareTo(o.unscaled);
    }
    return unscaled.compareTo(o.unscaled.multiply(pow10(o.exponent - exponent)));
  }

  /** Go {@code CmpInt64}: compares this value with {@code v}. */
  public int compareTo(long v) {
    // exact in longs when both sides fit (requests, limits and usages do): no quantity is built
    if (unscaled.bitLength() < 63 && exponent >= -18 && exponent <= 18) {
      long u = unscaled.longValue();
      long scale = LONG_POW10[(int) Math.abs(exponent)];
      long high = exponent >= 0 ? Math.multiplyHigh(u, scale) : Math.multiplyHigh(v, scale);
      long low = exponent >= 0 ? u * scale : v * scale;
      if ((high == 0 && low >= 0) || (high == -1 && low < 0)) { // the product fits in a long
        return exponent >= 0 ? Long.compare(low, v) : Long.compare(u, low);
      }
    }
    return compareTo(create(BigInteger.valueOf(v), 0, Format.DECIMAL_SI, null));
  }

  /**
   * Whether |value| is at least 10^{@code p} (decided from the digits and exponent, without
   * building the number: a quantity such as {@code 1e999999999} has a billion of them).
   */
  public boolean atLeastTenToThe(long p) {
    return unscaled.signum() != 0 && precision - 1 + exponent >= p;
  }

  /** Go {@code Sign}: -1, 0 or 1. */
  public int sign() {
    return unscaled.signum();
  }

  private int signum() {
    return unscaled.signum();
  }

  /** Go {@code IsZero}. */
  public boolean isZero() {
    return unscaled.signum() == 0;
  }

  /** Go {@code Value()}: rounded to an integer away from zero, saturated at the int64 bounds. */
  public long value() {
    return scaledValue(0);
  }

  /**
   * Go {@code MilliValue()}: {@code value × 1000} rounded away from zero, saturated at the int64
   * bounds.
   */
  public long milliValue() {
    return scaledValue(-3);
  }

  /**
   * Go {@code ScaledValue(scale)}: {@code value / 10^scale} rounded away from zero, saturated at
   * the int64 bounds.
   */
  public long scaledValue(int scale) {
    if (isZero()) {
      return 0;
    }
    long e = exponent - scale;
    int s = signum();
    BigInteger result;
    if (e >= 0) {
      if (precision + e > 19) {
        return s > 0 ? Long.MAX_VALUE : Long.MIN_VALUE;
      }
      result = unscaled.multiply(pow10(e));
    } else if (-e > precision) {
      return s; // |value| < 1 rounds away from zero to ±1
    } else {
      BigInteger[] qr = unscaled.abs().divideAndRemainder(pow10(-e));
      result = qr[1].signum() != 0 ? qr[0].add(BigInteger.ONE) : qr[0];
      if (s < 0) {
        result = result.negate();
      }
    }
    if (result.compareTo(MAX_INT64) > 0) {
      return Long.MAX_VALUE;
    }
    if (result.compareTo(MIN_INT64) < 0) {
      return Long.MIN_VALUE;
    }
    return result.longValue();
  }

  /** The exact value. */
  public BigDecimal toBigDecimal() {
    long scale = -exponent;
    if (scale >= Integer.MIN_VALUE) {
      return new BigDecimal(unscaled, (int) scale);
    }
    // Only reachable for exponents just past int32 (normalised from e.g. "10e2147483647"): fold the
    // excess back.
    long excess = Integer.MIN_VALUE - scale;
    return new BigDecimal(unscaled.multiply(pow10(excess)), Integer.MIN_VALUE);
  }

  /** The format this quantity serialises in. */
  public Format format() {
    return format;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Text
  // ---------------------------------------------------------------------------------------------------------------

  /**
   * Go {@code String()}: the text cached by {@link #parse} when Go caches it, else {@link
   * #canonical()}.
   */
  @Override
  public String toString() {
    return cached != null ? cached : canonical();
  }

  /** Go {@code CanonicalizeBytes} (number followed by suffix), ignoring any cached parse text. */
  public String canonical() {
    String c = canonicalText;
    if (c == null) {
      c = computeCanonical();
      canonicalText = c;
    }
    return c;
  }

  private String computeCanonical() {
    if (isZero()) {
      return "0";
    }
    Format f = format;
    if (f == Format.BINARY_SI && ((compareTo(-1024) > 0 && compareTo(1024) < 0) || exponent < 0)) {
      // |v| < 1024, or not an integer (normalised, so a negative exponent means a fraction): no
      // binary suffix.
      f = Format.DECIMAL_SI;
    }
    if (f != Format.BINARY_SI) {
      return decimalText(unscaled, exponent, f);
    }
    BigInteger n = unscaled.multiply(pow10(exponent));
    int k = n.abs().getLowestSetBit() / 10;
    if (k == 0) {
      return n.toString();
    }
    if (k < BINARY_SUFFIXES.length) {
      return n.shiftRight(10 * k).toString() + BINARY_SUFFIXES[k];
    }
    // Past Ei there is no binary suffix: Go falls back to exact decimal exponent notation.
    return decimalText(unscaled, exponent, Format.DECIMAL_EXPONENT);
  }

  private static String decimalText(BigInteger u, long e, Format f) {
    int shift = (int) Math.floorMod(e, 3L);
    BigInteger m = shift == 0 ? u : u.multiply(pow10(shift));
    long x = e - shift;
    String suffix = null;
    if (f == Format.DECIMAL_SI) {
      suffix = decimalSiSuffix(x);
    }
    if (suffix == null) {
      suffix = x == 0 ? "" : "e" + x;
    }
    return m.toString() + suffix;
  }

  private static String decimalSiSuffix(long x) {
    if (x == -9) {
      return "n";
    } else if (x == -6) {
      return "u";
    } else if (x == -3) {
      return "m";
    } else if (x == 0) {
      return "";
    } else if (x == 3) {
      return "k";
    } else if (x == 6) {
      return "M";
    } else if (x == 9) {
      return "G";
    } else if (x == 12) {
      return "T";
    } else if (x == 15) {
      return "P";
    } else if (x == 18) {
      return "E";
    }
    return null;
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Object
  // ---------------------------------------------------------------------------------------------------------------

  /** Equal when the exact values and the formats are equal; the cached parse text is ignored. */
  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Quantity)) {
      return false;
    }
    Quantity q = (Quantity) o;
    return exponent == q.exponent && format == q.format && unscaled.equals(q.unscaled);
  }

  /** Consistent with {@link #equals}. */
  @Override
  public int hashCode() {
    return (unscaled.hashCode() * 31 + Long.hashCode(exponent)) * 31 + format.hashCode();
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Helpers
  // ---------------------------------------------------------------------------------------------------------------

  private static BigInteger pow10(long n) {
    if (n > Integer.MAX_VALUE) {
      throw new ArithmeticException("power of ten too large: " + n);
    }
    return BigInteger.TEN.pow((int) n);
  }

  private static int digits(BigInteger u) {
    if (u.signum() == 0) {
      return 1;
    }
    if (u.bitLength() < 63) {
      long v = Math.abs(u.longValue());
      int d = 1;
      while (v >= 10) {
        v /= 10;
        d++;
      }
      return d;
    }
    return new BigDecimal(u).precision();
  }
}
