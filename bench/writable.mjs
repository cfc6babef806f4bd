#!/usr/bin/env node
// Writable indexes in headless Chromium (GitSenseSearch.create): how long
// adding one 20-message conversation takes until it is committed and
// searchable, and whether a search right after a write is as fast as one
// without writes, per storage backend (OPFS, IndexedDB), side by side
// with FlexSearch 0.8's persistent index on IndexedDB (npm `flexsearch`:
// a Document index of the message text, `commit()` awaited after each
// add) for the same conversations.
//
//   node bench/writable.mjs [--adds N] [--searches N] [--preload N]
//
// Needs ./build.sh (www/dist/pkg). Each backend gets a fresh browser
// profile; `--preload` conversations are added first (the index a chat
// app has after a while), then `--adds` more are timed one by one (from
// the call to the resolved promise: the transaction committed where the
// index lives, IndexedDB's save included; FlexSearch: add() then
// commit()), then `--searches` queries with no write between them, then
// as many each right after an add. FlexSearch gets the queries' words
// (it has no filters or phrases) and returns ids only, where ours builds
// the whole results object (snippets, counts per target). Prints
// Markdown; merges the numbers into bench/results.json under `writable`.

import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../www/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS } from '../tests/browser/chromium.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const ADDS = opt('--adds', 60);
const SEARCHES = opt('--searches', 60);
const PRELOAD = opt('--preload', 200);

if (!fs.existsSync(path.join(ROOT, 'www/dist/pkg/index.js'))) {
  console.error('www/dist/pkg is missing: run ./build.sh first');
  process.exit(1);
}

// The page's side: conversations made from a fixed vocabulary by a seeded
// generator (the same text for every backend), the timing loops.
async function pageRun({ storage, adds, searches, preload }) {
  let seed = 12345;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const words = 'payment retry invoice ledger refund token session cache query index worker browser storage commit rollback transaction queue backoff timeout socket stream buffer parser schema migration deploy build release branch merge review patch vector matrix tensor model prompt answer reason plan search result rank score'.split(' ');
  const sentence = (n) => Array.from({ length: n }, () => words[Math.floor(rand() * words.length)]).join(' ');
  let nextChat = 1;
  let nextMessage = 1;
  const conversation = () => {
    const chat = nextChat++;
    const messages = [];
    for (let i = 0; i < 20; i++) {
      const user = i % 2 === 0;
      const text = user
        ? `${sentence(12)}?`
        : `${sentence(40)}.\n\n\`\`\`js\nfunction ${words[i % words.length]}${chat}() { return ${JSON.stringify(sentence(4))}; }\n\`\`\`\n${sentence(20)}.`;
      messages.push({ id: nextMessage++, chat_id: chat, role: user ? 'user' : 'assistant', content: text, created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, chat * 20 + i)).toISOString() });
    }
    return { chats: [{ id: chat, name: sentence(4) }], messages };
  };
  let engine;
  if (storage === 'flexsearch') {
    const { Document, IndexedDB } = await import('/flexsearch.bundle.module.min.js');
    const index = new Document({ document: { id: 'id', index: ['content'] } });
    await index.mount(new IndexedDB('bench-flexsearch'));
    const plain = (q) => q.replace(/lang:\S+|"|\bOR\b/g, ' ').replace(/\s+/g, ' ').trim();
    engine = {
      async add(batch) {
        for (const m of batch.messages) index.add({ id: m.id, content: m.content });
        await index.commit();
      },
      search: (q) => index.search(plain(q), { limit: 20 }),
      info: async () => ({ storage: 'indexeddb', sizeBytes: 0, index: { messages: nextMessage - 1, code_blocks: 0 } }),
      close: async () => {},
    };
  } else {
    const { GitSenseSearch } = await import('/pkg/index.js');
    engine = await GitSenseSearch.create({ name: `bench-${storage}`, storage });
  }
  for (let i = 0; i < preload; i++) await engine.add(conversation());
  const addMs = [];
  for (let i = 0; i < adds; i++) {
    const batch = conversation();
    const t = performance.now();
    await engine.add(batch);
    addMs.push(performance.now() - t);
  }
  const queries = ['payment retry', 'ledger', 'commit transaction', 'token OR session', 'lang:js backoff', 'rank score', '"merge review"', 'schema migration deploy'];
  const searchMs = async (q) => {
    const t = performance.now();
    await engine.search(q);
    return performance.now() - t;
  };
  const quiet = [];
  for (let i = 0; i < searches; i++) quiet.push(await searchMs(queries[i % queries.length]));
  const afterWrite = [];
  for (let i = 0; i < searches; i++) {
    await engine.add(conversation());
    afterWrite.push(await searchMs(queries[i % queries.length]));
  }
  const info = await engine.info();
  await engine.close();
  return { addMs, quiet, afterWrite, info: { storage: info.storage, sizeBytes: info.sizeBytes, messages: info.index.messages, codeBlocks: info.index.codeBlocks } };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const p95 = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.95))];
};
const ms = (x) => Math.round(x * 10) / 10;

const site = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-writable-bench-'));
fs.cpSync(path.join(ROOT, 'www/dist/pkg'), path.join(site, 'pkg'), { recursive: true });
const FLEX = path.join(ROOT, 'node_modules/flexsearch/dist/flexsearch.bundle.module.min.js');
if (fs.existsSync(FLEX)) fs.copyFileSync(FLEX, path.join(site, 'flexsearch.bundle.module.min.js'));
fs.writeFileSync(path.join(site, 'blank.html'), '<!doctype html><meta charset="utf-8"><title>bench</title>');
const server = await startServer({ root: site, port: 0 });
const rows = {};
try {
  for (const storage of ['opfs', 'indexeddb', ...(fs.existsSync(FLEX) ? ['flexsearch'] : [])]) {
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-writable-profile-'));
    const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    try {
      const page = await context.newPage();
      await page.goto(`${server.url}blank.html`);
      const r = await page.evaluate(pageRun, { storage, adds: ADDS, searches: SEARCHES, preload: PRELOAD });
      if (r.error) throw new Error(r.error);
      rows[storage] = {
        add20: { median: ms(median(r.addMs)), p95: ms(p95(r.addMs)), n: r.addMs.length },
        search: { median: ms(median(r.quiet)), p95: ms(p95(r.quiet)), n: r.quiet.length },
        searchAfterWrite: { median: ms(median(r.afterWrite)), p95: ms(p95(r.afterWrite)), n: r.afterWrite.length },
        index: r.info,
      };
    } finally {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    }
  }
} finally {
  await server.close();
  fs.rmSync(site, { recursive: true, force: true });
}

console.log(`Writable index, Chromium: ${PRELOAD} conversations first, then ${ADDS} timed adds of one 20-message conversation; ${SEARCHES} searches without and right after a write.\n`);
console.log('| engine, storage | add 20 messages median / p95 (ms) | search median / p95 (ms) | search right after a write median / p95 (ms) | messages | size |');
console.log('| --- | --- | --- | --- | --- | --- |');
for (const [storage, r] of Object.entries(rows)) {
  const label = storage === 'flexsearch' ? 'FlexSearch 0.8, IndexedDB' : `gitsense-search, ${storage}`;
  const size = r.index.sizeBytes ? `${(r.index.sizeBytes / 1048576).toFixed(1)} MiB` : 'n/a';
  console.log(`| ${label} | ${r.add20.median} / ${r.add20.p95} | ${r.search.median} / ${r.search.p95} | ${r.searchAfterWrite.median} / ${r.searchAfterWrite.p95} | ${r.index.messages} | ${size} |`);
}
const file = path.join(ROOT, 'bench/results.json');
const all = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
all.writable = { preload: PRELOAD, adds: ADDS, searches: SEARCHES, rows };
fs.writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
