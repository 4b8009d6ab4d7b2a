// The point browser: a collection's points page by page (scroll), with payloads, optional vectors
// and a Qdrant filter, and the exact count of what the filter selects.
import {result, enc} from './api.js';
import {h, table, num, errorBox, jsonCell} from './dom.js';
import {collectionPicker, parseJson, FILTER_HINT} from './common.js';

export async function render(main, args, ctx) {
  let name = args[0] || '';
  main.append(h('h1', {}, 'Points'));
  const {sel, names} = await collectionPicker(name, (n) => { location.hash = `#points/${enc(n)}`; });
  if (names.length === 0) {
    main.append(h('p', {class: 'empty'}, 'No collections yet: there are no points to browse.'));
    return;
  }
  if (!name || !names.includes(name)) {
    name = names[0];
    history.replaceState(null, '', `#points/${enc(name)}`);
  }
  const filter = h('textarea', {id: 'filter', placeholder: FILTER_HINT});
  const limit = h('input', {id: 'limit', type: 'number', min: 1, max: 1000, value: 20, size: 5});
  const withVector = h('input', {id: 'with-vector', type: 'checkbox'});
  const out = h('div', {id: 'points-out'});
  // offsets of the pages shown so far, for "Previous"
  let pages = [null];
  const load = async (offset) => {
    out.replaceChildren(h('p', {class: 'muted'}, 'Loading…'));
    try {
      const f = parseJson('Filter', filter.value);
      const body = {limit: Number(limit.value) || 20, with_payload: true, with_vector: withVector.checked};
      if (f !== undefined) body.filter = f;
      if (offset != null) body.offset = offset;
      const [page, count] = await Promise.all([
        result('POST', `/collections/${enc(name)}/points/scroll`, body),
        result('POST', `/collections/${enc(name)}/points/count`, f === undefined ? {exact: true} : {exact: true, filter: f}),
      ]);
      if (!ctx.current()) return;
      const rows = page.points.map((p) => {
        const r = [h('a', {href: `#search/${enc(name)}/id=${enc(JSON.stringify(p.id))}`, title: 'Search for similar points', class: 'point-id'}, String(p.id)), jsonCell(p.payload, 240)];
        if (withVector.checked) r.push(jsonCell(p.vector, 120));
        return r;
      });
      const heads = ['ID', 'Payload'];
      if (withVector.checked) heads.push('Vector');
      const prev = h('button', {class: 'secondary', disabled: pages.length < 2, onclick: () => { pages.pop(); load(pages[pages.length - 1]); }}, 'Previous');
      const next = h('button', {class: 'secondary', disabled: page.next_page_offset == null, onclick: () => { pages.push(page.next_page_offset); load(page.next_page_offset); }}, 'Next');
      out.replaceChildren(
        h('div', {class: 'toolbar'}, h('span', {id: 'points-count'}, countText(count.count, f !== undefined)), prev, next),
        table(heads, rows, f === undefined ? 'This collection has no points yet.' : 'No point matches the filter.', {id: 'points-table'}));
    } catch (e) {
      if (ctx.current()) out.replaceChildren(errorBox(e));
    }
  };
  const form = h('form', {class: 'query', onsubmit: (e) => { e.preventDefault(); pages = [null]; load(null); }},
    h('label', {for: 'collection'}, 'Collection'), h('div', {class: 'row'}, sel),
    h('label', {for: 'filter'}, 'Filter'), filter,
    h('label', {for: 'limit'}, 'Page size'), h('div', {class: 'row'}, limit,
      h('label', {}, withVector, ' with vectors'), h('button', {type: 'submit'}, 'Show')));
  main.append(form, out);
  await load(null);
}

function countText(n, filtered) {
  const one = n === 1;
  return `${num(n)} ${one ? 'point' : 'points'}${filtered ? (one ? ' matches' : ' match') + ' the filter' : ''}`;
}
