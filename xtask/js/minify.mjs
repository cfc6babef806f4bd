// Build tool (run by ./build.sh, not shipped): minifies the browser
// module's JavaScript in place, after the worker is bundled and the second
// module named (terser: local names shortened, comments and whitespace
// dropped; exports, property names and string literals kept). A cold
// visit fetches index.js, lazy.js and worker.js before its first answer,
// and as written (comments and all) they are about twice the bytes.
//
//   node xtask/js/minify.mjs FILE.js...
import fs from 'node:fs';
import zlib from 'node:zlib';
import { minify } from 'terser';

const files = process.argv.slice(2);
if (!files.length) {
  console.error('usage: node xtask/js/minify.mjs FILE.js...');
  process.exit(2);
}
const br = (s) => zlib.brotliCompressSync(Buffer.from(s), { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
for (const file of files) {
  const source = fs.readFileSync(file, 'utf8');
  let out;
  try {
    // ES modules (index.js, lazy.js, the bundled worker.js), for the
    // browsers the module supports (module workers, OPFS: ES2020 and up).
    out = await minify(source, { module: true, ecma: 2020, compress: { passes: 2 }, mangle: true, format: { comments: false } });
  } catch (e) {
    console.error(`minify: ${file}: ${e.message}${e.line ? ` (line ${e.line})` : ''}`);
    process.exit(1);
  }
  fs.writeFileSync(file, out.code);
  console.log(`${file}: ${br(source)} -> ${br(out.code)} bytes brotli`);
}
