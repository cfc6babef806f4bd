// Build tool (run by ./build.sh, not shipped): wires split.js into the
// wasm-bindgen output, and names the second module.
//
//   node xtask/js/split-glue.mjs glue PKG_DIR
//       gitsense_search.js gets the module's `gitsense_split` imports
//       (split.js splitImports), next to wasm-bindgen's own.
//   node xtask/js/split-glue.mjs name PKG_DIR SECONDARY.wasm
//       moves SECONDARY.wasm into PKG_DIR as gitsense_search_bg-HASH.wasm
//       (HASH: its SHA-256, 16 hex digits) and writes that name into the
//       bundled worker.js, where split.js says '@SECONDARY@' (its constant
//       and its `new URL('…', import.meta.url)`, which bundlers follow).
// Stops the build when the text to change is not found exactly as expected
// (another wasm-bindgen version, another bundle), never writes it half.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';

function fail(msg) {
  console.error(`split-glue: ${msg}`);
  process.exit(1);
}

function replaceCounted(text, from, to, count, where) {
  const n = text.split(from).length - 1;
  if (n !== count) fail(`${where}: expected ${count} × ${JSON.stringify(from)}, found ${n}`);
  return text.split(from).join(to);
}

const [mode, pkg, secondary] = process.argv.slice(2);
if (mode === 'glue' && pkg) {
  const file = path.join(pkg, 'gitsense_search.js');
  let js = fs.readFileSync(file, 'utf8');
  js = replaceCounted(
    js,
    'const imports = __wbg_get_imports();',
    'const imports = __wbg_get_imports();\n    imports.gitsense_split = splitImports(() => wasm);',
    2,
    file,
  );
  if (!/^let wasmModule, wasmInstance, wasm;$/m.test(js)) fail(`${file}: wasm-bindgen's \`let ... wasm;\` not found`);
  js = `import { splitImports } from './split.js';\n${js}`;
  fs.writeFileSync(file, js);
} else if (mode === 'name' && pkg && secondary) {
  const bytes = fs.readFileSync(secondary);
  const name = `gitsense_search_bg-${crypto.createHash('sha256').update(bytes).digest('hex').slice(0, 16)}.wasm`;
  const worker = path.join(pkg, 'worker.js');
  const js = replaceCounted(fs.readFileSync(worker, 'utf8'), "'@SECONDARY@'", JSON.stringify(name).replace(/"/g, "'"), 2, worker);
  fs.writeFileSync(path.join(pkg, name), bytes);
  fs.writeFileSync(worker, js);
  fs.rmSync(secondary);
  console.log(name);
} else {
  fail('usage: node xtask/js/split-glue.mjs glue PKG_DIR | name PKG_DIR SECONDARY.wasm');
}
