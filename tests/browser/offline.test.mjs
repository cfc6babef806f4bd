// open({ offline }) in headless Chromium: when lazy mode copies the whole
// index into OPFS, and the bytes a visit pays for it; and search-box mode
// through the JS API (never an error while the reader types).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, call, closePage } from './harness.mjs';

let site;
before(async () => {
  site = await setup();
});
after(async () => {
  await site.close();
});

/** A page on an empty origin (no stored index, no visit counted), with
 * `connection` as navigator.connection when given. */
async function fresh(connection) {
  for (const p of site.context.pages()) await closePage(p);
  const page = await site.blank();
  await page.evaluate(async () => {
    const { GitSenseSearch } = await import('/pkg/index.js');
    for (let i = 0; i < 30; i++) {
      try {
        await GitSenseSearch.clear();
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    localStorage.clear();
    sessionStorage.clear();
  });
  if (connection) {
    await page.evaluate((c) => Object.defineProperty(Navigator.prototype, 'connection', { configurable: true, get: () => c }), connection);
  }
  site.server.reset();
  return page;
}

/** Opens with `options`, runs three searches, waits `ms`, and returns the
 * offline decision and the index bytes the server sent. */
async function visit(page, options, ms = 1500) {
  const info = await page.evaluate(async (options) => {
    const { GitSenseSearch } = await import('/pkg/index.js');
    window.engine = await GitSenseSearch.open({ manifestUrl: '/data/manifest.json', storage: 'lazy', ...options });
    for (const q of ['payment', 'stripe lang:js', 'token OR session']) await window.engine.search(q);
    return window.engine.info();
  }, options);
  await new Promise((r) => setTimeout(r, ms));
  const after = (await call(page, 'info')).value;
  const s = site.server.stats();
  const bytes = Object.entries(s.bytesByPath)
    .filter(([p]) => /\.(gsx|pages|hot\.gz)$/.test(p))
    .reduce((n, [, b]) => n + b, 0);
  return { offline: info.offline, lazy: after.lazy, bytes };
}

test('never and Save-Data never copy; always copies at once; auto copies from the second visit', async (t) => {
  const rows = [];
  let page = await fresh();
  const never = await visit(page, { offline: 'never' });
  assert.equal(never.offline.copying, false);
  assert.equal(never.lazy.fillBytes, 0);
  rows.push(['never, first visit', never.bytes]);

  page = await fresh({ saveData: true, type: 'wifi' });
  const saveData = await visit(page, {});
  assert.deepEqual({ ...saveData.offline }, { policy: 'auto', visits: 1, metered: true, copying: false });
  assert.equal(saveData.lazy.fillBytes, 0);

  page = await fresh({ saveData: false, type: 'cellular' });
  const cellular = await visit(page, {});
  assert.equal(cellular.offline.copying, false);
  assert.equal(cellular.lazy.fillBytes, 0);

  page = await fresh();
  const always = await visit(page, { offline: 'always' }, 4000);
  assert.equal(always.offline.copying, true);
  assert.ok(always.lazy.fillBytes > 0, JSON.stringify(always.lazy));
  rows.push(['always, first visit', always.bytes]);

  // auto: a first visit reads only what its searches need...
  page = await fresh();
  const first = await visit(page, {});
  assert.deepEqual({ ...first.offline }, { policy: 'auto', visits: 1, metered: false, copying: false });
  assert.equal(first.lazy.fillBytes, 0);
  rows.push(['auto, first visit (3 searches)', first.bytes]);
  // ...and moving to another page of the site in the same tab is the same visit.
  await page.goto(page.url());
  const same = await visit(page, {});
  assert.equal(same.offline.visits, 1);
  assert.equal(same.offline.copying, false);
  // A new tab session (sessionStorage gone, localStorage kept) is the second visit: it copies.
  await page.evaluate(() => sessionStorage.clear());
  await page.goto(page.url());
  site.server.reset();
  const second = await visit(page, {}, 4000);
  assert.equal(second.offline.visits, 2);
  assert.equal(second.offline.copying, true);
  assert.ok(second.lazy.fillBytes > 0);
  rows.push(['auto, second visit', second.bytes]);
  t.diagnostic(`index bytes per visit: ${rows.map(([k, b]) => `${k}: ${b}`).join('; ')}`);
  await closePage(page);
});

test('box mode answers every keystroke of code-like and half-typed text', async () => {
  const page = await fresh();
  const out = await page.evaluate(async () => {
    const { GitSenseSearch } = await import('/pkg/index.js');
    const engine = await GitSenseSearch.open({ manifestUrl: '/data/manifest.json', offline: 'never' });
    const texts = [];
    for (const full of ["'static", 'fn main()', '"borrow', 'paym', 'foo OR', '-', 'AND', 'lang:js stri']) {
      for (let i = 1; i <= full.length; i++) texts.push(full.slice(0, i));
    }
    const errors = [];
    for (const t of texts) {
      try {
        await engine.search(t, { mode: 'box' });
      } catch (e) {
        errors.push([t, e.code]);
      }
    }
    let strict = null;
    try {
      await engine.search('fn main()');
    } catch (e) {
      strict = e.code;
    }
    const half = await engine.search('paym', { mode: 'box' });
    const whole = await engine.search('paym');
    return { errors, strict, half: half.totalResultsReturned, whole: whole.totalResultsReturned, count: texts.length };
  });
  assert.deepEqual(out.errors, []);
  assert.equal(out.strict, 'query.empty_group');
  assert.ok(out.half > 0 && out.whole === 0, JSON.stringify(out));
});
