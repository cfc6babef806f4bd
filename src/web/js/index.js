// gitsense-search in the browser: the page-side API.
//
//   import { GitSenseSearch } from './pkg/index.js';
//   const engine = await GitSenseSearch.open({ manifestUrl: '/search/manifest.json' });
//   const results = await engine.search('payment lang:js');
//
// The engine runs in a dedicated Web Worker this module starts (worker.js),
// so downloads, storage and queries never block the page. Every failure is
// a GitSenseSearchError with a dotted `code`, a `message` and, for query
// errors, the character `position` in the query.

/** A structured error: `{ code, message, position }`. */
export class GitSenseSearchError extends Error {
  constructor({ code, message, position, location } = {}) {
    super(message || code || 'unknown error');
    this.name = 'GitSenseSearchError';
    this.code = code || 'internal.error';
    this.position = Number.isInteger(position) ? position : null;
    if (location) this.location = location;
  }

  toJSON() {
    const o = { code: this.code, message: this.message, position: this.position };
    if (this.location) o.location = this.location;
    return o;
  }
}

const STORAGE_MODES = ['auto', 'opfs', 'indexeddb', 'memory', 'lazy'];

function startWorker() {
  return new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'gitsense-search' });
}

/** Request/response over postMessage, plus worker events. */
class Channel {
  constructor(worker, onEvent) {
    this.worker = worker;
    this.pending = new Map();
    this.nextId = 1;
    this.dead = null;
    worker.onmessage = ({ data }) => {
      if (data && data.id !== undefined) {
        const p = this.pending.get(data.id);
        if (!p) return;
        this.pending.delete(data.id);
        if (data.ok) p.resolve(data.value);
        else p.reject(new GitSenseSearchError(data.error));
      } else if (data && data.type) {
        if (data.type === 'crash') this.fail(data.error);
        onEvent(data);
      }
    };
    worker.onerror = (e) => {
      e.preventDefault();
      const error = { code: 'engine.load_failed', message: `the search worker failed: ${e.message || 'script error'}` };
      this.fail(error);
      onEvent({ type: 'crash', error });
    };
    worker.onmessageerror = () => this.fail({ code: 'internal.error', message: 'a message from the search worker could not be read' });
  }

  fail(error) {
    this.dead = this.dead || error;
    for (const p of this.pending.values()) p.reject(new GitSenseSearchError(error));
    this.pending.clear();
  }

  call(op, args) {
    if (this.dead) return Promise.reject(new GitSenseSearchError(this.dead));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, op, args });
    });
  }

  terminate() {
    this.fail({ code: 'engine.closed', message: 'the search engine has been closed' });
    this.worker.terminate();
  }
}

/**
 * An open index. Events (EventTarget): 'progress' (detail: { phase, loaded,
 * total }), 'update' (detail: { status, revision }), 'updateerror'
 * (detail: GitSenseSearchError), 'fill' (lazy mode: the copy in OPFS is
 * complete and answers now; detail: info()), 'fillerror' (detail:
 * GitSenseSearchError; the lazy index keeps answering), 'error' (detail:
 * GitSenseSearchError: the engine crashed and must be reopened).
 */
export class GitSenseSearch extends EventTarget {
  /**
   * Opens the index a manifest describes: from browser storage when it is
   * there (no network needed); else, with storage 'auto' and OPFS, by
   * reading it lazily over HTTP Range requests while a copy fills OPFS in
   * the background; else by downloading it.
   */
  static async open({ manifestUrl, storage = 'auto', lazyFill = true, onProgress, onUpdate, onError } = {}) {
    if (typeof manifestUrl !== 'string' || !manifestUrl) {
      throw new GitSenseSearchError({ code: 'options.invalid', message: 'open() needs a manifestUrl' });
    }
    if (!STORAGE_MODES.includes(storage)) {
      throw new GitSenseSearchError({
        code: 'options.invalid',
        message: `storage must be one of ${STORAGE_MODES.join(', ')}, not ${JSON.stringify(storage)}`,
      });
    }
    const engine = new GitSenseSearch();
    if (onProgress) engine.addEventListener('progress', (e) => onProgress(e.detail));
    if (onUpdate) engine.addEventListener('update', (e) => onUpdate(e.detail));
    if (onError) {
      engine.addEventListener('updateerror', (e) => onError(e.detail));
      engine.addEventListener('fillerror', (e) => onError(e.detail));
      engine.addEventListener('error', (e) => onError(e.detail));
    }
    const base = typeof document !== 'undefined' ? document.baseURI : self.location.href;
    const url = new URL(manifestUrl, base).href;
    engine.#channel = new Channel(startWorker(), (m) => engine.#event(m));
    try {
      await engine.#channel.call('open', { manifestUrl: url, storage, lazyFill: lazyFill !== false });
    } catch (e) {
      engine.#channel.terminate();
      throw e;
    }
    return engine;
  }

  /** Removes every stored index (OPFS and IndexedDB) of this origin. */
  static async clear() {
    const channel = new Channel(startWorker(), () => {});
    try {
      await channel.call('clear');
    } finally {
      channel.terminate();
    }
  }

  #channel = null;

  #event(m) {
    const detail = m.error ? new GitSenseSearchError(m.error) : m.detail;
    const type = m.type === 'crash' ? 'error' : m.type;
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }

  #call(op, args) {
    if (!this.#channel) return Promise.reject(new GitSenseSearchError({ code: 'engine.closed', message: 'the search engine has been closed' }));
    return this.#channel.call(op, args);
  }

  /** The results object as JSON text, byte for byte what the CLI prints. */
  async searchJson(query, options = {}) {
    if (typeof query !== 'string') {
      throw new GitSenseSearchError({ code: 'options.invalid', message: 'the query must be a string' });
    }
    const r = await this.#call('search', { query, options: JSON.stringify(options ?? {}) });
    this.lastSearchMs = r.ms;
    return r.json;
  }

  /**
   * Searches: `options` are { page, perPage, currentChatId, highlight:
   * 'html'|'raw'|'none', includeContent, maxTokens, cursor, trace }.
   */
  async search(query, options = {}) {
    return JSON.parse(await this.searchJson(query, options));
  }

  /** Storage in use and why, index revision, counts, sizes, timings. */
  info() {
    return this.#call('info');
  }

  /**
   * Checks the manifest now; a changed index is downloaded, verified and
   * swapped in while the current one keeps answering. Resolves
   * { status: 'current'|'updated'|'offline', revision }.
   */
  update() {
    return this.#call('update');
  }

  /** The query language's filters and directives (for help screens). */
  syntax() {
    return this.#call('syntax');
  }

  /** Names of the index files in storage. */
  storedFiles() {
    return this.#call('files');
  }

  /** Closes the index, releases storage and stops the worker. */
  async close() {
    const channel = this.#channel;
    if (!channel) return;
    this.#channel = null;
    try {
      await channel.call('close');
    } catch {
      // A crashed worker has nothing to release.
    }
    channel.terminate();
  }

  /** For tests: makes the engine panic, to check the error path. */
  _panicForTests() {
    return this.#call('__panic');
  }
}

export default GitSenseSearch;
