#!/usr/bin/env node
// Repeat visits of several builds, side by side (the machine is noisy:
// compare builds in one run, alternating them).
//
//   node bench/repeat_ab.mjs SITE_DIR,SITE_DIR... [ROUNDS] [QUERY]
//
// Each SITE_DIR holds a build's pkg/ and an index published into data/
// (as for `bench/browser.mjs --sites`). Each round, for each site in turn:
// a fresh Chromium profile, one first visit (lazy mode, which then waits
// for its copy into OPFS to complete), then 4 repeat visits that open the
// stored index, each on a new page whose module script calls open() and
// search(QUERY) (default `asyncio queue`). Unthrottled; the files are
// served precompressed (brotli). Prints each repeat visit's first result
// (ms since navigation start) and storage setup (`info().timings.storageMs`),
// then the medians per site.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { startServer } from '../www/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS } from '../tests/browser/chromium.mjs';
import { median } from './lib/util.mjs';

const [sitesArg, roundsArg, queryArg] = process.argv.slice(2);
if (!sitesArg) {
  console.error(fs.readFileSync(new URL(import.meta.url), 'utf8').split('\n').slice(1, 16).join('\n').replace(/^\/\/ ?/gm, ''));
  process.exit(2);
}
const sites = sitesArg.split(',').map((s) => path.resolve(s));
const rounds = Number(roundsArg || 4);
const query = queryArg || 'asyncio queue';
const REPEATS = 4;

const page = `<!doctype html><meta charset="utf-8"><title>repeat</title><script type="module">
const { GitSenseSearch } = await import('/pkg/index.js');
const engine = await GitSenseSearch.open({ manifestUrl: '/data/manifest.json', offline: 'always' });
await engine.search(${JSON.stringify(query)});
const ms = performance.now();
const info = await engine.info();
if (info.lazy && info.lazy.state === 'filling') {
  await new Promise((resolve) => {
    engine.addEventListener('fill', resolve, { once: true });
    engine.addEventListener('fillerror', resolve, { once: true });
  });
}
window.__done = { ms, source: info.source, storageMs: info.timings.storageMs };
</script>`;

const results = new Map(sites.map((s) => [s, []]));
for (let r = 0; r < rounds; r++) {
  for (const site of r % 2 ? [...sites].reverse() : sites) {
    fs.writeFileSync(path.join(site, 'repeat.html'), page);
    const server = await startServer({ root: site, port: 0, quiet: true, brotli: true, precompress: true });
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-repeat-'));
    const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    try {
      for (let i = 0; i <= REPEATS; i++) {
        const tab = await context.newPage();
        await tab.goto(server.url + 'repeat.html');
        await tab.waitForFunction(() => window.__done, null, { timeout: 120000 });
        const done = await tab.evaluate(() => window.__done);
        await tab.close();
        if (i === 0) continue;
        if (done.source !== 'stored') throw new Error(`${site}: a repeat visit did not open the stored index (${done.source})`);
        results.get(site).push(done);
        console.log(`${site} round ${r} visit ${i}: first result ${done.ms.toFixed(0)} ms, storage setup ${done.storageMs.toFixed(1)} ms`);
      }
    } finally {
      await context.close();
      await server.close();
      fs.rmSync(profile, { recursive: true, force: true });
    }
  }
}
for (const [site, list] of results) {
  console.log(`${site}: ${list.length} repeat visits, median first result ${median(list.map((d) => d.ms)).toFixed(1)} ms, storage setup ${median(list.map((d) => d.storageMs)).toFixed(1)} ms`);
}
