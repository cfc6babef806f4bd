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
  constructor({ code, message, position, location, where } = {}) {
    super(message || code || 'unknown error');
    this.name = 'GitSenseSearchError';
    this.code = code || 'internal.error';
    this.position = Number.isInteger(position) ? position : null;
    if (location) this.location = location;
    // A write's bad record: { record: 'messages[3]', field: 'chat_id' }.
    if (where) this.where = where;
  }

  toJSON() {
    const o = { code: this.code, message: this.message, position: this.position };
    if (this.location) o.location = this.location;
    if (this.where) o.where = this.where;
    return o;
  }
}

const STORAGE_MODES = ['auto', 'opfs', 'indexeddb', 'memory', 'lazy'];
/** Where a writable index (create / open({ name })) can live. */
const WRITABLE_STORAGE = ['auto', 'opfs', 'indexeddb', 'memory'];

/**
 * The engine's files (worker.js and the wasm modules) are found next to
 * this module, as `new URL('./worker.js', import.meta.url)` written out in
 * full: the form bundlers that copy assets (Vite, webpack, Rollup with
 * its plugin) recognise and rewrite. A bundler that does not copy them
 * (esbuild) leaves the URLs pointing next to its bundle, where the files
 * must then be copied, or the page says where they are with `assetsUrl`
 * (an absolute or page-relative URL of the directory holding them): its
 * directory URL, checked, or null.
 */
function assetsOption(assetsUrl) {
  if (assetsUrl === undefined || assetsUrl === null) return null;
  if (typeof assetsUrl !== 'string' && !(assetsUrl instanceof URL)) {
    throw new GitSenseSearchError({ code: 'options.invalid', message: `assetsUrl must be a URL string, not ${JSON.stringify(assetsUrl)}` });
  }
  let base;
  try {
    base = new URL(String(assetsUrl), pageBase());
  } catch {
    throw new GitSenseSearchError({ code: 'options.invalid', message: `assetsUrl is not a URL: ${JSON.stringify(String(assetsUrl))}` });
  }
  // A directory: 'static/gss' and 'static/gss/' name the same one.
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  return base;
}

/** The URL relative URLs the page passes are resolved against. */
function pageBase() {
  return typeof document !== 'undefined' ? document.baseURI : globalThis.location.href;
}

/**
 * Starts compiling the wasm module on the page (streaming compilation runs
 * off the main thread) while the worker's own scripts load, two round
 * trips sooner than the worker could; resolves the Module, or null (the
 * worker then loads it itself).
 */
function compileModule(assets) {
  if (typeof WebAssembly === 'undefined' || !WebAssembly.compileStreaming) return Promise.resolve(null);
  const url = assets ? new URL('gitsense_search_bg.wasm', assets) : new URL('./gitsense_search_bg.wasm', import.meta.url);
  return WebAssembly.compileStreaming(fetch(url, { credentials: 'same-origin' })).catch(() => null);
}

/**
 * Lazy mode's first requests, started by the page the moment open() is
 * called, while the worker's own scripts load (two to three round trips):
 * the manifest, then the hot pages and the range probe at once. No index
 * byte is fetched when this index is already stored (a repeat visit) or
 * when the storage mode never reads lazily. Resolves what
 * lazy.js prefetch() resolves (for a stored index only the manifest text,
 * which the worker's update check then uses), or null (the worker then
 * fetches itself).
 */
function prefetchIndex(url, storage, requestTimeoutMs, onManifest) {
  if (storage !== 'auto' && storage !== 'lazy') return Promise.resolve(null);
  // The manifest at once, while lazy.js loads and the stored-index check
  // runs (a repeat visit fetches it anyway, to look for a newer index).
  // Bounded like every request (a stalled manifest leaves the worker to
  // fetch it itself, and fail with network.timeout).
  const timeout = typeof AbortSignal !== 'undefined' && AbortSignal.timeout ? { signal: AbortSignal.timeout(requestTimeoutMs ?? 10000) } : {};
  const manifest = fetch(url, { cache: 'no-cache', credentials: 'same-origin', ...timeout }).catch(() => null);
  // Whether this page's origin ever opened this index: if not (no mark in
  // localStorage), nothing can be stored yet, and the hot pages are asked
  // for at once rather than after the stored-index check (OPFS's first
  // call on a new profile took 55-98 ms here). The check still runs, in
  // parallel, so a copy stored while the mark was lost (localStorage
  // cleared alone) is still found; only the hot pages' and the range
  // probes' bytes are then spent.
  let visited = true;
  try {
    const key = `gitsense-search:${url}`;
    visited = localStorage.getItem(key) !== null;
    if (!visited) localStorage.setItem(key, '1');
  } catch {
    // No localStorage (a worker, or storage denied): check first.
  }
  // A first visit also asks for the hot pages at once, under the name
  // publish gives them next to the manifest (manifest.hot.gz, with the
  // manifest's text inside: lazy.js prefetch() uses them only if it is the
  // manifest's), instead of one round trip after the manifest.
  // (Not without a gzip decompressor: the hot pages are not used then.)
  const firstVisit = visited || typeof DecompressionStream === 'undefined' ? null : firstVisitUrl(url);
  const firstVisitFile = firstVisit ? fetch(firstVisit, { cache: 'no-cache', credentials: 'same-origin', ...timeout }).catch(() => null) : null;
  return import('./lazy.js')
    .then(async ({ prefetch, handOff, isMarkedStored, scopeOf }) => {
      const storedAnswer = async () => {
        // Stored: no index bytes; the manifest serves the update check.
        const res = await manifest;
        return handOff({ manifest: res && res.ok ? await res.clone().text() : null, stored: true });
      };
      const stored = scopeOf(url)
        .then(isMarkedStored)
        .catch(() => false);
      if (visited) return (await stored) ? storedAnswer() : prefetch(url, requestTimeoutMs, manifest, onManifest);
      const fetching = prefetch(url, requestTimeoutMs, manifest.then((r) => r && r.clone()), onManifest, firstVisitFile);
      return (await stored) ? storedAnswer() : fetching;
    })
    .catch(() => null);
}

/** Where publish puts the first visit's file for the manifest at `url`
 * (its name with `.json` replaced by `.hot.gz`), or null. */
function firstVisitUrl(url) {
  const u = new URL(url);
  if (!u.pathname.endsWith('.json')) return null;
  u.pathname = u.pathname.slice(0, -'.json'.length) + '.hot.gz';
  u.hash = '';
  return u.href;
}

/** Refuses, with a coded error, where the engine cannot run at all (Node, Deno without workers, old browsers). */
function requireBrowser() {
  if (typeof Worker !== 'function' || typeof WebAssembly !== 'object' || typeof globalThis.location === 'undefined') {
    const where = typeof process === 'object' && process?.versions?.node ? `Node.js ${process.versions.node}` : 'this environment';
    throw new GitSenseSearchError({
      code: 'environment.unsupported',
      message: `gitsense-search runs in a browser with Web Workers and WebAssembly; ${where} has no Worker or page location (to search an index outside a browser, use the gitsense-search command line)`,
    });
  }
}

function startWorker(assets) {
  // Each branch spelled out: bundlers only rewrite this exact form.
  const worker = assets
    ? new Worker(new URL('worker.js', assets), { type: 'module', name: 'gitsense-search' })
    : new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'gitsense-search' });
  return worker;
}

/** Where the worker script was looked for, for the error when it fails to
 * load (not in the `new URL` form: a bundler would copy the file for it). */
function workerUrl(assets) {
  return assets ? new URL('worker.js', assets).href : `worker.js beside ${import.meta.url}`;
}

/** Request/response over postMessage, plus worker events. */
class Channel {
  constructor(worker, onEvent, scriptUrl) {
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
      // A worker that never started (its script missing: a bundler that
      // did not copy it) gets an event without a message.
      const message = e.message
        ? `the search worker failed: ${e.message}`
        : `the search worker could not start (${scriptUrl}): is worker.js served there (with the wasm files beside it)? A bundle that does not copy them needs them copied next to it, or the assetsUrl option`;
      const error = { code: 'engine.load_failed', message };
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

/** How long a tab waits for the tab owning a shared index to answer (it may be taking over from one that closed). */
const OWNER_WAIT_MS = 15000;

/**
 * A writable index shared by the tabs of an origin. One tab owns it: its
 * worker holds the storage (a worker's OPFS access handles are
 * exclusive), elected with a Web Lock named after the index; the other
 * tabs send their calls to the owner over a BroadcastChannel and get the
 * answers back. When the owner's tab closes, the browser releases its
 * lock and the tab that queued first for it takes over: it opens the
 * index from storage (every write that resolved was committed there) and
 * announces itself, and the others send it the calls the old owner left
 * unanswered. A write sent again carries the key of its first attempt, so
 * one the old owner committed is not applied twice. The same interface
 * as Channel (call, terminate).
 */
class SharedIndex {
  static supported() {
    return typeof navigator !== 'undefined' && navigator.locks && typeof BroadcastChannel === 'function' && typeof crypto !== 'undefined' && crypto.randomUUID;
  }

  /** Joins the tabs sharing `key`: owns it (opening it with `start(create)`) if no tab does, else relays to the owner. */
  static async join(key, start, create, onEvent) {
    const shared = new SharedIndex(key, start, onEvent);
    try {
      if (await shared.#lock(true)) {
        await shared.#own(create);
      } else {
        if (create) {
          throw new GitSenseSearchError({ code: 'index.exists', message: 'another tab has this writable index open: open({ name }) joins it' });
        }
        await shared.#follow();
      }
    } catch (e) {
      shared.terminate();
      throw e;
    }
    return shared;
  }

  constructor(key, start, onEvent) {
    this.lockName = `gitsense-search:${key}`;
    this.start = start;
    this.onEvent = onEvent;
    this.tab = crypto.randomUUID();
    this.bc = new BroadcastChannel(this.lockName);
    this.bc.onmessage = ({ data }) => this.#message(data);
    this.local = null; // the Channel to this tab's worker, while it owns the index
    this.owner = null; // the owning tab's id
    this.pending = new Map(); // calls sent to the owner, not answered yet
    this.nextId = 1;
    this.release = null; // lets go of the lock
    this.abort = new AbortController(); // drops a queued lock request
    this.closed = false;
    this.ownerKnown = null;
  }

  /** Requests the lock: `now` only if free (resolves whether it was got); else queued, resolving when got. */
  #lock(now) {
    return new Promise((resolve, reject) => {
      const options = now ? { ifAvailable: true } : { signal: this.abort.signal };
      navigator.locks
        .request(this.lockName, options, (lock) => {
          if (!lock || this.closed) {
            resolve(false);
            return undefined;
          }
          resolve(true);
          return new Promise((r) => {
            this.release = r;
          });
        })
        .catch((e) => (this.closed ? resolve(false) : reject(e)));
    });
  }

  async #own(create) {
    // A closed owner's worker may hold the storage a moment longer.
    const until = Date.now() + OWNER_WAIT_MS;
    for (;;) {
      try {
        this.local = await this.start(create);
        break;
      } catch (e) {
        if (e.code !== 'storage.busy' || Date.now() > until) throw e;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    this.owner = this.tab;
    this.bc.postMessage({ type: 'owner', tab: this.tab });
    // Calls this tab had sent to the owner that left.
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      this.local.call(p.op, p.args).then(p.resolve, p.reject);
    }
  }

  async #follow() {
    const known = new Promise((resolve) => {
      this.ownerKnown = resolve;
    });
    this.bc.postMessage({ type: 'hello', tab: this.tab });
    const timeout = new Promise((_, reject) =>
      setTimeout(() => reject(new GitSenseSearchError({ code: 'storage.busy', message: `the tab that has this writable index open did not answer within ${OWNER_WAIT_MS} ms` })), OWNER_WAIT_MS),
    );
    await Promise.race([known, timeout]);
    // Queue for the index: this tab takes over when the owner leaves.
    this.#lock(false).then(
      (got) => {
        if (got && !this.closed) this.#own(false).catch((e) => this.onEvent({ type: 'crash', error: { code: e.code || 'internal.error', message: e.message } }));
      },
      () => {},
    );
  }

  #message(m) {
    if (!m || this.closed) return;
    if (m.type === 'owner') {
      this.owner = m.tab;
      if (this.ownerKnown) this.ownerKnown();
      // The calls the previous owner left unanswered go to this one.
      for (const id of this.pending.keys()) this.#send(id);
    } else if (m.type === 'hello' && this.local) {
      this.bc.postMessage({ type: 'owner', tab: this.tab });
    } else if (m.type === 'req' && m.to === this.tab && this.local) {
      const reply = (ok, v) => this.bc.postMessage({ type: 'res', to: m.from, id: m.id, ok, [ok ? 'value' : 'error']: v });
      this.local.call(m.op, m.args).then(
        (value) => reply(true, value),
        (e) => reply(false, e && e.toJSON ? e.toJSON() : { code: 'internal.error', message: String(e) }),
      );
    } else if (m.type === 'res' && m.to === this.tab) {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.value);
      else p.reject(new GitSenseSearchError(m.error));
    } else if (m.type === 'event' && !this.local) {
      this.onEvent(m.event);
    }
  }

  #send(id) {
    const p = this.pending.get(id);
    if (p && this.owner && this.owner !== this.tab) this.bc.postMessage({ type: 'req', to: this.owner, from: this.tab, id, op: p.op, args: p.args });
  }

  call(op, args) {
    if (this.closed) return Promise.reject(new GitSenseSearchError({ code: 'engine.closed', message: 'the search engine has been closed' }));
    const tagged = (v) => (op === 'info' && v && typeof v === 'object' ? { ...v, tab: { owner: Boolean(this.local) } } : v);
    if (this.local) return this.local.call(op, args).then(tagged);
    // Closing a tab that does not own the index closes nothing but its link.
    if (op === 'close') return Promise.resolve(null);
    // A write relayed keeps one key through every attempt (see the class).
    const sent = op === 'write' && !args.key ? { ...args, key: crypto.randomUUID() } : args;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { op, args: sent, resolve, reject });
      this.#send(id);
    }).then(tagged);
  }

  /** Events of the owner's worker reach every tab. */
  relay(m) {
    if (this.local && !this.closed) this.bc.postMessage({ type: 'event', event: m });
  }

  terminate() {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort();
    for (const p of this.pending.values()) p.reject(new GitSenseSearchError({ code: 'engine.closed', message: 'the search engine has been closed' }));
    this.pending.clear();
    if (this.local) this.local.terminate();
    this.local = null;
    if (this.release) this.release();
    this.bc.close();
  }
}

/** A thrown value in words, whatever it is. */
function describe(e) {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  if (e && typeof e === 'object' && typeof e.message === 'string') return e.message;
  try {
    return String(e);
  } catch {
    return Object.prototype.toString.call(e);
  }
}

function llmFailed(where, message, cause) {
  const e = new GitSenseSearchError({ code: 'assist.llm_failed', message: `the llm callback failed in ${where}: ${message}`, location: where });
  if (cause !== undefined) e.cause = cause;
  return e;
}

/** JSON text of an argument, or options.invalid naming it. */
function toJson(value, what) {
  try {
    return JSON.stringify(value ?? {});
  } catch (e) {
    throw new GitSenseSearchError({ code: 'options.invalid', message: `${what} cannot be sent to the worker as JSON: ${describe(e)}` });
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
/** open({ offline }): when lazy mode copies the whole index into OPFS. */
const OFFLINE_POLICIES = ['auto', 'always', 'never'];
const VISITS_KEY = 'gitsense-search:visits:';

/**
 * This browser's visits to the index at `url`, this one included: a visit
 * is a tab's session (sessionStorage marks it counted, so moving between
 * the pages of a site is one visit), the count is kept in localStorage.
 * 1 where neither is available (a worker, storage blocked).
 */
function countVisit(url) {
  try {
    const key = VISITS_KEY + url;
    // A whole number the engine takes (src/visit.rs), whatever the
    // stored text.
    let n = Math.min(Number.parseInt(localStorage.getItem(key), 10) || 0, 1e9);
    if (!sessionStorage.getItem(key)) {
      n += 1;
      localStorage.setItem(key, String(n));
      sessionStorage.setItem(key, '1');
    }
    return Math.max(n, 1);
  } catch {
    return 1;
  }
}

/** Whether the reader pays for bytes: Save-Data, or a cellular connection. */
function metered() {
  const c = typeof navigator !== 'undefined' ? navigator.connection : undefined;
  return Boolean(c && (c.saveData || c.type === 'cellular'));
}

export class GitSenseSearch extends EventTarget {
  /**
   * Opens the index a manifest describes: from browser storage when it is
   * there (no network needed); else, with storage 'auto' and OPFS, by
   * reading it lazily over HTTP Range requests while a copy fills OPFS in
   * the background; else by downloading it.
   */
  static async open({ manifestUrl, name, storage = 'auto', lazyFill = true, offline, requestTimeoutMs, firstQuery, assetsUrl, onProgress, onUpdate, onError } = {}) {
    requireBrowser();
    if (name !== undefined) {
      // A writable index, or with manifestUrl an overlay over that
      // published index (a copy of it holding the page's writes too).
      if (manifestUrl !== undefined && (typeof manifestUrl !== 'string' || !manifestUrl)) {
        throw new GitSenseSearchError({ code: 'options.invalid', message: `manifestUrl must be a URL string, not ${JSON.stringify(manifestUrl)}` });
      }
      const url = manifestUrl === undefined ? undefined : new URL(manifestUrl, pageBase()).href;
      return GitSenseSearch.#openLocal({ name, storage, assetsUrl, onError, onProgress, onUpdate, create: false, manifestUrl: url, requestTimeoutMs });
    }
    if (typeof manifestUrl !== 'string' || !manifestUrl) {
      throw new GitSenseSearchError({ code: 'options.invalid', message: 'open() needs a manifestUrl (a published index) or a name (a writable index)' });
    }
    if (!STORAGE_MODES.includes(storage)) {
      throw new GitSenseSearchError({
        code: 'options.invalid',
        message: `storage must be one of ${STORAGE_MODES.join(', ')}, not ${JSON.stringify(storage)}`,
      });
    }
    if (requestTimeoutMs !== undefined && !(Number.isInteger(requestTimeoutMs) && requestTimeoutMs >= 1 && requestTimeoutMs <= 600000)) {
      throw new GitSenseSearchError({
        code: 'options.invalid',
        message: `requestTimeoutMs must be an integer from 1 to 600000 (milliseconds), not ${JSON.stringify(requestTimeoutMs)}`,
      });
    }
    // lazyFill: false is the older spelling of offline: 'never'.
    const policy = offline ?? (lazyFill === false ? 'never' : 'auto');
    if (!OFFLINE_POLICIES.includes(policy)) {
      throw new GitSenseSearchError({
        code: 'options.invalid',
        message: `offline must be one of ${OFFLINE_POLICIES.join(', ')}, not ${JSON.stringify(offline)}`,
      });
    }
    // firstQuery is still accepted, and checked, but asks for nothing: the
    // first search's pages come from the engine's warm-up, planned in wasm
    // (a guess made in JS before the module was in gained no more than a
    // visit's noise; BENCHMARKS.md).
    if (firstQuery !== undefined && firstQuery !== null && typeof firstQuery !== 'string') {
      throw new GitSenseSearchError({ code: 'options.invalid', message: `firstQuery must be a string, not ${JSON.stringify(firstQuery)}` });
    }
    const assets = assetsOption(assetsUrl);
    const engine = new GitSenseSearch();
    engine.#listen({ onProgress, onUpdate, onError });
    const url = new URL(manifestUrl, pageBase()).href;
    const now = () => performance.timeOrigin + performance.now();
    engine.#startup.pageOpen = now();
    const worker = startWorker(assets);
    const module = compileModule(assets);
    // The manifest goes ahead of the hot pages: the worker opens the OPFS
    // fill files meanwhile.
    const prefetched = prefetchIndex(url, storage, requestTimeoutMs, (text) => worker.postMessage({ type: 'manifest', text }));
    engine.#channel = new Channel(worker, (m) => engine.#event(m), workerUrl(assets));
    try {
      const offlineVisit = { policy, visits: countVisit(url), metered: metered() };
      const opened = engine.#channel.call('open', { manifestUrl: url, storage, offline: offlineVisit, requestTimeoutMs, pageCompiles: true, pagePrefetches: true });
      prefetched.then((value) => {
        if (value && value.hot) engine.#startup.pageHot = now();
        try {
          worker.postMessage({ type: 'prefetched', value }, value && value.hot ? [value.hot.buffer] : []);
        } catch {
          worker.postMessage({ type: 'prefetched', value: null });
        }
      });
      module.then(
        (m) => {
          if (m) engine.#startup.pageCompiled = now();
          try {
            worker.postMessage({ type: 'module', module: m });
          } catch {
            worker.postMessage({ type: 'module', module: null });
          }
        },
        () => worker.postMessage({ type: 'module', module: null }),
      );
      await opened;
    } catch (e) {
      engine.#channel.terminate();
      throw e;
    }
    return engine;
  }

  /**
   * Makes a writable index of the page's own, called `name` (letters,
   * digits, '-', '_', '.'): no manifest; records come from add(),
   * update() and remove(). `storage`: 'auto' (OPFS, else IndexedDB),
   * 'opfs', 'indexeddb' or 'memory'. Fails with index.exists when there
   * is one of that name already (open({ name }) opens it).
   */
  static async create({ name, storage = 'auto', assetsUrl, onError } = {}) {
    requireBrowser();
    return GitSenseSearch.#openLocal({ name, storage, assetsUrl, onError, create: true });
  }

  /** Wires open()'s callbacks to the engine's events (a writable index
   * never sends 'fillerror'). */
  #listen({ onProgress, onUpdate, onError }) {
    if (onProgress) this.addEventListener('progress', (e) => onProgress(e.detail));
    if (onUpdate) this.addEventListener('update', (e) => onUpdate(e.detail));
    if (onError) {
      for (const type of ['updateerror', 'fillerror', 'error']) this.addEventListener(type, (e) => onError(e.detail));
    }
  }

  static async #openLocal({ name, storage, assetsUrl, onError, onProgress, onUpdate, create, manifestUrl, requestTimeoutMs }) {
    if (typeof name !== 'string' || !name) {
      throw new GitSenseSearchError({ code: 'options.invalid', message: `a writable index needs a name, not ${JSON.stringify(name)}` });
    }
    if (!WRITABLE_STORAGE.includes(storage)) {
      throw new GitSenseSearchError({
        code: 'options.invalid',
        message: `a writable index's storage is one of ${WRITABLE_STORAGE.join(', ')}, not ${JSON.stringify(storage)}`,
      });
    }
    const assets = assetsOption(assetsUrl);
    const engine = new GitSenseSearch();
    engine.#listen({ onProgress, onUpdate, onError });
    engine.#startup.pageOpen = performance.timeOrigin + performance.now();
    const onEvent = (m) => {
      engine.#event(m);
      if (engine.#channel instanceof SharedIndex) engine.#channel.relay(m);
    };
    // The engine of this tab: a worker that opens the index.
    const start = async (create) => {
      const channel = new Channel(startWorker(assets), onEvent, workerUrl(assets));
      try {
        await channel.call('openLocal', { name, storage, create, manifestUrl, requestTimeoutMs });
      } catch (e) {
        channel.terminate();
        throw e;
      }
      return channel;
    };
    // Kept in browser storage, the index is shared with the origin's other
    // tabs (one worker at a time can hold OPFS); in memory it is this tab's.
    engine.#channel = storage !== 'memory' && SharedIndex.supported() ? await SharedIndex.join(`${manifestUrl || ''}#${name}`, start, create, onEvent) : await start(create);
    return engine;
  }

  /**
   * Writable index: adds records `{ chats, messages, codeBlocks }` (the
   * model's fields: a chat { id, name, parent_id, ... }, a message { id,
   * chat_id, role, content, ... }, a code block { id, message_id,
   * content, ... }; a message's fenced blocks become code blocks by
   * themselves). One transaction: all or nothing; once the promise
   * resolves the records are stored and the next search sees them.
   * Resolves { chats, messages, codeBlocks, revision }: rows written.
   * A bad record rejects with write.bad_record (write.duplicate_id,
   * write.not_found) and `where: { record: 'messages[3]', field:
   * 'chat_id' }`, and nothing is written.
   */
  add(records) {
    return this.#write('add', records);
  }

  /**
   * Writable index: removes { chatIds, messageIds, blockIds } (a chat
   * with its messages, code blocks and child chats; a message with its
   * code blocks); ids not in the index are skipped.
   */
  remove(ids) {
    return this.#write('remove', ids);
  }

  /**
   * Writable index (or overlay): imports a chat export (a File or Blob:
   * ChatGPT's or Claude's conversations.json, ShareGPT, `messages`
   * arrays, as JSON or JSON Lines; the format is told by the content).
   * The worker reads it as a stream, never whole. All or nothing: a bad
   * or truncated file, or an abort through `signal`, rejects (import.*
   * codes; `where: { byte, element, line }` when the error has a place)
   * and leaves the index as it was. `onProgress({ bytesRead, totalBytes,
   * chats, messages, codeBlocks })` after each stored batch. Ids are
   * numbered past the index's largest. Resolves { format, chats,
   * messages, codeBlocks, warnings, revision }: rows added (chats: one
   * per conversation and the export's own). `tuning` is for benchmarks:
   * { batchMessages, cacheMib, ftsBufferMib } (src/import.rs).
   */
  async importFile(file, { onProgress, signal, tuning } = {}) {
    if (typeof Blob === 'undefined' || !(file instanceof Blob)) {
      throw new GitSenseSearchError({ code: 'import.bad_input', message: `importFile() takes a File or Blob, not ${file === null ? 'null' : typeof file}` });
    }
    if (onProgress !== undefined && typeof onProgress !== 'function') {
      throw new GitSenseSearchError({ code: 'options.invalid', message: 'onProgress must be a function' });
    }
    const aborted = () => new GitSenseSearchError({ code: 'import.aborted', message: 'the import was aborted: nothing was imported' });
    if (signal && signal.aborted) throw aborted();
    const importId = crypto.randomUUID();
    const totalBytes = file.size;
    const onEvent = (e) => {
      const d = e.detail;
      if (!d || d.importId !== importId || !onProgress) return;
      try {
        onProgress({ bytesRead: d.bytesRead, totalBytes, chats: d.chats, messages: d.messages, codeBlocks: d.codeBlocks });
      } catch {
        // A throwing callback must not break the import.
      }
    };
    const onAbort = () => this.#call('importAbort', { importId }).catch(() => {});
    this.addEventListener('importprogress', onEvent);
    if (signal) signal.addEventListener('abort', onAbort);
    try {
      const s = await this.#call('importFile', { file, importId, tuning });
      return { format: s.format, chats: s.chats, messages: s.messages, codeBlocks: s.codeBlocks, warnings: s.warnings, revision: s.revision };
    } finally {
      this.removeEventListener('importprogress', onEvent);
      if (signal) signal.removeEventListener('abort', onAbort);
    }
  }

  async #write(op, value) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new GitSenseSearchError({ code: 'write.bad_input', message: `${op}() takes an object, not ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}` });
    }
    const summary = await this.#call('write', { op, json: toJson(value, `the records given to ${op}()`) });
    const out = { chats: summary.chats, messages: summary.messages, codeBlocks: summary.codeBlocks, revision: summary.revision };
    // What was repaired in the records (lone surrogates), only when something was.
    if (summary.warnings && summary.warnings.length) out.warnings = summary.warnings;
    return out;
  }

  /**
   * Removes every stored index (OPFS and IndexedDB) of this origin.
   * `assetsUrl`: as for open().
   */
  static async clear({ assetsUrl } = {}) {
    requireBrowser();
    const assets = assetsOption(assetsUrl);
    const channel = new Channel(startWorker(assets), () => {}, workerUrl(assets));
    try {
      await channel.call('clear');
    } finally {
      channel.terminate();
    }
    // Nothing is stored now: the next open may ask for the hot pages
    // before checking storage (prefetchIndex).
    try {
      for (let i = localStorage.length - 1; i >= 0; i--) {
        const key = localStorage.key(i);
        if (key && key.startsWith('gitsense-search:')) localStorage.removeItem(key);
      }
    } catch {
      // No localStorage here.
    }
  }

  #channel = null;
  // The page's own steps of open(), in epoch ms (see info()).
  #startup = {};

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
   * 'html'|'raw'|'none', includeContent, maxTokens, cursor, trace, mode:
   * 'strict'|'box', snippetTokens, facets: ['FIELD[:TYPE]', ...], lang }.
   * mode 'box' reads a search box's text: never an error, the word being
   * typed also matched as a prefix. facets: value counts over the matches
   * (`facets`). lang: the reader's language, whose pages come first on a
   * site shipping translations side by side.
   */
  async search(query, options = {}) {
    return JSON.parse(await this.searchJson(query, options));
  }

  /** Storage in use and why, index revision, counts, sizes, timings. */
  async info() {
    const info = await this.#call('info');
    // The worker's steps in epoch ms, the page's own beside them: all as
    // milliseconds since this page's time origin.
    const steps = { ...this.#startup, ...(info.startup || {}) };
    info.startup = {};
    for (const [step, at] of Object.entries(steps)) info.startup[step] = Math.round((at - performance.timeOrigin) * 10) / 10;
    return info;
  }

  /**
   * Without arguments: checks the manifest now; a changed index is
   * downloaded, verified and swapped in while the current one keeps
   * answering (an overlay: with the page's writes applied to it).
   * Resolves { status: 'current'|'updated'|'offline', revision }.
   *
   * With records (a writable index): replaces them by id, as add()
   * writes them (a message's code blocks are cut from its new text).
   */
  update(records) {
    if (arguments.length > 0) return this.#write('update', records);
    return this.#call('update');
  }

  /**
   * Keeps the whole index in browser storage for offline use, now: in lazy
   * mode the copy into OPFS runs (the pages already read are not fetched
   * again) and the engine switches to it. Without it, and under the
   * default offline policy, a visit downloads only the pages its searches
   * read. `onProgress({ phase: 'fill', loaded, total })` follows the copy
   * (as does the 'progress' event). Resolves with info() once the copy is
   * stored (the 'fill' event fires too); at once for an index stored whole
   * already. Rejects with `offline.refused` under open({ offline: 'never' }),
   * or the storage error that stopped the copy (`storage.*`: the index
   * keeps answering by range, and info().offline.canSave offers it again).
   */
  async saveOffline({ onProgress } = {}) {
    if (onProgress !== undefined && typeof onProgress !== 'function') {
      throw new GitSenseSearchError({ code: 'options.invalid', message: 'onProgress must be a function' });
    }
    const listener = (e) => {
      if (e.detail && e.detail.phase === 'fill') onProgress(e.detail);
    };
    if (onProgress) this.addEventListener('progress', listener);
    try {
      return await this.#call('saveOffline');
    } finally {
      if (onProgress) this.removeEventListener('progress', listener);
    }
  }

  /** The query language's filters and directives (for help screens). */
  syntax() {
    return this.#call('syntax');
  }

  /**
   * An AI-assisted search (the multi-stage strategy of
   * docs/ai-search.md): `llm(prompt, { stage, name, signal })` is the
   * host's model, called here on the page, once per LLM stage; it returns
   * the answer text (or a promise of it). The stages run in the worker;
   * `onStage(report)` gets each stage report as the stage ends. The other
   * options are AssistOptions: { maxTokens, condenseThreshold,
   * maxCandidates, maxReviewFiles, fallbackChars, retries }. `signal` (an
   * AbortSignal) gives up: the promise rejects with `assist.aborted`.
   * Resolves with the outcome: { question, query, answer, identifiedFiles:
   * [{ path, chat_id }], flagged, totalMatches, overviews, results, stages }.
   * A throwing or rejecting `llm` rejects with `assist.llm_failed`, its
   * `location` naming the stage ('stage 4 (review)') and its `cause` the
   * original error; a query still rejected after the retries rejects with
   * the query error.
   */
  async assistedSearch(question, options = {}) {
    const invalid = (message) => new GitSenseSearchError({ code: 'options.invalid', message });
    if (typeof question !== 'string') throw invalid('the question must be a string');
    const { llm, onStage, signal, ...assistOptions } = options ?? {};
    if (typeof llm !== 'function') {
      throw invalid('assistedSearch() needs an llm callback: (prompt) => Promise<string>, the host\'s model');
    }
    if (onStage !== undefined && typeof onStage !== 'function') throw invalid('onStage must be a function');
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw invalid('signal must be an AbortSignal');
    const aborted = (where) => {
      const e = new GitSenseSearchError({
        code: 'assist.aborted',
        message: `the assisted search was aborted${where ? ` in ${where}` : ''}`,
        location: where,
      });
      if (signal.reason !== undefined) e.cause = signal.reason;
      return e;
    };
    if (signal?.aborted) throw aborted();
    const report = (r) => {
      if (!onStage) return;
      try {
        onStage(r);
      } catch (e) {
        // A broken stage listener must not break the search; the error
        // still surfaces as an uncaught error of the page.
        if (typeof reportError === 'function') reportError(e);
        else setTimeout(() => { throw e; });
      }
    };
    const optionsJson = toJson(assistOptions, 'the assisted-search options');
    let reply = JSON.parse(await this.#call('assistStart', { question, options: optionsJson }));
    const session = reply.session;
    let running = true;
    try {
      for (;;) {
        reply.reports.forEach(report);
        const { step } = reply;
        if (step.kind === 'done') {
          running = false;
          return step.outcome;
        }
        if (step.kind === 'failed') {
          running = false;
          throw new GitSenseSearchError(step.error);
        }
        const where = `stage ${step.stage} (${step.name})`;
        const answer = await this.#ask(llm, step, where, signal, aborted);
        if (signal?.aborted) throw aborted(where);
        reply = JSON.parse(await this.#call('assistAdvance', { session, answer }));
      }
    } finally {
      // The worker drops finished searches itself; one given up on here
      // (the llm failed, aborted, the engine closed) is dropped now.
      if (running) this.#call('assistCancel', { session }).catch(() => {});
    }
  }

  /** Awaits the host's llm for one step; failures become assist.* errors. */
  async #ask(llm, step, where, signal, aborted) {
    const info = { stage: step.stage, name: step.name };
    if (signal) info.signal = signal;
    let answer;
    let onAbort;
    try {
      const call = Promise.resolve().then(() => llm(step.prompt, info));
      answer = await (signal
        ? Promise.race([call, new Promise((_, reject) => {
          onAbort = () => reject(aborted(where));
          signal.addEventListener('abort', onAbort, { once: true });
        })])
        : call);
    } catch (e) {
      if (signal?.aborted) throw aborted(where);
      throw llmFailed(where, describe(e), e);
    } finally {
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
    if (typeof answer !== 'string') {
      const got = answer === null ? 'null' : typeof answer;
      throw llmFailed(where, `it must resolve to a string (the model's answer), not ${got}`);
    }
    return answer;
  }

  /**
   * Renders a results object (or its JSON text) for an LLM or a person:
   * format 'terse' | 'verbose' | 'markdown' | 'mcp' | 'json'; options { maxTokens,
   * elapsedSecs }. With maxTokens the text's estimate (characters / 4)
   * stays within it: contents and snippets are shortened, then the
   * lowest-ranked results dropped, and the text says so; a budget too small
   * for the frame fails with options.max_tokens_too_small. Runs in the worker
   * (the same code as the CLI's --format).
   */
  formatResults(results, format = 'markdown', options = {}) {
    return this.#format('formatResults', 'results', results, format, options);
  }

  /** Renders an assistedSearch() outcome likewise (the answer first). */
  formatOutcome(outcome, format = 'markdown', options = {}) {
    return this.#format('formatOutcome', 'outcome', outcome, format, options);
  }

  async #format(op, what, value, format, options) {
    if (typeof format !== 'string') {
      throw new GitSenseSearchError({ code: 'options.bad_format', message: 'the format must be a string: json, terse, verbose or markdown' });
    }
    if (value === null || (typeof value !== 'object' && typeof value !== 'string')) {
      throw new GitSenseSearchError({ code: 'options.invalid', message: `${op}() needs the ${what} object (or its JSON text)` });
    }
    const json = typeof value === 'string' ? value : toJson(value, `the ${what}`);
    return this.#call(op, { [what]: json, format, options: toJson(options, 'the format options') });
  }

  /** The query-syntax guide the assisted search shows the model (text). */
  assistGuide() {
    return this.#call('assistGuide');
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

  /** For tests: how many assisted searches the worker holds. */
  _assistRunningForTests() {
    return this.#call('__assistRunning');
  }
}

export default GitSenseSearch;
