// The dedicated worker index.js starts: loads the wasm engine and answers
// requests from the page, so a search never blocks the page.
//
// Page → worker: { id, op, args }. Worker → page: { id, ok, value | error }
// for requests, and { type, detail | error } events: 'progress', 'update'
// (a background update check finished), 'updateerror', 'fill' (lazy mode:
// the copy in OPFS is complete and in use), 'fillerror', 'crash'.
//
// Lazy mode starts before the wasm module is ready: the page (index.js)
// fetches the manifest, the index's hot pages and a range probe the
// moment open() is called, while the module downloads and compiles (not
// when this site's index is already stored: a repeat visit fetches no
// index bytes), and posts them ('open' with pagePrefetches, { type:
// 'manifest', text } as soon as the manifest is in, then { type:
// 'prefetched', value }).
//
// A writable index ('openLocal' { name, storage, create }, then 'write'
// { op: 'add'|'update'|'remove', json }) has no manifest: nothing is
// prefetched, no update check runs; 'search' and 'info' answer for it.
//
// A chat export ('importFile' { file, importId }) is read here as a
// stream (file.stream()), its pieces pushed into the module as they come
// (src/import.rs): never the whole file in memory. One SQLite transaction
// holds the import; 'importprogress' events { importId, bytesRead, chats,
// messages, codeBlocks } follow each stored batch; 'importAbort' {
// importId } stops it (everything rolled back). Searches run between
// pieces and see the batches stored so far; writes and updates wait for
// the import to end.
//
// An assisted search is a run of requests: 'assistStart' → { session, step,
// reports } (JSON text), then, while step.kind is 'ask', the page awaits its
// LLM and sends 'assistAdvance' { session, answer }; 'assistCancel' drops a
// search the page gave up on. The sessions live in Rust (src/assist.rs),
// keyed by id, so searches interleave with each other and with 'search'.

import init, {
  sessionOpen,
  sessionSearch,
  sessionInfo,
  sessionUpdate,
  sessionBackground,
  sessionSaveOffline,
  sessionStoredFiles,
  sessionClose,
  localOpen,
  localWrite,
  localSearch,
  localInfo,
  localUpdate,
  localBackground,
  localClose,
  localImportBegin,
  localImportFeed,
  localImportFinish,
  localImportAbort,
  storageClear,
  syntaxGuide,
  panicForTests,
  assistStart,
  assistAdvance,
  assistCancel,
  assistRunning,
  assistGuide,
  formatResults,
  formatOutcome,
} from './gitsense_search.js';
import { openFill, prepareFill } from './lazy.js';
import { loadSecondary, splitState } from './split.js';

// The module: compiled by the page when it says so ('open' with
// pageCompiles: the page starts compiling while this worker's scripts
// load, then posts { type: 'module', module }, or null if it could not),
// else fetched and compiled here.
let ready = null;
let moduleFromPage = null;
// When (epoch ms) this worker reached each step of starting up, for
// info().startup (index.js makes them relative to the page's time origin).
const startup = {};
const mark = (step) => {
  if (startup[step] === undefined) startup[step] = performance.timeOrigin + performance.now();
};
function loadModule(pageCompiles) {
  if (!ready) {
    ready = pageCompiles
      ? new Promise((resolve) => {
          moduleFromPage = resolve;
        }).then((module) => init(module ? { module_or_path: module } : undefined))
      : init();
    ready.then(() => mark('instantiated'), () => {});
  }
  return ready;
}
let crash = null; // { code, message } once the wasm instance has trapped
let writable = false; // a writable index (openLocal) is open: the local* functions serve it
let importing = null; // the import in flight (writes and updates wait for it)
const aborted = new Set(); // importIds whose abort came while they ran

self.addEventListener('gitsense-panic', (e) => {
  crash = { code: 'internal.panic', message: `the search engine panicked: ${e.detail}` };
  self.postMessage({ type: 'crash', error: crash });
});

function toError(e) {
  if (e && typeof e === 'object' && !(e instanceof Error) && typeof e.code === 'string') return e;
  if (e instanceof WebAssembly.RuntimeError) {
    // A trap leaves the instance unusable; later calls say so.
    crash = crash || { code: 'internal.panic', message: `the search engine crashed: ${e.message}` };
    return crash;
  }
  return { code: 'internal.error', message: String((e && e.message) || e) };
}

const progress = (detail) => self.postMessage({ type: 'progress', detail });

// A visit's background work (lazy mode: the second module, then the
// fill; a stored index or overlay: the second module, then the update
// check), decided by the module at open, starts after the first search
// (or after BACKGROUND_DELAY_MS), so it does not compete with the first
// answer.
const BACKGROUND_DELAY_MS = 1000;
let startBackground = null;
// Lazy mode's first requests, made by the page (index.js prefetchIndex):
// on 'open' with pagePrefetches, a Promise of what it posts as { type:
// 'prefetched', value }; else null (the session fetches for itself).
// The fill files are opened here meanwhile (lazy.js openFill, once the
// manifest is in; prepareFill hands them over with the prefetch): OPFS
// work a cold visit's first answer then does not wait for.
let prefetched = null;
// The copy into OPFS the visit planned (policy 'always'), while it has not
// ended: a Promise of its run, which saveOffline() starts at once and
// shares instead of copying twice.
let backgroundFill = null;
// saveOffline()'s own copy, while it runs (two calls share it).
let saving = null;
let prefetchedFromPage = null;
let manifestFromPage = null;

function awaitPagePrefetch({ pagePrefetches, manifestUrl }) {
  if (!pagePrefetches) return null;
  // The fill files open while the hot pages are still on the way (the
  // page sends the manifest ahead of them).
  let fillOpening = null;
  manifestFromPage = (text) => {
    fillOpening = openFill(text, manifestUrl);
    fillOpening.catch(() => {});
  };
  return new Promise((resolve) => {
    prefetchedFromPage = (value) => {
      prepareFill(value, manifestUrl, fillOpening).then(resolve, () => resolve(value));
    };
  });
}

/** Runs `work` once the second module is in, after the first search (or BACKGROUND_DELAY_MS). */
function holdBackground(work) {
  let started = false;
  const go = () => {
    if (started) return;
    started = true;
    startBackground = null;
    loadSecondary().then(work);
  };
  startBackground = go;
  setTimeout(go, BACKGROUND_DELAY_MS);
}

/** Runs `run` and posts its outcome to the page as event `type` (or `type`error, a throw included); an outcome of undefined posts nothing. */
function announce(run, type) {
  return Promise.resolve()
    .then(run)
    .then(
      (detail) => {
        if (detail !== undefined) self.postMessage({ type, detail });
      },
      (e) => self.postMessage({ type: `${type}error`, error: toError(e) }),
    );
}

/** Resolves once no import runs (whatever its outcome). */
async function importsDone() {
  while (importing) await importing.catch(() => {});
}

/** Reads `file` as a stream into the import; resolves with its summary. */
async function importFile(file, importId, tuning) {
  if (!file || typeof file.stream !== 'function') {
    throw { code: 'import.bad_input', message: 'importFile() takes a File or Blob' };
  }
  // importId is the request's key: a tab whose owner closed before
  // answering sends the import again under it, and gets this answer.
  const done = localImportBegin(typeof file.name === 'string' ? file.name : '', tuning, importId);
  if (done) {
    self.postMessage({ type: 'importprogress', detail: { importId, bytesRead: file.size, chats: done.chats, messages: done.messages, codeBlocks: done.codeBlocks, batches: 0 } });
    return done;
  }
  const reader = file.stream().getReader();
  let batches = 0;
  try {
    for (;;) {
      if (aborted.delete(importId)) throw { code: 'import.aborted', message: 'the import was aborted: nothing was imported' };
      let chunk;
      try {
        chunk = await reader.read();
      } catch (e) {
        throw { code: 'import.unreadable', message: `cannot read the file: ${(e && e.message) || e}` };
      }
      if (chunk.done) break;
      const p = localImportFeed(chunk.value);
      if (p.batches !== batches) {
        batches = p.batches;
        self.postMessage({ type: 'importprogress', detail: { importId, ...p } });
        // A stored batch: the worker's other messages (searches, an
        // abort) get their turn; reads of a File already in memory
        // resolve as microtasks and would not let them in.
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
    }
  } catch (e) {
    localImportAbort();
    reader.cancel().catch(() => {});
    throw e;
  }
  const summary = await localImportFinish();
  self.postMessage({ type: 'importprogress', detail: { importId, bytesRead: file.size, chats: summary.chats, messages: summary.messages, codeBlocks: summary.codeBlocks, batches: batches + 1 } });
  return summary;
}

const ops = {
  async open({ manifestUrl, storage, offline, requestTimeoutMs }) {
    // The prefetch goes in as a Promise: storage opens while it finishes.
    // The engine's second part (split.js), which holds SQLite: downloading
    // an index and opening a stored one need it now. With the page's
    // prefetch (storage 'auto' or 'lazy'), a lazy first visit answers
    // without it and fetches it after its first answer (holdBackground):
    // its bytes would compete with the index's, its compile with the first
    // search (docs/lazy-loading.md, "The module in two parts").
    // A stub that ran while this fetch was still on its way would load the
    // module a second time, in sync: the session waits for it before it
    // opens SQLite (loadSecondary below), and what a visit runs before
    // that stays in the first module (xtask/split-keep.txt). The prefetch
    // goes to the session as it is: a first lazy visit tells itself apart
    // by the prefetch being in within a microtask or two.
    const pre = prefetched;
    Promise.resolve(pre).then((p) => {
      if (!p || p.stored) loadSecondary();
    });
    // `offline`: the page's offline policy for this visit. The session
    // decides the visit's background work (src/visit.rs): 'fill' (lazy
    // mode's copy into OPFS, under that policy), 'update' (a stored
    // index: look for a newer one, with the manifest the page fetched) or
    // null. It runs in the engine's second part, after the first answer:
    // a new index is downloaded and stored by the second part, in first.
    const { info, background } = await sessionOpen({ manifestUrl, storage, offline, requestTimeoutMs }, progress, pre, loadSecondary);
    prefetched = null;
    mark('opened');
    if (background === 'fill') {
      let started;
      backgroundFill = new Promise((resolve) => (started = resolve));
      holdBackground(() => {
        const run = sessionBackground(progress);
        started(run);
        const forget = () => (backgroundFill = null);
        run.then(forget, forget);
        return announce(() => run, background);
      });
    } else if (background) holdBackground(() => announce(() => sessionBackground(progress), background));
    return info;
  },
  // A writable index of the page's own (GitSenseSearch.create / open({ name })).
  // With manifestUrl: an overlay over that published index; the module
  // decides its background work (src/local.rs: 'update' for a copy
  // opened from storage, the 'update' event), run once no import runs.
  async openLocal({ name, storage, create, manifestUrl, requestTimeoutMs }) {
    // A page's own index is SQLite's, which is in the engine's second
    // part: fetched first, rather than by a stub's synchronous load.
    await loadSecondary();
    const { info, background } = await localOpen({ name, storage, create, manifestUrl, requestTimeoutMs }, progress);
    writable = true;
    mark('opened');
    if (background) {
      holdBackground(() =>
        announce(async () => {
          await importsDone();
          return localBackground(progress);
        }, background),
      );
    }
    return info;
  },
  async write({ op, json, key }) {
    await importsDone();
    if (op !== 'add') await loadSecondary();
    return localWrite(op, json, key);
  },
  async importFile({ file, importId, tuning }) {
    if (!writable) throw { code: 'write.read_only', message: 'this engine serves a published index: only an index made by create() (or an overlay) takes imports' };
    await importsDone();
    await loadSecondary();
    const run = importFile(file, importId, tuning);
    importing = run;
    try {
      return await run;
    } finally {
      if (importing === run) importing = null;
      aborted.delete(importId);
    }
  },
  importAbort({ importId }) {
    aborted.add(importId);
    return null;
  },
  async search({ query, options }) {
    const t0 = performance.now();
    if (writable) {
      try {
        return { json: localSearch(query, options), ms: performance.now() - t0 };
      } finally {
        setTimeout(loadSecondary, 0);
      }
    }
    mark('firstSearch');
    try {
      const json = await sessionSearch(query, options);
      mark('firstAnswer');
      return { json, ms: performance.now() - t0 };
    } finally {
      if (startBackground) setTimeout(startBackground, 0);
      else setTimeout(loadSecondary, 0);
    }
  },
  // The reader asked for the whole index to be kept offline: the copy
  // into OPFS runs now (progress phase 'fill'), announced as the 'fill'
  // event like the background one; resolves with info() once it is stored.
  async saveOffline() {
    // A writable index (or overlay) is stored whole already.
    if (writable) return localInfo();
    if (backgroundFill) {
      if (startBackground) startBackground();
      return backgroundFill.then((run) => run);
    }
    if (!saving) {
      const run = loadSecondary().then(() => sessionSaveOffline(progress));
      saving = run;
      run.then(
        (info) => self.postMessage({ type: 'fill', detail: info }),
        () => {},
      ).finally(() => {
        if (saving === run) saving = null;
      });
    }
    return saving;
  },
  info: () => {
    if (writable) return localInfo();
    const info = sessionInfo();
    const { split, ready } = splitState();
    info.module = { split, secondLoaded: ready };
    info.startup = { ...startup };
    return info;
  },
  // A check already running (the background one) is shared, in Rust.
  async update() {
    await importsDone();
    return writable ? localUpdate(progress) : sessionUpdate(progress);
  },
  files: () => sessionStoredFiles(),
  close() {
    if (writable) localClose();
    else sessionClose();
    return null;
  },
  clear: () => storageClear(),
  syntax: () => syntaxGuide(),
  assistStart: ({ question, options }) => assistStart(question, options),
  assistAdvance: ({ session, answer }) => assistAdvance(session, answer),
  assistCancel: ({ session }) => assistCancel(session),
  assistGuide: () => assistGuide(),
  formatResults: ({ results, format, options }) => formatResults(results, format, options),
  formatOutcome: ({ outcome, format, options }) => formatOutcome(outcome, format, options),
  __panic: () => panicForTests(),
  __assistRunning: () => assistRunning(),
};

self.onmessage = async ({ data }) => {
  if (data && data.type === 'module') {
    mark('module');
    if (moduleFromPage) moduleFromPage(data.module);
    return;
  }
  if (data && data.type === 'manifest') {
    if (manifestFromPage) manifestFromPage(data.text);
    manifestFromPage = null;
    return;
  }
  if (data && data.type === 'prefetched') {
    mark('prefetched');
    if (prefetchedFromPage) prefetchedFromPage(data.value);
    prefetchedFromPage = null;
    manifestFromPage = null;
    return;
  }
  const { id, op, args } = data || {};
  // Before waiting for the module: the prefetch overlaps its compilation.
  if (op === 'open' && args) prefetched = awaitPagePrefetch(args);
  loadModule(op === 'open' && args && args.pageCompiles);
  try {
    await ready.catch((e) => {
      throw { code: 'engine.load_failed', message: `cannot load the search engine (wasm): ${e && e.message}` };
    });
    if (crash) throw crash;
    const fn = ops[op];
    if (!fn) throw { code: 'internal.error', message: `unknown operation ${op}` };
    const value = await fn(args || {});
    self.postMessage({ id, ok: true, value });
  } catch (e) {
    self.postMessage({ id, ok: false, error: toError(e) });
  }
};
