//! The browser module (wasm32 only): the engine in a dedicated Web Worker,
//! fed from a published index kept in browser storage.
//!
//! In: a manifest URL (see [`gitsense_publish`]) and queries. Out: the
//! results object as JSON text, identical to the native CLI's, and
//! structured errors. Pieces:
//! - `api`: the functions `js/worker.js` calls (one session per worker),
//! - `assist`: the AI-assisted search driven from the page (the LLM is
//!   the page's callback; the sessions live here) and the LLM-ready formats,
//! - `session`: open from storage or download, update and swap, search,
//!   and the visit's background work ([`visit`] decides which),
//! - `local`: a writable index of the page's own (create, add, update,
//!   remove), in OPFS or IndexedDB,
//! - `import`: a chat export read in pieces into the writable index
//!   (`engine.importFile`), all or nothing,
//! - `update_check`: one update check at a time, shared by the page's
//!   `engine.update()` and the visit's background check (a session's or
//!   an overlay's),
//! - `storage`: OPFS, IndexedDB and memory backends behind one interface,
//! - `host`: bindings to JS (`js/net.js` downloads, `js/storage.js`,
//!   `performance.now`) and JS ⇄ [`gitsense_engine::Error`] conversion.
//!
//! The engine itself is the `gitsense-engine` crate; this crate only binds
//! it to the browser. The JavaScript side lives in `src/js/`: `index.js`
//! (the `GitSenseSearch` API on the page, which starts the worker),
//! `worker.js`, the I/O halves (`net.js`, `storage.js`, `lazy.js`) and the
//! TypeScript declarations; `build.sh` assembles them with the
//! wasm-bindgen output into `pkg/`.
//!
//! Everything but [`visit`] (the visit's policy, pure computation) is
//! compiled for wasm32 only: natively this crate holds only that policy
//! and its tests. The rest is tested from inside the crate (`src/tests/`,
//! in a dedicated worker in headless Chromium:
//! `cargo test --target wasm32-unknown-unknown -p gitsense-search --lib`).

#[cfg(target_arch = "wasm32")]
mod api;
#[cfg(target_arch = "wasm32")]
mod assist;
#[cfg(target_arch = "wasm32")]
mod host;
#[cfg(target_arch = "wasm32")]
mod import;
#[cfg(target_arch = "wasm32")]
mod local;
#[cfg(target_arch = "wasm32")]
mod session;
#[cfg(target_arch = "wasm32")]
mod storage;
#[cfg(all(test, target_arch = "wasm32"))]
mod tests;
#[cfg(target_arch = "wasm32")]
mod update_check;
pub mod visit;
