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
// objects, taken once the imported module's body has run. The modules
// are read with a parser (acorn), not by their text, so any layout of
// these statements is accepted: imports (default, named, aliased,
// namespace, side-effect), exported declarations (function, async
// function, generator, class, const/let/var with patterns), `export {
// a, b as c }`, `export default`, and re-exports (`export { a } from`,
// `export * from`, `export * as n from`). What a single file cannot keep
// stops the build, naming the file and the construct: an import of a
// module outside PKG_DIR or by bare name, a dynamic `import()`, an import
// cycle, exports from worker.js itself; so does a bundle that does not
// parse or still holds an import or export.
import fs from 'node:fs';
import path from 'node:path';
import * as acorn from 'acorn';

const pkg = path.resolve(process.argv[2] || 'pkg');
const modules = new Map(); // absolute path → { id, code, exported }
const order = []; // dependencies before the modules that import them

function fail(msg) {
  console.error(`bundle-worker: ${msg}`);
  process.exit(1);
}

function parse(js, where) {
  try {
    return acorn.parse(js, { ecmaVersion: 'latest', sourceType: 'module', locations: true });
  } catch (e) {
    fail(`${where} does not parse: ${e.message}`);
  }
}

// Every node under `node`, depth first.
function walk(node, enter) {
  enter(node);
  for (const value of Object.values(node)) {
    for (const child of Array.isArray(value) ? value : [value]) {
      if (child && typeof child.type === 'string') walk(child, enter);
    }
  }
}

// Where a construct stands, for messages: "file:line".
function at(file, node) {
  return `${path.relative(pkg, file) || file}:${node.loc.start.line}`;
}

// An identifier or a string literal (`export { a as "b-c" }`) as a name.
function nameOf(node) {
  return node.type === 'Identifier' ? node.name : String(node.value);
}

// The names a declaration pattern binds (`{ a, b: [c, ...d] } = …`).
function boundNames(pattern, out = []) {
  switch (pattern.type) {
    case 'Identifier':
      out.push(pattern.name);
      break;
    case 'ObjectPattern':
      for (const p of pattern.properties) boundNames(p.type === 'RestElement' ? p.argument : p.value, out);
      break;
    case 'ArrayPattern':
      for (const e of pattern.elements) if (e) boundNames(e, out);
      break;
    case 'RestElement':
      boundNames(pattern.argument, out);
      break;
    case 'AssignmentPattern':
      boundNames(pattern.left, out);
      break;
  }
  return out;
}

// The module a relative specifier names, loaded (and bundled) first.
function dependency(file, node) {
  const spec = node.source.value;
  if (!spec.startsWith('.')) fail(`${at(file, node)}: bare import '${spec}' (only modules inside ${pkg} can be bundled)`);
  return load(path.resolve(path.dirname(file), spec), `${at(file, node)}`);
}

// Modules by source text: a file imported under two paths with the same
// text (lazy.js is both a wasm-bindgen snippet and pkg/lazy.js, which the
// worker imports itself) is one module.
const bySource = new Map();

function load(file, from) {
  if (modules.has(file)) {
    const known = modules.get(file);
    if (known.code === null) fail(`${from}: import cycle through ${path.relative(pkg, file)}`);
    return known;
  }
  if (!file.startsWith(pkg + path.sep)) fail(`${from}: imports ${file}, which is outside ${pkg}`);
  if (!fs.existsSync(file)) fail(`${from}: imports ${file}, which does not exist`);
  const code = fs.readFileSync(file, 'utf8');
  const program = parse(code, path.relative(pkg, file));
  // Same text, same imports only when they resolve alike: modules without
  // relative imports.
  const importsNothing = !program.body.some((s) => s.source);
  if (importsNothing && bySource.has(code)) {
    modules.set(file, bySource.get(code));
    return bySource.get(code);
  }
  const entry = { id: `__module${modules.size}`, code: null, exported: [] };
  modules.set(file, entry);
  if (importsNothing) bySource.set(code, entry);
  entry.code = `// ${path.relative(pkg, file)}\nconst ${entry.id} = (() => {\n${rewrite(code, program, file, entry)}\nreturn { ${exportObject(entry.exported)} };\n})();\n`;
  order.push(file);
  return entry;
}

// The module object's properties: `name` or `"as": expression`.
function exportObject(exported) {
  return exported.map(([as, value]) => (as === value ? as : `${JSON.stringify(as)}: ${value}`)).join(', ');
}

// A module's text with its import and export statements turned into
// plain JavaScript: imports into destructurings of the imported modules'
// objects, export keywords dropped. Its exports go to `entry.exported` as
// [exported name, expression]; `entry` null is worker.js, which may not
// export.
function rewrite(code, program, file, entry) {
  walk(program, (n) => {
    if (n.type === 'ImportExpression') fail(`${at(file, n)}: dynamic import() (the bundle has no modules to load)`);
  });
  const edits = []; // [start, end, text], in source order
  const exporting = (node) => {
    if (!entry) fail(`${at(file, node)}: worker.js exports (it is the entry; nothing imports it)`);
    return entry.exported;
  };
  for (const stmt of program.body) {
    switch (stmt.type) {
      case 'ImportDeclaration':
        edits.push([stmt.start, stmt.end, bindings(stmt.specifiers, dependency(file, stmt).id)]);
        break;
      case 'ExportNamedDeclaration': {
        const exported = exporting(stmt);
        if (stmt.declaration) {
          const d = stmt.declaration;
          const names = d.type === 'VariableDeclaration' ? d.declarations.flatMap((v) => boundNames(v.id)) : [d.id.name];
          for (const name of names) exported.push([name, name]);
          edits.push([stmt.start, d.start, '']);
        } else if (stmt.source) {
          const dep = dependency(file, stmt);
          for (const s of stmt.specifiers) exported.push([nameOf(s.exported), `${dep.id}[${JSON.stringify(nameOf(s.local))}]`]);
          edits.push([stmt.start, stmt.end, '']);
        } else {
          for (const s of stmt.specifiers) exported.push([nameOf(s.exported), nameOf(s.local)]);
          edits.push([stmt.start, stmt.end, '']);
        }
        break;
      }
      case 'ExportDefaultDeclaration': {
        const exported = exporting(stmt);
        const d = stmt.declaration;
        if ((d.type === 'FunctionDeclaration' || d.type === 'ClassDeclaration') && d.id) {
          exported.push(['default', d.id.name]);
          edits.push([stmt.start, d.start, '']);
        } else {
          // An anonymous function or class, or an expression: held in a
          // name of the module's own scope.
          const local = `${entry.id}_default`;
          exported.push(['default', local]);
          const isDeclaration = d.type === 'FunctionDeclaration' || d.type === 'ClassDeclaration';
          edits.push([stmt.start, d.start, `const ${local} = `]);
          if (isDeclaration) edits.push([d.end, d.end, ';']);
        }
        break;
      }
      case 'ExportAllDeclaration': {
        const exported = exporting(stmt);
        const dep = dependency(file, stmt);
        if (stmt.exported) {
          exported.push([nameOf(stmt.exported), dep.id]);
        } else {
          // `export *` passes on every name but `default`.
          for (const [as] of dep.exported) if (as !== 'default') exported.push([as, `${dep.id}[${JSON.stringify(as)}]`]);
        }
        edits.push([stmt.start, stmt.end, '']);
        break;
      }
    }
  }
  let out = '';
  let pos = 0;
  for (const [start, end, text] of edits) {
    out += code.slice(pos, start) + text;
    pos = end;
  }
  return out + code.slice(pos);
}

// An import's specifiers as a destructuring of the module object `id`
// (`import * as n` binds the object itself); a side-effect import binds
// nothing (the module's body has run before this one's).
function bindings(specifiers, id) {
  const statements = [];
  const parts = [];
  for (const s of specifiers) {
    if (s.type === 'ImportNamespaceSpecifier') statements.push(`const ${s.local.name} = ${id};`);
    else if (s.type === 'ImportDefaultSpecifier') parts.push(`default: ${s.local.name}`);
    else {
      const imported = nameOf(s.imported);
      const key = /^[A-Za-z_$][\w$]*$/.test(imported) ? imported : JSON.stringify(imported);
      parts.push(imported === s.local.name ? imported : `${key}: ${s.local.name}`);
    }
  }
  if (parts.length) statements.unshift(`const { ${parts.join(', ')} } = ${id};`);
  return statements.join(' ');
}

const entryFile = path.join(pkg, 'worker.js');
const source = fs.readFileSync(entryFile, 'utf8');
// The entry stays a module scope of its own.
const top = rewrite(source, parse(source, 'worker.js'), entryFile, null);
const bundle =
  '// The worker and the modules it imports, folded into one file by\n' +
  '// xtask/js/bundle-worker.mjs (./build.sh). Sources: worker.js, ' +
  order.map((f) => path.relative(pkg, f)).join(', ') +
  '.\n' +
  order.map((f) => modules.get(f).code).join('\n') +
  '\n' +
  top;
const left = parse(bundle, 'the bundle').body.find((s) => /^(Import|Export)/.test(s.type));
if (left) fail(`the bundle still holds an ${left.type} at line ${left.loc.start.line}`);
fs.writeFileSync(entryFile, bundle);
console.log(`bundle-worker: worker.js now holds ${order.length + 1} modules (${bundle.length} bytes)`);
