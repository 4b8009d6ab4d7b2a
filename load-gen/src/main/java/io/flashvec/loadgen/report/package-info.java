/**
 * Results and reports: the JSON result model ({@link io.flashvec.loadgen.report.BenchmarkResult},
 * {@link io.flashvec.loadgen.report.SearchPoint}) and a self-contained HTML report with inline SVG
 * charts ({@link io.flashvec.loadgen.report.HtmlReport}).
 */
package io.flashvec.loadgen.report;
