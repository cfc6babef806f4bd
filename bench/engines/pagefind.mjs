// Pagefind (its binary from npm `@pagefind/linux-x64`): its indexer run on
// the same pages' HTML, each page's main content marked with
// `data-pagefind-body` (as a Sphinx theme integration would: without it
// Pagefind indexes sidebars and navigation bars too); otherwise defaults.
// In the page: its JS API, `pagefind.search(q)` then the first result's
// `data()` (its URL, title and excerpt): Pagefind's first result.

import fs from 'node:fs';
import path from 'node:path';
import { ROOT, freshDir, packageVersion, run, walk } from '../lib/util.mjs';

export const name = 'pagefind';
export const label = 'Pagefind';

/** Pagefind's code, as opposed to its index: the JS API, its worker and the wasm. */
const CODE = /(^|\/)(pagefind\.js|pagefind-worker\.js|wasm\.[a-z-]+\.pagefind)$/;

/** The Pagefind binary of this platform (npm `@pagefind/<os>-<cpu>`, an optional dependency). */
function binary() {
  const pkg = `@pagefind/${process.platform}-${process.arch}`;
  const bin = path.join(ROOT, 'node_modules', pkg, 'bin/pagefind_extended');
  if (!fs.existsSync(bin)) throw new Error(`${pkg} is not installed (npm ci installs it on Linux x64 and arm64)`);
  return { bin, version: packageVersion(pkg) };
}

export function prepare({ site, docsDir, pages }) {
  const { bin, version } = binary();
  // The same pages, marked, in a site of their own for Pagefind to walk.
  const input = freshDir(path.join(path.dirname(site), 'pagefind-input'));
  for (const p of pages) {
    const html = fs.readFileSync(path.join(docsDir, p.path), 'utf8');
    fs.mkdirSync(path.dirname(path.join(input, p.path)), { recursive: true });
    fs.writeFileSync(path.join(input, p.path), html.replace(/role="main"/, 'role="main" data-pagefind-body'));
  }
  const out = path.join(site, 'pagefind');
  fs.rmSync(out, { recursive: true, force: true });
  const t0 = performance.now();
  run(bin, ['--site', input, '--output-path', out, '--keep-index-url', '--quiet']);
  const buildMs = performance.now() - t0;
  const files = walk(out).filter((f) => !/-ui\.|highlight|playground/.test(path.basename(f)));
  return {
    name,
    label,
    version,
    buildMs,
    bundleFiles: files.filter((f) => CODE.test(f)),
    indexFiles: files.filter((f) => !CODE.test(f)),
    // Offline, everything but its code is unreachable.
    block: [/^\/pagefind\/(?!pagefind\.js$|pagefind-worker\.js$|wasm\.)/],
    // Its index and fragment files are content-hashed: cacheable for good.
    immutable: [/^\/pagefind\/(index|fragment)\//, /^\/pagefind\/pagefind\.[^/]+\.pf_meta$/],
    config: { module: '/pagefind/pagefind.js' },
    pageScript: fs.readFileSync(new URL('./pagefind.page.js', import.meta.url), 'utf8'),
  };
}
