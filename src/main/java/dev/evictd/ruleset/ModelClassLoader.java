package dev.evictd.ruleset;

import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;

/**
 * Defines a model's classes from the checked bytes (never from the file again), before asking its
 * parent: a model class may have the name of one in evictd's jar (the default rules' model).
 */
final class ModelClassLoader extends ClassLoader {
  private final Map<String, byte[]> classes = new HashMap<>();

  ModelClassLoader(ClassLoader parent, ModelEntry m) {
    super("evictd-rule-model", parent);
    for (Map.Entry<String, byte[]> e : m.classes().entrySet()) {
      String path = e.getKey();
      classes.put(
          path.substring(0, path.length() - ".class".length()).replace('/', '.'), e.getValue());
    }
  }

  @Override
  protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
    byte[] b = classes.get(name);
    if (b == null) {
      return super.loadClass(name, resolve);
    }
    synchronized (getClassLoadingLock(name)) {
      Class<?> c = findLoadedClass(name);
      if (c == null) {
        c = defineClass(name, b, 0, b.length);
      }
      if (resolve) {
        resolveClass(c);
      }
      return c;
    }
  }

  @Override
  public InputStream getResourceAsStream(String name) {
    if (name.endsWith(".class")) {
      byte[] b =
          classes.get(name.substring(0, name.length() - ".class".length()).replace('/', '.'));
      if (b != null) {
        return new java.io.ByteArrayInputStream(b);
      }
    }
    return super.getResourceAsStream(name);
  }
}
