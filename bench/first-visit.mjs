// A reader's first search on a real documentation site, through each
// engine's drop-in modal: ours (`<gitsense-search>`, the two lines
// `gitsense-search site` prints) and Pagefind's Component UI
// (`<pagefind-modal-trigger>` and `<pagefind-modal>`, from the bundle the
// `pagefind` npm package's binary writes), side by side in one Chromium;
// and Pagefind's Default UI (a search box in the page, not a modal: the
// reader clicks into it instead of Ctrl+K) on the same copy.
//
//   node bench/first-visit.mjs [--runs 3] [--queries 'asyncio queue,json dumps'] [--no-throttle] [--pkg DIR]
//   node bench/first-visit.mjs --chat [--runs 3] [--pkg DIR]
// (FIRST_VISIT_PATHS=1: the bytes of each file; FIRST_VISIT_TIMELINE=1: when
// each request started and ended after the key press.)
//
// (--pkg: another build's pkg/, default this checkout's.)
//
// The site: the Python 3.11 documentation as Debian ships it
// (/usr/share/doc/python3.11/html, as bench/run.mjs uses, or bench/sites.py's
// unpacked copy), one copy per
// engine under target/first-visit/, each engine's documented setup run on
// it, and a page holding nothing but that engine's lines. It is served as
// a generic static server does (`npx serve`): text and wasm gzipped on the
// fly at zlib's default level (6), nothing precompressed, Range requests
// with one range per answer (a request for several gets the first, as
// serve-handler answers), 50 ms added to every response and one 20 Mbit/s
// link shared by all of them. (The server keeps each gzipped body after
// its first request, so the compression's own time is left out, for
// both engines alike.)
//
// --chat: a chat app's first visit instead: a page that creates a
// writable index (GitSenseSearch.create), adds a 20-message conversation
// and searches it; the module's bytes (JS and wasm) the server sent before
// create() resolved, before the search's answer, and 3 s later (what
// comes in the background), with brotli 11 (precompressed, as a host
// serves its assets) and with gzip 6 on the fly; no throttling.
//
// Each visit: a fresh browser context (nothing cached, nothing stored),
// the page loaded, then Ctrl+K, the query typed, and the time from the
// key press until the modal shows its first result (ours: a result row
// with its count; Pagefind: a result whose title has loaded), and the
// bytes the server sent from the navigation until then (bodies; the page
// itself not counted). Engines alternate visit by visit; figures are
// medians over runs × queries. Prints a Markdown table (BENCHMARKS.md,
// "A reader's first search through the drop-in UI").

import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startServer } from '../www/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS } from '../tests/browser/chromium.mjs';
import { ROOT, log, freshDir, median, packageVersion } from './lib/util.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const RUNS = Number(opt('--runs', '3'));
const QUERIES = opt('--queries', 'asyncio queue,json dumps,os.path.join,subprocess').split(',');
const THROTTLE = !args.includes('--no-throttle');
// (Or where bench/sites.py unpacks the package without installing it.)
const SITE = ['/usr/share/doc/python3.11/html', path.join(ROOT, 'target/sites/python3.11-doc/usr/share/doc/python3.11/html')].find((d) => fs.existsSync(d)) ||
  '/usr/share/doc/python3.11/html';
const CLI = path.join(ROOT, 'target/release/gitsense-search');
const PKG = path.resolve(opt('--pkg', path.join(ROOT, 'pkg')));
const PAGEFIND = path.join(ROOT, `node_modules/@pagefind/${process.platform}-${process.arch}/bin/pagefind_extended`);
const WORK = path.join(ROOT, 'target/first-visit');
const PAGE = 'search-page.html';
const pageOf = (name) => (ENGINES[name].site ? `search-page-${name}.html` : PAGE);

const page = (lines) =>
  `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Search</title></head>\n<body><main>\n<h1>Search</h1>\n${lines.trim()}\n</main></body></html>\n`;

const ENGINES = {
  ours: {
    label: 'gitsense-search, `<gitsense-search>`',
    setup(dir) {
      let lines;
      try {
        lines = execFileSync(CLI, ['site', dir, '--pkg', PKG, '--quiet'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      } catch (e) {
        lines = e.stdout; // a site the importer warns about still prints its lines
      }
      return lines;
    },
    // A result row, and the status line's count, for what the box holds.
    shown: (q) => {
      const r = document.querySelector('gitsense-search')?.shadowRoot;
      return !!r && r.querySelector('input').value === q && r.querySelector('.rows').getAttribute('aria-busy') === 'false' &&
        r.querySelectorAll('.rows > .row').length > 0 && / results?$/.test(r.querySelector('.status').textContent) && performance.now();
    },
  },
  pagefind: {
    label: `Pagefind ${packageVersion(`@pagefind/${process.platform}-${process.arch}`)}, Component UI modal`,
    setup(dir) {
      execFileSync(PAGEFIND, ['--site', dir, '--quiet'], { stdio: 'ignore' });
      // https://pagefind.app/docs/ (Component UI: the modal and its trigger, Ctrl+K)
      return [
        '<link href="/pagefind/pagefind-component-ui.css" rel="stylesheet">',
        '<script src="/pagefind/pagefind-component-ui.js" type="module"></script>',
        '<pagefind-modal-trigger></pagefind-modal-trigger>',
        '<pagefind-modal></pagefind-modal>',
      ].join('\n');
    },
    // A result whose title has loaded (its fragment is in), for what the box holds.
    shown: (q) => {
      const modal = document.querySelector('pagefind-modal');
      const input = modal && modal.querySelector('input');
      if (!input || input.value !== q) return false;
      const title = modal.querySelector('.pf-result-title, .pf-result-link');
      return !!title && title.textContent.trim().length > 0 && performance.now();
    },
  },
  'pagefind-default': {
    label: `Pagefind ${packageVersion(`@pagefind/${process.platform}-${process.arch}`)}, Default UI (a box in the page, no modal)`,
    site: 'pagefind',
    // https://pagefind.app/docs/ui-usage/ (the Default UI's four lines)
    lines: () => [
      '<link href="/pagefind/pagefind-ui.css" rel="stylesheet">',
      '<script src="/pagefind/pagefind-ui.js"></script>',
      '<div id="search"></div>',
      '<script>window.addEventListener(\'DOMContentLoaded\', () => { new PagefindUI({ element: "#search", showSubResults: true }); });</script>',
    ].join('\n'),
    // No Ctrl+K: the reader clicks into the box.
    async reach(p) {
      await p.click('.pagefind-ui__search-input');
    },
    shown: (q) => {
      const input = document.querySelector('.pagefind-ui__search-input');
      if (!input || input.value !== q) return false;
      const title = document.querySelector('.pagefind-ui__result-title');
      return !!title && title.textContent.trim().length > 0 && performance.now();
    },
  },
};

async function visit(browser, server, engine, q, page = PAGE) {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const p = await context.newPage();
  const errors = [];
  p.on('pageerror', (e) => errors.push(String(e)));
  server.reset();
  await p.goto(server.url + page);
  await p.waitForLoadState('load');
  // The reader finds the page, then reaches for search.
  await p.waitForTimeout(300);
  const t0 = await p.evaluate(() => performance.now());
  // FIRST_VISIT_TIMELINE=1: each request's start and end, ms after the key press.
  const timeline = [];
  if (process.env.FIRST_VISIT_TIMELINE) {
    const wall0 = Date.now();
    context.on('request', (r) => timeline.push([Date.now() - wall0, 'start', r.url().replace(server.url, '')]));
    context.on('requestfinished', (r) => timeline.push([Date.now() - wall0, 'end', r.url().replace(server.url, '')]));
  }
  if (engine.reach) await engine.reach(p);
  else await p.keyboard.press('Control+k');
  await p.keyboard.type(q);
  const shownAt = await (await p.waitForFunction(engine.shown, q, { timeout: 120_000 })).jsonValue();
  const byPath = Object.entries(server.stats().bytesByPath).filter(([u]) => u !== `/${page}`);
  const bytes = byPath.reduce((n, [, b]) => n + b, 0);
  if (process.env.FIRST_VISIT_PATHS) console.error(byPath.map(([u, b]) => `${u} ${b}`).join('\n'));
  if (process.env.FIRST_VISIT_TIMELINE) console.error(timeline.map((e) => e.join(' ')).join('\n') + `\nshown ${Math.round(shownAt - t0)}`);
  await context.close();
  if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  return { ms: shownAt - t0, bytes };
}

/** The chat app's visits (--chat): module bytes at create, at the first answer, settled. */
async function chat() {
  const dir = path.join(WORK, 'chat');
  freshDir(dir);
  fs.cpSync(PKG, path.join(dir, 'pkg'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'blank.html'), '<!doctype html><meta charset="utf-8"><title>chat</title>');
  const messages = Array.from({ length: 20 }, (_, i) => ({
    id: i + 1,
    chat_id: 1,
    role: i % 2 ? 'assistant' : 'user',
    content: i % 2 ? `Call reconcile again:\n\n\`\`\`python\ndef reconcile_${i}():\n    return ${i}\n\`\`\`` : `How do I reconcile step ${i}?`,
    created_at: `2026-01-02T00:00:${String(i).padStart(2, '0')}Z`,
  }));
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  const rows = ['| served as | before create() resolves | before the first answer | 3 s later |', '|---|---|---|---|'];
  try {
    for (const [label, opts] of [['brotli 11, precompressed', { brotli: true, precompress: true }], ['gzip 6, on the fly', { brotli: false, gzipLevel: 6 }]]) {
      const server = await startServer({ root: dir, port: 0, compress: true, ...opts });
      const bytes = () => Object.values(server.stats().bytesByPath).reduce((n, b) => n + b, 0);
      const seen = [];
      for (let r = 0; r < RUNS; r++) {
        const context = await browser.newContext();
        const p = await context.newPage();
        await p.goto(server.url + 'blank.html');
        server.reset();
        await p.evaluate(async () => {
          const { GitSenseSearch } = await import('/pkg/index.js');
          window.engine = await GitSenseSearch.create({ name: 'chat-app' });
        });
        const atCreate = bytes();
        const found = await p.evaluate(async (msgs) => {
          await window.engine.add({ chats: [{ id: 1, name: 'Ledger' }], messages: msgs });
          return (await window.engine.search('reconcile')).totalCounts.messages;
        }, messages);
        if (found !== 20) throw new Error(`the chat app's search found ${found} messages, not 20`);
        const atAnswer = bytes();
        await p.waitForTimeout(3000);
        seen.push([atCreate, atAnswer, bytes()]);
        await context.close();
      }
      await server.close();
      const m = (i) => `${(median(seen.map((v) => v[i])) / 1024).toFixed(0)} KiB`;
      rows.push(`| ${label} | ${m(0)} | ${m(1)} | ${m(2)} |`);
    }
  } finally {
    await browser.close();
  }
  console.log(`\na chat app's first visit (create, add 20 messages, search), module bytes, medians of ${RUNS} runs\n`);
  console.log(rows.join('\n'));
}

async function main() {
  if (args.includes('--chat')) return chat();
  for (const f of [CLI, path.join(PKG, 'ui.js'), PAGEFIND, SITE]) if (!fs.existsSync(f)) throw new Error(`${f} is missing (./build.sh; npm ci; apt-get install python3.11-doc)`);
  const servers = {};
  for (const [name, engine] of Object.entries(ENGINES)) {
    if (engine.site) {
      // Another UI of an engine set up already: its own page on that copy.
      fs.writeFileSync(path.join(WORK, engine.site, pageOf(name)), page(engine.lines()));
      servers[name] = servers[engine.site];
      continue;
    }
    const dir = path.join(WORK, name);
    log(`${name}: copying the site and adding search`);
    freshDir(dir);
    try {
      execFileSync('cp', ['-rL', `${SITE}/.`, dir], { stdio: 'ignore' });
    } catch {
      // cp reports dangling links and copies everything else.
    }
    fs.writeFileSync(path.join(dir, PAGE), page(engine.setup(dir)));
    servers[name] = await startServer({
      root: dir,
      port: 0,
      compress: true,
      brotli: false,
      gzipLevel: 6,
      multiRange: 'first',
      immutable: [],
      ...(THROTTLE ? { latencyMs: 50, bandwidth: 20e6 / 8, sharedBandwidth: true } : {}),
    });
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  const results = Object.fromEntries(Object.keys(ENGINES).map((e) => [e, []]));
  try {
    // Each server compresses a file on its first request and keeps it: one
    // untimed visit each first.
    for (const [name, engine] of Object.entries(ENGINES)) await visit(browser, servers[name], engine, QUERIES[0], pageOf(name));
    for (let r = 0; r < RUNS; r++) {
      for (const q of QUERIES) {
        const names = Object.keys(ENGINES);
        const order = (r + QUERIES.indexOf(q)) % 2 ? names.reverse() : names;
        for (const name of order) {
          const v = await visit(browser, servers[name], ENGINES[name], q, pageOf(name));
          log(`run ${r + 1}, ${name}, ${q}: ${v.ms.toFixed(0)} ms, ${(v.bytes / 1024).toFixed(1)} KiB`);
          results[name].push({ q, ...v });
        }
      }
    }
  } finally {
    await browser.close();
    for (const s of new Set(Object.values(servers))) await s.close();
  }
  const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;
  const rows = ['| engine | Ctrl+K → first result, median (range) | bytes before it, median (range) |', '|---|---|---|'];
  const ours = { ms: median(results.ours.map((v) => v.ms)), bytes: median(results.ours.map((v) => v.bytes)) };
  for (const [name, vs] of Object.entries(results)) {
    const ms = vs.map((v) => v.ms);
    const bytes = vs.map((v) => v.bytes);
    const m = { ms: median(ms), bytes: median(bytes) };
    const ratio = name === 'ours' ? '' : ` (ours ${(ours.ms / m.ms).toFixed(2)}×)`;
    const bratio = name === 'ours' ? '' : ` (ours ${(ours.bytes / m.bytes).toFixed(2)}×)`;
    rows.push(`| ${ENGINES[name].label} | ${m.ms.toFixed(0)} ms${ratio} (${Math.min(...ms).toFixed(0)}–${Math.max(...ms).toFixed(0)}) | ${kib(m.bytes)}${bratio} (${kib(Math.min(...bytes))}–${kib(Math.max(...bytes))}) |`);
  }
  console.log(`\n${THROTTLE ? '50 ms + 20 Mbit/s on one link' : 'no throttling'}, ${RUNS} runs × ${QUERIES.length} queries (${QUERIES.join(', ')})\n`);
  console.log(rows.join('\n'));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
