//! The browser module (wasm32 only): the engine in a dedicated Web Worker,
//! fed from a published index kept in browser storage.
//!
//! In: a manifest URL (see [`gitsense_publish`]) and queries. Out: the
//! results object as JSON text, identical to the native CLI's, and
//! structured errors. Pieces:
//! - [`api`]: the functions `js/worker.js` calls (one session per worker),
//! - [`assist`]: the AI-assisted search driven from the page (the LLM is
//!   the page's callback; the sessions live here) and the LLM-ready formats,
//! - [`session`]: open from storage or download, update and swap, search,
//! - [`local`]: a writable index of the page's own (create, add, update,
//!   remove), in OPFS or IndexedDB,
//! - [`import`]: a chat export read in pieces into the writable index
//!   (`engine.importFile`), all or nothing,
//! - [`storage`]: OPFS, IndexedDB and memory backends behind one interface,
//! - [`host`]: bindings to JS (`js/net.js` downloads, `js/storage.js`,
//!   `performance.now`) and JS ⇄ [`gitsense_engine::Error`] conversion.
//!
//! The engine itself is the `gitsense-engine` crate; this crate only binds
//! it to the browser. The JavaScript side lives in `src/js/`: `index.js`
//! (the `GitSenseSearch` API on the page, which starts the worker),
//! `worker.js`, the I/O halves (`net.js`, `storage.js`, `lazy.js`) and the
//! TypeScript declarations; `build.sh` assembles them with the
//! wasm-bindgen output into `pkg/`.
#![cfg(target_arch = "wasm32")]

pub mod api;
pub mod assist;
pub mod host;
pub mod import;
pub mod local;
pub mod session;
pub mod storage;
