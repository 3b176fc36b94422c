package dev.evictd.stats;

import com.fasterxml.jackson.annotation.JacksonAnnotationsInside;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import tools.jackson.databind.annotation.JsonDeserialize;

/**
 * Marks a byte or count field that accepts an integer or a Kubernetes quantity string ("1500Mi").
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({
  ElementType.FIELD,
  ElementType.PARAMETER,
  ElementType.METHOD,
  ElementType.RECORD_COMPONENT
})
@JacksonAnnotationsInside
@JsonDeserialize(using = QuantityLongDeserializer.class)
public @interface JsonDeserializeQuantity {}
