// npm run build: bundles src/ into static/ (index.html, explorer.js, explorer.css, and the licenses of the npm
// packages inside explorer.js), which fieldgraph serve serves at /explorer/. Nothing comes from a CDN.
import fs from 'node:fs';
import path from 'node:path';
import * as esbuild from 'esbuild';

const here = path.dirname(new URL(import.meta.url).pathname);
const src = path.join(here, 'src');
const out = path.join(here, 'static');

fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });
const js = await esbuild.build({
  entryPoints: { explorer: path.join(src, 'app.js') },
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['es2022'],
  legalComments: 'none', // the packages' licenses, whole, are in LICENSES.txt instead
  banner: { js: '/*! fieldgraph lineage explorer; the bundled packages and their licenses: LICENSES.txt */' },
  metafile: true,
  outdir: out,
  logLevel: 'warning',
});
await esbuild.build({
  entryPoints: { explorer: path.join(src, 'style.css') },
  bundle: true,
  minify: true,
  outdir: out,
  logLevel: 'warning',
});
fs.copyFileSync(path.join(src, 'index.html'), path.join(out, 'index.html'));

// every npm package with a file in the bundle: name, version, license and its license file
const packages = new Set(Object.keys(js.metafile.inputs)
  .map((f) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f)?.[1]).filter(Boolean));
const notices = [...packages].sort().map((name) => {
  const dir = path.join(here, 'node_modules', name);
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const file = fs.readdirSync(dir).find((f) => /^(licen[cs]e|copying)/i.test(f));
  const text = file ? fs.readFileSync(path.join(dir, file), 'utf8').trim() : `(no license file; ${pkg.license})`;
  const source = pkg.repository?.url ?? pkg.repository ?? pkg.homepage ?? '';
  return `${name} ${pkg.version} (${pkg.license})${source ? `\nsource: ${source}` : ''}\n\n${text}\n`;
});
fs.writeFileSync(path.join(out, 'LICENSES.txt'),
  `The npm packages bundled into explorer.js, unmodified, and their licenses.\n\n${notices.join(`\n${'-'.repeat(78)}\n\n`)}`);

for (const f of fs.readdirSync(out)) console.log(`static/${f}  ${fs.statSync(path.join(out, f)).size} bytes`);
