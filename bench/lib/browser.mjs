// The browser half of the comparative benchmark: every engine's page in
// headless Chromium (playwright-core), served by www/serve.mjs with added
// latency and a bandwidth cap.
//
// Per engine and network profile, `runs` times with a fresh browser
// profile: a first visit (nothing cached), a repeat visit (same profile:
// HTTP cache, OPFS), and a repeat visit with the engine's index files
// unreachable (the server drops those requests, as a dead network would;
// the page and the engine's code still load, as from a service worker).
// On the first run's repeat visit: warm queries and the page's memory.
// Separately, unthrottled: the ranking of the quality query set.

import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer } from '../../www/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS } from '../../tests/browser/chromium.mjs';
import { pageHtml } from './page.mjs';
import { log, median, percentile, round } from './util.mjs';

const ARGS = [
  ...CHROMIUM_ARGS,
  // performance.measureUserAgentSpecificMemory() answers at once instead
  // of at the next garbage collection.
  '--enable-blink-features=ForceEagerMeasureMemory',
];

/** Cross-origin isolation: required by measureUserAgentSpecificMemory. */
const ISOLATION = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };

export const NETWORKS = {
  local: { label: 'no throttling', latencyMs: 0, bandwidth: 0 },
  '50ms-20mbit': { label: '50 ms RTT, 20 Mbit/s', latencyMs: 50, bandwidth: 2_500_000 },
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function chromiumVersion() {
  const b = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  const v = b.version();
  await b.close();
  return v;
}

/** Writes each engine's page into the site; returns { name: '/bench-name.html' }. */
export function writePages(site, engines) {
  const urls = {};
  for (const e of engines) {
    const file = `bench-${e.name}.html`;
    fs.writeFileSync(path.join(site, file), pageHtml(e));
    urls[e.name] = `/${file}`;
  }
  return urls;
}

/** A server for the site with the engines' cache rules and a network profile. */
export function serve(site, engines, network) {
  return startServer({
    root: site,
    port: 0,
    latencyMs: network.latencyMs,
    bandwidth: network.bandwidth,
    sharedBandwidth: true,
    brotli: true,
    precompress: true,
    headers: ISOLATION,
    immutable: [/\/index-[0-9a-f]{16}\.[^/]*$/, ...engines.flatMap((e) => e.immutable || [])],
  });
}

async function launch() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-bench-profile-'));
  const context = await chromium.launchPersistentContext(dir, { executablePath: CHROMIUM, headless: true, args: ARGS });
  context.profileDir = dir;
  // The initial blank tab would count in the renderers' memory.
  const [blank] = context.pages();
  if (blank) await blank.close();
  return context;
}

async function closeContext(context) {
  await context.close();
  fs.rmSync(context.profileDir, { recursive: true, force: true });
}

/** Waits until the server has sent nothing new for `quietMs` (background downloads, update checks). */
async function settle(server, quietMs = 750, maxMs = 300_000) {
  const t0 = Date.now();
  let last = JSON.stringify(server.stats());
  let since = Date.now();
  while (Date.now() - t0 < maxMs) {
    await sleep(100);
    const now = JSON.stringify(server.stats());
    if (now !== last) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) break;
  }
  return server.stats();
}

const sum = (o) => Object.values(o).reduce((a, b) => a + b, 0);

/**
 * One visit: navigation → the engine's first result. Returns the page
 * (still open) and { ok, ms, error, page (of the first result), bytes and
 * requests at the first result and once the network is quiet, bytes per
 * path, index bytes (those the engine's block list names) }.
 */
async function visit(context, server, engine, url, query, { block = [] } = {}) {
  server.options.block = block;
  server.reset();
  const page = await context.newPage();
  const errors = [];
  // An error the page script did not catch (its engine's code failed to
  // load, say) means no result will come: give up soon after it.
  const uncaught = new Promise((resolve) => {
    page.on('pageerror', (e) => {
      errors.push(String(e));
      setTimeout(() => resolve({ ok: false, error: errors.join('\n'), ms: null }), 10_000);
    });
  });
  await page.goto(`${server.url.replace(/\/$/, '')}${url}?q=${encodeURIComponent(query)}`, { waitUntil: 'commit' });
  const r = await Promise.race([
    page.waitForFunction(() => window.__bench, null, { timeout: 600_000 }).then(() => page.evaluate(() => window.__bench)),
    uncaught,
  ]);
  // Background work the engine reports (our lazy fill), then a quiet network.
  const background = r.ok ? await page.evaluate(() => window.__settled()).catch((e) => `failed: ${e.message}`) : null;
  const settled = await settle(server);
  server.options.block = [];
  const isIndex = (p) => engine.block.some((b) => (b instanceof RegExp ? b.test(p) : p.startsWith(b)));
  const indexBytes = Object.entries(settled.bytesByPath)
    .filter(([p]) => isIndex(p))
    .reduce((a, [, n]) => a + n, 0);
  return {
    page,
    result: {
      ok: r.ok,
      error: r.ok ? undefined : r.error,
      ms: r.ms,
      firstPage: r.first ? r.first.page : null,
      background,
      // The first query's own time inside the engine's worker (ours only):
      // on a just-opened index it reads its pages from storage.
      queryInnerMs: r.queryInnerMs ?? null,
      bytesAtFirst: r.stats ? r.stats.bytes : null,
      requestsAtFirst: r.stats ? r.stats.total : null,
      bytes: settled.bytes,
      requests: settled.total,
      indexBytes,
      bytesByPath: settled.bytesByPath,
    },
  };
}

async function closePage(page) {
  // A navigation ends the page's workers at once (closing alone can leave
  // a worker holding OPFS handles for a while under automation).
  await page.goto('about:blank');
  await page.close();
}

/**
 * Private memory (USS: private clean + dirty pages) of the renderer
 * processes of the browser using `profileDir` (the only page open is the
 * benchmark's): the page, its workers (a shared worker may have a process
 * of its own) and their wasm memories, which the JS measurements leave
 * out. Linux only (reads /proc); null elsewhere.
 */
function rendererMemory(profileDir) {
  let pids;
  try {
    pids = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  const procs = new Map();
  for (const pid of pids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const ppid = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
      procs.set(pid, { ppid, cmd: fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8') });
    } catch {
      // gone meanwhile
    }
  }
  const root = [...procs].find(([, p]) => p.cmd.includes(`--user-data-dir=${profileDir}`) && !p.cmd.includes('--type='));
  if (!root) return null;
  const inTree = (pid) => {
    for (let p = pid; p && procs.has(p); p = procs.get(p).ppid) if (p === root[0]) return true;
    return false;
  };
  let total = null;
  for (const [pid, p] of procs) {
    if (!p.cmd.includes('--type=renderer') || !inTree(pid)) continue;
    try {
      const rollup = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      const kb = (k) => Number((new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(rollup) || [])[1] || 0);
      const uss = (kb('Private_Clean') + kb('Private_Dirty')) * 1024;
      total = (total ?? 0) + uss;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/**
 * Page memory: measureUserAgentSpecificMemory (JS memory of the page and
 * its workers), the page's JS heap (CDP), and the renderer's private memory.
 */
async function memory(page) {
  const uasm = await page.evaluate(async () => {
    if (!self.crossOriginIsolated || !performance.measureUserAgentSpecificMemory) return null;
    try {
      const m = await performance.measureUserAgentSpecificMemory();
      return m.bytes;
    } catch {
      return null;
    }
  });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const { metrics } = await cdp.send('Performance.getMetrics');
  await cdp.detach();
  const metric = (n) => (metrics.find((m) => m.name === n) || {}).value ?? null;
  return { userAgentSpecificBytes: uasm, jsHeapUsedBytes: metric('JSHeapUsedSize'), rendererPrivateBytes: rendererMemory(page.context().profileDir) };
}

const summary = (visits) => {
  const ok = visits.filter((v) => v.ok);
  const pick = (k) => median(ok.map((v) => v[k]));
  return {
    ok: ok.length,
    runs: visits.length,
    ms: pick('ms'),
    queryInnerMs: pick('queryInnerMs'),
    bytesAtFirst: pick('bytesAtFirst'),
    bytes: pick('bytes'),
    indexBytes: pick('indexBytes'),
    requests: pick('requests'),
    errors: [...new Set(visits.filter((v) => !v.ok).map((v) => (v.error || '').split('\n')[0]))],
    all: visits.map((v) => ({ ok: v.ok, ms: round(v.ms, 1), queryInnerMs: round(v.queryInnerMs, 2), bytesAtFirst: v.bytesAtFirst, bytes: v.bytes, requests: v.requests })),
    bytesByPath: (ok[0] || visits[0] || {}).bytesByPath,
  };
};

const latency = (xs) => ({ median: median(xs), p95: percentile(xs, 95), p99: percentile(xs, 99), n: xs.filter((x) => typeof x === 'number').length });

/**
 * Visits, warm queries and memory of every engine on one network profile.
 */
export async function measureNetwork({ site, engines, urls, network, runs, firstQuery, warmQueries, onProgress = log }) {
  const server = await serve(site, engines, network);
  const out = {};
  try {
    for (const engine of engines) {
      const visits = { first: [], repeat: [], offline: [] };
      let warm = null;
      let mem = null;
      let info = null;
      for (let i = 0; i < runs; i++) {
        const context = await launch();
        await context.exposeBinding('__firstResult', (_source, at) => server.stats(at));
        try {
          const a = await visit(context, server, engine, urls[engine.name], firstQuery);
          visits.first.push(a.result);
          if (i === 0 && a.result.ok) info = { first: await a.page.evaluate(() => window.__info()) };
          await closePage(a.page);
          // A variant of an engine's first visit only (a page that knows
          // its query at load): the rest is the engine's own.
          if (engine.firstOnly) {
            const f = a.result;
            onProgress(`${engine.name} [${network.label}] run ${i + 1}/${runs}: first ${f.ok ? `${f.ms.toFixed(0)} ms, ${f.bytesAtFirst} B` : `failed: ${f.error}`}`);
            continue;
          }
          const b = await visit(context, server, engine, urls[engine.name], firstQuery);
          visits.repeat.push(b.result);
          if (i === 0 && b.result.ok) {
            info = { ...info, repeat: await b.page.evaluate(() => window.__info()) };
            const w = await b.page.evaluate((qs) => window.__warm(qs), warmQueries);
            warm = {
              queries: warmQueries.length,
              errors: w.errors,
              fresh: latency(w.fresh),
              repeat: latency(w.repeat),
              freshInWorker: latency(w.freshInner),
              repeatInWorker: latency(w.repeatInner),
            };
            mem = await memory(b.page);
          }
          await closePage(b.page);
          const c = await visit(context, server, engine, urls[engine.name], firstQuery, { block: engine.block });
          visits.offline.push(c.result);
          await closePage(c.page);
        } finally {
          await closeContext(context);
        }
        const f = visits.first.at(-1);
        onProgress(`${engine.name} [${network.label}] run ${i + 1}/${runs}: first ${f.ok ? `${f.ms.toFixed(0)} ms, ${f.bytesAtFirst} B` : `failed: ${f.error}`}; repeat ${visits.repeat.at(-1).ok ? `${visits.repeat.at(-1).ms.toFixed(0)} ms` : 'failed'}; offline ${visits.offline.at(-1).ok ? `${visits.offline.at(-1).ms.toFixed(0)} ms` : 'failed'}`);
      }
      out[engine.name] = {
        first: summary(visits.first),
        repeat: engine.firstOnly ? undefined : summary(visits.repeat),
        offline: engine.firstOnly ? undefined : summary(visits.offline),
        warm,
        memory: mem,
        info,
      };
    }
  } finally {
    await server.close();
  }
  return out;
}

/** The top ten pages of every query, per engine (unthrottled, one visit each). */
export async function rankAll({ site, engines, urls, queries, firstQuery, onProgress = log }) {
  const server = await serve(site, engines, NETWORKS.local);
  const out = {};
  try {
    for (const engine of engines) {
      const context = await launch();
      try {
        const { page, result } = await visit(context, server, engine, urls[engine.name], firstQuery);
        if (!result.ok) throw new Error(`${engine.name} did not open: ${result.error}`);
        const ranked = [];
        const t0 = performance.now();
        for (let i = 0; i < queries.length; i += 200) {
          ranked.push(...(await page.evaluate((qs) => window.__rank(qs), queries.slice(i, i + 200))));
          onProgress(`${engine.name}: ranked ${ranked.length}/${queries.length} queries`);
        }
        out[engine.name] = { ranked, seconds: (performance.now() - t0) / 1000 };
        await closePage(page);
      } finally {
        await closeContext(context);
      }
    }
  } finally {
    await server.close();
  }
  return out;
}

/** success@1, success@10 and MRR@10 per class and overall. */
export function quality(querySet, ranked) {
  const acc = {};
  const add = (cls, rank, error) => {
    const a = (acc[cls] ||= { queries: 0, at1: 0, at10: 0, rr: 0, errors: 0 });
    a.queries++;
    if (error) a.errors++;
    if (rank === 0) a.at1++;
    if (rank !== null && rank < 10) {
      a.at10++;
      a.rr += 1 / (rank + 1);
    }
  };
  querySet.forEach((q, i) => {
    const r = ranked[i];
    const error = !Array.isArray(r);
    const pages = error ? [] : r;
    const idx = pages.findIndex((p) => q.expected.includes(p));
    const rank = idx < 0 ? null : idx;
    add(q.class, rank, error);
    add('overall', rank, error);
  });
  return Object.fromEntries(
    Object.entries(acc)
      .sort(([a], [b]) => (a === 'overall') - (b === 'overall') || a.localeCompare(b))
      .map(([k, a]) => [
        k,
        {
          queries: a.queries,
          successAt1: round(a.at1 / a.queries, 4),
          successAt10: round(a.at10 / a.queries, 4),
          mrrAt10: round(a.rr / a.queries, 4),
          errors: a.errors,
        },
      ]),
  );
}
