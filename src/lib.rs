//! gitsense-search: GitSense-compatible full-text search over a prebuilt
//! SQLite FTS5 index, natively and in the browser (WebAssembly).
//!
//! Data flows one way:
//! source → [`import`] → index file ([`index`]) → query text →
//! [`query`] (parser, AST) → [`plan`] (SQL + bound parameters) →
//! [`search`] (executor) → [`results`] (the GitSense results object) →
//! [`format`] (terse / verbose / markdown for humans and LLMs).
//!
//! - [`model`]: the GitSense data model importers produce.
//! - [`profiles`]: GitSense search profiles built into the crate.
//! - [`budget`]: token budgets for LLM consumers.
//! - [`error`]: structured errors with stable codes.
//! - [`assist`]: the AI-assisted multi-stage search (seed 001) with the
//!   host's LLM as a callback.
//! - [`publish`]: the manifest and files a static site serves to the
//!   browser module.
//! - [`web`] (wasm32 only): the browser module: JS bindings, the worker
//!   session, storage backends (OPFS, IndexedDB, memory) and downloads.

pub mod assist;
pub mod budget;
pub mod error;
pub mod format;
#[cfg(feature = "native")]
pub mod import;
pub mod index;
pub mod model;
pub mod plan;
pub mod profiles;
pub mod publish;
pub mod query;
pub mod results;
pub mod search;
pub mod util;
pub mod web;

pub use error::{Error, ErrorKind, Result};
pub use plan::{Highlight, SearchOptions};
pub use results::SearchResults;
pub use search::Engine;
