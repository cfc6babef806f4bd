#!/usr/bin/env node
// The worker's page inflater against the browser's own, side by side in
// Chromium: `inflateRaw` (src/js/lazy.js, synchronous) and
// `DecompressionStream('deflate-raw')`, one stream per page (every page is
// its own raw-DEFLATE stream in the packed file), on the same pages.
//
//   node bench/inflate_ab.mjs INDEX.gsx [ROUNDS] [BATCH]
//
// Each page of INDEX is deflated as `publish` packs it (raw DEFLATE, level
// 9). Each round inflates batches of BATCH pages (default 64, one warm-up
// round, as many pages as a request of the warm-up brings) with each
// decoder in turn: `inflateRaw` page after page; the stream decoder with
// the batch's pages in flight at once (what a round would do) and one
// after another. Prints the median per page and per batch for each, and
// checks that every page inflates to the same bytes both ways.

import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { chromium } from 'playwright-core';
import { startServer } from '../www/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS } from '../tests/browser/chromium.mjs';

const [indexArg, roundsArg, batchArg] = process.argv.slice(2);
if (!indexArg) {
  console.error(fs.readFileSync(new URL(import.meta.url), 'utf8').split('\n').slice(1, 16).join('\n').replace(/^\/\/ ?/gm, ''));
  process.exit(2);
}
const rounds = Number(roundsArg || 7);
const batch = Number(batchArg || 64);
const raw = fs.readFileSync(indexArg);
const pageSize = raw.readUInt16BE(16) === 1 ? 65536 : raw.readUInt16BE(16);
const pages = [];
for (let at = 0; at + pageSize <= raw.length; at += pageSize) {
  pages.push(zlib.deflateRawSync(raw.subarray(at, at + pageSize), { level: 9 }));
}
const packed = Buffer.concat(pages);
const lengths = pages.map((p) => p.length);

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const dir = fs.mkdtempSync('/tmp/inflate-ab-');
fs.writeFileSync(path.join(dir, 'pages.bin'), packed);
fs.copyFileSync(path.join(root, 'src', 'js', 'lazy.js'), path.join(dir, 'lazy.js'));
fs.writeFileSync(path.join(dir, 'blank.html'), '<!doctype html><meta charset="utf-8"><title>blank</title>');
const server = await startServer({ root: dir, port: 0 });

const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
try {
  const page = await browser.newPage();
  await page.goto(`${server.url}/blank.html`);
  const out = await page.evaluate(async ({ url, lengths, pageSize, rounds, batch }) => {
    const { inflateRaw } = await import('/lazy.js');
    const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
    const offsets = [];
    let at = 0;
    for (const n of lengths) { offsets.push(at); at += n; }
    const slice = (i) => bytes.subarray(offsets[i], offsets[i] + lengths[i]);
    const viaStream = async (i) => {
      const s = new Blob([slice(i)]).stream().pipeThrough(new DecompressionStream('deflate-raw'));
      return new Uint8Array(await new Response(s).arrayBuffer());
    };
    // Same bytes both ways, on every page.
    for (let i = 0; i < lengths.length; i++) {
      const a = new Uint8Array(pageSize);
      inflateRaw(slice(i), a);
      const b = await viaStream(i);
      if (b.length !== pageSize || a.some((x, k) => x !== b[k])) throw new Error(`page ${i + 1} differs`);
    }
    const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
    const batches = [];
    for (let s = 0; s + batch <= lengths.length; s += batch) batches.push(s);
    const t = { inflateRaw: [], streamParallel: [], streamSerial: [] };
    for (let r = 0; r <= rounds; r++) {
      for (const s of batches) {
        let t0 = performance.now();
        for (let i = s; i < s + batch; i++) inflateRaw(slice(i), new Uint8Array(pageSize));
        const a = performance.now() - t0;
        t0 = performance.now();
        await Promise.all(Array.from({ length: batch }, (_, k) => viaStream(s + k)));
        const b = performance.now() - t0;
        t0 = performance.now();
        for (let i = s; i < s + batch; i++) await viaStream(i);
        const c = performance.now() - t0;
        if (r > 0) { t.inflateRaw.push(a); t.streamParallel.push(b); t.streamSerial.push(c); }
      }
    }
    return Object.fromEntries(Object.entries(t).map(([k, v]) => [k, median(v)]));
  }, { url: '/pages.bin', lengths, pageSize, rounds, batch });
  console.log(`${path.basename(indexArg)}: ${lengths.length} pages of ${pageSize} B, packed ${packed.length} B; batches of ${batch}, median of ${rounds} rounds`);
  for (const [k, v] of Object.entries(out)) {
    console.log(`  ${k.padEnd(15)} ${v.toFixed(2).padStart(8)} ms a batch  ${(v * 1000 / batch).toFixed(1).padStart(7)} µs a page  ${(v / out.inflateRaw).toFixed(2)}×`);
  }
} finally {
  await browser.close();
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
