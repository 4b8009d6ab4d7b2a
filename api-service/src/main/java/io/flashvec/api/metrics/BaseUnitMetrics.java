package io.flashvec.api.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * Prometheus wants time in seconds: Micrometer's process CPU time ({@code
 * process_cpu_time_ns_total}) and JIT time ({@code jvm_compilation_time_ms_total}) are exported in
 * nanoseconds and milliseconds. They are replaced by {@code process_cpu_seconds_total} (the name
 * Prometheus' own clients use) and {@code jvm_compilation_seconds_total}.
 */
@Configuration(proxyBeanMethods = false)
public class BaseUnitMetrics {

  static final String CPU_NANOS = "process.cpu.time";
  static final String JIT_MILLIS = "jvm.compilation.time";

  /** Leaves out the meters exported in other units than seconds. */
  @Bean
  MeterFilter secondsOnly() {
    return MeterFilter.deny(
        id -> id.getName().equals(CPU_NANOS) || id.getName().equals(JIT_MILLIS));
  }

  /**
   * The in-flight request timer ({@code http_server_requests_active_seconds}) without buckets: its
   * count and longest duration are what a dashboard shows, and the buckets it inherits from the
   * request timer's settings would be a dozen series per route.
   */
  @Bean
  @Order(Ordered.LOWEST_PRECEDENCE)
  MeterFilter activeRequestsWithoutBuckets() {
    return new MeterFilter() {
      @Override
      public DistributionStatisticConfig configure(
          Meter.Id id, DistributionStatisticConfig config) {
        if (!id.getName().equals("http.server.requests.active")) {
          return config;
        }
        return DistributionStatisticConfig.builder()
            .percentilesHistogram(false)
            .serviceLevelObjectives()
            .build()
            .merge(config);
      }
    };
  }

  @Bean
  MeterBinder secondsMeters() {
    return BaseUnitMetrics::bind;
  }

  static void bind(MeterRegistry registry) {
    if (ProcessHandle.current().info().totalCpuDuration().isPresent()) {
      FunctionCounter.builder("process.cpu", ProcessHandle.current(), BaseUnitMetrics::cpuSeconds)
          .description("CPU time used by the server process")
          .baseUnit("seconds")
          .register(registry);
    }
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    if (jit != null && jit.isCompilationTimeMonitoringSupported()) {
      FunctionCounter.builder("jvm.compilation", jit, j -> j.getTotalCompilationTime() / 1e3)
          .description("Time spent in JIT compilation")
          .baseUnit("seconds")
          .register(registry);
    }
  }

  private static double cpuSeconds(ProcessHandle p) {
    return p.info().totalCpuDuration().map(d -> d.toNanos() / 1e9).orElse(Double.NaN);
  }
}
