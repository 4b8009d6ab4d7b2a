// Small DOM helpers: element building without innerHTML (no markup injection from payloads).

/** h('div', {class: 'x', onclick: fn}, child, 'text', [more]) */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'value') el.value = v;
    else if (k === 'checked') el.checked = !!v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c == null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/**
 * A table from column headings (null: none) and rows of cells; the text `empty` when there are no
 * rows.
 */
export function table(headings, rows, empty, attrs) {
  if (rows.length === 0) return h('p', {class: 'empty'}, empty);
  return h('table', attrs || {},
    headings ? h('thead', {}, h('tr', {}, headings.map((t) => h('th', {}, t)))) : null,
    h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c) => h('td', {}, c))))));
}

/** An error box, as shown in the page for a failed call. */
export function errorBox(err) {
  return h('div', {class: 'error', role: 'alert'}, String(err && err.message ? err.message : err));
}

export function bytes(n) {
  if (n == null) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = Number(n);
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return (i === 0 ? v.toFixed(0) : v.toFixed(1)) + ' ' + units[i];
}

export function num(n) {
  return n == null ? '–' : Number(n).toLocaleString('en-US');
}

/** Status of a collection as a coloured dot and its word. */
export function statusBadge(status) {
  return h('span', {class: 'status status-' + status}, status);
}

/** A progress bar of done out of total. */
export function progress(done, total) {
  const pct = total > 0 ? Math.min(100, (100 * done) / total) : 100;
  return h('span', {class: 'progress', title: `${num(done)} of ${num(total)}`},
    h('span', {class: 'bar', style: `width:${pct.toFixed(1)}%`}),
    h('span', {class: 'label'}, pct.toFixed(0) + ' %'));
}

/** Compact JSON for a table cell, abbreviated past `max` characters (full text on hover). */
export function jsonCell(v, max = 160) {
  if (v == null) return h('span', {class: 'muted'}, '–');
  const s = JSON.stringify(v);
  return h('code', {class: 'json', title: s.length > max ? JSON.stringify(v, null, 2) : null},
    s.length > max ? s.slice(0, max) + '…' : s);
}
