// MiniSearch (npm `minisearch`): a JSON index built here, in node, from
// the same pages' text (title, headings, body; the page path stored),
// fetched by the page and loaded with `MiniSearch.loadJSON`. Search
// options: the title boost and prefix search of MiniSearch's README.

import fs from 'node:fs';
import path from 'node:path';
import { ROOT, freshDir, hashedName, packageVersion } from '../lib/util.mjs';

export const name = 'minisearch';
export const label = 'MiniSearch';

export const OPTIONS = {
  idField: 'path',
  fields: ['title', 'headings', 'text'],
  storeFields: ['title'],
  searchOptions: { boost: { title: 2, headings: 1.5 }, prefix: true },
};

export async function prepare({ site, pages }) {
  const { default: MiniSearch } = await import('minisearch');
  const dir = freshDir(path.join(site, 'minisearch'));
  const t0 = performance.now();
  const ms = new MiniSearch(OPTIONS);
  ms.addAll(pages);
  const json = JSON.stringify(ms);
  const buildMs = performance.now() - t0;
  const file = hashedName(json, 'json');
  fs.writeFileSync(path.join(dir, file), json);
  const code = path.join(dir, 'minisearch.js');
  fs.copyFileSync(path.join(ROOT, 'node_modules/minisearch/dist/es/index.js'), code);
  return {
    name,
    label,
    version: packageVersion('minisearch'),
    buildMs,
    bundleFiles: [code],
    indexFiles: [path.join(dir, file)],
    block: [`/minisearch/${file}`],
    config: { module: '/minisearch/minisearch.js', index: `/minisearch/${file}`, options: OPTIONS },
    pageScript: fs.readFileSync(new URL('./minisearch.page.js', import.meta.url), 'utf8'),
  };
}
