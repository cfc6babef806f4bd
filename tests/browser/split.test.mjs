// The engine in two wasm modules (xtask/src/wasm_split.rs, src/js/split.js)
// in headless Chromium: a cold visit's first answers need only the first
// module (the reader: no SQLite); the second, which holds SQLite, comes
// after them, or at once when a function of it is called first, or as a
// stored or writable index opens; a second module that cannot be had is a
// clean error.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setup, cli, call, openEngine, closePage, SAMPLE_INDEX } from './harness.mjs';

let site;
let secondary; // the second module's path on the site
before(async () => {
  site = await setup();
  const names = fs.readdirSync(path.join(site.root, 'pkg')).filter((f) => /^gitsense_search_bg-[0-9a-f]{16}\.wasm$/.test(f));
  assert.equal(names.length, 1, `one second module in pkg/: ${names}`);
  secondary = `/pkg/${names[0]}`;
});
after(async () => {
  await site.close();
});

async function freshPage() {
  Object.assign(site.server.options, { block: [], delay: [] });
  for (const p of site.context.pages()) await closePage(p);
  const page = await site.blank();
  const cleared = await page.evaluate(async () => {
    const { GitSenseSearch } = await import('/pkg/index.js');
    await GitSenseSearch.clear();
    return 'ok';
  });
  assert.equal(cleared, 'ok');
  site.server.reset();
  return page;
}

const cliJson = (q) => cli('search', SAMPLE_INDEX, q, '--format', 'json').replace(/\n$/, '');
/** CLI stdout with its `N results in X.XXs` footer set to 0.00s. */
const zeroFooter = (s) => s.replace(/results in \d+\.\d\ds\n$/, 'results in 0.00s\n');

async function waitForSecond(page) {
  for (let i = 0; i < 100; i++) {
    const { value: info } = await call(page, 'info');
    if (info.module.secondLoaded) return info;
    await page.waitForTimeout(50);
  }
  assert.fail('the second module never came in');
}

test('the first module is the smaller, and a cold visit answers with it alone, SQLite never set up', async () => {
  const first = fs.statSync(path.join(site.root, 'pkg/gitsense_search_bg.wasm')).size;
  const second = fs.statSync(path.join(site.root, secondary)).size;
  assert.ok(second > first, `SQLite and the rest are in the second module (${first} + ${second} bytes)`);

  const page = await freshPage();
  // Were a first answer to need a function of the second module, loading
  // it would fail and so would the search.
  site.server.options.block = [secondary];
  const info = await openEngine(page, { lazyFill: false });
  assert.equal(info.storage, 'lazy');
  assert.deepEqual(info.module, { split: true, secondLoaded: false });
  // Queries of kinds the build's profile run does not type word for word,
  // a mistyped word among them (corrected from the index's words).
  for (const q of ['refund', 'webhook OR checkout', '"payment intent"', 'customer -stripe', 'in:messages session*', 'in:chats checkout', 'paymnt']) {
    const { value: json, error } = await call(page, 'searchJson', q, {});
    assert.equal(error, undefined, `${q}: ${JSON.stringify(error)}`);
    assert.equal(json, cliJson(q), q);
  }
  const { value: still } = await call(page, 'info');
  assert.equal(still.module.secondLoaded, false, 'blocked: not in');
  assert.equal(still.sqliteOpen, false, 'SQLite was never set up');
  assert.equal(still.timings.lastSearchBy, 'reader');

  // Unblocked, the next answer brings it in the background; a filter is
  // SQLite's.
  site.server.options.block = [];
  const { error } = await call(page, 'searchJson', 'payment', {});
  assert.equal(error, undefined);
  await waitForSecond(page);
  assert.equal((await call(page, 'searchJson', 'role:user token', {})).value, cliJson('role:user token'));
  const { value: after } = await call(page, 'info');
  assert.equal(after.sqliteOpen, true);
  await closePage(page);
});

test('a repeat visit fetches the second module (SQLite) as it opens the stored index, once; answers and the update check follow', async () => {
  const page = await freshPage();
  // The full download: stored at once (and marked, so the next visit
  // knows before it opens anything).
  const stored = await openEngine(page, { storage: 'opfs' });
  assert.equal(stored.storage, 'opfs');
  await closePage(page);

  site.server.reset();
  // The second module slow to come: the stored index is found long before
  // it is in, and its open waits for that fetch instead of making its own.
  site.server.options.delay = [{ match: new RegExp(`${secondary.replace(/[.]/g, '\\.')}$`), ms: 1500 }];
  const again = await site.blank();
  const info = await openEngine(again);
  site.server.options.delay = [];
  assert.equal(info.source, 'stored');
  assert.equal(info.storage, 'opfs');
  assert.equal(info.sqliteOpen, true);
  assert.deepEqual(info.module, { split: true, secondLoaded: true }, 'in before the stored index opened');
  for (const q of ['payment', 'webhook OR checkout', 'in:messages session*', 'role:user token']) {
    const { value: json, error } = await call(again, 'searchJson', q, {});
    assert.equal(error, undefined, `${q}: ${JSON.stringify(error)}`);
    assert.equal(json, cliJson(q), q);
  }
  await again.waitForFunction(() => window.engineEvents.length > 0);
  assert.deepEqual(await again.evaluate(() => window.engineEvents.map((e) => [e.type, e.detail.status])), [['update', 'current']]);
  assert.equal(site.server.stats().byPath[secondary], 1, 'fetched once');
  await closePage(again);
});

test('a function of the second module called before it is in loads it at once', async () => {
  const page = await freshPage();
  await openEngine(page, { lazyFill: false });
  // No search yet, so nothing has fetched the second module; formatting
  // lives in it.
  const { value: info } = await call(page, 'info');
  assert.equal(info.module.secondLoaded, false);
  const { value: text, error } = await call(page, 'formatResults', cliJson('payment'), 'terse', { elapsedSecs: 0 });
  assert.equal(error, undefined, JSON.stringify(error));
  assert.equal(text, zeroFooter(cli('search', SAMPLE_INDEX, 'payment', '--format', 'terse')));
  const { value: after } = await call(page, 'info');
  assert.equal(after.module.secondLoaded, true);
  assert.equal(site.server.stats().byPath[secondary], 1, 'fetched once');
  // And the engine goes on answering.
  const { value: json } = await call(page, 'searchJson', 'stripe lang:js', {});
  assert.equal(json, cliJson('stripe lang:js'));
  await closePage(page);
});

test('a second module that cannot be loaded is a clean error, not a hang', async () => {
  const page = await freshPage();
  site.server.options.block = [secondary];
  await openEngine(page, { lazyFill: false });
  const { error } = await call(page, 'formatResults', cliJson('payment'), 'terse', {});
  assert.equal(error.code, 'internal.panic', JSON.stringify(error));
  assert.match(error.message, /second module .*could not be loaded/);
  // The instance is not trusted after that: every call says so.
  const { error: next } = await call(page, 'searchJson', 'payment', {});
  assert.equal(next.code, 'internal.panic');
  await closePage(page);
});

test('a chat app\'s writable index fetches the second module (SQLite) first: created, written, searched and reopened; refused, creating it is a clean error', async () => {
  const page = await freshPage();
  const messages = (chat, first, word) => Array.from({ length: 10 }, (_, i) => ({
    id: first + i,
    chat_id: chat,
    role: i % 2 ? 'assistant' : 'user',
    content: i % 2 ? `Use ${word}:\n\n\`\`\`python\ndef ${word}_${i}():\n    return ${i}\n\`\`\`` : `How do I ${word} item ${i}?`,
    created_at: `2026-01-02T00:00:${String(i).padStart(2, '0')}Z`,
  }));
  const visit = (page, create, chat, first, word) => page.evaluate(async ({ create, chat, msgs, word }) => {
    const { GitSenseSearch } = await import('/pkg/index.js');
    try {
      const engine = create ? await GitSenseSearch.create({ name: 'split-chat' }) : await GitSenseSearch.open({ name: 'split-chat' });
      const summary = await engine.add({ chats: [{ id: chat, name: `About ${word}` }], messages: msgs });
      const found = await engine.search(word);
      const code = await engine.search(`lang:python ${word}_3`);
      const info = await engine.info();
      await engine.close();
      return { messages: summary.messages, found: found.totalCounts.messages, code: code.totalCounts.codeBlocks, storage: info.storage };
    } catch (e) {
      return { error: e.toJSON ? e.toJSON() : String(e) };
    }
  }, { create, chat, msgs: messages(chat, first, word), word });
  try {
    const made = await visit(page, true, 1, 1, 'reconcile');
    assert.equal(made.error, undefined, JSON.stringify(made.error));
    assert.deepEqual([made.messages, made.found, made.code], [10, 10, 1]);
    await closePage(page);
    const again = await site.blank();
    const reopened = await visit(again, false, 2, 100, 'ledger');
    assert.equal(reopened.error, undefined, JSON.stringify(reopened.error));
    assert.deepEqual([reopened.messages, reopened.found, reopened.code], [10, 10, 1]);
    assert.equal(reopened.storage, made.storage);
    assert.ok(site.server.stats().byPath[secondary] >= 1, 'asked for');
    await closePage(again);
    site.server.options.block = [secondary];
    const refused = await site.blank();
    const failed = await visit(refused, true, 3, 200, 'invoice');
    assert.equal(failed.error?.code, 'internal.panic', JSON.stringify(failed));
    assert.match(failed.error.message, /second module .*could not be loaded/);
    await closePage(refused);
  } finally {
    site.server.options.block = [];
  }
});
