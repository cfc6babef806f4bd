// The demo page's facet chips and repository browser in headless
// Chromium, on the demo's default index (the documentation and the
// GitSense sample): the counts and listings are the CLI's on the same
// index. Screenshots go to target/screenshots/.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, cli, demoReady, closePage, screenshotPath, DEMO_INDEX } from './harness.mjs';

let site;
before(async () => {
  site = await setup();
});
after(async () => {
  await site.close();
});

const search = (query, ...flags) => JSON.parse(cli('search', DEMO_INDEX, query, '--format', 'json', ...flags));

/** The CLI's facet counts of `query` for `field`, summed over the targets. */
function cliCounts(query, field) {
  const counts = new Map();
  for (const f of search(query, '--facets', field, '--per-page', '1').facets) {
    for (const { value, count } of f.values) counts.set(String(value), (counts.get(String(value)) || 0) + count);
  }
  return counts;
}

const chips = (page, field) => page.$$eval(`#facets .facet[data-field="${field}"] .chip`, (els) => els.map((e) => ({
  value: e.firstChild.textContent,
  count: Number(e.querySelector('.count').textContent.replace(/\D/g, '')),
  filter: e.dataset.filter,
  pressed: e.getAttribute('aria-pressed') === 'true',
})));

const totalOf = (query) => search(query).pagination.totalResults;

test('facet chips count the matches by type, language and repository, and narrow the results', async () => {
  const page = await site.page('?q=payment');
  assert.equal(await demoReady(page), 'ready');
  await page.waitForSelector('#facets:not([hidden]) .chip');
  for (const field of ['chat-type', 'lang', 'repo']) {
    const expected = cliCounts('payment', field);
    const shown = await chips(page, field);
    assert.ok(shown.length >= 2, `${field}: ${JSON.stringify(shown)}`);
    for (const c of shown) {
      assert.equal(c.count, expected.get(c.value), `${field} ${c.value}`);
      assert.equal(c.pressed, false);
    }
    // The most frequent values first.
    assert.deepEqual(shown.map((c) => c.count), [...shown.map((c) => c.count)].sort((a, b) => b - a));
  }
  await page.screenshot({ path: screenshotPath('demo-facets.png') });

  // A chip adds its filter; the results and the chips follow.
  const js = (await chips(page, 'lang')).find((c) => c.value === 'javascript');
  assert.equal(js.filter, 'lang:javascript');
  await page.click('#facets .chip[data-filter="lang:javascript"]');
  await page.waitForSelector('#facets .chip[data-filter="lang:javascript"][aria-pressed="true"]');
  assert.equal(await page.inputValue('#q'), 'payment lang:javascript');
  assert.match(await page.textContent('#summary'), new RegExp(`\\b${totalOf('payment lang:javascript')} results`));
  assert.ok(totalOf('payment lang:javascript') < totalOf('payment'));
  assert.equal(new URL(page.url()).searchParams.get('q'), 'payment lang:javascript');
  // A repository holding a slash is a filter the engine reads as it is.
  const repo = (await chips(page, 'repo'))[0];
  assert.equal(repo.filter, `repo:${repo.value}`);
  await page.click(`#facets .chip[data-filter="${repo.filter}"]`);
  await page.waitForFunction((f) => document.querySelector(`#facets .chip[data-filter="${f}"]`)?.getAttribute('aria-pressed') === 'true', repo.filter);
  const narrowed = `payment lang:javascript ${repo.filter}`;
  assert.equal(await page.inputValue('#q'), narrowed);
  assert.match(await page.textContent('#summary'), new RegExp(`\\b${totalOf(narrowed)} results`));
  // A pressed chip takes its filter out again.
  await page.click('#facets .chip[data-filter="lang:javascript"]');
  await page.waitForFunction(() => document.getElementById('q').value === `payment ${document.querySelector('#facets .chip[aria-pressed="true"]')?.dataset.filter}`);
  assert.match(await page.textContent('#summary'), new RegExp(`\\b${totalOf(`payment ${repo.filter}`)} results`));
  assert.deepEqual(page.errors, []);
  await closePage(page);
});

const entries = (page) => page.$$eval('#git-entries .git-entry', (els) => els.map((e) => e.firstChild.textContent));
const names = (query) => search(query).results.chats.map((c) => (c.chats_type === 'git-repo' && c.chats_meta_git_repo) || c.chats_name);

const lastCrumb = (page, label) => page.waitForFunction((l) => document.querySelector('#git-crumbs li:last-child').textContent === l, label);

async function open(page, label, expected) {
  await page.click(`#git-entries .git-entry[data-name="${label}"]`);
  await lastCrumb(page, label);
  assert.deepEqual(await entries(page), expected);
}

test('the repository browser walks repositories, branches and directories as git-nav lists them, and opens a file', async () => {
  const page = await site.page('');
  assert.equal(await demoReady(page), 'ready');
  await page.waitForSelector('#git-browser:not([hidden]) .git-entry');
  assert.deepEqual(await entries(page), names('profile:git-nav'));
  assert.ok((await entries(page)).includes('Tutorial/secure-payments'));

  await open(page, 'Tutorial/secure-payments', names('git-repository:Tutorial/secure-payments'));
  assert.deepEqual(await entries(page), ['main']);
  const top = names('git-repository:Tutorial/secure-payments git-branch:main');
  await open(page, 'main', top);
  assert.ok(top.includes('backend') && top.includes('README.md'), top.join());
  const backend = search('git-repository:Tutorial/secure-payments git-branch:main').results.chats.find((c) => c.chats_name === 'backend');
  await open(page, 'backend', names(`git-ls-tree-id:${backend.chats_id}`));
  assert.deepEqual(await page.$$eval('#git-crumbs li', (els) => els.map((e) => e.textContent)),
    ['Repositories', 'Tutorial/secure-payments', 'main', 'backend']);
  await page.screenshot({ path: screenshotPath('demo-git-browser.png') });

  // A crumb goes back up.
  await page.click('#git-crumbs button[data-depth="2"]');
  await lastCrumb(page, 'main');
  assert.deepEqual(await entries(page), top);

  // A file opens as a search for its text.
  const readme = search('git-repository:Tutorial/secure-payments git-branch:main').results.chats.find((c) => c.chats_name === 'README.md');
  await page.click('#git-entries .git-entry[data-name="README.md"]');
  await page.waitForSelector('#results .result[data-source-type="message"]');
  assert.equal(await page.inputValue('#q'), `chat-id:${readme.chats_id} msg-type:git-blob`);
  assert.ok(await page.isHidden('#git-browser'));
  assert.match(await page.textContent('#results .result .title'), /README\.md/);
  // Back to an empty box: the browser is there again, where it was.
  await page.fill('#q', '');
  await page.waitForSelector('#git-browser:not([hidden])');
  assert.deepEqual(await entries(page), top);
  assert.deepEqual(page.errors, []);
  await closePage(page);
});
