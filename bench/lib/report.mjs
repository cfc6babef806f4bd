// Markdown for the comparison: the section of BENCHMARKS.md between
// `<!-- comparison:begin -->` and `<!-- comparison:end -->` (the rest of
// the file is left as others wrote it), and the merge into
// bench/results.json under one key.

import fs from 'node:fs';
import { bytes, kib, msText, round } from './util.mjs';

export const KEY = 'comparison';
const BEGIN = `<!-- ${KEY}:begin (written by bench/run.mjs; edits inside are overwritten) -->`;
const END = `<!-- ${KEY}:end -->`;

/** Replaces (or appends) the marked section of a Markdown file. */
export function writeSection(file, body) {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Benchmarks\n';
  const section = `${BEGIN}\n${body.trim()}\n${END}`;
  const start = text.indexOf(`<!-- ${KEY}:begin`);
  const end = text.indexOf(END);
  const next = start >= 0 && end > start ? text.slice(0, start) + section + text.slice(end + END.length) : `${text.trimEnd()}\n\n${section}\n`;
  fs.writeFileSync(file, next);
}

/** Sets one key of a JSON results file, other keys kept, keys sorted. */
export function writeResults(file, key, value) {
  const all = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
  all[key] = value;
  const sorted = Object.fromEntries(Object.keys(all).sort().map((k) => [k, all[k]]));
  fs.writeFileSync(file, `${JSON.stringify(sorted, null, 2)}\n`);
}

const pct = (v) => (typeof v === 'number' ? `${(v * 100).toFixed(1)}%` : '–');
const table = (head, rows) => [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');

/** `value (ratio×)` where ratio = peer / ours; `better` says which way is good. */
function withRatio(fmt, peer, ours) {
  if (typeof peer !== 'number') return fmt(peer);
  if (typeof ours !== 'number' || ours === 0) return fmt(peer);
  const r = peer / ours;
  return `${fmt(peer)} (${r >= 10 ? r.toFixed(0) : r >= 0.1 ? r.toFixed(2) : r.toFixed(3)}×)`;
}

/**
 * The metrics of the side-by-side table: [label, getter(engineResult),
 * formatter, lowerIsBetter]. Getters return null when not measured and
 * the string 'fails' when the engine cannot do it.
 */
function metrics(networks) {
  const visitTime = (net, kind) => (e) => {
    const v = e.browser[net] && e.browser[net][kind];
    if (!v) return null;
    return v.ok === 0 ? 'fails' : v.ms;
  };
  const visitBytes = (net, kind, field) => (e) => {
    const v = e.browser[net] && e.browser[net][kind];
    return v && v.ok ? v[field] : null;
  };
  const rows = [
    ['wasm + JS, brotli', (e) => e.bundle && e.bundle.brotli, kib],
    ['wasm + JS before the first result, brotli', (e) => (e.firstBundle || e.bundle) && (e.firstBundle || e.bundle).brotli, kib],
    ['index, gzip (raw)', (e) => e.index && e.index.gzip, bytes],
  ];
  for (const [net, label] of networks) {
    rows.push(
      [`cold first result, ${label}`, visitTime(net, 'first'), msText],
      [`bytes before the first result, ${label}`, visitBytes(net, 'first', 'bytesAtFirst'), bytes],
    );
  }
  for (const [net, label] of networks) {
    rows.push([`repeat visit, first result, ${label}`, visitTime(net, 'repeat'), msText]);
  }
  const local = networks[0][0];
  rows.push(
    ['repeat visit, index bytes on the wire', visitBytes(local, 'repeat', 'indexBytes'), bytes],
    ['repeat visit with the network off', visitTime(local, 'offline'), msText],
    ['query, median (new queries, from the page)', (e) => e.browser[local] && e.browser[local].warm && e.browser[local].warm.fresh.median, msText],
    ['query, p95 (new queries, from the page)', (e) => e.browser[local] && e.browser[local].warm && e.browser[local].warm.fresh.p95, msText],
    ['query, median (repeated queries)', (e) => e.browser[local] && e.browser[local].warm && e.browser[local].warm.repeat.median, msText],
    ['memory: JS of the page and its workers', (e) => e.browser[local] && e.browser[local].memory && e.browser[local].memory.userAgentSpecificBytes, bytes],
    ['memory: renderer processes, private (with wasm)', (e) => e.browser[local] && e.browser[local].memory && e.browser[local].memory.rendererPrivateBytes, bytes],
  );
  return rows;
}

const qualityRows = [
  ['success@1', (e) => e.quality && e.quality.overall.successAt1, pct, false],
  ['success@10', (e) => e.quality && e.quality.overall.successAt10, pct, false],
  ['MRR@10', (e) => e.quality && e.quality.overall.mrrAt10, (v) => (typeof v === 'number' ? v.toFixed(3) : '–'), false],
];

const cell = (fmt, v, ours) => (v === 'fails' ? 'fails' : v === null || v === undefined ? '–' : withRatio(fmt, v, typeof ours === 'number' ? ours : null));

export function markdown(r) {
  const out = [];
  const engines = r.docs ? r.docs.engines : {};
  const names = Object.keys(engines).filter((n) => !engines[n].qualityOnly);
  const ours = engines.ours;
  const networks = Object.entries(r.docs ? r.docs.networks : {}).map(([k, v]) => [k, v.label]);

  out.push(`## Side by side: gitsense-search, Pagefind, MiniSearch, sql.js-httpvfs (\`${KEY}\`)`);
  out.push('');
  out.push(`- Command: \`${r.command}\``);
  out.push(`- Date: ${r.date}`);
  out.push(`- Machine: ${r.machine.cores} cores (${r.machine.cpu}), ${r.machine.memGiB} GiB RAM, ${r.machine.os}; shared with other work, so timings move between runs: read ratios and medians`);
  out.push(`- Versions: ${Object.entries(r.versions).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  if (r.smoke) out.push('- **Smoke run** (tiny corpus, few queries): numbers say nothing about performance.');
  out.push('');

  if (r.docs && ours) {
    const d = r.docs;
    out.push(`### On the Python documentation, in the browser`);
    out.push('');
    out.push(
      `${d.pages} pages (the pages our importer indexes: \`bench-native pages\`), the same page for every engine (\`bench/lib/page.mjs\`: the engine opens at page load and shows its first result for \`${d.firstQuery}\`), ` +
        `headless Chromium ${r.versions.chromium}, served by \`www/serve.mjs\` (brotli, quality 11, for JS, JSON and wasm, ETag revalidation, hashed index files cacheable for a year, one shared bandwidth cap, latency added to every response). ` +
        `Medians of ${d.runs} runs with a fresh browser profile each; queries: ${d.warmQueries} from the quality set. In parentheses: the peer's figure divided by ours.`,
    );
    out.push('');
    const rows = [...metrics(networks), ...qualityRows].map(([label, get, fmt]) => {
      const o = get(ours);
      return [label, cell(fmt, o, null), ...names.filter((n) => n !== 'ours').map((n) => cell(fmt, get(engines[n]), o))];
    });
    out.push(table(['', ...names.map((n) => engines[n].label)], rows));
    out.push('');
    out.push(`What each engine does for a "first result": ${names.map((n) => `${engines[n].label}: ${engines[n].firstResult}`).join('; ')}.`);
    const storage = (net) => {
      const i = ours.browser[net] && ours.browser[net].info;
      const how = (x) => (x ? `${x.source} (${x.storage})` : '–');
      return i ? `${how(i.first)} on the first visit, ${how(i.repeat)} on the repeat visit` : '–';
    };
    out.push('');
    out.push(`Ours opens with the default \`storage: 'auto'\`; how it got the index (source, then storage): ${networks.map(([net, label]) => `${label}: ${storage(net)}`).join('; ')}.`);
    out.push('');

    out.push('#### Targets');
    out.push('');
    out.push(table(['target', 'measured (ours)', 'met'], targets(ours, networks).map((t) => [t.target, t.measured, t.met ? 'yes' : '**no**'])));
    out.push('');
    const lost = losses(engines, networks);
    if (lost.length) {
      out.push('#### Where ours loses');
      out.push('');
      out.push('Every figure of the table above where a peer does better than ours by more than 5 %.');
      out.push('');
      for (const l of lost) out.push(`- ${l}`);
      out.push('');
    }

    out.push('#### Sizes');
    out.push('');
    out.push(
      table(
        ['engine', 'version', 'code raw', 'gzip', 'brotli', 'index files', 'index raw', 'gzip', 'brotli', 'index build'],
        names.map((n) => {
          const e = engines[n];
          return [e.label, e.version, kib(e.bundle.raw), kib(e.bundle.gzip), kib(e.bundle.brotli), e.index.files, bytes(e.index.raw), bytes(e.index.gzip), bytes(e.index.brotli), msText(e.buildMs)];
        }),
      ),
    );
    out.push('');
    out.push(`brotli: quality 11, window 24 (quality ${5} above 64 MiB). Pagefind's files are gzip already: their size is the gzip column, raw is unpacked. Ours: the published \`.pages\` file (the full download: every page DEFLATEd on its own, which gzip cannot shrink further); index build of ours is \`gitsense-search build\` (see the corpus table).`);
    out.push('');

    for (const [net, label] of networks) {
      out.push(`#### Visits, ${label}`);
      out.push('');
      const v = (e, kind) => e.browser[net] && e.browser[net][kind];
      const visit = (x) =>
        !x
          ? '–'
          : x.ok === 0
            ? `fails (${x.errors[0] || 'error'})`.slice(0, 120)
            : `${msText(x.ms)}${typeof x.queryInnerMs === 'number' ? ` (query ${msText(x.queryInnerMs)})` : ''}, ${bytes(x.bytesAtFirst)} / ${bytes(x.bytes)}, ${x.requests} req`;
      out.push(
        table(
          ['engine', 'first visit', 'repeat visit', 'repeat, network off'],
          names.map((n) => [engines[n].label, visit(v(engines[n], 'first')), visit(v(engines[n], 'repeat')), visit(v(engines[n], 'offline'))]),
        ),
      );
      out.push('');
      out.push('Each cell: time to the first result from navigation start (in parentheses, ours: the first query\'s time inside the worker), bytes on the wire before it / once the network is quiet (background downloads, update checks), requests (revalidations answered 304 carry no bytes).');
      out.push('');
      out.push(
        table(
          ['engine', 'new query median', 'p95', 'p99', 'in worker median / p95', 'repeated median', 'p95', 'JS memory (page + workers)', 'JS heap (page)', 'renderer private'],
          names.map((n) => {
            const b = engines[n].browser[net] || {};
            const w = b.warm;
            const m = b.memory || {};
            if (!w) return [engines[n].label, '–', '–', '–', '–', '–', '–', '–', '–', '–'];
            const inner = w.freshInWorker.n ? `${msText(w.freshInWorker.median)} / ${msText(w.freshInWorker.p95)}` : '–';
            return [engines[n].label, msText(w.fresh.median), msText(w.fresh.p95), msText(w.fresh.p99), inner, msText(w.repeat.median), msText(w.repeat.p95), bytes(m.userAgentSpecificBytes), bytes(m.jsHeapUsedBytes), bytes(m.rendererPrivateBytes)];
          }),
        ),
      );
      out.push('');
      out.push(
        'Queries: each query of the set once as a new query on the open engine (what a user typing a new query gets), then all again (repeated). From the page: `performance.now()` around the call; in the worker: the engine\'s own timing (ours only). ' +
          'Memory after the queries: `performance.measureUserAgentSpecificMemory()` (JS heaps of the page and its workers; wasm memories are not counted), CDP `JSHeapUsedSize` (the page alone), and the private memory (USS) of the browser\'s renderer processes from /proc, which includes wasm memories, a shared worker\'s process and the browser\'s own baseline.',
      );
      out.push('');
    }

    if (d.quality) {
      out.push('#### Ranking quality');
      out.push('');
      out.push(
        `${d.quality.queries} queries from \`docs_quality --dump-queries\` (${d.quality.sample ? `${d.quality.sample} per class, fixed seed` : 'all'}): API names, general-index terms and page headings → the pages they belong to. ` +
          "An engine's first result is the page of its top hit; its top ten distinct pages are scored (success@1, success@10, MRR@10).",
      );
      out.push('');
      const all = Object.keys(engines);
      const classes = Object.keys(ours.quality || {});
      const rows = [];
      for (const n of all) {
        const q = engines[n].quality;
        if (!q) continue;
        for (const c of classes) {
          if (!q[c]) continue;
          rows.push([engines[n].label, c, q[c].queries, pct(q[c].successAt1), pct(q[c].successAt10), q[c].mrrAt10.toFixed(3), q[c].errors]);
        }
      }
      out.push(table(['engine', 'class', 'queries', 'success@1', 'success@10', 'MRR@10', 'errors'], rows));
      out.push('');
    }
  }

  const corpora = Object.entries(r.corpora || {});
  if (corpora.length) {
    out.push('### Per corpus: build and native queries');
    out.push('');
    out.push(
      'Build: `gitsense-search build` under `/usr/bin/time -v` (wall time, peak RSS). Index: raw, the published gzip file, brotli. ' +
        'Queries: `bench-native latency` opens the index in-process and runs the set as the browser module does (`searchJson(q, {})`: all targets, snippets, JSON), one warm-up pass then 3 timed passes; percentiles over every timed search.',
    );
    out.push('');
    out.push(
      table(
        ['corpus', 'input', 'build', 'peak RSS', 'chats / messages / code blocks', 'index raw', 'gzip', 'brotli', 'queries', 'median', 'p95', 'p99'],
        corpora.map(([, c]) => [
          c.label,
          `${c.input.files} file${c.input.files === 1 ? '' : 's'}, ${bytes(c.input.bytes)}`,
          `${c.build.wallSeconds.toFixed(2)} s`,
          `${(c.build.peakRssKiB / 1024).toFixed(0)} MiB`,
          `${c.counts.chats} / ${c.counts.messages} / ${c.counts.codeBlocks}`,
          bytes(c.index.raw),
          bytes(c.index.gzip),
          `${bytes(c.index.brotli)}${c.index.brotliQuality !== 11 ? ` (q${c.index.brotliQuality})` : ''}`,
          c.queries.count,
          msText(c.native.median_ms),
          msText(c.native.p95_ms),
          msText(c.native.p99_ms),
        ]),
      ),
    );
    out.push('');
    for (const [name, c] of corpora) out.push(`- ${name}: \`${c.command}\`; queries: ${c.queries.generated ? `${c.queries.generated} drawn from the index (\`bench-native queries\`, fixed seed) + ${c.queries.count - c.queries.generated} in the query language` : 'the browser query set'} (\`${c.queries.file}\`)`);
    out.push('');
  }
  return out.join('\n');
}

/** The project's targets for ours (README and BENCHMARKS name them), checked against the run. */
export function targets(ours, networks) {
  const throttled = networks.find(([k]) => k !== 'local');
  const local = networks.find(([k]) => k === 'local');
  const t = [];
  if (throttled) {
    const f = ours.browser[throttled[0]].first;
    t.push({ target: `cold first result within 600 ms (${throttled[1]})`, measured: `${msText(f.ms)}, ${bytes(f.bytesAtFirst)}`, met: f.ok > 0 && f.ms <= 600 });
  }
  if (local) {
    const rp = ours.browser[local[0]].repeat;
    t.push({ target: 'repeat visit within 100 ms, no index bytes on the wire (no throttling)', measured: `${msText(rp.ms)}, ${bytes(rp.indexBytes)} of index`, met: rp.ok > 0 && rp.ms <= 100 && rp.indexBytes === 0 });
    const w = ours.browser[local[0]].warm;
    if (w) t.push({ target: 'queries: 0.4 ms median, 1.5 ms p95 (browser, new queries from the page)', measured: `${msText(w.fresh.median)} / ${msText(w.fresh.p95)} (in the worker: ${msText(w.freshInWorker.median)} / ${msText(w.freshInWorker.p95)})`, met: w.fresh.median <= 0.4 && w.fresh.p95 <= 1.5 });
  }
  const first = ours.firstBundle || ours.bundle;
  t.push({ target: 'wasm + JS at most 400 KiB brotli', measured: `${kib(ours.bundle.brotli)} in all, ${kib(first.brotli)} before the first result`, met: ours.bundle.brotli <= 400 * 1024 });
  return t;
}

/**
 * Every metric where a peer does better than ours (by more than 5 %), one
 * line per metric naming the peers and how far ahead they are.
 */
export function losses(engines, networks) {
  const ours = engines.ours;
  // Not the variants of a first visit (firstOnly): their engine is in the table.
  const peers = Object.entries(engines).filter(([n, e]) => n !== 'ours' && !e.qualityOnly && !e.firstOnly);
  const out = [];
  for (const [label, get, fmt] of metrics(networks)) {
    const o = get(ours);
    const ahead = peers
      .map(([, e]) => [e, get(e)])
      .filter(([, p]) => typeof p === 'number' && (o === 'fails' || (typeof o === 'number' && p < o * 0.95)))
      .map(([e, p]) => `${e.label} ${fmt(p)}${typeof o === 'number' && p > 0 ? ` (${round(o / p, 1)}× less)` : ''}`);
    if (ahead.length) out.push(`${label}: ours ${o === 'fails' ? 'fails' : fmt(o)}; ${ahead.join(', ')}`);
  }
  for (const [label, get, fmt] of qualityRows) {
    const o = get(ours);
    const ahead = peers.map(([, e]) => [e, get(e)]).filter(([, p]) => typeof p === 'number' && typeof o === 'number' && p > o);
    if (ahead.length) out.push(`${label}: ours ${fmt(o)}; ${ahead.map(([e, p]) => `${e.label} ${fmt(p)}`).join(', ')}`);
  }
  return out;
}
