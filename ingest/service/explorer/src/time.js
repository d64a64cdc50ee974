// Lineage through time: a time control under the graph (a track from the first change around the focused field
// to now, with the instants the drawn lineage changed at marked on it; GET /api/v1/timeline), the walk around the
// field as of any instant (GET /api/v1/lineage/{direction}?as_of=), and a compare mode that draws the walk as of
// two instants told apart (GET /api/v1/lineage/{direction}/diff): added, removed and changed fields and edges,
// each by colour, line style and a +/−/~ marker, with a legend.
//
// The slider steps from one marked instant to the next (the view is the same between two marks), "now" at its
// right end; an address may name any instant.
//
// The address holds the view: #field=URN&direction=both&depth=2&at=MS (as of an instant) or &from=MS&to=MS
// (compare); a link reproduces it, and each view the control draws is a history entry (the back button walks them).

const DIRECTIONS = ['both', 'upstream', 'downstream'];
const DEFAULT_DEPTH = 2;
const MARKER = { added: '+', removed: '−', changed: '~' };

// green solid and thick (added), red dashed (removed), amber dotted (changed): never the colour alone
const STYLE = [
  { selector: 'node.diff-added', style: { 'border-color': '#2b8a3e', 'border-width': 3, 'background-color': '#ebfbee',
    color: '#2b8a3e', 'border-style': 'solid' } },
  { selector: 'node.diff-removed', style: { 'border-color': '#c92a2a', 'border-width': 2, 'border-style': 'dashed',
    'background-color': '#fff5f5', color: '#c92a2a' } },
  { selector: 'node.diff-changed', style: { 'border-color': '#e67700', 'border-width': 4, 'border-style': 'double',
    'background-color': '#fff9db', color: '#a35200' } },
  { selector: 'edge.diff-added', style: { 'line-color': '#2b8a3e', 'target-arrow-color': '#2b8a3e', width: 3.5,
    'line-style': 'solid', color: '#2b8a3e' } },
  { selector: 'edge.diff-removed', style: { 'line-color': '#c92a2a', 'target-arrow-color': '#c92a2a', width: 2,
    'line-style': 'dashed', 'line-dash-pattern': [8, 5], color: '#c92a2a' } },
  { selector: 'edge.diff-changed', style: { 'line-color': '#e67700', 'target-arrow-color': '#e67700', width: 3,
    'line-style': 'dotted', color: '#a35200' } },
  { selector: '.diff-same', style: { opacity: 0.55 } },
  { selector: 'node[kind="field"][h]', style: { height: 'data(h)', 'text-wrap': 'wrap' } },
];

// hooks: what the time control needs of app.js (cy, state, api, task, addField, addHop, relayout, showField,
// focusField, h, when)
export function timeControl(hooks) {
  const { cy, state, api, task, addField, addHop, relayout, showField, focusField, h, when } = hooks;
  cy.style().fromJson([...cy.style().json(), ...STYLE]).update();

  // the view: the field, which way and how far, and as of when (at: one instant; from/to: compare; none: now)
  const view = { field: null, direction: 'both', depth: DEFAULT_DEPTH, at: null, from: null, to: null };
  let marks = []; // [{at, edgesAdded, ...}] for view.field, direction, depth
  let marksOf = null; // the key of the timeline `marks` answers

  const bar = h('div', { id: 'timebar', 'data-testid': 'timebar', hidden: true });
  const slider = h('input', { type: 'range', id: 'time-slider', 'data-testid': 'time-slider', min: 0, max: 1,
    step: 1, 'aria-label': 'Lineage as of' });
  const track = h('div', { class: 'time-marks', 'data-testid': 'time-marks' });
  const readout = h('span', { class: 'time-readout', 'data-testid': 'time-instant' }, 'now');
  const note = h('span', { class: 'time-note', 'data-testid': 'time-note' });
  const direction = h('select', { 'data-testid': 'time-direction', 'aria-label': 'Direction' },
    DIRECTIONS.map((d) => h('option', { value: d }, d)));
  const depth = h('input', { type: 'number', min: 1, max: 10, value: DEFAULT_DEPTH, 'data-testid': 'time-depth',
    'aria-label': 'Hops', class: 'time-depth' });
  const fromSel = h('select', { 'data-testid': 'compare-from', 'aria-label': 'Compare from' });
  const toSel = h('select', { 'data-testid': 'compare-to', 'aria-label': 'Compare to' });
  const compareBox = h('span', { class: 'compare', hidden: true }, 'from ', fromSel, ' to ', toSel);
  const legend = h('p', { class: 'diff-legend', 'data-testid': 'diff-legend', hidden: true },
    h('span', { class: 'diff added' }, '+ added (solid, thick)'), ' · ',
    h('span', { class: 'diff removed' }, '− removed (dashed)'), ' · ',
    h('span', { class: 'diff changed' }, '~ changed (dotted; what changed in the label)'), ' · ',
    h('span', { class: 'diff same' }, 'faded: unchanged'));
  bar.append(
    h('div', { class: 'time-row' },
      h('button', { type: 'button', 'data-testid': 'time-now', onclick: () => go({ at: null, from: null, to: null }) },
        'Now'),
      h('label', {}, 'as of ', readout), note,
      h('span', { class: 'time-opts' }, direction, ' ', depth, ' hops ',
        h('button', { type: 'button', 'data-testid': 'time-compare', onclick: () => startCompare() }, 'Compare…'),
        compareBox)),
    h('div', { class: 'time-track' }, track, slider));
  bar.append(legend);
  const bars = document.getElementById('graph-bars');
  bars.prepend(bar);
  const graphEl = document.getElementById('graph');
  // the graph starts below the bars, whatever they hold (this control, large lineage's bar)
  new ResizeObserver(() => {
    const top = `${bars.offsetHeight}px`;
    if (graphEl.style.top !== top) {
      graphEl.style.top = top;
      cy.resize();
    }
  }).observe(bars);

  const ms = (v) => (v == null || v === '' ? null : Number.isFinite(Number(v)) ? Number(v) : Date.parse(v));
  const label = (t) => (t == null ? 'now' : when(t));
  const summary = (m) => [m.edgesAdded && `+${m.edgesAdded} edge${m.edgesAdded > 1 ? 's' : ''}`,
    m.edgesRemoved && `−${m.edgesRemoved} edge${m.edgesRemoved > 1 ? 's' : ''}`,
    m.fieldsAdded && `+${m.fieldsAdded} field${m.fieldsAdded > 1 ? 's' : ''}`,
    m.fieldsRemoved && `−${m.fieldsRemoved} field${m.fieldsRemoved > 1 ? 's' : ''}`,
    m.fieldsChanged && `~${m.fieldsChanged} field${m.fieldsChanged > 1 ? 's' : ''}`].filter(Boolean).join(', ');

  function address(v) {
    const p = new URLSearchParams({ field: v.field });
    if (v.at != null || v.from != null || v.direction !== 'both' || v.depth !== DEFAULT_DEPTH) {
      p.set('direction', v.direction);
      p.set('depth', v.depth);
    }
    if (v.at != null) p.set('at', v.at);
    if (v.from != null) p.set('from', v.from);
    if (v.from != null && v.to != null) p.set('to', v.to);
    return `#${p}`;
  }

  // a new view: a history entry, then drawn (the view at now is the explorer's own: the field one hop each way)
  function go(change) {
    if (!view.field) return;
    const next = { ...view, ...change };
    if (address(next) !== location.hash) history.pushState(null, '', address(next));
    task(() => render(next));
  }

  async function render(next) {
    Object.assign(view, next);
    state.asOf = view.at; // what app.js asks as of: a field clicked or expanded in the view
    if (view.at == null && view.from == null) {
      await focusField(view.field);
      return;
    }
    await loadMarks();
    sync();
    if (view.from != null) await drawCompare();
    else await drawAt();
    sync();
  }

  // the timeline of view.field (fetched once per field, direction and depth)
  async function loadMarks() {
    const key = `${view.field}|${view.direction}|${view.depth}`;
    if (marksOf === key) return;
    const res = await api('timeline', { field: view.field, direction: view.direction, depth: view.depth });
    marks = res.instants;
    marksOf = key;
    slider.min = 0;
    slider.max = marks.length; // one step per mark, the last: now
    const THUMB = 16; // px: a range input's thumb travels its width less the thumb's
    track.replaceChildren(...marks.map((m, i) => {
      const f = marks.length ? i / marks.length : 0;
      return h('button', { type: 'button', class: 'time-mark', 'data-testid': 'time-mark',
        style: `left: calc(${f * 100}% + ${(0.5 - f) * THUMB}px)`, dataset: { at: String(m.at), step: String(i) },
        title: `${when(m.at)}: ${summary(m)}`, 'aria-label': `${when(m.at)}: ${summary(m)}`,
        onclick: () => go({ at: m.at, from: null, to: null }) });
    }));
    const options = () => [...marks.map((m) => h('option', { value: m.at, title: summary(m) }, when(m.at))),
      h('option', { value: 'now' }, 'now')];
    fromSel.replaceChildren(...options());
    toSel.replaceChildren(...options());
  }

  // the control shows the view: the slider at its instant, the marks at or before it lit, compare's instants
  function sync() {
    bar.hidden = !view.field;
    direction.value = view.direction;
    depth.value = view.depth;
    const comparing = view.from != null;
    const t = comparing ? view.to : view.at;
    slider.value = t == null ? marks.length : Math.max(0, marks.filter((m) => m.at <= t).length - 1);
    readout.textContent = comparing ? `${label(view.from)} → ${label(view.to)}` : label(view.at);
    for (const el of track.children) {
      const at = Number(el.dataset.at);
      el.classList.toggle('past', t == null || at <= t);
      el.classList.toggle('current', at === view.at || at === view.from || at === view.to);
    }
    compareBox.hidden = !comparing;
    legend.hidden = !comparing;
    if (comparing) {
      fromSel.value = String(view.from);
      toSel.value = marks.some((m) => m.at === view.to) ? String(view.to) : 'now';
    }
  }

  function clearGraph() {
    for (const id of ['export-png', 'export-svg']) document.getElementById(id).disabled = false;
    cy.elements().remove();
    state.pending.clear();
    state.impact = null;
  }

  async function drawAt() {
    const dirs = view.direction === 'both' ? ['upstream', 'downstream'] : [view.direction];
    let info;
    try {
      info = await api('field', { urn: view.field, as_of: view.at });
    } catch (err) { // not in the graph yet then
      clearGraph();
      note.textContent = err.message;
      return;
    }
    const walks = await Promise.all(dirs.map((d) => api(`lineage/${d}`,
      { field: view.field, depth: view.depth, as_of: view.at })));
    clearGraph();
    note.textContent = walks.some((w) => w.partial) ? `partial: ${walks.find((w) => w.partial).reason}` : '';
    state.focus = info.urn;
    cy.batch(() => {
      addField(info).addClass('focus');
      walks.forEach((w, i) => w.hops.forEach((hop) => addHop(hop, dirs[i])));
    });
    await relayout(info.urn);
    showField(info);
  }

  async function drawCompare() {
    const dirs = view.direction === 'both' ? ['upstream', 'downstream'] : [view.direction];
    const diffs = await Promise.all(dirs.map((d) => api(`lineage/${d}/diff`,
      { field: view.field, depth: view.depth, from: view.from, to: view.to ?? Date.now() })));
    clearGraph();
    state.focus = view.field;
    const counts = { added: 0, removed: 0, changed: 0 };
    cy.batch(() => {
      diffs.forEach((diff, i) => {
        for (const f of diff.fields) {
          const then = f.after ?? f.before ?? {};
          const node = addField({ urn: f.urn, dataset: f.dataset, fieldPath: f.fieldPath,
            placeholder: then.placeholder, removed: then.removed });
          if (f.start) node.addClass('focus');
          mark(node, f.change, f.differ, f.before, f.after);
        }
        for (const e of diff.edges) {
          addHop({ from: e.from, urn: e.urn, edge: e.after ?? e.before }, dirs[i]);
          const [up, down] = dirs[i] === 'upstream' ? [e.urn, e.from] : [e.from, e.urn];
          mark(cy.getElementById(`${up}->${down}`), e.change, e.differ, e.before, e.after);
        }
      });
    });
    for (const el of cy.elements('.diff-added, .diff-removed, .diff-changed')) {
      for (const c of Object.keys(counts)) if (el.hasClass(`diff-${c}`)) counts[c] += 1;
    }
    note.textContent = `${counts.added} added, ${counts.removed} removed, ${counts.changed} changed`;
    await relayout(view.field);
  }

  // an element told as added, removed, changed (what changed, before → after) or the same
  function mark(el, change, differ, before, after) {
    if (el.empty() || el.hasClass('diff-marked')) return;
    el.addClass(`diff-marked diff-${change}`);
    el.data('change', change);
    if (change === 'same') return;
    const base = el.data('label') ?? '';
    const lines = change === 'changed'
      ? [...differ].sort((a, b) => rank(a) - rank(b)).slice(0, 2)
        .map((k) => `${k}: ${short(before?.[k])} → ${short(after?.[k])}`) : [];
    el.data('label', [`${MARKER[change]} ${base.split('\n')[0]}`, ...base.split('\n').slice(1), ...lines]
      .filter(Boolean).join('\n'));
    if (el.isNode()) {
      const rows = el.data('label').split('\n');
      el.data('w', Math.max(el.data('w') ?? 70, ...rows.map((l) => l.length * 6.5 + 20)));
      el.data('h', 12 + rows.length * 14);
    }
  }

  // what a changed label names first: what an edge does, then a field's type
  const FIRST = ['transformation', 'kind', 'masking', 'type', 'nativeDataType', 'nullable', 'description'];
  const rank = (k) => (FIRST.includes(k) ? FIRST.indexOf(k) : FIRST.length);

  function short(v) {
    const s = v == null ? '—' : Array.isArray(v) ? v.join(',') : String(v);
    const name = /^[\w.$]+$/.test(s) ? s.split('.').pop() : s;
    return name.length > 24 ? `${name.slice(0, 23)}…` : name;
  }

  function startCompare() {
    const latest = marks.length ? marks[marks.length - 1].at : null;
    const from = view.at ?? (marks.length > 1 ? marks[marks.length - 2].at : latest);
    if (from == null) return;
    go({ at: null, from, to: null }); // from the instant shown (or the change before the last) to now
  }

  // the slider: the readout follows while dragging; letting go draws the view as of that instant (the far right:
  // now)
  const instant = (step) => (step >= marks.length ? null : marks[step].at);
  slider.addEventListener('input', () => { readout.textContent = label(instant(Number(slider.value))); });
  slider.addEventListener('change', () => go({ at: instant(Number(slider.value)), from: null, to: null }));
  direction.addEventListener('change', () => go({ direction: direction.value }));
  depth.addEventListener('change', () => go({ depth: Math.max(1, Math.min(10, Number(depth.value) || 1)) }));
  const compared = () => {
    let from = ms(fromSel.value) ?? marks[0]?.at ?? 0;
    let to = toSel.value === 'now' ? null : ms(toSel.value);
    if (to != null && to < from) [from, to] = [to, from]; // the earlier first
    go({ at: null, from, to });
  };
  fromSel.addEventListener('change', compared);
  toSel.addEventListener('change', compared);

  return {
    // app.js calls it once it drew a field at now: the control shows that field's timeline, the address the field
    focused(urn) {
      const named = new URLSearchParams(location.hash.slice(1)).get('field');
      Object.assign(view, { field: urn, at: null, from: null, to: null });
      state.asOf = null;
      const target = address(view);
      // another field than the address names (picked in the page): a new history entry
      if (location.hash !== target) history[named && named !== urn ? 'pushState' : 'replaceState'](null, '', target);
      bar.hidden = false;
      note.textContent = '';
      return loadMarks().then(sync);
    },
    // the address asks for a view through time (an instant or a comparison): drawn here (true); or the address is
    // back at now after one: the explorer's own view (true); else app.js opens the address (false)
    open(params) {
      const field = params.get('field');
      const next = { field, direction: DIRECTIONS.includes(params.get('direction')) ? params.get('direction') : 'both',
        depth: Number(params.get('depth')) || DEFAULT_DEPTH, at: ms(params.get('at')), from: ms(params.get('from')),
        to: ms(params.get('to')) };
      if (!field) return false;
      if (next.at == null && next.from == null) {
        const wasNow = view.at == null && view.from == null;
        Object.assign(view, { direction: next.direction, depth: next.depth });
        if (wasNow) return false;
        task(() => render(next));
        return true;
      }
      task(() => render(next));
      return true;
    },
    view,
    get marks() { return marks; },
  };
}
