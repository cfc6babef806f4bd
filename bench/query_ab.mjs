#!/usr/bin/env node
// Warm query latency of several builds of the browser module, side by side
// (the machine is noisy: compare builds in one run, alternating them).
//
//   node bench/query_ab.mjs INDEX.gsx QUERIES.json PKG_DIR[:STORAGE],PKG_DIR[:STORAGE]... [ROUNDS [NETWORK [WARM]]]
//
// INDEX.gsx: an index (e.g. `gitsense-search build --docs
// /usr/share/doc/python3.11/html --base-url https://docs.python.org/3.11/`);
// QUERIES.json: `docs_quality --dump-queries` output (200 evenly spaced
// ones are used, as bench/run.mjs picks its warm queries); each PKG_DIR a
// copy of a build's pkg/ (optionally with a `storage` option for open()).
// Each round visits every build in turn (order reversed on odd rounds),
// each time with the comparison's own visit (bench/lib/browser.mjs,
// unthrottled): a first visit, a repeat visit (its first result, the
// query inside the worker and the storage setup, `info().timings`), then
// on the repeat visit the queries new and again. NETWORK: a profile of
// bench/lib/browser.mjs (default local; 50ms-20mbit for the cold visit
// the comparison reports); WARM: how many warm queries (default 200).
// Prints one line per build and round, then each build's medians.

import fs from 'node:fs';
import path from 'node:path';
import { NETWORKS, measureNetwork, writePages } from './lib/browser.mjs';
import * as ours from './engines/ours.mjs';
import { ROOT, freshDir } from './lib/util.mjs';

const [index, queryFile, builds, roundsArg, networkArg, warmArg] = process.argv.slice(2);
if (!index || !queryFile || !builds) {
  console.error(fs.readFileSync(new URL(import.meta.url), 'utf8').split('\n').slice(1, 16).join('\n').replace(/^\/\/ ?/gm, ''));
  process.exit(2);
}
const rounds = Number(roundsArg || 3);
const network = NETWORKS[networkArg || 'local'];
if (!network) throw new Error(`unknown network ${networkArg} (${Object.keys(NETWORKS).join(', ')})`);
const site = freshDir(path.join(ROOT, 'bench/out/query-ab-site'));
const cli = path.join(ROOT, 'target/release/gitsense-search');
const all = JSON.parse(fs.readFileSync(queryFile, 'utf8'));
const spread = (list, n) => (n >= list.length ? list : Array.from({ length: n }, (_, i) => list[Math.floor((i * list.length) / n)]));
const queries = spread(all, Number(warmArg || 200)).map((q) => q.text || q);
const engines = builds.split(',').map((spec, i) => {
  const [pkg, storage] = spec.split(':');
  const e = ours.prepare({ site, index, dir: `v${i}`, cli });
  fs.rmSync(path.join(site, `v${i}`, 'pkg'), { recursive: true });
  fs.cpSync(pkg, path.join(site, `v${i}`, 'pkg'), { recursive: true });
  if (storage) {
    e.config.storage = storage;
    e.pageScript = e.pageScript.replace('GitSenseSearch.open({ manifestUrl: CONFIG.manifestUrl, ', 'GitSenseSearch.open({ manifestUrl: CONFIG.manifestUrl, storage: CONFIG.storage, ');
  }
  return { ...e, name: `v${i}`, label: spec };
});
const urls = writePages(site, engines);
const f = (v, d = 2) => (typeof v === 'number' ? v.toFixed(d) : '–');
const firsts = new Map(engines.map((e) => [e.name, []]));
for (let r = 0; r < rounds; r++) {
  for (const e of r % 2 ? [...engines].reverse() : engines) {
    const out = await measureNetwork({ site, engines: [e], urls, network, runs: 1, firstQuery: 'asyncio queue', warmQueries: queries, onProgress: () => {} });
    const o = out[e.name];
    const w = o.warm;
    firsts.get(e.name).push(o.first.ms);
    console.log(
      `${e.label} round ${r}: first visit ${f(o.first.ms, 0)} ms (query ${f(o.first.queryInnerMs, 1)}, session open ${f(o.info?.first?.timings?.openMs, 1)}, OPFS writes ${f(o.info?.first?.lazy?.storeMs, 1)}), repeat visit ${f(o.repeat.ms, 0)} ms (query ${f(o.repeat.queryInnerMs, 1)}, storage ${f(o.info?.repeat?.timings?.storageMs, 1)}) | ` +
        `new from the page ${f(w.fresh.median, 3)} (p95 ${f(w.fresh.p95)}), in worker ${f(w.freshInWorker.median, 3)} (p95 ${f(w.freshInWorker.p95)}) | ` +
        `repeated in worker ${f(w.repeatInWorker.median, 3)} (p95 ${f(w.repeatInWorker.p95)}) ms`,
    );
  }
}
for (const e of engines) {
  const ms = firsts.get(e.name).filter((v) => typeof v === 'number').sort((a, b) => a - b);
  const median = ms.length ? (ms.length % 2 ? ms[(ms.length - 1) / 2] : (ms[ms.length / 2 - 1] + ms[ms.length / 2]) / 2) : undefined;
  console.log(`${e.label} [${network.label}]: first visit median ${f(median, 0)} ms, min ${f(ms[0], 0)}, max ${f(ms.at(-1), 0)} (${ms.length} visits)`);
}
