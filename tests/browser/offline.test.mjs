// open({ offline }) in headless Chromium: when lazy mode copies the whole
// index into OPFS, and the bytes a visit pays for it; saveOffline(), the
// copy the reader asks for; the pages a visit read, kept for the next one;
// and search-box mode through the JS API (never an error while the reader
// types).

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
async function visit(page, options, ms = 1500, queries = QUERIES) {
  const { info, answers } = await page.evaluate(async ([options, queries]) => {
    const { GitSenseSearch } = await import('/pkg/index.js');
    window.engine = await GitSenseSearch.open({ manifestUrl: '/data/manifest.json', storage: 'lazy', ...options });
    const answers = [];
    for (const q of queries) answers.push(await window.engine.searchJson(q));
    return { info: await window.engine.info(), answers };
  }, [options, queries]);
  await new Promise((r) => setTimeout(r, ms));
  const after = (await call(page, 'info')).value;
  const s = site.server.stats();
  const bytes = Object.entries(s.bytesByPath)
    .filter(([p]) => /\.(gsx|pages|hot\.gz)$/.test(p))
    .reduce((n, [, b]) => n + b, 0);
  return { offline: info.offline, lazy: after.lazy, bytes, answers };
}

const QUERIES = ['payment', 'stripe lang:js', 'token OR session'];

/** A new tab session on the same origin (sessionStorage gone, localStorage and OPFS kept): the next visit. */
async function nextVisit(page) {
  await page.evaluate(() => sessionStorage.clear());
  await page.goto(page.url());
  site.server.reset();
}

test('never and Save-Data never copy; always copies at once; auto never copies on its own, on any visit', async (t) => {
  const rows = [];
  let page = await fresh();
  const never = await visit(page, { offline: 'never' });
  assert.equal(never.offline.copying, false);
  assert.equal(never.offline.canSave, false);
  assert.equal(never.lazy.fillBytes, 0);
  rows.push(['never, first visit', never.bytes]);

  page = await fresh({ saveData: true, type: 'wifi' });
  const saveData = await visit(page, {});
  assert.deepEqual({ ...saveData.offline }, { policy: 'auto', visits: 1, metered: true, copying: false, canSave: true });
  assert.equal(saveData.lazy.fillBytes, 0);

  page = await fresh({ saveData: false, type: 'cellular' });
  const cellular = await visit(page, {});
  assert.equal(cellular.offline.copying, false);
  assert.equal(cellular.lazy.fillBytes, 0);

  page = await fresh();
  const always = await visit(page, { offline: 'always' }, 4000);
  assert.equal(always.offline.copying, true);
  assert.equal(always.offline.canSave, false);
  assert.ok(always.lazy.fillBytes > 0, JSON.stringify(always.lazy));
  rows.push(['always, first visit', always.bytes]);

  // auto: a first visit reads only what its searches need...
  page = await fresh();
  const first = await visit(page, {});
  assert.deepEqual({ ...first.offline }, { policy: 'auto', visits: 1, metered: false, copying: false, canSave: true });
  assert.equal(first.lazy.fillBytes, 0);
  rows.push(['auto, first visit (3 searches)', first.bytes]);
  // ...and moving to another page of the site in the same tab is the same visit.
  await page.goto(page.url());
  const same = await visit(page, {});
  assert.equal(same.offline.visits, 1);
  assert.equal(same.offline.copying, false);
  // A new tab session is the second visit, and the third: no copy
  // starts (the reader is offered one: canSave).
  for (const n of [2, 3]) {
    await nextVisit(page);
    const later = await visit(page, {}, 4000, ['ownership borrow', 'refund']);
    assert.deepEqual({ ...later.offline }, { policy: 'auto', visits: n, metered: false, copying: false, canSave: true });
    assert.equal(later.lazy.fillBytes, 0, JSON.stringify(later.lazy));
    assert.notEqual(later.lazy.state, 'complete');
    assert.ok(later.bytes < always.bytes / 2, `visit ${n}: ${later.bytes} bytes against the whole copy's ${always.bytes}`);
    rows.push([`auto, visit ${n} (2 new searches)`, later.bytes]);
  }
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

test('the pages a visit read stay in browser storage: the same searches on the next visit read no page again', async (t) => {
  const page = await fresh();
  const first = await visit(page, {});
  assert.ok(first.bytes > 0);
  assert.ok(first.lazy.pagesStored > 0, JSON.stringify(first.lazy));
  await nextVisit(page);
  const again = await visit(page, {});
  assert.equal(again.offline.visits, 2);
  assert.deepEqual(again.answers, first.answers);
  const s = site.server.stats();
  const ranges = Object.entries(s.bytesByPath).filter(([p]) => /\.(gsx|pages|hot\.gz)$/.test(p));
  t.diagnostic(`index bytes: first visit ${first.bytes}, the same searches on the next visit ${again.bytes} (${JSON.stringify(ranges)})`);
  // No page is read by range again: no read, prefetch or fill. The range
  // requests that reached the server are the probe's few bytes (less than
  // one page). The hot file is asked for again (the HTTP cache may answer
  // it): it also carries the packed file's page lengths.
  const l = again.lazy;
  assert.deepEqual([l.readRequests, l.readBytes, l.prefetchBytes, l.fillBytes], [0, 0, 0, 0], JSON.stringify(l));
  const rangeBytes = ranges.filter(([p]) => !p.endsWith('.hot.gz')).reduce((n, [, b]) => n + b, 0);
  assert.ok(rangeBytes < l.pageSize, `${rangeBytes} bytes: ${JSON.stringify(ranges)}`);
  await closePage(page);
});

test('saveOffline(): the copy the reader asks for, with progress, resolves once it is stored and answers offline', async () => {
  const page = await fresh();
  const first = await visit(page, {});
  assert.equal(first.lazy.fillBytes, 0);
  const out = await page.evaluate(async () => {
    const progress = [];
    const events = [];
    window.engine.addEventListener('fill', () => events.push('fill'));
    const before = await window.engine.info();
    const saving = window.engine.saveOffline({ onProgress: (p) => progress.push(p) });
    // Asked twice: one copy, shared.
    const again = window.engine.saveOffline();
    const during = (await window.engine.info()).offline;
    const info = await saving;
    await again;
    const answer = await window.engine.search('payment');
    return { before: before.offline, during, info, progress, events, answer: answer.totalResultsReturned };
  });
  assert.equal(out.before.canSave, true);
  assert.equal(out.during.copying, true);
  assert.equal(out.during.canSave, false);
  assert.equal(out.info.lazy.state, 'complete', JSON.stringify(out.info.lazy));
  assert.equal(out.info.offline.copying, false);
  assert.equal(out.info.offline.canSave, false);
  assert.ok(out.info.lazy.fillBytes > 0);
  assert.ok(out.progress.length > 0 && out.progress.every((p) => p.phase === 'fill' && p.total > 0 && p.loaded <= p.total), JSON.stringify(out.progress.slice(-3)));
  assert.ok(out.events.includes('fill'));
  assert.ok(out.answer > 0);
  // Saved: the next visit opens the stored copy and answers offline.
  await nextVisit(page);
  const opened = await page.evaluate(async () => {
    const { GitSenseSearch } = await import('/pkg/index.js');
    window.engine = await GitSenseSearch.open({ manifestUrl: '/data/manifest.json' });
    const info = await window.engine.info();
    return { source: info.source, canSave: info.offline && info.offline.canSave };
  });
  assert.equal(opened.source, 'stored');
  assert.equal(opened.canSave, false);
  // The engine's second module is in before the network goes.
  assert.ok(await page.evaluate(async () => {
    for (let i = 0; i < 300; i++) {
      if ((await window.engine.info()).module.secondLoaded) return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  }));
  await site.context.setOffline(true);
  try {
    site.server.reset();
    const offline = await page.evaluate(async () => {
      const res = await window.engine.search('stripe lang:js');
      // Stored whole already: saveOffline() resolves at once.
      const saved = await window.engine.saveOffline();
      return { n: res.totalResultsReturned, savedSource: saved.source };
    });
    assert.ok(offline.n > 0);
    assert.equal(offline.savedSource, 'stored');
    assert.equal(Object.keys(site.server.stats().bytesByPath).length, 0);
  } finally {
    await site.context.setOffline(false);
  }
  await closePage(page);
});

test("saveOffline() under offline: 'never' refuses with offline.refused and copies nothing", async () => {
  const page = await fresh();
  await visit(page, { offline: 'never' });
  site.server.reset();
  const out = await page.evaluate(async () => {
    try {
      await window.engine.saveOffline();
      return { ok: true };
    } catch (e) {
      return { code: e.code, message: e.message };
    }
  });
  assert.equal(out.code, 'offline.refused', JSON.stringify(out));
  const info = (await call(page, 'info')).value;
  assert.equal(info.lazy.fillBytes, 0);
  assert.notEqual(info.lazy.state, 'complete');
  await closePage(page);
});
