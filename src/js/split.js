// The engine's second part (xtask/src/wasm_split.rs): the functions a cold
// visit's first answer does not run (the fill, storage setup, the assisted
// search, formats, SQLite's write paths, error paths) live in a second
// wasm module, fetched after the first answer. In the first module each of
// them is a stub that calls load() below until the second module has
// filled the function table, then calls through it.
//
// The worker calls loadSecondary() when it can spare the bytes and the
// CPU (after the first answer, or at once for a full download); a stub that runs
// before that loads the module then and there (a synchronous request and
// compile: the engine runs in a dedicated worker), so nothing waits on
// the profile being right, it only costs time when it is not.
//
// The file name carries a hash of its content (build.sh writes it below),
// so a first module never runs with another build's second: a site that
// published a new build meanwhile answers 404 and the engine fails with a
// clear error instead.

const SECONDARY = '@SECONDARY@';
// A build that was not split (the profile run's) keeps the placeholder.
const SPLIT = !SECONDARY.startsWith('@');

// A synchronous load that gets no answer must not hold the worker forever.
const LOAD_TIMEOUT_MS = 30_000;

let exportsOf = null; // () => the first module's exports (wasm-bindgen's `wasm`)
let ready = false;
let pending = null; // the background load, once started

/** The first module's `gitsense_split` imports (build.sh adds them to wasm-bindgen's). */
export function splitImports(getExports) {
  exportsOf = getExports;
  return { load: loadNow, hit };
}

/** Whether this build has a second part, and whether it is in. */
export function splitState() {
  return { split: SPLIT, ready };
}

// The name as a literal here too: bundlers follow new URL('…', import.meta.url).
function url() {
  return new URL('@SECONDARY@', import.meta.url);
}

function install(module) {
  if (ready) return;
  const primary = exportsOf();
  new WebAssembly.Instance(module, { primary });
  primary.__split_ready.value = 1;
  ready = true;
}

/** A stub ran before the second part was in: load it now. */
function loadNow() {
  if (ready) return;
  try {
    const xhr = new XMLHttpRequest();
    xhr.open('GET', url(), false);
    xhr.responseType = 'arraybuffer';
    xhr.timeout = LOAD_TIMEOUT_MS;
    xhr.send();
    if (xhr.status !== 200) throw new Error(`HTTP ${xhr.status}`);
    install(new WebAssembly.Module(xhr.response));
  } catch (e) {
    // A trap, not an exception: the engine's state is unusable now, and
    // the worker reports it as such (internal.panic) from then on.
    throw new WebAssembly.RuntimeError(`the engine's second module (${SECONDARY}) could not be loaded: ${(e && e.message) || e}`);
  }
}

/**
 * Fetches, compiles and installs the second part in the background;
 * resolves when it is in (at once for a build without one). Failures are
 * left for a stub to meet: it then tries again and reports.
 */
export function loadSecondary() {
  if (!SPLIT || ready) return Promise.resolve();
  if (!pending) {
    pending = (async () => {
      const res = await fetch(url(), { credentials: 'same-origin' });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      let module;
      try {
        module = await WebAssembly.compileStreaming(res.clone());
      } catch {
        module = await WebAssembly.compile(await res.arrayBuffer());
      }
      install(module);
    })().catch(() => {
      pending = null;
    });
  }
  return pending;
}

// Profile builds (xtask/js/split-profile.mjs): every function calls hit(i).
function hit(index) {
  const g = globalThis;
  if (!g.__gitsenseSplitHits) g.__gitsenseSplitHits = new Set();
  g.__gitsenseSplitHits.add(index);
}
