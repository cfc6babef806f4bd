#!/usr/bin/env node
// Browser module benchmark: module size, first-visit and repeat-visit time
// to first result, and warm query latency, in headless Chromium on the
// demo site (www/dist, built by ./build.sh).
//
//   node bench/browser.mjs [--latency MS] [--bandwidth BYTES_PER_S] [--runs N]
//   node bench/browser.mjs --lazy [--runs N] [--corpus sample|python-docs|sharegpt]   cold visits, lazy mode
//        [--sites DIR,DIR] [--throttled-only] [--lazy-only] [--preload-only] [--first-query] [--shared-link]
//                                                                            (prepared sites compared side by side;
//                                                                            Python-docs queries, or ShareGPT's with --corpus sharegpt)
//
// Latency is added to every response by the test server (www/serve.mjs);
// bandwidth caps each response. Results print as Markdown and are merged
// into bench/results.json under `browser` (or `browser_<latency>ms_<bw>`
// for a throttled run), other keys kept.
//
// --lazy: a cold visit (fresh profile, nothing cached) to first result,
// with bytes and requests on the wire up to it, on the sample index and
// the Python 3.11 docs (built into bench/out/ if missing; needs
// python3.11-doc), locally and at 50 ms + 20 Mbit/s, for lazy mode
// ('auto', on a page without and with README's preload tags) and the full
// download ('opfs'); merged under `lazy`. With
// `--corpus sharegpt` (not run otherwise): the 288 MB ShareGPT chat index
// (bench/importers.sh builds it), lazy mode only. A run replaces the rows
// of the corpora it measured and keeps the others'. --first-query adds
// lazy mode with the page passing its query to open({ firstQuery });
// --shared-link makes the bandwidth cap one link for all responses (as
// the comparison, bench/run.mjs), not one per response.
// coldVisit() is exported for other benchmarks.

import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startServer } from '../www/serve.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SITE = path.join(ROOT, 'www/dist');
const CLI = path.join(ROOT, 'target/release/gitsense-search');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const latencyMs = opt('--latency', 0);
const bandwidth = opt('--bandwidth', 0);
const runs = opt('--runs', 5);
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/**
 * One cold visit: a fresh browser profile loads a page of `siteRoot`
 * (which must hold pkg/ and the published index at `manifestPath`) whose
 * module script opens the engine with `storage` and runs `query`. Resolves { firstResultMs
 * (navigation start → first search resolved), openMs, bytes and requests
 * (everything the server sent up to the first result: page, JS, wasm,
 * manifest, index), indexBytes, indexRequests, byPath, info }.
 * The lazy fill is held back (lazyFill: false) so the counts stop at the
 * first result. Options: siteRoot, manifestPath ('/data/manifest.json'),
 * query, storage ('auto'), latencyMs, bandwidth, sharedBandwidth (the cap
 * is one link for all responses), hint (the page passes `query` to
 * open({ firstQuery })), chromiumArgs (added to Chromium's), preload (false: with
 * true the page's head holds README's preload tags for pkg/index.js, the
 * module, pkg/lazy.js and the manifest, as a site following it would have;
 * the visit fails if one is fetched twice, a preload the engine did not
 * use).
 */
const WASM_PATH = '/pkg/gitsense_search_bg.wasm';
// README's preload tags (its documentation-site recipe; docs/js-api.md, "Preload tags"), for a page at the
// site's root: the API, the module, lazy mode's page-side code and the
// manifest; each must then be fetched once.
const preloadTags = (manifestPath) => [
  '<link rel="modulepreload" href="/pkg/index.js">',
  `<link rel="preload" href="${WASM_PATH}" as="fetch" type="application/wasm" crossorigin>`,
  '<link rel="modulepreload" href="/pkg/lazy.js">',
  `<link rel="preload" href="${manifestPath}" as="fetch" crossorigin>`,
];

export async function coldVisit({ siteRoot = SITE, manifestPath = '/data/manifest.json', query = 'payment', storage = 'auto', latencyMs = 0, bandwidth = 0, preload = false, sharedBandwidth = false, chromiumArgs = [], hint = false } = {}) {
  const blank = path.join(siteRoot, 'cold.html');
  // The page's own module script opens the engine and searches, as a
  // site's would (no round trip through the driver before it starts).
  const script = `<script type="module">
window.__cold = (async () => {
  const { manifestPath, query, storage, hint } = ${JSON.stringify({ manifestPath, query, storage, hint })};
  const { GitSenseSearch } = await import('/pkg/index.js');
  const engine = await GitSenseSearch.open({ manifestUrl: manifestPath, storage, lazyFill: false, ...(hint ? { firstQuery: query } : {}) });
  const opened = performance.now();
  const results = await engine.search(query);
  const first = performance.now();
  return { opened, first, firstAt: performance.timeOrigin + first, returned: results.totalResultsReturned, info: await engine.info() };
})();
</script>`;
  fs.writeFileSync(blank, `<!doctype html><meta charset="utf-8"><title>cold</title>${preload ? preloadTags(manifestPath).join('') : ''}${script}`);
  const server = await startServer({ root: siteRoot, port: 0, latencyMs, bandwidth, sharedBandwidth, brotli: true, precompress: true });
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-cold-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: '/usr/bin/chromium', headless: true, args: [...CHROMIUM_ARGS, ...chromiumArgs] });
  try {
    const page = await context.newPage();
    server.reset();
    // 'commit': a preload holds the load event back until the module is in.
    await page.goto(`${server.url}cold.html`, { waitUntil: 'commit' });
    await page.waitForFunction(() => window.__cold !== undefined);
    const r = await page.evaluate(() => window.__cold);
    // Bytes and requests of what was asked for before the first result
    // (not what the engine starts once it has answered: the module's
    // second part).
    const stats = server.stats(r.firstAt);
    const once = preload && storage === 'auto' ? ['/pkg/index.js', WASM_PATH, '/pkg/lazy.js', manifestPath] : ['/pkg/index.js', WASM_PATH];
    for (const p of once) {
      if ((stats.byPath[p] || 0) !== 1) throw new Error(`${p} was fetched ${stats.byPath[p] || 0} times, not once`);
    }
    const index = Object.entries(stats.bytesByPath).filter(([p]) => /\.(gsx|gz|pages)$/.test(p));
    await page.goto('about:blank');
    return {
      firstResultMs: r.first,
      openMs: r.opened,
      returned: r.returned,
      bytes: stats.bytes,
      requests: stats.total,
      indexBytes: index.reduce((n, [, b]) => n + b, 0),
      indexRequests: Object.entries(stats.byPath).filter(([p]) => /\.(gsx|gz|pages)$/.test(p)).reduce((n, [, c]) => n + c, 0),
      byPath: stats.bytesByPath,
      // Every request of the visit (the server's log), times in ms since
      // the page's first one; firstAt: the page's result, on that scale.
      waterfall: waterfallOf(server.log(), r.firstAt),
      info: r.info,
    };
  } finally {
    await context.close();
    await server.close();
    fs.rmSync(profile, { recursive: true, force: true });
    fs.rmSync(blank, { force: true });
  }
}

function waterfallOf(log, firstAt) {
  const t0 = log.length ? log[0].at : firstAt;
  return {
    firstAt: Math.round(firstAt - t0),
    requests: log.map((e) => ({ path: e.path, range: e.range, at: e.at - t0, done: e.done === null ? null : e.done - t0, bytes: e.bytes })),
  };
}

const QUERIES = ['payment', 'stripe lang:js', '"form validation"', 'auth* -test msg-type:git-blob', 'in:chats payment', 'token OR session'];

function sizes() {
  const files = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(js|wasm)$/.test(e.name)) files.push(p);
    }
  };
  walk(path.join(SITE, 'pkg'));
  const row = (name, list) => {
    const buf = Buffer.concat(list.map((f) => fs.readFileSync(f)));
    return {
      name,
      raw: buf.length,
      gzip: zlib.gzipSync(buf, { level: 9 }).length,
      brotli: zlib.brotliCompressSync(buf, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
    };
  };
  return [
    row('wasm', files.filter((f) => f.endsWith('.wasm'))),
    row('js (api, worker, bindings, snippets)', files.filter((f) => f.endsWith('.js'))),
    row('total', files),
  ];
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];

async function visit(context, url) {
  const page = await context.newPage();
  await page.goto(url);
  const r = await page.evaluate(async () => {
    const { GitSenseSearch } = await import('/pkg/index.js');
    // offline: 'always': the repeat visit measured next reads the stored copy.
    const engine = await GitSenseSearch.open({ manifestUrl: '/data/manifest.json', offline: 'always' });
    const opened = performance.now();
    await engine.search('payment');
    const first = performance.now();
    window.engine = engine;
    return { opened, first, info: await engine.info() };
  });
  return { page, ...r };
}

async function main() {
  if (!fs.existsSync(path.join(SITE, 'pkg/index.js'))) {
    console.error('error: www/dist is missing; run ./build.sh first');
    process.exit(1);
  }
  if (args.includes('--lazy')) return lazyMain();
  fs.writeFileSync(path.join(SITE, 'bench.html'), '<!doctype html><meta charset="utf-8"><title>bench</title>');
  const server = await startServer({ root: SITE, port: 0, latencyMs, bandwidth, brotli: true, precompress: true });
  const chromiumArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
  const first = [];
  const repeat = [];
  let warm = null;
  let info = null;
  for (let i = 0; i < runs; i++) {
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-bench-'));
    const context = await chromium.launchPersistentContext(profile, { executablePath: '/usr/bin/chromium', headless: true, args: chromiumArgs });
    const a = await visit(context, `${server.url}bench.html`);
    first.push(a.first);
    info = a.info;
    await a.page.goto('about:blank');
    await a.page.close();
    const b = await visit(context, `${server.url}bench.html`);
    repeat.push(b.first);
    if (i === 0) {
      warm = await b.page.evaluate(async (queries) => {
        const out = {};
        for (const q of queries) {
          await window.engine.search(q); // warm the page cache
          const rt = [];
          const inWorker = [];
          for (let k = 0; k < 30; k++) {
            const t = performance.now();
            await window.engine.search(q, { page: 1 + (k % 2) });
            rt.push(performance.now() - t);
            inWorker.push(window.engine.lastSearchMs);
          }
          out[q] = { rt, inWorker };
        }
        return out;
      }, QUERIES);
    }
    await b.page.goto('about:blank');
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  await server.close();
  fs.rmSync(path.join(SITE, 'bench.html'));

  const result = {
    command: ['node', 'bench/browser.mjs', ...args].join(' '),
    machine: `${os.cpus().length} cores (${os.cpus()[0].model.trim()}), ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, ${os.type()} ${os.release()}`,
    date: new Date().toISOString().slice(0, 10),
    latencyMs,
    bandwidth,
    runs,
    sizes: sizes(),
    index: { size: info.sizeBytes, downloaded: info.downloadedBytes, storage: info.storage },
    firstVisitMs: { median: median(first), all: first },
    repeatVisitMs: { median: median(repeat), all: repeat },
    warm: Object.fromEntries(Object.entries(warm).map(([q, v]) => [q, {
      roundTripMedianMs: median(v.rt),
      roundTripP95Ms: pct(v.rt, 95),
      inWorkerMedianMs: median(v.inWorker),
    }])),
  };
  const file = path.join(ROOT, 'bench/results.json');
  const all = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
  const key = latencyMs || bandwidth ? `browser_${latencyMs}ms_${bandwidth}Bps` : 'browser';
  all[key] = result;
  const sorted = Object.fromEntries(Object.keys(all).sort().map((k) => [k, all[k]]));
  fs.writeFileSync(file, JSON.stringify(sorted, null, 2) + '\n');

  const kb = (n) => `${(n / 1024).toFixed(0)} KiB`;
  const ms = (n) => `${n.toFixed(1)} ms`;
  console.log(`## Browser module (${os.cpus().length} cores, latency ${latencyMs} ms, bandwidth ${bandwidth ? `${(bandwidth / 1e6).toFixed(1)} MB/s` : 'unlimited'}, ${runs} runs)\n`);
  console.log('| module | raw | gzip | brotli |\n|---|---|---|---|');
  for (const s of result.sizes) console.log(`| ${s.name} | ${kb(s.raw)} | ${kb(s.gzip)} | ${kb(s.brotli)} |`);
  console.log(`\nSample index: ${kb(result.index.size)} (${kb(result.index.downloaded)} gzip on the wire), stored in ${result.index.storage}.\n`);
  console.log('| time to first result (navigation start → first `search` resolved) | median |\n|---|---|');
  console.log(`| first visit (download, verify, store, open, query) | ${ms(result.firstVisitMs.median)} |`);
  console.log(`| repeat visit (open from OPFS, query) | ${ms(result.repeatVisitMs.median)} |`);
  console.log('\n| warm query | round trip median | p95 | in worker median |\n|---|---|---|---|');
  for (const [q, w] of Object.entries(result.warm)) {
    console.log(`| \`${q}\` | ${ms(w.roundTripMedianMs)} | ${ms(w.roundTripP95Ms)} | ${ms(w.inWorkerMedianMs)} |`);
  }
}

/** A site with the module and the Python docs index published (built if missing). */
function pythonSite() {
  const docs = '/usr/share/doc/python3.11/html';
  const out = path.join(ROOT, 'bench/out');
  const index = path.join(out, 'python-docs.gsx');
  if (!opens(index)) {
    if (!fs.existsSync(docs)) throw new Error(`${docs} is missing: apt-get install python3.11-doc`);
    fs.mkdirSync(out, { recursive: true });
    execFileSync(CLI, ['build', '--docs', docs, '--base-url', 'https://docs.python.org/3.11/', '--out', index, '--quiet'], { stdio: 'inherit' });
  }
  return publishedSite(index, path.join(out, 'python-site'));
}

/** Whether `index` exists and this build's CLI opens it (a format older
 * than this build's is refused: rebuild it). */
function opens(index) {
  if (!fs.existsSync(index)) return false;
  try {
    execFileSync(CLI, ['info', index], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A site with the ShareGPT chat index (`bench/importers.sh` builds it). */
function sharegptSite() {
  const index = path.join(ROOT, 'bench/out/sharegpt.gsx');
  if (!opens(index)) throw new Error(`${index} is missing or of an older format: run bench/importers.sh`);
  return publishedSite(index, path.join(ROOT, 'bench/out/sharegpt-site'));
}

/** A fresh site at `site`: the module (pkg/) and `index` published in data/. */
function publishedSite(index, site) {
  fs.rmSync(site, { recursive: true, force: true });
  fs.mkdirSync(site, { recursive: true });
  fs.cpSync(path.join(SITE, 'pkg'), path.join(site, 'pkg'), { recursive: true });
  execFileSync(CLI, ['publish', index, '--out-dir', path.join(site, 'data')]);
  return site;
}

async function lazyMain() {
  const only = args.includes('--corpus') ? args[args.indexOf('--corpus') + 1] : null;
  const pythonQueries = ['json dumps', 'asyncio queue', 'os.path.join', 'subprocess'];
  const sharegptQueries = ['python flask api', 'react useEffect cleanup', 'sql join', 'bokeh'];
  // --sites DIR[,DIR...]: sites already made (pkg/ and data/ of a published
  // Python-docs index, or with `--corpus sharegpt` of the ShareGPT index),
  // e.g. two builds compared in one run.
  const sites = args.includes('--sites') ? args[args.indexOf('--sites') + 1].split(',') : null;
  const corpora = sites
    ? sites.map((d) => ({ name: path.basename(d), siteRoot: path.resolve(d), queries: only === 'sharegpt' ? sharegptQueries : pythonQueries }))
    : [
        { name: 'sample', siteRoot: () => SITE, queries: ['payment', 'stripe lang:js', 'token OR session'] },
        { name: 'python-docs', siteRoot: pythonSite, queries: pythonQueries },
        // A large index (288 MB): lazy mode only (the full download is
        // 95 MB of gzip), and only when asked for (`--corpus sharegpt`).
        { name: 'sharegpt', siteRoot: sharegptSite, queries: sharegptQueries, lazyOnly: true, optIn: true },
      ]
        .filter((c) => (only ? c.name === only : !c.optIn))
        .map((c) => ({ ...c, siteRoot: c.siteRoot() }));
  const networks = [
    { name: 'local', latencyMs: 0, bandwidth: 0 },
    { name: '50ms_20mbit', latencyMs: 50, bandwidth: 2_500_000 },
  ].filter((n) => !args.includes('--throttled-only') || n.latencyMs);
  const rowOf = (c, n, visits, { preload, hint }) => {
    const manifest = JSON.parse(fs.readFileSync(path.join(c.siteRoot, 'data/manifest.json'), 'utf8'));
    const mode = (visits[0].info.storage === 'lazy' ? 'lazy' : 'full download') + (preload ? ', preloaded' : '') + (hint ? ', firstQuery' : '');
    const lz = visits.map((v) => v.info.lazy).filter(Boolean);
    const row = {
      corpus: c.name,
      network: n.name,
      mode,
      indexSize: manifest.size,
      gzipSize: manifest.compressedSize,
      hotPages: (manifest.hotPages || []).length,
      visits: visits.length,
      firstResultMs: { median: median(visits.map((v) => v.firstResultMs)), p90: pct(visits.map((v) => v.firstResultMs), 90) },
      openMs: median(visits.map((v) => v.openMs)),
      bytes: median(visits.map((v) => v.bytes)),
      requests: median(visits.map((v) => v.requests)),
      indexBytes: median(visits.map((v) => v.indexBytes)),
      indexRequests: median(visits.map((v) => v.indexRequests)),
      syncRequests: lz.length ? median(lz.map((l) => l.readRequests)) : 0,
      prefetchRounds: lz.length ? median(lz.map((l) => l.prefetchRounds)) : 0,
      perQuery: Object.fromEntries(c.queries.map((q, qi) => {
        const vs = visits.filter((_, k) => k % c.queries.length === qi);
        return [q, { firstResultMs: median(vs.map((v) => v.firstResultMs)), indexBytes: median(vs.map((v) => v.indexBytes)), indexRequests: median(vs.map((v) => v.indexRequests)) }];
      })),
    };
    console.error(`${c.name} ${n.name} ${mode}: ${row.firstResultMs.median.toFixed(0)} ms, ${(row.bytes / 1024).toFixed(0)} KiB, ${row.requests} requests (index ${(row.indexBytes / 1024).toFixed(0)} KiB in ${row.indexRequests})`);
    for (const [q, v] of Object.entries(row.perQuery)) console.error(`  ${q}: ${v.firstResultMs.toFixed(0)} ms, index ${(v.indexBytes / 1024).toFixed(0)} KiB in ${v.indexRequests}`);
    return row;
  };
  const rows = [];
  // Prepared sites are compared visit by visit (site A, site B, then the
  // next query), so a slow spell of the machine hits both alike; corpora
  // are measured one after the other.
  const groups = sites ? [corpora] : corpora.map((c) => [c]);
  for (const group of groups) {
    for (const n of networks) {
      // Lazy mode on a page without and with README's preload tags, then
      // the full download; --lazy-only drops the last, --preload-only
      // keeps only the second.
      let modes = [
        { storage: 'auto', preload: false },
        { storage: 'auto', preload: true },
        { storage: 'opfs', preload: false },
      ];
      if (args.includes('--lazy-only') || group.some((c) => c.lazyOnly)) modes = modes.filter((m) => m.storage === 'auto');
      if (args.includes('--preload-only')) modes = modes.filter((m) => m.preload);
      // --first-query: each lazy mode again, the page passing its query to
      // open({ firstQuery }).
      if (args.includes('--first-query')) modes.push(...modes.filter((m) => m.storage === 'auto').map((m) => ({ ...m, hint: true })));
      // Modes and sites alternate visit by visit too.
      const visits = new Map(modes.map((m) => [m, new Map(group.map((c) => [c, []]))]));
      for (let i = 0; i < runs; i++) {
        for (const query of group[0].queries) {
          for (const m of modes) {
            for (const c of group) {
              visits.get(m).get(c).push(await coldVisit({ siteRoot: c.siteRoot, query, storage: m.storage, preload: m.preload, hint: m.hint, latencyMs: n.latencyMs, bandwidth: n.bandwidth, sharedBandwidth: args.includes('--shared-link') }));
            }
          }
        }
      }
      for (const m of modes) for (const c of group) rows.push(rowOf(c, n, visits.get(m).get(c), m));
    }
  }
  const result = {
    command: ['node', 'bench/browser.mjs', ...args].join(' '),
    machine: `${os.cpus().length} cores (${os.cpus()[0].model.trim()}), ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, ${os.type()} ${os.release()}`,
    date: new Date().toISOString().slice(0, 10),
    runs,
    sizes: sizes(),
    rows,
  };
  // A comparison of prepared sites is not the recorded benchmark.
  if (!sites) {
    const file = path.join(ROOT, 'bench/results.json');
    const all = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
    // A run replaces the rows of the corpora it measured and keeps the
    // others; each row keeps the command that made it.
    for (const r of rows) r.command = result.command;
    const measured = new Set(rows.map((r) => r.corpus));
    if (all.lazy) result.rows = [...all.lazy.rows.filter((r) => !measured.has(r.corpus)).map((r) => ({ command: all.lazy.command, ...r })), ...rows];
    all.lazy = result;
    const sorted = Object.fromEntries(Object.keys(all).sort().map((k) => [k, all[k]]));
    fs.writeFileSync(file, JSON.stringify(sorted, null, 2) + '\n');
  }
  const kb = (n) => `${(n / 1024).toFixed(0)} KiB`;
  console.log('| index | network | mode | first result (median / p90) | bytes on the wire (all) | requests (all) | index bytes | index requests | sync / batched rounds |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(`| ${r.corpus} | ${r.network} | ${r.mode} | ${r.firstResultMs.median.toFixed(0)} / ${r.firstResultMs.p90.toFixed(0)} ms | ${kb(r.bytes)} | ${r.requests} | ${kb(r.indexBytes)} | ${r.indexRequests} | ${r.syncRequests} / ${r.prefetchRounds} |`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
