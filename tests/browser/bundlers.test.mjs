// The package bundled into a site as a dependency, as a new user would:
// a tiny page importing 'gitsense-search' (pkg/ installed into a temporary
// node_modules), bundled with Vite, webpack and esbuild, served by
// www/serve.mjs, opened in headless Chromium, answering a search over the
// published sample index exactly as the CLI does.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { startServer } from '../../www/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS } from './chromium.mjs';
import { ROOT, SAMPLE_INDEX, cli } from './harness.mjs';

const PKG = path.join(ROOT, 'pkg');
const QUERY = 'payment';

const MAIN_JS = `
import { GitSenseSearch } from 'gitsense-search';

// The test calls this with the open() options to try.
window.searchOnce = async (options, query) => {
  try {
    const engine = await GitSenseSearch.open({ manifestUrl: 'data/manifest.json', storage: 'memory', ...options });
    const json = await engine.searchJson(query);
    await engine.close();
    return { json };
  } catch (e) {
    return { error: e && e.toJSON ? e.toJSON() : { message: String(e) } };
  }
};
document.body.dataset.ready = '1';
`;

let work;
let browser;
let expected;

before(async () => {
  if (!fs.existsSync(path.join(PKG, 'index.js'))) throw new Error(`${PKG} is missing: run ./build.sh first`);
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-bundlers-'));
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  expected = cli('search', SAMPLE_INDEX, QUERY, '--format', 'json').replace(/\n$/, '');
});

after(async () => {
  if (browser) await browser.close();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

/** A project: index.html + main.js, with pkg/ as node_modules/gitsense-search. */
function project(name, html) {
  const dir = path.join(work, name);
  fs.mkdirSync(path.join(dir, 'node_modules'), { recursive: true });
  fs.cpSync(PKG, path.join(dir, 'node_modules/gitsense-search'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'module', dependencies: { 'gitsense-search': 'file:../pkg' } }));
  fs.writeFileSync(path.join(dir, 'main.js'), MAIN_JS);
  fs.writeFileSync(path.join(dir, 'index.html'), html);
  return dir;
}

/** Serves `dist` (the sample index published into dist/data) and runs one search in a fresh page. */
async function searchIn(dist, options = {}) {
  cli('publish', SAMPLE_INDEX, '--out-dir', path.join(dist, 'data'), '--quiet');
  const server = await startServer({ root: dist, port: 0 });
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e));
    await page.goto(server.url + 'index.html');
    await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 30_000 });
    const answer = await page.evaluate(({ options, query }) => window.searchOnce(options, query), { options, query: QUERY });
    assert.deepEqual(errors, []);
    return answer;
  } finally {
    await context.close();
    await server.close();
  }
}

/** The files a bundle that does not copy assets needs beside it. */
function engineFiles() {
  return fs.readdirSync(PKG).filter((n) => n === 'worker.js' || /^gitsense_search_bg.*\.wasm$/.test(n));
}

test('Vite: a page bundled with vite build searches with no extra step', async () => {
  const dir = project('vite-site', '<!doctype html><meta charset="utf-8"><title>t</title><body><script type="module" src="./main.js"></script></body>');
  const { build } = await import('vite');
  const dist = path.join(dir, 'dist');
  await build({ root: dir, base: './', logLevel: 'silent', configFile: false, build: { outDir: dist, emptyOutDir: true } });
  // Vite emitted the worker and both wasm parts itself.
  const emitted = fs.readdirSync(path.join(dist, 'assets'));
  assert.ok(emitted.some((n) => n.endsWith('.wasm')), `no wasm among ${emitted}`);
  const answer = await searchIn(dist);
  assert.equal(answer.error, undefined, JSON.stringify(answer.error));
  assert.equal(answer.json, expected);
});

test('webpack: a page bundled with webpack 5 searches with no extra step', async () => {
  const dir = project('webpack-site', '<!doctype html><meta charset="utf-8"><title>t</title><body><script type="module" src="./main.js"></script></body>');
  const { default: webpack } = await import('webpack');
  const dist = path.join(dir, 'dist');
  const stats = await new Promise((resolve, reject) => {
    webpack(
      {
        mode: 'production',
        context: dir,
        entry: './main.js',
        output: { path: dist, filename: 'main.js', module: true, publicPath: 'auto' },
        experiments: { outputModule: true },
        resolve: { modules: [path.join(dir, 'node_modules')] },
        performance: { hints: false },
      },
      (err, s) => (err ? reject(err) : resolve(s)),
    );
  });
  assert.ok(!stats.hasErrors(), stats.toString({ all: false, errors: true }));
  fs.copyFileSync(path.join(dir, 'index.html'), path.join(dist, 'index.html'));
  const answer = await searchIn(dist);
  assert.equal(answer.error, undefined, JSON.stringify(answer.error));
  assert.equal(answer.json, expected);
});

/** esbuild's bundle of the page (ES module), in `dir`/dist. */
async function esbuildSite(name) {
  const dir = project(name, '<!doctype html><meta charset="utf-8"><title>t</title><body><script type="module" src="./main.js"></script></body>');
  const esbuild = await import('esbuild');
  const dist = path.join(dir, 'dist');
  await esbuild.build({ entryPoints: [path.join(dir, 'main.js')], absWorkingDir: dir, bundle: true, format: 'esm', outdir: dist, logLevel: 'silent' });
  fs.copyFileSync(path.join(dir, 'index.html'), path.join(dist, 'index.html'));
  return dist;
}

test('esbuild: without the engine files beside the bundle, open() fails saying what is missing', async () => {
  const dist = await esbuildSite('esbuild-bare');
  const answer = await searchIn(dist);
  assert.equal(answer.error?.code, 'engine.load_failed', JSON.stringify(answer));
  assert.match(answer.error.message, /worker\.js/);
  assert.match(answer.error.message, /assetsUrl/);
});

test('esbuild: with worker.js and the wasm files copied next to the bundle, it searches', async () => {
  const dist = await esbuildSite('esbuild-copied');
  for (const f of engineFiles()) fs.copyFileSync(path.join(PKG, f), path.join(dist, f));
  const answer = await searchIn(dist);
  assert.equal(answer.error, undefined, JSON.stringify(answer.error));
  assert.equal(answer.json, expected);
});

test('esbuild: with the engine files elsewhere on the site, assetsUrl says where', async () => {
  const dist = await esbuildSite('esbuild-assets-url');
  const assets = path.join(dist, 'static/gss');
  fs.mkdirSync(assets, { recursive: true });
  for (const f of engineFiles()) fs.copyFileSync(path.join(PKG, f), path.join(assets, f));
  const answer = await searchIn(dist, { assetsUrl: 'static/gss' });
  assert.equal(answer.error, undefined, JSON.stringify(answer.error));
  assert.equal(answer.json, expected);
});
