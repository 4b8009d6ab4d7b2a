// Cluster mode: the nodes (peers registered in etcd, their roles and addresses) and, for every
// collection, where its shards' replicas are and their states. Standalone: says so.
import {result, enc} from './api.js';
import {h, table, errorBox} from './dom.js';
import {shardTable} from './collections.js';

export async function render(main, args, ctx) {
  const body = h('div', {});
  main.append(h('h1', {}, 'Cluster'), body);
  const draw = async () => {
    let c;
    try {
      c = await result('GET', '/cluster');
    } catch (e) {
      if (ctx.current()) body.replaceChildren(errorBox(e));
      return;
    }
    if (c.status !== 'enabled') {
      if (ctx.current()) {
        body.replaceChildren(h('p', {class: 'empty', id: 'standalone'},
          'This server runs standalone: there are no other nodes, and every shard of every collection is local. ',
          'Start nodes with flashvec.cluster.etcd-endpoints to form a cluster.'));
      }
      return;
    }
    const names = (await result('GET', '/collections')).collections.map((x) => x.name).sort();
    const shards = await Promise.all(names.map((n) =>
      result('GET', `/collections/${enc(n)}/cluster`).then((s) => [n, s], (e) => [n, e])));
    if (!ctx.current()) return;
    const peers = Object.entries(c.peers || {}).sort((a, b) => String(a[1].node_id).localeCompare(String(b[1].node_id)));
    const nodes = Object.fromEntries(peers.map(([id, p]) => [id, p.node_id]));
    body.replaceChildren(
      h('p', {class: 'muted'}, `Metadata in ${c.metadata_store || 'etcd'}; this node is peer ${c.peer_id}.`),
      h('h2', {}, `Nodes (${peers.length})`),
      table(['Node', 'Peer id', 'Roles', 'Address'],
        peers.map(([id, p]) => [
          h('span', {class: 'node-id'}, p.node_id + (String(id) === String(c.peer_id) ? ' (this node)' : '')),
          id, (p.roles || []).join(', '), p.uri || '–']),
        'No nodes registered.', {id: 'nodes-table'}),
      h('h2', {}, 'Shards and replicas'),
      ...(names.length === 0 ? [h('p', {class: 'empty'}, 'No collections yet.')] : []),
      ...shards.map(([n, s]) => h('div', {class: 'collection-shards'},
        h('h3', {}, h('a', {href: `#collections/${enc(n)}`}, n)),
        s instanceof Error ? errorBox(s) : shardTable(s, nodes))));
  };
  await draw();
  ctx.every(3000, draw);
}
