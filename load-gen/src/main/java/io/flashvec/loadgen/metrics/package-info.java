/**
 * Server metrics: a generic parser of the Prometheus text exposition format and the deltas between
 * two scrapes, taken before and after each benchmark point.
 */
package io.flashvec.loadgen.metrics;
