// Reads the built documentation site as a newcomer would, in headless Debian Chromium: opens the home page, searches
// for a word with the site's own search, follows the first hit, then opens a how-to page and a reference page,
// screenshotting each. Every request that leaves the site's own address is refused and recorded: the site must
// need nothing from elsewhere (no fonts, scripts or styles from a CDN).
//
//   node tests/browser/docs.mjs --site http://127.0.0.1:PORT/ --search rename --howto how-to/renames/ \
//        --reference reference/cli/ --out test-artifacts
//
// Prints {"hits": N, "followed": URL, "heading": H1, "outside": [URLs], "screenshots": [PATHS]} and exits 0; on
// failure exits 1 with the failing step (and a screenshot of the page, docs-failure.png).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';

const TIMEOUT = 30_000;
const { values: opt } = parseArgs({
  options: {
    site: { type: 'string' },
    search: { type: 'string', default: 'rename' },
    howto: { type: 'string', default: 'how-to/renames/' },
    reference: { type: 'string', default: 'reference/cli/' },
    out: { type: 'string', default: 'test-artifacts' },
    chromium: { type: 'string', default: process.env.CHROMIUM ?? '/usr/bin/chromium' },
  },
});
if (!opt.site) {
  console.error('docs.mjs: --site (the built site, served over HTTP) is required');
  process.exit(2);
}

const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'fieldgraph-chromium-'));
const origin = new URL(opt.site).origin;
const outside = [];
let context;
let step = 'launch Chromium';

async function shoot(page, name) {
  const file = path.join(opt.out, name);
  await page.screenshot({ path: file });
  return file;
}

async function main() {
  fs.mkdirSync(opt.out, { recursive: true });
  context = await chromium.launchPersistentContext(profile, {
    executablePath: opt.chromium, headless: true, viewport: { width: 1280, height: 900 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(origin) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
    outside.push(url);
    return route.abort();
  });
  const page = context.pages()[0] ?? await context.newPage();
  page.setDefaultTimeout(TIMEOUT);
  const shots = [];

  step = `open the home page ${opt.site}`;
  await page.goto(opt.site);
  await page.locator('h1').first().waitFor();
  shots.push(await shoot(page, 'docs-home.png'));

  step = `search for "${opt.search}"`;
  const query = page.locator('input[data-md-component="search-query"]');
  await query.click();
  await page.waitForTimeout(500); // the search worker loads the site's index when the field takes focus
  await query.pressSequentially(opt.search, { delay: 80 });
  const hits = page.locator('.md-search-result__item');
  await hits.first().waitFor();
  const count = await hits.count();
  shots.push(await shoot(page, 'docs-search.png'));

  step = 'follow the first hit';
  const before = page.url();
  await hits.first().locator('a').first().click();
  await page.waitForURL((url) => url.toString() !== before);
  await page.locator('h1').first().waitFor();
  const followed = page.url();
  const body = (await page.locator('article').first().innerText()).toLowerCase();
  if (!body.includes(opt.search.toLowerCase())) throw new Error(`the hit ${followed} does not mention "${opt.search}"`);
  const heading = (await page.locator('article h1').first().innerText()).trim();

  for (const [name, file] of [[opt.howto, 'docs-howto.png'], [opt.reference, 'docs-reference.png']]) {
    step = `open ${name}`;
    await page.goto(new URL(name, opt.site).toString());
    await page.locator('article h1').first().waitFor();
    shots.push(await shoot(page, file));
  }
  console.log(JSON.stringify({ hits: count, followed, heading, outside, screenshots: shots }));
}

let code = 0;
try {
  await main();
} catch (err) {
  code = 1;
  console.error(`docs.mjs: ${step} failed: ${err.message.split('\n')[0]}`);
  try {
    await context?.pages()[0]?.screenshot({ path: path.join(opt.out, 'docs-failure.png'), timeout: 5000 });
  } catch { /* no page to show */ }
} finally {
  await context?.close().catch(() => {});
  fs.rmSync(profile, { recursive: true, force: true });
}
process.exit(code);
