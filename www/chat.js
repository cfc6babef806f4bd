// The demo's chat-app mode (?mode=chat): the page's own writable index,
// filled from a dropped chat export and from messages typed here, searched
// with the page's search box and results (app.js), its storage and tab
// state shown. Public JS API only: open / create, importFile, add,
// search, info, close, clear.
//
// Export and message text is only ever put into the page as text nodes.

import { GitSenseSearch } from './pkg/index.js';
import { h, formatBytes, plural } from './dom.js';

const $ = (id) => document.getElementById(id);

const STORAGE_NAMES = { opfs: 'OPFS', indexeddb: 'IndexedDB', memory: 'Memory (not kept)' };
// How often a tab asks for the index's state: another tab's writes and a
// change of owner (the owning tab closed) show within this.
const STATE_POLL_MS = 1500;
// After close(), the worker may hold OPFS a moment longer.
const CLEAR_ATTEMPTS = 30;

/** The index called `name`: reopened when it exists, else made. */
async function openOrCreate(name, storage) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await GitSenseSearch.open({ name, storage });
    } catch (e) {
      if (e.code !== 'index.not_found') throw e;
    }
    try {
      return await GitSenseSearch.create({ name, storage });
    } catch (e) {
      // Another tab made it between the two calls: join it.
      if (e.code !== 'index.exists' || attempt > 0) throw e;
    }
  }
}

/** An error's code, message and place as nodes (all text). */
function errorParts(e) {
  const parts = [h('strong', {}, e.message || String(e)), ' ', h('code', { class: 'code-name' }, e.code || 'error')];
  const where = e.where ?? e.location;
  if (where !== undefined && where !== null) {
    const text = typeof where === 'object' ? Object.entries(where).map(([k, v]) => `${k} ${v}`).join(', ') : String(where);
    parts.push(h('span', { class: 'where' }, ` at ${text}`));
  }
  return parts;
}

export class ChatApp {
  /**
   * `onEngine(engine)`: an engine was opened (at start, and again after
   * the index is deleted); `onChange()`: the index's records changed.
   */
  constructor({ name = 'demo-chats', storage = 'auto', onEngine, onChange }) {
    this.name = name;
    this.storage = storage;
    this.onEngine = onEngine;
    this.onChange = onChange;
    this.engine = null;
    this.polling = false;
    this.importing = null; // the AbortController of the import under way
    this.listed = false; // whether the conversations were listed once
  }

  async open() {
    this.engine = await openOrCreate(this.name, this.storage);
    this.engine.addEventListener('error', (e) => this.#fail('chat-state-error', e.detail));
    this.onEngine(this.engine);
    await Promise.all([this.refreshState(), this.refreshChats()]);
    return this.engine;
  }

  /** Wires the panel; call once. */
  attach() {
    $('chat-app').hidden = false;
    const fileInput = $('export-file');
    fileInput.addEventListener('change', () => {
      if (fileInput.files.length) this.import(fileInput.files[0]);
    });
    const drop = $('drop');
    drop.addEventListener('dragover', (e) => {
      e.preventDefault();
      drop.classList.add('dragging');
    });
    drop.addEventListener('dragleave', () => drop.classList.remove('dragging'));
    drop.addEventListener('drop', (e) => {
      e.preventDefault();
      drop.classList.remove('dragging');
      const file = e.dataTransfer?.files?.[0];
      if (file) this.import(file);
    });
    // A file dropped beside the zone must not replace the page.
    window.addEventListener('dragover', (e) => e.preventDefault());
    window.addEventListener('drop', (e) => e.preventDefault());
    $('import-cancel').addEventListener('click', () => this.importing?.abort());

    $('compose-chat').addEventListener('change', () => this.#syncComposer());
    $('compose').addEventListener('submit', (e) => {
      e.preventDefault();
      this.send();
    });
    $('compose-text').addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        $('compose').requestSubmit();
      }
    });
    $('chat-clear').addEventListener('click', () => this.clear());
    setInterval(() => {
      if (document.visibilityState === 'visible') this.refreshState();
    }, STATE_POLL_MS);
    document.addEventListener('visibilitychange', () => this.refreshState());
    this.#syncComposer();
  }

  /** Streams an export file into the index, with progress and a way to stop. */
  async import(file) {
    if (this.importing) return;
    const controller = new AbortController();
    this.importing = controller;
    $('import-error').hidden = true;
    $('import-result').textContent = '';
    $('import-progress').hidden = false;
    $('import-cancel').disabled = false;
    $('export-file').disabled = true;
    const bar = $('import-bar');
    bar.max = file.size || 1;
    bar.value = 0;
    $('import-counts').textContent = `Reading ${file.name}…`;
    try {
      const r = await this.engine.importFile(file, {
        signal: controller.signal,
        onProgress: (p) => {
          bar.max = p.totalBytes || 1;
          bar.value = p.bytesRead;
          $('import-counts').textContent = `${formatBytes(p.bytesRead)} of ${formatBytes(p.totalBytes)} · ${plural(p.chats, 'chat', 'chats')} · ${plural(p.messages, 'message', 'messages')}`;
        },
      });
      const warnings = r.warnings?.length ? ` (${plural(r.warnings.length, 'warning', 'warnings')}: ${r.warnings.slice(0, 3).join('; ')})` : '';
      $('import-result').textContent =
        `Imported ${file.name} (${r.format}): ${plural(r.chats, 'chat', 'chats')}, ${plural(r.messages, 'message', 'messages')}, ${plural(r.codeBlocks, 'code block', 'code blocks')}${warnings}.`;
    } catch (e) {
      this.#fail('import-error', e);
    } finally {
      this.importing = null;
      $('import-progress').hidden = true;
      $('export-file').disabled = false;
      $('export-file').value = '';
      await this.#changed();
    }
  }

  /** Adds the typed message to the chosen conversation (or a new one). */
  async send() {
    const text = $('compose-text').value;
    if (!text.trim()) return;
    const chosen = $('compose-chat').value;
    const name = $('compose-name').value.trim();
    if (chosen === 'new' && !name) {
      $('compose-name').focus();
      return;
    }
    const submit = $('compose-send');
    submit.disabled = true;
    $('compose-error').hidden = true;
    try {
      // Ids are the app's to choose; two tabs may pick the same one at
      // once, and the second then tries the next.
      for (let attempt = 0; ; attempt++) {
        const messageId = (await this.#lastId('messages')) + 1;
        const chatId = chosen === 'new' ? (await this.#lastId('chats')) + 1 : Number(chosen);
        const records = {
          chats: chosen === 'new' ? [{ id: chatId, name, created_at: new Date().toISOString() }] : [],
          messages: [{ id: messageId, chat_id: chatId, role: $('compose-role').value, content: text, created_at: new Date().toISOString() }],
        };
        try {
          const r = await this.engine.add(records);
          $('compose-result').textContent = `Added message ${messageId}${r.codeBlocks ? ` with ${plural(r.codeBlocks, 'code block', 'code blocks')}` : ''}: search for it now.`;
          $('compose-text').value = '';
          await this.refreshChats(chatId);
          break;
        } catch (e) {
          if (e.code !== 'write.duplicate_id' || attempt >= 3) throw e;
        }
      }
    } catch (e) {
      this.#fail('compose-error', e);
    } finally {
      submit.disabled = false;
      await this.#changed();
    }
  }

  /** Deletes the stored index (every index this site stored here) and starts an empty one. */
  async clear() {
    const button = $('chat-clear');
    button.disabled = true;
    $('chat-state-error').hidden = true;
    const old = this.engine;
    this.engine = null;
    let failure = null;
    try {
      await old.close();
      for (let i = 0; ; i++) {
        try {
          await GitSenseSearch.clear();
          break;
        } catch (e) {
          // The closed worker lets go of OPFS in a moment; another tab
          // holding the index does not.
          if (e.code !== 'storage.busy' || i + 1 >= CLEAR_ATTEMPTS) throw e;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      $('compose-result').textContent = '';
      $('import-result').textContent = '';
      // The old conversations are gone; the new index picks its own.
      this.listed = false;
    } catch (e) {
      failure = e;
    }
    try {
      await this.open();
    } catch (e) {
      failure = failure || e;
    }
    button.disabled = false;
    if (failure) {
      if (failure.code === 'storage.busy') failure.message += ' (another tab of this demo has the index open: close it first)';
      this.#fail('chat-state-error', failure);
    }
    await this.#changed();
  }

  /** The largest id of `target` ('chats' or 'messages') in the index, 0 when empty. */
  async #lastId(target) {
    const r = await this.engine.search(`in:${target} sort:id:desc`, { perPage: 1, includeContent: false, highlight: 'none' });
    return r.results[target][0]?.[`${target}_id`] ?? 0;
  }

  /** The conversations to write into: the most recently updated first. */
  async refreshChats(select) {
    const r = await this.engine.search('in:chats sort:updated_at:desc', { perPage: 100, includeContent: false, highlight: 'none' });
    const list = $('compose-chat');
    // The reader's choice stays; the first time, the latest conversation.
    const keep = select !== undefined ? String(select) : this.listed ? list.value : null;
    this.listed = true;
    list.replaceChildren(
      h('option', { value: 'new' }, 'New conversation…'),
      ...r.results.chats.map((c) => h('option', { value: String(c.chats_id) }, c.chat_path || c.chats_name || `Chat ${c.chats_id}`)),
    );
    list.value = [...list.options].some((o) => o.value === keep) ? keep : r.results.chats.length ? String(r.results.chats[0].chats_id) : 'new';
    this.#syncComposer();
  }

  /** Storage, name, size, counts and this tab's part, as info() says now. */
  async refreshState() {
    if (this.polling || !this.engine) return;
    this.polling = true;
    try {
      const info = await this.engine.info();
      const owner = info.tab ? info.tab.owner : null;
      const rows = [
        ['Storage', STORAGE_NAMES[info.storage] || info.storage, 'storage'],
        ['Index', info.name, 'name'],
        ['Size', formatBytes(info.sizeBytes), 'size'],
        ['Chats', info.index.chats.toLocaleString(), 'chats'],
        ['Messages', info.index.messages.toLocaleString(), 'messages'],
        ['Code blocks', info.index.codeBlocks.toLocaleString(), 'code-blocks'],
        ['This tab', owner === null ? 'has the index to itself' : owner ? 'owns the index (its worker holds the storage)' : 'relays through the tab that owns the index', 'tab'],
      ];
      $('chat-state-list').replaceChildren(...rows.flatMap(([label, value, key]) => [h('dt', {}, label), h('dd', { 'data-key': key }, value)]));
      $('chat-state').dataset.owner = owner === null ? 'alone' : String(owner);
      $('chat-state').dataset.storage = info.storage;
      $('chat-state-list').title = info.storageReason || '';
    } catch (e) {
      // An owner handing over answers after a moment; closed engines say so.
      if (e.code !== 'engine.closed') this.#fail('chat-state-error', e);
    } finally {
      this.polling = false;
    }
  }

  async #changed() {
    await Promise.all([this.refreshState(), this.refreshChats().catch((e) => this.#fail('chat-state-error', e))]);
    this.onChange();
  }

  #syncComposer() {
    const isNew = $('compose-chat').value === 'new';
    $('compose-name-row').hidden = !isNew;
    $('compose-name').required = isNew;
  }

  #fail(id, e) {
    const box = $(id);
    box.replaceChildren(...errorParts(e));
    box.hidden = false;
  }
}
