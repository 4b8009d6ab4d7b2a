/**
 * The web dashboard at {@code /dashboard}: static pages (plain ES modules, no build step) and the
 * chart library from its WebJar, served from the jar. The pages read the REST API, {@code
 * /metrics}, {@code /cluster} and {@code /telemetry} from the browser; nothing here reaches the
 * engine.
 */
package io.flashvec.api.dashboard;
