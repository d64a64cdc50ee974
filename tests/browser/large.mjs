// The large-lineage actions of tests/browser/explorer.mjs (tests/test_explorer_large.py, benchmarks/explorer.py):
//
//   {"action": "timed", "url": U}        -> {ms, error}: open U; ms from the last API answer's arrival (its
//                                           responseEnd) to the page drawn and idle (layout done, a frame painted)
//   {"action": "find", "text": T}        -> the graph after "Find in the graph" T (Enter), with the hit's text
//   {"action": "attrs", "testid": T}     -> the element's data-* attributes and text
//   {"action": "frames", "steps": N}     -> rAF frame times (ms) during N wheel zooms in, N out, then an N-step drag
export function largeActions(page, { settle, idle, graph }) {
  // waits for the page to be idle, polling on every animation frame (so the time is the frame's, not a poll's)
  async function drawnAt() {
    await page.waitForFunction(() => document.body.dataset.busy === 'false', null, { polling: 'raf' });
    return page.evaluate(() => new Promise((done) => requestAnimationFrame(() => done(performance.now()))));
  }
  return {
    async timed({ url }) {
      await page.goto('about:blank');
      await page.goto(url);
      await page.getByTestId('search-input').waitFor();
      const done = await drawnAt();
      const error = await settle();
      const answered = await page.evaluate(() => Math.max(0, ...performance.getEntriesByType('resource')
        .filter((r) => r.name.includes('/api/v1/')).map((r) => r.responseEnd)));
      return { ms: done - answered, error };
    },
    async timedClick({ testid, urn }) { // a button's work, timed from the last API answer (or the click) to drawn
      const sel = urn ? `[data-testid="${testid}"][data-urn=${JSON.stringify(urn)}]` : `[data-testid="${testid}"]`;
      const clicked = await page.evaluate(() => performance.now());
      await page.locator(sel).click();
      const done = await drawnAt();
      await idle();
      const answered = await page.evaluate((t0) => Math.max(t0, ...performance.getEntriesByType('resource')
        .filter((r) => r.name.includes('/api/v1/')).map((r) => r.responseEnd)), clicked);
      return { ms: done - answered };
    },
    async find({ text }) {
      await page.getByTestId('graph-search').fill(text);
      await page.getByTestId('graph-search').press('Enter');
      await idle();
      const g = await graph();
      const hit = page.getByTestId('graph-search-count');
      return { ...g, hits: await hit.innerText(), found: await hit.evaluate((e) => e.dataset.found ?? null) };
    },
    async attrs({ testid }) {
      const el = page.getByTestId(testid);
      return { ...(await el.evaluate((e) => ({ ...e.dataset }))), text: await el.innerText() };
    },
    async frames({ steps = 20 }) {
      const box = await page.getByTestId('graph').boundingBox();
      const cx = box.x + box.width / 2;
      const cy = box.y + box.height / 2;
      await page.evaluate(() => {
        window.__frames = [];
        let last = performance.now();
        const tick = (t) => {
          window.__frames.push(t - last);
          last = t;
          if (window.__frames.running) requestAnimationFrame(tick);
        };
        window.__frames.running = true;
        requestAnimationFrame(tick);
      });
      await page.mouse.move(cx, cy);
      for (let i = 0; i < steps; i += 1) { await page.mouse.wheel(0, -120); await page.waitForTimeout(16); }
      for (let i = 0; i < steps; i += 1) { await page.mouse.wheel(0, 120); await page.waitForTimeout(16); }
      await page.mouse.down();
      for (let i = 0; i < steps; i += 1) { await page.mouse.move(cx + i * 10, cy + i * 5); await page.waitForTimeout(16); }
      await page.mouse.up();
      return page.evaluate(() => {
        window.__frames.running = false;
        return window.__frames.slice(1);
      });
    },
  };
}
