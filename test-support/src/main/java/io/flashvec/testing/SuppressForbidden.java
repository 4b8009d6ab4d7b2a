package io.flashvec.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Lets one class, method, constructor or field of a test call an API the build otherwise refuses in
 * tests ({@code Thread.sleep}, an unseeded {@code Random}). The forbidden-API check reads class
 * files, so the annotation is kept in them; {@link #value} says why the call is needed and is
 * required, so every exception explains itself where it is made.
 */
@Retention(RetentionPolicy.CLASS)
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.CONSTRUCTOR, ElementType.FIELD})
public @interface SuppressForbidden {
  /** Why the forbidden call is right here. */
  String value();
}
