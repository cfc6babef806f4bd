// Adding search to a built documentation site, as its owner would, with
// gitsense-search and with Pagefind side by side: the steps, the lines of
// HTML to paste, and what a reader's browser downloads (headless Chromium):
// before the first result, and in total after five searches. Then the
// bytes of each offline-copy policy (auto, always, never) on a docs site
// and on a chat index, over a first and a second visit.
//
//   node bench/adoption.mjs [--sites mkdocs,python,rust-book] [--runs 3] [--no-write]
//
// The sites are bench/sites.py's (Debian doc packages, unpacked under
// target/sites/). Each engine gets its own copy of the site (target/adoption/SITE/ENGINE/)
// and runs its documented setup: ours `gitsense-search site DIR` and the two
// lines it prints; Pagefind `pagefind --site DIR` and its Default UI's four
// lines (stylesheet, script, element, the call that starts it). A page with
// nothing but those lines is served by www/serve.mjs (brotli at quality 11
// for text and wasm, as a static host serves precompressed files; Range
// requests) and a fresh browser profile types five queries into the box,
// waiting for each one's results. Bytes are what the server sent for the
// engine's files (body bytes, headers left out; the page itself not
// counted), per path, so the worker's requests count too. The queries are
// the first five of bench/sites.py's query set for the site
// (target/sites/work/SITE/queries.json, written by `python3 bench/sites.py`);
// first-result quality is sites.py's S@1 on the same site
// (bench/sites-results.json). Results: bench/adoption-results.json and the
// section of BENCHMARKS.md between <!-- adoption:begin --> and <!-- adoption:end -->.

import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startServer } from '../www/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS } from '../tests/browser/chromium.mjs';
import { ROOT, log, freshDir, median, packageVersion } from './lib/util.mjs';

const SITES = {
  mkdocs: { generator: 'MkDocs', dir: 'target/sites/mkdocs-doc/usr/share/doc/mkdocs/html', pkg: 'mkdocs-doc' },
  python: { generator: 'Sphinx', dir: 'target/sites/python3.11-doc/usr/share/doc/python3.11/html', pkg: 'python3.11-doc' },
  'rust-book': { generator: 'mdBook', dir: 'target/sites/rust-doc/usr/share/doc/rust-doc/html/book', pkg: 'rust-doc' },
};
const CLI = path.join(ROOT, 'target/release/gitsense-search');
const PKG = path.join(ROOT, 'pkg');
const PAGEFIND = path.join(ROOT, `node_modules/@pagefind/${process.platform}-${process.arch}/bin/pagefind_extended`);
const WORK = path.join(ROOT, 'target/adoption');
const RESULTS = path.join(ROOT, 'bench/adoption-results.json');
const BENCHMARKS = path.join(ROOT, 'BENCHMARKS.md');
const SEARCHES = 5;
// The chat index's search for the offline policies (the demo's example).
const CHAT_QUERY = 'payment';
// How long a background copy may run after the searches before a visit's
// bytes are read (the copies measured here end well within it).
const SETTLE_MS = 8000;

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const siteNames = opt('--sites', 'mkdocs,python').split(',');
// Visits per engine and site; each figure is their median (the bytes of a
// visit vary with what the warm-up and the second module load meanwhile).
const RUNS = Number(opt('--runs', '3'));
const write = !args.includes('--no-write');

/** A fresh copy of a site (symbolic links followed; dangling ones, as Debian's doc packages have, left out). */
function copySite(src, dest) {
  freshDir(dest);
  try {
    execFileSync('cp', ['-rL', `${src}/.`, dest], { stdio: 'ignore' });
  } catch {
    // cp reports the dangling links and copies everything else.
  }
}

const page = (lines) =>
  `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Search</title></head>\n<body><main>\n<h1>Search</h1>\n${lines.trim()}\n</main></body></html>\n`;

/** The engines: how each is added to the site, and how its box is driven in the page. */
const ENGINES = {
  ours: {
    label: 'gitsense-search',
    steps: ['gitsense-search site DIR', 'paste the 2 printed lines into a page'],
    setup(dir) {
      const t0 = performance.now();
      let lines;
      try {
        lines = execFileSync(CLI, ['site', dir, '--pkg', PKG, '--quiet'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      } catch (e) {
        // A site the importer warns about still prints its lines.
        lines = e.stdout;
      }
      return { lines, buildMs: performance.now() - t0, prefix: '/_gitsense/', index: /^\/_gitsense\/(?!pkg\/)/ };
    },
    async search(p, q, first) {
      if (first) await p.keyboard.press('Control+k');
      await p.evaluate((q) => {
        const r = document.querySelector('gitsense-search').shadowRoot;
        const input = r.querySelector('input');
        input.value = q;
        input.dispatchEvent(new Event('input'));
      }, q);
      await p.waitForFunction((q) => {
        const r = document.querySelector('gitsense-search').shadowRoot;
        return r.querySelector('input').value === q && r.querySelector('.rows').getAttribute('aria-busy') === 'false' && / results$|^No results/.test(r.querySelector('.status').textContent);
      }, q, { timeout: 120_000 });
      return p.evaluate(() => document.querySelector('gitsense-search').shadowRoot.querySelectorAll('.rows > .row').length);
    },
  },
  pagefind: {
    label: `Pagefind ${packageVersion(`@pagefind/${process.platform}-${process.arch}`)}`,
    steps: ['pagefind --site DIR', 'paste the Default UI\'s 4 lines into a page'],
    setup(dir) {
      const t0 = performance.now();
      execFileSync(PAGEFIND, ['--site', dir, '--quiet'], { stdio: 'ignore' });
      // https://pagefind.app/docs/ui-usage/ (the Default UI)
      const lines = [
        '<link href="/pagefind/pagefind-ui.css" rel="stylesheet">',
        '<script src="/pagefind/pagefind-ui.js"></script>',
        '<div id="search"></div>',
        '<script>window.addEventListener(\'DOMContentLoaded\', () => { new PagefindUI({ element: "#search", showSubResults: true }); });</script>',
      ].join('\n');
      return { lines, buildMs: performance.now() - t0, prefix: '/pagefind/', index: /^\/pagefind\/(index|fragment|filter)\/|\.pf_meta$|pagefind-entry\.json$/ };
    },
    async search(p, q) {
      await p.fill('.pagefind-ui__search-input', q);
      // Its summary line says "N results for q" (or no results) once they are in.
      await p.waitForFunction((q) => {
        const s = document.querySelector('.pagefind-ui__message');
        return s && s.textContent.includes(q) && !/Searching/i.test(s.textContent);
      }, q, { timeout: 120_000 });
      await p.waitForTimeout(200); // its result cards load their fragments after the summary
      return p.evaluate(() => document.querySelectorAll('.pagefind-ui__result').length);
    },
  },
};

async function measureVisit(browser, server, url, engine, queries, prefix, index) {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const p = await context.newPage();
  const errors = [];
  p.on('pageerror', (e) => errors.push(String(e)));
  server.reset();
  const bytesOf = (keep) => Object.entries(server.stats().bytesByPath).filter(([u]) => keep(u)).reduce((n, [, b]) => n + b, 0);
  const engineBytes = () => bytesOf((u) => u.startsWith(prefix));
  await p.goto(url);
  await p.waitForLoadState('load');
  const atLoad = engineBytes();
  const perSearch = [];
  let firstRows = 0;
  let firstIndex = 0;
  for (const [i, q] of queries.entries()) {
    const rows = await engine.search(p, q, i === 0);
    perSearch.push(engineBytes());
    if (i === 0) [firstRows, firstIndex] = [rows, bytesOf((u) => index.test(u))];
  }
  await p.waitForTimeout(SETTLE_MS);
  const total = engineBytes();
  const settledIndex = bytesOf((u) => index.test(u));
  await context.close();
  if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  return { atLoad, firstResult: perSearch[0], firstResultIndex: firstIndex, afterSearches: perSearch[perSearch.length - 1], settled: total, settledIndex, firstRows };
}

/** The first queries of bench/sites.py's set for the site, generated by its own code when it has not run yet. */
function queriesFor(name) {
  const file = path.join(ROOT, 'target/sites/work', name, 'queries.json');
  if (!fs.existsSync(file)) {
    log(`${name}: generating bench/sites.py's queries`);
    const py = [
      'import json, sys',
      "sys.path.insert(0, 'bench')",
      'import sites',
      'name = sys.argv[1]; spec = sites.SITES[name]',
      'site_dir, pages, html, _, _ = sites.prepare_site(name, spec)',
      'qs, _, _ = sites.make_queries(name, spec, site_dir, html, pages, sites.SAMPLE)',
      "(site_dir.parent / 'queries.json').write_text(json.dumps(qs, indent=0))",
    ].join('\n');
    execFileSync('python3', ['-c', py, name], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  return JSON.parse(fs.readFileSync(file, 'utf8')).slice(0, SEARCHES).map((q) => q.text);
}

function qualityFor(name) {
  const site = JSON.parse(fs.readFileSync(path.join(ROOT, 'bench/sites-results.json'), 'utf8')).sites[name];
  const all = (e) => site?.engines?.[e]?.scores?.all;
  return { ours: all('ours')?.s1 ?? null, pagefind: all('pagefind')?.s1 ?? null, queries: all('ours')?.n ?? null };
}

/** Bytes of a first and a second visit (one search each) under each offline policy. */
async function offlinePolicies(browser, root, manifest, prefix, query) {
  const out = {};
  for (const policy of ['auto', 'always', 'never']) {
    fs.writeFileSync(path.join(root, `policy-${policy}.html`), page(`<script type="module" src="${prefix}pkg/ui.js"></script>\n<gitsense-search manifest="${manifest}" offline="${policy}"></gitsense-search>`));
    const server = await startServer({ root, port: 0, brotli: true });
    const context = await browser.newContext();
    const visits = [];
    for (let v = 0; v < 2; v++) {
      const p = await context.newPage();
      server.reset();
      await p.goto(`${server.url}policy-${policy}.html`);
      await ENGINES.ours.search(p, query, true);
      await p.waitForTimeout(SETTLE_MS);
      // A copy under way is waited for: its bytes are the policy's cost.
      await p.waitForFunction(async () => (await document.querySelector('gitsense-search').engine.info()).lazy?.state !== 'filling', null, { timeout: 300_000, polling: 500 });
      visits.push(Object.entries(server.stats().bytesByPath).filter(([u]) => u.startsWith(prefix)).reduce((n, [, b]) => n + b, 0));
      // A visit is a tab's session: the second one is a new tab.
      await p.goto('about:blank');
      await p.close();
    }
    await context.close();
    await server.close();
    out[policy] = visits;
  }
  return out;
}

const kb = (n) => (n == null ? '–' : n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(2)} MiB` : `${(n / 1024).toFixed(1)} KiB`);

function report(results) {
  const rows = [];
  rows.push('<!-- adoption:begin -->');
  rows.push('## Adding search to a built site: gitsense-search and Pagefind (`bench/adoption.mjs`)');
  rows.push('');
  rows.push(`Generated by \`node bench/adoption.mjs --sites ${siteNames.join(',')} --runs ${RUNS}\` on ${results.date}. Bytes are medians of ${RUNS} visits, each in a fresh profile. Each engine's documented setup on its own copy of the site; a page holding only the pasted lines, served with brotli (quality 11) and Range requests; a fresh Chromium profile types ${SEARCHES} queries (the first ${SEARCHES} of \`bench/sites.py\`'s query set for the site) into the box and waits for each one's results. Bytes: what the server sent for the engine's files (bodies; the page itself not counted). "Before the first result" includes loading the page; "after five searches" waits ${SETTLE_MS / 1000} s more for background work. First-result quality: \`bench/sites.py\`'s S@1 on the same site (all its queries).`);
  rows.push('');
  rows.push('| site | generator | engine | steps | lines of HTML | build | bytes at page load | before the first result (index) | after five searches (index) | first-result S@1 |');
  rows.push('|---|---|---|---|---|---|---|---|---|---|');
  for (const s of results.sites) {
    for (const [e, r] of Object.entries(s.engines)) {
      rows.push(`| ${s.name} (${s.pages} pages) | ${s.generator} | ${ENGINES[e].label} | ${r.steps.length}: ${r.steps.map((x) => `\`${x}\``).join(', ')} | ${r.lines} | ${(r.buildMs / 1000).toFixed(1)} s | ${kb(r.bytes.atLoad)} | ${kb(r.bytes.firstResult)} (${kb(r.bytes.firstResultIndex)}) | ${kb(r.bytes.settled)} (${kb(r.bytes.settledIndex)}) | ${s.quality[e]?.toFixed(3) ?? '–'} (${s.quality.queries} queries) |`);
    }
  }
  rows.push('');
  rows.push('Ours loads only `ui.js` with the page; the module, the worker, the wasm and the index\'s first pages come when the reader reaches for the box (here: Ctrl+K). Pagefind\'s Default UI loads its script and stylesheet with the page and its index when the box is first used.');
  rows.push('');
  rows.push('### Bytes per offline-copy policy');
  rows.push('');
  rows.push(`Two visits (new tabs of one profile, so the second finds the module in the HTTP cache), one search each (${results.policies.map((o) => `\`${o.query}\` on ${o.name}`).join(', ')}), through \`<gitsense-search offline="...">\`, read ${SETTLE_MS / 1000} s after the search or once a copy under way ends; bytes of the module and index files. \`auto\` is the default.`);
  rows.push('');
  rows.push('| index | policy | first visit | second visit |');
  rows.push('|---|---|---|---|');
  for (const o of results.policies) {
    for (const [policy, [a, b]] of Object.entries(o.bytes)) rows.push(`| ${o.name} | \`${policy}\` | ${kb(a)} | ${kb(b)} |`);
  }
  rows.push('');
  rows.push('`auto` never copies the whole index on its own: a reader downloads only the pages their searches read (kept in OPFS for the next visit), unless they click "Save for offline" (not clicked here). A chat app whose readers come back every day can pass `offline="always"` (the demo does); `never` also hides the control.');
  rows.push('<!-- adoption:end -->');
  return rows.join('\n');
}

async function main() {
  for (const f of [CLI, path.join(PKG, 'ui.js'), PAGEFIND]) if (!fs.existsSync(f)) throw new Error(`${f} is missing (./build.sh; npm ci)`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  const results = { date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), sites: [], policies: [] };
  try {
    for (const name of siteNames) {
      const s = SITES[name];
      if (!s) throw new Error(`unknown site ${name} (${Object.keys(SITES).join(', ')})`);
      // (Generating the queries fetches the site, as bench/sites.py does.)
      const queries = queriesFor(name);
      const src = path.join(ROOT, s.dir);
      if (!fs.existsSync(src)) throw new Error(`${src} is missing: python3 bench/sites.py --fetch-only --sites ${name}`);
      const entry = { name, generator: s.generator, queries, quality: qualityFor(name), engines: {} };
      for (const [e, engine] of Object.entries(ENGINES)) {
        const dir = path.join(WORK, name, e);
        log(`${name}: ${engine.label}: copying the site and adding search`);
        copySite(src, dir);
        entry.pages ??= execFileSync('find', [dir, '-name', '*.html'], { encoding: 'utf8' }).trim().split('\n').length;
        const { lines, buildMs, prefix, index } = engine.setup(dir);
        fs.writeFileSync(path.join(dir, 'search-page.html'), page(lines));
        const server = await startServer({ root: dir, port: 0, brotli: true });
        try {
          log(`${name}: ${engine.label}: ${SEARCHES} searches in Chromium, ${RUNS} visits`);
          const visits = [];
          for (let r = 0; r < RUNS; r++) visits.push(await measureVisit(browser, server, `${server.url}search-page.html`, engine, queries, prefix, index));
          const bytes = Object.fromEntries(Object.keys(visits[0]).map((k) => [k, median(visits.map((v) => v[k]))]));
          entry.engines[e] = { steps: engine.steps, lines: lines.trim().split('\n').length, buildMs, bytes, visits };
        } finally {
          await server.close();
        }
      }
      results.sites.push(entry);
    }
    // The offline policies: the largest docs site measured, and the demo's chat index.
    const docs = results.sites.find((s) => s.name === 'python') || results.sites[0];
    log(`offline policies on ${docs.name}`);
    results.policies.push({ name: `${docs.name} (docs)`, query: docs.queries[0], bytes: await offlinePolicies(browser, path.join(WORK, docs.name, 'ours'), '/_gitsense/manifest.json', '/_gitsense/', docs.queries[0]) });
    const chat = path.join(WORK, 'chat');
    freshDir(chat);
    execFileSync(CLI, ['publish', path.join(ROOT, 'target/sample/sample.gsx'), '--out-dir', path.join(chat, '_gitsense')]);
    fs.cpSync(PKG, path.join(chat, '_gitsense/pkg'), { recursive: true });
    log('offline policies on the GitSense sample (chats)');
    results.policies.push({ name: 'GitSense sample (chats)', query: CHAT_QUERY, bytes: await offlinePolicies(browser, chat, '/_gitsense/manifest.json', '/_gitsense/', CHAT_QUERY) });
  } finally {
    await browser.close();
  }
  const text = report(results);
  console.log(text);
  if (write) {
    fs.writeFileSync(RESULTS, JSON.stringify(results, null, 2) + '\n');
    const md = fs.readFileSync(BENCHMARKS, 'utf8');
    const re = /<!-- adoption:begin -->[\s\S]*<!-- adoption:end -->/;
    fs.writeFileSync(BENCHMARKS, re.test(md) ? md.replace(re, text) : `${md.trimEnd()}\n\n${text}\n`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
