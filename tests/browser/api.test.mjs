// The JS API (pkg/index.js) in headless Chromium: results identical to the
// native CLI, updates and swaps, corrupt downloads, storage fallbacks, two
// tabs, offline, errors and crashes.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setup, publish, cli, call, openEngine, closePage, clearStorage, SAMPLE_INDEX, HOSTILE_INDEX, ROOT } from './harness.mjs';

let site;
before(async () => {
  site = await setup();
});
after(async () => {
  await site.close();
});

/** Fresh page on an empty origin storage. */
async function freshPage() {
  // A failed test may have left its page (and its hold on OPFS) open.
  for (const p of site.context.pages()) await closePage(p);
  const page = await site.blank();
  // A closed page's worker may hold the OPFS pool for a moment longer.
  assert.equal(await clearStorage(page, 20), 'ok');
  return page;
}

const QUERIES = [
  ['payment', {}],
  ['payment', { perPage: 3, page: 2 }],
  ['stripe lang:js', {}],
  ['"form validation"', { highlight: 'raw' }],
  ['in:chats payment', {}],
  ['auth* -test msg-type:git-blob', { includeContent: false }],
  ['msg-type:regular', { perPage: 5 }],
  ['payment OR checkout', { maxTokens: 400 }],
  ['nothing-matches-this-zzzz', {}],
  ['payment', { facets: ['chat-type', 'lang', 'keywords:array'] }],
  ['profile:meta-insights insight-field:purpose,git-path msg-type:tiny-overview', {}],
  ['profile:meta-search analyzer:tiny-overview meta:keywords:array=payment||checkout', {}],
  ['analyzer:tiny-overview meta:purpose:string=*payment*', { perPage: 5 }],
  ['profile:git-nav', {}],
  ['git-owner:*', {}],
  // Nothing bounds this pattern's words on the left, so no FTS5 word
  // narrows it and every message is tested: more than the browser's
  // default 150 ms budget, so both sides get the CLI's.
  ['option:regex "payments?\\s+\\w+"', { timeBudgetMs: 1000 }],
];

function cliArgs(query, o) {
  const args = ['search', SAMPLE_INDEX, query, '--format', 'json'];
  if (o.perPage) args.push('--per-page', String(o.perPage));
  if (o.page) args.push('--page', String(o.page));
  if (o.highlight) args.push('--highlight', o.highlight);
  if (o.includeContent === false) args.push('--no-content');
  if (o.maxTokens) args.push('--max-tokens', String(o.maxTokens));
  if (o.facets) args.push('--facets', o.facets.join(','));
  if (o.timeBudgetMs) args.push('--time-budget-ms', String(o.timeBudgetMs));
  return args;
}

test('the JS API returns the native CLI JSON byte for byte', async () => {
  const page = await freshPage();
  await openEngine(page);
  for (const [query, options] of QUERIES) {
    const expected = cli(...cliArgs(query, options)).replace(/\n$/, '');
    const { value: json } = await call(page, 'searchJson', query, options);
    assert.equal(json, expected, `${query} ${JSON.stringify(options)}`);
    const { value: object } = await call(page, 'search', query, options);
    assert.deepEqual(object, JSON.parse(expected));
  }
  await closePage(page);
});

test('a host that serves the wasm as application/octet-stream still works: the worker loads the module itself', async () => {
  // A site of its own: a fresh profile, so no cached copy carries the
  // right type.
  const other = await setup();
  try {
    other.server.options.types = { '.wasm': 'application/octet-stream' };
    const page = await other.blank();
    const info = await openEngine(page, { storage: 'memory' });
    assert.equal(info.storage, 'memory');
    const [query, options] = QUERIES[0];
    const { value: json } = await call(page, 'searchJson', query, options);
    assert.equal(json, cli(...cliArgs(query, options)).replace(/\n$/, ''));
    // The page's streaming compile refused the type; the worker (the
    // one-file bundle, resolving the module next to itself) fetched it again.
    assert.equal(other.server.stats().byPath['/pkg/gitsense_search_bg.wasm'], 2);
    await closePage(page);
  } finally {
    await other.close();
  }
});

test('every key of real results is declared in results.d.ts', async () => {
  const dts = fs.readFileSync(path.join(ROOT, 'src/js/results.d.ts'), 'utf8');
  const declared = new Set([...dts.matchAll(/^\s+([A-Za-z_]+)\??:/gm)].map((m) => m[1]));
  const prefixes = [...dts.matchAll(/\[meta: `([a-z_]+)\$\{string\}`\]/g)].map((m) => m[1]);
  assert.ok(prefixes.length === 3, 'meta index signatures are declared');
  const check = (obj, where) => {
    for (const [k, v] of Object.entries(obj)) {
      if (!declared.has(k) && !prefixes.some((p) => k.startsWith(p))) assert.fail(`${where}.${k} is not declared in results.d.ts`);
      if (v && typeof v === 'object' && !Array.isArray(v) && !k.endsWith('_header') && !k.includes('_meta_') && k !== 'skippedTargets') {
        check(v, `${where}.${k}`);
      }
    }
  };
  for (const [query, options] of [...QUERIES, ['payment', { trace: true }], ['hostile payload', {}]]) {
    const index = query === 'hostile payload' ? HOSTILE_INDEX : SAMPLE_INDEX;
    const args = cliArgs(query, options);
    args[1] = index;
    if (options.trace) args.push('--trace');
    const r = JSON.parse(cli(...args));
    check(r, 'results');
    for (const list of Object.values(r.results)) for (const item of list) check(item, item.source_type);
  }
});

test('a changed manifest swaps in the new index and removes the old file', async () => {
  const page = await freshPage();
  const before = await openEngine(page);
  const oldRevision = before.index.revision;
  assert.equal((await call(page, 'update')).value.status, 'current');
  const m = publish(site, HOSTILE_INDEX);
  assert.notEqual(m.revision, oldRevision);
  const { value: status } = await call(page, 'update');
  assert.equal(status.status, 'updated');
  assert.equal(status.revision, m.revision);
  const { value: r } = await call(page, 'search', 'hostile payload', {});
  assert.ok(r.totalResultsReturned > 0);
  assert.equal(r.searchCriteria.indexRevision, m.revision);
  const { value: files } = await call(page, 'storedFiles');
  assert.equal(files.length, 1);
  assert.ok(files[0].includes(m.sha256));
  await closePage(page);

  // A later visit answers from the new index at once, and the background
  // check (one manifest request) reports 'current'.
  site.server.reset();
  const again = await site.blank();
  const info = await openEngine(again);
  assert.equal(info.source, 'stored');
  assert.equal(info.index.revision, m.revision);
  await again.waitForFunction(() => window.engineEvents.length > 0);
  assert.deepEqual(await again.evaluate(() => window.engineEvents.map((e) => [e.type, e.detail.status])), [['update', 'current']]);
  const byPath = site.server.stats().byPath;
  assert.equal(byPath['/data/manifest.json'], 1);
  assert.equal(Object.keys(byPath).filter((p) => /\.(gz|pages)$/.test(p)).length, 0, JSON.stringify(byPath));
  await closePage(again);
  publish(site, SAMPLE_INDEX);
});

test('a repeat visit whose page checks for an update itself before its first search makes no background check of its own', async () => {
  const page = await freshPage();
  await openEngine(page, { storage: 'opfs' });
  await closePage(page);
  site.server.reset();
  const again = await site.blank();
  const info = await openEngine(again);
  assert.equal(info.source, 'stored');
  // The background check waits for the first answer (or a second); the
  // page's own check comes first and makes it unneeded.
  assert.equal((await call(again, 'update')).value.status, 'current');
  assert.ok((await call(again, 'search', 'payment', {})).value.totalResultsReturned > 0);
  await again.waitForTimeout(1500);
  assert.deepEqual(await again.evaluate(() => window.engineEvents), []);
  // The page's prefetch and its check: one manifest request each.
  assert.equal(site.server.stats().byPath['/data/manifest.json'], 2, JSON.stringify(site.server.stats().byPath));
  await closePage(again);
});

test('a corrupt download keeps the old index, now and after a reload', async () => {
  const page = await freshPage();
  // The full download (not lazy mode), so the good index is stored at once.
  const info = await openEngine(page, { storage: 'opfs' });
  const good = info.index.revision;
  const answer = (await call(page, 'searchJson', 'payment', {})).value;
  const manifestPath = path.join(site.root, 'data/manifest.json');
  const goodManifest = fs.readFileSync(manifestPath, 'utf8');

  // A new publish whose file is damaged on the server.
  const m = publish(site, HOSTILE_INDEX, 'data');
  // (The packed file: the whole index is downloaded from it.)
  const gz = path.join(site.root, 'data', m.file);
  const bytes = fs.readFileSync(gz);
  const cases = [
    ['truncated', () => fs.writeFileSync(gz, bytes.subarray(0, bytes.length >> 1)), /^download\.(truncated|corrupt)$/],
    ['bit flip', () => {
      const b = Buffer.from(bytes);
      b[b.length >> 1] ^= 0xff;
      fs.writeFileSync(gz, b);
    }, /^download\.(corrupt|checksum_mismatch|truncated|too_large)$/],
    ['wrong checksum', () => {
      fs.writeFileSync(gz, bytes);
      fs.writeFileSync(manifestPath, JSON.stringify({ ...m, sha256: 'f'.repeat(64) }));
    }, /^download\.checksum_mismatch$/],
  ];
  for (const [what, damage, code] of cases) {
    damage();
    const { error } = await call(page, 'update');
    assert.ok(error, `${what}: update must fail`);
    assert.match(error.code, code, `${what}: ${error.message}`);
    assert.equal(typeof error.message, 'string');
    assert.equal((await call(page, 'searchJson', 'payment', {})).value, answer, what);
    assert.equal((await call(page, 'info')).value.index.revision, good, what);
    assert.equal((await call(page, 'storedFiles')).value.length, 1, what);
  }
  await page.reload();
  const reopened = await openEngine(page, { storage: 'opfs' });
  assert.equal(reopened.index.revision, good);
  assert.equal(reopened.source, 'stored');
  await page.waitForFunction(() => window.engineEvents.length > 0);
  const [event] = await page.evaluate(() => window.engineEvents);
  assert.equal(event.type, 'updateerror');
  assert.equal(event.detail.code, 'download.checksum_mismatch');
  assert.equal((await call(page, 'searchJson', 'payment', {})).value, answer);
  await closePage(page);
  fs.writeFileSync(manifestPath, goodManifest);
});

test('the IndexedDB fallback answers and keeps the index across reloads', async () => {
  const page = await freshPage();
  const info = await openEngine(page, { storage: 'indexeddb' });
  assert.equal(info.storage, 'indexeddb');
  assert.equal(info.source, 'downloaded');
  const answer = (await call(page, 'searchJson', 'payment', {})).value;
  site.server.options.block = ['/data/'];
  await page.reload();
  const again = await openEngine(page, { storage: 'indexeddb' });
  assert.equal(again.source, 'stored');
  assert.equal((await call(page, 'searchJson', 'payment', {})).value, answer);
  site.server.options.block = [];
  await closePage(page);
});

test('the memory fallback answers', async () => {
  const page = await freshPage();
  const info = await openEngine(page, { storage: 'memory' });
  assert.equal(info.storage, 'memory');
  assert.match(info.storageReason, /memory/);
  const { value } = await call(page, 'search', 'payment', { perPage: 2 });
  assert.ok(value.totalResultsReturned > 0);
  await closePage(page);
});

test('two tabs open at once both answer (a tab opened once the first holds the OPFS pool falls back to IndexedDB)', async () => {
  const first = await freshPage();
  const a = await openEngine(first);
  assert.equal(a.storage, 'lazy', 'a first visit reads lazily');
  // A second tab at once: the first sets up browser storage (the OPFS
  // pool) only when its background copy starts, so the second finds the
  // pool free or taken, and reads lazily or falls back to IndexedDB.
  const second = await site.blank();
  const b = await openEngine(second);
  assert.ok(['lazy', 'indexeddb'].includes(b.storage), b.storage);
  const ra = (await call(first, 'searchJson', 'payment', {})).value;
  const rb = (await call(second, 'searchJson', 'payment', {})).value;
  assert.ok(JSON.parse(ra).totalResultsReturned > 0);
  assert.equal(ra, rb);
  await closePage(second);
  // The first search started the first tab's copy, which set up its
  // storage: the pool is the first tab's now. Once the copy is complete
  // the index is marked stored, so a new tab is no first visit: it needs
  // browser storage at once, finds the pool taken and uses IndexedDB.
  // (Before that, a new tab reads lazily and sets up storage later.)
  const deadline = Date.now() + 30_000;
  for (;;) {
    const info = (await call(first, 'info')).value;
    if (!/set up when the background copy starts/.test(info.storageReason) && info.lazy && info.lazy.state === 'complete') break;
    assert.ok(Date.now() < deadline, `the first tab never completed its copy: ${info.storageReason}, ${JSON.stringify(info.lazy)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const third = await site.blank();
  const c = await openEngine(third);
  assert.equal(c.storage, 'indexeddb');
  assert.match(c.storageReason, /OPFS/);
  const rc = (await call(third, 'searchJson', 'payment', {})).value;
  assert.equal(rc, ra);
  await closePage(third);
  await closePage(first);
});

test('offline, an update check makes no request and the index keeps answering', async () => {
  const page = await freshPage();
  await openEngine(page, { storage: 'opfs' });
  site.server.reset();
  await site.context.setOffline(true);
  try {
    const { value: status } = await call(page, 'update');
    assert.equal(status.status, 'offline');
    assert.equal(site.server.stats().total, 0);
    assert.ok((await call(page, 'search', 'payment', {})).value.totalResultsReturned > 0);
    assert.equal((await call(page, 'info')).value.online, false);
  } finally {
    await site.context.setOffline(false);
  }
  await closePage(page);
});

test('errors are structured { code, message, position }', async () => {
  const page = await freshPage();
  await openEngine(page);
  const { error } = await call(page, 'search', 'payment "unbalanced', {});
  assert.deepEqual(Object.keys(error).sort(), ['code', 'message', 'position']);
  assert.equal(error.code, 'query.unbalanced_quote');
  assert.equal(error.position, 8);
  assert.equal((await call(page, 'search', 'payment', { perPge: 1 })).error.code, 'options.invalid');
  assert.equal((await call(page, 'search', 42)).error.code, 'options.invalid');
  const openError = (options) =>
    page.evaluate((o) => window.GitSenseSearch.open(o).then(() => null, (e) => e.toJSON()), options);
  assert.equal((await openError({ manifestUrl: '/nope/manifest.json', storage: 'memory' })).code, 'network.http_status');
  assert.equal((await openError({ manifestUrl: '/data/manifest.json', storage: 'floppy' })).code, 'options.invalid');
  assert.equal((await openError({})).code, 'options.invalid');
  await closePage(page);
});

test('a panic in the engine becomes a clean error, not a silent dead worker', async () => {
  const page = await freshPage();
  await openEngine(page, { storage: 'memory' });
  const result = await page.evaluate(async () => {
    const errorEvent = new Promise((resolve) => window.engine.addEventListener('error', (e) => resolve(e.detail.toJSON())));
    let thrown;
    try {
      await window.engine._panicForTests();
    } catch (e) {
      thrown = e.toJSON();
    }
    let after;
    try {
      await window.engine.search('payment');
    } catch (e) {
      after = e.toJSON();
    }
    return { thrown, event: await errorEvent, after };
  });
  assert.equal(result.thrown.code, 'internal.panic');
  assert.match(result.thrown.message, /deliberate panic/);
  assert.equal(result.event.code, 'internal.panic');
  assert.equal(result.after.code, 'internal.panic');
  await closePage(page);
});

test('clear() removes stored indexes, and refuses while an engine holds them', async () => {
  const page = await freshPage();
  await openEngine(page);
  const busy = await page.evaluate(() => window.GitSenseSearch.clear().then(() => null, (e) => e.toJSON()));
  assert.equal(busy.code, 'storage.busy');
  await call(page, 'close');
  const cleared = await page.evaluate(() => window.GitSenseSearch.clear().then(() => 'ok', (e) => e.toJSON()));
  assert.equal(cleared, 'ok');
  site.server.reset();
  const info = await openEngine(page);
  assert.equal(info.source, 'lazy', 'nothing stored: a first visit again');
  assert.ok(Object.keys(site.server.stats().byPath).some((p) => p.endsWith('.pages')));
  await closePage(page);
});
