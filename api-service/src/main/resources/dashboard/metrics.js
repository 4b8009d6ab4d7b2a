// Live charts from /metrics (scraped every 2 s; rates and latency percentiles computed between
// scrapes, as Prometheus' rate() and histogram_quantile() would) and from the collections'
// indexing state: QPS, search latency, disk reads, index build and merge progress.
import uPlot from './vendor/uplot/uPlot.esm.js';
import {result, text, enc} from './api.js';
import {h, num, errorBox} from './dom.js';
import * as prom from './prom.js';

const POLL_MS = 2000;
const KEEP = 150; // 5 minutes of points
const COLORS = ['#3559e0', '#d69e2e', '#d64545', '#1f9d55', '#8e44ad', '#16a2b8', '#e8590c', '#5c677d'];
const SEARCH_URI = /\/points\/(search|query|recommend|discover)(\/|$)/;

// The series survive a visit to another view: the charts resume with the samples they had.
const samples = {t: [], qps: [], rps: [], p50: [], p95: [], p99: [], pages: [], mib: [], walMib: [], work: {}, pct: {}};
let last = null;

function push(arr, v) {
  arr.push(v);
  if (arr.length > KEEP) arr.shift();
}

export async function render(main, args, ctx) {
  const now = h('div', {class: 'cards', id: 'metrics-now'});
  const err = h('div', {});
  const grid = h('div', {class: 'charts', id: 'charts'});
  main.append(h('h1', {}, 'Metrics'),
    h('p', {class: 'muted'}, `Sampled from /metrics every ${POLL_MS / 1000} s while this page is open; rates and percentiles are over each interval. HTTP requests include this page's own polls.`),
    err, now, grid);
  const charts = [];
  const chart = (id, title, series, axes) => {
    const box = h('div', {class: 'chart', id}, h('h2', {}, title));
    grid.append(box);
    const c = {box, title, series, axes, plot: null};
    charts.push(c);
    return c;
  };
  const qps = chart('chart-qps', 'Throughput (per second)', ['searches', 'HTTP requests']);
  const lat = chart('chart-latency', 'Search latency (ms)', ['p50', 'p95', 'p99']);
  const reads = chart('chart-reads', 'Disk reads by searches', ['pages/s', 'MiB/s'], 2);
  const writes = chart('chart-writes', 'WAL writes (MiB/s)', ['MiB/s']);
  const indexed = chart('chart-indexed', 'Indexed points (%)', null);
  const work = chart('chart-work', 'Builds, compactions and merges', ['builds running', 'compactions running', 'merges planned', 'backlog points'], 2);

  const draw = (c, data) => {
    const width = Math.max(300, c.box.clientWidth - 20);
    const names = c.series;
    const key = names.join('\u0000');
    if (c.plot && c.key !== key) {
      c.plot.destroy();
      c.plot = null;
    }
    if (!c.plot) {
      c.key = key;
      const two = c.axes === 2;
      c.plot = new uPlot({
        width, height: 200,
        series: [{}, ...names.map((n, i) => ({
          label: n, stroke: COLORS[i % COLORS.length], width: 1.5,
          scale: two && i === names.length - 1 ? 'y2' : 'y', spanGaps: false,
        }))],
        axes: [{}, {scale: 'y'}, ...(two ? [{scale: 'y2', side: 1, grid: {show: false}}] : [])],
        scales: {y: {range: (u, min, max) => [0, Math.max(max || 0, 1)]}, ...(two ? {y2: {range: (u, min, max) => [0, Math.max(max || 0, 1)]}} : {})},
      }, data, c.box);
    } else {
      if (c.plot.width !== width) c.plot.setSize({width, height: 200});
      c.plot.setData(data);
    }
  };

  const redraw = () => {
    const t = samples.t;
    draw(qps, [t, samples.qps, samples.rps]);
    draw(lat, [t, samples.p50, samples.p95, samples.p99]);
    draw(reads, [t, samples.pages, samples.mib]);
    draw(writes, [t, samples.walMib]);
    const cols = Object.keys(samples.pct).sort();
    indexed.series = cols.length ? cols : ['(no collections)'];
    draw(indexed, [t, ...(cols.length ? cols.map((c) => samples.pct[c]) : [t.map(() => null)])]);
    draw(work, [t, samples.work.builds || [], samples.work.compactions || [], samples.work.merges || [], samples.work.backlog || []]);
  };

  const poll = async () => {
    let scrape;
    let infos;
    try {
      const names = (await result('GET', '/collections')).collections.map((c) => c.name);
      [scrape, infos] = await Promise.all([
        text('/metrics').then(prom.parse),
        Promise.all(names.map((n) => result('GET', `/collections/${enc(n)}`).then((i) => [n, i], () => [n, null]))),
      ]);
    } catch (e) {
      if (ctx.current()) err.replaceChildren(errorBox(e));
      return;
    }
    if (!ctx.current()) return;
    err.replaceChildren();
    const t = Date.now() / 1000;
    const cur = {
      t,
      queries: prom.sum(scrape, 'flashvec_search_queries_total'),
      requests: prom.sum(scrape, 'http_server_requests_seconds_count'),
      pages: prom.sum(scrape, 'flashvec_io_pages_read_total'),
      bytes: prom.sum(scrape, 'flashvec_io_bytes_read_total'),
      wal: prom.sum(scrape, 'flashvec_wal_appended_bytes_total'),
      latency: prom.buckets(scrape, 'http_server_requests_seconds', (l) => SEARCH_URI.test(l.uri || '')),
    };
    const dt = last ? t - last.t : 0;
    if (last && dt > 0) {
      push(samples.t, t);
      push(samples.qps, prom.rate(last.queries, cur.queries, dt));
      push(samples.rps, prom.rate(last.requests, cur.requests, dt));
      const ms = (q) => { const v = prom.quantile(q, last.latency, cur.latency); return v == null ? null : v * 1000; };
      push(samples.p50, ms(0.5));
      push(samples.p95, ms(0.95));
      push(samples.p99, ms(0.99));
      push(samples.pages, prom.rate(last.pages, cur.pages, dt));
      const b = prom.rate(last.bytes, cur.bytes, dt);
      push(samples.mib, b == null ? null : b / 1048576);
      const w = prom.rate(last.wal, cur.wal, dt);
      push(samples.walMib, w == null ? null : w / 1048576);
      const totals = {builds: 0, compactions: 0, merges: 0, backlog: 0};
      for (const [n, info] of infos) {
        const ix = info && info.flashvec && info.flashvec.indexing;
        if (!samples.pct[n]) samples.pct[n] = samples.t.slice(0, -1).map(() => null);
        if (!ix) { push(samples.pct[n], null); continue; }
        const all = ix.indexed_points + ix.backlog_points;
        push(samples.pct[n], all === 0 ? 100 : (100 * ix.indexed_points) / all);
        totals.builds += ix.builds_running;
        totals.compactions += ix.compactions_running;
        totals.merges += ix.merges_planned;
        totals.backlog += ix.backlog_points;
      }
      for (const n of Object.keys(samples.pct)) {
        if (!infos.some(([m]) => m === n)) delete samples.pct[n];
        else while (samples.pct[n].length > samples.t.length) samples.pct[n].shift();
      }
      for (const k of Object.keys(totals)) {
        samples.work[k] = samples.work[k] || samples.t.slice(0, -1).map(() => null);
        push(samples.work[k], totals[k]);
      }
      const at = (a) => a[a.length - 1];
      const fmt = (v, d = 1) => (v == null ? '–' : v.toFixed(d));
      now.replaceChildren(
        card('Searches/s', fmt(at(samples.qps))), card('HTTP requests/s', fmt(at(samples.rps))),
        card('Search p99', at(samples.p99) == null ? '–' : fmt(at(samples.p99), 2) + ' ms'),
        card('Disk pages read/s', fmt(at(samples.pages))),
        card('Index backlog', num(totals.backlog) + ' points'),
        card('Builds · merges', `${totals.builds} · ${totals.merges}`));
    }
    last = cur;
    if (samples.t.length > 0) redraw();
    else now.replaceChildren(h('p', {class: 'muted'}, 'Collecting the first interval…'));
  };
  await poll();
  ctx.every(POLL_MS, poll);
  onResize = () => { if (ctx.current() && samples.t.length) redraw(); };
}

let onResize = null;
window.addEventListener('resize', () => onResize && onResize());

function card(k, v) {
  return h('div', {class: 'card'}, h('div', {class: 'k'}, k), h('div', {class: 'v'}, v));
}
