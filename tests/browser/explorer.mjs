// Drives the lineage explorer page (fieldgraph serve's /explorer/) in headless Debian Chromium for
// tests/test_explorer.py. One browser for many steps: it reads one JSON command a line on stdin and answers each
// with one JSON line on stdout, {"ok": true, "result": ...} or {"ok": false, "error": "...", "screenshot": PATH}.
//
//   node tests/browser/explorer.mjs [--chromium /usr/bin/chromium] [--artifacts test-artifacts]
//   {"action": "open", "url": "http://127.0.0.1:8080/explorer/"}
//   {"action": "search", "text": "total_revenue"}           -> the result items
//   {"action": "pick", "testid": "result-field", "urn": U}  -> the graph once drawn
//   {"action": "click" | "dblclick", "node": ID}            -> a real mouse click on a drawn node; the graph after
//   {"action": "button", "testid": "expand-upstream"}       -> the graph after the button's work
//   {"action": "download", "testid": "export-png", "path": P} -> {"path", "name", "size"}
//   {"action": "graph"} | {"action": "text", "testid": T} | {"action": "screenshot", "path": P}
//   {"action": "errors"}                                    -> the page's uncaught exceptions since the last call
//   {"action": "prompts", "answer": A}                      -> answer the page's prompts with A from now on;
//                                                              returns how many it asked so far
//   {"action": "fill", "testid": T, "value": V}             -> set an input's or select's value; the graph after
//   {"action": "items", "testid": T}                        -> those elements' data-*, text, title, classes
//   {"action": "back"} | {"action": "url"}                  -> the back button (the graph after); the address
//
// Every action that starts work waits until the page is idle again (body[data-busy="false"]).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { largeActions } from './large.mjs';

const TIMEOUT = 30_000;
const { values: opt } = parseArgs({
  options: {
    chromium: { type: 'string', default: process.env.CHROMIUM ?? '/usr/bin/chromium' },
    artifacts: { type: 'string', default: 'test-artifacts' },
  },
});

const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'fieldgraph-explorer-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: opt.chromium, headless: true, viewport: { width: 1440, height: 900 }, acceptDownloads: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--no-first-run', '--disable-quic'],
});
const page = context.pages()[0] ?? await context.newPage();
page.setDefaultTimeout(TIMEOUT);
const pageErrors = []; // uncaught exceptions in the page
page.on('pageerror', (err) => pageErrors.push(err.message));
let promptAnswer = null; // what window.prompt() gets (null: dismissed)
let promptsAsked = 0;
page.on('dialog', (dialog) => {
  promptsAsked += 1;
  return promptAnswer == null ? dialog.dismiss() : dialog.accept(promptAnswer);
});

const byTestId = (testid, urn) =>
  page.locator(urn ? `[data-testid="${testid}"][data-urn=${JSON.stringify(urn)}]` : `[data-testid="${testid}"]`);

// Waits until the page's work is done; returns the error it shows, if any
async function settle() {
  await page.waitForFunction(() => document.body.dataset.busy === 'false', null, { timeout: TIMEOUT });
  const error = page.getByTestId('error');
  return await error.isVisible() ? error.innerText() : null;
}

async function idle() {
  const error = await settle();
  if (error) throw new Error(`the page shows an error: ${error}`);
}

// What the page draws: cytoscape's nodes and edges with their classes
function graph() {
  return page.evaluate(() => {
    const { cy, state } = window.fieldgraphExplorer;
    return {
      nodes: cy.nodes().map((n) => ({ id: n.id(), kind: n.data('kind'), parent: n.data('parent') ?? null,
        label: n.data('label'), classes: n.classes() })),
      edges: cy.edges().map((e) => ({ source: e.source().id(), target: e.target().id(), kind: e.data('kind'),
        label: e.data('label') ?? '', classes: e.classes() })),
      focus: state.focus, selected: state.selected,
    };
  });
}

// A node's centre on the screen, panned into view first if the drawing left it outside the canvas
async function nodePoint(id) {
  const point = await page.evaluate((nodeId) => {
    const { cy } = window.fieldgraphExplorer;
    const node = cy.getElementById(nodeId);
    if (node.empty()) return null;
    const box = cy.container().getBoundingClientRect();
    let p = node.renderedPosition();
    if (p.x < 20 || p.y < 20 || p.x > box.width - 20 || p.y > box.height - 20) {
      cy.center(node);
      p = node.renderedPosition();
    }
    return { x: box.left + p.x, y: box.top + p.y };
  }, id);
  if (!point) throw new Error(`no node ${id} is drawn`);
  return point;
}

const actions = {
  async open({ url }) { // -> {title, error}: the error the page shows once settled (or null)
    await page.goto('about:blank'); // a full load even when only the #fragment differs
    await page.goto(url);
    await page.getByTestId('search-input').waitFor();
    return { title: await page.title(), error: await settle() };
  },
  async search({ text }) {
    await page.getByTestId('search-input').fill(text);
    await page.getByTestId('search-input').press('Enter');
    await page.locator('#results h3').first().waitFor();
    await idle();
    return page.locator('#results button[data-urn]').evaluateAll((bs) =>
      bs.map((b) => ({ testid: b.dataset.testid, urn: b.dataset.urn, text: b.innerText })));
  },
  async pick({ testid, urn }) {
    await byTestId(testid, urn).click();
    await idle();
    return graph();
  },
  async click({ node }) {
    const { x, y } = await nodePoint(node);
    await page.mouse.click(x, y);
    await idle();
    return graph();
  },
  async dblclick({ node }) {
    const { x, y } = await nodePoint(node);
    await page.mouse.dblclick(x, y);
    await idle();
    return graph();
  },
  async button({ testid }) {
    await byTestId(testid).click();
    await idle();
    return graph();
  },
  async download({ testid, path: to }) {
    const [download] = await Promise.all([page.waitForEvent('download'), byTestId(testid).click()]);
    fs.mkdirSync(path.dirname(path.resolve(to)), { recursive: true });
    await download.saveAs(to);
    await idle();
    return { path: to, name: download.suggestedFilename(), size: fs.statSync(to).size };
  },
  graph,
  async text({ testid }) {
    return byTestId(testid).innerText();
  },
  async screenshot({ path: to }) {
    fs.mkdirSync(path.dirname(path.resolve(to)), { recursive: true });
    await page.screenshot({ path: to });
    return { path: to };
  },
  async errors() {
    return pageErrors.splice(0);
  },
  async prompts({ answer }) {
    promptAnswer = answer ?? null;
    return promptsAsked;
  },
  // the time control (tests/test_explorer_time.py)
  async fill({ testid, value }) { // sets an input's or a select's value as a user would; the graph after
    const el = byTestId(testid);
    if (await el.evaluate((e) => e.tagName === 'SELECT')) await el.selectOption(String(value));
    else await el.evaluate((e, v) => {
      e.value = v;
      e.dispatchEvent(new Event('input', { bubbles: true }));
      e.dispatchEvent(new Event('change', { bubbles: true }));
    }, String(value));
    await idle();
    return graph();
  },
  async items({ testid }) { // the elements with that test id: their data-* attributes, text and title
    return byTestId(testid).evaluateAll((els) => els.map((e) => ({ ...e.dataset, text: e.innerText,
      title: e.title, classes: [...e.classList], value: e.value ?? null })));
  },
  async back() { // the browser's back button; the graph after
    await page.goBack();
    await page.waitForTimeout(50);
    await idle();
    return graph();
  },
  async url() {
    return page.url();
  },
};

Object.assign(actions, largeActions(page, { settle, idle, graph })); // tests/browser/large.mjs

let n = 0;
for await (const line of readline.createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const cmd = JSON.parse(line);
  let answer;
  try {
    if (!(cmd.action in actions)) throw new Error(`no action ${cmd.action}`);
    answer = { ok: true, result: await actions[cmd.action](cmd) };
  } catch (err) {
    const shot = path.join(opt.artifacts, `explorer-failure-${++n}.png`);
    answer = { ok: false, error: `${cmd.action}: ${err.message.split('\n')[0]}`, screenshot: shot };
    await page.screenshot({ path: shot, timeout: 5000 }).catch(() => { answer.screenshot = null; });
  }
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}
await context.close().catch(() => {});
fs.rmSync(profile, { recursive: true, force: true });
