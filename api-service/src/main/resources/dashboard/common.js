// Pieces the Points and Search views share: the collection picker and the filter field.
import {result, enc} from './api.js';
import {h} from './dom.js';

/** A <select> of the collections, `name` selected; onChange(newName). */
export async function collectionPicker(name, onChange) {
  const names = (await result('GET', '/collections')).collections.map((c) => c.name).sort();
  const sel = h('select', {id: 'collection', onchange: () => onChange(sel.value)},
    names.length ? null : h('option', {value: ''}, '(no collections)'),
    names.map((n) => h('option', {value: n, selected: n === name}, n)));
  return {sel, names};
}

/** Parses a JSON field, naming it in the error; '' is `undefined`. */
export function parseJson(label, text) {
  const t = text.trim();
  if (t === '') return undefined;
  try {
    return JSON.parse(t);
  } catch (e) {
    throw new Error(`${label} is not valid JSON: ${e.message}`);
  }
}

/** The vector names of a collection's config: [''] for one unnamed vector. */
export async function vectorNames(name) {
  const info = await result('GET', `/collections/${enc(name)}`);
  const v = info.config.params.vectors || {};
  return typeof v.size === 'number' ? [''] : Object.keys(v);
}

export const FILTER_HINT = '{"must": [{"key": "city", "match": {"value": "Berlin"}}]}';
