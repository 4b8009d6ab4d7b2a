// The few Prometheus series the dashboard charts, parsed from /metrics (text format 0.0.4), and
// what Prometheus' rate() and histogram_quantile() would compute from two scrapes.

/** Samples of a scrape: [{name, labels, value}]. */
export function parse(text) {
  const out = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    if (m[3]) {
      const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
      let l;
      while ((l = re.exec(m[3]))) labels[l[1]] = l[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    }
    out.push({name: m[1], labels, value: parseFloat(m[4])});
  }
  return out;
}

/** Sum of the samples named `name` whose labels pass `where`. */
export function sum(samples, name, where = () => true) {
  let s = 0;
  for (const x of samples) if (x.name === name && where(x.labels)) s += x.value;
  return s;
}

/** Per-second increase of a counter between two scrapes (a restart's reset counts from zero). */
export function rate(prev, cur, seconds) {
  if (prev == null || seconds <= 0) return null;
  return (cur >= prev ? cur - prev : cur) / seconds;
}

/** Cumulative bucket counts by upper bound `le`, summed over the series that pass `where`. */
export function buckets(samples, name, where = () => true) {
  const m = new Map();
  for (const x of samples) {
    if (x.name !== name + '_bucket' || !where(x.labels)) continue;
    const le = x.labels.le === '+Inf' ? Infinity : parseFloat(x.labels.le);
    m.set(le, (m.get(le) || 0) + x.value);
  }
  return m;
}

/**
 * The q-quantile of the observations made between two scrapes' cumulative buckets, interpolated
 * linearly inside the bucket as Prometheus' histogram_quantile(); null when nothing was observed.
 */
export function quantile(q, prev, cur) {
  const les = [...cur.keys()].sort((a, b) => a - b);
  const counts = les.map((le) => Math.max(0, cur.get(le) - ((prev && prev.get(le)) || 0)));
  const total = counts[counts.length - 1];
  if (!total) return null;
  const rank = q * total;
  for (let i = 0; i < les.length; i++) {
    if (counts[i] >= rank) {
      if (les[i] === Infinity) return i > 0 ? les[i - 1] : null;
      const lo = i === 0 ? 0 : les[i - 1];
      const below = i === 0 ? 0 : counts[i - 1];
      const inBucket = counts[i] - below;
      return inBucket > 0 ? lo + ((les[i] - lo) * (rank - below)) / inBucket : les[i];
    }
  }
  return null;
}
