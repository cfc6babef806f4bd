// Writable indexes in headless Chromium: GitSenseSearch.create({ name }),
// add / update / remove, each one transaction visible to the next search,
// kept in OPFS (or IndexedDB) across a reload, and bad input refused with
// the record and field named and nothing written.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup, call, closePage, clearStorage } from './harness.mjs';

let site;
before(async () => {
  site = await setup();
});
after(async () => {
  await site.close();
});

/** A page on an emptied origin. */
async function fresh() {
  for (const p of site.context.pages()) await closePage(p);
  const page = await site.blank();
  assert.equal(await clearStorage(page), 'ok');
  return page;
}

/** Runs `fn(GitSenseSearch, arg)` in the page (window.engine persists). */
function run(page, fn, arg) {
  return page.evaluate(
    async ({ src, arg }) => {
      const { GitSenseSearch } = await import('/pkg/index.js');
      try {
        // eslint-disable-next-line no-new-func
        return { value: await new Function('GitSenseSearch', 'arg', `return (${src})(GitSenseSearch, arg);`)(GitSenseSearch, arg) };
      } catch (e) {
        return { error: e && e.toJSON ? e.toJSON() : { message: String(e) } };
      }
    },
    { src: fn.toString(), arg },
  );
}

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

const counts = (r) => r.total_counts;

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
  assert.equal(counts(code).code_blocks, 1, 'fenced blocks became code blocks');
  assert.equal(code.results.code_blocks[0].code_blocks_language, 'python');

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
  const twice = await run(again, (G) => G.create({ name: 'chat-app', storage: 'memory' }));
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
      const n = async (q) => (await e.search(q)).total_counts;
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
  assert.equal(removedChat.messages + removedChat.chats + removedChat.code_blocks, 0, 'a chat goes with its child chats, messages and code blocks');
  assert.deepEqual([out.value.info.index.chats, out.value.info.index.messages, out.value.info.index.code_blocks], [0, 0, 0]);
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
    return { errors, found: (await e.search('kept OR orphan OR also')).total_counts, info: await e.info() };
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
    return { n: r.total_counts.messages, storage: info.storage };
  });
  assert.ifError(reopened.error);
  assert.deepEqual(reopened.value, { n: 5, storage: 'indexeddb' });
  await closePage(again);
});
