// README.md's chat-app example, run as written in headless Chromium: the
// page block is cut from the README (so the example cannot drift from what
// works), served with pkg/ beside it as gitsense-search/, and used as a
// reader would: type messages, search them, reload, import an export.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setup, closePage, clearStorage, ROOT } from './harness.mjs';

const HEADING = "### The app's own messages: a writable index";

/** The first ```html block after the heading. */
function readmeExample() {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const at = readme.indexOf(HEADING);
  assert.ok(at >= 0, `README.md has no "${HEADING}" section`);
  const block = /```html\n([\s\S]*?)\n```/.exec(readme.slice(at));
  assert.ok(block, 'the section has no html block');
  return block[1];
}

let site;
before(async () => {
  site = await setup();
  fs.writeFileSync(path.join(site.root, 'chat-example.html'), readmeExample());
  fs.cpSync(path.join(site.root, 'pkg'), path.join(site.root, 'gitsense-search'), { recursive: true });
  const page = await site.blank();
  assert.equal(await clearStorage(page), 'ok');
  await closePage(page);
});
after(async () => {
  await site.close();
});

/** The example page, once its module has opened the index and set its handlers. */
async function examplePage() {
  const page = await site.page('chat-example.html');
  await page.waitForFunction(() => typeof document.getElementById('q').oninput === 'function', null, { timeout: 60_000 });
  return page;
}

/** Types `query` into the example's search box; resolves the hits' texts once they read `expect` hits. */
async function hits(page, query, expect) {
  await page.fill('#q', query);
  await page.waitForFunction((n) => document.querySelectorAll('#hits li').length === n, expect);
  return page.$$eval('#hits li', (els) => els.map((e) => e.textContent));
}

test("the README's chat app stores typed messages, finds them at once and after a reload", async () => {
  const page = await examplePage();
  await page.fill('#text', 'Remember the vorpalwidget release checklist');
  await page.fill('#q', 'vorpalwidget');
  await page.click('#say button');
  const found = await hits(page, 'vorpalwidget', 1);
  assert.match(found[0], / · user: Remember the vorpalwidget release checklist$/);
  await page.fill('#text', 'The vorpalwidget <b>rollback</b> plan');
  await page.press('#text', 'Enter');
  // The second message goes to the same conversation, and its markup is text.
  const both = await hits(page, 'vorpalwidget', 2);
  assert.equal(new Set(both.map((t) => t.split(' · ')[0])).size, 1, both.join('\n'));
  assert.ok(both.some((t) => t.includes('<b>rollback</b>')), both.join('\n'));
  assert.equal(await page.$$eval('#hits b', (els) => els.length), 0);

  await page.reload();
  await page.waitForFunction(() => typeof document.getElementById('q').oninput === 'function', null, { timeout: 60_000 });
  assert.equal((await hits(page, 'rollback', 1)).length, 1);
  // A new visit writes after the ids already taken.
  await page.fill('#text', 'Another day, another vorpalwidget');
  await page.click('#say button');
  assert.equal((await hits(page, 'vorpalwidget', 3)).length, 3);
  assert.deepEqual(page.errors, []);
  await closePage(page);
});

test("the README's chat app imports a chosen export, and shows a bad file's structured error", async () => {
  const page = await examplePage();
  await page.setInputFiles('#file', path.join(ROOT, 'tests/fixtures/chat-exports/claude-conversations.json'));
  await page.waitForFunction(() => document.getElementById('status').textContent && document.getElementById('bar').hidden);
  assert.match(await page.textContent('#status'), /^\d+ chats, 6 messages imported$/);
  await page.fill('#q', 'debounce');
  await page.waitForFunction(() => document.querySelectorAll('#hits li').length > 0);
  assert.match(await page.textContent('#hits'), /Debounce a search box/);

  await page.setInputFiles('#file', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not an export at all') });
  await page.waitForFunction(() => /^import\./.test(document.getElementById('status').textContent) && document.getElementById('bar').hidden);
  assert.match(await page.textContent('#status'), /^import\.\w+: \S/);
  assert.deepEqual(page.errors, []);
  await closePage(page);
});
