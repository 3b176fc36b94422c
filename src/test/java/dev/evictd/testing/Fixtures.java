package dev.evictd.testing;

import java.net.URISyntaxException;
import java.nio.file.Path;

/** Paths of test resources. */
public final class Fixtures {
  private Fixtures() {}

  /** The directory or file {@code name} under src/test/resources. */
  public static Path resource(String name) {
    try {
      var url = Fixtures.class.getClassLoader().getResource(name);
      if (url == null) {
        throw new IllegalArgumentException("no test resource " + name);
      }
      return Path.of(url.toURI());
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(e);
    }
  }
}
