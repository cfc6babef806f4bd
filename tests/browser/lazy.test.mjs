// Lazy mode in headless Chromium against the test server: the first answer
// comes before the download could finish, results equal the CLI's, the
// background fill lands in OPFS and the next visit reads no index bytes,
// servers that cannot serve ranges fall back to the full download, an
// interrupted fill resumes, and a republished index never mixes versions.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import crypto from 'node:crypto';
import { setup, publish, withRawIndex, cli, call, openEngine, closePage, clearStorage, SAMPLE_INDEX, HOSTILE_INDEX, FIXTURES } from './harness.mjs';
import { firstVisitHot, readFirstVisitHot, inflateRaw, inflateRuns, FILL_DIRECTORY } from '../../src/js/lazy.js';

let site;
let manifest;
before(async () => {
  site = await setup();
  manifest = JSON.parse(fs.readFileSync(path.join(site.root, 'data/manifest.json'), 'utf8'));
});
after(async () => {
  await site.close();
});

/** The hot file of `index` published at `dir` as format 1 lays it out:
 * the hot pages as they are, then the packed file's page lengths. The
 * pages are read from the index (only the engine decodes hotFormat 2: the
 * Rust tests check that it gives these pages); the lengths follow the
 * encoded pages, whose lengths lead the file. */
function hotFile(dir, m, index) {
  const bytes = zlib.gunzipSync(fs.readFileSync(path.join(dir, m.hotFile)));
  assert.equal(m.hotFormat, 2, 'publish encodes the hot pages');
  const raw = fs.readFileSync(index);
  const end = m.hotPages.reduce((at, _, i) => at + bytes.readUInt32LE(4 * i), 4 * m.hotPages.length);
  return Buffer.concat([...m.hotPages.map((p) => raw.subarray((p - 1) * m.pageSize, p * m.pageSize)), bytes.subarray(end)]);
}

/** The packed file's page lengths, as they follow the hot pages in the (decoded) hot file. */
function packedLengths(hot, m) {
  const tail = hot.subarray(m.hotPages.length * m.pageSize);
  assert.equal(tail.length, 2 * m.pageCount);
  return Array.from({ length: m.pageCount }, (_, i) => (tail[i] | (tail[m.pageCount + i] << 8)) + 1);
}

function serverDefaults() {
  Object.assign(site.server.options, { latencyMs: 0, bandwidth: 0, range: true, multiRange: true, gzipRanges: false, contentLength: true, block: [], dropFirst: null, stall: [], delay: [] });
}

/** Fresh page on an empty origin storage, server back to normal. */
async function freshPage() {
  serverDefaults();
  // A failed test may have left its page (and its hold on OPFS) open.
  for (const p of site.context.pages()) await closePage(p);
  const page = await site.blank();
  assert.equal(await clearStorage(page), 'ok');
  site.server.reset();
  return page;
}

/**
 * Bytes and requests of the index files (raw, packed pages, hot pages)
 * served so far; `whole`: the full downloads among them (a gzip index, or
 * the packed file asked for without Range).
 */
function indexTraffic() {
  const s = site.server.stats();
  const whole = site.server.log().filter((r) => /\.(gsx\.gz|pages)$/.test(r.path) && !r.range);
  const pick = (re) => Object.entries(s.bytesByPath).filter(([p]) => re.test(p));
  const bytes = (re) => pick(re).reduce((n, [, b]) => n + b, 0);
  const requests = (re) => Object.entries(s.byPath).filter(([p]) => re.test(p)).reduce((n, [, c]) => n + c, 0);
  return {
    raw: bytes(/\.gsx$/),
    rawRequests: requests(/\.gsx$/),
    packed: bytes(/\.pages$/),
    packedRequests: requests(/\.pages$/),
    hot: bytes(/\.hot\.gz$/),
    whole: whole.reduce((n, r) => n + r.bytes, 0),
    wholeRequests: whole.length,
  };
}

/** Resolves with the detail of the engine's next 'fill' or 'fillerror' event. */
function nextFill(page) {
  return page.evaluate(
    () =>
      new Promise((resolve) => {
        window.engine.addEventListener('fill', (e) => resolve({ type: 'fill', detail: e.detail }), { once: true });
        window.engine.addEventListener('fillerror', (e) => resolve({ type: 'fillerror', detail: e.detail.toJSON() }), { once: true });
      }),
  );
}

const QUERIES = [
  ['payment', {}],
  ['payment', { perPage: 3, page: 2 }],
  ['stripe lang:js', {}],
  ['"form validation"', { highlight: 'raw' }],
  ['in:chats payment', {}],
  ['auth* -test msg-type:git-blob', { includeContent: false }],
  ['msg-type:regular', { perPage: 5 }],
  ['token OR session', {}],
  ['nothing-matches-this-zzzz', {}],
];

// Answers compared with the CLI's are searched without a time budget on
// either side: on a loaded machine the browser's 150 ms would cut some
// short (truncated), which is right for a reader and noise for a test.
const UNBOUNDED = { timeBudgetMs: 0 };

function cliJson(query, o) {
  const args = ['search', SAMPLE_INDEX, query, '--format', 'json', '--time-budget-ms', '0'];
  if (o.perPage) args.push('--per-page', String(o.perPage));
  if (o.page) args.push('--page', String(o.page));
  if (o.highlight) args.push('--highlight', o.highlight);
  if (o.includeContent === false) args.push('--no-content');
  return cli(...args).replace(/\n$/, '');
}

/** The error GitSenseSearch.open(options) fails with in the page (null if it opens). */
function openError(page, options) {
  return page.evaluate(async (options) => {
    const { GitSenseSearch } = await import('/pkg/index.js');
    try {
      await GitSenseSearch.open(options);
      return null;
    } catch (e) {
      return e.toJSON();
    }
  }, options);
}

/** Runs `queries` in the page: each answer must be the CLI's JSON byte for
 * byte, with no synchronous page read; resolves info() after them. */
async function answersLikeCli(page, index, queries) {
  for (const q of queries) {
    const { value: json, error } = await call(page, 'searchJson', q, UNBOUNDED);
    assert.equal(error, undefined, `${q}: ${JSON.stringify(error)}`);
    assert.equal(json, cli('search', index, q, '--format', 'json', '--time-budget-ms', '0').replace(/\n$/, ''), q);
  }
  const { value: info } = await call(page, 'info');
  assert.equal(info.lazy.readRequests, 0, `no synchronous reads: ${JSON.stringify(info.lazy)}`);
  return info;
}

// The first answers without SQLite: the reader (crates/engine/src/reader.rs)
// reads the index's own structures, each attempt's missing pages fetched in
// one round; SQLite is set up only for a search the reader cannot run.
test('plain queries are answered by the reader without setting SQLite up, in batched rounds, the CLI\'s answers; a filter sets SQLite up', async () => {
  const page = await freshPage();
  const opened = await openEngine(page, { lazyFill: false });
  assert.equal(opened.storage, 'lazy');
  assert.equal(opened.sqliteOpen, false, `opening reads the index without SQLite: ${JSON.stringify(opened)}`);
  const byReader = [['payment', {}], ['payment', { perPage: 3, page: 2 }], ['"form validation"', { highlight: 'raw' }], ['in:chats payment', {}], ['token OR session', {}], ['auth*', { includeContent: false }]];
  for (const [q, o] of byReader) {
    const { value: json, error } = await call(page, 'searchJson', q, { ...o, ...UNBOUNDED });
    assert.equal(error, undefined, `${q}: ${JSON.stringify(error)}`);
    assert.equal(json, cliJson(q, o), `${q} ${JSON.stringify(o)}`);
    const { value: info } = await call(page, 'info');
    assert.equal(info.timings.lastSearchBy, 'reader', q);
    assert.equal(info.sqliteOpen, false, `${q}: SQLite is not set up`);
    assert.equal(info.lazy.readRequests, 0, `${q}: no synchronous reads: ${JSON.stringify(info.lazy)}`);
  }
  const { value: json, error } = await call(page, 'searchJson', 'stripe lang:js', UNBOUNDED);
  assert.equal(error, undefined, JSON.stringify(error));
  assert.equal(json, cliJson('stripe lang:js', {}));
  let { value: info } = await call(page, 'info');
  assert.equal(info.timings.lastSearchBy, 'sqlite', 'a filter is SQLite\'s');
  assert.equal(info.sqliteOpen, true);
  await call(page, 'searchJson', 'payment', UNBOUNDED);
  ({ value: info } = await call(page, 'info'));
  assert.equal(info.timings.lastSearchBy, 'reader', 'the reader goes on answering what it can');
  await closePage(page);
});

test('a first visit answers lazily before the whole index could have downloaded', async () => {
  const page = await freshPage();
  // 20 ms per response and 2 MB/s: the whole index alone would take ~0.5 s.
  // The module (in the HTTP cache from clear(), revalidated) comes after
  // the index's first requests, as the biggest file does on a network.
  Object.assign(site.server.options, { latencyMs: 20, bandwidth: 2_000_000, delay: [{ match: /\.wasm$/, ms: 300 }] });
  const info = await openEngine(page);
  const { value: first } = await call(page, 'search', 'payment', {});
  const atFirst = indexTraffic();
  assert.equal(info.storage, 'lazy');
  assert.equal(info.source, 'lazy');
  assert.equal(info.lazy.state, 'filling');
  assert.equal(info.lazy.hotPages, manifest.hotPages.length, 'hot pages came with the prefetch');
  // The worker opened the fill files while the module loaded; the hot
  // pages wait in memory until the fill starts.
  assert.equal(info.lazy.fillPrepared, true, JSON.stringify(info.lazy));
  assert.ok(info.lazy.pagesStored + info.lazy.pagesCached >= manifest.hotPages.length, `${info.lazy.pagesStored} pages stored, ${info.lazy.pagesCached} in memory at open`);
  // With the prefetch there before the module (as on any network), the
  // session opened without browser storage, which is set up when the
  // background copy starts (its setup does not take turns with the first
  // query's work).
  assert.match(info.storageReason, /set up when the background copy starts/);
  assert.equal(info.timings.storageMs, 0, JSON.stringify(info.timings));
  assert.ok(first.totalResultsReturned > 0);
  // What reached the browser for the first answer: hot pages and a few
  // ranges, a fraction of the index (3 MB raw, 1.1 MB packed).
  const fetched = atFirst.raw + atFirst.packed + atFirst.hot;
  assert.ok(fetched < manifest.size / 4, `${fetched} bytes of ${manifest.size} before the first answer`);
  assert.ok(fetched < manifest.compressedSize, `${fetched} bytes, less than the whole download (${manifest.compressedSize})`);
  assert.equal(atFirst.wholeRequests, 0, 'the whole index is not downloaded');
  const { value: after } = await call(page, 'info');
  assert.ok(after.lazy.readRequests + after.lazy.prefetchRequests < 30, JSON.stringify(after.lazy));
  await closePage(page);
});

test('a first visit asks for the hot pages alongside the manifest (manifest.hot.gz) and uses them only with that very manifest', async () => {
  const m = publish(site, SAMPLE_INDEX, 'first-visit');
  // Another index whose first visit's file is big (many hot pages).
  const other = publish(site, path.join(FIXTURES, 'vocab.gsx'), 'first-visit-other');
  const dir = path.join(site.root, 'first-visit');
  const manifestUrl = '/first-visit/manifest.json';
  const first = '/first-visit/manifest.hot.gz';
  const named = `/first-visit/${m.hotFile}`;
  const visit = async (page, queries = ['payment', 'token OR session']) => {
    const info = await openEngine(page, { manifestUrl, lazyFill: false });
    assert.equal(info.storage, 'lazy');
    assert.equal(info.lazy.hotPages, m.hotPages.length, 'the hot pages came with the prefetch');
    await answersLikeCli(page, SAMPLE_INDEX, queries);
    return site.server.stats().byPath;
  };

  // The manifest comes 600 ms late: the first visit's file is asked for
  // at once, not after it, and the named hot file not at all.
  let page = await freshPage();
  site.server.options.delay = [{ match: /\/first-visit\/manifest\.json$/, ms: 600 }];
  let byPath = await visit(page);
  assert.equal(byPath[first], 1, JSON.stringify(byPath));
  assert.equal(byPath[named], undefined, JSON.stringify(byPath));
  const log = site.server.log();
  const at = (p) => log.find((e) => e.path === p);
  assert.ok(at(first).at < at(manifestUrl).done - 300, `asked for at ${at(first).at}, the manifest done at ${at(manifestUrl).done}`);
  await closePage(page);

  // Another index's file under that name (published in between, or a
  // stale copy in some cache): its manifest is not this one, so its pages
  // are left out and the named hot file read; the answers stay this
  // index's. Its download stops once the manifest in it is read (200 KB/s
  // a response: the whole file would take most of a second).
  const stale = fs.statSync(path.join(site.root, 'first-visit-other', 'manifest.hot.gz')).size;
  assert.ok(stale > 100_000, `${stale} bytes`);
  fs.copyFileSync(path.join(site.root, 'first-visit-other', 'manifest.hot.gz'), path.join(dir, 'manifest.hot.gz'));
  assert.notEqual(other.sha256, m.sha256);
  page = await freshPage();
  site.server.options.bandwidth = 200_000;
  byPath = await visit(page);
  assert.equal(byPath[first], 1);
  assert.equal(byPath[named], 1, JSON.stringify(byPath));
  const served = site.server.stats().bytesByPath[first];
  assert.ok(served < stale / 2, `${served} of the stale file's ${stale} bytes sent`);
  await closePage(page);

  // Not there (an index published before it existed): the named hot file
  // (now from the HTTP cache: immutable).
  fs.rmSync(path.join(dir, 'manifest.hot.gz'));
  page = await freshPage();
  byPath = await visit(page, ['payment']);
  // (Twice, here: the download stopped above left a truncated entry in
  // the HTTP cache, which Chromium first tries to complete with a range.)
  assert.ok(byPath[first] >= 1, JSON.stringify(byPath));
  await closePage(page);

  // The origin opened this index before (its mark), nothing is stored
  // (no fill): the manifest first, then the named hot file (which the
  // HTTP cache may hold, as here); the first visit's file is not asked for.
  page = await site.blank();
  site.server.reset();
  byPath = await visit(page, ['payment']);
  assert.equal(byPath[first], undefined, JSON.stringify(byPath));
  await closePage(page);

  // A manifest URL that does not end in .json: no file to guess, none
  // asked for; the named hot file.
  publish(site, SAMPLE_INDEX, 'first-visit');
  fs.copyFileSync(path.join(dir, 'manifest.json'), path.join(dir, 'manifest.txt'));
  page = await freshPage();
  const info = await openEngine(page, { manifestUrl: '/first-visit/manifest.txt', lazyFill: false });
  assert.equal(info.lazy.hotPages, m.hotPages.length);
  await answersLikeCli(page, SAMPLE_INDEX, ['payment']);
  byPath = site.server.stats().byPath;
  assert.deepEqual(Object.keys(byPath).filter((p) => p.endsWith('manifest.hot.gz') || p.endsWith('manifest.txt.hot.gz')), [], JSON.stringify(byPath));
  await closePage(page);
});

test('firstVisitHot: the hot bytes only behind the manifest given, byte for byte', () => {
  const manifestText = '{"sha256":"ab"}\n';
  const file = (magic, text, hot, len = Buffer.byteLength(text)) => {
    const head = Buffer.alloc(12);
    head.write(magic, 0, 'latin1');
    head.writeUInt32LE(len, 8);
    const b = Buffer.concat([head, Buffer.from(text), Buffer.from(hot)]);
    return new Uint8Array(b.buffer, b.byteOffset, b.length);
  };
  assert.deepEqual([...firstVisitHot(file('GSXHOT1\n', manifestText, [1, 2, 3]), manifestText)], [1, 2, 3]);
  assert.equal(firstVisitHot(file('GSXHOT1\n', manifestText, [1, 2, 3]), manifestText.trim()), null, 'another text');
  assert.equal(firstVisitHot(file('GSXHOT2\n', manifestText, [1]), manifestText), null, 'another magic');
  assert.equal(firstVisitHot(file('GSXHOT1\n', manifestText, [], 1000), manifestText), null, 'length past the end');
  assert.equal(firstVisitHot(new Uint8Array(5), manifestText), null, 'cut short');
  const bad = file('GSXHOT1\n', manifestText, [7]);
  bad[12] = 0xff;
  assert.equal(firstVisitHot(bad, manifestText), null, 'not UTF-8');
});

test('readFirstVisitHot: the hot bytes of a first visit\'s file behind this manifest, null otherwise', async () => {
  // (Whether it stops the download early is checked in Chromium, above:
  // node's DecompressionStream reads its whole input ahead.)
  const manifestText = JSON.stringify({ sha256: 'cd'.repeat(32), hotPages: [1, 2, 3] }) + '\n';
  const hot = new Uint8Array(crypto.randomBytes(200_000));
  const gz = (text, magic = 'GSXHOT1\n') => {
    const head = Buffer.alloc(12);
    head.write(magic, 0, 'latin1');
    head.writeUInt32LE(Buffer.byteLength(text), 8);
    return zlib.gzipSync(Buffer.concat([head, Buffer.from(text), hot]));
  };
  // Served 4 KB a chunk.
  const res = (bytes) =>
    new Response(
      new ReadableStream({
        start(c) {
          for (let at = 0; at < bytes.length; at += 4096) c.enqueue(new Uint8Array(bytes.subarray(at, at + 4096)));
          c.close();
        },
      }),
    );
  const got = await readFirstVisitHot(res(gz(manifestText)), manifestText);
  assert.ok(got && Buffer.from(got).equals(Buffer.from(hot)), 'the hot bytes');
  assert.equal(await readFirstVisitHot(res(gz(manifestText.replace('cd', 'ef'))), manifestText), null, 'another manifest');
  assert.equal(await readFirstVisitHot(res(gz(manifestText, 'GSXHOT9\n')), manifestText), null, 'another magic');
  assert.equal(await readFirstVisitHot(res(zlib.gzipSync(Buffer.from('<!doctype html>' + 'x'.repeat(100_000)))), manifestText), null, 'an HTML page');
  assert.equal(await readFirstVisitHot(res(gz(manifestText).subarray(0, 3000)), manifestText), null, 'cut short');
  assert.equal(await readFirstVisitHot(new Response('plain text, not gzip'), manifestText), null, 'not gzip');
});

test('the worker opens the fill files as soon as the manifest is in, while the hot pages are on the way', async () => {
  const page = await freshPage();
  // The hot pages come 1.5 s late; the fill files must not wait for them.
  Object.assign(site.server.options, { delay: [{ match: /\.hot\.gz$/, ms: 1500 }] });
  const early = await page.evaluate(async () => {
    const { GitSenseSearch } = await import('/pkg/index.js');
    window.opening = GitSenseSearch.open({ manifestUrl: '/data/manifest.json', lazyFill: false });
    const files = async () => {
      try {
        const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('.gitsense-search-lazy');
        const names = [];
        for await (const name of dir.keys()) names.push(name);
        return names;
      } catch {
        return [];
      }
    };
    const t0 = performance.now();
    while (performance.now() - t0 < 1200) {
      const names = await files();
      if (names.some((n) => n.endsWith('.part')) && names.some((n) => n.endsWith('.map'))) return { names, ms: performance.now() - t0 };
      await new Promise((r) => setTimeout(r, 10));
    }
    return { names: await files(), ms: null };
  });
  assert.ok(early.ms !== null, `no fill files before the hot pages arrived: ${JSON.stringify(early.names)}`);
  assert.equal(indexTraffic().hot, 0, 'the hot pages had not arrived yet');
  // The files opened early are the ones the session fills (the hot pages
  // land in them once the fill starts) and the first answer is the CLI's.
  const info = await page.evaluate(async () => {
    window.engine = await window.opening;
    return window.engine.info();
  });
  assert.equal(info.storage, 'lazy');
  assert.equal(info.lazy.fillPrepared, true, JSON.stringify(info.lazy));
  assert.ok(info.lazy.pagesStored + info.lazy.pagesCached >= manifest.hotPages.length, `${info.lazy.pagesStored} pages stored, ${info.lazy.pagesCached} in memory at open`);
  const { value: json, error } = await call(page, 'searchJson', 'payment', UNBOUNDED);
  assert.equal(error, undefined, JSON.stringify(error));
  assert.equal(json, cliJson('payment', {}));
  await closePage(page);
});

test('a page with README\'s preload tags: the engine uses each preloaded response (one request each, one fetch in the page), answers lazily, the CLI\'s answers', async () => {
  const page = await freshPage();
  await closePage(page);
  // Published afresh, so the manifest and index are not in the HTTP cache.
  publish(site, SAMPLE_INDEX, 'preloaded');
  const manifestPath = '/preloaded/manifest.json';
  const tags = [
    '<link rel="modulepreload" href="/pkg/index.js">',
    '<link rel="preload" href="/pkg/gitsense_search_bg.wasm" as="fetch" type="application/wasm" crossorigin>',
    '<link rel="modulepreload" href="/pkg/lazy.js">',
    `<link rel="preload" href="${manifestPath}" as="fetch" crossorigin>`,
  ];
  const queries = ['payment', 'stripe lang:js', 'token OR session'];
  const script = `<script type="module">
window.__done = (async () => {
  const { GitSenseSearch } = await import('/pkg/index.js');
  const engine = await GitSenseSearch.open({ manifestUrl: ${JSON.stringify(manifestPath)}, lazyFill: false });
  const answers = [];
  for (const q of ${JSON.stringify(queries)}) answers.push(await engine.searchJson(q, { timeBudgetMs: 0 }));
  return { info: await engine.info(), answers };
})().catch((e) => ({ error: String(e && (e.stack || e.message) || e) }));
</script>`;
  fs.writeFileSync(path.join(site.root, 'preloaded.html'), `<!doctype html><meta charset="utf-8"><title>preloaded</title>${tags.join('')}${script}`);
  site.server.reset();
  const p = await site.page(null);
  await p.goto(`${site.url}preloaded.html`, { waitUntil: 'commit' });
  await p.waitForFunction(() => window.__done !== undefined);
  const r = await p.evaluate(() => window.__done);
  assert.equal(r.error, undefined, r.error);
  assert.equal(r.info.storage, 'lazy');
  queries.forEach((q, i) => assert.equal(r.answers[i], cli('search', SAMPLE_INDEX, q, '--format', 'json', '--time-budget-ms', '0').replace(/\n$/, ''), q));
  // The manifest is revalidated on every fetch: the server sees each one.
  assert.equal(site.server.stats().byPath[manifestPath], 1, JSON.stringify(site.server.stats().byPath));
  // A preload the engine did not use shows as a second fetch of its URL
  // (whether or not the HTTP cache answered it).
  const fetched = await p.evaluate(() => performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname));
  for (const u of ['/pkg/index.js', '/pkg/gitsense_search_bg.wasm', '/pkg/lazy.js', manifestPath]) {
    assert.equal(fetched.filter((f) => f === u).length, 1, `${u}: ${fetched.join(', ')}`);
  }
  await closePage(p);
});

test('leaf-end hashes not at hand are not fetched for: the warm-up fetches the next leaves instead, no synchronous read, the CLI\'s answers', async () => {
  const index = path.join(FIXTURES, 'vocab.gsx');
  const facts = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'vocab.json'), 'utf8'));
  assert.ok(facts.leafEndsPages.length > 0);
  publish(site, index, 'vocab-noends');
  // The same index with fts_leaf_ends left out of the hot pages.
  const root = path.join(site.root, 'vocab-noends');
  const m = JSON.parse(fs.readFileSync(path.join(root, 'manifest.json'), 'utf8'));
  assert.ok(facts.leafEndsPages.every((p) => m.hotPages.includes(p)), 'published hot, as small tables are');
  const hot = hotFile(root, m, index);
  const keep = m.hotPages.map((p, i) => [p, i]).filter(([p]) => !facts.leafEndsPages.includes(p));
  // (The packed file's page lengths follow the hot pages.)
  const lengths = hot.subarray(m.hotPages.length * m.pageSize);
  assert.equal(lengths.length, 2 * m.pageCount);
  // Written back as hot files were before hotFormat 2 (the pages as they
  // are), which the engine still reads.
  fs.writeFileSync(path.join(root, m.hotFile), zlib.gzipSync(Buffer.concat([...keep.map(([, i]) => hot.subarray(i * m.pageSize, (i + 1) * m.pageSize)), lengths])));
  delete m.hotFormat;
  m.hotPages = keep.map(([p]) => p);
  fs.writeFileSync(path.join(root, 'manifest.json'), JSON.stringify(m));
  const page = await freshPage();
  const info = await openEngine(page, { manifestUrl: '/vocab-noends/manifest.json', lazyFill: false });
  assert.equal(info.storage, 'lazy');
  assert.equal(info.lazy.hotPages, m.hotPages.length);
  await answersLikeCli(page, index, facts.queries);
  await closePage(page);
});

test('the engine decodes the hot file (hotFormat 2); one cut short or with a page of an unknown codec is refused (download.corrupt in info().lazy.hotOff) and a site with a raw index answers by range reads of it, the CLI\'s answers', async () => {
  publish(site, SAMPLE_INDEX, 'hot-corrupt');
  // (Without the hot file's page lengths the packed file cannot be read:
  // the raw index serves the visit.)
  const m = withRawIndex(site, 'hot-corrupt', fs.readFileSync(SAMPLE_INDEX));
  const dir = path.join(site.root, 'hot-corrupt');
  const manifestText = fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8');
  const bytes = zlib.gunzipSync(fs.readFileSync(path.join(dir, m.hotFile)));
  // Each encoded page's length leads the file, each page its codec byte:
  // 1 (deltas) for the interior table pages.
  let at = 4 * m.hotPages.length;
  const codecs = m.hotPages.map((_, i) => {
    const codec = bytes[at];
    at += bytes.readUInt32LE(4 * i);
    return codec;
  });
  assert.ok(codecs.includes(1), 'interior table pages came as deltas');
  const visit = async (expectOff) => {
    const page = await freshPage();
    const info = await openEngine(page, { manifestUrl: '/hot-corrupt/manifest.json', lazyFill: false });
    assert.equal(info.storage, 'lazy');
    if (expectOff) {
      assert.match(info.lazy.hotOff || '', /^download\.corrupt: the hot file's pages do not decode/, JSON.stringify(info.lazy));
      assert.equal(info.lazy.hotPages, 0, 'no hot page used');
    } else {
      assert.ok(!info.lazy.hotOff, JSON.stringify(info.lazy));
      assert.equal(info.lazy.hotPages, m.hotPages.length, 'every hot page decoded and used');
    }
    if (!expectOff) {
      await answersLikeCli(page, SAMPLE_INDEX, ['payment', 'token OR session']);
      return closePage(page);
    }
    // Without the hot pages, the pages the warm-up does not foresee are
    // read synchronously.
    for (const [query, options] of QUERIES.slice(0, 4)) {
      const { value: json, error } = await call(page, 'searchJson', query, { ...options, ...UNBOUNDED });
      assert.equal(error, undefined, `${query}: ${JSON.stringify(error)}`);
      assert.equal(json, cliJson(query, options), query);
    }
    const { value: after } = await call(page, 'info');
    assert.ok(after.lazy.readRequests > 0, JSON.stringify(after.lazy));
    await closePage(page);
  };
  await visit(false);
  // The first visit's file holding a hot file whose first delta-encoded
  // page has an unknown codec byte.
  const odd = Buffer.from(bytes);
  at = 4 * m.hotPages.length;
  for (let i = 0; codecs[i] !== 1; i++) at += bytes.readUInt32LE(4 * i);
  odd[at] = 7;
  const len = Buffer.alloc(4);
  len.writeUInt32LE(Buffer.byteLength(manifestText));
  fs.writeFileSync(path.join(dir, 'manifest.hot.gz'), zlib.gzipSync(Buffer.concat([Buffer.from('GSXHOT1\n'), len, Buffer.from(manifestText), odd])));
  await visit(true);
  // The named hot file (no first visit's file) cut short inside its pages.
  fs.rmSync(path.join(dir, 'manifest.hot.gz'));
  fs.writeFileSync(path.join(dir, m.hotFile), zlib.gzipSync(bytes.subarray(0, 4 * m.hotPages.length + 10)));
  await visit(true);
});

test('the packed file inflates to the index\'s own pages (lazy.js inflateRaw, every page), and a page that does not inflate is refused', () => {
  for (const [index, dir] of [[SAMPLE_INDEX, 'inflate-sample'], [path.join(FIXTURES, 'vocab.gsx'), 'inflate-vocab']]) {
    const m = publish(site, index, dir);
    const root = path.join(site.root, dir);
    const raw = fs.readFileSync(index);
    const packed = fs.readFileSync(path.join(root, m.packedFile));
    const lengths = packedLengths(hotFile(root, m, index), m);
    // Runs of up to 7 pages, as a round asks for them.
    const answers = [];
    const counts = [];
    for (let p = 0, at = 0; p < m.pageCount; p += 7) {
      const count = Math.min(7, m.pageCount - p);
      const size = lengths.slice(p, p + count).reduce((a, b) => a + b, 0);
      answers.push(new Uint8Array(packed.buffer, packed.byteOffset + at, size));
      counts.push(count);
      at += size;
    }
    const runs = inflateRuns(answers, lengths, counts, m.pageSize);
    assert.ok(Buffer.concat(runs).equals(raw), `${dir}: the packed pages inflate to the raw index`);
    assert.ok(lengths.some((l) => l < m.pageSize), `${dir} has compressed pages`);
    // A compressed page spoiled, or a run of the wrong length: lazy.packed_invalid.
    const k = lengths.findIndex((l) => l < m.pageSize);
    const start = lengths.slice(0, k).reduce((a, b) => a + b, 0);
    const spoiled = Uint8Array.from(packed.subarray(start, start + lengths[k]));
    spoiled[0] = 0xff; // a final block of the reserved type 3
    assert.throws(() => inflateRuns([spoiled], [lengths[k]], [1], m.pageSize), (e) => e.code === 'lazy.packed_invalid' && /does not inflate/.test(e.message));
    assert.throws(() => inflateRuns([spoiled.subarray(1)], [lengths[k]], [1], m.pageSize), (e) => e.code === 'lazy.packed_invalid' && /came as/.test(e.message));
  }
});

test('inflateRaw gives zlib\'s bytes for every kind of DEFLATE block, and refuses what is not a whole stream of the expected size', () => {
  let x = 0x2545f491;
  const rand = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
  // Real text longer than DEFLATE's 32 KiB window: the project's own documentation.
  const docs = new URL('../../docs/', import.meta.url);
  const text = Buffer.concat([
    fs.readFileSync(new URL('../../README.md', import.meta.url)),
    ...fs.readdirSync(docs).filter((f) => f.endsWith('.md')).sort().map((f) => fs.readFileSync(new URL(f, docs))),
  ]);
  assert.ok(text.length >= 65536, `${text.length} bytes of documentation`);
  const inputs = [
    Buffer.alloc(0),
    Buffer.from('a'),
    Buffer.alloc(4096, 7),
    text.subarray(0, 4096),
    text.subarray(0, 65536),
    Buffer.from(Array.from({ length: 4096 }, () => rand() & 0xff)),
    // Few distinct bytes: short and long codes, long matches.
    Buffer.from(Array.from({ length: 20000 }, () => (rand() % 5 === 0 ? rand() & 0xff : 65 + (rand() % 3)))),
    Buffer.from(Array.from({ length: 70000 }, () => rand() & 0xff)),
  ];
  const { Z_FIXED, Z_HUFFMAN_ONLY, Z_RLE, Z_DEFAULT_STRATEGY } = zlib.constants;
  let streams = 0;
  for (const input of inputs) {
    for (const [level, strategy] of [[0, Z_DEFAULT_STRATEGY], [1, Z_DEFAULT_STRATEGY], [9, Z_DEFAULT_STRATEGY], [6, Z_FIXED], [6, Z_HUFFMAN_ONLY], [6, Z_RLE]]) {
      const z = zlib.deflateRawSync(input, { level, strategy });
      const out = new Uint8Array(input.length);
      inflateRaw(z, out);
      assert.ok(Buffer.from(out).equals(input), `${input.length} bytes, level ${level}, strategy ${strategy}`);
      streams++;
      if (input.length > 0) {
        assert.throws(() => inflateRaw(z, new Uint8Array(input.length - 1)), /more than/);
        assert.throws(() => inflateRaw(z, new Uint8Array(input.length + 1)), /bytes, not/);
      }
    }
  }
  assert.equal(streams, inputs.length * 6);
  // Every cut of a stream is refused (the end-of-block code is missing).
  const z = zlib.deflateRawSync(text.subarray(0, 4096), { level: 9 });
  for (let cut = 0; cut < z.length; cut++) {
    assert.throws(() => inflateRaw(z.subarray(0, cut), new Uint8Array(4096)), Error, `cut at ${cut}`);
  }
  // Reserved block type; a stored block whose length does not check.
  assert.throws(() => inflateRaw(Uint8Array.of(0x07), new Uint8Array(1)), /reserved type/);
  assert.throws(() => inflateRaw(Uint8Array.of(0x01, 1, 0, 0, 0, 65), new Uint8Array(1)), /does not check/);
  // Random bytes: an error or exactly the output asked for, never a hang
  // or a write out of place.
  for (let n = 0; n < 3000; n++) {
    const bytes = Uint8Array.from({ length: 1 + (rand() % 64) }, () => rand() & 0xff);
    const out = new Uint8Array(64);
    try {
      inflateRaw(bytes, out);
    } catch (e) {
      assert.ok(e instanceof Error && e.message.length > 0);
    }
  }
});

test('a hot file of a format the engine does not know is left out: with a raw index its pages are read like any other; with the packed file alone (its page lengths are in the hot file) opening fails with index.version_mismatch; the CLI\'s answers', async () => {
  for (const raw of [true, false]) {
    const dir = `hot-unknown-${raw}`;
    publish(site, SAMPLE_INDEX, dir);
    const m = raw ? withRawIndex(site, dir, fs.readFileSync(SAMPLE_INDEX)) : JSON.parse(fs.readFileSync(path.join(site.root, dir, 'manifest.json'), 'utf8'));
    m.hotFormat = 99;
    fs.writeFileSync(path.join(site.root, dir, 'manifest.json'), JSON.stringify(m));
    const page = await freshPage();
    if (!raw) {
      // Neither read by range nor downloaded whole: a module older than
      // the site's publish, which the error says.
      const error = await openError(page, { manifestUrl: `/${dir}/manifest.json` });
      assert.equal(error && error.code, 'index.version_mismatch', JSON.stringify(error));
      assert.match(error.message, /hotFormat 99.*republish/);
      await closePage(page);
      continue;
    }
    const info = await openEngine(page, { manifestUrl: `/${dir}/manifest.json`, lazyFill: false });
    assert.equal(info.storage, 'lazy');
    assert.equal(info.lazy.hotPages, 0, 'no hot pages used');
    assert.match(info.lazy.hotOff || '', /^index\.version_mismatch: .*hotFormat 99/, JSON.stringify(info.lazy));
    for (const [query, options] of QUERIES.slice(0, 4)) {
      const { value: json, error } = await call(page, 'searchJson', query, { ...options, ...UNBOUNDED });
      assert.equal(error, undefined, `${query}: ${JSON.stringify(error)}`);
      assert.equal(json, cliJson(query, options), query);
    }
    await closePage(page);
  }
});

// Servers that answer several ranges in one request with a multipart body
// (nginx, Apache), merge them into one part, send the first only, or the
// whole file (as
// hosts without multipart support may): the probe finds out, the answers
// stay the CLI's.
for (const [multiRange, what] of [
  [true, 'multipart answers'],
  ['merge', 'merged ranges'],
  ['first', 'the first range only'],
  [false, 'no multi-range support'],
]) {
  test(`lazy results equal the native CLI JSON byte for byte (server: ${what})`, async () => {
    const page = await freshPage();
    site.server.options.multiRange = multiRange;
    const info = await openEngine(page, { lazyFill: false });
    assert.equal(info.storage, 'lazy');
    assert.equal(info.lazy.multiRange, multiRange === true || multiRange === 'merge', 'the probe found out');
    for (const [query, options] of QUERIES) {
      const { value: json, error } = await call(page, 'searchJson', query, { ...options, ...UNBOUNDED });
      assert.equal(error, undefined, `${query}: ${JSON.stringify(error)}`);
      assert.equal(json, cliJson(query, options), `${query} ${JSON.stringify(options)}`);
    }
    const { value: still } = await call(page, 'info');
    assert.equal(still.storage, 'lazy', 'all answered while reading lazily');
    assert.ok(still.lazy.pagesStored < still.lazy.pageCount, 'without the fill, only what queries needed was fetched');
    const stats = site.server.stats();
    if (multiRange === true) {
      // The probe's and the warm-up's: one request per round of pages.
      assert.ok(stats.multipart > 1, JSON.stringify(stats));
      assert.ok(still.lazy.prefetchRounds > 0);
      assert.equal(still.lazy.prefetchRequests, still.lazy.prefetchRounds, JSON.stringify(still.lazy));
    } else {
      assert.equal(stats.multipart, 0);
    }
    await closePage(page);
  });
}

// An index whose FTS index (`_idx`) is too big to ship hot whole, as a
// large corpus's is: the warm-up finds the `_idx` leaves its term lookups
// land on from the hot inner pages and fetches them in a batch, so no
// page is read one synchronous request at a time.
test('pages come compressed from the packed file: fewer bytes than the pages they hold, the CLI\'s answers', async () => {
  const page = await freshPage();
  const opened = await openEngine(page, { lazyFill: false });
  assert.equal(opened.lazy.packed, true, JSON.stringify(opened.lazy));
  assert.equal(opened.lazy.packedOff, undefined);
  for (const [query, options] of QUERIES) {
    const { value: json, error } = await call(page, 'searchJson', query, { ...options, ...UNBOUNDED });
    assert.equal(error, undefined, `${query}: ${JSON.stringify(error)}`);
    assert.equal(json, cliJson(query, options), `${query} ${JSON.stringify(options)}`);
  }
  const { value: info } = await call(page, 'info');
  const t = indexTraffic();
  assert.ok(t.packedRequests > 0 && t.packed > 0, JSON.stringify(t));
  // One copy of the index on the host: the packed file serves the range
  // probes, the warm-up and SQLite's synchronous reads (a page the warm-up
  // did not foresee); there is no raw index to read.
  assert.equal(manifest.rawFile, undefined);
  assert.equal(t.rawRequests, 0, JSON.stringify(t));
  // (The server's count holds the multipart answers' part headers and the
  // probes' bytes too.)
  const read = info.lazy.prefetchBytes + info.lazy.readBytes;
  assert.ok(read <= t.packed && t.packed < read * 1.1 + 1024, `info() counts the compressed bytes: ${read} of ${t.packed}`);
  const pages = info.lazy.pagesStored + info.lazy.pagesCached - info.lazy.hotPages;
  assert.ok(pages > 0);
  assert.ok(t.packed < pages * manifest.pageSize * 0.75, `${t.packed} bytes for ${pages} pages`);
  await closePage(page);
});

for (const [n, [what, spoil, reason]] of [
  ['is missing', (file) => fs.rmSync(file), /HTTP 404/],
  ['is another index\'s', (file) => fs.copyFileSync(path.join(site.root, 'packed-other', publish(site, HOSTILE_INDEX, 'packed-other').packedFile), file), /not the published index/],
  ['holds bytes that do not inflate', (file) => fs.writeFileSync(file, Buffer.alloc(fs.statSync(file).size, 0xff)), /does not inflate|inflated to/],
].entries()) {
  test(`a site published with a raw index too, whose packed file ${what}: the pages come from the raw index, the CLI's answers, info() says why`, async () => {
    // A directory of its own (the browser's HTTP cache keeps range answers
    // of other URLs).
    const dir = `packed-spoiled-${n}`;
    publish(site, SAMPLE_INDEX, dir);
    const m = withRawIndex(site, dir, fs.readFileSync(SAMPLE_INDEX));
    spoil(path.join(site.root, dir, m.packedFile));
    const page = await freshPage();
    const opened = await openEngine(page, { manifestUrl: `/${dir}/manifest.json`, lazyFill: false });
    assert.equal(opened.storage, 'lazy');
    for (const [query, options] of QUERIES) {
      const { value: json, error } = await call(page, 'searchJson', query, { ...options, ...UNBOUNDED });
      assert.equal(error, undefined, `${query}: ${JSON.stringify(error)}`);
      assert.equal(json, cliJson(query, options), `${query} ${JSON.stringify(options)}`);
    }
    const { value: info } = await call(page, 'info');
    assert.equal(info.lazy.packed, false);
    assert.match(info.lazy.packedOff, /the packed file failed, pages are read from the raw index/);
    assert.match(info.lazy.packedOff, reason);
    assert.ok(info.lazy.prefetchBytes > 0);
    const t = indexTraffic();
    assert.ok(t.raw - info.lazy.readBytes >= info.lazy.prefetchBytes, `the warm-up read the raw index: ${JSON.stringify(t)}, ${JSON.stringify(info.lazy)}`);
    await closePage(page);
  });
}

test('one copy on the host: without its packed file opening fails with the host\'s answer; a packed file whose pages do not inflate fails the reads that need them with lazy.packed_invalid', async () => {
  const missing = publish(site, SAMPLE_INDEX, 'packed-only-missing');
  fs.rmSync(path.join(site.root, 'packed-only-missing', missing.packedFile));
  let page = await freshPage();
  const failed = await openError(page, { manifestUrl: '/packed-only-missing/manifest.json', lazyFill: false });
  assert.equal(failed && failed.code, 'network.http_status', JSON.stringify(failed));
  assert.match(failed.message, /\.pages answered HTTP 404/);
  await closePage(page);
  const spoiled = publish(site, SAMPLE_INDEX, 'packed-only-spoiled');
  const file = path.join(site.root, 'packed-only-spoiled', spoiled.packedFile);
  fs.writeFileSync(file, Buffer.alloc(fs.statSync(file).size, 0xff));
  page = await freshPage();
  const lazy = await openEngine(page, { manifestUrl: '/packed-only-spoiled/manifest.json', lazyFill: false });
  assert.equal(lazy.storage, 'lazy');
  const { error } = await call(page, 'search', 'stripe checkout webhook', UNBOUNDED);
  assert.equal(error?.code, 'lazy.packed_invalid', JSON.stringify(error));
  const { value: info } = await call(page, 'info');
  assert.equal(info.lazy.packed, true, 'still the only file to read');
  await closePage(page);
});

test('a query of filters only fetches the tables it scans in one round: no synchronous reads, the CLI\'s answers', async () => {
  const page = await freshPage();
  await openEngine(page, { lazyFill: false });
  const info = await answersLikeCli(page, SAMPLE_INDEX, ['msg-type:regular', 'role:user', 'role:assistant chat-type:regular']);
  // The scan's round, then the returned page's rows and their overflow pages.
  assert.ok(info.lazy.prefetchRounds >= 3, JSON.stringify(info.lazy));
  await closePage(page);
});

test('terms are looked up in an FTS index too big to be hot in batched rounds: no synchronous reads, the CLI\'s answers', async () => {
  const index = path.join(FIXTURES, 'vocab.gsx');
  const facts = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'vocab.json'), 'utf8'));
  const published = publish(site, index, 'vocab');
  const cold = facts.idxPages.filter((p) => !published.hotPages.includes(p));
  assert.ok(cold.length > facts.idxPages.length / 2, `${cold.length} of ${facts.idxPages.length} FTS index pages are not hot`);
  const page = await freshPage();
  const info = await openEngine(page, { manifestUrl: '/vocab/manifest.json', lazyFill: false });
  assert.equal(info.storage, 'lazy');
  const after = await answersLikeCli(page, index, facts.queries);
  assert.ok(after.lazy.prefetchRounds >= facts.queries.length, JSON.stringify(after.lazy));
  await closePage(page);
});

// Ranking reads a record of every matched message and code block; a small
// index ships those records with the hot pages, so a query needs two
// batched rounds: its doclists, then the returned page's rows (with their
// messages and chats, known from the records).
test('ranking records ship with the hot pages: two rounds a query, no synchronous reads, the CLI\'s answers', async () => {
  const index = path.join(FIXTURES, 'ranked.gsx');
  const facts = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'ranked.json'), 'utf8'));
  const published = publish(site, index, 'ranked');
  for (const p of facts.rankingPages) assert.ok(published.hotPages.includes(p), `ranking page ${p} is hot`);
  const page = await freshPage();
  const info = await openEngine(page, { manifestUrl: '/ranked/manifest.json', lazyFill: false });
  assert.equal(info.storage, 'lazy');
  let rounds = info.lazy.prefetchRounds;
  for (const q of facts.queries) {
    const { value: json, error } = await call(page, 'searchJson', q, UNBOUNDED);
    assert.equal(error, undefined, `${q}: ${JSON.stringify(error)}`);
    assert.equal(json, cli('search', index, q, '--format', 'json', '--time-budget-ms', '0').replace(/\n$/, ''), q);
    const parsed = JSON.parse(json);
    assert.ok(parsed.results.messages.length > 0 && parsed.results.codeBlocks.length > 0, `${q} matches messages and code blocks`);
    const { value: now } = await call(page, 'info');
    assert.ok(now.lazy.prefetchRounds - rounds <= 2, `${q}: ${now.lazy.prefetchRounds - rounds} rounds`);
    assert.equal(now.lazy.readRequests, 0, `${q}: no synchronous reads: ${JSON.stringify(now.lazy)}`);
    rounds = now.lazy.prefetchRounds;
  }
  await closePage(page);
});

// On a documentation site a search of several words is judged per page:
// it returns the sections whose page holds every word, ranked again, not
// the first rows of its statement. The warm-up ranks as the search will,
// so the rows it fetches are the rows returned.
test('a documentation site\'s search judged per page: the warm-up fetches the rows of the sections it returns, no synchronous reads, the CLI\'s answers', async () => {
  const index = path.join(site.root, 'large-docs.gsx');
  cli('build', '--quiet', '--docs', path.join(FIXTURES, 'large-docs'), '--out', index);
  const facts = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'large.json'), 'utf8'));
  // Two words, each in about a quarter of the sections (see web_fixtures).
  const query = facts.queries[0];
  assert.equal(query.split(' ').length, 2, query);
  publish(site, index, 'large-docs');
  const page = await freshPage();
  const info = await openEngine(page, { manifestUrl: '/large-docs/manifest.json', lazyFill: false });
  assert.equal(info.storage, 'lazy');
  const { value: json, error } = await call(page, 'searchJson', query, { ...UNBOUNDED, perPage: 20 });
  assert.equal(error, undefined, JSON.stringify(error));
  // The CLI's sections in the CLI's order (on this index some ranks
  // differ from the CLI's in their last digit, so not byte for byte).
  const ids = (r) => r.results.messages.map((m) => m.messages_id);
  const parsed = JSON.parse(json);
  const native = JSON.parse(cli('search', index, query, '--format', 'json', '--time-budget-ms', '0', '--per-page', '20'));
  assert.deepEqual(ids(parsed), ids(native));
  assert.deepEqual(parsed.totalCounts, native.totalCounts);
  assert.equal(ids(parsed).length, 20, `${query} returns a full page of sections`);
  const { value: after } = await call(page, 'info');
  assert.equal(after.lazy.readRequests, 0, `no synchronous reads: ${JSON.stringify(after.lazy)}`);
  await closePage(page);
});

// open()'s firstQuery is accepted (pages written for it keep working) and
// fetches nothing of its own: the first search's pages come from the
// engine's warm-up, planned in wasm, hint or not.
test('open\'s firstQuery fetches nothing of its own: the same rounds and requests as without it, each startup step in order, the CLI\'s answers; not a string is refused', async () => {
  const index = path.join(FIXTURES, 'ranked.gsx');
  const facts = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'ranked.json'), 'utf8'));
  publish(site, index, 'ranked-first');
  for (const q of facts.queries.slice(0, 3)) {
    // Without the hint, then with it, each on a fresh page: the first
    // search's rounds and requests.
    const first = async (options) => {
      const page = await freshPage();
      const opened = await openEngine(page, { manifestUrl: '/ranked-first/manifest.json', lazyFill: false, ...options });
      assert.equal(opened.storage, 'lazy');
      const info = await answersLikeCli(page, index, [q]);
      await closePage(page);
      return { info: info.lazy, startup: info.startup };
    };
    const plain = await first({});
    const hinted = await first({ firstQuery: q });
    // info().startup: each step in the order it happens, on one clock.
    const inOrder = (startup, steps) => {
      for (const step of steps) assert.ok(Number.isFinite(startup[step]) && startup[step] >= 0, `${step}: ${JSON.stringify(startup)}`);
      // (1 ms of slack: the page's and the worker's clocks are each
      // coarsened on their own.)
      for (let i = 1; i < steps.length; i++) assert.ok(startup[steps[i - 1]] <= startup[steps[i]] + 1, `${steps[i - 1]} before ${steps[i]}: ${JSON.stringify(startup)}`);
    };
    for (const { startup } of [plain, hinted]) {
      inOrder(startup, ['pageOpen', 'pageHot', 'prefetched']);
      inOrder(startup, ['pageOpen', 'pageCompiled', 'module', 'instantiated', 'opened', 'firstSearch', 'firstAnswer']);
    }
    assert.ok(plain.info.prefetchRounds > 0, `${q}: ${JSON.stringify(plain.info)}`);
    for (const k of ['prefetchRounds', 'prefetchRequests', 'readRequests']) assert.equal(hinted.info[k], plain.info[k], `${q}: ${k}`);
  }
  // Not a string: refused before anything is fetched.
  const page = await freshPage();
  const bad = await openError(page, { manifestUrl: '/ranked-first/manifest.json', firstQuery: 42 });
  assert.equal(bad.code, 'options.invalid');
  assert.match(bad.message, /firstQuery must be a string/);
  await closePage(page);
});

test('a server that stops serving several ranges per request mid-session: range by range from then on, answers unchanged', async () => {
  const page = await freshPage();
  const info = await openEngine(page, { lazyFill: false });
  assert.equal(info.lazy.multiRange, true);
  const [first, ...rest] = QUERIES;
  const { value: json } = await call(page, 'searchJson', first[0], { ...first[1], ...UNBOUNDED });
  assert.equal(json, cliJson(first[0], first[1]));
  // As when a CDN that sends the whole file for several ranges moves in front.
  site.server.options.multiRange = false;
  site.server.reset();
  for (const [query, options] of rest) {
    const { value, error } = await call(page, 'searchJson', query, { ...options, ...UNBOUNDED });
    assert.equal(error, undefined, `${query}: ${JSON.stringify(error)}`);
    assert.equal(value, cliJson(query, options), `${query} ${JSON.stringify(options)}`);
  }
  const { value: after } = await call(page, 'info');
  assert.equal(after.lazy.multiRange, false, 'the engine noticed');
  assert.equal(site.server.stats().multipart, 0);
  await closePage(page);
});

test('the fill completes, the engine switches to OPFS, and the next visit reads no index bytes', async () => {
  const page = await freshPage();
  await openEngine(page);
  const filled = nextFill(page);
  const before = (await call(page, 'searchJson', 'payment', UNBOUNDED)).value;
  const { type, detail } = await filled;
  assert.equal(type, 'fill', JSON.stringify(detail));
  assert.equal(detail.storage, 'opfs');
  assert.equal(detail.lazy.state, 'complete');
  assert.equal(detail.lazy.pagesStored, manifest.pageCount);
  assert.equal(detail.sha256, manifest.sha256);
  assert.match(detail.storageReason, /^OPFS/);
  assert.doesNotMatch(detail.storageReason, /first query/, 'the reason of the storage set up meanwhile');
  assert.ok(detail.timings.storageMs > 0, JSON.stringify(detail.timings));
  assert.equal((await call(page, 'searchJson', 'payment', UNBOUNDED)).value, before, 'same answer after the switch');
  assert.deepEqual((await call(page, 'storedFiles')).value.map((f) => f.includes(manifest.sha256)), [true]);
  // No page was fetched twice: fill, hot pages and query reads add up to
  // the packed file (the pages compressed one by one), read instead of the raw index.
  const traffic = indexTraffic();
  assert.equal(detail.lazy.packed, true, JSON.stringify(detail.lazy));
  assert.equal(traffic.raw, 0, 'no raw index on the host');
  assert.ok(traffic.packed <= manifest.packedSize + 16 * 1024, `${traffic.packed} packed bytes for a ${manifest.packedSize}-byte packed file`);
  const counted = detail.lazy.fillBytes + detail.lazy.prefetchBytes;
  assert.ok(counted <= traffic.packed && traffic.packed < counted * 1.1, `info() counts the bytes on the wire: ${counted} of ${traffic.packed}`);
  await closePage(page);

  site.server.reset();
  const again = await site.blank();
  const info = await openEngine(again);
  assert.equal(info.source, 'stored');
  assert.equal(info.storage, 'opfs');
  assert.ok((await call(again, 'search', 'payment', {})).value.totalResultsReturned > 0);
  await again.waitForFunction(() => window.engineEvents.length > 0);
  const reload = indexTraffic();
  assert.deepEqual([reload.raw, reload.packed, reload.hot, reload.whole], [0, 0, 0, 0], JSON.stringify(site.server.stats().byPath));
  // The page's mark of an earlier visit (localStorage) lost, storage kept:
  // the hot pages are asked for before the stored copy is found, which is
  // still opened.
  // (The offline-copy policy's visit counter is a key of its own.)
  const marks = await again.evaluate(() =>
    Object.keys(localStorage).filter((k) => k.startsWith('gitsense-search:') && !k.startsWith('gitsense-search:visits:')),
  );
  assert.equal(marks.length, 1, JSON.stringify(marks));
  await again.evaluate(() => localStorage.clear());
  await closePage(again);
  site.server.reset();
  const unmarked = await site.blank();
  const info2 = await openEngine(unmarked);
  assert.equal(info2.source, 'stored');
  assert.equal((await call(unmarked, 'searchJson', 'payment', {})).value, before);
  // At most the hot pages and the range probes (a few hundred bytes of the packed file).
  const spent = indexTraffic();
  assert.ok(spent.packed < 1024, JSON.stringify(site.server.stats().byPath));
  assert.deepEqual([spent.raw, spent.whole], [0, 0], JSON.stringify(site.server.stats().byPath));
  assert.ok(await unmarked.evaluate(() => Object.keys(localStorage).some((k) => k.startsWith('gitsense-search:'))), 'the mark is back');
  // The fill files the worker opened while it did not know yet are gone:
  // nothing of the index's size is left behind in OPFS.
  // (Polled: the session may answer before the worker's cleanup is done.)
  const listFill = () =>
    unmarked.evaluate(async (dirName) => {
      const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle(dirName);
      const names = [];
      for await (const name of dir.keys()) names.push(name);
      return names;
    }, FILL_DIRECTORY);
  let left = await listFill();
  for (let i = 0; i < 50 && left.some((n) => !n.startsWith('stored-')); i++) {
    await new Promise((r) => setTimeout(r, 100));
    left = await listFill();
  }
  assert.deepEqual(left.filter((n) => !n.startsWith('stored-')), [], JSON.stringify(left));
  assert.ok(left.some((n) => n.startsWith('stored-')), JSON.stringify(left));
  await closePage(unmarked);
});

test('GitSenseSearch.clear() removes the marks of earlier visits: the next first visit asks for the hot pages before the stored-index check', async () => {
  const page = await freshPage();
  const marks = () =>
    page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('gitsense-search:') && !k.startsWith('gitsense-search:visits:')));
  assert.deepEqual(await marks(), []);
  await openEngine(page, { lazyFill: false });
  assert.equal((await marks()).length, 1);
  await call(page, 'close');
  await page.evaluate(async () => {
    const { GitSenseSearch } = await import('/pkg/index.js');
    localStorage.setItem('other-app', 'kept');
    await GitSenseSearch.clear();
  });
  assert.deepEqual(await marks(), []);
  assert.equal(await page.evaluate(() => localStorage.getItem('other-app')), 'kept');
  await closePage(page);
});

for (const [what, options, reason] of [
  ['ignores Range (200 with the whole file)', { range: false }, /ignored the Range header/],
  // Chromium itself rejects a gzip-encoded 206 answer outright.
  ['compresses ranges', { gzipRanges: true }, /Content-Encoding|does not serve usable byte ranges/],
  ['drops Content-Length', { contentLength: false }, /Content-Length/],
]) {
  test(`a server that ${what} gets the full download, and info() says why`, async () => {
    const page = await freshPage();
    // Throttled, so that an aborted answer stops the server from sending
    // (unthrottled, loopback takes the whole file at once).
    Object.assign(site.server.options, options, { bandwidth: 1_000_000 });
    const info = await openEngine(page);
    site.server.options.bandwidth = 0;
    assert.equal(info.storage, 'opfs');
    assert.equal(info.source, 'downloaded');
    assert.match(info.storageReason, /lazy loading is not possible/);
    assert.match(info.storageReason, reason);
    assert.equal((await call(page, 'searchJson', 'payment', UNBOUNDED)).value, cliJson('payment', {}));
    const traffic = indexTraffic();
    assert.equal(traffic.wholeRequests, 1, JSON.stringify(site.server.log()));
    assert.ok(traffic.raw < manifest.size / 2, `the probe did not download the raw index (${traffic.raw} bytes)`);
    await closePage(page);
  });
}

test('the full download is the packed file, fetched once without Range and inflated page by page; a hot file without the page lengths or a page that does not inflate is download.corrupt', async () => {
  const dir = path.join(site.root, 'whole');
  const m = publish(site, SAMPLE_INDEX, 'whole');
  assert.equal(m.compression, 'pages');
  assert.equal(m.file, m.packedFile);
  assert.ok(!fs.readdirSync(dir).some((f) => /\.gsx(\.gz)?$/.test(f)), 'one copy of the index on the host');
  const manifestUrl = '/whole/manifest.json';
  const page = await freshPage();
  const progress = [];
  await page.exposeFunction('recordProgress', (p) => progress.push(p));
  const info = await page.evaluate(async (manifestUrl) => {
    const { GitSenseSearch } = await import('/pkg/index.js');
    window.engine = await GitSenseSearch.open({ manifestUrl, storage: 'memory', onProgress: (p) => window.recordProgress(p) });
    return window.engine.info();
  }, manifestUrl);
  assert.equal(info.source, 'downloaded');
  assert.equal(info.storage, 'memory');
  assert.equal(info.downloadedBytes, m.packedSize);
  for (const q of ['payment', 'token OR session']) {
    assert.equal((await call(page, 'searchJson', q, UNBOUNDED)).value, cliJson(q, {}), q);
  }
  const log = site.server.log().filter((r) => r.path.startsWith('/whole/') && !r.path.endsWith('.json'));
  assert.deepEqual(log.map((r) => [path.basename(r.path), r.range]), [[m.hotFile, null], [m.packedFile, null]], JSON.stringify(log));
  const download = progress.filter((p) => p.phase === 'download');
  assert.ok(download.length >= 2, JSON.stringify(progress));
  assert.deepEqual(download.at(-1), { phase: 'download', loaded: m.packedSize, total: m.packedSize });
  await closePage(page);

  const hot = fs.readFileSync(path.join(dir, m.hotFile));
  const packed = fs.readFileSync(path.join(dir, m.packedFile));
  const lengths = packedLengths(hotFile(dir, m, SAMPLE_INDEX), m);
  // The first page that is compressed, with its DEFLATE stream's first
  // byte made a block of the reserved type 3.
  let at = 0;
  let first = 0;
  while (lengths[first] === m.pageSize) at += lengths[first++];
  const bad = Buffer.from(packed);
  bad[at] = 0x07;
  // Each damage at a directory of its own (the browser may keep the
  // files it fetched: their names say they never change).
  for (const [what, damaged, file, bytes, message] of [
    ['the page lengths cut off', 'whole-lengths', m.hotFile, zlib.gzipSync(zlib.gunzipSync(hot).subarray(0, -1)), /page lengths/],
    ['a page that does not inflate', 'whole-page', m.packedFile, bad, new RegExp(`page ${first + 1} of .* does not inflate`)],
  ]) {
    publish(site, SAMPLE_INDEX, damaged);
    fs.writeFileSync(path.join(site.root, damaged, file), bytes);
    const p = await freshPage();
    const error = await openError(p, { manifestUrl: `/${damaged}/manifest.json`, storage: 'memory' });
    assert.equal(error && error.code, 'download.corrupt', `${what}: ${JSON.stringify(error)}`);
    assert.match(error.message, message, what);
    await closePage(p);
  }
});

test('a reload during the fill resumes it without fetching stored pages again', async () => {
  const page = await freshPage();
  // Slow enough that the fill (1 MiB per request) is caught half-way.
  site.server.options.bandwidth = 400_000;
  await openEngine(page);
  await call(page, 'search', 'payment', {});
  await page.waitForFunction(async () => {
    const i = await window.engine.info();
    return i.lazy && i.lazy.pagesStored > i.lazy.pageCount / 3;
  }, null, { timeout: 60_000, polling: 200 });
  const stored = (await call(page, 'info')).value.lazy.pagesStored;
  assert.ok(stored < manifest.pageCount, 'the fill was still running');
  await page.reload();
  site.server.options.bandwidth = 0;
  site.server.reset();
  // Which pages the fill had stored (its map file: one byte a page). The
  // worker of the page before the reload may still hold the file open for
  // a moment (an OPFS access handle is exclusive): read it once it is let go.
  const resumedPresent = await page.evaluate(async () => {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('.gitsense-search-lazy');
    for (let attempt = 0; ; attempt++) {
      try {
        for await (const [name, handle] of dir.entries()) {
          if (name.endsWith('.map')) return Array.from(new Uint8Array(await (await handle.getFile()).arrayBuffer()));
        }
        return null;
      } catch (e) {
        if (e.name !== 'NotReadableError' || attempt >= 50) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });
  assert.equal(resumedPresent.length, manifest.pageCount);
  const info = await openEngine(page);
  assert.equal(info.storage, 'lazy');
  assert.ok(info.lazy.pagesStored >= stored, `resumed with ${info.lazy.pagesStored} of ${stored} stored pages`);
  assert.equal(info.lazy.fillPrepared, true, 'the worker reopened the fill files');
  const filled = nextFill(page);
  await call(page, 'search', 'payment', {});
  const { type, detail } = await filled;
  assert.equal(type, 'fill', JSON.stringify(detail));
  assert.equal(detail.storage, 'opfs');
  // Of the packed file (pages compressed one by one): what the missing pages take there.
  const fetched = indexTraffic().packed;
  const m = JSON.parse(fs.readFileSync(path.join(site.root, 'data/manifest.json'), 'utf8'));
  const lengths = packedLengths(hotFile(path.join(site.root, 'data'), m, SAMPLE_INDEX), m);
  const missing = lengths.reduce((n, l, i) => n + (resumedPresent[i] ? 0 : l), 0);
  assert.ok(fetched <= missing + 16 * 1024, `fetched ${fetched} bytes for ${missing} missing`);
  await closePage(page);
});

test('a republished index never mixes pages of two versions', async () => {
  const page = await freshPage();
  await openEngine(page, { lazyFill: false });
  const answer = (await call(page, 'searchJson', 'payment', UNBOUNDED)).value;
  assert.equal(answer, cliJson('payment', {}));
  // A new version is published; the old packed file stays
  // (content-addressed names), and the session keeps reading its own
  // version.
  const next = publish(site, HOSTILE_INDEX);
  assert.notEqual(next.packedFile, manifest.packedFile);
  assert.equal((await call(page, 'searchJson', 'token OR session', UNBOUNDED)).value, cliJson('token OR session', {}));
  // Were the old file replaced by other bytes, a range answer naming
  // another size is refused rather than mixed in.
  const packed = path.join(site.root, 'data', manifest.packedFile);
  const originalPacked = fs.readFileSync(packed);
  fs.copyFileSync(path.join(site.root, 'data', next.packedFile), packed);
  try {
    const { error } = await call(page, 'search', 'stripe checkout webhook', {});
    assert.ok(error, 'a query needing new pages fails');
    assert.equal(error.code, 'lazy.version_mismatch');
    assert.match(error.message, /not the published index/);
    // Pages already read still answer, identically.
    assert.equal((await call(page, 'searchJson', 'payment', UNBOUNDED)).value, answer);
  } finally {
    fs.writeFileSync(packed, originalPacked);
    publish(site, SAMPLE_INDEX);
  }
  await closePage(page);
});

test('offline, a lazy engine answers from the pages it has and says network.offline for the rest, with the first wasm module alone', async () => {
  const page = await freshPage();
  // Offline before the engine's second module came: the answers and the
  // error need only the first (a stub reaching for the second would fail
  // with engine.load_failed).
  site.server.options.block = [/gitsense_search_bg-[0-9a-f]{16}\.wasm$/];
  await openEngine(page, { lazyFill: false });
  const answer = (await call(page, 'searchJson', 'payment', UNBOUNDED)).value;
  await site.context.setOffline(true);
  try {
    assert.equal((await call(page, 'searchJson', 'payment', UNBOUNDED)).value, answer);
    const { error } = await call(page, 'search', 'stripe checkout webhook refund invoice', {});
    assert.equal(error && error.code, 'network.offline', JSON.stringify(error));
  } finally {
    await site.context.setOffline(false);
  }
  assert.ok((await call(page, 'search', 'stripe checkout webhook refund invoice', {})).value.totalResultsReturned >= 0);
  await closePage(page);
});

test('dropped range requests are retried and the answers stay the CLI\'s', async () => {
  const page = await freshPage();
  // The next two range requests (of the packed file) are cut off
  // (connection destroyed): the range probe, page prefetches or reads;
  // each request is tried three times, so two drops can hit even the
  // same one.
  site.server.options.dropFirst = { match: /\.pages$/, count: 2 };
  const info = await openEngine(page, { lazyFill: false });
  assert.equal(info.storage, 'lazy', JSON.stringify(info.storageReason));
  for (const [query, options] of QUERIES.slice(0, 3)) {
    const { value: json, error } = await call(page, 'searchJson', query, { ...options, ...UNBOUNDED });
    assert.equal(error, undefined, `${query}: ${JSON.stringify(error)}`);
    assert.equal(json, cliJson(query, options), query);
  }
  assert.equal(site.server.options.dropFirst.count, 0, 'both drops happened');
  await closePage(page);
});

test('a range request without an answer times out after requestTimeoutMs, then the engine recovers', async () => {
  const page = await freshPage();
  const bad = await openError(page, { manifestUrl: '/data/manifest.json', requestTimeoutMs: 0 });
  assert.equal(bad && bad.code, 'options.invalid', JSON.stringify(bad));
  await openEngine(page, { lazyFill: false, requestTimeoutMs: 300 });
  // From now on the server takes range requests and never answers them.
  site.server.options.stall = [/\.pages$/];
  const t0 = Date.now();
  const { error } = await call(page, 'search', 'stripe checkout webhook refund invoice', {});
  const waited = Date.now() - t0;
  assert.equal(error && error.code, 'network.timeout', JSON.stringify(error));
  assert.match(error.message, /no answer within 300 ms/);
  // Three attempts of 300 ms and the pauses between them, not 3 × 15 s.
  assert.ok(waited >= 900 && waited < 10_000, `gave up after ${waited} ms`);
  site.server.options.stall = [];
  const { value, error: again } = await call(page, 'searchJson', 'stripe checkout webhook refund invoice', UNBOUNDED);
  assert.equal(again, undefined, JSON.stringify(again));
  assert.equal(value, cliJson('stripe checkout webhook refund invoice', {}));
  await closePage(page);
});
