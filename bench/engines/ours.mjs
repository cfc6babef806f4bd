// gitsense-search itself: the published index (manifest + gzip file + raw
// file for Range reads) and the browser module (pkg/). The page opens it
// with the default `storage: 'auto'`, so whichever way `auto` loads an
// index at the time of the run (a full download into OPFS today, HTTP
// Range reads once a lazy mode is the default) is what gets measured.

import fs from 'node:fs';
import path from 'node:path';
import { ROOT, run, walk } from '../lib/util.mjs';

export const name = 'ours';
export const label = 'gitsense-search';

/** `index` is the .gsx to publish; `dir` the name under the site root. */
export function prepare({ site, index, dir = 'ours', cli }) {
  const base = path.join(site, dir);
  fs.rmSync(base, { recursive: true, force: true });
  fs.cpSync(path.join(ROOT, 'pkg'), path.join(base, 'pkg'), { recursive: true });
  const t0 = performance.now();
  const manifest = JSON.parse(run(cli, ['publish', index, '--out-dir', path.join(base, 'data'), '--json']));
  const publishMs = performance.now() - t0;
  const version = JSON.parse(fs.readFileSync(path.join(ROOT, 'pkg/package.json'), 'utf8')).version;
  const code = walk(path.join(base, 'pkg')).filter((f) => /\.(js|wasm)$/.test(f));
  return {
    name,
    label,
    version,
    publishMs,
    bundleFiles: code,
    // The module's second part (docs/lazy-loading.md, "The module in two parts") comes
    // after the first answer.
    firstBundleFiles: code.filter((f) => !/gitsense_search_bg-[0-9a-f]{16}\.wasm$/.test(f)),
    // What a full download fetches; lazy reads take parts of the same file.
    indexFiles: [path.join(base, 'data', manifest.file)],
    block: [`/${dir}/data/`],
    config: { module: `/${dir}/pkg/index.js`, manifestUrl: `/${dir}/data/manifest.json` },
    pageScript: fs.readFileSync(new URL('./ours.page.js', import.meta.url), 'utf8'),
  };
}
