package dev.evictd.ruleset.lint;

import dev.evictd.engine.RuleRegex;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What rule code may reference: evictd's fact and decision types (with EvictionMessages and
 * GoDuration), java.lang value types, java.util collections and functional types, java.time and
 * java.math and Drools' {@code @Propagation} annotation. Everything else is refused, with a reason
 * taken from {@link #category}.
 *
 * <p>Class names are binary names ({@code java.util.Map$Entry}); a nested class is allowed when its
 * outermost class is. The same lists serve the source check ({@link PolicyLint}) and the
 * compiled-code check ({@link CompiledCodeCheck}).
 */
final class PolicyAllowlist {
  /** The package every rule file must declare (or a package below it). */
  static final String RULES_PACKAGE = "dev.evictd.rules";

  /** Why a non-deterministic source is refused. */
  static final String NON_DETERMINISTIC =
      "non-deterministic (wall clock, randomness or host settings: rules read time from SyncClock)";

  /** Why java.util.regex and the String methods on it are refused. */
  static final String REGEX =
      "regular expression on java.util.regex, which can backtrack for ever (use RuleRegex, on RE2/J)";

  /** Packages whose every class is allowed (not their subpackages). */
  static final Set<String> PACKAGES =
      Set.of(
          "dev.evictd.api",
          "java.time",
          "java.time.format",
          "java.time.temporal",
          "java.time.chrono",
          "java.math",
          "java.util.function",
          "java.util.stream");

  /** Classes allowed one by one (with their nested classes). */
  static final Set<String> CLASSES =
      Set.of(
          "dev.evictd.engine.EvictionMessages",
          // regular expressions on RE2/J (linear time): what rules use instead of java.util.regex
          "dev.evictd.engine.RuleRegex",
          // Go-style durations in messages ("10m0s"): parse and format, nothing else
          "dev.evictd.config.GoDuration",
          // the annotation a rule needs to be re-evaluated eagerly (@Propagation(EAGER)); metadata
          // only
          "org.kie.api.definition.rule.Propagation",
          // java.lang: values, text, arithmetic, the usual unchecked exceptions, annotations
          "java.lang.Object",
          "java.lang.String",
          "java.lang.CharSequence",
          "java.lang.StringBuilder",
          "java.lang.Math",
          "java.lang.StrictMath",
          "java.lang.Number",
          "java.lang.Integer",
          "java.lang.Long",
          "java.lang.Short",
          "java.lang.Byte",
          "java.lang.Double",
          "java.lang.Float",
          "java.lang.Boolean",
          "java.lang.Character",
          "java.lang.Comparable",
          "java.lang.Iterable",
          "java.lang.Enum",
          "java.lang.Exception",
          "java.lang.RuntimeException",
          "java.lang.IllegalArgumentException",
          "java.lang.IllegalStateException",
          "java.lang.ArithmeticException",
          "java.lang.NullPointerException",
          "java.lang.UnsupportedOperationException",
          "java.lang.IndexOutOfBoundsException",
          "java.lang.ArrayIndexOutOfBoundsException",
          "java.lang.StringIndexOutOfBoundsException",
          "java.lang.NumberFormatException",
          "java.lang.ClassCastException",
          "java.lang.Override",
          "java.lang.SuppressWarnings",
          "java.lang.Deprecated",
          "java.lang.SafeVarargs",
          "java.lang.FunctionalInterface",
          // java.util: collections and small value helpers
          "java.util.Collection",
          "java.util.List",
          "java.util.ArrayList",
          "java.util.LinkedList",
          "java.util.Map",
          "java.util.HashMap",
          "java.util.LinkedHashMap",
          "java.util.TreeMap",
          "java.util.SortedMap",
          "java.util.NavigableMap",
          "java.util.EnumMap",
          "java.util.AbstractMap",
          "java.util.Set",
          "java.util.HashSet",
          "java.util.LinkedHashSet",
          "java.util.TreeSet",
          "java.util.SortedSet",
          "java.util.NavigableSet",
          "java.util.EnumSet",
          "java.util.Queue",
          "java.util.Deque",
          "java.util.ArrayDeque",
          "java.util.PriorityQueue",
          "java.util.Iterator",
          // what StreamSupport.stream takes (its parallel flag is checked where it is called)
          "java.util.Spliterator",
          "java.util.Spliterators",
          "java.util.ListIterator",
          "java.util.Collections",
          "java.util.Arrays",
          "java.util.Comparator",
          "java.util.Objects",
          "java.util.Optional",
          "java.util.OptionalInt",
          "java.util.OptionalLong",
          "java.util.OptionalDouble",
          "java.util.StringJoiner",
          "java.util.Locale",
          "java.util.UUID",
          "java.util.BitSet",
          "java.util.HexFormat",
          "java.util.Base64",
          "java.util.IntSummaryStatistics",
          "java.util.LongSummaryStatistics",
          "java.util.DoubleSummaryStatistics",
          "java.util.NoSuchElementException",
          "java.util.ConcurrentModificationException");

  /**
   * Members refused whatever they are called on: the ways from an allowed object to a refused
   * capability (the source check cannot always know a receiver's type, so these names are refused
   * on any receiver, including as MVEL properties: {@code x.classLoader} is {@code
   * x.getClassLoader()}).
   */
  static final Map<String, String> MEMBERS =
      Map.ofEntries(
          Map.entry("getClass", "reflection"),
          Map.entry("getDeclaringClass", "reflection"),
          Map.entry("TYPE", "reflection"),
          Map.entry("getDeclaredMethod", "reflection"),
          Map.entry("getDeclaredMethods", "reflection"),
          Map.entry("getMethod", "reflection"),
          Map.entry("getMethods", "reflection"),
          Map.entry("getDeclaredField", "reflection"),
          Map.entry("getDeclaredFields", "reflection"),
          Map.entry("getField", "reflection"),
          Map.entry("getFields", "reflection"),
          Map.entry("getDeclaredConstructor", "reflection"),
          Map.entry("getDeclaredConstructors", "reflection"),
          Map.entry("getConstructor", "reflection"),
          Map.entry("getConstructors", "reflection"),
          Map.entry("newInstance", "reflection"),
          Map.entry("setAccessible", "reflection"),
          Map.entry("trySetAccessible", "reflection"),
          Map.entry("invoke", "reflection"),
          Map.entry("invokeExact", "reflection"),
          Map.entry("invokeWithArguments", "reflection"),
          Map.entry("lookup", "reflection"),
          Map.entry("getModule", "reflection"),
          Map.entry("getProtectionDomain", "reflection"),
          Map.entry("forName", "class loading"),
          Map.entry("getClassLoader", "class loading"),
          Map.entry("getContextClassLoader", "class loading"),
          Map.entry("getSystemClassLoader", "class loading"),
          Map.entry("getPlatformClassLoader", "class loading"),
          Map.entry("loadClass", "class loading"),
          Map.entry("defineClass", "class loading"),
          Map.entry("getResource", "class loading"),
          Map.entry("getResourceAsStream", "class loading"),
          Map.entry("getResources", "class loading"),
          Map.entry("getRuntime", "processes"),
          Map.entry("exec", "processes"),
          Map.entry("exit", "JVM exit"),
          Map.entry("halt", "JVM exit"),
          Map.entry("getenv", "environment"),
          Map.entry("setProperty", "system properties"),
          Map.entry("getProperties", "system properties"),
          Map.entry("currentThread", "threads"),
          Map.entry("wait", "threads"),
          Map.entry("notify", "threads"),
          Map.entry("notifyAll", "threads"),
          Map.entry("parallel", "threads"),
          Map.entry("parallelStream", "threads"),
          Map.entry("parallelSort", "threads"),
          Map.entry("parallelPrefix", "threads"),
          Map.entry("parallelSetAll", "threads"),
          Map.entry("finalize", "finalizers"),
          Map.entry("printStackTrace", "I/O"),
          Map.entry("setDefault", "JVM-wide state"),
          Map.entry("getKieRuntime", "engine internals"),
          Map.entry("getKnowledgeRuntime", "engine internals"),
          Map.entry("getWorkingMemory", "engine internals"),
          Map.entry("getKieBase", "engine internals"),
          Map.entry("getEntryPoint", "engine internals"),
          Map.entry("getEntryPoints", "engine internals"),
          Map.entry("getChannels", "engine internals"),
          // non-deterministic sources: plans must depend on the inputs alone (time: SyncClock)
          Map.entry("randomUUID", NON_DETERMINISTIC),
          Map.entry("random", NON_DETERMINISTIC),
          Map.entry("shuffle", NON_DETERMINISTIC),
          Map.entry("systemDefault", NON_DETERMINISTIC),
          Map.entry("systemDefaultZone", NON_DETERMINISTIC),
          Map.entry("systemUTC", NON_DETERMINISTIC),
          Map.entry("getDefault", NON_DETERMINISTIC),
          Map.entry("defaultCharset", NON_DETERMINISTIC),
          Map.entry("currentTimeMillis", NON_DETERMINISTIC),
          Map.entry("nanoTime", NON_DETERMINISTIC),
          Map.entry("identityHashCode", NON_DETERMINISTIC),
          Map.entry("getHostName", NON_DETERMINISTIC),
          Map.entry("getLocalHost", NON_DETERMINISTIC),
          Map.entry("availableProcessors", NON_DETERMINISTIC));

  /**
   * Members that run java.util.regex, refused on every receiver but {@link RuleRegex} (the source
   * check cannot always know a receiver's type).
   */
  static final Set<String> REGEX_MEMBERS =
      Set.of("matches", "replaceAll", "replaceFirst", "split", "splitAsStream", "asPredicate");

  /** The class whose regular-expression methods run on RE2/J. */
  static final String RULE_REGEX = "dev.evictd.engine.RuleRegex";

  /**
   * The static factories of the parallel-capable streams: refused unless their {@code parallel}
   * argument is the literal {@code false}.
   */
  static final String STREAM_SUPPORT = "java.util.stream.StreamSupport";

  /** Why reading the wall clock is refused ({@code Instant.now()}, {@code LocalDate.now()}...). */
  static final String WALL_CLOCK =
      "non-deterministic (the wall clock: rules read time from SyncClock)";

  /**
   * Whether a call reads the wall clock: {@code now} on a java.time class, or any call on {@code
   * Clock} or {@code InstantSource} but the value readers of a clock a rule was given.
   */
  static boolean readsWallClock(String owner, String member) {
    if (owner == null) {
      return false;
    }
    String o = elementType(owner);
    if (!o.startsWith("java.time.")) {
      return false;
    }
    return member.equals("now")
        || ((o.equals("java.time.Clock") || o.equals("java.time.InstantSource"))
            && (member.startsWith("system") || member.startsWith("tick")));
  }

  /** Members refused on one class only (owner binary name, then member). */
  static final Map<String, Map<String, String>> CLASS_MEMBERS =
      Map.of(
          "java.lang.Integer", Map.of("getInteger", "system properties"),
          "java.lang.Long", Map.of("getLong", "system properties"),
          "java.lang.Boolean", Map.of("getBoolean", "system properties"));

  /** Why a class outside the allowlist is refused, by name prefix (the longest prefix wins). */
  private static final List<Map.Entry<String, String>> CATEGORIES =
      List.of(
          Map.entry("java.io.", "I/O"),
          Map.entry("java.nio.", "I/O"),
          Map.entry("java.util.zip.", "I/O"),
          Map.entry("java.util.jar.", "I/O"),
          Map.entry("java.util.prefs.", "I/O"),
          Map.entry("java.util.Scanner", "I/O"),
          Map.entry("java.util.Formatter", "I/O"),
          Map.entry("java.util.Properties", "I/O"),
          Map.entry("java.sql.", "I/O"),
          Map.entry("javax.sql.", "I/O"),
          Map.entry("java.net.", "networking"),
          Map.entry("javax.net.", "networking"),
          Map.entry("java.rmi.", "networking"),
          Map.entry("javax.naming.", "networking"),
          Map.entry("java.net.http.", "networking"),
          Map.entry("java.lang.Process", "processes"),
          Map.entry("java.lang.ProcessBuilder", "processes"),
          Map.entry("java.lang.ProcessHandle", "processes"),
          Map.entry("java.lang.Runtime", "processes"),
          Map.entry("java.lang.reflect.", "reflection"),
          Map.entry("java.lang.invoke.", "reflection"),
          Map.entry("java.lang.Class", "reflection"),
          Map.entry("java.lang.Module", "reflection"),
          Map.entry("java.lang.ModuleLayer", "reflection"),
          Map.entry("java.lang.Package", "reflection"),
          Map.entry("java.lang.StackWalker", "reflection"),
          Map.entry("java.lang.Record", "reflection"),
          Map.entry("java.beans.", "reflection"),
          Map.entry("java.lang.ClassLoader", "class loading"),
          Map.entry("java.net.URLClassLoader", "class loading"),
          Map.entry("java.security.SecureClassLoader", "class loading"),
          Map.entry("java.util.ServiceLoader", "class loading"),
          Map.entry("java.util.regex.", REGEX),
          Map.entry("java.util.Random", NON_DETERMINISTIC),
          Map.entry("java.util.SplittableRandom", NON_DETERMINISTIC),
          Map.entry("java.util.TimeZone", NON_DETERMINISTIC),
          // iterates in identity-hash order, which differs from run to run
          Map.entry("java.util.IdentityHashMap", NON_DETERMINISTIC),
          Map.entry("java.util.concurrent.ThreadLocalRandom", NON_DETERMINISTIC),
          Map.entry("java.util.ResourceBundle", "class loading"),
          Map.entry("java.lang.Thread", "threads"),
          Map.entry("java.lang.ThreadGroup", "threads"),
          Map.entry("java.lang.ThreadLocal", "threads"),
          Map.entry("java.lang.InheritableThreadLocal", "threads"),
          Map.entry("java.lang.Runnable", "threads"),
          Map.entry("java.util.concurrent.", "threads"),
          Map.entry("java.util.Timer", "threads"),
          Map.entry("java.util.TimerTask", "threads"),
          Map.entry("java.lang.ref.", "threads"),
          Map.entry("java.lang.System", "system access"),
          Map.entry("java.lang.SecurityManager", "system access"),
          Map.entry("java.lang.Throwable", "error handling (catching errors)"),
          Map.entry("java.lang.Error", "error handling (catching errors)"),
          Map.entry("java.lang.ThreadDeath", "threads"),
          Map.entry("java.lang.management.", "JVM management"),
          Map.entry("javax.management.", "JVM management"),
          Map.entry("java.lang.instrument.", "JVM management"),
          Map.entry("java.security.", "security"),
          Map.entry("javax.script.", "scripting"),
          Map.entry("java.util.logging.", "logging"),
          Map.entry("org.slf4j.", "logging"),
          Map.entry("java.lang.foreign.", "native code"),
          Map.entry("jnr.", "native code (jnr)"),
          Map.entry("com.sun.jna.", "native code (JNA)"),
          Map.entry("sun.", "JDK internals"),
          Map.entry("com.sun.", "JDK internals"),
          Map.entry("jdk.", "JDK internals"),
          Map.entry("org.drools.", "engine internals"),
          Map.entry("org.kie.", "engine internals"),
          Map.entry("org.mvel2.", "engine internals"),
          Map.entry("io.fabric8.", "Kubernetes client"),
          Map.entry("dev.evictd.", "evictd internals"));

  private PolicyAllowlist() {}

  /**
   * Whether rule code may use a class (binary name; primitives and arrays of allowed classes
   * included).
   */
  static boolean allowed(String binaryName) {
    String name = elementType(binaryName);
    if (isPrimitive(name)) {
      return true;
    }
    String outer = outermost(name);
    if (CLASSES.contains(outer)) {
      return true;
    }
    return PACKAGES.contains(packageOf(outer)) || isRulePackage(packageOf(outer));
  }

  /** Whether a package may be imported with a wildcard: it holds at least one allowed class. */
  static boolean wildcardImportAllowed(String pkg) {
    if (PACKAGES.contains(pkg) || isRulePackage(pkg)) {
      return true;
    }
    for (String c : CLASSES) {
      if (packageOf(c).equals(pkg)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether a package is the rules' own package (classes the rules define: declared types,
   * functions).
   */
  static boolean isRulePackage(String pkg) {
    return pkg.equals(RULES_PACKAGE) || pkg.startsWith(RULES_PACKAGE + ".");
  }

  /**
   * Why a member is refused on a class. With {@code owner} null (the receiver's type is unknown:
   * Java lets a static method be called on an instance) the members refused on any one class count
   * too.
   */
  static Optional<String> refusedMember(String owner, String member) {
    if (REGEX_MEMBERS.contains(member)) {
      return owner != null && elementType(owner).equals(RULE_REGEX)
          ? Optional.empty()
          : Optional.of(REGEX);
    }
    if (readsWallClock(owner, member)) {
      return Optional.of(WALL_CLOCK);
    }
    String any = MEMBERS.get(member);
    if (any != null) {
      return Optional.of(any);
    }
    for (Map.Entry<String, Map<String, String>> e : CLASS_MEMBERS.entrySet()) {
      if ((owner == null || e.getKey().equals(elementType(owner)))
          && e.getValue().containsKey(member)) {
        return Optional.of(e.getValue().get(member));
      }
    }
    return Optional.empty();
  }

  /** Why a class is refused: the capability it gives, or "not on the allowlist". */
  static String category(String binaryName) {
    String name = elementType(binaryName).replace('$', '.');
    String best = null;
    int bestLength = -1;
    for (Map.Entry<String, String> e : CATEGORIES) {
      String p = e.getKey();
      boolean match =
          p.endsWith(".") ? name.startsWith(p) : name.equals(p) || name.startsWith(p + ".");
      if (match && p.length() > bestLength) {
        best = e.getValue();
        bestLength = p.length();
      }
    }
    return best == null ? "not on the allowlist" : best;
  }

  /**
   * The class name without array brackets ({@code java.io.File[]} and {@code [Ljava.io.File;} give
   * java.io.File).
   */
  static String elementType(String name) {
    String n = name;
    while (n.endsWith("[]")) {
      n = n.substring(0, n.length() - 2);
    }
    if (n.startsWith("[")) {
      int i = 0;
      while (i < n.length() && n.charAt(i) == '[') {
        i++;
      }
      n = n.substring(i);
      if (n.startsWith("L") && n.endsWith(";")) {
        n = n.substring(1, n.length() - 1);
      } else {
        return "int"; // a primitive array descriptor
      }
    }
    return n;
  }

  static boolean isPrimitive(String name) {
    return switch (name) {
      case "boolean", "byte", "char", "short", "int", "long", "float", "double", "void" -> true;
      default -> false;
    };
  }

  static String packageOf(String binaryName) {
    int dot = binaryName.lastIndexOf('.');
    return dot < 0 ? "" : binaryName.substring(0, dot);
  }

  private static String outermost(String binaryName) {
    int dollar = binaryName.indexOf('$');
    return dollar < 0 ? binaryName : binaryName.substring(0, dollar);
  }
}
