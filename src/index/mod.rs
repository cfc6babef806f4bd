//! The index file: one SQLite database holding what search and the results
//! object need, and nothing else.
//!
//! Layout (format version [`FORMAT_VERSION`]):
//! - small "filter" tables (`chats`, `messages`, `code_blocks`) that ranking
//!   and counting touch, kept apart from the bulky "payload" tables
//!   (`chat_details`, `message_text`, `code_text`) that are read only for the
//!   page of results being returned. This keeps the pages a query reads few,
//!   which matters when the file is read lazily over HTTP.
//! - FTS5 tables over the payload: `fts_chats(name)` and
//!   `fts_messages(title, body)` with unicode61 + diacritics removal,
//!   `fts_code_blocks(content)` with the trigram tokenizer.
//! - `index_meta`: format version, corpus revision, build time, counts and
//!   the source description.

pub mod writer;

use crate::error::{DbContext, Error, Result};
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use std::path::Path;

pub use writer::{BuildStats, IndexWriter, SourceInfo};

/// Version of the file layout; an index of another version is refused.
pub const FORMAT_VERSION: u32 = 1;

/// Page size of built indexes (small pages keep lazy range reads cheap).
pub const PAGE_SIZE: u32 = 4096;

/// Tokenizer for chat names and message text.
pub const TEXT_TOKENIZER: &str = "unicode61 remove_diacritics 2";

/// Shortest code-block term the trigram index can match.
pub const TRIGRAM_MIN_CHARS: usize = 3;

/// Weights of the `fts_messages` columns (title, body) in bm25.
pub const MESSAGE_COLUMN_WEIGHTS: (f64, f64) = (8.0, 1.0);

pub(crate) const SCHEMA: &str = r#"
CREATE TABLE index_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE groups(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE chats(
  id INTEGER PRIMARY KEY,
  parent_id INTEGER NOT NULL,
  root_id INTEGER NOT NULL DEFAULT 0,
  lineage TEXT NOT NULL DEFAULT '',
  type TEXT NOT NULL,
  name TEXT NOT NULL,
  repo TEXT,
  path TEXT,
  language TEXT,
  branch_name TEXT,
  created_at TEXT,
  modified_at TEXT,
  num_messages INTEGER NOT NULL DEFAULT 0,
  last_updated_at TEXT
);
CREATE TABLE chat_details(
  id INTEGER PRIMARY KEY,
  uuid TEXT,
  owner TEXT,
  group_id INTEGER,
  chat_path TEXT,
  meta TEXT
);
CREATE TABLE messages(
  id INTEGER PRIMARY KEY,
  chat_id INTEGER NOT NULL,
  type TEXT NOT NULL,
  role TEXT NOT NULL,
  file_path TEXT,
  language TEXT,
  created_at TEXT,
  updated_at TEXT
);
CREATE TABLE message_text(
  id INTEGER PRIMARY KEY,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  meta TEXT
);
CREATE TABLE code_blocks(
  id INTEGER PRIMARY KEY,
  message_id INTEGER NOT NULL,
  chat_id INTEGER NOT NULL,
  uuid TEXT NOT NULL,
  type TEXT,
  language TEXT,
  component TEXT,
  created_at TEXT,
  size INTEGER NOT NULL
);
CREATE TABLE code_text(
  id INTEGER PRIMARY KEY,
  content TEXT NOT NULL,
  parent_uuid TEXT,
  description TEXT,
  major INTEGER,
  minor INTEGER,
  patch INTEGER,
  header TEXT
);
CREATE INDEX chats_parent ON chats(parent_id);
CREATE INDEX messages_chat ON messages(chat_id, type);
CREATE INDEX code_blocks_message ON code_blocks(message_id);
CREATE INDEX code_blocks_chat ON code_blocks(chat_id);
CREATE VIRTUAL TABLE fts_chats USING fts5(
  name, content='chats', content_rowid='id',
  tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE fts_messages USING fts5(
  title, body, content='message_text', content_rowid='id',
  tokenize='unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE fts_code_blocks USING fts5(
  content, content='code_text', content_rowid='id',
  tokenize='trigram');
"#;

/// What `index_meta` says about an index.
#[derive(Debug, Clone, serde::Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct IndexInfo {
    pub format_version: u32,
    pub revision: String,
    pub built_at: String,
    pub source: String,
    pub chats: u64,
    pub messages: u64,
    pub code_blocks: u64,
    pub groups: u64,
    pub page_size: u64,
    pub page_count: u64,
}

impl IndexInfo {
    pub fn size_bytes(&self) -> u64 {
        self.page_size * self.page_count
    }
}

/// Opens an index file read-only and checks its format version.
pub fn open_file(path: &Path) -> Result<Connection> {
    if !path.exists() {
        return Err(Error::new(
            "index.not_found",
            format!("no index file at {}", path.display()),
        ));
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| {
        Error::new("index.unreadable", format!("cannot open index: {e}"))
            .with_location(path.display().to_string())
    })?;
    verify(&conn).map_err(|e| e.with_location(path.display().to_string()))?;
    Ok(conn)
}

/// Checks that a connection holds an index of this format version.
pub fn verify(conn: &Connection) -> Result<IndexInfo> {
    let has_meta: Option<String> = conn
        .query_row(
            "SELECT name FROM sqlite_master WHERE type='table' AND name='index_meta'",
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| {
            Error::new(
                "index.not_an_index",
                format!("the file is not a gitsense-search index ({e})"),
            )
        })?;
    if has_meta.is_none() {
        return Err(Error::new(
            "index.not_an_index",
            "the file is an SQLite database but not a gitsense-search index (no index_meta table)",
        ));
    }
    let info = read_info(conn)?;
    if info.format_version != FORMAT_VERSION {
        return Err(Error::new(
            "index.version_mismatch",
            format!(
                "index format version {} is not supported by this build (expects {}); rebuild the index",
                info.format_version, FORMAT_VERSION
            ),
        ));
    }
    Ok(info)
}

/// Reads `index_meta` and the page geometry.
pub fn read_info(conn: &Connection) -> Result<IndexInfo> {
    let get = |key: &str| -> Result<String> {
        conn.query_row("SELECT value FROM index_meta WHERE key = ?1", [key], |r| {
            r.get::<_, String>(0)
        })
        .optional()
        .ctx("reading index_meta")?
        .ok_or_else(|| Error::new("index.corrupt", format!("index_meta has no '{key}' entry")))
    };
    let num = |key: &str| -> Result<u64> {
        get(key)?.parse::<u64>().map_err(|_| {
            Error::new(
                "index.corrupt",
                format!("index_meta '{key}' is not a number"),
            )
        })
    };
    let format_version = get("format_version")?
        .parse::<u32>()
        .map_err(|_| Error::new("index.corrupt", "index_meta format_version is not a number"))?;
    let page_size: u64 = conn
        .query_row("PRAGMA page_size", [], |r| r.get::<_, i64>(0))
        .ctx("reading page size")? as u64;
    let page_count: u64 = conn
        .query_row("PRAGMA page_count", [], |r| r.get::<_, i64>(0))
        .ctx("reading page count")? as u64;
    Ok(IndexInfo {
        format_version,
        revision: get("revision")?,
        built_at: get("built_at")?,
        source: get("source")?,
        chats: num("count_chats")?,
        messages: num("count_messages")?,
        code_blocks: num("count_code_blocks")?,
        groups: num("count_groups")?,
        page_size,
        page_count,
    })
}
