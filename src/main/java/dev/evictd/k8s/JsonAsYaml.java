package dev.evictd.k8s;

/** What the JSON fast paths beside the YAML reader (pods files, summaries) may read themselves. */
public final class JsonAsYaml {
  private JsonAsYaml() {}

  /**
   * Printable ASCII and line breaks only: no tab (YAML and JSON treat some differently), no
   * backslash (no escapes to decode the same way twice), nothing YAML refuses as unprintable.
   */
  public static boolean plainAscii(byte[] bytes) {
    for (byte b : bytes) {
      if ((b < 0x20 && b != '\n' && b != '\r') || b >= 0x7f || b == '\\') {
        return false;
      }
    }
    return true;
  }
}
