// Shared setup for the page-level browser tests: a private copy of the
// demo site, the test server, headless Chromium through playwright-core,
// and the native CLI for comparisons.

import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../www/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS as ARGS } from './chromium.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = path.join(ROOT, 'target/release/gitsense-search');
export const SAMPLE_INDEX = path.join(ROOT, 'target/sample/sample.gsx');
/** The demo page's default index: this documentation and the sample (build.sh build_demo_index). */
export const DEMO_INDEX = path.join(ROOT, 'target/demo/demo.gsx');
export const FIXTURES = process.env.GITSENSE_FIXTURES || path.join(ROOT, 'target/fixtures');
export const HOSTILE_INDEX = path.join(FIXTURES, 'hostile.gsx');
export const SCREENSHOTS = path.join(ROOT, 'target/screenshots');

for (const f of [CLI, SAMPLE_INDEX, DEMO_INDEX, HOSTILE_INDEX, path.join(ROOT, 'www/dist/pkg/index.js')]) {
  if (!fs.existsSync(f)) throw new Error(`${f} is missing: run ./build.sh test (it builds the site and fixtures first)`);
}

/** Runs the native CLI; returns stdout. */
export function cli(...args) {
  return execFileSync(CLI, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
}

/** Publishes an index into `dir` (relative to the site root) with the CLI. */
export function publish(site, index, dir = 'data') {
  cli('publish', index, '--out-dir', path.join(site.root, dir));
  return JSON.parse(fs.readFileSync(path.join(site.root, dir, 'manifest.json'), 'utf8'));
}

/**
 * Adds the raw index (`bytes`) beside a published index in `dir` and names
 * it in the manifest as `rawFile`, as sites published before the packed
 * file was the one copy are laid out; `packed: false` also drops the
 * packed file (manifest and page lengths) for a gzip index to download
 * (of `whole`: the index as published, when `bytes` is an altered copy),
 * so every page comes from the raw index. Returns the new manifest.
 */
export function withRawIndex(site, dir, bytes, { packed = true, whole = bytes } = {}) {
  const at = path.join(site.root, dir);
  const m = JSON.parse(fs.readFileSync(path.join(at, 'manifest.json'), 'utf8'));
  const stem = `index-${m.sha256.slice(0, 16)}`;
  m.rawFile = `${stem}.gsx`;
  fs.writeFileSync(path.join(at, m.rawFile), bytes);
  if (!packed) {
    fs.rmSync(path.join(at, m.packedFile));
    // The whole index to download is then the gzip one (of `whole`).
    const gz = zlib.gzipSync(whole);
    m.file = `${stem}.gsx.gz`;
    m.compression = 'gzip';
    m.compressedSize = gz.length;
    fs.writeFileSync(path.join(at, m.file), gz);
    // The hot file without the packed file's page lengths at its end.
    const hot = zlib.gunzipSync(fs.readFileSync(path.join(at, m.hotFile)));
    fs.writeFileSync(path.join(at, m.hotFile), zlib.gzipSync(hot.subarray(0, hot.length - 2 * m.pageCount)));
    delete m.packedFile;
    delete m.packedSize;
  }
  const text = JSON.stringify(m, null, 2);
  fs.writeFileSync(path.join(at, 'manifest.json'), text);
  // The first visit's file with the new manifest (as publish lays it out).
  const hot = zlib.gunzipSync(fs.readFileSync(path.join(at, m.hotFile)));
  const len = Buffer.alloc(4);
  len.writeUInt32LE(Buffer.byteLength(text));
  fs.writeFileSync(path.join(at, 'manifest.hot.gz'), zlib.gzipSync(Buffer.concat([Buffer.from('GSXHOT1\n'), len, Buffer.from(text), hot])));
  return m;
}

/**
 * A private copy of the demo site (page, pkg/, the published sample
 * index) served by www/serve.mjs, plus a fresh browser profile.
 */
export async function setup() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-site-'));
  fs.cpSync(path.join(ROOT, 'www/dist'), root, { recursive: true });
  // A blank page on the same origin for API tests (the demo page would
  // open an engine of its own).
  fs.writeFileSync(path.join(root, 'blank.html'), '<!doctype html><meta charset="utf-8"><title>blank</title>');
  const server = await startServer({ root, port: 0 });
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-profile-'));
  const site = { root, server, url: server.url, profile, context: null };
  site.launch = async () => {
    site.context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      viewport: { width: 1200, height: 900 },
    });
    return site.context;
  };
  site.page = async (pathAndQuery = '') => {
    const page = await site.context.newPage();
    page.errors = [];
    page.on('pageerror', (e) => page.errors.push(e));
    page.on('dialog', (d) => {
      page.errors.push(new Error(`unexpected dialog: ${d.message()}`));
      d.dismiss();
    });
    if (pathAndQuery !== null) await page.goto(site.url + pathAndQuery);
    return page;
  };
  /** A blank page of the site, for driving the JS API directly. */
  site.blank = () => site.page('blank.html');
  site.close = async () => {
    if (site.context) await site.context.close();
    await server.close();
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(profile, { recursive: true, force: true });
  };
  await site.launch();
  return site;
}

/**
 * Closes a page after navigating away: under automation a closed page's
 * worker can keep its OPFS handles for half a minute, a navigation ends it
 * at once (as closing a tab does in a normal browser).
 */
export async function closePage(page) {
  await page.goto('about:blank');
  await page.close();
}

/**
 * Empties the page's origin storage with GitSenseSearch.clear(), retried
 * while a closed page's worker still holds the OPFS pool (storage.busy);
 * resolves with 'ok' or the last error's JSON.
 */
export function clearStorage(page, attempts = 30) {
  return page.evaluate(async (attempts) => {
    const { GitSenseSearch } = await import('/pkg/index.js');
    for (let i = 0; ; i++) {
      try {
        await GitSenseSearch.clear();
        return 'ok';
      } catch (e) {
        if (e.code !== 'storage.busy' || i === attempts) return e.toJSON();
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }, attempts);
}

/** Waits until the demo page has opened its index (or failed to). */
export async function demoReady(page) {
  await page.waitForFunction(() => document.body.dataset.state, null, { timeout: 60_000 });
  return page.evaluate(() => document.body.dataset.state);
}

/**
 * Opens an engine in the page through the JS API; it stays available as
 * window.engine. Returns its info().
 */
export async function openEngine(page, options = {}) {
  return page.evaluate(async (options) => {
    const { GitSenseSearch } = await import('/pkg/index.js');
    window.GitSenseSearch = GitSenseSearch;
    window.engineEvents = [];
    // The tests of lazy mode's copy expect it on a first visit: 'always'
    // unless a test asks otherwise (offline.test.mjs covers the policies).
    const copy = options.lazyFill === false ? {} : { offline: 'always' };
    const engine = await GitSenseSearch.open({ manifestUrl: '/data/manifest.json', ...copy, ...options });
    for (const type of ['update', 'updateerror', 'error']) {
      engine.addEventListener(type, (e) => window.engineEvents.push({ type, detail: e.detail && e.detail.toJSON ? e.detail.toJSON() : e.detail }));
    }
    window.engine = engine;
    return engine.info();
  }, options);
}

/** engine.<method>(...args) in the page; rejections come back as { error }. */
export function call(page, method, ...args) {
  return page.evaluate(
    async ({ method, args }) => {
      try {
        return { value: await window.engine[method](...args) };
      } catch (e) {
        return { error: e && e.toJSON ? e.toJSON() : { message: String(e) } };
      }
    },
    { method, args },
  );
}

/**
 * Runs `fn(GitSenseSearch, arg)` in the page (its source is sent as text,
 * so it sees only its arguments and the page; window.engine persists
 * between calls): { value } or { error } (the error's toJSON()).
 */
export function runInPage(page, fn, arg) {
  return page.evaluate(
    async ({ src, arg }) => {
      const { GitSenseSearch } = await import('/pkg/index.js');
      try {
        // eslint-disable-next-line no-new-func
        return { value: await new Function('GitSenseSearch', 'arg', `return (${src})(GitSenseSearch, arg);`)(GitSenseSearch, arg) };
      } catch (e) {
        return { error: e && e.toJSON ? e.toJSON() : { message: String(e) } };
      }
    },
    { src: fn.toString(), arg },
  );
}

/** A blank page of `site` on an emptied origin (its other pages closed). */
export async function freshPage(site) {
  for (const p of site.context.pages()) await closePage(p);
  const page = await site.blank();
  const cleared = await clearStorage(page);
  if (cleared !== 'ok') throw new Error(`could not empty the origin's storage: ${JSON.stringify(cleared)}`);
  return page;
}

export function screenshotPath(name) {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  return path.join(SCREENSHOTS, name);
}
