// xtask/js/split-glue.mjs on wasm-bindgen's real output for this build's
// module: it wires split.js's imports into the glue, and when the glue is
// not what it knows (a wasm-bindgen release that renamed the import
// builder or the exports variable) it stops naming what it did not find
// instead of writing broken glue. No browser: the glue is only read.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as acorn from 'acorn';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const WASM = path.join(ROOT, 'target/wasm32-unknown-unknown/wasm/gitsense_search.wasm');
const GLUE = path.join(ROOT, 'xtask/js/split-glue.mjs');

if (!fs.existsSync(WASM)) throw new Error(`${WASM} is missing: run ./build.sh first`);

// wasm-bindgen's glue for the module, as build.sh makes it.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-glue-'));
// (build.sh installs wasm-bindgen-cli with cargo install.)
const env = { ...process.env, PATH: `${path.join(os.homedir(), '.cargo/bin')}${path.delimiter}${process.env.PATH}` };
execFileSync('wasm-bindgen', ['--target', 'web', '--out-dir', dir, '--out-name', 'gitsense_search', WASM], { env });
const original = fs.readFileSync(path.join(dir, 'gitsense_search.js'), 'utf8');

/** Runs split-glue on `text` as a package's gitsense_search.js: its exit status, stderr and the file after. */
function glue(text) {
  const pkg = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-glue-pkg-'));
  const file = path.join(pkg, 'gitsense_search.js');
  fs.writeFileSync(file, text);
  const run = spawnSync(process.execPath, [GLUE, 'glue', pkg], { encoding: 'utf8' });
  const after = fs.readFileSync(file, 'utf8');
  fs.rmSync(pkg, { recursive: true, force: true });
  return { status: run.status, stderr: run.stderr, after };
}

test("the glued bindings import splitImports and add its imports to every import object wasm-bindgen builds", () => {
  const { status, stderr, after } = glue(original);
  assert.equal(status, 0, stderr);
  const program = acorn.parse(after, { ecmaVersion: 'latest', sourceType: 'module' });
  const imports = program.body.filter((s) => s.type === 'ImportDeclaration' && s.source.value === './split.js');
  assert.deepEqual(
    imports.map((s) => s.specifiers.map((x) => x.local.name)),
    [['splitImports']],
  );
  // Every instance wasm-bindgen makes gets its import object from
  // __wbg_get_imports, so the one builder carries the split's imports to
  // both initSync and the async init.
  assert.equal(after.match(/gitsense_split: splitImports\(\(\) => wasm\)/g).length, 1);
  const calls = after.match(/__wbg_get_imports\(\)/g).length;
  assert.ok(calls >= 2, `__wbg_get_imports is called ${calls} times`);
  // Nothing else changed.
  const unglued = after
    .replace("import { splitImports } from './split.js';\n", '')
    .replace(/Object\.assign\(([\s\S]*?), \{ gitsense_split: splitImports\(\(\) => wasm\) \}\)/, '$1');
  assert.equal(unglued, original);
});

test('glue it does not know stops the build with what it could not find, and the file is left alone', () => {
  const cases = [
    [original.replaceAll('__wbg_get_imports', '__wbg_build_imports'), /function __wbg_get_imports, not found/],
    [original.replace(/\bwasm = instance\.exports;/, 'wasm = instance.exported;'), /no `wasm = <instance>\.exports` assignment/],
    [original.replace(/^let wasmModule, wasmInstance, wasm;$/m, 'let wasmModule, wasmInstance, wasmExports;'), /module-scope variable `wasm`/],
    [`import { splitImports } from './split.js';\n${original}`, /already declares splitImports/],
  ];
  for (const [text, message] of cases) {
    assert.notEqual(text, original, `the case for ${message} changes nothing: wasm-bindgen's output moved`);
    const { status, stderr, after } = glue(text);
    assert.equal(status, 1, `${message}: ${stderr}`);
    assert.match(stderr, message);
    assert.equal(after, text);
  }
});
