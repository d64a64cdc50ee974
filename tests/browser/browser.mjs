// Drives Neo4j Browser (served by the Neo4j server at /browser/) in headless Debian Chromium: connects with the
// given credentials, sets :param urn, styles the captions, runs cypher/browser_upstream.cypher, waits until the
// result frame draws the graph, counts the drawn nodes and relationships and screenshots the frame.
//
//   node tests/browser/browser.mjs --browser http://127.0.0.1:7474/browser/ --bolt bolt://127.0.0.1:7687 \
//        --user neo4j --password PW --urn 'urn:li:datasetField:(...)' --screenshot test-artifacts/upstream.png
//
// (or NEO4J_BROWSER, NEO4J_BOLT, NEO4J_USER, NEO4J_PASSWORD, FIELD_URN, SCREENSHOT). Prints
// {"nodes": N, "relationships": M, "screenshot": PATH} and exits 0; on failure exits 1 with the failing step
// (and a screenshot of the page next to PATH, named *-failure.png).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
const TIMEOUT = 60_000;
const { values: opt } = parseArgs({
  options: {
    browser: { type: 'string', default: process.env.NEO4J_BROWSER ?? 'http://127.0.0.1:7474/browser/' },
    bolt: { type: 'string', default: process.env.NEO4J_BOLT ?? 'bolt://127.0.0.1:7687' },
    user: { type: 'string', default: process.env.NEO4J_USER ?? 'neo4j' },
    password: { type: 'string', default: process.env.NEO4J_PASSWORD },
    urn: { type: 'string', default: process.env.FIELD_URN },
    screenshot: { type: 'string', default: process.env.SCREENSHOT ?? 'test-artifacts/browser-upstream.png' },
    chromium: { type: 'string', default: process.env.CHROMIUM ?? '/usr/bin/chromium' },
  },
});
if (!opt.password || !opt.urn) {
  console.error('browser.mjs: --password and --urn (or NEO4J_PASSWORD and FIELD_URN) are required');
  process.exit(2);
}
// Browser's captions: the short field path, the dataset name (GraSS, as Browser's :style takes it)
const STYLE = ":style node.DatasetField { caption: '{simplePath}'; diameter: 110px; font-size: 12px; } " +
  "node.Dataset { caption: '{name}'; diameter: 100px; }";
const QUERY = fs.readFileSync(path.join(ROOT, 'cypher', 'browser_upstream.cypher'), 'utf8');

const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'fieldgraph-chromium-'));
let context;
let step = 'launch Chromium';

async function main() {
  context = await chromium.launchPersistentContext(profile, {
    executablePath: opt.chromium, headless: true, viewport: { width: 1280, height: 800 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  const page = context.pages()[0] ?? await context.newPage();
  page.setDefaultTimeout(TIMEOUT);
  const frames = page.getByTestId('frame');

  step = `open ${opt.browser}`;
  await page.goto(opt.browser);
  await page.getByTestId('connect').waitFor();

  step = `connect to ${opt.bolt} as ${opt.user}`;
  const [scheme, address] = opt.bolt.split('://');
  await page.getByTestId('bolt-scheme-select').selectOption(`${scheme}://`);
  await page.getByTestId('boltaddress').fill(address);
  await page.getByTestId('username').fill(opt.user);
  await page.getByTestId('password').fill(opt.password);
  await page.getByTestId('connect').click();
  const connected = page.getByText('You are connected as user');
  const refused = page.getByText(/Neo\.ClientError\.|ServiceUnavailable:/);
  await connected.or(refused).first().waitFor();
  if (await refused.count()) throw new Error((await refused.first().innerText()).trim());

  // each command adds a frame on top of the stream: wait for it to show `ready` (or an error)
  async function run(name, text, ready) {
    step = name;
    const before = await frames.count();
    await page.locator('[data-testid="activeEditor"] textarea').click();
    await page.keyboard.insertText(text);
    await page.getByTestId('editor-Run').click();
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="frame"]').length > n, before,
      { timeout: TIMEOUT });
    const frame = frames.first();
    const error = frame.locator('[data-testid="cypherFrameErrorMessage"], [data-testid="errorBanner"]');
    const done = ready(frame.getByTestId('frameContents'));
    const empty = frame.getByText('(no changes, no records)');
    await done.first().or(error.first()).or(empty).waitFor();
    if (await error.count()) throw new Error((await error.first().innerText()).trim());
    if (await empty.count()) throw new Error('no records (is the graph empty, or the URN wrong?)');
    return frame;
  }
  await run(':param urn', `:param urn => '${opt.urn.replaceAll("'", "\\'")}'`, (c) => c.getByText(opt.urn));
  await run(':style', STYLE, (c) => c.getByText('node.DatasetField'));
  const frame = await run('browser_upstream query', QUERY, (c) => c.locator('svg g.layer.nodes g.node'));

  step = 'wait for the graph drawing';
  const nodes = frame.locator('svg g.layer.nodes g.node');
  const rels = frame.locator('svg g.layer.relationships g.relationship');
  let last = '';
  for (let i = 0; i < 40; i++) { // until the force layout stops moving the nodes (at most ~20 s)
    const now = (await nodes.evaluateAll((ns) => ns.map((n) => n.getAttribute('transform')))).join(' ');
    if (now === last) break;
    last = now;
    await page.waitForTimeout(500);
  }

  step = 'screenshot';
  fs.mkdirSync(path.dirname(path.resolve(opt.screenshot)), { recursive: true });
  await frame.screenshot({ path: opt.screenshot });
  console.log(JSON.stringify({ nodes: await nodes.count(), relationships: await rels.count(),
    screenshot: opt.screenshot }));
}

let code = 0;
try {
  await main();
} catch (err) {
  code = 1;
  console.error(`browser.mjs: ${step} failed: ${err.message.split('\n')[0]}`);
  const failure = opt.screenshot.replace(/(\.png)?$/, '-failure.png');
  try {
    await context?.pages()[0]?.screenshot({ path: failure, fullPage: true, timeout: 5000 });
    console.error(`browser.mjs: the page as it was: ${failure}`);
  } catch { /* no page to show */ }
} finally {
  await context?.close().catch(() => {});
  fs.rmSync(profile, { recursive: true, force: true });
}
process.exit(code);
