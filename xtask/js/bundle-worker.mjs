// Build tool (run by ./build.sh, not shipped): folds the worker's module
// graph (worker.js → gitsense_search.js → the wasm-bindgen snippets) into
// one file, so a cold visitor's worker starts after one request instead
// of three dependent round trips.
//
//   node xtask/js/bundle-worker.mjs PKG_DIR
//
// Rewrites PKG_DIR/worker.js in place. Each module becomes a function
// scope that returns its exports (so the modules' own names cannot
// clash); their import declarations become destructurings of those
// objects. Only the forms these files use are accepted: `import { a, b as
// c } from '...'`, `import * as n from '...'`, `import d, { ... } from
// '...'`, `export function|async function|const|let|class name` and
// `export { a, b as c }`; anything else (a side-effect import, `export
// default`, an import of a module outside PKG_DIR) stops the build, as
// does a bundle that still holds an import or does not parse.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

const pkg = path.resolve(process.argv[2] || 'pkg');
const modules = new Map(); // absolute path → { id, code }
const order = []; // dependencies before the modules that import them

function fail(msg) {
  console.error(`bundle-worker: ${msg}`);
  process.exit(1);
}

const IMPORT = /^import\s+([\s\S]+?)\s+from\s+(['"])([^'"]+)\2;?[ \t]*$/gm;

// Modules by source text: a file imported under two paths with the same
// text (lazy.js is both a wasm-bindgen snippet and pkg/lazy.js, which the
// worker imports itself) is one module.
const bySource = new Map();

function load(file) {
  if (modules.has(file)) return modules.get(file);
  if (!file.startsWith(pkg + path.sep)) fail(`${file} is outside ${pkg}`);
  let code = fs.readFileSync(file, 'utf8');
  // Same text, same imports only when they resolve alike: modules without
  // relative imports.
  if (bySource.has(code) && !new RegExp(IMPORT.source, 'm').test(code)) {
    modules.set(file, bySource.get(code));
    return bySource.get(code);
  }
  const entry = { id: `__module${modules.size}`, code: null };
  modules.set(file, entry);
  bySource.set(code, entry);
  if (/^import\s*['"(]/m.test(code)) fail(`${file}: side-effect or dynamic import at the top level`);
  code = code.replace(IMPORT, (_, clause, _q, spec) => {
    if (!spec.startsWith('.')) fail(`${file}: bare import '${spec}'`);
    const dep = load(path.resolve(path.dirname(file), spec));
    return bindings(clause, dep.id, file);
  });
  const exported = [];
  code = code.replace(/^export\s+(async\s+function\*?|function\*?|const|let|class)\s+([A-Za-z_$][\w$]*)/gm, (_, kind, name) => {
    exported.push([name, name]);
    return `${kind} ${name}`;
  });
  code = code.replace(/^export\s*\{([^}]*)\};?[ \t]*$/gm, (_, list) => {
    for (const item of list.split(',').map((s) => s.trim()).filter(Boolean)) {
      const m = item.match(/^([A-Za-z_$][\w$]*)(?:\s+as\s+([A-Za-z_$][\w$]*))?$/);
      if (!m) fail(`${file}: export clause '${item}'`);
      exported.push([m[2] || m[1], m[1]]);
    }
    return '';
  });
  if (/^\s*(export|import)\s/m.test(code)) fail(`${file}: an import or export form this tool does not handle`);
  const object = exported.map(([as, name]) => (as === name ? name : `${JSON.stringify(as)}: ${name}`)).join(', ');
  entry.code = `// ${path.relative(pkg, file)}\nconst ${entry.id} = (() => {\n${code}\nreturn { ${object} };\n})();\n`;
  order.push(file);
  return entry;
}

// An import clause as a destructuring of the module object `id`.
function bindings(clause, id, file) {
  const star = clause.match(/^\*\s+as\s+([A-Za-z_$][\w$]*)$/);
  if (star) return `const ${star[1]} = ${id};`;
  const m = clause.match(/^(?:([A-Za-z_$][\w$]*)\s*,?\s*)?(?:\{([^}]*)\})?$/);
  if (!m || (!m[1] && m[2] === undefined)) fail(`${file}: import clause '${clause}'`);
  const parts = [];
  if (m[1]) parts.push(`default: ${m[1]}`);
  for (const item of (m[2] || '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const n = item.match(/^([A-Za-z_$][\w$]*)(?:\s+as\s+([A-Za-z_$][\w$]*))?$/);
    if (!n) fail(`${file}: import '${item}'`);
    parts.push(n[2] ? `${n[1]}: ${n[2]}` : n[1]);
  }
  return `const { ${parts.join(', ')} } = ${id};`;
}

const entryFile = path.join(pkg, 'worker.js');
let top = fs.readFileSync(entryFile, 'utf8');
// The entry stays a module scope of its own (it exports nothing).
top = top.replace(IMPORT, (_, clause, _q, spec) => bindings(clause, load(path.resolve(pkg, spec)).id, entryFile));
if (/^\s*(export|import)\s/m.test(top)) fail('worker.js: an import or export form this tool does not handle');
const bundle =
  '// The worker and the modules it imports, folded into one file by\n' +
  '// xtask/js/bundle-worker.mjs (./build.sh). Sources: worker.js, ' +
  order.map((f) => path.relative(pkg, f)).join(', ') +
  '.\n' +
  order.map((f) => modules.get(f).code).join('\n') +
  '\n' +
  top;
const tmp = path.join(pkg, 'worker.bundle.tmp.mjs');
fs.writeFileSync(tmp, bundle);
try {
  execFileSync(process.execPath, ['--check', tmp], { stdio: 'inherit' });
} catch {
  fail('the bundle does not parse');
} finally {
  fs.rmSync(tmp, { force: true });
}
fs.writeFileSync(entryFile, bundle);
console.log(`bundle-worker: worker.js now holds ${order.length + 1} modules (${bundle.length} bytes)`);
