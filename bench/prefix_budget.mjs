// The worst prefix queries on a large index, in headless Chromium and in
// the CLI: how long a search of `a*` takes under the time budget, and how
// long a plain search sent right after it waits (the worker answers one
// message at a time). Medians of `--runs` (default 5) warm runs, the index
// stored in OPFS first.
//
//   node bench/prefix_budget.mjs INDEX.gsx [--runs 5]
//
// Prints a Markdown table (BENCHMARKS.md, "Short prefixes on a large index").

import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../www/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS } from '../tests/browser/chromium.mjs';
import { median } from './lib/util.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(ROOT, 'target/release/gitsense-search');
const args = process.argv.slice(2);
const index = args.find((a) => !a.startsWith('--'));
const runs = Number(args[args.indexOf('--runs') + 1]) || 5;
if (!index || !fs.existsSync(index)) throw new Error('usage: node bench/prefix_budget.mjs INDEX.gsx [--runs N]');

const QUERIES = ['a*', 'c*', 't*', 'co*', 'con*', 'the*', 'docker'];
const PER_PAGE = [10, 50];

function cliRun(query, perPage, budget = []) {
  const t = process.hrtime.bigint();
  const out = execFileSync(CLI, ['search', index, query, '--format', 'json', '--per-page', String(perPage), ...budget], { maxBuffer: 256 << 20 });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  const r = JSON.parse(out);
  return { ms, truncated: r.truncated === true, returned: r.totalResultsReturned };
}

// The site: the demo's pkg/ and the index, published once (publishing a
// large index takes a while) under bench/out/prefix-site.
const root = path.join(ROOT, 'bench/out/prefix-site');
fs.mkdirSync(root, { recursive: true });
fs.rmSync(path.join(root, 'pkg'), { recursive: true, force: true });
fs.cpSync(path.join(ROOT, 'www/dist/pkg'), path.join(root, 'pkg'), { recursive: true });
fs.writeFileSync(path.join(root, 'blank.html'), '<!doctype html><meta charset="utf-8"><title>blank</title>');
const manifest = path.join(root, 'big/manifest.json');
if (!fs.existsSync(manifest) || fs.statSync(index).mtimeMs > fs.statSync(manifest).mtimeMs) {
  fs.rmSync(path.join(root, 'big'), { recursive: true, force: true });
  execFileSync(CLI, ['publish', index, '--out-dir', path.join(root, 'big')]);
}
const server = await startServer({ root, port: 0 });
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-prefix-profile-'));
const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
const rows = [];
try {
  const page = await context.newPage();
  await page.goto(`${server.url}blank.html`);
  await page.evaluate(async () => {
    const { GitSenseSearch } = await import('/pkg/index.js');
    window.engine = await GitSenseSearch.open({ manifestUrl: '/big/manifest.json', storage: 'opfs' });
  });
  for (const q of QUERIES) {
    for (const perPage of PER_PAGE) {
      const browser = [];
      const after = [];
      let truncated = false;
      for (let i = 0; i < runs + 1; i++) {
        // The query, and `docker` sent while it runs: how long it waits.
        const r = await page.evaluate(
          async ({ q, perPage }) => {
            const t0 = performance.now();
            const first = window.engine.search(q, { perPage }).then((r) => ({ r, ms: performance.now() - t0 }));
            const t1 = performance.now();
            const second = window.engine.search('docker', { perPage: 10 }).then(() => performance.now() - t1);
            const [a, b] = await Promise.all([first, second]);
            return { ms: a.ms, truncated: a.r.truncated === true, next: b };
          },
          { q, perPage },
        );
        if (i === 0) continue; // the first run reads the pages from OPFS
        browser.push(r.ms);
        after.push(r.next);
        truncated ||= r.truncated;
      }
      const cli = Array.from({ length: runs }, () => cliRun(q, perPage));
      const unbounded = Array.from({ length: Math.min(runs, 3) }, () => cliRun(q, perPage, ['--time-budget-ms', '0']));
      rows.push({
        query: q,
        perPage,
        browserMs: median(browser),
        nextMs: median(after),
        browserTruncated: truncated,
        cliMs: median(cli.map((c) => c.ms)),
        cliTruncated: cli.some((c) => c.truncated),
        cliUnboundedMs: median(unbounded.map((c) => c.ms)),
      });
      console.error(JSON.stringify(rows.at(-1)));
    }
  }
} finally {
  await context.close();
  await server.close();
  fs.rmSync(profile, { recursive: true, force: true });
}
const f = (ms) => `${Math.round(ms)} ms`;
console.log('| query | per page | browser | `docker` sent during it, answered after | truncated (browser / CLI) | CLI (process) | CLI without a budget |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) {
  console.log(`| \`${r.query}\` | ${r.perPage} | ${f(r.browserMs)} | ${f(r.nextMs)} | ${r.browserTruncated ? 'yes' : 'no'} / ${r.cliTruncated ? 'yes' : 'no'} | ${f(r.cliMs)} | ${f(r.cliUnboundedMs)} |`);
}
