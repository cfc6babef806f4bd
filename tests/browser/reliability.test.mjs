// The browser module under hostile conditions: a storage quota too small
// for the index, a published file altered after publish, hot files that
// inflate without end, requests that never answer. Each test is one fault
// the engine must survive with a coded error and correct answers.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { setup, publish, withRawIndex, cli, call, openEngine, closePage, clearStorage, SAMPLE_INDEX, HOSTILE_INDEX } from './harness.mjs';

let site;
before(async () => {
  site = await setup();
});
after(async () => {
  await site.close();
});

function serverDefaults() {
  Object.assign(site.server.options, { latencyMs: 0, bandwidth: 0, range: true, multiRange: true, block: [], stall: [], delay: [] });
}

/** A page on an empty origin storage, the quota back to the browser's own. */
async function freshPage() {
  serverDefaults();
  for (const p of site.context.pages()) await closePage(p);
  const page = await site.blank();
  await setQuota(page, null);
  assert.equal(await clearStorage(page), 'ok');
  await page.evaluate(() => localStorage.clear());
  site.server.reset();
  return page;
}

/** Sets the origin's storage quota through the DevTools protocol (null:
 * the browser's own); the override lasts while its session is attached. */
let quotaSession = null;
async function setQuota(page, bytes) {
  if (quotaSession) await quotaSession.detach().catch(() => {});
  quotaSession = null;
  if (bytes === null) return;
  quotaSession = await site.context.newCDPSession(page);
  await quotaSession.send('Storage.overrideQuotaForOrigin', { origin: new URL(site.url).origin, quotaSize: bytes });
}

function cliJson(index, query) {
  return cli('search', index, query, '--format', 'json', '--time-budget-ms', '0').replace(/\n$/, '');
}

/** The error GitSenseSearch.open(options) fails with in the page (null if it opens). */
function openError(page, options) {
  return page.evaluate(async (options) => {
    const { GitSenseSearch } = await import('/pkg/index.js');
    try {
      window.engine = await GitSenseSearch.open(options);
      return null;
    } catch (e) {
      return e.toJSON();
    }
  }, options);
}

/** Resolves with the engine's next 'fill' or 'fillerror' event. */
function nextFill(page) {
  return page.evaluate(
    () =>
      new Promise((resolve) => {
        window.engine.addEventListener('fill', (e) => resolve({ type: 'fill', detail: e.detail }), { once: true });
        window.engine.addEventListener('fillerror', (e) => resolve({ type: 'fillerror', detail: e.detail.toJSON() }), { once: true });
      }),
  );
}

const QUERY = 'stripe checkout webhook refund invoice';

test('a storage quota too small for the index: storage falls back to memory, says why, and answers', async () => {
  for (const storage of ['opfs', 'indexeddb', 'auto']) {
    const page = await freshPage();
    await setQuota(page, 100 * 1024);
    const error = await openError(page, { manifestUrl: '/data/manifest.json', storage });
    assert.equal(error, null, `${storage}: ${JSON.stringify(error)}`);
    const info = await call(page, 'info');
    if (storage !== 'auto') {
      assert.equal(info.value.storage, 'memory', `${storage}: ${info.value.storageReason}`);
      assert.match(info.value.storageReason, /storage\.quota_exceeded/);
    }
    const { value, error: failed } = await call(page, 'searchJson', QUERY, { timeBudgetMs: 0 });
    assert.equal(failed, undefined, `${storage}: ${JSON.stringify(failed)}`);
    assert.equal(value, cliJson(SAMPLE_INDEX, QUERY), storage);
    await closePage(page);
  }
});

/** Publishes the sample into `dir` with text of its raw index altered in
 * place (same size: `from` and `to` as long), the packed pages removed so
 * every page comes from the altered file. Returns the manifest URL. */
function publishAltered(dir, from, to) {
  assert.equal(from.length, to.length);
  publish(site, SAMPLE_INDEX, dir);
  const bytes = fs.readFileSync(SAMPLE_INDEX);
  let n = 0;
  for (let at = bytes.indexOf(from); at >= 0; at = bytes.indexOf(from, at + 1), n++) bytes.write(to, at);
  assert.ok(n > 0, `${from} is in the raw index`);
  withRawIndex(site, dir, bytes, { packed: false, whole: fs.readFileSync(SAMPLE_INDEX) });
  return `/${dir}/manifest.json`;
}

test('pages read by range that fail the checksum are never shown again, not after a reload either', async () => {
  const manifestUrl = publishAltered('altered', 'Stripe', 'STRIPE');
  const page = await freshPage();
  await openEngine(page, { manifestUrl });
  const fill = nextFill(page);
  // Read lazily: the altered text is all there is to show, until the
  // copy is checked.
  await call(page, 'searchJson', QUERY, { timeBudgetMs: 0 });
  const event = await fill;
  assert.equal(event.type, 'fillerror');
  assert.equal(event.detail.code, 'download.checksum_mismatch');
  // From now on: the whole index, downloaded and verified.
  const expected = cliJson(SAMPLE_INDEX, QUERY);
  assert.match(expected, /Stripe/);
  const { value, error } = await call(page, 'searchJson', QUERY, { timeBudgetMs: 0 });
  assert.equal(error, undefined, JSON.stringify(error));
  assert.equal(value, expected);
  const info = (await call(page, 'info')).value;
  assert.match(info.storageReason, /did not hash to the manifest's SHA-256/);
  // A reload does not read the altered file again.
  await closePage(page);
  const again = await site.blank();
  site.server.reset();
  await openEngine(again, { manifestUrl });
  assert.equal((await call(again, 'searchJson', QUERY, { timeBudgetMs: 0 })).value, expected);
  const reopened = (await call(again, 'info')).value;
  assert.notEqual(reopened.source, 'lazy');
  assert.equal(site.server.stats().byPath[`/altered/${JSON.parse(fs.readFileSync(path.join(site.root, 'altered/manifest.json'))).rawFile}`] ?? 0, 0, 'no range read of the altered file');
  await closePage(again);
});

test('a hot file that inflates past what the manifest declares is dropped at that size: download.too_large in info().lazy.hotOff', async () => {
  publish(site, SAMPLE_INDEX, 'bomb');
  // A site with a raw index, which serves the visit without the hot file.
  const m = withRawIndex(site, 'bomb', fs.readFileSync(SAMPLE_INDEX));
  // 256 MiB of zeros in a quarter of a MiB of gzip, under both hot names.
  const bomb = zlib.gzipSync(Buffer.alloc(256 << 20), { level: 9 });
  fs.writeFileSync(path.join(site.root, 'bomb', m.hotFile), bomb);
  fs.writeFileSync(path.join(site.root, 'bomb/manifest.hot.gz'), bomb);
  const page = await freshPage();
  const info = await openEngine(page, { manifestUrl: '/bomb/manifest.json', lazyFill: false });
  assert.equal(info.storage, 'lazy');
  assert.match(info.lazy.hotOff || '', /^download\.too_large/, JSON.stringify(info.lazy));
  assert.equal(info.lazy.hotPages, 0);
  assert.equal((await call(page, 'searchJson', QUERY, { timeBudgetMs: 0 })).value, cliJson(SAMPLE_INDEX, QUERY));
  await closePage(page);
});

test('requests that never answer fail with network.timeout after requestTimeoutMs: the manifest, the full download, an update', async () => {
  const m = publish(site, SAMPLE_INDEX, 'stall');
  const manifestUrl = '/stall/manifest.json';
  const options = { manifestUrl, storage: 'memory', requestTimeoutMs: 1000 };
  for (const [what, stall] of [
    ['manifest', /\/stall\/manifest\.json$/],
    ['download', /\/stall\/.*\.pages$/],
  ]) {
    const page = await freshPage();
    site.server.options.stall = [stall];
    const t0 = Date.now();
    const error = await openError(page, options);
    const waited = Date.now() - t0;
    assert.equal(error && error.code, 'network.timeout', `${what}: ${JSON.stringify(error)}`);
    assert.match(error.message, /no (answer|data) within 1000 ms/);
    assert.ok(waited < 15_000, `${what}: gave up after ${waited} ms`);
    await closePage(page);
  }
  // An update: the manifest stalls (the stored index answers: 'offline'),
  // then a new index's download stalls (rejected with network.timeout).
  const page = await freshPage();
  assert.equal(await openError(page, options), null);
  site.server.options.stall = [/\/stall\/manifest\.json$/];
  const checked = await call(page, 'update');
  assert.equal(checked.value && checked.value.status, 'offline', JSON.stringify(checked));
  assert.match(checked.value.reason, /no answer within 1000 ms/);
  publish(site, HOSTILE_INDEX, 'stall');
  assert.notEqual(JSON.parse(fs.readFileSync(path.join(site.root, 'stall/manifest.json'))).sha256, m.sha256);
  site.server.options.stall = [/\/stall\/.*\.pages$/];
  const updated = await call(page, 'update');
  assert.equal(updated.error && updated.error.code, 'network.timeout', JSON.stringify(updated));
  site.server.options.stall = [];
  assert.equal((await call(page, 'searchJson', QUERY, { timeBudgetMs: 0 })).value, cliJson(SAMPLE_INDEX, QUERY), 'the old index still answers');
  await closePage(page);
});

test('the quota runs out during the background copy: the copy fails with a coded fillerror, the index keeps answering, info() says why', async () => {
  // The pages are fetched into the fill file (sized when the visit
  // starts); then the quota is cut to what is used, plus room for the
  // storage pool but not for the copy, or plus nothing.
  for (const room of [1_500_000, 0]) {
    const page = await freshPage();
    const info = await openEngine(page, {});
    assert.equal(info.storage, 'lazy', JSON.stringify(info));
    assert.equal(info.lazy.state, 'filling');
    const used = await page.evaluate(async () => (await navigator.storage.estimate()).usage);
    await setQuota(page, used + room);
    const fill = nextFill(page);
    const expected = cliJson(SAMPLE_INDEX, QUERY);
    assert.equal((await call(page, 'searchJson', QUERY, { timeBudgetMs: 0 })).value, expected);
    const event = await fill;
    assert.equal(event.type, 'fillerror', `room ${room}: ${JSON.stringify(event)}`);
    assert.equal(event.detail.code, 'storage.quota_exceeded', JSON.stringify(event.detail));
    // Still answering, pages read by range and kept in memory.
    for (const q of [QUERY, 'payment', 'docker compose']) {
      const { value, error } = await call(page, 'searchJson', q, { timeBudgetMs: 0 });
      assert.equal(error, undefined, `${q}: ${JSON.stringify(error)}`);
      assert.equal(value, cliJson(SAMPLE_INDEX, q), q);
    }
    const after = (await call(page, 'info')).value;
    assert.equal(after.source, 'lazy', JSON.stringify(after));
    assert.equal(after.lazy.state, 'memory', JSON.stringify(after.lazy));
    assert.match(after.lazy.reason, /storage\.quota_exceeded/, JSON.stringify(after.lazy));
    await closePage(page);
  }
});

/** Bytes of every file in the origin's OPFS, read from a page with no
 * engine open (a worker's sync access handles lock the files). */
async function storedBytes() {
  const page = await site.blank();
  const bytes = await page.evaluate(async () => {
    const walk = async (dir) => {
      let n = 0;
      for await (const entry of dir.values()) {
        n += entry.kind === 'file' ? (await entry.getFile()).size : await walk(entry);
      }
      return n;
    };
    return walk(await navigator.storage.getDirectory());
  });
  await closePage(page);
  return bytes;
}

test('manifest.json?v=1..4 keeps one stored copy: the query string does not make a new one, a new revision replaces the old', async () => {
  const first = publish(site, SAMPLE_INDEX, 'rev');
  await closePage(await freshPage());
  const size = fs.statSync(SAMPLE_INDEX).size;
  const stored = [];
  for (const v of [1, 2, 3, 4]) {
    if (v === 3) publish(site, HOSTILE_INDEX, 'rev');
    const page = await site.blank();
    const info = await openEngine(page, { manifestUrl: `/rev/manifest.json?v=${v}`, storage: 'opfs' });
    if (v > 1) assert.equal(info.source, 'stored', `?v=${v} opens what ?v=1 stored`);
    if (v === 3) {
      // The stored copy answers at once; the update replaces it.
      assert.equal(info.index.revision, first.revision);
      assert.equal((await call(page, 'update')).value.status, 'updated');
    }
    assert.equal((await call(page, 'storedFiles')).value.length, 1, `?v=${v}`);
    await closePage(page);
    stored.push(await storedBytes());
  }
  // One copy of the sample, then one of the new revision: never two.
  assert.ok(stored[1] < 1.5 * size, `bytes in OPFS after each visit: ${stored} (the sample is ${size})`);
  assert.ok(stored[3] < size / 2, `bytes in OPFS after each visit: ${stored} (the new revision is ${fs.statSync(HOSTILE_INDEX).size})`);
  const page = await site.blank();
  await openEngine(page, { manifestUrl: '/rev/manifest.json?v=4', storage: 'opfs' });
  assert.equal((await call(page, 'searchJson', 'hostile payload', { timeBudgetMs: 0 })).value, cliJson(HOSTILE_INDEX, 'hostile payload'));
  await closePage(page);
});

test('a manifest that declares an index too large for the browser is refused with download.too_large before any download', async () => {
  const m = publish(site, SAMPLE_INDEX, 'huge');
  const pageCount = 1e15 / m.pageSize;
  fs.writeFileSync(path.join(site.root, 'huge/manifest.json'), JSON.stringify({ ...m, size: 1e15, pageCount, compressedSize: 1e15, packedSize: 1e15 }));
  for (const storage of ['auto', 'memory', 'opfs']) {
    const page = await freshPage();
    const error = await openError(page, { manifestUrl: '/huge/manifest.json', storage });
    assert.equal(error && error.code, 'download.too_large', `${storage}: ${JSON.stringify(error)}`);
    assert.match(error.message, /1000000000000000 bytes/);
    const read = Object.keys(site.server.stats().byPath).filter((p) => p.startsWith('/huge/') && !p.endsWith('.json') && !p.endsWith('manifest.hot.gz'));
    assert.deepEqual(read, [], `${storage}: nothing but the manifest is requested`);
    await closePage(page);
  }
});
