// The dashboard's shell: the hash router (#view/arg), the API key field and the view life cycle.
// A view is render(main, args, ctx), args the decoded path segments after the view's name;
// ctx.every(ms, fn) polls while the view shows.
import {apiKey, setApiKey} from './api.js';
import {errorBox} from './dom.js';
import * as collections from './collections.js';
import * as points from './points.js';
import * as search from './search.js';
import * as metrics from './metrics.js';
import * as cluster from './cluster.js';

const VIEWS = {collections, points, search, metrics, cluster};
const main = document.getElementById('view');
let timers = [];
let generation = 0;

function route() {
  timers.forEach(clearInterval);
  timers = [];
  const gen = ++generation;
  const [name, ...rest] = (location.hash.replace(/^#/, '') || 'collections').split('/');
  const view = VIEWS[name] ? name : 'collections';
  const args = rest.map(decodeURIComponent);
  for (const a of document.querySelectorAll('nav.side a')) {
    a.classList.toggle('active', a.dataset.view === view);
  }
  main.replaceChildren();
  main.dataset.view = view;
  const ctx = {
    every(ms, fn) {
      timers.push(setInterval(() => { if (gen === generation) fn(); }, ms));
    },
    /** True while this view is still the one shown (an answer for a left view is dropped). */
    current: () => gen === generation,
  };
  main.dataset.state = 'loading';
  Promise.resolve(VIEWS[view].render(main, args, ctx))
    .catch((e) => {
      if (ctx.current()) main.append(errorBox(e));
    })
    .finally(() => {
      if (ctx.current()) main.dataset.state = 'ready';
    });
}

const keyInput = document.getElementById('api-key');
keyInput.value = apiKey();
document.getElementById('key-form').addEventListener('submit', (e) => {
  e.preventDefault();
  setApiKey(keyInput.value.trim());
  showServer();
  route();
});

async function showServer() {
  const el = document.getElementById('server');
  try {
    const r = await fetch('/', {headers: apiKey() ? {'api-key': apiKey()} : {}});
    const j = await r.json();
    el.textContent = j.flashvec_version ? `v${j.flashvec_version}` : '';
  } catch (_) {
    el.textContent = '';
  }
}

window.addEventListener('hashchange', route);
showServer();
route();
