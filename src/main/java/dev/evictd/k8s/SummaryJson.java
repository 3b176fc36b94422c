package dev.evictd.k8s;

import dev.evictd.stats.JsonDeserializeQuantity;
import dev.evictd.stats.Summary;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.core.TokenStreamContext;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.JacksonModule;
import tools.jackson.databind.ValueDeserializer;
import tools.jackson.databind.cfg.MapperConfig;
import tools.jackson.databind.deser.DeserializationProblemHandler;
import tools.jackson.databind.introspect.Annotated;
import tools.jackson.databind.introspect.NopAnnotationIntrospector;
import tools.jackson.databind.module.SimpleModule;

/**
 * The JSON binding of the stats Summary: every field marked {@link JsonDeserializeQuantity} is read
 * by {@link QuantityLongDeserializer} (an integer or a Kubernetes quantity string), and a field the
 * model does not bind is skipped, whatever the mapper's {@code FAIL_ON_UNKNOWN_PROPERTIES}, after
 * it is checked against the statsapi schema ({@link SummaryFields}): a field the schema does not
 * have is handed to the read's {@link #UNKNOWN_FIELDS} listener, if it has one. It lives here,
 * above {@code api}, because it parses with {@code api.Quantity} while the Summary model names no
 * evictd package. Every mapper that reads a {@code Summary} adds {@link #module()}.
 */
public final class SummaryJson {
  private SummaryJson() {}

  /**
   * The attribute of a read ({@code ObjectReader.withAttribute}) whose value, a {@code
   * Consumer<SummaryFields.Unknown>}, is told of every field the schema does not have. Without it
   * such fields are skipped without a word, as the kubelet's own clients skip them.
   */
  public static final Object UNKNOWN_FIELDS = new Object();

  /** The schema type of each record the model binds. */
  private static final Map<Class<?>, String> TYPES =
      Map.ofEntries(
          Map.entry(Summary.class, "Summary"),
          Map.entry(Summary.NodeStats.class, "NodeStats"),
          Map.entry(Summary.MemoryStats.class, "MemoryStats"),
          Map.entry(Summary.FsStats.class, "FsStats"),
          Map.entry(Summary.RuntimeStats.class, "RuntimeStats"),
          Map.entry(Summary.RlimitStats.class, "RlimitStats"),
          Map.entry(Summary.ContainerStats.class, "ContainerStats"),
          Map.entry(Summary.PodReference.class, "PodReference"),
          Map.entry(Summary.ProcessStats.class, "ProcessStats"),
          Map.entry(Summary.VolumeStats.class, "VolumeStats"),
          Map.entry(Summary.PodStats.class, "PodStats"));

  /** The schema type a model record binds, or null for a class that is not one. */
  static String schemaType(Class<?> record) {
    return TYPES.get(record);
  }

  /**
   * The Jackson module that binds {@link JsonDeserializeQuantity} fields to the quantity reader and
   * skips, and checks, the fields the model leaves out.
   */
  public static JacksonModule module() {
    return new SimpleModule("evictd-summary-quantities") {
      private static final long serialVersionUID = 1L;

      @Override
      public void setupModule(SetupContext context) {
        super.setupModule(context);
        context.insertAnnotationIntrospector(new QuantityFields());
        context.addHandler(new UnboundFields());
      }
    };
  }

  /** Finds the quantity reader for a marked field; leaves every other decision to Jackson's. */
  private static final class QuantityFields extends NopAnnotationIntrospector {
    private static final long serialVersionUID = 1L;

    @Override
    public Object findDeserializer(MapperConfig<?> config, Annotated a) {
      return a.hasAnnotation(JsonDeserializeQuantity.class) ? QuantityLongDeserializer.class : null;
    }
  }

  /**
   * Skips a field a model record does not bind, checking it (and what it holds) against the schema
   * for the read's listener; leaves the properties of every other class to Jackson.
   */
  private static final class UnboundFields extends DeserializationProblemHandler {
    @Override
    public boolean handleUnknownProperty(
        DeserializationContext ctxt,
        JsonParser p,
        ValueDeserializer<?> deserializer,
        Object beanOrClass,
        String propertyName) {
      Class<?> c = beanOrClass instanceof Class<?> k ? k : beanOrClass.getClass();
      String type = TYPES.get(c);
      if (type == null) {
        return false;
      }
      @SuppressWarnings("unchecked")
      Consumer<SummaryFields.Unknown> sink =
          (Consumer<SummaryFields.Unknown>) ctxt.getAttribute(UNKNOWN_FIELDS);
      if (sink == null) {
        p.skipChildren();
      } else {
        SummaryFields.skip(p, type, propertyName, holder(ctxt, p, propertyName), sink);
      }
      return true;
    }

    /**
     * The path from the document's root to the object that holds the property {@code name}, from
     * the parser the read started with: a record's unknown properties are buffered and handed over
     * on a parser of the buffer (whose contexts do not lead to the root) when its object has been
     * read, or all its creator's properties.
     */
    private static List<Object> holder(DeserializationContext ctxt, JsonParser p, String name) {
      JsonParser outer = ctxt.getParser();
      TokenStreamContext c;
      if (outer != p) {
        // at the holder's end (the context is its parent's) or at a property inside it
        c = outer.streamReadContext();
        if (outer.currentToken() != JsonToken.END_OBJECT) {
          c = c.getParent();
        }
      } else {
        // at the property's value: a parser is in the value's own context from its first token
        c = p.streamReadContext();
        JsonToken t = p.currentToken();
        if ((t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY)
            && !(c.inObject() && name.equals(c.currentName()))) {
          c = c.getParent();
        }
        c = c.getParent();
      }
      List<Object> path = new ArrayList<>();
      for (; c != null && !c.inRoot(); c = c.getParent()) {
        path.add(c.inArray() ? (Object) c.getCurrentIndex() : c.currentName());
      }
      Collections.reverse(path);
      return path;
    }
  }
}
