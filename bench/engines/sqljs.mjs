// sql.js-httpvfs (npm `sql.js-httpvfs`): a plain SQLite FTS5 database of
// the same pages' text (`bench-native fts5`: path, title, headings, body;
// 1 KiB pages, optimized and vacuumed as its README recommends), read by
// the page with HTTP Range requests and queried with
// `MATCH ... ORDER BY rank` (each word of the query quoted, all required).

import fs from 'node:fs';
import path from 'node:path';
import { ROOT, freshDir, hashedName, packageVersion, run } from '../lib/util.mjs';

export const name = 'sqljs';
export const label = 'sql.js-httpvfs';

const PAGE_SIZE = 1024;

export function prepare({ site, pagesFile, nativeTool }) {
  const dir = freshDir(path.join(site, 'sqljs'));
  const tmp = path.join(dir, 'pages.sqlite');
  const t0 = performance.now();
  run(nativeTool, ['fts5', pagesFile, '--out', tmp, '--page-size', String(PAGE_SIZE)]);
  const buildMs = performance.now() - t0;
  const file = hashedName(fs.readFileSync(tmp), 'sqlite');
  fs.renameSync(tmp, path.join(dir, file));
  const dist = path.join(ROOT, 'node_modules/sql.js-httpvfs/dist');
  const code = ['index.js', 'sqlite.worker.js', 'sql-wasm.wasm'].map((f) => {
    fs.copyFileSync(path.join(dist, f), path.join(dir, f));
    return path.join(dir, f);
  });
  return {
    name,
    label,
    version: packageVersion('sql.js-httpvfs'),
    buildMs,
    bundleFiles: code,
    indexFiles: [path.join(dir, file)],
    block: [`/sqljs/${file}`],
    config: { worker: '/sqljs/sqlite.worker.js', wasm: '/sqljs/sql-wasm.wasm', url: `/sqljs/${file}`, pageSize: PAGE_SIZE },
    head: '<script src="/sqljs/index.js"></script>',
    pageScript: fs.readFileSync(new URL('./sqljs.page.js', import.meta.url), 'utf8'),
  };
}
