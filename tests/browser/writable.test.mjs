// Writable indexes in headless Chromium: GitSenseSearch.create({ name }),
// add / update / remove, each one transaction visible to the next search,
// kept in OPFS (or IndexedDB) across a reload, and bad input refused with
// the record and field named and nothing written.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, call, closePage, publish, SAMPLE_INDEX, FIXTURES, freshPage, runInPage } from './harness.mjs';
import path from 'node:path';

let site;
before(async () => {
  site = await setup();
});
after(async () => {
  await site.close();
});

/** A page on an emptied origin. */
const fresh = () => freshPage(site);
const run = runInPage;

/** A conversation of `n` messages in chat `chat`, ids from `first`. */
function conversation(chat, first, n, word) {
  const messages = [];
  for (let i = 0; i < n; i++) {
    const user = i % 2 === 0;
    messages.push({
      id: first + i,
      chat_id: chat,
      role: user ? 'user' : 'assistant',
      content: user ? `How do I ${word} step ${i}?` : `Call ${word} again:\n\n\`\`\`python\ndef ${word}_${i}():\n    return ${word}(${i})\n\`\`\``,
      created_at: `2026-01-02T00:00:${String(i).padStart(2, '0')}Z`,
    });
  }
  return messages;
}

const counts = (r) => r.totalCounts;

test('a created index takes writes, answers at once and reopens after a reload', async () => {
  const page = await fresh();
  const made = await run(
    page,
    async (G, msgs) => {
      window.engine = await G.create({ name: 'chat-app' });
      const before = await window.engine.search('reconcile');
      const summary = await window.engine.add({ chats: [{ id: 1, name: 'Ledger work' }, { id: 2, parent_id: 1, name: 'Reconciliation' }], messages: msgs });
      const after = await window.engine.search('reconcile');
      const code = await window.engine.search('lang:python reconcile_3');
      return { info: await window.engine.info(), before, summary, after, code };
    },
    conversation(2, 1, 20, 'reconcile'),
  );
  assert.ifError(made.error);
  const { info, before, summary, after, code } = made.value;
  assert.equal(info.writable, true);
  assert.equal(info.storage, 'opfs', info.storageReason);
  assert.equal(counts(before).messages, 0);
  assert.deepEqual([summary.chats, summary.messages, summary.codeBlocks], [2, 20, 10]);
  assert.equal(counts(after).messages, 20);
  // The results object of a published index, chat path from the parent.
  assert.equal(after.results.messages[0].chat_path, 'Ledger work -> Reconciliation');
  assert.equal(typeof after.results.messages[0].fts_rank, 'number');
  assert.equal(counts(code).codeBlocks, 1, 'fenced blocks became code blocks');
  assert.equal(code.results.codeBlocks[0].code_blocks_language, 'python');

  // A reload: the worker is gone, the index is read back from OPFS.
  await closePage(page);
  const again = await site.blank();
  const reopened = await run(again, async (G) => {
    window.engine = await G.open({ name: 'chat-app' });
    return { info: await window.engine.info(), r: await window.engine.search('reconcile') };
  });
  assert.ifError(reopened.error);
  assert.equal(reopened.value.info.storage, 'opfs');
  assert.equal(counts(reopened.value.r).messages, 20);
  assert.equal(reopened.value.info.index.revision, info.index.revision, 'the same index, write for write');

  // create() of an existing name and open() of a missing one say so.
  const twice = await run(again, (G) => G.create({ name: 'chat-app' }));
  assert.equal(twice.error.code, 'index.exists');
  await call(again, 'close');
  const missing = await run(again, (G) => G.open({ name: 'no-such-index' }));
  assert.equal(missing.error.code, 'index.not_found');
  await closePage(again);
});

test('update and remove change what the next search finds', async () => {
  const page = await fresh();
  const out = await run(
    page,
    async (G, msgs) => {
      const e = await G.create({ name: 'edits' });
      await e.add({ chats: [{ id: 1, name: 'Parent' }, { id: 2, parent_id: 1, name: 'Child' }], messages: msgs });
      const seen = [];
      const n = async (q) => (await e.search(q)).totalCounts;
      seen.push(await n('settle'));
      await e.update({ messages: [{ id: 1, chat_id: 2, role: 'user', content: 'Now about invoices instead' }], chats: [{ id: 1, name: 'Renamed' }] });
      seen.push(await n('invoices'));
      const path = (await e.search('invoices')).results.messages[0].chat_path;
      await e.remove({ messageIds: [2] });
      seen.push(await n('settle'));
      await e.remove({ chatIds: [1] });
      seen.push(await n('settle OR invoices'));
      const info = await e.info();
      await e.close();
      return { seen, path, info };
    },
    conversation(2, 1, 4, 'settle'),
  );
  assert.ifError(out.error);
  const [first, updated, removedOne, removedChat] = out.value.seen;
  assert.equal(first.messages, 4);
  assert.equal(updated.messages, 1);
  assert.equal(out.value.path, 'Renamed -> Child', 'a renamed parent renames its child chat path');
  // Message 1 no longer says settle; message 2 (with its code block) removed.
  assert.equal(removedOne.messages, 2);
  assert.equal(removedChat.messages + removedChat.chats + removedChat.codeBlocks, 0, 'a chat goes with its child chats, messages and code blocks');
  assert.deepEqual([out.value.info.index.chats, out.value.info.index.messages, out.value.info.index.codeBlocks], [0, 0, 0]);
  await closePage(page);
});

test('bad input names the record and field and writes nothing', async () => {
  const page = await fresh();
  const out = await run(page, async (G) => {
    const e = await G.create({ name: 'strict', storage: 'memory' });
    await e.add({ chats: [{ id: 1, name: 'Only chat' }] });
    const tries = [
      { messages: [{ id: 1, chat_id: 1, role: 'user', content: 'kept out' }, { id: 2, chat_id: 1, role: 'user', content: 'also', created_at: 5 }] },
      { messages: [{ id: 3, chat_id: 1, role: 'user', content: 'kept out' }, { id: 4, chat_id: 99, role: 'user', content: 'orphan' }] },
      { chats: [{ id: 1, name: 'again' }] },
      [],
    ];
    const errors = [];
    for (const t of tries) {
      try {
        await e.add(t);
        errors.push(null);
      } catch (err) {
        errors.push(err.toJSON());
      }
    }
    return { errors, found: (await e.search('kept OR orphan OR also')).totalCounts, info: await e.info() };
  });
  assert.ifError(out.error);
  const [badType, badRef, dup, notObject] = out.value.errors;
  assert.equal(badType.code, 'write.bad_record');
  assert.deepEqual(badType.where, { record: 'messages[1]', field: 'created_at' });
  assert.equal(badRef.code, 'write.not_found');
  assert.deepEqual(badRef.where, { record: 'messages[1]', field: 'chat_id' });
  assert.equal(dup.code, 'write.duplicate_id');
  assert.deepEqual(dup.where, { record: 'chats[0]', field: 'id' });
  assert.equal(notObject.code, 'write.bad_input');
  assert.equal(out.value.found.messages, 0, 'a refused write leaves nothing behind');
  assert.deepEqual([out.value.info.index.chats, out.value.info.index.messages], [1, 0]);
  // A published index takes no writes.
  await call(page, 'close').catch(() => {});
  const published = await run(page, async (G) => {
    const e = await G.open({ manifestUrl: '/data/manifest.json', storage: 'memory' });
    try {
      await e.add({ chats: [] });
      return null;
    } finally {
      await e.close();
    }
  });
  assert.equal(published.error.code, 'write.read_only');
  await closePage(page);
});

test('a lone surrogate in a write is replaced with a warning, a cycle of chats is refused', async () => {
  const page = await fresh();
  const out = await run(page, async (G) => {
    const e = await G.create({ name: 'unicode', storage: 'memory' });
    const cut = 'tangerine \u{1F600}'.slice(0, -1); // half an emoji
    const summary = await e.add({ chats: [{ id: 1, name: 'Chat' }], messages: [{ id: 1, chat_id: 1, role: 'user', content: `${cut} end` }] });
    const hit = await e.search('tangerine');
    let cycle = null;
    try {
      await e.add({ chats: [{ id: 2, parent_id: 3, name: 'A' }, { id: 3, parent_id: 2, name: 'B' }] });
    } catch (err) {
      cycle = err.toJSON();
    }
    return { summary, content: hit.results.messages[0]?.messages_content, cycle, info: await e.info() };
  });
  assert.ifError(out.error);
  assert.equal(out.value.summary.messages, 1);
  assert.match(out.value.summary.warnings.join(' '), /replaced 1 lone surrogate/);
  assert.equal(out.value.content, 'tangerine \uFFFD end');
  assert.equal(out.value.cycle.code, 'write.chat_cycle');
  assert.equal(out.value.info.index.chats, 1, 'the refused write left nothing');
  await closePage(page);
});

test('where OPFS is not used, IndexedDB keeps every committed write', async () => {
  const page = await fresh();
  const made = await run(
    page,
    async (G, msgs) => {
      const e = await G.create({ name: 'idb-notes', storage: 'indexeddb' });
      await e.add({ chats: [{ id: 7, name: 'Notes' }], messages: msgs });
      await e.remove({ messageIds: [3] });
      const info = await e.info();
      await e.close();
      return info;
    },
    conversation(7, 1, 6, 'archive'),
  );
  assert.ifError(made.error);
  assert.equal(made.value.storage, 'indexeddb');
  await closePage(page);
  const again = await site.blank();
  // 'auto' finds it in IndexedDB.
  const reopened = await run(again, async (G) => {
    const e = await G.open({ name: 'idb-notes' });
    const r = await e.search('archive');
    const info = await e.info();
    await e.close();
    return { n: r.totalCounts.messages, storage: info.storage };
  });
  assert.ifError(reopened.error);
  assert.deepEqual(reopened.value, { n: 5, storage: 'indexeddb' });
  await closePage(again);
});

test('an overlay searches the published index and the page\'s writes as one, and survives a new revision', async () => {
  const page = await fresh();
  publish(site, SAMPLE_INDEX, 'ov');
  const first = await run(page, async (G) => {
    window.engine = await G.open({ manifestUrl: '/ov/manifest.json', name: 'notes' });
    const e = window.engine;
    const n = async (q) => (await e.search(q, { perPage: 50 })).totalCounts.messages;
    const published = await n('error');
    const removed = (await e.search('error')).results.messages[0].messages_id;
    await e.add({ chats: [{ id: 5000, name: 'My notes' }], messages: [{ id: 2999, chat_id: 5000, role: 'user', content: 'an error only zebracorn pages have' }] });
    const withMine = await n('error');
    await e.remove({ messageIds: [removed] });
    const paged = await e.search('error', { perPage: 10, page: 8 });
    return { info: await e.info(), published, withMine, removed, after: await n('error'), mine: await n('zebracorn'), paged: paged.pagination, last: paged.results.messages.length };
  });
  assert.ifError(first.error);
  const v = first.value;
  assert.equal(v.info.overlay.source, 'downloaded');
  assert.equal(v.info.overlay.manifestUrl, `${site.url}ov/manifest.json`);
  assert.equal(v.withMine, v.published + 1, 'one count over both');
  assert.equal(v.after, v.published, 'a published message the page removed is gone');
  assert.equal(v.mine, 1);
  assert.equal(v.paged.totalPages, Math.ceil((v.after + 1) / 10), 'pages run across both (the chats target counts one)');
  await closePage(page);

  // A reload answers from the stored overlay, then a new revision is
  // published at the same URL: the page's writes are applied to it, and
  // its own message 2999 (which the new revision also holds) is matched
  // by id, not doubled.
  const again = await site.blank();
  const stored = await run(again, async (G) => {
    window.engine = await G.open({ manifestUrl: '/ov/manifest.json', name: 'notes', onUpdate: (status) => (window.checked = status) });
    return { info: await window.engine.info(), mine: (await window.engine.search('zebracorn')).totalCounts.messages };
  });
  assert.ifError(stored.error);
  assert.equal(stored.value.info.overlay.source, 'stored');
  assert.equal(stored.value.mine, 1);
  // A stored overlay checks the manifest in the background: nothing new yet.
  await again.waitForFunction(() => window.checked, null, { timeout: 30_000 });
  assert.equal(await again.evaluate(() => window.checked.status), 'current');
  publish(site, path.join(FIXTURES, 'vocab.gsx'), 'ov');
  const swapped = await run(again, async () => {
    const e = window.engine;
    const status = await e.update();
    const r = await e.search('zebracorn');
    return { status, info: await e.info(), mine: r.totalCounts.messages, id: r.results.messages[0]?.messages_id, error: (await e.search('error')).totalCounts.messages };
  });
  assert.ifError(swapped.error);
  assert.equal(swapped.value.status.status, 'updated');
  assert.deepEqual([swapped.value.mine, swapped.value.id], [1, 2999]);
  const removedHeld = v.removed <= 3000 ? 1 : 0; // vocab.gsx holds messages 1 to 3000
  assert.equal(swapped.value.info.index.messages, 3000 - removedHeld, 'message 2999 replaced, not doubled');
  await closePage(again);
});

test('three tabs share one index: two write through the owner, and another takes over when it closes', async () => {
  const owner = await fresh();
  const made = await run(owner, async (G) => {
    window.engine = await G.create({ name: 'shared-chats' });
    await window.engine.add({ chats: [{ id: 1, name: 'Shared' }] });
    return window.engine.info();
  });
  assert.ifError(made.error);
  assert.equal(made.value.tab.owner, true);
  const tabs = [await site.blank(), await site.blank()];
  for (const t of tabs) {
    const joined = await run(t, async (G) => {
      window.engine = await G.open({ name: 'shared-chats' });
      return window.engine.info();
    });
    assert.ifError(joined.error);
    assert.equal(joined.value.tab.owner, false, 'the owner tab keeps the storage');
  }
  // Each of the two tabs adds ten messages, one at a time; the owner tab
  // closes after the first few.
  const writes = tabs.map((t, n) =>
    run(
      t,
      async (G, n) => {
        const done = [];
        for (let i = 0; i < 10; i++) {
          const id = 100 * (n + 1) + i;
          await window.engine.add({ messages: [{ id, chat_id: 1, role: 'user', content: `handover note ${id}` }] });
          done.push(id);
          await new Promise((r) => setTimeout(r, 60));
        }
        return done;
      },
      n,
    ),
  );
  await new Promise((r) => setTimeout(r, 250));
  await closePage(owner);
  const results = await Promise.all(writes);
  for (const r of results) {
    assert.ifError(r.error);
    assert.equal(r.value.length, 10, 'every write resolved');
  }
  const seen = await Promise.all(
    tabs.map((t) =>
      run(t, async () => {
        const r = await window.engine.search('handover', { perPage: 50 });
        return { n: r.totalCounts.messages, owner: (await window.engine.info()).tab.owner };
      }),
    ),
  );
  for (const s of seen) {
    assert.ifError(s.error);
    assert.equal(s.value.n, 20, 'no committed write lost, none applied twice');
  }
  assert.equal(seen.filter((s) => s.value.owner).length, 1, 'one of the two tabs owns the index now');
  for (const t of tabs) await closePage(t);
});
