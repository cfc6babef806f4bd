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
// The glue is found by parsing wasm-bindgen's output (acorn), not by its
// exact text: what it needs is the function that builds the import object
// (`__wbg_get_imports`) and the module-scope variable that holds the
// instance's exports (`wasm`). When either is missing (a wasm-bindgen
// release that renamed them: build.sh pins the version it was checked
// with) it stops the build naming what it did not find, and it never
// writes a file that does not parse.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import * as acorn from 'acorn';

function fail(msg) {
  console.error(`split-glue: ${msg}`);
  process.exit(1);
}

function replaceCounted(text, from, to, count, where) {
  const n = text.split(from).length - 1;
  if (n !== count) fail(`${where}: expected ${count} × ${JSON.stringify(from)}, found ${n}`);
  return text.split(from).join(to);
}

function parse(js, where) {
  try {
    return acorn.parse(js, { ecmaVersion: 'latest', sourceType: 'module' });
  } catch (e) {
    fail(`${where} does not parse: ${e.message}`);
  }
}

// Every node under `node`, depth first; `enter(node)` returning false skips
// a node's children.
function walk(node, enter) {
  if (enter(node) === false) return;
  for (const value of Object.values(node)) {
    for (const child of Array.isArray(value) ? value : [value]) {
      if (child && typeof child.type === 'string') walk(child, enter);
    }
  }
}

// The names a program declares at module scope (functions, classes,
// variables, imports).
function moduleScope(program) {
  const names = new Set();
  for (const stmt of program.body) {
    if ((stmt.type === 'FunctionDeclaration' || stmt.type === 'ClassDeclaration') && stmt.id) names.add(stmt.id.name);
    if (stmt.type === 'VariableDeclaration') {
      for (const d of stmt.declarations) if (d.id.type === 'Identifier') names.add(d.id.name);
    }
    if (stmt.type === 'ImportDeclaration') for (const s of stmt.specifiers) names.add(s.local.name);
  }
  return names;
}

// wasm-bindgen's glue with the `gitsense_split` imports (split.js
// splitImports) added to the object `__wbg_get_imports` returns, and given
// the exports through the module-scope `wasm` once the instance exists.
function glue(js, where) {
  const program = parse(js, where);
  const scope = moduleScope(program);
  const getImports = program.body.find((s) => s.type === 'FunctionDeclaration' && s.id?.name === '__wbg_get_imports');
  if (!getImports) fail(`${where}: wasm-bindgen's import object builder, function __wbg_get_imports, not found`);
  if (!scope.has('wasm')) fail(`${where}: wasm-bindgen's module-scope variable \`wasm\` (the instance's exports) not found`);
  let assigned = false;
  walk(program, (n) => {
    if (
      n.type === 'AssignmentExpression' &&
      n.left.type === 'Identifier' &&
      n.left.name === 'wasm' &&
      n.right.type === 'MemberExpression' &&
      n.right.property.name === 'exports'
    ) {
      assigned = true;
    }
  });
  if (!assigned) fail(`${where}: no \`wasm = <instance>.exports\` assignment found (wasm-bindgen's init)`);
  if (scope.has('splitImports')) fail(`${where}: already declares splitImports (glued twice?)`);
  // The function's own return statements, not those of functions nested in
  // it (the import object's members are functions).
  const returns = [];
  walk(getImports.body, (n) => {
    if (n !== getImports.body && /Function/.test(n.type)) return false;
    if (n.type === 'ReturnStatement') returns.push(n);
  });
  if (returns.length === 0 || returns.some((r) => !r.argument)) {
    fail(`${where}: __wbg_get_imports does not end in \`return <import object>\``);
  }
  let out = js;
  for (const r of returns.sort((a, b) => b.start - a.start)) {
    const arg = js.slice(r.argument.start, r.argument.end);
    out = `${out.slice(0, r.argument.start)}Object.assign(${arg}, { gitsense_split: splitImports(() => wasm) })${out.slice(r.argument.end)}`;
  }
  out = `import { splitImports } from './split.js';\n${out}`;
  parse(out, `${where} (glued)`);
  return out;
}

const [mode, pkg, secondary] = process.argv.slice(2);
if (mode === 'glue' && pkg) {
  const file = path.join(pkg, 'gitsense_search.js');
  fs.writeFileSync(file, glue(fs.readFileSync(file, 'utf8'), file));
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
