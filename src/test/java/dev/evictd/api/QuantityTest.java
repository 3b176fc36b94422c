package dev.evictd.api;

import static dev.evictd.api.Quantity.Format.BINARY_SI;
import static dev.evictd.api.Quantity.Format.DECIMAL_EXPONENT;
import static dev.evictd.api.Quantity.Format.DECIMAL_SI;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.evictd.api.Quantity.Format;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Ports of the tables in apimachinery's {@code quantity_test.go}, {@code quantity_golden_test.go},
 * {@code quantity_subnano_test.go} and {@code quantity_exact_policy_test.go}, which are the ground
 * truth here.
 */
class QuantityTest {

  private static final long MOST_POSITIVE = Long.MAX_VALUE;
  private static final long MOST_NEGATIVE = Long.MIN_VALUE;

  /** Go's {@code decQuantity(i, exponent, format)}. */
  private static Quantity dec(long i, int exponent, Format format) {
    return Quantity.of(new BigDecimal(BigInteger.valueOf(i), -exponent), format);
  }

  private static BigDecimal val(long i, int exponent) {
    return new BigDecimal(BigInteger.valueOf(i), -exponent);
  }

  // -------------------------------------------------------------------------------------------------------------
  // Parsing: TestQuantityParse
  // -------------------------------------------------------------------------------------------------------------

  static Stream<Arguments> parseTable() {
    return Stream.of(
        arguments("0", val(0, 0), DECIMAL_SI),
        arguments("0n", val(0, 0), DECIMAL_SI),
        arguments("0u", val(0, 0), DECIMAL_SI),
        arguments("0m", val(0, 0), DECIMAL_SI),
        arguments("0Ki", val(0, 0), BINARY_SI),
        arguments("0k", val(0, 0), DECIMAL_SI),
        arguments("0Mi", val(0, 0), BINARY_SI),
        arguments("0M", val(0, 0), DECIMAL_SI),
        arguments("0Gi", val(0, 0), BINARY_SI),
        arguments("0G", val(0, 0), DECIMAL_SI),
        arguments("0Ti", val(0, 0), BINARY_SI),
        arguments("0T", val(0, 0), DECIMAL_SI),
        // Quantity less numbers are allowed
        arguments("1", val(1, 0), DECIMAL_SI),
        // Binary suffixes
        arguments("1Ki", val(1024, 0), BINARY_SI),
        arguments("8Ki", val(8 * 1024, 0), BINARY_SI),
        arguments("7Mi", val(7L * 1024 * 1024, 0), BINARY_SI),
        arguments("6Gi", val(6L * 1024 * 1024 * 1024, 0), BINARY_SI),
        arguments("5Ti", val(5L * 1024 * 1024 * 1024 * 1024, 0), BINARY_SI),
        arguments("4Pi", val(4L * 1024 * 1024 * 1024 * 1024 * 1024, 0), BINARY_SI),
        arguments("3Ei", val(3L * 1024 * 1024 * 1024 * 1024 * 1024 * 1024, 0), BINARY_SI),
        arguments("10Ti", val(10L * 1024 * 1024 * 1024 * 1024, 0), BINARY_SI),
        arguments("100Ti", val(100L * 1024 * 1024 * 1024 * 1024, 0), BINARY_SI),
        // Decimal suffixes
        arguments("5n", val(5, -9), DECIMAL_SI),
        arguments("4u", val(4, -6), DECIMAL_SI),
        arguments("3m", val(3, -3), DECIMAL_SI),
        arguments("9", val(9, 0), DECIMAL_SI),
        arguments("8k", val(8, 3), DECIMAL_SI),
        arguments("50k", val(5, 4), DECIMAL_SI),
        arguments("7M", val(7, 6), DECIMAL_SI),
        arguments("6G", val(6, 9), DECIMAL_SI),
        arguments("5T", val(5, 12), DECIMAL_SI),
        arguments("40T", val(4, 13), DECIMAL_SI),
        arguments("300T", val(3, 14), DECIMAL_SI),
        arguments("2P", val(2, 15), DECIMAL_SI),
        arguments("1E", val(1, 18), DECIMAL_SI),
        // Decimal exponents
        arguments("1E-3", val(1, -3), DECIMAL_EXPONENT),
        arguments("1e3", val(1, 3), DECIMAL_EXPONENT),
        arguments("1E6", val(1, 6), DECIMAL_EXPONENT),
        arguments("1e9", val(1, 9), DECIMAL_EXPONENT),
        arguments("1E12", val(1, 12), DECIMAL_EXPONENT),
        arguments("1e15", val(1, 15), DECIMAL_EXPONENT),
        arguments("1E18", val(1, 18), DECIMAL_EXPONENT),
        // Nonstandard but still parsable
        arguments("1e14", val(1, 14), DECIMAL_EXPONENT),
        arguments("1e13", val(1, 13), DECIMAL_EXPONENT),
        arguments("100.035k", val(100035, 0), DECIMAL_SI),
        // Things that look like floating point
        arguments("0.001", val(1, -3), DECIMAL_SI),
        arguments("0.0005k", val(5, -1), DECIMAL_SI),
        arguments("0.005", val(5, -3), DECIMAL_SI),
        arguments("0.05", val(5, -2), DECIMAL_SI),
        arguments("0.5", val(5, -1), DECIMAL_SI),
        arguments("0.00050k", val(5, -1), DECIMAL_SI),
        arguments("0.00500", val(5, -3), DECIMAL_SI),
        arguments("0.05000", val(5, -2), DECIMAL_SI),
        arguments("0.50000", val(5, -1), DECIMAL_SI),
        arguments("0.5e0", val(5, -1), DECIMAL_EXPONENT),
        arguments("0.5e-1", val(5, -2), DECIMAL_EXPONENT),
        arguments("0.5e-2", val(5, -3), DECIMAL_EXPONENT),
        arguments("10.035M", val(10035, 3), DECIMAL_SI),
        arguments("1.2e3", val(12, 2), DECIMAL_EXPONENT),
        arguments("1.3E+6", val(13, 5), DECIMAL_EXPONENT),
        arguments("1.40e9", val(14, 8), DECIMAL_EXPONENT),
        arguments("1.53E12", val(153, 10), DECIMAL_EXPONENT),
        arguments("1.6e15", val(16, 14), DECIMAL_EXPONENT),
        arguments("1.7E18", val(17, 17), DECIMAL_EXPONENT),
        arguments("9.01", val(901, -2), DECIMAL_SI),
        arguments("8.1k", val(81, 2), DECIMAL_SI),
        arguments("7.123456M", val(7123456, 0), DECIMAL_SI),
        arguments("6.987654321G", val(6987654321L, 0), DECIMAL_SI),
        arguments("5.444T", val(5444, 9), DECIMAL_SI),
        arguments("40.1T", val(401, 11), DECIMAL_SI),
        arguments("300.2T", val(3002, 11), DECIMAL_SI),
        arguments("2.5P", val(25, 14), DECIMAL_SI),
        arguments("1.01E", val(101, 16), DECIMAL_SI),
        // Things that saturate/round
        arguments("3.001n", val(4, -9), DECIMAL_SI),
        arguments("1.1E-9", val(2, -9), DECIMAL_EXPONENT),
        arguments("0.0000000001", val(1, -9), DECIMAL_SI),
        arguments("0.0000000005", val(1, -9), DECIMAL_SI),
        arguments("0.00000000050", val(1, -9), DECIMAL_SI),
        arguments("0.5e-9", val(1, -9), DECIMAL_EXPONENT),
        arguments("0.9n", val(1, -9), DECIMAL_SI),
        arguments("0.00000012345", val(124, -9), DECIMAL_SI),
        arguments("0.00000012354", val(124, -9), DECIMAL_SI),
        arguments("9Ei", val(MOST_POSITIVE, 0), BINARY_SI),
        arguments("9223372036854775807Ki", val(MOST_POSITIVE, 0), BINARY_SI),
        arguments("12E", val(12, 18), DECIMAL_SI),
        // We'll accept fractional binary stuff, too.
        arguments("100.035Ki", val(10243584, -2), BINARY_SI),
        arguments("0.5Mi", val(524288, 0), BINARY_SI),
        arguments("0.05Gi", val(536870912, -1), BINARY_SI),
        arguments("0.025Ti", val(274877906944L, -1), BINARY_SI),
        // Things written by trolls
        arguments("0.000000000001Ki", val(2, -9), DECIMAL_SI), // rounds up, changes format
        arguments(".001", val(1, -3), DECIMAL_SI),
        arguments(".0001k", val(100, -3), DECIMAL_SI),
        arguments("1.", val(1, 0), DECIMAL_SI),
        arguments("1.G", val(1, 9), DECIMAL_SI));
  }

  @ParameterizedTest
  @MethodSource("parseTable")
  void parsesGoTable(String input, BigDecimal expected, Format format) {
    Quantity q = Quantity.parse(input);
    assertThat(q.toBigDecimal()).isEqualByComparingTo(expected);
    assertThat(q.format()).isEqualTo(format);
    assertThat(q.compareTo(Quantity.of(expected, format))).isZero();
  }

  @ParameterizedTest
  @MethodSource("parseTable")
  void parsesGoTableNegated(String input, BigDecimal expected, Format format) {
    Quantity q = Quantity.parse("-" + input);
    assertThat(q.toBigDecimal()).isEqualByComparingTo(expected.negate());
    assertThat(q.format()).isEqualTo(format);
    assertThat(q.sign()).isEqualTo(-expected.signum());
  }

  @ParameterizedTest
  @MethodSource("parseTable")
  void parsesGoTableWithExplicitPlus(String input, BigDecimal expected, Format format) {
    Quantity q = Quantity.parse("+" + input);
    assertThat(q.toBigDecimal()).isEqualByComparingTo(expected);
    assertThat(q.format()).isEqualTo(format);
  }

  // -------------------------------------------------------------------------------------------------------------
  // Parsing: errors
  // -------------------------------------------------------------------------------------------------------------

  static Stream<Arguments> invalidTable() {
    String wrong = Quantity.ERR_FORMAT_WRONG;
    String suffix = Quantity.ERR_SUFFIX;
    String numeric = Quantity.ERR_NUMERIC;
    return Stream.of(
        // Go's invalid table
        arguments("1.1.M", wrong),
        arguments("1+1.0M", wrong),
        arguments("0.1mi", suffix),
        arguments("0.1am", wrong),
        arguments("aoeu", wrong),
        arguments(".5i", suffix),
        arguments("1i", suffix),
        arguments("-3.01i", suffix),
        arguments("-3.01e-", suffix),
        arguments("1e4294967297", suffix), // rejected, not truncated to 1e1
        arguments(" 1", wrong),
        arguments("1 ", wrong),
        // the brief's list
        arguments("", wrong),
        arguments("1Gib", wrong),
        arguments("abc", wrong),
        arguments("1.2.3", wrong),
        arguments(" 1Gi", wrong),
        arguments("1 Gi", wrong),
        arguments("--1", suffix),
        arguments("1e", suffix),
        arguments("0x10", wrong),
        arguments("1_000", wrong),
        arguments("Non-Numeric", wrong),
        arguments("invalid", wrong),
        arguments("1gi", wrong),
        arguments("1ki", suffix),
        arguments("1KI", wrong),
        arguments("1mi", suffix),
        arguments("12X", wrong),
        arguments("1ee3", suffix),
        arguments("1e3.5", wrong),
        arguments("1e+", suffix),
        arguments("1Ki5", suffix),
        arguments("1\u00A0Gi", wrong),
        arguments("١", wrong), // Arabic-Indic digit one: ASCII digits only
        // digit-less mantissas that leave the int64 fast path reach inf.Dec, which needs a digit
        arguments("Pi", numeric),
        arguments("Ei", numeric),
        arguments("-Pi", numeric),
        arguments(".Ei", numeric),
        arguments("e-10", numeric));
  }

  @ParameterizedTest
  @MethodSource("invalidTable")
  void rejectsWithGoMessage(String input, String message) {
    assertThatThrownBy(() -> Quantity.parse(input))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(message);
  }

  @Test
  void errorMessagesAreGos() {
    assertThat(Quantity.ERR_FORMAT_WRONG)
        .isEqualTo(
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    assertThat(Quantity.ERR_SUFFIX).isEqualTo("unable to parse quantity's suffix");
    assertThat(Quantity.ERR_NUMERIC).isEqualTo("unable to parse numeric part of quantity");
  }

  /** Go's scanner accepts a mantissa without digits on its int64 fast path and reads it as zero. */
  static Stream<Arguments> digitLessZeros() {
    return Stream.of(
        arguments("Gi", BINARY_SI),
        arguments("Ki", BINARY_SI),
        arguments("Ti", BINARY_SI),
        arguments(".Ki", BINARY_SI),
        arguments(".", DECIMAL_SI),
        arguments("-.", DECIMAL_SI),
        arguments("-", DECIMAL_SI),
        arguments("+", DECIMAL_SI),
        arguments("m", DECIMAL_SI),
        arguments("E", DECIMAL_SI),
        arguments("e5", DECIMAL_EXPONENT),
        arguments("e-9", DECIMAL_EXPONENT),
        arguments("-.n", DECIMAL_SI));
  }

  @ParameterizedTest
  @MethodSource("digitLessZeros")
  void digitLessMantissaParsesAsZeroLikeGo(String input, Format format) {
    Quantity q = Quantity.parse(input);
    assertThat(q.isZero()).isTrue();
    assertThat(q.format()).isEqualTo(format);
    assertThat(q.toString()).isEqualTo("0");
  }

  /**
   * TestInterpretExponentInt32Bounds, through parse: the exponent must fit int32 and its negation.
   */
  @Test
  void decimalExponentMustFitInt32() {
    assertThat(Quantity.parse("1e14").toString()).isEqualTo("100e12"); // 14 % 3 != 0: not cached
    assertThat(Quantity.parse("1E2147483647").canonical()).isEqualTo("10e2147483646");
    assertThat(Quantity.parse("1E-2147483647").toString()).isEqualTo("1e-9");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "1E2147483648",
        "1E-2147483648",
        "1E4294967297",
        "1E8589934592",
        "1E9223372036854775807",
        "1E9223372036854775808",
        "1E6024865272343"
      })
  void decimalExponentPastInt32IsRefused(String s) {
    assertThatThrownBy(() -> Quantity.parse(s)).hasMessage(Quantity.ERR_SUFFIX);
  }

  @Test
  void nullIsRejected() {
    assertThatThrownBy(() -> Quantity.parse(null)).isInstanceOf(NullPointerException.class);
  }

  // -------------------------------------------------------------------------------------------------------------
  // Format inference
  // -------------------------------------------------------------------------------------------------------------

  @ParameterizedTest
  @ValueSource(strings = {"1", "1n", "1u", "1m", "1k", "1M", "1G", "1T", "1P", "1E", "1.5", "0"})
  void decimalSuffixesAreDecimalSi(String s) {
    assertThat(Quantity.parse(s).format()).isEqualTo(DECIMAL_SI);
  }

  @ParameterizedTest
  @ValueSource(strings = {"1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei", "0.5Ki", "0Ki"})
  void binarySuffixesAreBinarySi(String s) {
    assertThat(Quantity.parse(s).format()).isEqualTo(BINARY_SI);
  }

  @ParameterizedTest
  @ValueSource(strings = {"1e3", "1E3", "1e-3", "1e+3", "1e0", "12e6"})
  void exponentsAreDecimalExponent(String s) {
    assertThat(Quantity.parse(s).format()).isEqualTo(DECIMAL_EXPONENT);
  }

  @Test
  void binaryBelowOneBecomesDecimalSi() {
    assertThat(Quantity.parse("0.0001Ki").format()).isEqualTo(DECIMAL_SI);
    assertThat(Quantity.parse("-0.0001Ki").format()).isEqualTo(DECIMAL_SI);
    assertThat(Quantity.parse("0.001Ki").format()).isEqualTo(BINARY_SI); // 1.024
    assertThat(Quantity.parse("0.0Ki").format()).isEqualTo(BINARY_SI); // zero keeps its format
  }

  // -------------------------------------------------------------------------------------------------------------
  // String(): TestQuantityString, TestQuantityParseEmit, the golden corpus
  // -------------------------------------------------------------------------------------------------------------

  static Stream<Arguments> stringTable() {
    return Stream.of(
        arguments(dec(1024L * 1024 * 1024, 0, BINARY_SI), "1Gi", "1024Mi"),
        arguments(dec(300L * 1024 * 1024, 0, BINARY_SI), "300Mi", "307200Ki"),
        arguments(dec(6 * 1024, 0, BINARY_SI), "6Ki", ""),
        arguments(dec(1001L * 1024 * 1024 * 1024, 0, BINARY_SI), "1001Gi", "1025024Mi"),
        arguments(dec(1024L * 1024 * 1024 * 1024, 0, BINARY_SI), "1Ti", "1024Gi"),
        arguments(dec(5, 0, BINARY_SI), "5", "5000m"),
        arguments(dec(500, -3, BINARY_SI), "500m", "0.5"),
        arguments(dec(1, 9, DECIMAL_SI), "1G", "1000M"),
        arguments(dec(1000, 6, DECIMAL_SI), "1G", "0.001T"),
        arguments(dec(1000000, 3, DECIMAL_SI), "1G", ""),
        arguments(dec(1000000000, 0, DECIMAL_SI), "1G", ""),
        arguments(dec(1, -3, DECIMAL_SI), "1m", "1000u"),
        arguments(dec(80, -3, DECIMAL_SI), "80m", ""),
        arguments(dec(1080, -3, DECIMAL_SI), "1080m", "1.08"),
        arguments(dec(108, -2, DECIMAL_SI), "1080m", "1080000000n"),
        arguments(dec(10800, -4, DECIMAL_SI), "1080m", ""),
        arguments(dec(300, 6, DECIMAL_SI), "300M", ""),
        arguments(dec(1, 12, DECIMAL_SI), "1T", ""),
        arguments(dec(1, 18, DECIMAL_SI), "1E", ""),
        arguments(dec(1, 21, DECIMAL_SI), "1e21", "1000E"),
        arguments(dec(5, 21, DECIMAL_SI), "5e21", "5000E"),
        arguments(dec(1, 24, DECIMAL_SI), "1e24", "1000000E"),
        arguments(dec(1, 70, BINARY_SI), "10e69", ""),
        arguments(dec(2, 70, BINARY_SI), "20e69", ""),
        arguments(dec(1, 72, BINARY_SI), "1e72", ""),
        arguments(dec(1234567, 6, DECIMAL_SI), "1234567M", ""),
        arguments(dec(1234567, -3, BINARY_SI), "1234567m", ""),
        arguments(dec(3, 3, DECIMAL_SI), "3k", ""),
        arguments(dec(1025, 0, BINARY_SI), "1025", ""),
        arguments(dec(0, 0, DECIMAL_SI), "0", ""),
        arguments(dec(0, 0, BINARY_SI), "0", ""),
        arguments(dec(1, 9, DECIMAL_EXPONENT), "1e9", ".001e12"),
        arguments(dec(1, -3, DECIMAL_EXPONENT), "1e-3", "0.001e0"),
        arguments(dec(1, -9, DECIMAL_EXPONENT), "1e-9", "1000e-12"),
        arguments(dec(80, -3, DECIMAL_EXPONENT), "80e-3", ""),
        arguments(dec(300, 6, DECIMAL_EXPONENT), "300e6", ""),
        arguments(dec(1, 12, DECIMAL_EXPONENT), "1e12", ""),
        arguments(dec(1, 3, DECIMAL_EXPONENT), "1e3", ""),
        arguments(dec(3, 3, DECIMAL_EXPONENT), "3e3", ""),
        arguments(dec(3, 3, DECIMAL_SI), "3k", ""),
        arguments(dec(0, 0, DECIMAL_EXPONENT), "0", "00"),
        arguments(dec(1, -9, DECIMAL_SI), "1n", ""),
        arguments(dec(80, -9, DECIMAL_SI), "80n", ""),
        arguments(dec(1080, -9, DECIMAL_SI), "1080n", ""),
        arguments(dec(108, -8, DECIMAL_SI), "1080n", ""),
        arguments(dec(10800, -10, DECIMAL_SI), "1080n", ""),
        arguments(dec(1, -6, DECIMAL_SI), "1u", ""),
        arguments(dec(80, -6, DECIMAL_SI), "80u", ""),
        arguments(dec(1080, -6, DECIMAL_SI), "1080u", ""));
  }

  @ParameterizedTest
  @MethodSource("stringTable")
  void stringIsGoCanonicalForm(Quantity in, String expect, String alternate) {
    assertThat(in.toString()).isEqualTo(expect);
    assertThat(in.canonical()).isEqualTo(expect);
    Quantity reparsed = Quantity.parse(expect);
    assertThat(reparsed.toString()).isEqualTo(expect);
    assertThat(reparsed.compareTo(in)).isZero();
    if (!alternate.isEmpty()) {
      Quantity alt = Quantity.parse(alternate);
      assertThat(alt.toString()).isEqualTo(expect);
    }
    if (!in.isZero()) {
      assertThat(in.negate().toString()).isEqualTo("-" + expect);
    }
  }

  @Test
  void stringBelowNanoFallsBackToExponent() {
    assertThat(dec(1, -12, DECIMAL_SI).toString()).isEqualTo("1e-12");
    assertThat(dec(1, -10, DECIMAL_SI).toString()).isEqualTo("100e-12");
    assertThat(Quantity.ofScaled(1, -12).toString()).isEqualTo("1e-12");
  }

  @Test
  void binarySiPastEiFallsBackToExactDecimal() {
    Quantity twoTo70 = Quantity.of(new BigDecimal(BigInteger.ONE.shiftLeft(70)), BINARY_SI);
    assertThat(twoTo70.toString()).isEqualTo("1180591620717411303424");
    assertThat(Quantity.parse(twoTo70.toString()).compareTo(twoTo70)).isZero();
  }

  @Test
  void binarySiZeroExponentString() {
    assertThat(Quantity.of(2000, BINARY_SI).toString()).isEqualTo("2000");
    assertThat(Quantity.of(-2000, BINARY_SI).toString()).isEqualTo("-2000");
  }

  static Stream<Arguments> parseEmitTable() {
    return Stream.of(
        arguments("1Ki", "1Ki"),
        arguments("1Mi", "1Mi"),
        arguments("1Gi", "1Gi"),
        arguments("1024Mi", "1Gi"),
        arguments("1000M", "1G"),
        arguments(".001Ki", "1024m"),
        arguments(".000001Ki", "1024u"),
        arguments(".000000001Ki", "1024n"),
        arguments(".000000000001Ki", "2n"));
  }

  @ParameterizedTest
  @MethodSource("parseEmitTable")
  void parseEmit(String in, String expect) {
    assertThat(Quantity.parse(in).toString()).isEqualTo(expect);
    assertThat(Quantity.parse("-" + in).toString()).isEqualTo("-" + expect);
  }

  /** The brief's examples, each checked against Go's rules. */
  static Stream<Arguments> briefExamples() {
    return Stream.of(
        arguments("100Mi", "100Mi", BINARY_SI),
        arguments("1.5Gi", "1536Mi", BINARY_SI),
        arguments("1024", "1024", DECIMAL_SI), // no suffix means DecimalSI: 1024 is not 1Ki here
        arguments("1000", "1k", DECIMAL_SI),
        arguments("1023", "1023", DECIMAL_SI),
        arguments("1500Mi", "1500Mi", BINARY_SI),
        arguments("0.5Gi", "512Mi", BINARY_SI),
        arguments("1e3", "1e3", DECIMAL_EXPONENT),
        arguments("12e6", "12e6", DECIMAL_EXPONENT),
        arguments("1G", "1G", DECIMAL_SI),
        arguments("1200", "1200", DECIMAL_SI),
        arguments("-1Gi", "-1Gi", BINARY_SI),
        arguments("0", "0", DECIMAL_SI),
        arguments("100m", "100m", DECIMAL_SI),
        arguments("1.5", "1500m", DECIMAL_SI),
        arguments("1500m", "1500m", DECIMAL_SI),
        arguments("2000m", "2", DECIMAL_SI),
        arguments("0.1", "100m", DECIMAL_SI),
        arguments("1e100", "10e99", DECIMAL_EXPONENT),
        arguments("1000E", "1e21", DECIMAL_SI),
        arguments("100E", "100E", DECIMAL_SI),
        arguments("8Ei", "9223372036854775807", BINARY_SI),
        arguments("-20Ei", "-9223372036854775807", BINARY_SI),
        arguments("-9.5Gi", "-9728Mi", BINARY_SI),
        arguments("-9.5000000001Gi", "-10200547328107374183n", BINARY_SI),
        arguments("0.000000000000001", "1n", DECIMAL_SI),
        arguments("9223372036854775807", "9223372036854775807", DECIMAL_SI),
        arguments("9223372036854775808", "9223372036854775808", DECIMAL_SI),
        arguments("18446744073709551616", "18446744073709551616", DECIMAL_SI),
        arguments("1e1000000", "10e999999", DECIMAL_EXPONENT));
  }

  @ParameterizedTest
  @MethodSource("briefExamples")
  void briefExamplesPrintAsGoPrintsThem(String in, String expect, Format format) {
    Quantity q = Quantity.parse(in);
    assertThat(q.toString()).isEqualTo(expect);
    assertThat(q.format()).isEqualTo(format);
  }

  @Test
  void newQuantityExamples() {
    assertThat(Quantity.of(1572864000L, BINARY_SI).toString()).isEqualTo("1500Mi");
    assertThat(Quantity.of(419430401L, BINARY_SI).toString()).isEqualTo("419430401");
    assertThat(Quantity.of(3145728L, DECIMAL_SI).toString()).isEqualTo("3145728");
    assertThat(Quantity.of(2000000L, DECIMAL_SI).toString()).isEqualTo("2M");
    assertThat(Quantity.of(1024, BINARY_SI).toString()).isEqualTo("1Ki");
    assertThat(Quantity.of(1023, BINARY_SI).toString()).isEqualTo("1023");
    assertThat(Quantity.of(-1024, BINARY_SI).toString()).isEqualTo("-1Ki");
    assertThat(Quantity.of(MOST_NEGATIVE, DECIMAL_SI).toString()).isEqualTo("-9223372036854775808");
    assertThat(Quantity.ofScaled(MOST_POSITIVE, 1).toString()).isEqualTo("92233720368547758070");
    assertThat(Quantity.ofScaled(1, 21).toString()).isEqualTo("1e21");
    assertThat(Quantity.ofMilli(1441, DECIMAL_SI).toString()).isEqualTo("1441m");
  }

  /**
   * Go's parse fast path caches the input text when it looks canonical, and String() returns it
   * verbatim even when it is not (quantity_golden_test.go, quantity_exact_policy_test.go
   * nonCanonicalRef, upstream #141166/#138166).
   */
  static Stream<Arguments> cachedSpellings() {
    return Stream.of(
        arguments("1.441", "1441m"),
        arguments("1.000001", "1000001u"),
        arguments("1.000000001", "1000000001n"),
        arguments("5.", "5"),
        arguments("1.", "1"),
        arguments("+1", "1"),
        arguments("01", "1"),
        arguments("1E3", "1e3"),
        arguments("1e+21", "1e21"),
        arguments("1e0", "1"),
        arguments("123e0", "123"),
        arguments("1.500k", "1500"),
        arguments("+1Ki", "1Ki"),
        arguments("01Ki", "1Ki"),
        arguments("1.Ki", "1Ki"),
        arguments("-0001Mi", "-1Mi"));
  }

  @ParameterizedTest
  @MethodSource("cachedSpellings")
  void stringKeepsGosCachedSpelling(String in, String canonical) {
    Quantity q = Quantity.parse(in);
    assertThat(q.toString()).isEqualTo(in);
    assertThat(q.canonical()).isEqualTo(canonical);
    // Add clears Go's cache, even when adding zero.
    assertThat(q.add(Quantity.ZERO).toString()).isEqualTo(canonical);
    assertThat(q.sub(Quantity.ZERO).toString()).isEqualTo(canonical);
    assertThat(q.negate().negate().toString()).isEqualTo(canonical);
  }

  static Stream<Arguments> recanonicalised() {
    return Stream.of(
        // 18 digits still reuse the text; 19 or more are recanonicalised
        arguments("999999999999999999", "999999999999999999"),
        arguments("-999999999999999999", "-999999999999999999"),
        arguments("999999999999999999.0", "999999999999999999"),
        arguments("999999999999999999.1", "999999999999999999100m"),
        arguments("-999999999999999999.1", "-999999999999999999100m"),
        arguments("9999999999999999999", "9999999999999999999"),
        arguments("9999999999999999999.0", "9999999999999999999"),
        arguments("9999999999999999999000m", "9999999999999999999"),
        arguments("9999999999999999999.1", "9999999999999999999100m"),
        arguments("-1E", "-1E"),
        arguments("1000000000000000000", "1E"),
        arguments("-1000000000000000000", "-1E"),
        arguments("1.0E", "1E"),
        arguments("1000000000000000000.0", "1E"),
        arguments("1.0000000000000000001E", "1000000000000000000100m"),
        arguments("-1.0000000000000000001E", "-1000000000000000000100m"),
        arguments("1.000000000000000001E", "1000000000000000001"),
        arguments("1000000000000000001", "1000000000000000001"),
        arguments("10E", "10E"),
        arguments("10000000000000000000", "10E"),
        arguments("-10.0E", "-10E"),
        arguments("10000000000000000000000m", "10E"),
        arguments("10.0000000000000000001E", "10000000000000000000100m"),
        arguments("10.000000000000000001E", "10000000000000000001"),
        arguments("-9223372036854775809", "-9223372036854775809"),
        arguments("9223372036854775806.0", "9223372036854775806"),
        arguments("9223372036854775806000m", "9223372036854775806"),
        arguments("-9223372036854775808", "-9223372036854775808"),
        arguments("-9223372036854775808.0", "-9223372036854775808"),
        arguments("-9223372036854775808.1", "-9223372036854775808100m"),
        arguments("9223372036854775807.1", "9223372036854775807100m"),
        arguments("9223372036854775808.0", "9223372036854775808"),
        arguments("9223372036854775808000m", "9223372036854775808"),
        arguments("9223372036854775808.1", "9223372036854775808100m"));
  }

  /** TestParseQuantity: the reserialised form of inputs around the int64 boundaries. */
  @ParameterizedTest
  @MethodSource("recanonicalised")
  void reserialisesAroundInt64Boundaries(String in, String expect) {
    Quantity q = Quantity.parse(in);
    assertThat(q.toString()).isEqualTo(expect);
    assertThat(q.toBigDecimal()).isEqualByComparingTo(plain(in));
  }

  /** The exact value of a plain decimal with an optional {@code E} or {@code m} suffix. */
  private static BigDecimal plain(String s) {
    if (s.endsWith("E")) {
      return new BigDecimal(s.substring(0, s.length() - 1)).scaleByPowerOfTen(18);
    }
    if (s.endsWith("m")) {
      return new BigDecimal(s.substring(0, s.length() - 1)).scaleByPowerOfTen(-3);
    }
    return new BigDecimal(s);
  }

  @ParameterizedTest
  @CsvSource({
    "1e-2147483647, 1n",
    "-1e-2147483647, -1n",
    "1e-100, 1n",
    "-1e-100, -1n",
    "1e-10, 1n",
    "9e-10, 1n",
    "-9e-10, -1n",
    "1e-9, 1n",
    "-1e-9, -1n",
    "2e-9, 2n",
    "15e-10, 2n",
    "1000000000000000000000e-30, 1n",
    "1000000000000000000001e-30, 2n",
    "999999999999999999999e-30, 1n",
    "0e-2147483647, 0",
    "0.0e-100, 0",
    "0.00000000000000000000001Ki, 1n",
  })
  void subNanoRoundsAwayFromZero(String in, String expected) {
    assertThat(Quantity.parse(in).compareTo(Quantity.parse(expected))).as(in).isZero();
  }

  @Test
  void subNanoRoundsAwayFromZeroWithoutMaterialising() {
    assertThat(Quantity.parse("1e-100").toString()).isEqualTo("1e-9");
    assertThat(Quantity.parse("1e-100").format()).isEqualTo(DECIMAL_EXPONENT);
    assertThat(Quantity.parse("0.0000000000001").toString()).isEqualTo("1n");
    assertThat(Quantity.parse("-0.0000000000001").toString()).isEqualTo("-1n");
    assertThat(Quantity.parse("0.00000000000000000000001Ki").toString()).isEqualTo("1n");
    assertThat(Quantity.parse("0.00000000000000000000001Ki").format()).isEqualTo(DECIMAL_SI);
    assertThat(Quantity.parse("1e-100")).isEqualTo(Quantity.parse("9e-10"));
    assertThat(Quantity.parse("-1e-2147483647")).isEqualTo(Quantity.parse("-9e-10"));
  }

  // -------------------------------------------------------------------------------------------------------------
  // Huge exponents: Go's int64 fast path keeps them compact; so do we, and arithmetic is bounded.
  // -------------------------------------------------------------------------------------------------------------

  @Test
  @Timeout(value = 10, unit = TimeUnit.SECONDS)
  void hugeExponentsStayCheap() {
    Quantity big = Quantity.parse("1e2147483647");
    assertThat(big.format()).isEqualTo(DECIMAL_EXPONENT);
    assertThat(big.toString()).isEqualTo("10e2147483646");
    assertThat(big.value()).isEqualTo(Long.MAX_VALUE);
    assertThat(big.milliValue()).isEqualTo(Long.MAX_VALUE);
    assertThat(big.negate().value()).isEqualTo(Long.MIN_VALUE);
    assertThat(big.compareTo(Quantity.parse("1e2147483646"))).isPositive();
    assertThat(big.compareTo(Quantity.parse("9e2147483646"))).isPositive();
    assertThat(big.compareTo(Quantity.parse("10e2147483646"))).isZero();
    assertThat(big.compareTo(Long.MAX_VALUE)).isPositive();
    assertThat(big.negate().compareTo(Long.MIN_VALUE)).isNegative();
    assertThat(big.add(big).toString()).isEqualTo("20e2147483646");
    assertThat(big.sub(big).isZero()).isTrue();
    assertThat(Quantity.ZERO.add(big).toString()).isEqualTo("10e2147483646");
    assertThat(big.add(Quantity.ZERO).toString()).isEqualTo("10e2147483646");
    assertThat(big.toBigDecimal())
        .isEqualByComparingTo(new BigDecimal(BigInteger.ONE, -2147483647));
    Quantity past = Quantity.parse("10e2147483647"); // normalises to 1e2147483648, past int32
    assertThat(past.toString()).isEqualTo("100e2147483646");
    assertThat(past.toBigDecimal())
        .isEqualByComparingTo(new BigDecimal(BigInteger.TEN, -2147483647));
    Quantity million = Quantity.parse("1e1000000");
    assertThat(million.toString()).isEqualTo("10e999999");
    assertThat(million.value()).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  @Timeout(value = 10, unit = TimeUnit.SECONDS)
  void arithmeticAcrossAbsurdExponentGapsIsRefused() {
    Quantity big = Quantity.parse("1e2147483647");
    assertThatThrownBy(() -> big.add(Quantity.parse("1"))).isInstanceOf(ArithmeticException.class);
    assertThatThrownBy(() -> big.sub(Quantity.parse("1n"))).isInstanceOf(ArithmeticException.class);
    assertThatThrownBy(() -> Quantity.parse("1").add(big)).isInstanceOf(ArithmeticException.class);
    // within the bound the sum is exact
    Quantity sum = Quantity.parse("1e50000").add(Quantity.parse("1"));
    assertThat(sum.toBigDecimal())
        .isEqualByComparingTo(BigDecimal.TEN.pow(50000).add(BigDecimal.ONE));
  }

  @Test
  @Timeout(value = 10, unit = TimeUnit.SECONDS)
  void longInputsParse() {
    String digits = "1" + "0".repeat(20000);
    Quantity q = Quantity.parse(digits);
    assertThat(q.toString()).isEqualTo("100e19998");
    Quantity frac = Quantity.parse("0." + "0".repeat(20000) + "1");
    assertThat(frac.toString()).isEqualTo("1n");
  }

  // -------------------------------------------------------------------------------------------------------------
  // Value / MilliValue / ScaledValue
  // -------------------------------------------------------------------------------------------------------------

  static Stream<Arguments> roundingTable() {
    return Stream.of(
        arguments("-.484785E-7466", -1L, -1L),
        arguments(".484785E-7466", 1L, 1L),
        arguments("-.484785E-1", -1L, -49L),
        arguments(".484785E-1", 1L, 49L),
        arguments("-0.0005", -1L, -1L),
        arguments("0.0005", 1L, 1L),
        arguments("-1500m", -2L, -1500L),
        arguments("1500m", 2L, 1500L),
        arguments("-9.5000000001Gi", -10200547329L, -10200547328108L),
        arguments("9.5000000001Gi", 10200547329L, 10200547328108L),
        arguments("-1", -1L, -1000L),
        arguments("1", 1L, 1000L),
        arguments("0", 0L, 0L),
        arguments("100m", 1L, 100L),
        arguments("1n", 1L, 1L),
        arguments("1.0001", 2L, 1001L),
        arguments("1Gi", 1073741824L, 1073741824000L),
        arguments("9223372036854775807", Long.MAX_VALUE, Long.MAX_VALUE),
        arguments("9223372036854775808", Long.MAX_VALUE, Long.MAX_VALUE),
        arguments("-9223372036854775808", Long.MIN_VALUE, Long.MIN_VALUE),
        arguments("-9223372036854775809", Long.MIN_VALUE, Long.MIN_VALUE),
        arguments("9223372036854775806.5", Long.MAX_VALUE, Long.MAX_VALUE),
        arguments("9223372036854775.807", 9223372036854776L, Long.MAX_VALUE),
        arguments("9223372036854775.808", 9223372036854776L, Long.MAX_VALUE),
        arguments("10E", Long.MAX_VALUE, Long.MAX_VALUE),
        arguments("-10E", Long.MIN_VALUE, Long.MIN_VALUE),
        arguments("8Ei", Long.MAX_VALUE, Long.MAX_VALUE));
  }

  /**
   * TestNegativeValueRoundsAwayFromZero and friends: away from zero, saturating at the int64
   * bounds.
   */
  @ParameterizedTest
  @MethodSource("roundingTable")
  void valueRoundsAwayFromZeroAndSaturates(String in, long value, long milli) {
    Quantity q = Quantity.parse(in);
    assertThat(q.value()).isEqualTo(value);
    assertThat(q.milliValue()).isEqualTo(milli);
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({
    "-9, -9, 1",
    "-9, -6, 1",
    "-9, -3, 1",
    "-9, 0, 1",
    "-6, -9, 1000",
    "-6, -6, 1",
    "-6, -3, 1",
    "-6, 0, 1",
    "-3, -9, 1000000",
    "-3, -6, 1000",
    "-3, -3, 1",
    "-3, 0, 1",
    "0, -9, 1000000000",
    "0, -6, 1000000",
    "0, -3, 1000",
    "0, 0, 1",
    "2, -2, 10000",
  })
  void scaledValue(int scale, int to, long expected) {
    assertThat(Quantity.ofScaled(1, scale).scaledValue(to))
        .as("%d->%d", scale, to)
        .isEqualTo(expected);
  }

  @ParameterizedTest
  @CsvSource({
    "1, -9, 1n",
    "1000, -9, 1u",
    "1, -6, 1u",
    "1000, -6, 1m",
    "1, -3, 1m",
    "1000, -3, 1",
    "1, 0, 1",
    "0, -9, 0",
    "0, -6, 0",
    "0, -3, 0",
    "0, 0, 0",
  })
  void newScaledSet(long value, int scale, String text) {
    Quantity q = Quantity.ofScaled(value, scale);
    assertThat(q.toString()).isEqualTo(text);
    assertThat(Quantity.parse(q.toString()).scaledValue(scale)).isEqualTo(value);
  }

  @ParameterizedTest
  @CsvSource({
    "1, DECIMAL_SI, 1",
    "1000, DECIMAL_SI, 1k",
    "1234000, DECIMAL_SI, 1234k",
    "1024, BINARY_SI, 1Ki",
    "1048576, BINARY_SI, 1Mi",
  })
  void newSet(long value, Format format, String text) {
    Quantity q = Quantity.of(value, format);
    assertThat(q.toString()).isEqualTo(text);
    assertThat(Quantity.parse(q.toString()).value()).isEqualTo(value);
  }

  @ParameterizedTest
  @CsvSource({
    "1, DECIMAL_SI, 1m",
    "1000, DECIMAL_SI, 1",
    "1234000, DECIMAL_SI, 1234",
    "1024, BINARY_SI, 1024m",
    "1048576, BINARY_SI, 1048576m",
  })
  void milliNewSet(long milli, Format format, String text) {
    Quantity q = Quantity.ofMilli(milli, format);
    assertThat(q.toString()).isEqualTo(text);
    assertThat(Quantity.parse(q.toString()).milliValue()).isEqualTo(milli);
  }

  // -------------------------------------------------------------------------------------------------------------
  // Add / Sub / Neg
  // -------------------------------------------------------------------------------------------------------------

  static Stream<Arguments> addTable() {
    return Stream.of(
        arguments(dec(10, 0, DECIMAL_SI), dec(1, 1, DECIMAL_SI), dec(20, 0, DECIMAL_SI)),
        arguments(dec(10, 0, DECIMAL_SI), dec(1, 0, BINARY_SI), dec(11, 0, DECIMAL_SI)),
        arguments(dec(10, 0, BINARY_SI), dec(1, 0, DECIMAL_SI), dec(11, 0, BINARY_SI)),
        arguments(Quantity.zero(DECIMAL_SI), dec(50, 0, DECIMAL_SI), dec(50, 0, DECIMAL_SI)),
        arguments(dec(50, 0, DECIMAL_SI), Quantity.zero(DECIMAL_SI), dec(50, 0, DECIMAL_SI)),
        arguments(Quantity.zero(DECIMAL_SI), Quantity.zero(DECIMAL_SI), dec(0, 0, DECIMAL_SI)),
        // a zero receiver adopts the argument's format, whatever its own was
        arguments(Quantity.zero(BINARY_SI), Quantity.parse("100m"), dec(100, -3, DECIMAL_SI)),
        arguments(Quantity.zero(DECIMAL_SI), Quantity.parse("1Gi"), dec(1L << 30, 0, BINARY_SI)),
        arguments(
            Quantity.zero(BINARY_SI), Quantity.zero(DECIMAL_EXPONENT), dec(0, 0, DECIMAL_EXPONENT)),
        arguments(
            Quantity.parse("1Gi").sub(Quantity.parse("1Gi")),
            Quantity.parse("1e3"),
            dec(1, 3, DECIMAL_EXPONENT)),
        arguments(Quantity.parse("1Gi"), Quantity.parse("-1Gi"), dec(0, 0, BINARY_SI)),
        arguments(
            Quantity.parse("1Gi"),
            Quantity.parse("1.5"),
            Quantity.of(new BigDecimal("1073741825.5"), BINARY_SI)),
        arguments(
            Quantity.of(MOST_POSITIVE, DECIMAL_SI),
            Quantity.of(1, DECIMAL_SI),
            Quantity.of(new BigDecimal("9223372036854775808"), DECIMAL_SI)));
  }

  @ParameterizedTest
  @MethodSource("addTable")
  void addKeepsGoFormatRule(Quantity a, Quantity b, Quantity expected) {
    Quantity sum = a.add(b);
    assertThat(sum.compareTo(expected)).isZero();
    assertThat(sum.format()).isEqualTo(expected.format());
    assertThat(sum).isEqualTo(expected);
  }

  static Stream<Arguments> subTable() {
    return Stream.of(
        arguments(dec(10, 0, DECIMAL_SI), dec(1, 1, DECIMAL_SI), dec(0, 0, DECIMAL_SI)),
        arguments(dec(10, 0, DECIMAL_SI), dec(1, 0, BINARY_SI), dec(9, 0, DECIMAL_SI)),
        arguments(dec(10, 0, BINARY_SI), dec(1, 0, DECIMAL_SI), dec(9, 0, BINARY_SI)),
        arguments(Quantity.zero(DECIMAL_SI), dec(50, 0, DECIMAL_SI), dec(-50, 0, DECIMAL_SI)),
        arguments(dec(50, 0, DECIMAL_SI), Quantity.zero(DECIMAL_SI), dec(50, 0, DECIMAL_SI)),
        arguments(Quantity.zero(DECIMAL_SI), Quantity.zero(DECIMAL_SI), dec(0, 0, DECIMAL_SI)),
        arguments(Quantity.zero(DECIMAL_SI), Quantity.parse("1Gi"), dec(-(1L << 30), 0, BINARY_SI)),
        arguments(
            Quantity.parse("100Mi"),
            Quantity.parse("1G"),
            dec(104857600L - 1000000000L, 0, BINARY_SI)));
  }

  @ParameterizedTest
  @MethodSource("subTable")
  void subKeepsGoFormatRule(Quantity a, Quantity b, Quantity expected) {
    Quantity diff = a.sub(b);
    assertThat(diff.compareTo(expected)).isZero();
    assertThat(diff).isEqualTo(expected);
  }

  @ParameterizedTest
  @ValueSource(strings = {"100m", "1Gi"})
  void addAndSubZeroPreserveSuffix(String s) {
    Quantity value = Quantity.parse(s);
    Quantity zero = Quantity.parse("0");
    assertThat(value.add(zero).toString()).isEqualTo(s);
    assertThat(zero.add(value).toString()).isEqualTo(s);
    assertThat(value.sub(zero).toString()).isEqualTo(s);
    assertThat(zero.sub(value).toString()).isEqualTo(value.negate().toString());
  }

  @Test
  void arithmeticDoesNotMutate() {
    Quantity a = Quantity.parse("1Gi");
    Quantity b = Quantity.parse("1Mi");
    a.add(b);
    a.sub(b);
    a.negate();
    assertThat(a.toString()).isEqualTo("1Gi");
    assertThat(b.toString()).isEqualTo("1Mi");
  }

  @Test
  void negAndSubAtMostNegative() {
    Quantity mostNegative = Quantity.of(MOST_NEGATIVE, DECIMAL_SI);
    assertThat(mostNegative.negate().toString()).isEqualTo("9223372036854775808");
    assertThat(Quantity.zero(DECIMAL_SI).sub(mostNegative).toString())
        .isEqualTo("9223372036854775808");
    assertThat(Quantity.of(1, DECIMAL_SI).sub(mostNegative).toString())
        .isEqualTo("9223372036854775809");
    assertThat(Quantity.of(MOST_NEGATIVE + 1, DECIMAL_SI).negate().value())
        .isEqualTo(MOST_POSITIVE);
    assertThat(Quantity.ofScaled(MOST_NEGATIVE, -3).negate().toString())
        .isEqualTo("9223372036854775808m");
    assertThat(Quantity.ofScaled(1, -3).sub(Quantity.ofScaled(MOST_NEGATIVE, -3)).toString())
        .isEqualTo("9223372036854775809m");
    assertThat(Quantity.ofScaled(1, 1).sub(mostNegative).toString())
        .isEqualTo("9223372036854775818");
    Quantity binary = Quantity.zero(DECIMAL_SI).sub(Quantity.of(MOST_NEGATIVE, BINARY_SI));
    assertThat(binary.format()).isEqualTo(BINARY_SI);
    assertThat(binary.toString()).isEqualTo("8Ei");
    assertThat(Quantity.zero(DECIMAL_SI).sub(Quantity.ofScaled(MOST_NEGATIVE, 100)).toBigDecimal())
        .isEqualByComparingTo(new BigDecimal(BigInteger.ONE.shiftLeft(63), -100));
  }

  @Test
  void neg() {
    assertThat(Quantity.ofScaled(901, -2).negate().toString()).isEqualTo("-9010m");
    assertThat(dec(901, -2, DECIMAL_SI).negate().toString()).isEqualTo("-9010m");
    assertThat(Quantity.ZERO.negate()).isEqualTo(Quantity.ZERO);
    assertThat(Quantity.of(10, BINARY_SI).negate()).isEqualTo(Quantity.of(-10, BINARY_SI));
  }

  @Test
  void addSubRoundTrip() {
    Random random = new Random(42);
    for (int k = -10; k <= 10; k++) {
      Quantity q = Quantity.zero(DECIMAL_SI);
      List<Long> order = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        long j = random.nextLong() & Long.MAX_VALUE;
        order.add(j);
        q = q.add(Quantity.ofScaled(j, k));
      }
      for (long j : order) {
        q = q.sub(Quantity.ofScaled(j, k));
      }
      assertThat(q.isZero()).isTrue();
    }
    Quantity q = Quantity.zero(DECIMAL_SI);
    List<Long> order = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      long j = random.nextLong() & Long.MAX_VALUE;
      order.add(j);
      q = q.add(Quantity.ofScaled(j, (int) (j % 20 - 10)));
    }
    for (long j : order) {
      q = q.sub(Quantity.ofScaled(j, (int) (j % 20 - 10)));
    }
    assertThat(q.isZero()).isTrue();
  }

  // -------------------------------------------------------------------------------------------------------------
  // Cmp / CmpInt64
  // -------------------------------------------------------------------------------------------------------------

  @ParameterizedTest
  @CsvSource({
    "0, 0, 0",
    "100m, 50m, 1",
    "50m, 100m, -1",
    "10000T, 100Gi, 1",
    "1Gi, 1073741824, 0",
    "1G, 1Gi, -1",
    "-1G, -1Gi, 1",
    "0Ki, ZERO, 0",
    "-1n, ZERO, -1",
  })
  void cmp(String a, String b, int expected) {
    Quantity right = "ZERO".equals(b) ? Quantity.ZERO : Quantity.parse(b);
    assertThat(Quantity.parse(a).compareTo(right)).isEqualTo(expected);
  }

  static Stream<Arguments> cmpInt64AndDecTable() {
    return Stream.of(
        arguments(Quantity.ofScaled(901, -2), Quantity.ofScaled(901, -2), 0),
        arguments(Quantity.ofScaled(90, -1), Quantity.ofScaled(901, -2), -1),
        arguments(Quantity.ofScaled(901, -2), Quantity.ofScaled(900, -2), 1),
        arguments(Quantity.ofScaled(0, 0), Quantity.ofScaled(0, 0), 0),
        arguments(Quantity.ofScaled(0, 1), Quantity.ofScaled(0, -1), 0),
        arguments(Quantity.ofScaled(0, -1), Quantity.ofScaled(0, 1), 0),
        arguments(Quantity.ofScaled(800, -3), Quantity.ofScaled(1, 0), -1),
        arguments(Quantity.ofScaled(800, -3), Quantity.ofScaled(79, -2), 1),
        arguments(Quantity.ofScaled(MOST_POSITIVE, 0), Quantity.ofScaled(1, -1), 1),
        arguments(Quantity.ofScaled(MOST_POSITIVE, 1), Quantity.ofScaled(1, 0), 1),
        arguments(Quantity.ofScaled(MOST_POSITIVE, 1), Quantity.ofScaled(1, 1), 1),
        arguments(Quantity.ofScaled(MOST_POSITIVE, 1), Quantity.ofScaled(0, 1), 1),
        arguments(Quantity.ofScaled(MOST_POSITIVE, -16), Quantity.ofScaled(1, 3), -1),
        arguments(Quantity.ofScaled(MOST_NEGATIVE, 0), Quantity.ofScaled(0, 0), -1),
        arguments(Quantity.ofScaled(MOST_NEGATIVE, -18), Quantity.ofScaled(-1, 0), -1),
        arguments(Quantity.ofScaled(MOST_NEGATIVE, -19), Quantity.ofScaled(-1, 0), 1),
        arguments(Quantity.ofScaled(1_000_000_000_000_000_000L, -17), Quantity.ofScaled(1, 1), 0),
        arguments(Quantity.ofScaled(1_000_000_000_000_000_000L, -17), Quantity.ofScaled(-10, 0), 1),
        arguments(
            Quantity.ofScaled(-1_000_000_000_000_000_000L, -17), Quantity.ofScaled(-10, 0), 0),
        arguments(Quantity.ofScaled(1_000_000_000_000_000_000L, -17), Quantity.ofScaled(1, 0), 1),
        arguments(Quantity.ofScaled(1_000_000_000_000_000_001L, -17), Quantity.ofScaled(1, 1), 1),
        arguments(Quantity.ofScaled(999_999_999_999_999_999L, -17), Quantity.ofScaled(1, 1), -1));
  }

  @ParameterizedTest
  @MethodSource("cmpInt64AndDecTable")
  void cmpInt64AndDec(Quantity a, Quantity b, int expected) {
    assertThat(a.compareTo(b)).isEqualTo(expected);
    assertThat(b.compareTo(a)).isEqualTo(-expected);
  }

  @ParameterizedTest
  @CsvSource({
    "1023, 1024, -1",
    "1Ki, 1024, 0",
    "1025, 1024, 1",
    "1023.5, 1023, 1",
    "-1024.5, -1024, -1",
    "9223372036854775808, 9223372036854775807, 1",
    "-9223372036854775808, -9223372036854775808, 0",
    "ZERO, 0, 0",
  })
  void cmpInt64(String q, long v, int expected) {
    Quantity left = "ZERO".equals(q) ? Quantity.ZERO : Quantity.parse(q);
    assertThat(left.compareTo(v)).isEqualTo(expected);
  }

  @Test
  void cmpInt64AgreesWithTheExactComparisonNearTheLongBoundsAndAcrossExponents() {
    String[] texts = {
      "0",
      "1",
      "-1",
      "999m",
      "1001m",
      "-1500m",
      "1Ki",
      "100Mi",
      "1.5Gi",
      "3E",
      "8E",
      "-8E",
      "9E",
      "1e18",
      "9223372036854775807",
      "-9223372036854775808",
      "9223372036854775807001m",
      "92233720368547758070",
      "1n",
      "123456789u",
      "2e-3",
      "7e17",
      "1e-18",
      "5e20"
    };
    long[] values = {
      0,
      1,
      -1,
      2,
      999,
      1000,
      1024,
      104857600,
      3_000_000_000_000_000_000L / 1000,
      Long.MAX_VALUE,
      Long.MIN_VALUE,
      Long.MAX_VALUE / 10,
      Long.MIN_VALUE / 1000 + 1,
      9_223_372_036_854_775L
    };
    for (String t : texts) {
      Quantity q = Quantity.parse(t);
      for (long v : values) {
        int exact = Integer.signum(q.toBigDecimal().compareTo(BigDecimal.valueOf(v)));
        assertThat(q.compareTo(v)).as("%s vs %d", t, v).isEqualTo(exact);
      }
    }
  }

  @Test
  void signAndIsZero() {
    assertThat(Quantity.parse("1n").sign()).isEqualTo(1);
    assertThat(Quantity.parse("-1n").sign()).isEqualTo(-1);
    assertThat(Quantity.parse("0Gi").sign()).isZero();
    assertThat(Quantity.parse("0Gi").isZero()).isTrue();
    assertThat(Quantity.parse("-0").isZero()).isTrue();
    assertThat(Quantity.parse("-0").toString()).isEqualTo("0");
    assertThat(Quantity.ZERO.toString()).isEqualTo("0");
    assertThat(Quantity.ZERO.format()).isEqualTo(DECIMAL_SI);
    assertThat(Quantity.zero(BINARY_SI).toString()).isEqualTo("0");
    assertThat(Quantity.zero(BINARY_SI).format()).isEqualTo(BINARY_SI);
  }

  // -------------------------------------------------------------------------------------------------------------
  // Object contract and BigDecimal view
  // -------------------------------------------------------------------------------------------------------------

  @Test
  void equalsComparesValueAndFormatButNotCachedText() {
    assertThat(Quantity.parse("1.441")).isEqualTo(Quantity.parse("1441m"));
    assertThat(Quantity.parse("1.441").hashCode()).isEqualTo(Quantity.parse("1441m").hashCode());
    assertThat(Quantity.parse("1000m")).isEqualTo(Quantity.parse("1"));
    assertThat(Quantity.parse("+1Ki")).isEqualTo(Quantity.of(1024, BINARY_SI));
    assertThat(Quantity.parse("1Gi")).isNotEqualTo(Quantity.of(1L << 30, DECIMAL_SI));
    assertThat(Quantity.parse("1Gi").compareTo(Quantity.of(1L << 30, DECIMAL_SI))).isZero();
    assertThat(Quantity.zero(BINARY_SI)).isNotEqualTo(Quantity.ZERO);
    assertThat(Quantity.parse("0")).isEqualTo(Quantity.ZERO);
    assertThat(Quantity.parse("1e3")).isNotEqualTo(Quantity.parse("1k"));
    assertThat(Quantity.parse("1k")).isNotEqualTo("1k");
  }

  @Test
  void toBigDecimalIsExact() {
    assertThat(Quantity.parse("1.5Gi").toBigDecimal()).isEqualByComparingTo("1610612736");
    assertThat(Quantity.parse("100m").toBigDecimal()).isEqualByComparingTo("0.1");
    assertThat(Quantity.parse("3.001n").toBigDecimal()).isEqualByComparingTo("0.000000004");
    assertThat(Quantity.parse("-12E").toBigDecimal()).isEqualByComparingTo("-12000000000000000000");
    assertThat(Quantity.parse("9223372036854775808").toBigDecimal())
        .isEqualByComparingTo(new BigDecimal(BigInteger.ONE.shiftLeft(63)));
  }

  @Test
  void ofBigDecimalIsNotRounded() {
    Quantity q = Quantity.of(new BigDecimal("1E-12"), DECIMAL_SI);
    assertThat(q.toBigDecimal()).isEqualByComparingTo("1E-12");
    assertThat(q.toString()).isEqualTo("1e-12");
  }

  @Nested
  class FormatNames {
    @Test
    void goNames() {
      assertThat(DECIMAL_EXPONENT.goName()).isEqualTo("DecimalExponent");
      assertThat(BINARY_SI.goName()).isEqualTo("BinarySI");
      assertThat(DECIMAL_SI.goName()).isEqualTo("DecimalSI");
    }
  }
}
