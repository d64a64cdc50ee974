// The field-level lineage explorer: search a field, draw its upstream (left) and downstream (right) fields one
// hop at a time, grouped by dataset, and inspect, expand, run impact and export. All data comes from fieldgraph
// serve's JSON API (../api/v1/ relative to this page).
import cytoscape from 'cytoscape';
import cytoscapeElk from 'cytoscape-elk';
import { toSvg } from './svg.js';
import { installLarge } from './large.js';
import { timeControl } from './time.js';
import { unusedToggle } from './unused.js';

cytoscape.use(cytoscapeElk);

const API = new URL('../api/v1/', document.baseURI);
const PAGE = 25; // neighbours drawn per expansion; the rest wait behind an "N more…" node
const MIN_READABLE_ZOOM = 0.55;
const MAX_FIT_ZOOM = 1.5;

const $ = (id) => document.getElementById(id);
const body = document.body;
const searchInput = $('search');
const resultsEl = $('results');
const panelEl = $('panel');
const errorEl = $('error');
const statusEl = $('status');

// ---- the JSON API ----

// A service started with --protect-reads answers 401 without its token: the page asks for it once and keeps it
// for the browser tab (sessionStorage), sending it as a bearer token.
const TOKEN_KEY = 'fieldgraph-token';

async function api(path, params = {}) {
  const url = new URL(path, API);
  for (const [k, v] of Object.entries(params)) if (v != null) url.searchParams.set(k, v);
  const headers = { Accept: 'application/json' };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = `Bearer ${token}`;
  let res;
  try {
    res = await fetch(url, { headers });
  } catch (err) {
    throw new Error(`cannot reach fieldgraph serve (${url.pathname}): ${err.message}`);
  }
  if (res.status === 401) {
    const given = window.prompt('This fieldgraph serve needs its token to answer (--protect-reads):');
    if (given) {
      sessionStorage.setItem(TOKEN_KEY, given.trim());
      return api(path, params);
    }
  }
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new Error(data?.error ?? `${url.pathname}: HTTP ${res.status} ${res.statusText}`);
  return data;
}

// ---- busy state, errors, serialised graph changes ----

let busy = 0;
let queue = Promise.resolve();

// Runs fn (one at a time, in order): shows its error in the page; body[data-busy] tells tests when all is done.
function task(fn) {
  busy += 1;
  body.dataset.busy = 'true';
  const run = queue.then(async () => {
    try {
      await fn();
    } catch (err) {
      showError(err.message);
      console.error(err);
    }
  });
  queue = run.finally(() => {
    busy -= 1;
    if (busy === 0) body.dataset.busy = 'false';
  });
  return queue;
}

function showError(message) {
  errorEl.textContent = message;
  errorEl.hidden = false;
}

function clearError() {
  errorEl.hidden = true;
  errorEl.textContent = '';
}

// ---- names ----

const DATASET_URN = /^urn:li:dataset:\(urn:li:dataPlatform:([^,]+),(.*),([^,)]+)\)$/;
const FIELD_URN = /^urn:li:(?:datasetField|schemaField):\((urn:li:dataset:\(.*?\)),(.*)\)$/;

function datasetParts(urn) {
  const m = DATASET_URN.exec(urn ?? '');
  return m ? { platform: m[1], name: m[2], env: m[3] } : { platform: '', name: urn ?? '?', env: '' };
}

function fieldParts(urn) {
  const m = FIELD_URN.exec(urn);
  return m ? { dataset: m[1], fieldPath: m[2] } : { dataset: null, fieldPath: urn };
}

// v2 field paths carry [version=..], [type=..] segments: the simple path leaves them out
const simplePath = (path) => path.replace(/\[[^\]]*\]\.?/g, '').replace(/\.$/, '') || path;

const shortName = (urn) => {
  const { dataset, fieldPath } = fieldParts(urn);
  return `${datasetParts(dataset).name}.${simplePath(fieldPath)}`;
};

const when = (ms) => (ms == null ? '' : new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z'));

// a DOM element: h('li', {class: 'x', dataset: {urn}}, child, 'text', ...)
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null || v === false) continue;
    if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'onclick') el.addEventListener('click', v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  el.append(...children.flat().filter((c) => c != null && c !== false));
  return el;
}

// ---- the graph ----

const STYLE = [
  { selector: 'node[kind="dataset"]', style: {
    shape: 'round-rectangle', 'background-color': '#f0f4f8', 'border-color': '#9fb3c8', 'border-width': 1,
    label: 'data(label)', 'text-valign': 'top', 'text-halign': 'center', 'text-wrap': 'wrap', 'text-margin-y': -4,
    'font-size': 12, 'font-weight': 'bold', color: '#243b53', padding: 10 } },
  { selector: 'node[kind="field"]', style: {
    shape: 'round-rectangle', width: 'data(w)', height: 26, 'background-color': '#fff',
    'border-color': '#627d98', 'border-width': 1, label: 'data(label)', 'text-valign': 'center',
    'font-size': 11, color: '#102a43' } },
  { selector: 'node.placeholder', style: { 'border-style': 'dashed', color: '#829ab1' } },
  { selector: 'node.removed', style: { 'background-color': '#eceff1', color: '#829ab1', 'border-style': 'dotted' } },
  { selector: 'node.focus', style: { 'border-color': '#2f6fde', 'border-width': 3 } },
  { selector: 'node.impact', style: { 'background-color': '#ffe8cc', 'border-color': '#e8590c', 'border-width': 2 } },
  { selector: 'node.selected', style: { 'background-color': '#fff3bf', 'border-color': '#f08c00', 'border-width': 3 } },
  { selector: 'node[kind="more"]', style: {
    shape: 'round-rectangle', width: 'data(w)', height: 26, 'background-color': '#e7f5ff', 'border-color': '#2f6fde',
    'border-style': 'dashed', 'border-width': 1, label: 'data(label)', 'text-valign': 'center', 'font-size': 11,
    color: '#1c5fc7' } },
  { selector: 'edge', style: {
    width: 1.5, 'curve-style': 'bezier', 'line-color': '#829ab1', 'target-arrow-color': '#829ab1',
    'target-arrow-shape': 'triangle', 'arrow-scale': 0.8, label: 'data(label)', 'font-size': 9, color: '#486581',
    'text-wrap': 'wrap', 'text-background-color': '#f5f7fa', 'text-background-opacity': 0.9,
    'text-background-padding': 2, 'min-zoomed-font-size': 7 } }, // zoomed far out, edge labels make way
  { selector: 'edge.indirect', style: { 'line-style': 'dashed' } },
  { selector: 'edge.masked', style: {
    'line-color': '#9c36b5', 'target-arrow-color': '#9c36b5', 'line-style': 'dashed', 'line-dash-pattern': [2, 3],
    color: '#9c36b5' } },
  // a hop across a rename: dotted, an open arrowhead, "renamed"; an edge drawn by hand: thick, "manual: <by>"
  { selector: 'edge.renamed', style: {
    'line-style': 'dotted', 'line-color': '#1c7ed6', 'target-arrow-color': '#1c7ed6', 'target-arrow-fill': 'hollow',
    width: 2, color: '#1864ab' } },
  { selector: 'edge.manual', style: {
    width: 3.5, 'line-color': '#2b8a3e', 'target-arrow-color': '#2b8a3e', color: '#2b8a3e', 'font-weight': 'bold' } },
  { selector: 'edge.impact', style: { 'line-color': '#e8590c', 'target-arrow-color': '#e8590c', width: 2.5 } },
  { selector: 'edge[kind="more"]', style: { 'line-style': 'dotted', label: '' } },
];

const cy = cytoscape({
  container: $('graph'), style: STYLE, minZoom: 0.05, maxZoom: 2.5, autounselectify: true, boxSelectionEnabled: false,
});

const state = {
  focus: null,        // the field the graph is centred on
  selected: null,     // the field shown in the side panel
  impact: null,       // {rows, set, datasets, partial, reason} for the selected field
  pending: new Map(), // `${urn}|${direction}` -> neighbours ([{urn, hops}]) not drawn yet
};

// large lineage (large.js): dataset groups, search in the graph, paging by hop
const large = installLarge({ cytoscape, cy, api, task, state, addField, addHop, relayout, h, datasetParts,
  fieldParts, simplePath });

function addDataset(urn) {
  if (cy.getElementById(urn).nonempty()) return;
  const { platform, name, env } = datasetParts(urn);
  cy.add({ group: 'nodes', data: { id: urn, kind: 'dataset', name, platform,
    label: `${name}\n${[platform, env].filter(Boolean).join(' · ')}` } });
}

function addField({ urn, dataset, fieldPath, placeholder, removed }) {
  const existing = cy.getElementById(urn);
  if (existing.nonempty()) return existing;
  const parts = fieldParts(urn);
  dataset ??= parts.dataset;
  fieldPath ??= parts.fieldPath;
  addDataset(dataset);
  const label = simplePath(fieldPath) + (removed ? ' (removed)' : '');
  return cy.add({ group: 'nodes', classes: [placeholder && 'placeholder', removed && 'removed'].filter(Boolean),
    data: { id: urn, kind: 'field', parent: dataset, dataset, fieldPath, label, w: Math.max(70, label.length * 7 + 20) } });
}

// what an edge is (as the exports' relation column says): a hop across a rename, one drawn by hand, or derived
const isRename = (e) => e.relation === 'RenamedFrom';
const isManual = (e) => e.sourceFormat === 'manual';
const relationOf = (e) => (isRename(e) ? 'renamed' : isManual(e) ? 'manual' : 'derived');

function edgeLabel(e) {
  if (isRename(e)) return ['renamed', e.validFrom != null && `since ${when(e.validFrom)}`].filter(Boolean).join('\n');
  if (isManual(e)) {
    const name = /^[\w.$]+$/.test(e.transformation ?? '') ? e.transformation.split('.').pop() : e.transformation;
    return [e.by ? `manual: ${e.by}` : 'manual', name].filter(Boolean).join('\n');
  }
  const lines = [[e.kind, e.subtype].filter(Boolean).join(' ')];
  // the transformation's text (OpenLineage's description: sha2(email, 256)), else its name, a class name
  // (com.linkedin...transformation.Identity) by its last part; the side panel has both whole
  const name = /^[\w.$]+$/.test(e.transformation ?? '') ? e.transformation.split('.').pop() : e.transformation;
  const t = e.description || name;
  if (t && t.toUpperCase() !== e.subtype) lines.push(t.length > 40 ? `${t.slice(0, 39)}…` : t);
  if (e.masking) lines.push('masked');
  return lines.filter(Boolean).join('\n');
}

// A drawn edge's label, from every edge between its two fields (several jobs may write one pair; one drawn by
// hand comes first): each edge's words once, and how many sources stated them when several did
function pairLabel(edges) {
  const words = [...new Set(edges.map(edgeLabel).filter(Boolean))];
  const sources = new Set(edges.filter((e) => !isRename(e) && !isManual(e) && e.source).map((e) => e.source));
  return [...words, sources.size > 1 && `${sources.size} sources`].filter(Boolean).join('\n');
}

// One lineage edge from a hop (a pair of fields, with every edge between them: `edges`): drawn upstream ->
// downstream (left to right), whatever the walk's direction; a rename old -> new, whichever way the walk crossed
// it (its edge names both: a new name's readers of the old one). One drawn edge per pair, listing them all.
function addHop(hop, direction) {
  addField(hop);
  const edge = hop.edge ?? {};
  const renamed = isRename(edge) && edge.old && edge.new;
  const [up, down] = renamed ? [edge.old, edge.new]
    : direction === 'upstream' ? [hop.urn, hop.from] : [hop.from, hop.urn];
  const id = `${up}->${down}`;
  const edges = hop.edges?.length ? hop.edges : [edge];
  const drawn = cy.getElementById(id);
  if (drawn.nonempty()) {
    const known = new Set(drawn.data('edges').map((e) => JSON.stringify(e)));
    const more = edges.filter((e) => !known.has(JSON.stringify(e)));
    if (!more.length) return;
    const all = [...drawn.data('edges'), ...more];
    drawn.data('edges', all);
    if (!drawn.hasClass('diff-marked')) drawn.data('label', pairLabel(all));
    return;
  }
  const relation = relationOf(edge);
  const classes = [edges.every((e) => e.kind === 'INDIRECT') && 'indirect', edges.some((e) => e.masking) && 'masked',
    relation !== 'derived' && relation].filter(Boolean);
  cy.add({ group: 'edges', classes, data: { id, source: up, target: down, kind: 'lineage', relation, edges,
    label: pairLabel(edges) } });
}

// A walk's one-hop neighbours, grouped by field (one field may be reached over several edges), in name order.
function neighbours(hops) {
  const byUrn = new Map();
  for (const hop of hops) {
    if (!byUrn.has(hop.urn)) byUrn.set(hop.urn, []);
    byUrn.get(hop.urn).push(hop);
  }
  const key = (n) => `${n.hops[0].dataset ?? ''}\u0000${n.hops[0].fieldPath ?? n.urn}`;
  return [...byUrn].map(([urn, hs]) => ({ urn, hops: hs })).sort((a, b) => key(a).localeCompare(key(b)));
}

async function fetchNeighbours(urn, direction) {
  const res = await api(`lineage/${direction}`, { field: urn, depth: 1, as_of: state.asOf }); // time.js: the instant
  return neighbours(res.hops);
}

// Draws the next page of urn's waiting neighbours in `direction`, and the "N more…" node for the rest.
function drawPage(urn, direction) {
  const key = `${urn}|${direction}`;
  const waiting = state.pending.get(key) ?? [];
  large.group(urn, direction, waiting); // large lineage: past GROUP_AT neighbours from 2+ datasets, collapsed groups
  const page = waiting.splice(0, PAGE);
  cy.batch(() => {
    for (const n of page) for (const hop of n.hops) addHop(hop, direction);
    const moreId = `more|${key}`;
    cy.getElementById(moreId).remove();
    if (waiting.length) {
      const label = `${waiting.length} more…`;
      cy.add({ group: 'nodes', data: { id: moreId, kind: 'more', owner: urn, direction, label,
        w: label.length * 7 + 24 } });
      const [source, target] = direction === 'upstream' ? [moreId, urn] : [urn, moreId];
      cy.add({ group: 'edges', data: { id: `${moreId}|edge`, source, target, kind: 'more' } });
    }
  });
  markImpact();
}

function runLayout() {
  if (cy.nodes().empty()) return Promise.resolve();
  const layout = large.laidOut().layout({ // large lineage: collapsed groups are placed after, not by ELK
    name: 'elk',
    fit: false,
    nodeDimensionsIncludeLabels: false,
    elk: {
      algorithm: 'layered',
      'elk.direction': 'RIGHT',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.layered.spacing.nodeNodeBetweenLayers': 150,
      'elk.spacing.nodeNode': 14,
      'elk.spacing.componentComponent': 40,
      'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
    },
    // room above each dataset box for its two-line label; an edge inside one (a rename) gets room for its label
    nodeLayoutOptions: (n) => (n.isParent() ? { 'elk.padding': '[top=50,left=14,bottom=14,right=14]',
      'elk.layered.spacing.nodeNodeBetweenLayers': 150 } : {}),
  });
  const done = layout.promiseOn('layoutstop');
  const stuck = new Promise((_, reject) => {
    setTimeout(() => reject(new Error('the layout did not finish within 20 s')), 20_000);
  });
  layout.run();
  return Promise.race([done, stuck]);
}

// Fits the drawing (a small one no larger than life-size and a half); when fitting would make it unreadable,
// zooms to a readable scale around `around` instead.
function frame(around) {
  cy.resize(); // the container may have changed size since cytoscape measured it
  cy.fit(undefined, 30);
  const node = around && cy.getElementById(around);
  if (cy.zoom() > MAX_FIT_ZOOM) {
    cy.zoom(MAX_FIT_ZOOM);
    cy.center();
  } else if (cy.zoom() < MIN_READABLE_ZOOM && node?.nonempty()) {
    cy.zoom(MIN_READABLE_ZOOM);
    cy.center(node);
  }
}

async function relayout(around) {
  large.refresh(); // large lineage: the groups' nodes and edges, the counts of what is not drawn
  await runLayout();
  large.arrange(); // large lineage: a long column of nodes as a grid
  updateStatus();
  frame(around);
  if (state.selected) renderEdges();
}

// ---- actions ----

async function focusField(urn) {
  const [info, up, down] = await Promise.all([api('field', { urn }), fetchNeighbours(urn, 'upstream'),
    fetchNeighbours(urn, 'downstream')]);
  cy.elements().remove();
  state.pending.clear();
  state.focus = info.urn;
  state.impact = null;
  large.reset(info.urn, up, down);
  addField(info).addClass('focus');
  state.pending.set(`${info.urn}|upstream`, up);
  state.pending.set(`${info.urn}|downstream`, down);
  drawPage(info.urn, 'upstream');
  drawPage(info.urn, 'downstream');
  await time.focused(info.urn); // the time control: this field's timeline; the address: this field
  $('export-png').disabled = $('export-svg').disabled = false;
  await relayout(info.urn);
  showField(info);
}

async function expand(urn, direction) {
  const key = `${urn}|${direction}`;
  if (!state.pending.has(key)) {
    const drawnEdges = new Set(cy.edges('[kind="lineage"]').map((e) => e.id()));
    const edgeId = (n) => (direction === 'upstream' ? `${n.urn}->${urn}` : `${urn}->${n.urn}`);
    state.pending.set(key, (await fetchNeighbours(urn, direction)).filter((n) => !drawnEdges.has(edgeId(n))));
  }
  drawPage(urn, direction);
  await relayout(urn);
}

async function select(urn) {
  if (cy.getElementById(urn).empty()) return;
  const info = await api('field', { urn, as_of: state.asOf });
  showField(info);
}

async function runImpact() {
  const urn = state.selected;
  const res = await api('impact', { name: urn });
  const rows = [];
  const seen = new Set();
  for (const hop of res.hops) { // a walk lists a field once per way in: keep the first (shallowest)
    if (seen.has(hop.urn)) continue;
    seen.add(hop.urn);
    rows.push({ dataset: hop.dataset ?? fieldParts(hop.urn).dataset, fieldPath: hop.fieldPath, urn: hop.urn,
      depth: hop.depth });
  }
  if (state.selected !== urn) return;
  state.impact = { start: urn, rows, set: seen, datasets: Object.keys(res.datasets ?? {}).length,
    partial: res.partial, reason: res.reason };
  markImpact();
  renderImpact();
}

function markImpact() {
  cy.elements('.impact').removeClass('impact');
  const impact = state.impact;
  if (!impact) return;
  const fields = cy.nodes('[kind="field"]').filter((n) => impact.set.has(n.id()));
  fields.addClass('impact');
  const ends = new Set([impact.start, ...impact.set]);
  cy.edges('[kind="lineage"]').filter((e) => ends.has(e.source().id()) && impact.set.has(e.target().id()))
    .addClass('impact');
}

// ---- exports ----

function download(blob, name) {
  const a = h('a', { href: URL.createObjectURL(blob), download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 30_000);
}

const fileStem = () => `lineage-${state.focus ? simplePath(fieldParts(state.focus).fieldPath) : 'view'}`
  .replace(/[^A-Za-z0-9._-]+/g, '_');

function exportPng() {
  download(cy.png({ output: 'blob', full: true, scale: 2, bg: '#ffffff' }), `${fileStem()}.png`);
}

function exportSvg() {
  download(new Blob([toSvg(cy)], { type: 'image/svg+xml' }), `${fileStem()}.svg`);
}

const csvCell = (v) => {
  const s = String(v ?? '');
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
};

function exportImpactCsv() {
  const { rows, start } = state.impact;
  const lines = ['dataset,fieldPath,urn,depth',
    ...rows.map((r) => [r.dataset, r.fieldPath, r.urn, r.depth].map(csvCell).join(','))];
  const name = `impact-${simplePath(fieldParts(start).fieldPath)}.csv`.replace(/[^A-Za-z0-9._-]+/g, '_');
  download(new Blob([`${lines.join('\n')}\n`], { type: 'text/csv' }), name);
}

// ---- search ----

let searchTimer;
let searchSeq = 0;

async function search(text) {
  const seq = ++searchSeq;
  if (!text) {
    resultsEl.replaceChildren();
    return;
  }
  const res = await api('search', { q: text, limit: 20 });
  if (seq !== searchSeq) return; // a newer search answered or will
  const fields = res.fields.map((f) => h('li', {}, h('button', {
    type: 'button', 'data-testid': 'result-field', dataset: { urn: f.urn }, title: f.urn,
    onclick: () => task(() => focusField(f.urn)),
  }, f.simplePath ?? simplePath(f.fieldPath), h('span', { class: 'sub' }, datasetParts(f.dataset).name))));
  const datasets = res.datasets.map((d) => {
    const li = h('li', {});
    li.append(h('button', {
      type: 'button', 'data-testid': 'result-dataset', dataset: { urn: d.urn }, title: d.urn,
      onclick: () => task(() => listFields(d.urn, li)),
    }, d.name, h('span', { class: 'sub' }, `${d.platform} · ${d.fields} fields`)));
    return li;
  });
  resultsEl.replaceChildren(
    h('h3', {}, `Fields (${fields.length})`), h('ul', { class: 'results-list' }, fields),
    h('h3', {}, `Datasets (${datasets.length})`), h('ul', { class: 'results-list' }, datasets));
  if (!fields.length && !datasets.length) resultsEl.append(h('p', { class: 'hint' }, `Nothing matches “${text}”.`));
}

// A dataset's fields under its search result (or alone in the results when no result shows it), to pick one.
async function listFields(datasetUrn, under) {
  const fields = await api('fields', { dataset: datasetUrn });
  const list = h('ul', { class: 'results-list fields', 'data-testid': 'dataset-fields' }, fields.map((f) =>
    h('li', {}, h('button', {
      type: 'button', 'data-testid': 'dataset-field', dataset: { urn: f.urn }, title: f.urn,
      onclick: () => task(() => focusField(f.urn)),
    }, simplePath(f.fieldPath) + (f.removed ? ' (removed)' : ''),
    h('span', { class: 'sub' }, [f.type, f.nativeDataType].filter(Boolean).join(' · '))))));
  if (under) {
    under.querySelector('[data-testid="dataset-fields"]')?.remove();
    under.append(list);
  } else {
    resultsEl.replaceChildren(h('h3', {}, datasetParts(datasetUrn).name), list);
  }
  list.before(large.datasetAction(datasetUrn)); // large lineage: draw it grouped, collapse/expand it
  list.before(unusedToggle({ api, task, h, when }, datasetUrn, list)); // mark (or show only) the unused
}

// ---- the side panel ----

function showField(info) {
  state.selected = info.urn;
  if (state.impact?.start !== info.urn) state.impact = null;
  cy.nodes('.selected').removeClass('selected');
  cy.getElementById(info.urn).addClass('selected');
  markImpact();
  const { name, platform } = datasetParts(info.dataset);
  const props = [['dataset', info.dataset], ['path', info.fieldPath], ['type', info.type],
    ['native type', info.nativeDataType], ['nullable', info.nullable], ['key', info.isPartOfKey],
    ['description', info.description], ['placeholder', info.placeholder], ['removed', info.removed]];
  const tags = info.tags ?? { own: [], inherited: [] };
  const button = (testid, label, action, extra = {}) =>
    h('button', { type: 'button', id: testid, 'data-testid': testid, onclick: () => task(action), ...extra }, label);
  panelEl.replaceChildren(
    h('h2', { 'data-testid': 'field-name', title: info.urn }, simplePath(info.fieldPath)),
    h('p', { class: 'subtitle' }, `${name} · ${platform}`),
    h('div', { class: 'actions' },
      button('expand-upstream', '◀ Expand upstream', () => expand(info.urn, 'upstream')),
      button('expand-downstream', 'Expand downstream ▶', () => expand(info.urn, 'downstream')),
      button('focus-field', 'Centre on this field', () => focusField(info.urn),
        { disabled: info.urn === state.focus }),
      button('impact', 'Impact', runImpact),
      button('export-impact-csv', 'Export impact CSV', exportImpactCsv, { disabled: true })),
    h('p', { id: 'impact-summary', 'data-testid': 'impact-count', hidden: true }),
    h('dl', { class: 'props', 'data-testid': 'field-props' }, props.flatMap(([k, v]) =>
      [h('dt', {}, k), h('dd', { dataset: { prop: k } }, v == null || v === '' ? '—' : String(v))])),
    h('h3', {}, 'Tags'),
    h('div', { 'data-testid': 'field-tags' },
      tags.own.map((t) => h('span', { class: 'tag', title: 'on this field' }, t)),
      tags.inherited.map((t) => h('span', { class: 'tag inherited', title: (t.path ?? []).join('\n→ ') },
        `${t.label} ← ${shortName(t.from)} (${t.distance} hop${t.distance === 1 ? '' : 's'})`)),
      !tags.own.length && !tags.inherited.length && h('span', { class: 'hint' }, 'none')),
    h('h3', {}, 'Edges drawn (provenance)'),
    h('div', { id: 'field-edges', 'data-testid': 'field-edges' }));
  renderEdges();
  renderImpact();
}

function renderEdges() {
  const list = $('field-edges');
  const node = cy.getElementById(state.selected);
  if (!list || node.empty()) return;
  const cards = node.connectedEdges('[kind="lineage"]').flatMap((edge) => edge.data('edges').map((e) => {
    const upstream = edge.target().id() === state.selected;
    const other = upstream ? edge.source().id() : edge.target().id();
    const relation = relationOf(e);
    const facts = [['source', e.source], ['format', e.sourceFormat], ['kind', e.kind], ['subtype', e.subtype],
      ['transformation', e.transformation], ['description', e.description], ['masking', e.masking && 'masked'],
      ['confidence', e.confidenceScore], ['job', e.job],
      ['program', e.program], ['run', e.run], ['first seen', when(e.firstSeen)], ['last seen', when(e.lastSeen)],
      ...(relation === 'derived' ? [] : [['by', e.by], ['note', e.note], ['since', when(e.validFrom)]])]
      .filter(([, v]) => v != null && v !== '' && v !== false);
    // a rename is drawn old -> new: "renamed from <old> at <time>"; a manual edge: "drawn by hand by <who>: <note>"
    const says = relation === 'renamed'
      ? `renamed from ${shortName(edge.source().id())}${e.validFrom != null ? ` at ${when(e.validFrom)}` : ''}` +
        `${e.by ? ` by ${e.by}` : ''}${e.note ? `: ${e.note}` : ''}`
      : relation === 'manual' ? `drawn by hand${e.by ? ` by ${e.by}` : ''}${e.note ? `: ${e.note}` : ''}` : null;
    return h('div', { class: `edge-card${e.masking ? ' masked' : ''}${says ? ` ${relation}` : ''}`,
      'data-testid': 'edge-card', dataset: { relation } },
      h('div', { class: 'title' }, `${upstream ? 'from' : 'to'} ${shortName(other)}${e.masking ? ' · masked' : ''}`),
      says && h('p', { class: 'relation', 'data-testid': 'edge-relation' }, says),
      h('dl', { class: 'props' }, facts.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, String(v))])),
      e.query && h('pre', { title: 'query' }, e.query));
  }));
  list.replaceChildren(...(cards.length ? cards : [h('span', { class: 'hint' }, 'none drawn yet: expand it')]));
}

function renderImpact() {
  const summary = $('impact-summary');
  const csv = $('export-impact-csv');
  if (!summary) return;
  const impact = state.impact?.start === state.selected ? state.impact : null;
  csv.disabled = !impact;
  summary.hidden = !impact;
  if (!impact) return;
  const drawn = cy.nodes('.impact').length;
  summary.textContent = `${impact.rows.length} downstream field${impact.rows.length === 1 ? '' : 's'} in ` +
    `${impact.datasets} dataset${impact.datasets === 1 ? '' : 's'}; ${drawn} drawn, highlighted` +
    (impact.partial && impact.reason ? ` (partial: ${impact.reason})` : '');
}

function updateStatus() {
  const fields = cy.nodes('[kind="field"]').length;
  const datasets = cy.nodes('[kind="dataset"]').length;
  const edges = cy.edges('[kind="lineage"]').length;
  statusEl.textContent = state.focus
    ? `${shortName(state.focus)} · ${fields} fields in ${datasets} datasets, ${edges} edges drawn`
    : '';
}

// ---- events ----

searchInput.addEventListener('input', () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => task(() => search(searchInput.value.trim())), 250);
});
$('search-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  clearTimeout(searchTimer);
  task(() => search(searchInput.value.trim()));
});
$('fit').addEventListener('click', () => cy.fit(undefined, 30));
$('export-png').addEventListener('click', () => task(exportPng));
$('export-svg').addEventListener('click', () => task(exportSvg));

cy.on('tap', 'node[kind="field"]', (ev) => {
  if (ev.target.id() !== state.selected) task(() => select(ev.target.id()));
});
cy.on('dbltap', 'node[kind="field"]', (ev) => {
  const urn = ev.target.id();
  task(() => expand(urn, 'upstream'));
  task(() => expand(urn, 'downstream'));
});
cy.on('tap', 'node[kind="more"]', (ev) => {
  const { owner, direction } = ev.target.data();
  task(async () => {
    drawPage(owner, direction);
    await relayout(owner);
  });
});
cy.on('tap', 'node[kind="dataset"]', (ev) => task(() => listFields(ev.target.id())));

// any action clears the last error first
for (const type of ['click', 'submit']) document.addEventListener(type, clearError, true);
cy.on('tap', clearError);

// the time control under the graph (time.js): the lineage as of an instant, and two instants compared
const time = timeControl({ cy, state, api, task, addField, addHop, relayout, showField, focusField, h, when });

// #field=URN opens that field (on load, and when the address changes to another); with an instant or two
// (&at=, &from=&to=), the time control draws it
function openFromAddress() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (time.open(params)) return;
  const urn = params.get('field');
  if (urn && urn !== state.focus) task(() => focusField(urn));
}
window.addEventListener('hashchange', openFromAddress);
openFromAddress();

window.fieldgraphExplorer = { cy, state, focus: focusField, expand, select, PAGE, large };
