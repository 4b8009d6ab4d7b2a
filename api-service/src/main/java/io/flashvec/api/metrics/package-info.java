/** Engine gauges for Prometheus: points, segments and WAL bytes per collection. */
package io.flashvec.api.metrics;
