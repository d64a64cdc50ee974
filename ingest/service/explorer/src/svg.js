// The drawing as an SVG document: the dataset boxes, field boxes, edges (with their curves, dashes and arrows)
// and labels, from cytoscape's own geometry and computed styles. (cytoscape-svg would do this through a canvas
// shim, but it is GPL-3.0: it cannot go into fieldgraph's Apache-2.0 package.)

const FONT = '"DejaVu Sans", "Liberation Sans", Helvetica, Arial, sans-serif';
const DASH = { dashed: '6 3', dotted: '2 3', solid: null };

const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
const num = (v) => Math.round(v * 100) / 100;
const attrs = (a) => Object.entries(a).filter(([, v]) => v != null && v !== false)
  .map(([k, v]) => ` ${k}="${esc(typeof v === 'number' ? num(v) : v)}"`).join('');

// multi-line text; `baseline` is the first line's y
function text(lines, x, baseline, size, extra = {}) {
  const spans = lines.map((line, i) => `<tspan${attrs({ x, dy: i ? size * 1.2 : null })}>${esc(line)}</tspan>`);
  return `<text${attrs({ x, y: baseline, 'font-size': size, 'text-anchor': 'middle', ...extra })}>${spans.join('')}</text>`;
}

function node(n) {
  const b = n.boundingBox({ includeLabels: false, includeOverlays: false });
  const bw = n.pstyle('border-width').pfValue;
  const rect = `<rect${attrs({
    x: b.x1 + bw / 2, y: b.y1 + bw / 2, width: b.w - bw, height: b.h - bw, rx: 6,
    fill: n.style('background-color'), stroke: n.style('border-color'), 'stroke-width': bw,
    'stroke-dasharray': DASH[n.style('border-style')],
  })}/>`;
  const label = n.style('label');
  if (!label) return rect;
  const size = n.pstyle('font-size').pfValue;
  const lines = label.split('\n');
  const weight = n.style('font-weight') === 'bold' ? 'bold' : null;
  const extra = { fill: n.style('color'), 'font-weight': weight };
  const cx = (b.x1 + b.x2) / 2;
  if (n.style('text-valign') === 'top') { // above the box, like the dataset groups' names
    return rect + text(lines, cx, b.y1 - 6 - (lines.length - 1) * size * 1.2, size, extra);
  }
  return rect + text(lines, cx, (b.y1 + b.y2) / 2 + size * 0.35 - ((lines.length - 1) * size * 0.6), size, extra);
}

function edge(e, marker) {
  const s = e.sourceEndpoint();
  const t = e.targetEndpoint();
  const cps = e.controlPoints() ?? [];
  const d = cps.length === 1 ? `M${num(s.x)},${num(s.y)} Q${num(cps[0].x)},${num(cps[0].y)} ${num(t.x)},${num(t.y)}`
    : cps.length === 2 ? `M${num(s.x)},${num(s.y)} C${cps.map((p) => `${num(p.x)},${num(p.y)}`).join(' ')} ${num(t.x)},${num(t.y)}`
      : `M${num(s.x)},${num(s.y)} L${num(t.x)},${num(t.y)}`;
  const color = e.style('line-color');
  const style = e.style('line-style');
  const path = `<path${attrs({
    d, fill: 'none', stroke: color, 'stroke-width': e.pstyle('width').pfValue,
    'stroke-dasharray': style === 'dashed' ? e.pstyle('line-dash-pattern').pfValue.join(' ') : DASH[style],
    'marker-end': `url(#${marker(color)})`,
  })}/>`;
  const label = e.style('label');
  if (!label) return path;
  const size = e.pstyle('font-size').pfValue;
  const lines = label.split('\n');
  const m = e.midpoint();
  return path + text(lines, m.x, m.y + size * 0.35 - (lines.length - 1) * size * 0.6, size, {
    fill: e.style('color'), stroke: '#ffffff', 'stroke-width': 4, 'paint-order': 'stroke',
  });
}

export function toSvg(cy, { padding = 20, background = '#ffffff' } = {}) {
  const box = cy.elements().boundingBox();
  const markers = new Map(); // colour -> marker id
  const marker = (color) => {
    if (!markers.has(color)) markers.set(color, `arrow${markers.size}`);
    return markers.get(color);
  };
  const x = box.x1 - padding;
  const y = box.y1 - padding;
  const w = box.w + 2 * padding;
  const h = box.h + 2 * padding;
  // parents first (behind their fields), then edges, then fields and other nodes on top
  const body = [
    ...cy.nodes(':parent').map(node),
    ...cy.edges().map((e) => edge(e, marker)),
    ...cy.nodes(':childless').map(node),
  ];
  const defs = [...markers].map(([color, id]) => `<marker${attrs({
    id, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 8, markerHeight: 8, markerUnits: 'userSpaceOnUse',
    orient: 'auto',
  })}><path d="M0,0 L10,5 L0,10 z"${attrs({ fill: color })}/></marker>`);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg"${attrs({
    width: w, height: h, viewBox: `${num(x)} ${num(y)} ${num(w)} ${num(h)}`, 'font-family': FONT,
  })}>\n<defs>${defs.join('')}</defs>\n<rect${attrs({ x, y, width: w, height: h, fill: background })}/>\n` +
    `${body.join('\n')}\n</svg>\n`;
}
