// The fresh-clone check's last step: the demo served by `./build.sh serve`
// in a fresh clone, opened in headless Chromium, answers one search.
//   node .ci/fresh-clone-search.mjs URL
import { chromium } from 'playwright-core';

const url = process.argv[2];
if (!url) {
  console.error('usage: node .ci/fresh-clone-search.mjs URL');
  process.exit(2);
}
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);
  await page.waitForFunction(() => document.body.dataset.state, null, { timeout: 60_000 });
  const state = await page.evaluate(() => document.body.dataset.state);
  if (state !== 'ready') throw new Error(`the demo page did not open its index: state ${state}`);
  await page.fill('#q', 'payment');
  await page.waitForSelector('#results .result', { timeout: 30_000 });
  const summary = (await page.textContent('#summary')).trim();
  if (!/\d+ results?/.test(summary)) throw new Error(`no result count in the summary: ${summary}`);
  if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  console.log(`fresh clone: the demo answered "payment": ${summary}`);
} finally {
  await browser.close();
}
