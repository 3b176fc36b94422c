package dev.evictd.ruleset;

import dev.evictd.ruleset.lint.PolicyFinding;
import dev.evictd.ruleset.lint.PolicyLint;
import dev.evictd.ruleset.lint.StoredLint;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.ObjectReadContext;
import tools.jackson.core.json.JsonFactory;

/**
 * Reads a rule-set cache entry with Jackson's streaming parser: loading a set from its entry is on
 * the start-up path of {@code rules check}, and a data-binding mapper costs more classes to load
 * than the whole check (the entry is written with one, off that path).
 */
final class EntryReader {
  private static final JsonFactory FACTORY = new JsonFactory();

  private EntryReader() {}

  /**
   * The entry in {@code json}.
   *
   * @throws IllegalArgumentException when it is not an entry (a key missing or of the wrong kind)
   * @throws JacksonException when it is not JSON
   */
  static RuleSetCache.Entry read(String json) {
    Object v;
    try (JsonParser p = FACTORY.createParser(ObjectReadContext.empty(), json)) {
      p.nextToken();
      v = value(p, 0);
      if (p.nextToken() != null) {
        throw new IllegalArgumentException("text after the entry");
      }
    }
    Map<String, Object> e = map(v, "entry");
    Map<String, Object> l = map(e.get("lint"), "lint");
    StoredLint lint =
        new StoredLint(
            findings(l.get("findings")),
            locations(l.get("rules")),
            locations(l.get("functions")),
            new LinkedHashSet<>(strings(l.get("declaredTypes"))),
            strings(l.get("unparsed")),
            locations(l.get("declarations")),
            string(l.get("rulePackage")),
            new LinkedHashSet<>(strings(l.get("ruleTypes"))),
            stringMap(l.get("singleImports")),
            strings(l.get("wildcardPrefixes")));
    return new RuleSetCache.Entry(
        string(e.get("format")),
        string(e.get("evictdVersion")),
        string(e.get("droolsVersion")),
        string(e.get("sourcesSha256")),
        strings(e.get("files")),
        number(e.get("rules")),
        lint,
        findings(e.get("compiledFindings")));
  }

  private static final int MAX_DEPTH = 16;

  /** A JSON value as maps, lists, strings, longs, booleans and null. */
  private static Object value(JsonParser p, int depth) {
    if (depth > MAX_DEPTH) {
      throw new IllegalArgumentException("nested too deeply");
    }
    JsonToken t = p.currentToken();
    if (t == null) {
      throw new IllegalArgumentException("empty");
    }
    switch (t) {
      case START_OBJECT -> {
        Map<String, Object> m = new LinkedHashMap<>();
        while (p.nextToken() == JsonToken.PROPERTY_NAME) {
          String name = p.currentName();
          p.nextToken();
          m.put(name, value(p, depth + 1));
        }
        return m;
      }
      case START_ARRAY -> {
        List<Object> l = new ArrayList<>();
        while (p.nextToken() != JsonToken.END_ARRAY) {
          l.add(value(p, depth + 1));
        }
        return l;
      }
      case VALUE_STRING -> {
        return p.getString();
      }
      case VALUE_NUMBER_INT -> {
        return p.getLongValue();
      }
      case VALUE_TRUE, VALUE_FALSE -> {
        return t == JsonToken.VALUE_TRUE;
      }
      case VALUE_NULL -> {
        return null;
      }
      default -> throw new IllegalArgumentException("unexpected " + t);
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object v, String what) {
    if (!(v instanceof Map<?, ?> m)) {
      throw new IllegalArgumentException(what + ": not an object");
    }
    return (Map<String, Object>) m;
  }

  private static String string(Object v) {
    if (!(v instanceof String s)) {
      throw new IllegalArgumentException("a string is missing");
    }
    return s;
  }

  private static long number(Object v) {
    if (!(v instanceof Long n)) {
      throw new IllegalArgumentException("a number is missing");
    }
    return n;
  }

  private static List<Object> list(Object v) {
    if (!(v instanceof List<?> l)) {
      throw new IllegalArgumentException("a list is missing");
    }
    return new ArrayList<>(l);
  }

  private static List<String> strings(Object v) {
    List<String> out = new ArrayList<>();
    for (Object o : list(v)) {
      out.add(string(o));
    }
    return out;
  }

  private static Map<String, String> stringMap(Object v) {
    Map<String, String> out = new LinkedHashMap<>();
    for (Map.Entry<String, Object> e : map(v, "names").entrySet()) {
      out.put(e.getKey(), string(e.getValue()));
    }
    return out;
  }

  private static Map<String, PolicyLint.Location> locations(Object v) {
    Map<String, PolicyLint.Location> out = new LinkedHashMap<>();
    for (Map.Entry<String, Object> e : map(v, "places").entrySet()) {
      Map<String, Object> l = map(e.getValue(), "place");
      out.put(
          e.getKey(),
          new PolicyLint.Location(
              string(l.get("file")), (int) number(l.get("line")), string(l.get("where"))));
    }
    return out;
  }

  private static List<PolicyFinding> findings(Object v) {
    List<PolicyFinding> out = new ArrayList<>();
    for (Object o : list(v)) {
      Map<String, Object> f = map(o, "finding");
      out.add(
          new PolicyFinding(
              string(f.get("file")),
              (int) number(f.get("line")),
              string(f.get("where")),
              string(f.get("name")),
              string(f.get("reason"))));
    }
    return out;
  }
}
