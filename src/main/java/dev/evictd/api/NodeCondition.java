package dev.evictd.api;

/** A node condition reported True after this sync. */
public record NodeCondition(NodeConditionType type) implements PerSyncFact {
  // Written out as the implicit one prints: that one is linked through ObjectMethods at its first
  // call, which spins method-handle classes at every start (RecordMethodsTest compares the two).
  @Override
  public String toString() {
    return "NodeCondition[type=" + type + "]";
  }
}
