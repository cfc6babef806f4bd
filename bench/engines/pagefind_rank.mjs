// Pagefind's ranking of a query set, for bench/sites.py.
//
//   node bench/engines/pagefind_rank.mjs SITE_DIR QUERIES.json OUT.json
//
// SITE_DIR holds the pages and the bundle Pagefind's binary wrote to
// SITE_DIR/pagefind/. QUERIES.json is a JSON array of query strings. The
// site is served from 127.0.0.1 (www/serve.mjs) to the Debian Chromium,
// whose page imports Pagefind's own JS API and asks it every query in
// turn: `pagefind.search(q)`, then `data()` of the first 10 results. OUT.json
// gets one array of page paths (relative to the site, no anchor) per query,
// in Pagefind's order.

import fs from 'node:fs';
import { chromium } from 'playwright-core';
import { startServer } from '../../www/serve.mjs';
import { CHROMIUM, CHROMIUM_ARGS } from '../../tests/browser/chromium.mjs';

const [site, queriesFile, outFile] = process.argv.slice(2);
if (!outFile) {
  console.error('usage: node bench/engines/pagefind_rank.mjs SITE_DIR QUERIES.json OUT.json');
  process.exit(2);
}
const queries = JSON.parse(fs.readFileSync(queriesFile, 'utf8'));
const server = await startServer({ root: site, port: 0, quiet: true });
const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
try {
  const page = await browser.newPage();
  // Any page of the origin will do: the API is imported by URL.
  await page.goto(`${server.url}pagefind/pagefind.js`);
  const ranked = await page.evaluate(async (qs) => {
    const pagefind = await import('/pagefind/pagefind.js');
    await pagefind.options({ baseUrl: '/' });
    await pagefind.init();
    const pathOf = (url) => decodeURI(url.replace(/^\//, '').replace(/[#?].*$/, ''));
    const out = [];
    for (const q of qs) {
      const s = await pagefind.search(q);
      const data = await Promise.all(s.results.slice(0, 10).map((r) => r.data()));
      out.push(data.map((d) => pathOf(d.url)));
    }
    return out;
  }, queries);
  fs.writeFileSync(outFile, JSON.stringify(ranked) + '\n');
} finally {
  await browser.close();
  await server.close();
}
