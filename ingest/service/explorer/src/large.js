// Large lineage: dataset groups drawn collapsed (a count of fields and of edges in and out) that expand a page
// at a time and collapse again, a search within what the graph holds (drawn or not), paging by hop (hops 1..k, then
// the next ones) and a dataset's own grouped view. Whatever the focus's answers hold and the graph does not draw is
// counted in the bar above the graph (data-testid="not-drawn") and reachable: expand a group, a "more" node, the
// next hops, or search it. ELK lays out only what is drawn, so the count of drawn nodes stays small.

export const GROUP_AT = 25;     // a direction's neighbours past this, from 2+ datasets, are drawn as collapsed groups
export const NEW_FIELDS_AT = 60; // next hops adding more fields than this put them in collapsed groups
export const GROUP_PAGE = 50;   // fields an expand draws out of a group
export const HOP_STEP = 5;      // hops the "next hops" control adds
export const GRID_AT = 12;      // a column of more nodes than this is drawn as a grid

const groupId = (dataset) => `group|${dataset}`;

export function installLarge(x) {
  const { cy, api, task, state, addField, addHop, relayout, h, datasetParts, fieldParts, simplePath } = x;

  cy.style()
    .selector('node[kind="group"]').style({
      shape: 'round-rectangle', width: 'data(w)', height: 'data(h)', 'background-color': '#e6fcf5',
      'border-color': '#0ca678', 'border-width': 2, 'border-style': 'double', label: 'data(label)',
      'text-valign': 'center', 'text-wrap': 'wrap', 'font-size': 11, color: '#087f5b' })
    .selector('edge[kind="aggregate"]').style({
      width: 'mapData(count, 1, 500, 2, 8)', 'curve-style': 'bezier', 'line-color': '#63e6be',
      'target-arrow-color': '#0ca678', 'target-arrow-shape': 'triangle', label: 'data(label)', 'font-size': 9,
      color: '#087f5b', 'text-background-color': '#f5f7fa', 'text-background-opacity': 0.9 })
    .selector('node.found').style({ 'border-color': '#d6336c', 'border-width': 4, 'background-color': '#fff0f6' })
    .update();

  const view = {
    mode: 'field',        // 'field': the focus's walks; 'dataset': one dataset's grouped view
    hops: 1,              // hops drawn (paging by hop)
    answer: new Map(),    // urn -> {depth, dataset, fieldPath, hops: [{hop, direction}]}: the focus's answers
    frontier: 0,          // fields of the answer one hop past `hops` (fetched with the walk, not drawn)
    groups: new Map(),    // dataset -> Set of member field URNs (drawn or not)
    fields: new Map(),    // dataset view: dataset -> [{urn, fieldPath}] (its fields) or null (not fetched)
    dsEdges: [],          // dataset view: [{upstream, downstream, fieldEdges}]
    found: [], foundAt: -1, lastSearch: '',
  };

  const drawn = (urn) => cy.getElementById(urn).nonempty();
  const datasetOf = (urn) => view.answer.get(urn)?.dataset ?? fieldParts(urn).dataset;

  // ---- the bar above the graph ----
  const count = h('span', { 'data-testid': 'not-drawn', class: 'not-drawn' });
  const hopsLabel = h('span', { 'data-testid': 'hops', class: 'hops' });
  const nextHops = h('button', { type: 'button', 'data-testid': 'next-hops', disabled: true,
    onclick: () => task(() => more()) }, `Next ${HOP_STEP} hops ▶`);
  const collapseAll = h('button', { type: 'button', 'data-testid': 'collapse-all', disabled: true,
    onclick: () => task(async () => { for (const d of [...view.groups.keys()]) collapse(d, false); await relayout(); }) },
  'Collapse groups');
  const input = h('input', { type: 'search', 'data-testid': 'graph-search', placeholder: 'Find in the graph…',
    'aria-label': 'Find a field or dataset in the graph, drawn or not' });
  const hits = h('span', { 'data-testid': 'graph-search-count', class: 'hits' });
  const form = h('form', { class: 'find' }, input, hits);
  form.addEventListener('submit', (ev) => { ev.preventDefault(); task(() => find(input.value.trim())); });
  const bar = h('div', { id: 'large-bar', 'data-testid': 'large-bar' }, form, hopsLabel, nextHops, collapseAll, count);
  document.getElementById('graph-bars').append(bar);

  // ---- the answers ----

  function remember(hop, direction) {
    if (hop.urn === state.focus) return;
    let a = view.answer.get(hop.urn);
    if (!a) {
      a = { depth: hop.depth ?? 1, dataset: hop.dataset ?? fieldParts(hop.urn).dataset, fieldPath: hop.fieldPath,
        hops: [] };
      view.answer.set(hop.urn, a);
    }
    a.depth = Math.min(a.depth, hop.depth ?? 1);
    a.hops.push({ hop, direction });
  }

  // a new focus: its depth-1 answers (neighbours, as app.js fetched them)
  function reset(focus, up, down) {
    Object.assign(view, { mode: 'field', hops: 1, frontier: 0, found: [], foundAt: -1, lastSearch: '', dsEdges: [] });
    view.answer.clear();
    view.groups.clear();
    view.fields.clear();
    for (const [list, direction] of [[up, 'upstream'], [down, 'downstream']]) {
      for (const n of list) for (const hop of n.hops) remember({ ...hop, depth: 1 }, direction);
    }
    nextHops.disabled = false;
  }

  function join(dataset, urn) {
    if (!view.groups.has(dataset)) view.groups.set(dataset, new Set());
    view.groups.get(dataset).add(urn);
  }

  // drawPage's hook: a long list of neighbours from 2+ datasets goes into collapsed groups (one per dataset)
  function group(owner, direction, waiting) {
    if (waiting.length <= GROUP_AT) return false;
    const datasets = new Set(waiting.map((n) => n.hops[0].dataset ?? fieldParts(n.urn).dataset));
    if (datasets.size < 2) return false;
    for (const n of waiting.splice(0)) {
      if (!view.answer.has(n.urn)) for (const hop of n.hops) remember({ ...hop, depth: 1 }, direction);
      if (!drawn(n.urn)) join(n.hops[0].dataset ?? fieldParts(n.urn).dataset, n.urn);
    }
    return true;
  }

  // the next HOP_STEP hops both ways: the walks to hops + HOP_STEP + 1 (the last one only counted)
  async function more() {
    const focus = state.focus;
    const k = Math.min(view.hops + HOP_STEP, 99);
    const [up, down] = await Promise.all(['upstream', 'downstream'].map((d) =>
      api(`lineage/${d}`, { field: focus, depth: k + 1 })));
    if (state.focus !== focus) return;
    view.answer.clear();
    for (const hop of up.hops) remember(hop, 'upstream');
    for (const hop of down.hops) remember(hop, 'downstream');
    const fresh = [...view.answer].filter(([urn, a]) => a.depth <= k && !drawn(urn) && !member(urn));
    const grouped = fresh.length > NEW_FIELDS_AT;
    cy.batch(() => {
      for (const [urn, a] of fresh.sort((p, q) => p[1].depth - q[1].depth)) {
        if (grouped) join(a.dataset, urn);
        else addField({ urn, dataset: a.dataset, fieldPath: a.fieldPath });
      }
    });
    view.frontier = [...view.answer.values()].filter((a) => a.depth > k).length;
    // at the end of the lineage: hops 1..the deepest
    view.hops = view.frontier ? k : Math.max(view.hops, ...[...view.answer.values()].map((a) => a.depth));
    nextHops.disabled = view.frontier === 0;
    const deepest = fresh.filter(([urn]) => drawn(urn)).pop();
    await relayout(deepest ? deepest[0] : focus); // a long chain: the view follows its newest hops
  }

  const member = (urn) => view.groups.get(datasetOf(urn))?.has(urn) ?? false;

  // ---- groups: expand, collapse ----

  async function expand(dataset, fields = GROUP_PAGE) {
    if (view.mode === 'dataset' && !view.groups.has(dataset)) {
      const listed = await api('fields', { dataset });
      for (const f of listed) join(dataset, f.urn);
      view.fields.set(dataset, listed);
    }
    const waiting = [...(view.groups.get(dataset) ?? [])].filter((u) => !drawn(u)).slice(0, fields);
    cy.batch(() => { for (const urn of waiting) drawMember(urn, dataset); });
    await relayout(waiting[0]);
  }

  function drawMember(urn, dataset) {
    const a = view.answer.get(urn);
    const f = view.fields.get(dataset)?.find((g) => g.urn === urn);
    addField({ urn, dataset, fieldPath: a?.fieldPath ?? f?.fieldPath, removed: f?.removed });
  }

  // takes a dataset's drawn fields (all but the focus) back into its group
  function collapse(dataset, layout = true) {
    const fields = cy.nodes('[kind="field"]').filter((n) => n.data('dataset') === dataset && n.id() !== state.focus);
    for (const n of fields) join(dataset, n.id());
    cy.batch(() => {
      fields.remove();
      const box = cy.getElementById(dataset);
      if (box.nonempty() && box.children().empty()) box.remove();
    });
    return layout ? relayout() : Promise.resolve();
  }

  // ---- what is drawn for the groups: their nodes, the edges between drawn fields, the aggregate edges ----

  function refresh() {
    // the groups' fields not drawn: urn -> dataset
    const hidden = new Map();
    for (const [dataset, members] of view.groups) for (const u of members) if (!drawn(u)) hidden.set(u, dataset);
    // one pass over the answers' edges: those between drawn fields, and per group its edges in and out
    const ins = new Map();
    const outs = new Map();
    const ends = [];
    const bump = (m, k, n = 1) => m.set(k, (m.get(k) ?? 0) + n);
    for (const a of view.answer.values()) {
      for (const { hop, direction } of a.hops) {
        const [up, down] = direction === 'upstream' ? [hop.urn, hop.from] : [hop.from, hop.urn];
        const [gu, gd] = [hidden.get(up), hidden.get(down)];
        if (gd && gd !== gu) bump(ins, gd);
        if (gu && gu !== gd) bump(outs, gu);
        ends.push([up, down, hop, direction]);
      }
    }
    if (view.mode === 'dataset') { // the dataset's own field edges in and out
      ins.clear();
      outs.clear();
      for (const e of view.dsEdges) {
        bump(ins, e.downstream, e.fieldEdges);
        bump(outs, e.upstream, e.fieldEdges);
      }
    }
    cy.batch(() => {
      cy.elements('[kind="aggregate"], node[kind="group"]').remove();
      // a "more" node counts its waiting fields that are not drawn or grouped yet (search and next hops draw some)
      for (const [key, list] of state.pending) {
        const rest = list.filter((n) => !drawn(n.urn) && !member(n.urn));
        list.splice(0, list.length, ...rest);
        const more = cy.getElementById(`more|${key}`);
        if (!rest.length) more.remove();
        else more.data('label', `${rest.length} more…`);
      }
      for (const [dataset, members] of view.groups) {
        let left = 0;
        for (const u of members) if (hidden.has(u)) left += 1;
        const total = view.mode === 'dataset' && !view.fields.has(dataset) ? null : members.size;
        if (!left && total != null) continue;
        const { name, platform } = datasetParts(dataset);
        const box = cy.getElementById(dataset);
        const inside = box.nonempty() && box.isParent();
        const [i, o] = [ins.get(dataset) ?? 0, outs.get(dataset) ?? 0];
        const counts = total == null ? 'fields: expand to list' : inside ? `${left} more fields…`
          : `${total} field${total === 1 ? '' : 's'}`;
        const label = inside && view.mode === 'dataset' ? counts
          : inside ? `${counts}\n${i} in · ${o} out` : `${name}\n${platform}\n${counts} · ${i} in · ${o} out`;
        const lines = label.split('\n');
        cy.add({ group: 'nodes', data: { id: groupId(dataset), kind: 'group', dataset, hidden: left,
          parent: inside ? dataset : undefined, label,
          w: Math.max(130, Math.max(...lines.map((l) => l.length)) * 6.6 + 24), h: lines.length * 14 + 14 } });
      }
      // edges between drawn fields (either end may have been drawn later), the rest aggregated onto groups: what
      // stands for a field on screen is itself, else its group's node
      const rep = (urn) => {
        if (drawn(urn)) return urn;
        const g = hidden.has(urn) && cy.getElementById(groupId(hidden.get(urn)));
        return g && g.nonempty() ? g.id() : null;
      };
      const agg = new Map();
      for (const [up, down, hop, direction] of ends) {
        if (drawn(up) && drawn(down)) {
          if (cy.getElementById(`${up}->${down}`).empty()) addHop(hop, direction);
          continue;
        }
        const [s, t] = [rep(up), rep(down)];
        if (s && t && s !== t) bump(agg, `${s}\u0000${t}`);
      }
      for (const e of view.dsEdges) {
        const [s, t] = [repDataset(e.upstream), repDataset(e.downstream)];
        if (s && t && s !== t) bump(agg, `${s}\u0000${t}`, e.fieldEdges);
      }
      for (const [key, n] of agg) {
        const [source, target] = key.split('\u0000');
        cy.add({ group: 'edges', data: { id: `agg|${key}`, source, target, kind: 'aggregate', count: n,
          label: `${n} edge${n === 1 ? '' : 's'}` } });
      }
    });
    collapseAll.disabled = view.groups.size === 0;
    counts();
  }

  // After ELK: a layer of more than GRID_AT nodes (collapsed groups, datasets, or one dataset's fields), which ELK's
  // layered layout draws as one tall column, is folded into columns of about the height of the drawing's width
  // (a cheap layout: positions only); what is to its right moves right by the width it gained.
  function arrange() {
    place();
    const top = cy.nodes().filter((n) => !n.data('parent'));
    for (const box of top.filter((n) => n.isParent())) {
      const x2 = box.boundingBox().x2;
      const gained = fold(box.children());
      if (gained) top.filter((n) => n.boundingBox().x1 > x2).forEach((n) => move(n, gained, 0));
    }
    fold(top);
  }

  // what ELK lays out: all but the collapsed groups drawn on their own (and their edges), which place() puts
  const loose = () => cy.nodes('[kind="group"]').filter((n) => !n.data('parent'));
  const laidOut = () => {
    const groups = loose();
    return cy.elements().not(groups).not(groups.connectedEdges());
  };

  // The collapsed groups drawn on their own, in columns next to what their edges lead to: right of the drawn
  // fields they derive from, left of those they feed, and a column further for a group fed by a group.
  function place() {
    const groups = loose();
    if (groups.empty()) return;
    const x = new Map(); // group id -> left edge
    const y = new Map(); // group id -> the mean y of its drawn neighbours
    const gap = 150;
    const mean = (ns) => ns.reduce((s, n) => s + n.position('y'), 0) / ns.length;
    for (const g of groups) {
      const preds = g.incomers('node').not(groups);
      const succs = g.outgoers('node').not(groups);
      if (preds.nonempty()) x.set(g.id(), Math.max(...preds.map((n) => bb(n).x2)) + gap);
      else if (succs.nonempty()) x.set(g.id(), Math.min(...succs.map((n) => bb(n).x1)) - gap - g.outerWidth());
      const near = preds.union(succs);
      if (near.nonempty()) y.set(g.id(), mean(near.toArray()));
    }
    const links = groups.edgesWith(groups);
    for (let i = 0; i < groups.length; i += 1) { // a group fed by a group: a column to its right
      for (const e of links) {
        const [s, t] = [e.source().id(), e.target().id()];
        if (x.has(s) && (!x.has(t) || x.get(t) < x.get(s) + e.source().outerWidth() + gap)) {
          x.set(t, x.get(s) + e.source().outerWidth() + gap);
        } else if (!x.has(s) && x.has(t)) x.set(s, x.get(t) - e.source().outerWidth() - gap);
      }
    }
    const columns = new Map();
    for (const g of groups) {
      const left = Math.round(x.get(g.id()) ?? 0);
      if (!columns.has(left)) columns.set(left, []);
      columns.get(left).push(g);
    }
    const fixed = cy.nodes().not(groups).filter((n) => !n.data('parent')).map(bb);
    cy.batch(() => {
      for (const [left, column] of columns) {
        column.sort((p, q) => p.data('label').localeCompare(q.data('label')));
        const anchors = column.filter((g) => y.has(g.id())).map((g) => y.get(g.id()));
        const centre = anchors.length ? anchors.reduce((a, b) => a + b, 0) / anchors.length : 0;
        const height = column.reduce((sum, g) => sum + g.outerHeight() + 12, -12);
        const right = left + Math.max(...column.map((g) => g.outerWidth()));
        // what ELK drew in this column (an expanded dataset's box): the groups go round it, below
        const taken = fixed.filter((b) => b.x1 < right && b.x2 > left).sort((a, b) => a.y1 - b.y1);
        let top = centre - height / 2;
        for (const g of column) {
          for (const b of taken) if (top < b.y2 + 12 && top + g.outerHeight() > b.y1 - 12) top = b.y2 + 12;
          g.position({ x: left + g.outerWidth() / 2, y: top + g.outerHeight() / 2 });
          top += g.outerHeight() + 12;
        }
      }
    });
  }

  const move = (n, dx, dy) => (n.isParent() ? n.descendants() : n).shift({ x: dx, y: dy });
  const bb = (n) => n.boundingBox({ includeLabels: false });

  // folds each layer of `nodes` (nodes whose x ranges overlap) of more than GRID_AT into columns; the width gained
  function fold(nodes) {
    const layers = [];
    for (const n of nodes.toArray().sort((p, q) => bb(p).x1 - bb(q).x1)) {
      const b = bb(n);
      const last = layers[layers.length - 1];
      if (last && b.x1 < last.x2) {
        last.nodes.push(n);
        last.x2 = Math.max(last.x2, b.x2);
      } else layers.push({ x1: b.x1, x2: b.x2, nodes: [n] });
    }
    let total = 0;
    for (const layer of layers.reverse()) { // right to left: a fold moves only what is right of it
      if (layer.nodes.length <= GRID_AT) continue;
      // one dataset's fields in name order (a group's own "more fields" node last), else as ELK ordered them
      const named = (n) => `${n.data('kind') === 'group' ? 1 : 0}${n.data('label')}`;
      const items = layer.nodes.sort((p, q) => (p.data('parent')
        ? named(p).localeCompare(named(q)) : bb(p).y1 - bb(q).y1));
      const area = items.reduce((s, n) => s + bb(n).w * bb(n).h, 0);
      const height = Math.max(...items.map((n) => bb(n).h), Math.sqrt(area * 2));
      const y0 = Math.min(...items.map((n) => bb(n).y1));
      // centred on what the layer's edges lead to (the other nodes), else where the column was
      const others = nodes.filter((n) => !items.includes(n)).map((n) => (bb(n).y1 + bb(n).y2) / 2);
      const mid = others.length ? others.reduce((a, b) => a + b, 0) / others.length
        : (y0 + Math.max(...items.map((n) => bb(n).y2))) / 2;
      let x = layer.x1;
      let y = y0;
      let width = 0;
      cy.batch(() => {
        for (const n of items) {
          const b = bb(n);
          if (y > y0 && y + b.h > y0 + height) {
            x += width + 40;
            y = y0;
            width = 0;
          }
          move(n, x - b.x1, y - b.y1);
          y += b.h + 12;
          width = Math.max(width, b.w);
        }
      });
      const boxes = items.map(bb);
      const dy = mid - (Math.min(...boxes.map((b) => b.y1)) + Math.max(...boxes.map((b) => b.y2))) / 2;
      cy.batch(() => items.forEach((n) => move(n, 0, dy)));
      const gained = x + width - layer.x2;
      if (gained > 0) {
        nodes.filter((n) => bb(n).x1 > layer.x2 && !items.includes(n)).forEach((n) => move(n, gained, 0));
        total += gained;
      }
    }
    return total;
  }

  function repDataset(dataset) {
    const g = cy.getElementById(groupId(dataset));
    if (g.nonempty() && !g.data('parent')) return g.id();
    return cy.getElementById(dataset).nonempty() ? dataset : null;
  }

  // ---- the counts: every field of the answers drawn, in a collapsed group, behind a "more" node, or past hop k ----

  function tally() {
    const t = { total: 0, drawn: 0, grouped: 0, more: 0, beyond: 0 };
    const universe = view.mode === 'dataset'
      ? [...view.groups.values()].flatMap((s) => [...s]) : [...view.answer.keys()];
    for (const urn of new Set(universe)) {
      t.total += 1;
      const a = view.answer.get(urn);
      if (drawn(urn)) t.drawn += 1;
      else if (member(urn)) t.grouped += 1;
      else if (a && a.depth > view.hops) t.beyond += 1;
      else t.more += 1; // waiting behind a "more" node
    }
    return t;
  }

  function counts() {
    if (!state.focus && view.mode !== 'dataset') {
      count.textContent = '';
      hopsLabel.textContent = '';
      return;
    }
    const t = tally();
    const parts = [`${t.drawn} drawn`, `${t.grouped} in collapsed groups`, `${t.more} behind “more”`];
    if (view.mode === 'field') parts.push(`${t.beyond} past hop ${view.hops}`);
    count.textContent = `${view.mode === 'dataset' ? 'fields' : 'answer'}: ${t.total} · ${parts.join(' · ')}`;
    Object.assign(count.dataset, { total: t.total, drawn: t.drawn, grouped: t.grouped, more: t.more,
      beyond: t.beyond });
    hopsLabel.textContent = view.mode === 'dataset' ? 'dataset view' : `hops 1–${view.hops}` +
      (view.frontier ? ` · ${view.frontier} field${view.frontier === 1 ? '' : 's'} at hop ${view.hops + 1}`
        : nextHops.disabled ? ' (all)' : '');
    hopsLabel.dataset.hops = view.hops;
  }

  // ---- search within the graph (drawn, grouped, behind "more") ----

  async function find(text) {
    const q = text.toLowerCase();
    if (!q) {
      cy.nodes('.found').removeClass('found');
      hits.textContent = '';
      return;
    }
    if (q !== view.lastSearch) {
      view.lastSearch = q;
      view.foundAt = -1;
      // datasets (drawn, or collapsed groups) by name first, then fields by dataset.name.path
      const datasets = new Map();
      for (const n of cy.nodes('[kind="dataset"], [kind="group"]')) {
        const d = n.data('kind') === 'group' ? n.data('dataset') : n.id();
        const id = cy.getElementById(d).nonempty() ? d : n.id();
        if (!datasets.has(d) || id === d) datasets.set(d, id);
      }
      const fields = new Map();
      const field = (urn, path) => {
        if (!fields.has(urn)) fields.set(urn, `${datasetParts(datasetOf(urn)).name}.${simplePath(path ?? fieldParts(urn).fieldPath)}`);
      };
      for (const n of cy.nodes('[kind="field"]')) field(n.id(), n.data('fieldPath'));
      for (const [urn, a] of view.answer) field(urn, a.fieldPath);
      for (const members of view.groups.values()) for (const urn of members) field(urn);
      for (const list of state.pending.values()) for (const n of list) field(n.urn, n.hops[0].fieldPath);
      view.found = [
        ...[...datasets].filter(([d]) => datasetParts(d).name.toLowerCase().includes(q)).map(([, id]) => id),
        ...[...fields].filter(([, name]) => name.toLowerCase().includes(q)).map(([urn]) => urn)];
    }
    if (!view.found.length) {
      hits.textContent = 'no match';
      return;
    }
    view.foundAt = (view.foundAt + 1) % view.found.length;
    let urn = view.found[view.foundAt];
    if (urn.startsWith('group|') && !drawn(urn)) urn = urn.slice('group|'.length); // its fields all drawn since
    const wasDrawn = drawn(urn) || !fieldParts(urn).dataset;
    if (!wasDrawn) {
      const dataset = datasetOf(urn);
      if (!view.groups.has(dataset) || !view.groups.get(dataset).has(urn)) join(dataset, urn);
      drawMember(urn, dataset);
      await relayout(urn);
    }
    cy.nodes('.found').removeClass('found');
    const node = cy.getElementById(urn).addClass('found');
    cy.animate({ center: { eles: node }, zoom: Math.max(cy.zoom(), 0.8) }, { duration: 0 });
    hits.textContent = `${view.foundAt + 1} of ${view.found.length}${wasDrawn ? '' : ' · drawn out of its group'}`;
    hits.dataset.found = urn;
  }

  // ---- a dataset's grouped view: it and its neighbour datasets collapsed, the field edges between them counted --

  async function openDataset(dataset) {
    const [listed, edges] = await Promise.all([api('fields', { dataset }), api('datasets/lineage', { dataset })]);
    cy.elements().remove();
    state.pending.clear();
    state.focus = null;
    state.selected = null;
    Object.assign(view, { mode: 'dataset', hops: 1, frontier: 0, found: [], foundAt: -1, lastSearch: '' });
    view.answer.clear();
    view.groups.clear();
    view.fields.clear();
    view.fields.set(dataset, listed);
    for (const f of listed) join(dataset, f.urn);
    view.dsEdges = edges.map((e) => ({ upstream: e.upstream, downstream: e.downstream, fieldEdges: e.fieldEdges }));
    for (const e of view.dsEdges) {
      for (const d of [e.upstream, e.downstream]) if (!view.groups.has(d)) view.groups.set(d, new Set());
    }
    nextHops.disabled = true;
    await relayout();
  }

  function datasetAction(dataset) {
    return h('div', { class: 'actions' },
      h('button', { type: 'button', 'data-testid': 'open-dataset', dataset: { urn: dataset },
        onclick: () => task(() => openDataset(dataset)) }, 'Draw its lineage, grouped'),
      h('button', { type: 'button', 'data-testid': 'collapse-dataset', dataset: { urn: dataset },
        onclick: () => task(() => collapse(dataset)) }, 'Collapse in the graph'),
      h('button', { type: 'button', 'data-testid': 'expand-dataset', dataset: { urn: dataset },
        onclick: () => task(() => expand(dataset)) }, `Expand ${GROUP_PAGE} more`));
  }

  // ELK's first layout in a page is slow (its code is compiled on first use): one layout of two nodes, off screen,
  // while the page waits for its first answer
  setTimeout(() => {
    const warm = x.cytoscape({ headless: true, elements: [{ data: { id: 'a' } }, { data: { id: 'b' } },
      { data: { id: 'e', source: 'a', target: 'b' } }] });
    warm.layout({ name: 'elk', elk: { algorithm: 'layered' } }).run();
  }, 0);

  // a collapsed group: a tap draws its next GROUP_PAGE fields; a double tap on a dataset's box collapses it
  cy.on('tap', 'node[kind="group"]', (ev) => task(() => expand(ev.target.data('dataset'))));
  cy.on('dbltap', 'node[kind="dataset"]', (ev) => task(() => collapse(ev.target.id())));

  return { view, reset, group, refresh, arrange, laidOut, more, expand, collapse, find, openDataset, datasetAction, tally };
}
