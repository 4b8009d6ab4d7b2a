/**
 * Results and reports: the JSON result model ({@link io.flashvec.loadgen.report.BenchmarkResult},
 * {@link io.flashvec.loadgen.report.SearchPoint}) and a self-contained HTML report with inline SVG
 * charts ({@link io.flashvec.loadgen.report.HtmlReport}) that leads with a headline ({@link
 * io.flashvec.loadgen.report.Headline}) and warnings ({@link io.flashvec.loadgen.report.Warnings}),
 * draws recall against QPS as a Pareto frontier ({@link io.flashvec.loadgen.report.Pareto}) and
 * describes each run's machine and settings as text ({@link io.flashvec.loadgen.report.Settings}).
 */
package io.flashvec.loadgen.report;
