#!/usr/bin/env node
// The comparative benchmark: one command, four corpora, four
// engines, one report.
//
//   ./build.sh bench [OPTIONS]        builds what is needed, then runs this
//   node bench/run.mjs [OPTIONS]
//
//   --runs N            visits per engine and network profile (default 5)
//   --warm N            queries for warm latency (default 200)
//   --quality-sample N  quality queries per class (default 1000; 0 = all)
//   --corpora LIST      of docs,sharegpt,gitsense,git (default all)
//   --networks LIST     of local,50ms-20mbit (default both)
//   --no-browser        native measurements only
//   --out-dir DIR       write BENCHMARKS.md and results.json there instead
//                       of the repository's BENCHMARKS.md / bench/results.json
//   --report-only       no measurement: rewrite the BENCHMARKS.md section
//                       from the results file (after a change of the report)
//   --smoke             a tiny run that checks the harness works (8 pages,
//                       a few queries, one run; writes to bench/out/smoke);
//                       fails when an engine or a measurement fails
//
// Native (per corpus, bench/lib/corpora.mjs): build time and peak memory,
// index size raw / gzip / brotli, in-process query latency.
// Browser (docs corpus, bench/lib/browser.mjs): gitsense-search, Pagefind,
// MiniSearch and sql.js-httpvfs on the same pages, the same page script
// and the same queries: code size, first / repeat / offline visits, warm
// queries, memory, ranking quality. Our engine opens with the default
// `storage: 'auto'`, so its cold-visit numbers follow whatever that mode
// does when the benchmark runs.

import fs from 'node:fs';
import path from 'node:path';
import { CORPORA, PYTHON_DOCS, measureCorpus, smokeSite } from './lib/corpora.mjs';
import { NETWORKS, chromiumVersion, measureNetwork, quality, rankAll, writePages } from './lib/browser.mjs';
import { KEY, markdown, targets, writeResults, writeSection } from './lib/report.mjs';
import { ROOT, freshDir, log, machine, packageVersion, run, sizes } from './lib/util.mjs';
import * as ours from './engines/ours.mjs';
import * as pagefind from './engines/pagefind.mjs';
import * as minisearch from './engines/minisearch.mjs';
import * as sqljs from './engines/sqljs.mjs';

const FIRST_QUERY = 'asyncio queue';

const FIRST_RESULT = {
  ours: '`search(q)` (all targets, snippets) resolved',
  pagefind: '`search(q)` then `results[0].data()` (URL, title, excerpt)',
  'pagefind-preload': 'the same, the page calling `preload(q)` before `init()`',
  minisearch: 'index JSON fetched, `loadJSON`, `search(q)`',
  sqljs: '`MATCH … ORDER BY rank LIMIT 10` with `snippet()` through the Range-reading worker',
};

function parseArgs(argv) {
  const o = { reportOnly: false, runs: 5, warm: 200, qualitySample: 1000, corpora: Object.keys(CORPORA), networks: Object.keys(NETWORKS), browser: true, outDir: null, smoke: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    const num = () => {
      const n = Number(next());
      if (!Number.isInteger(n) || n < 0) throw new Error(`${a} needs a whole number`);
      return n;
    };
    const list = (known) => {
      const l = next().split(',').filter(Boolean);
      const bad = l.filter((x) => !known.includes(x));
      if (bad.length || !l.length) throw new Error(`${a}: expected some of ${known.join(',')}`);
      return l;
    };
    if (a === '--runs') o.runs = Math.max(1, num());
    else if (a === '--warm') o.warm = num();
    else if (a === '--quality-sample') o.qualitySample = num();
    else if (a === '--corpora') o.corpora = list(Object.keys(CORPORA));
    else if (a === '--networks') o.networks = list(Object.keys(NETWORKS));
    else if (a === '--no-browser') o.browser = false;
    else if (a === '--out-dir') o.outDir = next();
    else if (a === '--smoke') o.smoke = true;
    else if (a === '--report-only') o.reportOnly = true;
    else if (a === '--help' || a === '-h') {
      console.log(fs.readFileSync(new URL(import.meta.url), 'utf8').split('\n').slice(1, 21).join('\n').replace(/^\/\/ ?/gm, ''));
      process.exit(0);
    } else throw new Error(`unknown argument ${a} (see --help)`);
  }
  if (o.smoke) Object.assign(o, { runs: 1, warm: 5, qualitySample: 8, corpora: ['docs'], outDir: o.outDir || path.join(ROOT, 'bench/out/smoke') });
  return o;
}

function need(file, hint) {
  if (!fs.existsSync(file)) throw new Error(`${path.relative(ROOT, file)} is missing: ${hint}`);
}

function versions() {
  const cargo = fs.readFileSync(path.join(ROOT, 'Cargo.toml'), 'utf8');
  const lock = fs.readFileSync(path.join(ROOT, 'Cargo.lock'), 'utf8');
  const locked = (name) => (new RegExp(`name = "${name}"\\nversion = "([^"]+)"`).exec(lock) || [])[1];
  let commit = 'unknown';
  try {
    commit = run('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD']).trim();
    if (run('git', ['-C', ROOT, 'status', '--porcelain', '--untracked-files=no']).trim()) commit += '+changes';
  } catch {
    // not a git checkout
  }
  return {
    'gitsense-search': `${/^version = "([^"]+)"/m.exec(cargo)[1]} (${commit})`,
    rustc: run('rustc', ['--version']).trim().split(' ')[1],
    rusqlite: locked('rusqlite'),
    'sqlite-wasm-rs': locked('sqlite-wasm-rs'),
    node: process.versions.node,
    'playwright-core': packageVersion('playwright-core'),
  };
}

/** Evenly spaced items of a list (a fixed, class-mixed subset). */
const spread = (list, n) => (n >= list.length ? list : Array.from({ length: n }, (_, i) => list[Math.floor((i * list.length) / n)]));

async function main() {
  let opt;
  try {
    opt = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`error: ${e.message}`);
    process.exit(2);
  }
  const resultsFile = opt.outDir ? path.join(opt.outDir, 'results.json') : path.join(ROOT, 'bench/results.json');
  const mdFile = opt.outDir ? path.join(opt.outDir, 'BENCHMARKS.md') : path.join(ROOT, 'BENCHMARKS.md');
  if (opt.reportOnly) {
    const stored = fs.existsSync(resultsFile) && JSON.parse(fs.readFileSync(resultsFile, 'utf8'))[KEY];
    if (!stored) throw new Error(`${path.relative(ROOT, resultsFile)} has no ${KEY} results to report`);
    writeSection(mdFile, markdown(stored));
    log(`rewrote the ${KEY} section of ${path.relative(ROOT, mdFile)}`);
    return;
  }
  const out = path.join(ROOT, 'bench/out');
  const cli = path.join(ROOT, 'target/release/gitsense-search');
  const tool = path.join(ROOT, 'target/release/bench-native');
  const qualityTool = path.join(ROOT, 'target/release/docs_quality');
  need(cli, 'run ./build.sh bench (or cargo build --release)');
  need(tool, 'run ./build.sh bench (or cargo build --release -p gitsense-bench)');
  need(qualityTool, 'run ./build.sh bench (or cargo build --release -p gitsense-bench)');
  need(path.join(ROOT, 'pkg/index.js'), 'run ./build.sh bench (or ./build.sh wasm)');
  need('/usr/bin/time', 'apt-get install time');
  if (!fs.existsSync(PYTHON_DOCS)) throw new Error(`${PYTHON_DOCS} is missing: apt-get install python3.11-doc`);
  fs.mkdirSync(out, { recursive: true });
  const work = opt.smoke ? path.join(out, 'smoke') : out;
  fs.mkdirSync(work, { recursive: true });
  const docsDir = opt.smoke ? smokeSite(path.join(work, 'docs-site')) : PYTHON_DOCS;

  const results = {
    command: ['node', 'bench/run.mjs', ...process.argv.slice(2)].join(' '),
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    machine: machine(),
    versions: versions(),
    smoke: opt.smoke || undefined,
    corpora: {},
  };

  // The docs query set: generated from the site by docs_quality's own code.
  let querySet = null;
  if (opt.corpora.includes('docs')) {
    const file = path.join(work, 'docs-queries.json');
    run(qualityTool, ['--docs', docsDir, '--sample', String(opt.qualitySample), '--dump-queries', file]);
    querySet = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (!querySet.length) throw new Error('docs_quality generated no queries');
  }
  const warmQueries = querySet ? spread(querySet, opt.warm).map((q) => q.text) : [];

  for (const name of opt.corpora) {
    results.corpora[name] = measureCorpus(name, {
      out: work,
      cli,
      tool,
      docsDir,
      latencyQueries: name === 'docs' ? warmQueries : null,
      generated: opt.smoke ? 10 : 200,
    });
  }

  if (opt.browser && results.corpora.docs) {
    results.versions.chromium = await chromiumVersion();
    const site = freshDir(path.join(work, 'site'));
    const pagesFile = path.join(work, 'pages.json');
    run(tool, ['pages', docsDir, '--out', pagesFile]);
    const pages = JSON.parse(fs.readFileSync(pagesFile, 'utf8'));
    const docsIndex = results.corpora.docs.indexPath;
    const noSiteIndex = path.join(work, 'corpora/docs/docs-no-site-index.gsx');
    run(cli, ['build', '--quiet', '--docs', docsDir, '--base-url', 'https://docs.python.org/3.11/', '--no-site-index', '--out', noSiteIndex]);

    log('preparing the engines');
    const ctx = { site, docsDir, pages, pagesFile, nativeTool: tool, cli };
    const engines = [
      ours.prepare({ ...ctx, index: docsIndex }),
      pagefind.prepare(ctx),
      await minisearch.prepare(ctx),
      sqljs.prepare(ctx),
    ];
    const variant = { ...ours.prepare({ ...ctx, index: noSiteIndex, dir: 'ours-no-site-index' }), name: 'ours-no-site-index', label: 'gitsense-search, --no-site-index', qualityOnly: true };
    // A search page that knows its query at load (?q=): Pagefind's way of
    // starting on it sooner (preload()). First visits only, on the same
    // files. (Ours has none: its first search's pages come from the
    // warm-up, planned in wasm, however the page opens it.)
    const hinted = [{ ...engines[1], name: 'pagefind-preload', label: 'Pagefind, preload(q)', firstOnly: true, config: { ...engines[1].config, hint: true } }];
    const urls = writePages(site, [...engines, ...hinted, variant]);
    for (const e of engines) if (e.name !== 'ours') results.versions[e.label] = e.version;

    const docs = {
      pages: pages.length,
      firstQuery: FIRST_QUERY,
      runs: opt.runs,
      warmQueries: warmQueries.length,
      networks: Object.fromEntries(opt.networks.map((n) => [n, NETWORKS[n]])),
      engines: {},
    };
    for (const e of [...engines, ...hinted, variant]) {
      docs.engines[e.name] = {
        label: e.label,
        version: e.version,
        qualityOnly: e.qualityOnly || undefined,
        firstOnly: e.firstOnly || undefined,
        firstResult: FIRST_RESULT[e.name],
        buildMs: e.buildMs ?? results.corpora.docs.build.wallSeconds * 1000,
        bundle: sizes(e.bundleFiles),
        // Code fetched before the first result (engines that load more later
        // say which files that is).
        firstBundle: sizes(e.firstBundleFiles || e.bundleFiles),
        index: sizes(e.indexFiles),
        browser: {},
      };
    }
    for (const n of opt.networks) {
      log(`browser: ${NETWORKS[n].label}`);
      const r = await measureNetwork({ site, engines: [...engines, ...hinted], urls, network: NETWORKS[n], runs: opt.runs, firstQuery: FIRST_QUERY, warmQueries });
      for (const [name, v] of Object.entries(r)) docs.engines[name].browser[n] = v;
    }
    log(`ranking ${querySet.length} quality queries with every engine`);
    const ranked = await rankAll({ site, engines: [...engines, variant], urls, queries: querySet.map((q) => q.text), firstQuery: FIRST_QUERY });
    docs.quality = { queries: querySet.length, sample: opt.qualitySample };
    for (const [name, r] of Object.entries(ranked)) {
      docs.engines[name].quality = quality(querySet, r.ranked);
      docs.engines[name].qualitySeconds = r.seconds;
    }
    docs.targets = targets(docs.engines.ours, opt.networks.map((n) => [n, NETWORKS[n].label]));
    results.docs = docs;
  }
  for (const c of Object.values(results.corpora)) delete c.indexPath;

  fs.mkdirSync(path.dirname(resultsFile), { recursive: true });
  writeResults(resultsFile, KEY, results);
  const md = markdown(results);
  writeSection(mdFile, md);
  console.log(md);
  log(`wrote ${path.relative(ROOT, resultsFile)} (key ${KEY}) and ${path.relative(ROOT, mdFile)}`);

  if (opt.smoke) check(results);
}

/** The smoke run fails when any engine or measurement did not work. */
function check(r) {
  const problems = [];
  for (const [name, c] of Object.entries(r.corpora)) {
    if (!(c.index.raw > 0) || !(c.native.median_ms >= 0) || c.native.errors) problems.push(`${name}: native measurement incomplete`);
  }
  for (const [name, e] of Object.entries(r.docs ? r.docs.engines : {})) {
    if (!(e.bundle.raw > 0) || !(e.index.raw > 0)) problems.push(`${name}: no sizes`);
    if (!e.firstOnly && (!e.quality || e.quality.overall.errors || !(e.quality.overall.successAt10 > 0))) problems.push(`${name}: ranking failed or found nothing expected`);
    if (e.qualityOnly) continue;
    for (const [net, b] of Object.entries(e.browser)) {
      for (const kind of e.firstOnly ? ['first'] : ['first', 'repeat']) {
        if (!b[kind] || b[kind].ok !== b[kind].runs) problems.push(`${name} ${net} ${kind} visit failed: ${b[kind] && b[kind].errors.join('; ')}`);
        else if (!(b[kind].bytes >= 0 && b[kind].ms > 0)) problems.push(`${name} ${net} ${kind}: no timing`);
      }
      if (!e.firstOnly && (!b.warm || b.warm.errors || b.warm.fresh.n !== r.docs.warmQueries)) problems.push(`${name} ${net}: warm queries failed`);
    }
  }
  const o = r.docs && r.docs.engines.ours;
  if (o) {
    const local = o.browser.local;
    if (local && local.offline.ok !== local.offline.runs) problems.push(`ours: the offline repeat visit failed: ${local.offline.errors.join('; ')}`);
    if (local && local.first.indexBytes === 0) problems.push('ours: the first visit downloaded no index bytes');
  }
  if (!r.docs) problems.push('no browser measurements');
  if (problems.length) {
    console.error(`smoke run failed:\n- ${problems.join('\n- ')}`);
    process.exit(1);
  }
  log('smoke run: every engine and measurement worked');
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
