// "Unused fields" in a dataset's field list: marks the fields nobody reads (GET /api/v1/unused: listed, and no
// lineage edge into them, nor into their whole dataset, holds), each with when it was last read, and shows only
// them until pressed again. Under a read scope, a field read only by datasets the token may not see is read.

const PAGE = 1000;

export function unusedToggle({ api, task, h, when }, datasetUrn, list) {
  const count = h('span', { class: 'sub', 'data-testid': 'unused-count' });
  const button = h('button', {
    type: 'button', class: 'unused-toggle', 'data-testid': 'unused-toggle', 'aria-pressed': 'false',
    title: 'Show only the fields no lineage edge reads (and when each was last read)',
    onclick: () => task(toggle),
  }, 'Unused fields');
  let marked = false;

  async function mark() {
    const unused = new Map();
    let cursor = null;
    do { // every page of the answer (each of the same instant as the first)
      const page = await api('unused', { dataset: datasetUrn, limit: PAGE, cursor });
      for (const f of page.fields) unused.set(f.urn, f);
      cursor = page.next;
    } while (cursor);
    for (const b of list.querySelectorAll('[data-testid="dataset-field"]')) {
      const f = unused.get(b.dataset.urn);
      if (!f) continue;
      b.dataset.unused = 'true';
      b.closest('li').classList.add('unused');
      b.append(h('span', { class: 'unused-mark', 'data-testid': 'unused-mark', dataset: { urn: f.urn } },
        f.lastRead == null ? 'unused · never read' : `unused · last read ${when(f.lastRead)}`));
    }
    const all = list.querySelectorAll('[data-testid="dataset-field"]').length;
    count.textContent = `${unused.size} of ${all} unused`;
    marked = true;
  }

  async function toggle() {
    const on = list.dataset.unusedOnly !== 'true';
    if (on && !marked) await mark();
    list.dataset.unusedOnly = String(on);
    button.setAttribute('aria-pressed', String(on));
  }

  return h('div', { class: 'unused-bar' }, button, count);
}
