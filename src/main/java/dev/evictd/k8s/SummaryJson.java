package dev.evictd.k8s;

import dev.evictd.stats.JsonDeserializeQuantity;
import tools.jackson.databind.JacksonModule;
import tools.jackson.databind.cfg.MapperConfig;
import tools.jackson.databind.introspect.Annotated;
import tools.jackson.databind.introspect.NopAnnotationIntrospector;
import tools.jackson.databind.module.SimpleModule;

/**
 * The JSON binding of the stats Summary's amounts: every field marked {@link
 * JsonDeserializeQuantity} is read by {@link QuantityLongDeserializer} (an integer or a Kubernetes
 * quantity string). It lives here, above {@code api}, because it parses with {@code api.Quantity}
 * while the Summary model names no evictd package. Every mapper that reads a {@code Summary} adds
 * {@link #module()}.
 */
public final class SummaryJson {
  private SummaryJson() {}

  /**
   * The Jackson module that binds {@link JsonDeserializeQuantity} fields to the quantity reader.
   */
  public static JacksonModule module() {
    return new SimpleModule("evictd-summary-quantities") {
      private static final long serialVersionUID = 1L;

      @Override
      public void setupModule(SetupContext context) {
        super.setupModule(context);
        context.insertAnnotationIntrospector(new QuantityFields());
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
}
