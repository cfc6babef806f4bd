//! gitsense-engine: GitSense-compatible full-text search over a prebuilt
//! SQLite FTS5 index. The same code runs natively (the CLI) and in the
//! browser (the root package's WebAssembly module).
//!
//! Data flows one way:
//! model records (from the importers) → index file ([`index`]) → query
//! text → [`query`] (parser, AST) → [`plan`] (SQL + bound parameters) →
//! [`search`] (executor) → [`results`] (the GitSense results object) →
//! [`format`](mod@format) (terse / verbose / markdown for humans and LLMs).
//!
//! - [`model`]: the GitSense data model importers produce.
//! - [`profiles`]: GitSense search profiles built into the crate.
//! - [`budget`]: token budgets for LLM consumers.
//! - [`fenced`]: fenced code blocks in message text (importers and the
//!   browser's writable indexes both cut code blocks with it).
//! - [`facets`]: value/count pairs over a search's matches (meta-insights).
//! - [`error`]: structured errors with stable codes.
//! - [`assist`]: the AI-assisted multi-stage search with the host's LLM as
//!   a callback.
//!
//! Inside the crate only (what the query language reaches through
//! [`Engine::search`]): `pattern` (`option:regex`, regular expressions over
//! a target's text), `meta` (`meta:` filters over analyzer metadata),
//! `gitnav` (browsing owners, repositories, branches and trees) and
//! `morphology` (the inflections a prose word is also searched as).
//!
//! Search an index built by the importers (`gitsense-import`) or by
//! [`index::IndexWriter`]:
//!
//! ```
//! use gitsense_engine::index::{IndexWriter, SourceInfo};
//! use gitsense_engine::model::{Chat, Message};
//! use gitsense_engine::{Engine, SearchOptions};
//! use serde_json::json;
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("demo.gsx");
//! let mut w = IndexWriter::create(&path, SourceInfo {
//!     description: "example".into(), built_at: None,
//! })?;
//! w.add_chat(&Chat {
//!     id: 1, parent_id: 0, chat_type: "regular".into(), uuid: None,
//!     name: "Payments".into(), owner: None, group_id: None,
//!     created_at: None, modified_at: None, meta: json!({}),
//! })?;
//! w.add_message(&Message {
//!     id: 10, chat_id: 1, msg_type: "regular".into(), role: "user".into(),
//!     content: "How do I retry a failed payment?".into(),
//!     title: String::new(), keywords: String::new(), meta: json!({}),
//!     created_at: None, updated_at: None,
//! })?;
//! w.finish()?;
//!
//! let engine = Engine::open(&path)?;
//! let results = engine.search("retry payment", &SearchOptions::default())?;
//! assert_eq!(results.results.messages.len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod assist;
pub mod budget;
pub mod error;
pub mod facets;
pub mod fenced;
pub mod format;
pub(crate) mod gitnav;
pub mod guide;
pub mod index;
pub mod langs;
pub(crate) mod meta;
pub mod model;
pub(crate) mod morphology;
pub(crate) mod pattern;
pub mod plan;
pub mod profiles;
pub mod query;
pub mod reader;
pub mod results;
pub mod search;
pub mod typo;
pub mod util;

pub use error::{Error, ErrorKind, Result};
pub use plan::{Highlight, SearchOptions};
pub use results::SearchResults;
pub use search::Engine;
