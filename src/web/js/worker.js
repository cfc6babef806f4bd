// The dedicated worker index.js starts: loads the wasm engine and answers
// requests from the page, so a search never blocks the page.
//
// Page → worker: { id, op, args }. Worker → page: { id, ok, value | error }
// for requests, and { type, detail | error } events: 'progress', 'update'
// (a background update check finished), 'updateerror', 'crash'.
//
// An assisted search is a run of requests: 'assistStart' → { session, step,
// reports } (JSON text), then, while step.kind is 'ask', the page awaits its
// LLM and sends 'assistAdvance' { session, answer }; 'assistCancel' drops a
// search the page gave up on. The sessions live in Rust (src/web/assist.rs),
// keyed by id, so searches interleave with each other and with 'search'.

import init, {
  sessionOpen,
  sessionSearch,
  sessionInfo,
  sessionUpdate,
  sessionStoredFiles,
  sessionClose,
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

const ready = init();
let crash = null; // { code, message } once the wasm instance has trapped
let updating = null; // the update in flight, shared by every caller

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

function update() {
  if (!updating) {
    updating = sessionUpdate(progress).finally(() => {
      updating = null;
    });
  }
  return updating;
}

const ops = {
  async open({ manifestUrl, storage }) {
    const info = await sessionOpen({ manifestUrl, storage }, progress);
    if (info.source === 'stored') {
      // Answer from storage now; look for a newer index in the background.
      update().then(
        (detail) => self.postMessage({ type: 'update', detail }),
        (e) => self.postMessage({ type: 'updateerror', error: toError(e) }),
      );
    }
    return info;
  },
  search({ query, options }) {
    const t0 = performance.now();
    const json = sessionSearch(query, options);
    return { json, ms: performance.now() - t0 };
  },
  info: () => sessionInfo(),
  update: () => update(),
  files: () => sessionStoredFiles(),
  close() {
    sessionClose();
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
  const { id, op, args } = data || {};
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
