// What the browser module's bytes are: code size per crate and per
// function, for each of the two wasm parts, and the parts' compressed
// sizes (brotli 11 as a host serving precompressed files sends them,
// gzip 6 as a server compressing on the fly does).
//
//   node bench/code-size.mjs [--top 15]
//
// After `./build.sh wasm`: reads target/split/full.wasm (the module in one
// piece, with its function names: wasm-opt -g), target/split/parts.tsv
// (which part `wasm-split split --report` put each function in) and pkg/.
// Function sizes are `twiggy top`'s shallow sizes (`cargo install twiggy`).
// Prints Markdown tables (BENCHMARKS.md, "Code size").

import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { ROOT } from './lib/util.mjs';

const args = process.argv.slice(2);
const TOP = Number(args[args.indexOf('--top') + 1]) || 15;
const FULL = path.join(ROOT, 'target/split/full.wasm');
const PARTS = path.join(ROOT, 'target/split/parts.tsv');
const PKG = path.join(ROOT, 'pkg');
for (const f of [FULL, PARTS, PKG]) if (!fs.existsSync(f)) throw new Error(`${f} is missing: ./build.sh wasm`);

const partOf = new Map(fs.readFileSync(PARTS, 'utf8').trim().split('\n').map((l) => {
  const [part, name] = l.split('\t');
  return [name, part];
}));

const csv = execFileSync('twiggy', ['top', '-n', '1000000', '--format', 'csv', FULL], { encoding: 'utf8', maxBuffer: 1 << 28 });
/** twiggy's CSV rows: [name, shallow bytes]. */
function rows(text) {
  const out = [];
  for (const line of text.split('\n').slice(1)) {
    if (!line) continue;
    let name;
    let rest;
    if (line.startsWith('"')) {
      let i = 1;
      name = '';
      for (;;) {
        const q = line.indexOf('"', i);
        if (line[q + 1] === '"') {
          name += line.slice(i, q + 1);
          i = q + 2;
        } else {
          name += line.slice(i, q);
          rest = line.slice(q + 2);
          break;
        }
      }
    } else {
      const c = line.indexOf(',');
      name = line.slice(0, c);
      rest = line.slice(c + 1);
    }
    out.push([name, Number(rest.split(',')[0])]);
  }
  return out;
}

const PRIMITIVE = /^(str|u8|u16|u32|u64|u128|usize|i8|i16|i32|i64|i128|isize|f32|f64|bool|char|T|\(\))$/;

/** The crate a function's code belongs to, from its demangled name. */
function crateOf(name) {
  if (/ shim$|-> Externref| -> |^Closure\(/.test(name)) return 'wasm-bindgen shims';
  if (!name.includes('::')) return /^[A-Za-z_][A-Za-z0-9_$]*$/.test(name) ? 'C: SQLite, its VFS glue and the libc shim' : 'other';
  const drop = name.match(/^core::ptr::drop_in_place<(.*)>::h[0-9a-f]{16}$/);
  if (drop) return crateOf(drop[1]);
  let n = name.replace(/\[[0-9a-f]{16}\]/g, '');
  if (n.startsWith('<')) {
    // <Type as Trait>::method: the type's crate, or the trait's for a primitive type.
    const inner = n.slice(1).replace(/^(&|mut |dyn |\[|\(|\*const |\*mut )+/, '');
    const first = inner.split(/::|<| as |>|;|,/)[0];
    if (PRIMITIVE.test(first) || !inner.split(' as ')[0].includes('::')) {
      const trait = n.split(' as ')[1];
      return trait ? trait.split('::')[0] : first;
    }
    return first;
  }
  return n.split('::')[0];
}

const parts = { primary: new Map(), secondary: new Map() };
const partTotals = { primary: 0, secondary: 0 };
const top = { primary: [], secondary: [] };
let structure = 0;
for (const [name, bytes] of rows(csv)) {
  if (/^"?function names"? subsection|^"name" section|^custom section/.test(name) || name.endsWith(' subsection')) continue;
  // Data segments (named by the linker's sections, one per object): per part below.
  if (/^(data segment|data\[|\.rodata|\.data|\.tdata)/.test(name)) continue;
  const part = partOf.get(name);
  if (!part) {
    structure += bytes;
    continue;
  }
  const crate = crateOf(name);
  parts[part].set(crate, (parts[part].get(crate) || 0) + bytes);
  partTotals[part] += bytes;
  top[part].push([name, bytes]);
}

const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
const files = fs.readdirSync(PKG).filter((f) => f.endsWith('.wasm'));
const primaryFile = files.find((f) => f === 'gitsense_search_bg.wasm');
const secondaryFile = files.find((f) => f !== primaryFile);
const sizes = (f) => {
  const b = fs.readFileSync(path.join(PKG, f));
  return {
    raw: b.length,
    gzip: zlib.gzipSync(b, { level: 6 }).length,
    brotli: zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_LGWIN]: 24 } }).length,
  };
};
const p = sizes(primaryFile);
const s = sizes(secondaryFile);

/** The bytes a module's data segments hold (its data section, read by hand: no JS API tells). */
function dataBytes(file) {
  const b = fs.readFileSync(path.join(PKG, file));
  let at = 8;
  const leb = () => {
    let v = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = b[at++];
      v += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return v;
    }
  };
  while (at < b.length) {
    const id = b[at++];
    const size = leb();
    const end = at + size;
    if (id === 11) {
      let total = 0;
      for (let n = leb(); n > 0; n--) {
        const flags = leb();
        if (flags === 2) leb(); // memory index
        if (flags !== 1) while (b[at++] !== 0x0b); // the offset expression, up to its `end`
        const len = leb();
        total += len;
        at += len;
      }
      return total;
    }
    at = end;
  }
  return 0;
}
const data = { primary: dataBytes(primaryFile), secondary: dataBytes(secondaryFile) };

const out = [];
out.push('| part | file | raw | gzip 6 | brotli 11 | function bodies | data |');
out.push('|---|---|---|---|---|---|---|');
out.push(`| first (a visit's first answer) | \`${primaryFile}\` | ${kib(p.raw)} | ${kib(p.gzip)} | ${kib(p.brotli)} | ${kib(partTotals.primary)} | ${kib(data.primary)} |`);
out.push(`| second (after the first answer) | \`${secondaryFile.replace(/-[0-9a-f]{16}/, '-HASH')}\` | ${kib(s.raw)} | ${kib(s.gzip)} | ${kib(s.brotli)} | ${kib(partTotals.secondary)} | ${kib(data.secondary)} |`);
out.push('');
out.push('| crate | first part | second part |');
out.push('|---|---|---|');
const crates = [...new Set([...parts.primary.keys(), ...parts.secondary.keys()])]
  .map((c) => [c, parts.primary.get(c) || 0, parts.secondary.get(c) || 0])
  .sort((a, b) => b[1] + b[2] - (a[1] + a[2]));
for (const [c, a, b] of crates.filter(([, a, b]) => a + b >= 4096)) out.push(`| ${c} | ${kib(a)} | ${kib(b)} |`);
const small = crates.filter(([, a, b]) => a + b < 4096);
out.push(`| ${small.length} more, under 4 KiB each | ${kib(small.reduce((n, [, a]) => n + a, 0))} | ${kib(small.reduce((n, [, , b]) => n + b, 0))} |`);
out.push(`| module structure (types, imports, exports, table, stubs) | ${kib(structure)} | |`);
for (const part of ['primary', 'secondary']) {
  out.push('');
  out.push(`The ${part === 'primary' ? 'first' : 'second'} part's ${TOP} largest functions:`);
  out.push('');
  out.push('| function | bytes |');
  out.push('|---|---|');
  for (const [name, bytes] of top[part].sort((a, b) => b[1] - a[1]).slice(0, TOP)) {
    out.push(`| \`${name.replace(/::h[0-9a-f]{16}$/, '').replace(/\[[0-9a-f]{16}\]/g, '').replace(/\|/g, '\\|')}\` | ${bytes} |`);
  }
}
console.log(out.join('\n'));
