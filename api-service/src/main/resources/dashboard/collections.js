// Collections: the list with status, points, segments, memory and disk; one collection's detail
// with its segments (state, size, graph progress), indexing work and configuration.
import {result, enc} from './api.js';
import {h, table, bytes, num, statusBadge, progress, errorBox} from './dom.js';

export async function render(main, args, ctx) {
  const name = args[0] || '';
  return name ? detail(main, name, ctx) : list(main, ctx);
}

async function describeAll() {
  const names = (await result('GET', '/collections')).collections.map((c) => c.name).sort();
  return Promise.all(names.map(async (n) => {
    try {
      return {name: n, info: await result('GET', `/collections/${enc(n)}`)};
    } catch (e) {
      return {name: n, error: e};
    }
  }));
}

async function list(main, ctx) {
  const body = h('div', {});
  main.append(h('h1', {}, 'Collections'), body);
  const draw = async () => {
    let all;
    try {
      all = await describeAll();
    } catch (e) {
      if (ctx.current()) body.replaceChildren(errorBox(e));
      return;
    }
    if (!ctx.current()) return;
    const rows = all.map(({name, info, error}) => {
      const link = h('a', {href: `#collections/${enc(name)}`, class: 'collection'}, name);
      if (error) return [link, h('span', {class: 'status status-red'}, 'error'), error.message, '', '', '', '', ''];
      const fv = info.flashvec || {};
      const ix = fv.indexing || {};
      return [
        link,
        statusBadge(info.status),
        h('span', {class: 'num'}, num(info.points_count)),
        progress(ix.indexed_points ?? info.indexed_vectors_count, (ix.indexed_points ?? 0) + (ix.backlog_points ?? 0)),
        num(info.segments_count),
        bytes(fv.memory_bytes),
        bytes(fv.disk_bytes),
        h('span', {}, h('a', {href: `#points/${enc(name)}`}, 'points'), ' · ',
          h('a', {href: `#search/${enc(name)}`}, 'search')),
      ];
    });
    body.replaceChildren(table(
      ['Name', 'Status', 'Points', 'Indexed', 'Segments', 'Memory', 'Disk', ''], rows,
      'No collections yet. Create one with PUT /collections/{name}.', {id: 'collections-table'}));
  };
  await draw();
  ctx.every(3000, draw);
}

async function detail(main, name, ctx) {
  const body = h('div', {});
  main.append(h('h1', {}, h('a', {href: '#collections'}, 'Collections'), ' / ', name), body);
  const draw = async () => {
    let info;
    let shards = null;
    try {
      info = await result('GET', `/collections/${enc(name)}`);
    } catch (e) {
      if (ctx.current()) body.replaceChildren(errorBox(e));
      return;
    }
    try {
      shards = await result('GET', `/collections/${enc(name)}/cluster`);
    } catch (_) { /* older servers: no shard view */ }
    if (ctx.current()) body.replaceChildren(...view(name, info, shards));
  };
  await draw();
  ctx.every(3000, draw);
}

function card(k, v) {
  return h('div', {class: 'card'}, h('div', {class: 'k'}, k), h('div', {class: 'v'}, v));
}

function view(name, info, shards) {
  const fv = info.flashvec || {};
  const ix = fv.indexing || {};
  const opt = fv.optimizer || {};
  const segs = fv.segments || [];
  const out = [
    h('div', {class: 'cards'},
      card('Status', statusBadge(info.status)),
      card('Points', num(info.points_count)),
      card('Indexed vectors', num(info.indexed_vectors_count)),
      card('Segments', num(info.segments_count)),
      card('Memory', bytes(fv.memory_bytes)),
      card('Disk', bytes(fv.disk_bytes))),
    h('div', {class: 'toolbar'},
      h('a', {href: `#points/${enc(name)}`}, 'Browse points'),
      h('a', {href: `#search/${enc(name)}`}, 'Search'),
      h('a', {href: '#metrics'}, 'Metrics')),
    h('h2', {}, 'Indexing'),
    table(['Indexed', 'Backlog', 'Builds running', 'Compactions running', 'Merges planned', 'Deferred builds', 'Last compaction error'],
      [[progress(ix.indexed_points ?? 0, (ix.indexed_points ?? 0) + (ix.backlog_points ?? 0)),
        num(ix.backlog_points), num(ix.builds_running), num(ix.compactions_running),
        num(ix.merges_planned), num(opt.deferred_builds), opt.last_compaction_error || '–']], ''),
    h('h2', {}, 'Segments'),
    table(['Shard', 'Segment', 'State', 'Points', 'Deleted', 'Graph'],
      segs.map((s) => [s.shard, s.id, h('span', {class: 'segment-state'}, s.state), num(s.points), num(s.deleted),
        s.graph_points ? progress(s.graph_points, s.points) : h('span', {class: 'muted', title: 'no graph (yet): searched exactly'}, 'exact scan')]),
      'No segments on this node.', {id: 'segments-table'}),
  ];
  if (shards && (shards.remote_shards || []).length + (shards.local_shards || []).length > 0) {
    out.push(h('h2', {}, 'Shards'), shardTable(shards));
  }
  const schema = Object.entries(info.payload_schema || {});
  out.push(h('h2', {}, 'Payload indexes'),
    table(['Field', 'Type', 'Points'], schema.map(([k, v]) => [k, v.data_type, num(v.points)]),
      'No payload indexes.'));
  out.push(h('h2', {}, 'Configuration'),
    h('pre', {}, JSON.stringify({...info.config, flashvec_index: fv.index, wal_fsync_policy: fv.wal_fsync_policy}, null, 2)));
  return out;
}

/**
 * Local and remote shard replicas of GET /collections/{name}/cluster; `nodes` names the peers
 * (peer id -> node id, from GET /cluster) where known.
 */
export function shardTable(c, nodes = {}) {
  const peer = (id) => (nodes[String(id)] ? `${nodes[String(id)]} (${id})` : String(id));
  const rows = [
    ...(c.local_shards || []).map((s) => [s.shard_id, `${peer(c.peer_id)}, this node`, h('span', {class: 'replica-state'}, s.state), num(s.points_count)]),
    ...(c.remote_shards || []).map((s) => [s.shard_id, peer(s.peer_id), h('span', {class: 'replica-state'}, s.state), '–']),
  ].sort((a, b) => a[0] - b[0] || String(a[1]).localeCompare(String(b[1])));
  return table(['Shard', 'Peer', 'State', 'Points'], rows, 'No shards.');
}
