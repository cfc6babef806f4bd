// The demo page's chat-app mode (?mode=chat, www/chat.js) in headless
// Chromium: a typed message is searchable at once, the storage and tab
// state show (and follow the owner when its tab closes), the index is
// still there after a reload, an export chosen or dropped is imported
// with progress (a bad one shows its structured error, Cancel stops one),
// the local index can be deleted, and message text is only ever shown as
// text.

import { test, before, beforeEach, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setup, demoReady, closePage, clearStorage, screenshotPath, ROOT } from './harness.mjs';

let site;
before(async () => {
  site = await setup();
  // Served by the site: the page's CSP lets only its own origin's scripts run.
  fs.copyFileSync(path.join(ROOT, 'node_modules/axe-core/axe.min.js'), path.join(site.root, 'axe.min.js'));
  const page = await site.blank();
  assert.equal(await clearStorage(page), 'ok');
  await closePage(page);
});
after(async () => {
  await site.close();
});
// Each test starts with no page open (one left by a failed test would
// still own the index).
beforeEach(async () => {
  for (const p of site.context.pages()) await closePage(p);
});

/** A chat-mode page, once its index is open and its state shown. */
async function chatPage(query = '') {
  const page = await site.page(`?mode=chat${query}`);
  assert.equal(await demoReady(page), 'ready', await page.textContent('#error'));
  await page.waitForSelector('#chat-state[data-owner]');
  return page;
}

/** The state panel's value for `key` (storage, name, size, chats, messages, code-blocks, tab). */
const stateOf = (page, key) => page.textContent(`#chat-state-list dd[data-key="${key}"]`);

/** Waits until the state panel's `key` reads `value`. */
function stateIs(page, key, value, timeout = 20_000) {
  return page.waitForFunction(
    ([key, value]) => document.querySelector(`#chat-state-list dd[data-key="${key}"]`)?.textContent === value,
    [key, value],
    { timeout },
  );
}

/** axe-core over the chat panel and the mode links: no serious or critical violation. */
async function axe(page, label) {
  await page.addScriptTag({ url: '/axe.min.js' });
  const violations = await page.evaluate(async () =>
    (await window.axe.run({ include: [['#chat-app'], ['.modes']] }, { resultTypes: ['violations'] })).violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 3),
    })),
  );
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad, [], `${label}: ${JSON.stringify(bad)}`);
}

/** Searches with the page's box; resolves the results' source types. */
async function search(page, query) {
  await page.fill('#q', query);
  // Hidden until this search's answer is shown (it may repeat the last query).
  await page.$eval('#summary', (s) => {
    s.hidden = true;
  });
  await page.press('#q', 'Enter');
  await page.waitForFunction((q) => new URL(location.href).searchParams.get('q') === q && !document.querySelector('#summary').hidden, query);
  return page.$$eval('#results .result', (els) => els.map((e) => e.dataset.sourceType));
}

/** Adds a message with the composer; `chat` is an option's label, or a new conversation's name. */
async function send(page, text, { chat, newChat, role = 'user' } = {}) {
  if (newChat) {
    await page.selectOption('#compose-chat', 'new');
    await page.fill('#compose-name', newChat);
  } else if (chat) {
    await page.selectOption('#compose-chat', { label: chat });
  }
  await page.selectOption('#compose-role', role);
  await page.fill('#compose-text', text);
  const before = await page.textContent('#compose-result');
  await page.click('#compose-send');
  await page.waitForFunction((before) => {
    const r = document.querySelector('#compose-result').textContent;
    return (r && r !== before) || !document.querySelector('#compose-error').hidden;
  }, before);
  assert.ok(await page.isHidden('#compose-error'), await page.textContent('#compose-error'));
}

test('a typed message is searchable at once; the panel shows OPFS, the index, its counts and that this tab owns it', async () => {
  const page = await chatPage();
  assert.equal(await page.getAttribute('.modes a[data-mode="chat"]', 'aria-current'), 'page');
  assert.ok(await page.isVisible('#chat-app'));
  assert.equal(await stateOf(page, 'storage'), 'OPFS');
  assert.equal(await stateOf(page, 'name'), 'demo-chats');
  assert.equal(await stateOf(page, 'messages'), '0');
  assert.match(await stateOf(page, 'tab'), /^owns the index/);
  // An empty index: the only choice is a new conversation.
  assert.equal(await page.inputValue('#compose-chat'), 'new');
  assert.ok(await page.isVisible('#compose-name'));

  await send(page, 'The quarterly ledger needs a zanzibarquux reconciliation.', { newChat: 'Ledger work' });
  assert.match(await page.textContent('#compose-result'), /^Added message 1/);
  assert.deepEqual(await search(page, 'zanzibarquux'), ['message']);
  assert.match(await page.textContent('#results .result[data-source-type="message"]'), /Ledger work/);
  await stateIs(page, 'messages', '1');
  assert.equal(await stateOf(page, 'chats'), '1');

  // The new conversation is now the one written to; an answer with a
  // fenced block adds a code block, and the open search shows it at once.
  assert.equal(await page.$eval('#compose-chat', (s) => s.selectedOptions[0].textContent), 'Ledger work');
  assert.ok(await page.isHidden('#compose-name'));
  await page.fill('#q', 'zanzibarquux');
  await send(page, 'Run this:\n\n```python\ndef zanzibarquux_total(rows):\n    return sum(rows)\n```', { role: 'assistant' });
  await page.waitForFunction(() => document.querySelectorAll('#results .result').length >= 3);
  const types = await page.$$eval('#results .result', (els) => els.map((e) => e.dataset.sourceType));
  assert.ok(types.includes('code-block'), types.join());
  await stateIs(page, 'code-blocks', '1');
  assert.deepEqual(await search(page, 'lang:python zanzibarquux_total'), ['code-block']);
  // Ctrl+Enter in the message box adds it too.
  await page.fill('#compose-text', 'A keyboard-only note about quixotrombone.');
  await page.focus('#compose-text');
  await page.keyboard.press('Control+Enter');
  await stateIs(page, 'messages', '3');
  assert.deepEqual(await search(page, 'quixotrombone'), ['message']);
  await page.screenshot({ path: screenshotPath('demo-chat.png'), fullPage: true });
  await axe(page, 'chat mode with results');
  await page.emulateMedia({ colorScheme: 'dark' });
  await axe(page, 'chat mode, dark');
  await page.emulateMedia({ colorScheme: 'light' });
  assert.deepEqual(page.errors, []);
  await closePage(page);
});

test('after a reload the index is still in OPFS and answers', async () => {
  const page = await chatPage('&q=zanzibarquux');
  assert.equal(await stateOf(page, 'storage'), 'OPFS');
  assert.equal(await stateOf(page, 'messages'), '3');
  await page.waitForSelector('#results .result');
  assert.match(await page.textContent('#summary'), /^3 results · 0 chats · 2 messages · 1 code block/);
  assert.equal(await page.$eval('#compose-chat', (s) => s.selectedOptions[0].textContent), 'Ledger work');
  assert.deepEqual(page.errors, []);
  await closePage(page);
});

test('a second tab relays through the first, writes through it, and owns the index once the first closes', async () => {
  const first = await chatPage();
  assert.match(await stateOf(first, 'tab'), /^owns/);
  const second = await chatPage();
  assert.equal(await second.getAttribute('#chat-state', 'data-owner'), 'false');
  assert.match(await stateOf(second, 'tab'), /^relays through the tab that owns the index/);
  assert.deepEqual(await search(second, 'zanzibarquux'), ['message', 'message', 'code-block']);
  // A write from the relaying tab: the owner's search finds it, and the
  // owner's panel counts it (its state is polled).
  await send(second, 'Sent from the second tab: flumbergast.', { chat: 'Ledger work' });
  assert.deepEqual(await search(first, 'flumbergast'), ['message']);
  await stateIs(first, 'messages', '4');
  await closePage(first);
  // The relaying tab takes over, and says so.
  await second.waitForFunction(() => document.querySelector('#chat-state').dataset.owner === 'true', null, { timeout: 30_000 });
  assert.match(await stateOf(second, 'tab'), /^owns/);
  assert.deepEqual(await search(second, 'flumbergast'), ['message']);
  await send(second, 'After the hand-over: grindlewick.', { chat: 'Ledger work' });
  assert.deepEqual(await search(second, 'grindlewick'), ['message']);
  assert.deepEqual(second.errors, []);
  await closePage(second);
});

test('?name= and ?storage= pick the index and its storage, and the panel says which', async () => {
  const idb = await chatPage('&name=idb-chats&storage=indexeddb');
  assert.equal(await stateOf(idb, 'storage'), 'IndexedDB');
  assert.equal(await stateOf(idb, 'name'), 'idb-chats');
  assert.equal(await stateOf(idb, 'messages'), '0');
  await send(idb, 'Kept in IndexedDB: snorkelwhistle.', { newChat: 'IDB notes' });
  assert.deepEqual(await search(idb, 'snorkelwhistle'), ['message']);
  assert.deepEqual(idb.errors, []);
  await closePage(idb);
  // In memory the index is this tab's alone, and gone with it.
  const mem = await chatPage('&name=scratch&storage=memory');
  assert.equal(await stateOf(mem, 'storage'), 'Memory (not kept)');
  assert.equal(await stateOf(mem, 'tab'), 'has the index to itself');
  await send(mem, 'Only in memory: plumbobulate.', { newChat: 'Scratch' });
  assert.deepEqual(await search(mem, 'plumbobulate'), ['message']);
  assert.deepEqual(mem.errors, []);
});

test('message text and conversation names are shown as text, never as markup', async () => {
  const page = await chatPage();
  const hostile = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script> wobblefrost';
  await send(page, hostile, { newChat: '<b onmouseover="window.pwned=3">bold</b> chat' });
  assert.deepEqual(await search(page, 'wobblefrost'), ['message']);
  assert.equal(await page.$$eval('#results img, #results script, #results b, #compose-chat b', (els) => els.length), 0);
  assert.match(await page.textContent('#results'), /<img src=x onerror=/);
  assert.ok((await page.$$eval('#compose-chat option', (os) => os.map((o) => o.textContent))).includes('<b onmouseover="window.pwned=3">bold</b> chat'));
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.deepEqual(page.errors, []);
  await closePage(page);
});

/** A ShareGPT export of `n` conversations (`word` in each), as bytes. */
function shareGpt(n, word) {
  const conversations = [];
  for (let i = 0; i < n; i++) {
    conversations.push({
      id: `conv-${i}`,
      conversations: [
        { from: 'human', value: `Question ${i} about ${word}: how do I page through results without offsets? ${'Some context. '.repeat(20)}` },
        { from: 'gpt', value: `Answer ${i}: keep the last key and ask for rows after it.\n\n\`\`\`sql\nSELECT * FROM t WHERE id > ? ORDER BY id LIMIT 20\n\`\`\`` },
      ],
    });
  }
  return Buffer.from(JSON.stringify(conversations));
}

/** Records every text the import's progress line shows, from now on. */
function watchProgress(page) {
  return page.evaluate(() => {
    window.progressTexts = [];
    const counts = document.querySelector('#import-counts');
    new MutationObserver(() => window.progressTexts.push(counts.textContent)).observe(counts, { childList: true, characterData: true, subtree: true });
  });
}

/** Waits for the import to end; resolves its result line, or throws with its error. */
async function importDone(page) {
  await page.waitForFunction(() => document.querySelector('#import-progress').hidden && (document.querySelector('#import-result').textContent || !document.querySelector('#import-error').hidden), null, { timeout: 120_000 });
  return { result: await page.textContent('#import-result'), error: (await page.isVisible('#import-error')) ? await page.textContent('#import-error') : null };
}

test('an export chosen with the file box is imported with progress and counts, and searched offline', async () => {
  const page = await chatPage();
  const before = Number((await stateOf(page, 'messages')).replace(/,/g, ''));
  await watchProgress(page);
  await page.setInputFiles('#export-file', { name: 'sharegpt.json', mimeType: 'application/json', buffer: shareGpt(1500, 'keyset pagination') });
  const done = await importDone(page);
  assert.equal(done.error, null);
  // A chat for the export, one per conversation under it.
  assert.equal(done.result, 'Imported sharegpt.json (sharegpt): 1,501 chats, 3,000 messages, 1,500 code blocks.');
  const texts = await page.evaluate(() => window.progressTexts);
  assert.ok(texts.some((t) => / of .* · [\d,]+ chats · [\d,]+ messages$/.test(t)), texts.join('\n'));
  await stateIs(page, 'messages', (before + 3000).toLocaleString('en-US'));
  // Offline: the server answers nothing now, and the search still does.
  site.server.options.block = ['/'];
  try {
    assert.deepEqual(await search(page, '"keyset pagination" in:messages'), Array(10).fill('message'));
    assert.match(await page.textContent('#summary'), /^1,500 results/);
  } finally {
    site.server.options.block = [];
  }
  // The imported conversations can be written to.
  assert.equal(await page.$$eval('#compose-chat option', (os) => os.length), 101);
  assert.deepEqual(page.errors, []);
  await closePage(page);
});

test('an export dropped on the panel is imported (ChatGPT), and a bad file shows its structured error and changes nothing', async () => {
  const page = await chatPage();
  const chatgpt = fs.readFileSync(path.join(ROOT, 'tests/fixtures/chat-exports/chatgpt-conversations.json'), 'utf8');
  const before = await stateOf(page, 'messages');
  // A drop as the browser sends it: a DataTransfer holding the file.
  await page.evaluate((text) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], 'conversations.json', { type: 'application/json' }));
    const drop = document.querySelector('#drop');
    drop.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
    drop.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, chatgpt);
  const done = await importDone(page);
  assert.equal(done.error, null);
  // The export's chat and its two conversations; only each one's current branch.
  assert.equal(done.result, 'Imported conversations.json (chatgpt): 3 chats, 8 messages, 2 code blocks.');
  assert.deepEqual(await search(page, 'csv in:chats'), ['chat']);
  const after = await stateOf(page, 'messages');
  assert.notEqual(after, before);

  await page.setInputFiles('#export-file', { name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('[{"mapping": {"a": ') });
  const bad = await importDone(page);
  assert.match(bad.error, /import\.\w+/);
  assert.equal(await page.textContent('#import-result'), '');
  await stateIs(page, 'messages', after);
  assert.deepEqual(page.errors, []);
  await closePage(page);
});

test('Cancel stops an import under way, and the index stays as it was', async () => {
  const page = await chatPage();
  const before = await stateOf(page, 'messages');
  // Cancel as soon as the first stored batch is reported.
  await page.evaluate(() => {
    const counts = document.querySelector('#import-counts');
    new MutationObserver((_, observer) => {
      if (counts.textContent.includes(' of ')) {
        observer.disconnect();
        document.querySelector('#import-cancel').click();
      }
    }).observe(counts, { childList: true, characterData: true, subtree: true });
  });
  await page.setInputFiles('#export-file', { name: 'big.json', mimeType: 'application/json', buffer: shareGpt(6000, 'abandoned import') });
  const done = await importDone(page);
  assert.match(done.error || '', /import\.aborted/, JSON.stringify(done));
  assert.equal(done.result, '');
  assert.equal(await stateOf(page, 'messages'), before);
  assert.deepEqual(await search(page, '"abandoned import"'), []);
  assert.deepEqual(page.errors, []);
  await closePage(page);
});


test('deleting the local index empties it, and the page goes on with a new one', async () => {
  const page = await chatPage();
  assert.notEqual(await stateOf(page, 'messages'), '0');
  await page.click('#chat-clear');
  // The button is given back once the new index is open and listed.
  await page.waitForSelector('#chat-clear:enabled', { timeout: 30_000 });
  await stateIs(page, 'messages', '0');
  assert.ok(await page.isHidden('#chat-state-error'), await page.textContent('#chat-state-error'));
  assert.equal(await stateOf(page, 'chats'), '0');
  assert.equal(await page.inputValue('#compose-chat'), 'new');
  assert.deepEqual(await search(page, 'zanzibarquux'), []);
  await send(page, 'A fresh start: plinkerdoodle.', { newChat: 'Second life' });
  assert.deepEqual(await search(page, 'plinkerdoodle'), ['message']);
  assert.deepEqual(page.errors, []);
  await closePage(page);
});

test('deleting while another tab holds the index says so, and keeps working', async () => {
  const owner = await chatPage();
  await send(owner, 'Held by the owner: quillifrond.', { newChat: 'Kept' });
  const other = await chatPage();
  assert.equal(await other.getAttribute('#chat-state', 'data-owner'), 'false');
  await other.click('#chat-clear');
  // This tab let go of nothing (it relays): the owner still holds OPFS.
  await other.waitForSelector('#chat-state-error:not([hidden])', { timeout: 30_000 });
  assert.match(await other.textContent('#chat-state-error'), /storage\.busy/);
  assert.match(await other.textContent('#chat-state-error'), /another tab/);
  assert.deepEqual(await search(other, 'quillifrond'), ['message']);
  await closePage(other);
  await closePage(owner);
});
