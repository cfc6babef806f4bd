// Build tool (run by ./build.sh, not shipped): which of the engine's wasm
// functions a visit runs, for xtask/src/wasm_split.rs to keep in the first
// module.
//
//   node xtask/js/split-profile.mjs PKG_DIR CLI OUT INDEX.gsx[=QUERIES.json]...
//
// (QUERIES.json: `{ "queries": [...] }`, run on that index besides QUERIES,
// for indexes whose words QUERIES does not know.)
// PKG_DIR is a built pkg/ whose module is `wasm-split instrument`ed (every
// function calls gitsense_split.hit(i); split.js records i). In headless
// Chromium, on a private copy of PKG_DIR with each INDEX published next to
// it (build.sh gives the GitSense sample, chats without code blocks, a
// documentation index with code blocks, and two made-up indexes of the
// browser tests' fixtures: one whose FTS index is as deep as a large
// corpus's, one whose words match on every page), for each index:
// 1. a cold first visit (storage 'auto': lazy reads, the first query
//    given to open() as firstQuery: the index's own first query if it has
//    any) opens the index and runs QUERIES, as
//    a page's first searches would, then OFFLINE_QUERIES with the network
//    off (the second module cannot come then, so the offline error path
//    must be in the first);
// 2. a page stores the index (storage 'opfs', a full download);
// 3. a repeat visit opens the stored index and runs QUERIES again;
// 4. the drop-in UI (PKG_DIR/ui.js, `<gitsense-search>` with its
//    defaults: box mode, one row per page, snippets, the facets it shows)
//    on a cold visit: Ctrl+K, then queries typed key by key, so every
//    prefix a reader's typing searches is searched, and each facet clicked;
// then, once (5.), a chat app's writable index: create, add a
// conversation, search, reopen after a reload, add and search again.
// OUT gets, one per line (`wasm-split names` turns them into the
// committed profile), the indices called on the way to answers without
// SQLite: opening a lazily read index and the searches of 1 and 4 the
// reader answered (`info().timings.lastSearchBy`), up to the first that
// needed SQLite in 4. What needs SQLite (a stored index, a writable one,
// filters, typo correction) runs all the same, so that the run fails if
// it breaks, but is the second module's: the worker fetches that module
// as soon as it knows it needs it (worker.js), and a search that turns out
// to need SQLite loads it then.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';
import { startServer } from '../../www/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS } from '../../tests/browser/chromium.mjs';

// The kinds of search a page runs first: words, prefixes, phrases, OR and
// NOT, filters, chats, code, paging, highlighting, no match, a bad query.
const QUERIES = [
  ['payment', {}],
  ['payment', { perPage: 3, page: 2 }],
  ['stripe lang:js', {}],
  ['"form validation"', { highlight: 'raw' }],
  ['in:chats payment', {}],
  ['in:code-blocks function', {}],
  ['auth* -test msg-type:git-blob', { includeContent: false }],
  ['msg-type:regular', { perPage: 5 }],
  ['token OR session', { highlight: 'none' }],
  ['payment -stripe', {}],
  ['nothing-matches-this-zzzz', {}],
  // A typo: corrected from the index's words (engine::typo).
  ['paymnet', {}],
  ['"unbalanced', {}],
  ['os.path.join', {}],
  ['cargo build --release', {}],
  ['lang:bash node', { perPage: 3 }],
  // Many matches: sorting and maps past their small-size paths.
  ['in:messages session*', {}],
  // (Prefixes of 3 letters or more: shorter ones are searched as words.)
  ['the* OR for*', { perPage: 100 }],
  ['the* -pay*', { perPage: 50, page: 2 }],
  ['in:chats sec* OR pay* OR tut*', { perPage: 100 }],
  // Text beyond ASCII (headings with dashes, names with accents).
  ['subprocess — Subprocess management', {}],
  ['naïve café über', {}],
];
// The engine's background work after open (storage setup on a first
// visit, the update check on a repeat one) and after a search.
const SETTLE_MS = 1500;

// Words whose pages QUERIES did not fetch.
const OFFLINE_QUERIES = [['zebra quartz', {}], ['in:chats xylophone', {}]];

const [pkgDir, cli, out, ...args] = process.argv.slice(2);
const indexes = args.map((a) => a.split('=')[0]);
const extraQueries = args.map((a) => {
  const file = a.split('=')[1];
  return file ? JSON.parse(fs.readFileSync(file, 'utf8')).queries.map((q) => [q, {}]) : [];
});
if (!indexes.length) {
  console.error('usage: node xtask/js/split-profile.mjs PKG_DIR CLI OUT INDEX.gsx...');
  process.exit(2);
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-split-site-'));
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-split-profile-'));
fs.cpSync(pkgDir, path.join(root, 'pkg'), { recursive: true });
indexes.forEach((index, i) => execFileSync(cli, ['publish', index, '--out-dir', path.join(root, `data${i}`)], { stdio: 'ignore' }));
fs.writeFileSync(path.join(root, 'blank.html'), '<!doctype html><meta charset="utf-8"><title>profile</title>');
// A reader's page per index: the two lines `gitsense-search site` prints.
indexes.forEach((_, i) => fs.writeFileSync(path.join(root, `ui${i}.html`),
  `<!doctype html><html lang="en"><meta charset="utf-8"><title>docs</title><body><main><h1>Docs</h1>\n<script type="module" src="/pkg/ui.js"></script>\n<gitsense-search manifest="/data${i}/manifest.json"></gitsense-search></main></body></html>`));
const server = await startServer({ root, port: 0 });
const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });

/** Opens an engine on a fresh page, runs `queries`; returns the worker's
 * hits. With `options.firstQuery`, that query is searched at once, as a
 * page does: while the engine's work after open is still running. */
async function visit(data, options, queries, offlineQueries = []) {
  const page = await context.newPage();
  await page.goto(server.url + 'blank.html');
  const info = await page.evaluate(async (options) => {
    const { GitSenseSearch } = await import('/pkg/index.js');
    window.engine = await GitSenseSearch.open({ lazyFill: false, ...options });
    const info = await window.engine.info();
    if (options.firstQuery) await window.engine.search(options.firstQuery).catch((e) => e.code);
    info.firstBy = (await window.engine.info()).timings.lastSearchBy;
    return info;
  }, { manifestUrl: `/${data}/manifest.json`, ...options });
  // Read now as well as at the end: what a first answer ran is what the
  // split must keep, whatever becomes of the worker later.
  const early = await workerHits(page);
  await page.waitForTimeout(SETTLE_MS);
  // Each search's own functions, kept when the reader answered it (or
  // it failed before searching: a query that does not parse).
  const kept = new Set(info.firstBy === 'sqlite' || info.source === 'stored' ? [] : early);
  const run = async (list) => {
    for (const [query, o] of list) {
      const before = new Set(await workerHits(page));
      const outcome = await page.evaluate(async ([q, o]) => {
        const failed = await window.engine.search(q, o).then(() => null, (e) => e.code);
        const { timings } = await window.engine.info();
        return { failed, by: timings.lastSearchBy };
      }, [query, o]);
      const reader = outcome.by === 'reader' && !outcome.failed;
      const unparsed = typeof outcome.failed === 'string' && outcome.failed.startsWith('query.');
      if (reader || unparsed || outcome.failed === 'network.offline') {
        for (const h of await workerHits(page)) if (!before.has(h)) kept.add(h);
      }
    }
  };
  await run(queries);
  if (offlineQueries.length) {
    await context.setOffline(true);
    try {
      await run(offlineQueries);
    } finally {
      await context.setOffline(false);
    }
  }
  await page.waitForTimeout(SETTLE_MS);
  await page.goto('about:blank');
  await page.close();
  return { info, hits: [...kept] };
}

/** The functions the page's workers have run so far. */
async function workerHits(page) {
  const hits = [];
  for (const worker of page.workers()) {
    hits.push(...(await worker.evaluate(() => [...(globalThis.__gitsenseSplitHits || [])])));
  }
  return hits;
}

/** Waits until the UI shows the answer to what its box holds. */
async function uiSettled(page, text) {
  await page.waitForFunction((text) => {
    const r = document.querySelector('gitsense-search').shadowRoot;
    return r.querySelector('input').value === text && r.querySelector('.rows').getAttribute('aria-busy') === 'false' &&
      /result|No results|rror/i.test(r.querySelector('.status').textContent);
  }, text, { timeout: 120_000 });
}

/**
 * The drop-in UI on a cold visit (storage emptied first): Ctrl+K, each
 * of `typed` typed key by key (slower than the box's debounce, so each
 * prefix is searched as a reader's typing searches it), then each facet
 * the box shows clicked. Returns the worker's hits.
 */
async function uiVisit(i, typed) {
  await clearStorage();
  const page = await context.newPage();
  await page.goto(`${server.url}ui${i}.html`);
  await page.waitForFunction(() => customElements.get('gitsense-search'));
  await page.keyboard.press('Control+k');
  await page.waitForFunction(() => document.querySelector('gitsense-search').shadowRoot.querySelector('dialog').open);
  // What typing ran until a search needed SQLite.
  let kept = [];
  let open = false;
  for (const text of typed) {
    await page.evaluate(() => {
      const input = document.querySelector('gitsense-search').shadowRoot.querySelector('input');
      input.value = '';
      input.focus();
    });
    await page.keyboard.type(text, { delay: 90 });
    await uiSettled(page, text);
    if (open) continue;
    ({ sqliteOpen: open } = await page.evaluate(() => document.querySelector('gitsense-search').engine.info()));
    if (!open) kept = await workerHits(page);
  }
  const facets = await page.evaluate(() => [...document.querySelector('gitsense-search').shadowRoot.querySelectorAll('.facets:not([hidden]) button')].map((b) => b.dataset.facet));
  for (const f of facets) {
    await page.evaluate((f) => document.querySelector('gitsense-search').shadowRoot.querySelector(`.facets button[data-facet="${f}"]`).click(), f);
    await page.waitForTimeout(300);
    await uiSettled(page, typed[typed.length - 1]);
  }
  await page.waitForTimeout(SETTLE_MS);
  await page.goto('about:blank');
  await page.close();
  return kept;
}

/**
 * A chat app's writable index: create, search, add, search; reopened
 * after a reload, the same again; then another index created and written
 * before its first search (a first add takes paths a search made before
 * it does not).
 */
async function writableVisit() {
  await clearStorage();
  const messages = (chat, first, word) => Array.from({ length: 20 }, (_, k) => ({
    id: first + k,
    chat_id: chat,
    role: k % 2 ? 'assistant' : 'user',
    content: k % 2 ? `Call ${word} again:\n\n\`\`\`python\ndef ${word}_${k}():\n    return ${word}(${k})\n\`\`\`` : `How do I ${word} step ${k}?`,
    created_at: `2026-01-02T00:00:${String(k).padStart(2, '0')}Z`,
  }));
  const hits = [];
  const visits = [
    ['create', 'profile-chat', true, 1, 1, 'reconcile'],
    ['open', 'profile-chat', true, 2, 100, 'ledger'],
    ['create', 'profile-chat-added-first', false, 1, 1, 'invoice'],
  ];
  for (const [how, name, searchFirst, chat, first, word] of visits) {
    const page = await context.newPage();
    await page.goto(server.url + 'blank.html');
    const out = await page.evaluate(async ({ how, name, searchFirst, chat, msgs, word }) => {
      const { GitSenseSearch } = await import('/pkg/index.js');
      const engine = how === 'create' ? await GitSenseSearch.create({ name }) : await GitSenseSearch.open({ name });
      if (searchFirst) await engine.search(word);
      await engine.add({ chats: [{ id: chat, name: `Chat ${word}` }], messages: msgs });
      const r = await engine.search(word);
      await engine.search(`lang:python ${word}_3`);
      await engine.search(`in:chats ${word}`);
      await engine.info();
      return r.totalCounts.messages;
    }, { how, name, searchFirst, chat, msgs: messages(chat, first, word), word });
    if (!(out > 0)) throw new Error(`the writable index found nothing after add: ${out}`);
    await page.waitForTimeout(SETTLE_MS);
    hits.push(...(await workerHits(page)));
    await page.goto('about:blank');
    await page.close();
  }
  return hits;
}

/** Removes what earlier visits stored (GitSenseSearch.clear()). */
async function clearStorage() {
  const page = await context.newPage();
  await page.goto(server.url + 'blank.html');
  await page.evaluate(async () => {
    const { GitSenseSearch } = await import('/pkg/index.js');
    await GitSenseSearch.clear();
  });
  await page.goto('about:blank');
  await page.close();
}

const hits = new Set();
const counts = [];
try {
  for (let i = 0; i < indexes.length; i++) {
    const data = `data${i}`;
    const queries = [...QUERIES, ...extraQueries[i]];
    if (i === 0) {
      // A first visit sets browser storage up at open when the page's
      // prefetch comes after the session opens (slow networks), else when
      // the fill starts: with the hot pages held back, the first order.
      server.options.delay = [{ match: /\.hot\.gz$/, ms: 500 }];
      try {
        const slow = await visit(data, {}, QUERIES.slice(0, 3));
        for (const h of slow.hits) hits.add(h);
        counts.push(`${path.basename(indexes[i])}, hot pages late: ${slow.hits.length}`);
      } finally {
        server.options.delay = [];
      }
      // The next first visit starts on empty storage again.
      await clearStorage();
    }
    // The page knows its first query (open's firstQuery) and searches it
    // as soon as the engine is open. An index with queries of its own is asked
    // its first one first, as a page of that site would be (which code a
    // first query runs before any other depends on the index's words).
    const ordered = extraQueries[i].length ? [extraQueries[i][0], ...queries] : queries;
    const first = await visit(data, { firstQuery: ordered[0][0] }, ordered, OFFLINE_QUERIES);
    if (first.info.storage !== 'lazy') throw new Error(`a first visit did not read lazily: ${JSON.stringify(first.info)}`);
    await visit(data, { storage: 'opfs' }, []);
    const repeat = await visit(data, {}, queries);
    if (repeat.info.source !== 'stored') throw new Error(`the repeat visit did not open the stored index: ${JSON.stringify(repeat.info)}`);
    // (The stored index is SQLite's: none of its searches is the reader's.)
    // The UI: the index's own first queries (or the general ones), then
    // words, a phrase, a filter and a query that matches nothing.
    const own = extraQueries[i].slice(0, 3).map(([q]) => q);
    const ui = await uiVisit(i, [...(own.length ? own : ['payment', 'os.path.join']), 'session token', '"form validation"', 'lang:bash node', 'zzqx', 'paymnet']);
    for (const h of [...first.hits, ...ui]) hits.add(h);
    counts.push(`${path.basename(indexes[i])}: first visit ${first.hits.length}, repeat ${repeat.hits.length}, UI ${ui.length}`);
  }
  // Run for its checks; its functions are the second module's.
  const writable = await writableVisit();
  counts.push(`writable index: ${writable.length} (not kept)`);
  if (hits.size === 0) throw new Error('no function was recorded: is the module instrumented?');
  fs.writeFileSync(out, [...hits].sort((a, b) => a - b).join('\n') + '\n');
  console.log(`split profile: ${hits.size} functions (${counts.join('; ')})`);
} finally {
  await context.close();
  await server.close();
  fs.rmSync(root, { recursive: true, force: true });
  fs.rmSync(profile, { recursive: true, force: true });
}
