package dev.evictd.stats;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a byte or count field that accepts an integer or a Kubernetes quantity string ("1500Mi"). A
 * marker only: the mapper that reads a {@link Summary} binds it, with {@code
 * dev.evictd.k8s.SummaryJson.module()}, to the quantity reader (which needs {@code
 * dev.evictd.api.Quantity}: naming it here would make {@code api <-> stats} a package cycle, since
 * {@code api.PodStats} carries a {@link Summary.PodStats}).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({
  ElementType.FIELD,
  ElementType.PARAMETER,
  ElementType.METHOD,
  ElementType.RECORD_COMPONENT
})
public @interface JsonDeserializeQuantity {}
