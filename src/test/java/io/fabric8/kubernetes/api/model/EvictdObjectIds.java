package io.fabric8.kubernetes.api.model;

import com.fasterxml.jackson.annotation.JsonIdentityInfo;
import com.fasterxml.jackson.annotation.ObjectIdGenerators;

/**
 * Test-only beans in fabric8's model package (the package whose deserializers {@code
 * dev.evictd.fixture.LazyBeanDeserializerFactory} defers) with Jackson object ids: fabric8's own
 * types have none, so only these show that a deferred deserializer still answers a parent's
 * question for one as Jackson's own would.
 */
public final class EvictdObjectIds {
  private EvictdObjectIds() {}

  /** A type with an object id on the class. */
  @JsonIdentityInfo(generator = ObjectIdGenerators.PropertyGenerator.class, property = "id")
  public static final class Identified {
    public String id;
    public String value;
  }

  /** A type without one. */
  public static final class Plain {
    public String id;
    public String value;
  }

  /** Properties of both, the second of each a reference to the first by id where ids apply. */
  public static final class Holder {
    public Identified first;
    public Identified second;

    @JsonIdentityInfo(generator = ObjectIdGenerators.PropertyGenerator.class, property = "id")
    public Plain plainFirst;

    @JsonIdentityInfo(generator = ObjectIdGenerators.PropertyGenerator.class, property = "id")
    public Plain plainSecond;

    public Plain plain;
  }
}
