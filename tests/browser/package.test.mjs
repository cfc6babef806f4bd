// pkg/ as an npm package, outside a browser: what it ships (README,
// LICENSE, every file its code loads), its typings as TypeScript resolves
// them for a consumer under moduleResolution node16 and bundler, and its
// coded refusal to run in Node.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PKG = path.join(ROOT, 'pkg');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');

if (!fs.existsSync(path.join(PKG, 'index.js'))) throw new Error(`${PKG} is missing: run ./build.sh first`);

const manifest = JSON.parse(fs.readFileSync(path.join(PKG, 'package.json'), 'utf8'));

/** Whether `name` is matched by one of the package's `files` patterns. */
function listed(name) {
  return manifest.files.some((p) => (p.includes('*') ? new RegExp(`^${p.replace(/[.]/g, '\\.').replace(/\*/g, '[^/]*')}$`).test(name) : p === name));
}

/** A consumer project with pkg/ installed as node_modules/gitsense-search (its `files` only). */
function consumer(files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-consumer-'));
  const dest = path.join(dir, 'node_modules/gitsense-search');
  fs.mkdirSync(dest, { recursive: true });
  for (const name of fs.readdirSync(PKG)) {
    if (name === 'package.json' || listed(name)) fs.copyFileSync(path.join(PKG, name), path.join(dest, name));
  }
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  return dir;
}

test('the package names its repository and license and ships a README and LICENSE', () => {
  assert.equal(manifest.license, 'MIT');
  assert.match(manifest.repository.url, /github\.com\/gitsense\/gitsense-search/);
  assert.equal(manifest.exports['.'].types, './index.d.ts');
  for (const name of ['README.md', 'LICENSE']) {
    assert.ok(fs.existsSync(path.join(PKG, name)), `${name} is in pkg/`);
    assert.ok(listed(name), `${name} is in files`);
  }
  assert.equal(fs.readFileSync(path.join(PKG, 'LICENSE'), 'utf8'), fs.readFileSync(path.join(ROOT, 'LICENSE'), 'utf8'));
  const readme = fs.readFileSync(path.join(PKG, 'README.md'), 'utf8');
  // The install lines that work: the release's tarball (the package is not on the registry) and its npx.
  for (const words of ['npm install ./gitsense-search-', 'npx gitsense-search site', 'GitSenseSearch.open', 'assetsUrl', 'esbuild']) assert.ok(readme.includes(words), words);
});

test('every file in pkg/ but package.json is in files, and every file the code loads is in pkg/', () => {
  const shipped = fs.readdirSync(PKG).filter((n) => n !== 'package.json');
  assert.deepEqual(shipped.filter((n) => !listed(n)), []);
  // The files the module and its worker name with new URL(…, import.meta.url).
  for (const file of ['index.js', 'worker.js']) {
    const code = fs.readFileSync(path.join(PKG, file), 'utf8');
    for (const [, name] of code.matchAll(/new URL\(\s*["'`](?:\.\/)?([^"'`]+)["'`]\s*,\s*import\.meta\.url\s*\)/g)) {
      assert.ok(fs.existsSync(path.join(PKG, name)), `${file} loads ${name}, which pkg/ lacks`);
    }
  }
});

const CONSUMER_TS = `
import { GitSenseSearch, GitSenseSearchError, type SearchResults, type OpenOptions } from 'gitsense-search';
import type { TotalCounts } from 'gitsense-search/results';
import { STRINGS, type GitSenseSearchElement } from 'gitsense-search/ui.js';

const options: OpenOptions = { manifestUrl: '/search/manifest.json', assetsUrl: '/static/gitsense-search/' };
export async function run(): Promise<number> {
  const engine: GitSenseSearch = await GitSenseSearch.open(options);
  const results: SearchResults = await engine.search('payment lang:js', { perPage: 10 });
  const counts: TotalCounts = results.totalCounts;
  // The drop-in UI's element, typed through the tag name.
  const ui: GitSenseSearchElement | null = document.querySelector('gitsense-search');
  if (ui) {
    ui.engine = engine;
    ui.strings = { button: STRINGS.placeholder };
    ui.addEventListener('gitsense-select', (e) => ui.open(e.detail.query));
    // @ts-expect-error: the words are strings (an error only if the types resolved)
    ui.strings = { button: 1 };
  }
  // @ts-expect-error: open() needs a manifestUrl (an error only if the types resolved)
  await GitSenseSearch.open({ storage: 'memory' });
  try {
    await engine.search('"unbalanced');
  } catch (e) {
    if (e instanceof GitSenseSearchError) return e.position ?? -1;
  }
  return counts.messages;
}
`;

for (const [resolution, module] of [
  ['node16', 'node16'],
  ['bundler', 'esnext'],
]) {
  test(`the typings resolve for a consumer under moduleResolution ${resolution}`, () => {
    const tsconfig = {
      compilerOptions: { module, moduleResolution: resolution, target: 'es2022', lib: ['es2022', 'dom'], strict: true, noEmit: true, skipLibCheck: false },
      files: ['consumer.ts'],
    };
    const dir = consumer({
      'package.json': JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
      'tsconfig.json': JSON.stringify(tsconfig),
      'consumer.ts': CONSUMER_TS,
    });
    try {
      execFileSync(process.execPath, [TSC, '-p', dir], { encoding: 'utf8', stdio: 'pipe' });
    } catch (e) {
      assert.fail(`tsc (${resolution}) failed:\n${e.stdout}${e.stderr}`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('a consumer error is still reported (the check is not vacuous)', () => {
  const dir = consumer({
    'package.json': JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
    'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'node16', moduleResolution: 'node16', strict: true, noEmit: true, lib: ['es2022', 'dom'] }, files: ['consumer.ts'] }),
    'consumer.ts': "import { GitSenseSearch } from 'gitsense-search';\nexport const n: number = GitSenseSearch.open({ manifestUrl: 'm' });\n",
  });
  try {
    let out = '';
    try {
      execFileSync(process.execPath, [TSC, '-p', dir], { encoding: 'utf8', stdio: 'pipe' });
    } catch (e) {
      out = e.stdout;
    }
    assert.match(out, /TS2322/, 'a Promise is not a number');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('in Node, open() and clear() reject with environment.unsupported', async () => {
  const { GitSenseSearch, GitSenseSearchError } = await import(pathToFileURL(path.join(PKG, 'index.js')).href);
  for (const call of [() => GitSenseSearch.open({ manifestUrl: 'https://example.com/search/manifest.json' }), () => GitSenseSearch.clear()]) {
    await assert.rejects(call(), (e) => {
      assert.ok(e instanceof GitSenseSearchError);
      assert.equal(e.code, 'environment.unsupported');
      assert.match(e.message, /browser with Web Workers/);
      assert.match(e.message, /Node\.js/);
      return true;
    });
  }
});
