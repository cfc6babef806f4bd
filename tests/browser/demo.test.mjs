// The demo page (www/) in headless Chromium: first visit, offline reload,
// keyboard, paging, help, errors, another published index, and hostile
// index content rendered as text. Screenshots go to target/screenshots/.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, publish, cli, demoReady, closePage, screenshotPath, DEMO_INDEX, HOSTILE_INDEX } from './harness.mjs';

let site;
before(async () => {
  site = await setup();
  publish(site, HOSTILE_INDEX, 'hostile');
});
after(async () => {
  await site.close();
});

/** "N results", N as the CLI counts them on the demo's default index. */
const paymentResults = new RegExp(`\\b${JSON.parse(cli('search', DEMO_INDEX, 'payment', '--format', 'json')).pagination.totalResults} results`);

const resultTypes = (page) => page.$$eval('#results .result', (els) => els.map((e) => e.dataset.sourceType));

test('first visit reads the index on demand, answers, and saves it for offline use', async () => {
  site.server.reset();
  const page = await site.page(null);
  await page.goto(site.url);
  assert.equal(await demoReady(page), 'ready');
  assert.match(await page.textContent('#storage-badge'), /^Reading on demand/);
  const paths = () => Object.keys(site.server.stats().byPath);
  assert.ok(paths().some((p) => p.endsWith('.hot.gz')), paths().join());
  const whole = site.server.log().filter((r) => /\.(pages|gsx\.gz)$/.test(r.path) && !r.range);
  assert.deepEqual(whole, [], 'no full download');
  // The page preloads the module, its API and lazy.js; the engine uses those
  // requests instead of making its own.
  const requests = site.server.stats().byPath;
  assert.equal(requests['/pkg/gitsense_search_bg.wasm'], 1, JSON.stringify(requests));
  assert.equal(requests['/pkg/index.js'], 1, JSON.stringify(requests));
  assert.equal(requests['/pkg/lazy.js'], 1, JSON.stringify(requests));
  assert.ok(await page.isHidden('#download'));
  assert.ok(await page.isVisible('#welcome'));

  await page.fill('#q', 'payment');
  await page.waitForSelector('#results .result');
  const types = await resultTypes(page);
  assert.ok(types.includes('chat') && types.includes('message'), types.join());
  assert.ok(types.every((t) => ['chat', 'message', 'code-block'].includes(t)));
  assert.match(await page.textContent('#summary'), paymentResults);
  assert.match(await page.textContent('#summary'), /\d+(\.\d)? ms/);
  // Breadcrumbs from chat_path and highlighted snippets.
  assert.ok((await page.$$('#results .crumbs li')).length > 3);
  assert.ok((await page.$$('#results mark')).length > 0);
  assert.equal(new URL(page.url()).searchParams.get('q'), 'payment');
  await page.screenshot({ path: screenshotPath('demo-results.png') });
  await page.click('#help-toggle');
  await page.waitForSelector('#help-filters dt');
  assert.match(await page.textContent('#help'), /lang:python,rust/);
  await page.screenshot({ path: screenshotPath('demo-help.png') });
  // The background copy finishes and the badge says so.
  await page.waitForFunction(() => document.querySelector('#storage-badge').textContent === 'Stored in OPFS', null, { timeout: 60_000 });
  assert.deepEqual(page.errors, []);
  await closePage(page);
});

test('first visit on a server without range requests shows download progress', async () => {
  const page = await site.page(null);
  await page.goto(site.url);
  await demoReady(page);
  await page.evaluate(async () => {
    await window.gitsense.close();
    const { GitSenseSearch } = await import('./pkg/index.js');
    await GitSenseSearch.clear();
  });
  await page.goto('about:blank');
  // Slow the download down enough to see the progress bar.
  Object.assign(site.server.options, { bandwidth: 1_500_000, range: false });
  site.server.reset();
  const sawProgress = page.waitForSelector('#download:not([hidden]) progress', { timeout: 30_000 });
  await page.goto(site.url);
  await sawProgress;
  try {
    assert.equal(await demoReady(page), 'ready');
  } finally {
    Object.assign(site.server.options, { bandwidth: 0, range: true });
  }
  assert.equal(await page.textContent('#storage-badge'), 'Stored in OPFS');
  assert.match(await page.getAttribute('#storage-badge', 'title'), /lazy loading is not possible/);
  assert.ok(await page.isHidden('#download'));
  // The packed file, fetched whole (no Range) and inflated page by page.
  assert.ok(site.server.log().some((r) => r.path.endsWith('.pages') && !r.range), JSON.stringify(site.server.log()));
  assert.deepEqual(page.errors, []);
  await closePage(page);
});

test('a reload with the index server blocked answers from OPFS', async () => {
  site.server.options.block = ['/demo/'];
  site.server.reset();
  const page = await site.page('?q=payment');
  try {
    assert.equal(await demoReady(page), 'ready');
    await page.waitForSelector('#results .result');
    assert.match(await page.textContent('#summary'), paymentResults);
    assert.equal(await page.textContent('#storage-badge'), 'Stored in OPFS');
    const info = await page.evaluate(() => window.gitsense.info());
    assert.equal(info.source, 'stored');
    // The background check failed: the page says it is offline.
    await page.waitForSelector('#offline-badge:not([hidden])');
    const paths = Object.keys(site.server.stats().byPath);
    assert.ok(!paths.some((p) => /\.(gz|pages)$/.test(p)), paths.join());
    await page.screenshot({ path: screenshotPath('demo-offline.png') });
  } finally {
    site.server.options.block = [];
  }
  assert.deepEqual(page.errors, []);
  await closePage(page);
});

test('keyboard: / focuses the box, Ctrl+K opens the quick search, arrows move through results, Enter expands', async () => {
  const page = await site.page('?q=payment');
  await demoReady(page);
  await page.waitForSelector('#results .result');
  await page.click('h1, .summary');
  await page.keyboard.press('/');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'q');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.sourceType), 'chat');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.sourceType), 'message');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('aria-expanded')), 'true');
  assert.ok(await page.evaluate(() => !document.activeElement.querySelector('.full').hidden));
  await page.keyboard.press('ArrowUp');
  await page.keyboard.press('ArrowUp');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'q');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Escape');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'q');
  await page.evaluate(() => document.activeElement.blur());
  await page.keyboard.press('Control+k');
  assert.ok(await page.evaluate(() => {
    const ui = document.querySelector('gitsense-search');
    return document.activeElement === ui && ui.shadowRoot.activeElement.tagName === 'INPUT' && ui.shadowRoot.querySelector('dialog').open;
  }));
  await closePage(page);
});

test('paging moves through the results', async () => {
  const page = await site.page('?q=payment');
  await demoReady(page);
  await page.waitForSelector('#pager:not([hidden])');
  assert.match(await page.textContent('#page-label'), /Page 1 of \d+/);
  const first = await page.textContent('#results');
  await page.click('#next');
  await page.waitForFunction(() => document.getElementById('page-label').textContent.startsWith('Page 2'));
  assert.notEqual(await page.textContent('#results'), first);
  assert.equal(new URL(page.url()).searchParams.get('page'), '2');
  await page.click('#prev');
  await page.waitForFunction(() => document.getElementById('page-label').textContent.startsWith('Page 1'));
  await closePage(page);
});

test('a bad query shows the structured error with a caret', async () => {
  const page = await site.page('?q=' + encodeURIComponent('payment "unclosed'));
  await demoReady(page);
  await page.waitForSelector('#error:not([hidden])');
  const text = await page.textContent('#error');
  assert.match(text, /query\.unbalanced_quote/);
  assert.match(await page.textContent('#error .caret'), /\n {8}\^$/);
  await closePage(page);
});

test('?manifest= loads another published index, and hostile content renders as text', async () => {
  const page = await site.page('?manifest=' + encodeURIComponent('hostile/manifest.json') + '&q=' + encodeURIComponent('hostile payload'));
  assert.equal(await demoReady(page), 'ready');
  await page.waitForSelector('#results .result');
  const types = await resultTypes(page);
  assert.ok(types.includes('chat') && types.includes('message') && types.includes('code-block'), types.join());
  // Expand everything so full texts are in the DOM too.
  await page.$$eval('#results .result', (els) => els.forEach((e) => e.click()));
  const dom = await page.evaluate(() => ({
    injected: document.querySelectorAll('#results img, #results script, #results svg, #results iframe, #results a, #results [onerror], #results [onload]').length,
    xss: window.__xss ?? null,
    text: document.getElementById('results').textContent,
    footer: document.getElementById('footer').textContent,
  }));
  assert.equal(dom.injected, 0);
  assert.equal(dom.xss, null);
  for (const payload of [
    `<img src=x onerror="window.__xss='img'">`,
    `<script>window.__xss='script'</script>`,
    `<svg onload="window.__xss='svg'"></svg>`,
    `<a href="javascript:window.__xss='link'">click</a>`,
  ]) {
    assert.ok(dom.text.includes(payload), `shown as text: ${payload}`);
  }
  await page.screenshot({ path: screenshotPath('demo-hostile.png'), fullPage: true });
  // Give any handler that slipped through a chance to run.
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate(() => window.__xss ?? null), null);
  assert.deepEqual(page.errors, []);
  await closePage(page);
});

test('the default index is this project\'s documentation and the GitSense sample: a docs-only query links to its page and section', async () => {
  // Only the documentation speaks of sync access handles; the sample is
  // chats about payments, Docker and the like.
  const page = await site.page('?q=' + encodeURIComponent('"sync access handle"'));
  assert.equal(await demoReady(page), 'ready');
  const sectionLink = '#results .result[data-source-type="message"] a.page-link';
  await page.waitForSelector(sectionLink);
  const links = await page.$$eval('#results a.page-link', (els) => els.map((a) => a.href));
  assert.ok(links.every((h) => new URL(h).pathname.startsWith('/docs/')), links.join());
  const href = await page.$eval(sectionLink, (a) => a.href);
  assert.match(href, /\/docs\/.+\.html#.+/);
  await Promise.all([page.waitForURL(href), page.click(sectionLink)]);
  const section = await page.evaluate(() => {
    const target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    let text = '';
    // The heading and what follows it up to the next heading.
    for (let e = target; e; e = e.nextElementSibling) {
      if (e !== target && /^H[1-6]$/.test(e.tagName)) break;
      text += e.textContent;
    }
    return { found: Boolean(target), text, back: document.querySelector('nav a')?.getAttribute('href') };
  });
  assert.ok(section.found, `no element with the id of ${href}`);
  assert.match(section.text, /sync access handle/i);
  assert.match(section.back, /index\.html$/);
  await closePage(page);

  // The GitSense sample is in the same index: no links there, chats and
  // messages as before.
  const sample = await site.page('?q=' + encodeURIComponent('stripe webhook'));
  assert.equal(await demoReady(sample), 'ready');
  await sample.waitForSelector('#results .result');
  const crumbs = await sample.$$eval('#results .crumbs', (els) => els.map((e) => e.textContent));
  assert.ok(crumbs.length > 0);
  assert.equal(await sample.$$eval('#results a.page-link', (els) => els.length), 0);
  assert.deepEqual(sample.errors, []);
  await closePage(sample);
});
