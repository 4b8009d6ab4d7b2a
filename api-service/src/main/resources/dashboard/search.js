// The search playground: a query by vector or by point id, with a filter and search parameters,
// its hits and the per-query cost FlashVec reports with `with_stats`.
import {call, enc, pointId as idOf} from './api.js';
import {h, table, num, bytes, errorBox, jsonCell} from './dom.js';
import {collectionPicker, parseJson, vectorNames, FILTER_HINT} from './common.js';

const STATS = [
  ['searches', 'Searches'],
  ['segments', 'Segments searched'],
  ['nodes_visited', 'Graph nodes scored (PQ)'],
  ['nodes_expanded', 'Graph nodes expanded'],
  ['node_cache_hits', 'Node cache hits'],
  ['reranked', 'Candidates reranked'],
  ['distance_computations', 'Distance computations'],
  ['pages_read', 'Pages read from disk'],
  ['bytes_read', 'Bytes read from disk'],
];

export async function render(main, args, ctx) {
  let name = args[0] || '';
  const byId = (args[1] || '').startsWith('id=') ? args[1].slice(3) : null;
  main.append(h('h1', {}, 'Search'));
  const {sel, names} = await collectionPicker(name, (n) => { location.hash = `#search/${enc(n)}`; });
  if (names.length === 0) {
    main.append(h('p', {class: 'empty'}, 'No collections yet: create one and add points to search.'));
    return;
  }
  if (!name || !names.includes(name)) {
    name = names[0];
    history.replaceState(null, '', `#search/${enc(name)}`);
  }
  const vnames = await vectorNames(name);
  const mode = h('select', {id: 'mode', onchange: () => toggle()},
    h('option', {value: 'vector', selected: byId == null}, 'vector'),
    h('option', {value: 'id', selected: byId != null}, 'point id (nearest to a stored point)'));
  const vector = h('textarea', {id: 'vector', placeholder: '[0.12, -0.5, 0.33, ...]'});
  const pointId = h('input', {id: 'point-id', size: 40, value: byId == null ? '' : JSON.parse(byId)});
  const using = vnames.length > 1 || vnames[0] !== ''
    ? h('select', {id: 'using'}, vnames.map((v) => h('option', {value: v}, v))) : null;
  const filter = h('textarea', {id: 'filter', placeholder: FILTER_HINT});
  const limit = h('input', {id: 'limit', type: 'number', min: 1, max: 10000, value: 10, size: 5});
  const searchList = h('input', {id: 'search-list', type: 'number', min: 0, placeholder: 'default', size: 8});
  const rerank = h('input', {id: 'rerank-k', type: 'number', min: 0, placeholder: 'default', size: 8});
  const beam = h('input', {id: 'beam-width', type: 'number', min: 0, placeholder: 'default', size: 6});
  const exact = h('input', {id: 'exact', type: 'checkbox'});
  const withPayload = h('input', {id: 'with-payload', type: 'checkbox', checked: true});
  const vectorRow = [h('label', {for: 'vector'}, 'Vector'), vector];
  const idRow = [h('label', {for: 'point-id'}, 'Point id'), h('div', {class: 'row'}, pointId)];
  const out = h('div', {id: 'search-out'});
  function toggle() {
    const v = mode.value === 'vector';
    vectorRow.concat(idRow).forEach((e) => { e.hidden = false; });
    (v ? idRow : vectorRow).forEach((e) => { e.hidden = true; });
  }
  const run = async () => {
    out.replaceChildren(h('p', {class: 'muted'}, 'Searching…'));
    try {
      const body = {limit: Number(limit.value) || 10, with_payload: withPayload.checked, with_stats: true};
      if (mode.value === 'vector') {
        const v = parseJson('Vector', vector.value);
        if (!Array.isArray(v)) throw new Error('Vector: enter a JSON array of numbers, e.g. [0.1, 0.2]');
        body.query = v;
      } else {
        const t = String(pointId.value).trim();
        if (t === '') throw new Error('Point id: enter an id (a number or a UUID)');
        body.query = idOf(t);
      }
      if (using) body.using = using.value;
      const f = parseJson('Filter', filter.value);
      if (f !== undefined) body.filter = f;
      const params = {};
      if (searchList.value !== '') params.search_list = Number(searchList.value);
      if (rerank.value !== '') params.rerank_k = Number(rerank.value);
      if (beam.value !== '') params.beam_width = Number(beam.value);
      if (exact.checked) params.exact = true;
      if (Object.keys(params).length) body.params = params;
      const path = `/collections/${enc(name)}/points/query`;
      const t0 = performance.now();
      const r = await call('POST', path, body);
      const rtt = performance.now() - t0;
      if (!ctx.current()) return;
      const hits = r.result.points || [];
      const st = r.flashvec_stats || {};
      out.replaceChildren(
        h('h2', {}, `Results (${hits.length})`),
        table(['#', 'ID', 'Score', 'Payload'],
          hits.map((p, i) => [i + 1,
            h('a', {href: `#search/${enc(name)}/id=${enc(JSON.stringify(p.id))}`, class: 'point-id', title: 'Search for points near this one'}, String(p.id)),
            h('span', {class: 'score'}, p.score == null ? '–' : p.score.toFixed(5)), jsonCell(p.payload, 200)]),
          'No hits.', {id: 'results-table'}),
        h('h2', {}, 'Cost of this query'),
        table(null, [
          ['Server time', `${(r.time * 1000).toFixed(2)} ms`],
          ['Round trip from the browser', `${rtt.toFixed(1)} ms`],
          ...STATS.map(([k, label]) => [label, k === 'bytes_read' ? `${bytes(st[k])} (${num(st[k])})` : num(st[k])]),
        ], '', {id: 'stats-table', class: 'stats'}),
        h('details', {}, h('summary', {}, 'Request'),
          h('pre', {id: 'request'}, `POST ${path}\n${JSON.stringify(body, null, 2)}`)));
      if (r.partial) out.prepend(errorBox('Partial result: some shards had no live replica and are missing from it.'));
    } catch (e) {
      if (ctx.current()) out.replaceChildren(errorBox(e));
    }
  };
  const form = h('form', {class: 'query', onsubmit: (e) => { e.preventDefault(); run(); }},
    h('label', {for: 'collection'}, 'Collection'), h('div', {class: 'row'}, sel,
      using ? h('span', {}, 'vector ', using) : null),
    h('label', {for: 'mode'}, 'Query by'), h('div', {class: 'row'}, mode),
    vectorRow, idRow,
    h('label', {for: 'filter'}, 'Filter'), filter,
    h('label', {for: 'limit'}, 'Limit'), h('div', {class: 'row'}, limit,
      h('label', {}, withPayload, ' with payload')),
    h('label', {}, 'Parameters'), h('div', {class: 'row'},
      h('label', {}, 'search list ', searchList), h('label', {}, 'rerank k ', rerank),
      h('label', {}, 'beam width ', beam), h('label', {}, exact, ' exact')),
    h('span', {}), h('div', {class: 'row'}, h('button', {type: 'submit', id: 'run'}, 'Search')));
  main.append(form, out);
  toggle();
  if (byId != null) await run();
}
