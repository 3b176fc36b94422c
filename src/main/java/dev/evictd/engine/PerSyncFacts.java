package dev.evictd.engine;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The facts that hold for this sync only, by class: the plan reads them type by type, and a
 * pressure sync holds a rank key per pod. Lists keep insertion order; the types read are records
 * (final), so a type's facts come from one list.
 */
final class PerSyncFacts {
  private final Map<Class<?>, List<Object>> byType = new HashMap<>();

  void add(Object o) {
    byType.computeIfAbsent(o.getClass(), k -> new ArrayList<>()).add(o);
  }

  void remove(Object o) {
    List<Object> l = byType.get(o.getClass());
    if (l != null) {
      l.remove(o);
    }
  }

  void clear() {
    for (List<Object> l : byType.values()) {
      l.clear();
    }
  }

  /** The facts of {@code type} (and its subtypes), a new list the caller may change. */
  @SuppressWarnings("unchecked")
  <T> List<T> of(Class<T> type) {
    List<T> out = null;
    for (Map.Entry<Class<?>, List<Object>> e : byType.entrySet()) {
      if (type.isAssignableFrom(e.getKey()) && !e.getValue().isEmpty()) {
        if (out == null) {
          out = new ArrayList<>((List<T>) e.getValue());
        } else {
          out.addAll((List<T>) e.getValue());
        }
      }
    }
    return out == null ? new ArrayList<>() : out;
  }
}
