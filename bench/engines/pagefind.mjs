// Pagefind (npm `pagefind`): its indexer run on the same pages' HTML
// through its Node API, each page's main content marked with
// `data-pagefind-body` (as a Sphinx theme integration would: without it
// Pagefind indexes sidebars and navigation bars too); otherwise defaults.
// In the page: its JS API, `pagefind.search(q)` then the first result's
// `data()` (its URL, title and excerpt): Pagefind's first result.

import fs from 'node:fs';
import path from 'node:path';
import { freshDir, packageVersion, walk } from '../lib/util.mjs';

export const name = 'pagefind';
export const label = 'Pagefind';

/** Pagefind's code, as opposed to its index: the JS API, its worker and the wasm. */
const CODE = /(^|\/)(pagefind\.js|pagefind-worker\.js|wasm\.[a-z-]+\.pagefind)$/;

export async function prepare({ site, docsDir, pages }) {
  const pagefind = await import('pagefind');
  const out = freshDir(path.join(site, 'pagefind'));
  const t0 = performance.now();
  const { index, errors } = await pagefind.createIndex({ keepIndexUrl: true });
  if (!index) throw new Error(`pagefind: ${errors.join('; ')}`);
  for (const p of pages) {
    const html = fs.readFileSync(path.join(docsDir, p.path), 'utf8');
    const marked = html.replace(/role="main"/, 'role="main" data-pagefind-body');
    const r = await index.addHTMLFile({ sourcePath: p.path, content: marked });
    if (r.errors.length) throw new Error(`pagefind: ${p.path}: ${r.errors.join('; ')}`);
  }
  const w = await index.writeFiles({ outputPath: out });
  if (w.errors.length) throw new Error(`pagefind: ${w.errors.join('; ')}`);
  const buildMs = performance.now() - t0;
  await pagefind.close();
  const files = walk(out).filter((f) => !/-ui\.|highlight|playground/.test(path.basename(f)));
  return {
    name,
    label,
    version: packageVersion('pagefind'),
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
