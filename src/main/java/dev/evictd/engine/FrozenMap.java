package dev.evictd.engine;

import java.io.Serializable;
import java.util.AbstractCollection;
import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Collection;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * An unmodifiable map in insertion order, its keys and values in one array: how a frozen pod
 * ({@link PodCompaction#forStore}) keeps its small maps (labels, a container's requests). A {@code
 * LinkedHashMap} of one entry behind {@code Collections.unmodifiableMap} takes about 220 bytes and
 * keeps for good the views ({@code values()}, {@code entrySet()}) made when it is first read; this
 * takes about 50 and makes a view on each call. Lookups scan the array, so it holds at most {@link
 * #MAX} entries. Equality, hash code and string form are those of every {@link Map}; null keys and
 * values are kept as given.
 */
final class FrozenMap<K, V> extends AbstractMap<K, V> implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The most entries a frozen map holds (a lookup compares at most this many keys). */
  static final int MAX = 8;

  /** Key, value, key, value, ... in insertion order. */
  private final Object[] kv;

  /** A frozen copy of {@code m} (at most {@link #MAX} entries), in its iteration order. */
  static <K, V> FrozenMap<K, V> of(Map<? extends K, ? extends V> m) {
    if (m.size() > MAX) {
      throw new IllegalArgumentException("a frozen map holds at most " + MAX + " entries");
    }
    Object[] kv = new Object[m.size() * 2];
    int i = 0;
    for (Map.Entry<? extends K, ? extends V> e : m.entrySet()) {
      kv[i++] = e.getKey();
      kv[i++] = e.getValue();
    }
    return new FrozenMap<>(kv);
  }

  private FrozenMap(Object[] kv) {
    this.kv = kv;
  }

  private int indexOf(Object key) {
    for (int i = 0; i < kv.length; i += 2) {
      if (Objects.equals(kv[i], key)) {
        return i;
      }
    }
    return -1;
  }

  @SuppressWarnings("unchecked")
  private K key(int i) {
    return (K) kv[i];
  }

  @SuppressWarnings("unchecked")
  private V value(int i) {
    return (V) kv[i + 1];
  }

  @Override
  public int size() {
    return kv.length / 2;
  }

  @Override
  public boolean isEmpty() {
    return kv.length == 0;
  }

  @Override
  public boolean containsKey(Object key) {
    return indexOf(key) >= 0;
  }

  @Override
  public boolean containsValue(Object value) {
    for (int i = 0; i < kv.length; i += 2) {
      if (Objects.equals(kv[i + 1], value)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public V get(Object key) {
    int i = indexOf(key);
    return i < 0 ? null : value(i);
  }

  @Override
  public V getOrDefault(Object key, V defaultValue) {
    int i = indexOf(key);
    return i < 0 ? defaultValue : value(i);
  }

  @Override
  public void forEach(BiConsumer<? super K, ? super V> action) {
    for (int i = 0; i < kv.length; i += 2) {
      action.accept(key(i), value(i));
    }
  }

  /** Iterates over the array from slot {@code offset} of each entry; no removal. */
  private abstract class Cursor<T> implements Iterator<T> {
    private int next;

    @Override
    public boolean hasNext() {
      return next < kv.length;
    }

    @Override
    public T next() {
      if (next >= kv.length) {
        throw new NoSuchElementException();
      }
      int i = next;
      next += 2;
      return at(i);
    }

    abstract T at(int i);
  }

  @Override
  public Set<Map.Entry<K, V>> entrySet() {
    // not kept: a view made for one read is garbage after it
    return new AbstractSet<>() {
      @Override
      public Iterator<Map.Entry<K, V>> iterator() {
        return new Cursor<>() {
          @Override
          Map.Entry<K, V> at(int i) {
            return new AbstractMap.SimpleImmutableEntry<>(key(i), value(i));
          }
        };
      }

      @Override
      public int size() {
        return FrozenMap.this.size();
      }
    };
  }

  @Override
  public Set<K> keySet() {
    return new AbstractSet<>() {
      @Override
      public Iterator<K> iterator() {
        return new Cursor<>() {
          @Override
          K at(int i) {
            return key(i);
          }
        };
      }

      @Override
      public int size() {
        return FrozenMap.this.size();
      }

      @Override
      public boolean contains(Object o) {
        return containsKey(o);
      }
    };
  }

  @Override
  public Collection<V> values() {
    return new AbstractCollection<>() {
      @Override
      public Iterator<V> iterator() {
        return new Cursor<>() {
          @Override
          V at(int i) {
            return value(i);
          }
        };
      }

      @Override
      public int size() {
        return FrozenMap.this.size();
      }
    };
  }

  @Override
  public V put(K key, V value) {
    throw new UnsupportedOperationException();
  }

  @Override
  public V remove(Object key) {
    throw new UnsupportedOperationException();
  }

  @Override
  public void putAll(Map<? extends K, ? extends V> m) {
    throw new UnsupportedOperationException();
  }

  @Override
  public void clear() {
    throw new UnsupportedOperationException();
  }

  @Override
  public void replaceAll(BiFunction<? super K, ? super V, ? extends V> function) {
    throw new UnsupportedOperationException();
  }

  @Override
  public V putIfAbsent(K key, V value) {
    throw new UnsupportedOperationException();
  }

  @Override
  public boolean remove(Object key, Object value) {
    throw new UnsupportedOperationException();
  }

  @Override
  public boolean replace(K key, V oldValue, V newValue) {
    throw new UnsupportedOperationException();
  }

  @Override
  public V replace(K key, V value) {
    throw new UnsupportedOperationException();
  }

  @Override
  public V computeIfAbsent(K key, Function<? super K, ? extends V> mappingFunction) {
    throw new UnsupportedOperationException();
  }

  @Override
  public V computeIfPresent(
      K key, BiFunction<? super K, ? super V, ? extends V> remappingFunction) {
    throw new UnsupportedOperationException();
  }

  @Override
  public V compute(K key, BiFunction<? super K, ? super V, ? extends V> remappingFunction) {
    throw new UnsupportedOperationException();
  }

  @Override
  public V merge(K key, V value, BiFunction<? super V, ? super V, ? extends V> remappingFunction) {
    throw new UnsupportedOperationException();
  }
}
