// xtask/js/bundle-worker.mjs on real modules: the worker's own graph
// (worker.js, wasm-bindgen's glue for this build's module, lazy.js,
// split.js) and src/js modules imported in every layout and form the tool
// accepts. A bundle must behave as its modules do unbundled; what it
// cannot bundle stops it, naming the file and the construct, with
// worker.js left alone. No browser: the bundles run in Node.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as acorn from 'acorn';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const JS = path.join(ROOT, 'src/js');
const BUNDLE = path.join(ROOT, 'xtask/js/bundle-worker.mjs');
const WASM = path.join(ROOT, 'target/wasm32-unknown-unknown/wasm/gitsense_search.wasm');

/** A package directory holding `files` (relative path → text). */
function pkgOf(files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-bundle-'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

function bundle(dir) {
  return spawnSync(process.execPath, [BUNDLE, dir], { encoding: 'utf8' });
}

/**
 * Imports `file` in a fresh Node process with a worker-like `self`, and
 * returns what the module left in globalThis.result (JSON).
 */
function run(file) {
  const script = `globalThis.self = { location: { href: 'https://example.test/app/' }, addEventListener() {}, postMessage() {} };
await import(${JSON.stringify(pathToFileURL(file).href)});
console.log(JSON.stringify(await globalThis.result));`;
  const out = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  return JSON.parse(out.stdout);
}

function readJs(name) {
  return fs.readFileSync(path.join(JS, name), 'utf8');
}

// A module using every export form the tool accepts, over real modules.
const FORMS = `import{sha256Hex as digest,MANIFEST_TIMEOUT_MS}from'../net.js'
import * as
  storage
  from "../storage.js";

export const plain = 1, { nested: [fromPattern, ...restOfPattern] } = { nested: [2, 3, 4] };
export let counted = 0;
export var legacy = 'var';
export function* numbers() { yield 1; yield 2; }
export async function hashOf(text) {
  return digest(new TextEncoder().encode(text));
}
export class Box { constructor(v) { this.v = v; } }
const hidden = 'aliased';
const dashed = 'string name';
export { hidden as shown, dashed as "dashed-name" };
export default function (x) { return x * MANIFEST_TIMEOUT_MS; }
export const dbName = storage.DB_NAME;
export { sleep as nap, isOnline } from '../net.js';
export * from './more.js';
export * as netNs from "../net.js";
`;

const MORE = `export const more = 'more';
export default 'not passed on by export *';
`;

const SIDE = `globalThis.sideEffects = (globalThis.sideEffects || 0) + 1;
`;

// The entry: imports laid out as people write them (one line, many lines,
// no semicolons, comments between the names, aliases, default with
// named, namespace, side effects, the same module under two paths).
const WORKER = `import './side.js';
import times, {
  plain,
  fromPattern, restOfPattern, // a comment between names
  counted as count,
  legacy,
  numbers,
  hashOf,
  Box,
  shown,
  "dashed-name" as dashed,
  dbName,
  nap,
  isOnline as online,
  more,
  netNs,
} from './mod/forms.js'
import * as forms from './mod/forms.js';
import { parseByteranges } from './lazy.js';
import { parseByteranges as fromSnippet } from './snippets/gitsense-search/lazy.js';
import * as lazy from "./snippets/gitsense-search/lazy.js"
import { loadSecondary, splitState } from './split.js';

const body = new TextEncoder().encode('--B\\r\\nContent-Range: bytes 4-6/10\\r\\n\\r\\nabc\\r\\n--B--');
globalThis.result = (async () => ({
  times: times(2),
  plain,
  fromPattern,
  restOfPattern,
  count,
  legacy,
  numbers: [...numbers()],
  hash: await hashOf('abc'),
  box: new Box(5).v,
  shown,
  dashed,
  dbName,
  nap: await nap(1).then(() => 'slept'),
  online: online(),
  more,
  formsDefault: forms.default === times,
  formsKeys: Object.keys(forms).sort(),
  netNs: Object.keys(netNs).sort(),
  parts: parseByteranges(body, 'B', 'u').map((p) => [p.start, p.end, new TextDecoder().decode(p.bytes)]),
  sameLazy: fromSnippet === parseByteranges && lazy.parseByteranges === parseByteranges,
  split: [typeof loadSecondary, typeof splitState],
  sideEffects: globalThis.sideEffects,
}))();
`;

test('a bundle of src/js modules imported in every form behaves as the modules do unbundled', () => {
  const files = {
    'worker.js': WORKER,
    'side.js': SIDE,
    'mod/forms.js': FORMS,
    'mod/more.js': MORE,
    'net.js': readJs('net.js'),
    'storage.js': readJs('storage.js'),
    'lazy.js': readJs('lazy.js'),
    'snippets/gitsense-search/lazy.js': readJs('lazy.js'),
    'split.js': readJs('split.js'),
  };
  const dir = pkgOf(files);
  try {
    const unbundled = run(path.join(dir, 'worker.js'));
    const out = bundle(dir);
    assert.equal(out.status, 0, out.stderr);
    const text = fs.readFileSync(path.join(dir, 'worker.js'), 'utf8');
    const program = acorn.parse(text, { ecmaVersion: 'latest', sourceType: 'module' });
    assert.deepEqual(
      program.body.filter((s) => /^(Import|Export)/.test(s.type)).map((s) => s.type),
      [],
      'the bundle holds no import or export',
    );
    // Each module once: the snippet copy of lazy.js is lazy.js.
    assert.deepEqual(text.match(/^\/\/ \S+\.js$/gm), ['// side.js', '// net.js', '// storage.js', '// mod/more.js', '// mod/forms.js', '// lazy.js', '// split.js']);
    // Only worker.js is left: the bundle needs none of the other files.
    for (const name of Object.keys(files)) if (name !== 'worker.js') fs.rmSync(path.join(dir, name));
    const bundled = run(path.join(dir, 'worker.js'));
    // One difference, on purpose: a file imported under two paths with the
    // same text is one module in the bundle, two unbundled.
    assert.equal(unbundled.sameLazy, false);
    assert.equal(bundled.sameLazy, true);
    delete unbundled.sameLazy;
    delete bundled.sameLazy;
    assert.deepEqual(bundled, unbundled);
    // And what they both computed is right, not merely alike.
    assert.deepEqual(bundled, {
      times: 30000,
      plain: 1,
      fromPattern: 2,
      restOfPattern: [3, 4],
      count: 0,
      legacy: 'var',
      numbers: [1, 2],
      hash: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
      box: 5,
      shown: 'aliased',
      dashed: 'string name',
      dbName: 'gitsense-search',
      nap: 'slept',
      online: true,
      more: 'more',
      formsDefault: true,
      formsKeys: ['Box', 'counted', 'dashed-name', 'dbName', 'default', 'fromPattern', 'hashOf', 'isOnline', 'legacy', 'more', 'nap', 'netNs', 'numbers', 'plain', 'restOfPattern', 'shown'],
      netNs: unbundled.netNs,
      parts: [[4, 6, 'abc']],
      split: ['function', 'function'],
      sideEffects: 1,
    });
    assert.ok(bundled.netNs.includes('sha256Hex') && bundled.netNs.includes('fetchText'), bundled.netNs.join());
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("the worker's real graph bundles into one file whose every import resolves", { skip: !fs.existsSync(WASM) && `${WASM} is missing: run ./build.sh first` }, () => {
  // wasm-bindgen's glue for the module and split.js wired in, as build.sh does.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-bundle-real-'));
  try {
    const env = { ...process.env, PATH: `${path.join(os.homedir(), '.cargo/bin')}${path.delimiter}${process.env.PATH}` };
    execFileSync('wasm-bindgen', ['--target', 'web', '--out-dir', dir, '--out-name', 'gitsense_search', WASM], { env });
    for (const name of ['worker.js', 'lazy.js', 'split.js']) fs.copyFileSync(path.join(JS, name), path.join(dir, name));
    execFileSync(process.execPath, [path.join(ROOT, 'xtask/js/split-glue.mjs'), 'glue', dir]);
    // A probe after worker.js's own code: what each name it imports is.
    const worker = readJs('worker.js');
    const imported = acorn
      .parse(worker, { ecmaVersion: 'latest', sourceType: 'module' })
      .body.filter((s) => s.type === 'ImportDeclaration')
      .flatMap((s) => s.specifiers.map((x) => x.local.name));
    assert.ok(imported.length > 10, imported.join());
    fs.writeFileSync(path.join(dir, 'worker.js'), `${worker}\nglobalThis.result = { ${imported.map((n) => `${n}: typeof ${n}`).join(', ')} };\n`);
    const out = bundle(dir);
    assert.equal(out.status, 0, out.stderr);
    const text = fs.readFileSync(path.join(dir, 'worker.js'), 'utf8');
    const sources = text.match(/^\/\/ xtask\/js\/bundle-worker\.mjs \(\.\/build\.sh\)\. Sources: (.*)\.$/m)[1].split(', ');
    for (const name of ['worker.js', 'gitsense_search.js', 'split.js']) assert.ok(sources.includes(name), sources.join());
    assert.ok(sources.some((s) => s.endsWith('/lazy.js')), sources.join());
    for (const name of fs.readdirSync(dir)) if (name !== 'worker.js') fs.rmSync(path.join(dir, name), { recursive: true });
    const types = run(path.join(dir, 'worker.js'));
    assert.deepEqual(Object.keys(types), imported);
    for (const [name, type] of Object.entries(types)) assert.equal(type, 'function', name);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('what one file cannot hold stops the bundle, naming the file and the construct, and worker.js is left alone', () => {
  const cases = [
    [{ 'worker.js': "import { a } from './a.js';\n", 'a.js': "import x from 'some-package';\nexport const a = x;\n" }, /a\.js:1: bare import 'some-package'/],
    [{ 'worker.js': "const m = await import('./a.js');\n", 'a.js': 'export const a = 1;\n' }, /worker\.js:1: dynamic import\(\)/],
    [{ 'worker.js': "import { a } from './a.js';\n", 'a.js': "import { b } from './b.js';\nexport const a = 1;\n", 'b.js': "import { a } from './a.js';\nexport const b = a;\n" }, /b\.js:1: import cycle through a\.js/],
    [{ 'worker.js': "import { a } from '../elsewhere.js';\n" }, /worker\.js:1: imports .*elsewhere\.js, which is outside/],
    [{ 'worker.js': "import { a } from './missing.js';\n" }, /worker\.js:1: imports .*missing\.js, which does not exist/],
    [{ 'worker.js': 'export const a = 1;\n' }, /worker\.js:1: worker\.js exports/],
    [{ 'worker.js': "import { a } from './a.js';\n", 'a.js': 'export const a = ;\n' }, /a\.js does not parse/],
  ];
  for (const [files, message] of cases) {
    const dir = pkgOf(files);
    try {
      const out = bundle(dir);
      assert.equal(out.status, 1, `${message}: ${out.stderr}`);
      assert.match(out.stderr, message);
      assert.equal(fs.readFileSync(path.join(dir, 'worker.js'), 'utf8'), files['worker.js']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
});
