// sql.js-httpvfs (npm `sql.js-httpvfs`): a plain SQLite FTS5 database of
// the same pages' text (`bench-native fts5`: path, title, headings, body;
// 1 KiB pages, optimized and vacuumed as its README recommends), read by
// the page with HTTP Range requests and queried with
// `MATCH ... ORDER BY rank` (each word of the query quoted, all required).

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, run } from '../lib/util.mjs';

export const name = 'sqljs';
export const label = 'sql.js-httpvfs';

const PAGE_SIZE = 1024;

export function prepare({ site, pagesFile, nativeTool }) {
  const dir = path.join(site, 'sqljs');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const tmp = path.join(dir, 'pages.sqlite');
  const t0 = performance.now();
  run(nativeTool, ['fts5', pagesFile, '--out', tmp, '--page-size', String(PAGE_SIZE)]);
  const buildMs = performance.now() - t0;
  const hash = crypto.createHash('sha256').update(fs.readFileSync(tmp)).digest('hex').slice(0, 16);
  const file = `index-${hash}.sqlite`;
  fs.renameSync(tmp, path.join(dir, file));
  const dist = path.join(ROOT, 'node_modules/sql.js-httpvfs/dist');
  const code = ['index.js', 'sqlite.worker.js', 'sql-wasm.wasm'].map((f) => {
    fs.copyFileSync(path.join(dist, f), path.join(dir, f));
    return path.join(dir, f);
  });
  const version = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules/sql.js-httpvfs/package.json'), 'utf8')).version;
  return {
    name,
    label,
    version,
    buildMs,
    bundleFiles: code,
    indexFiles: [path.join(dir, file)],
    block: [`/sqljs/${file}`],
    config: { worker: '/sqljs/sqlite.worker.js', wasm: '/sqljs/sql-wasm.wasm', url: `/sqljs/${file}`, pageSize: PAGE_SIZE },
    head: '<script src="/sqljs/index.js"></script>',
    pageScript: fs.readFileSync(new URL('./sqljs.page.js', import.meta.url), 'utf8'),
  };
}
