#!/usr/bin/env node
// Browser module benchmark: module size, first-visit and repeat-visit time
// to first result, and warm query latency, in headless Chromium on the
// demo site (www/dist, built by ./build.sh).
//
//   node bench/browser.mjs [--latency MS] [--bandwidth BYTES_PER_S] [--runs N]
//
// Latency is added to every response by the test server (www/serve.mjs);
// bandwidth caps each response. Results print as Markdown and are merged
// into bench/results.json under `browser` (or `browser_<latency>ms_<bw>`
// for a throttled run), other keys kept.

import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { startServer } from '../www/serve.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SITE = path.join(ROOT, 'www/dist');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const latencyMs = opt('--latency', 0);
const bandwidth = opt('--bandwidth', 0);
const runs = opt('--runs', 5);
if (!fs.existsSync(path.join(SITE, 'pkg/index.js'))) {
  console.error('error: www/dist is missing; run ./build.sh first');
  process.exit(1);
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
    const engine = await GitSenseSearch.open({ manifestUrl: '/data/manifest.json' });
    const opened = performance.now();
    await engine.search('payment');
    const first = performance.now();
    window.engine = engine;
    return { opened, first, info: await engine.info() };
  });
  return { page, ...r };
}

async function main() {
  fs.writeFileSync(path.join(SITE, 'bench.html'), '<!doctype html><meta charset="utf-8"><title>bench</title>');
  const server = await startServer({ root: SITE, port: 0, latencyMs, bandwidth });
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

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
