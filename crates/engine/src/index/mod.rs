//! The index file: one SQLite database holding what search and the results
//! object need, and nothing else. Its tables' names, columns and DDL are
//! in [`schema`].
//!
//! Layout (format version [`FORMAT_VERSION`]):
//! - small "filter" tables (`chats`, `messages`, `code_blocks`) that
//!   filters and sorts touch, kept apart from the bulky "payload" tables
//!   (`chat_details`, `message_text`, `code_text`) that are read only for the
//!   page of results being returned. This keeps the pages a query reads few,
//!   which matters when the file is read lazily over HTTP.
//! - `message_rank` and `code_rank`: ranking records (`records`), the chat
//!   and FTS5's token counts of title, body and keywords of every message,
//!   the message, chat and token count of every code block, packed 256 ids
//!   to a row (about 6 bytes a message), and `rank_stats` (average title
//!   and keyword lengths): all that ranking a message or code block reads
//!   besides its doclists (`rank`: FTS5 auxiliary functions instead of
//!   `bm25()`, which would read FTS5's `_docsize` too), and what the lazy
//!   warm-up needs to fetch a returned row's message and chat with it. A
//!   query without filters joins no filter table at all (`plan`).
//! - FTS5 tables over the payload: `fts_chats(name)` and
//!   `fts_messages(title, body, keywords)` with unicode61 + diacritics removal,
//!   `fts_code_blocks(content)` with the trigram tokenizer. The last two
//!   have no `_docsize` table (`columnsize=0`): ranking takes token counts
//!   from the ranking records, and the one other reader, `snippet()`,
//!   tokenizes the returned row's text, which it reads anyway, instead of
//!   fetching a `_docsize` page per returned row (several pages a query,
//!   each a range request, when read lazily).
//! - `fts_leaf_ends`: for each FTS5 segment, a 16-bit hash of the last term
//!   that starts on each of its leaves (`doclists`): whether a term's
//!   doclist can run on to the next leaf, known without reading its own.
//! - `index_meta`: format version, corpus revision, build time, counts,
//!   the source description and the file's checksum (`checksum`).

pub mod btree;
pub mod checksum;
pub mod doclists;
pub mod fts5expr;
pub mod fts5file;
pub mod live;
pub mod pagevfs;
pub mod rank;
pub mod records;
pub mod schema;
pub mod snippet;
pub mod sqlfile;
pub mod tempfiles;
pub mod unicode61;
pub(crate) mod writer;

use crate::error::{DbContext, Error, Result};
use const_format::formatcp;
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use std::path::Path;

pub use writer::{BuildStats, FinishProgress, FinishStep, IndexWriter, SourceInfo, MAX_CHAT_DEPTH};

/// Version of the file layout; an index of another version is refused.
pub const FORMAT_VERSION: u32 = 6;

/// Page size of built indexes (small pages keep lazy range reads cheap).
pub(crate) const PAGE_SIZE: u32 = 4096;

/// The FTS5 tables of the schema (`schema::FTS`).
pub const FTS_TABLES: [&str; 3] = [
    schema::fts_chats::TABLE,
    schema::fts_messages::TABLE,
    schema::fts_code_blocks::TABLE,
];

/// Shortest code-block term the trigram index can match.
pub(crate) const TRIGRAM_MIN_CHARS: usize = 3;

/// Weights of the per-column scores of `fts_messages` (see [`BM25_K1`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct MessageColumnWeights {
    pub(crate) title: f64,
    pub(crate) body: f64,
    pub(crate) keywords: f64,
}

/// A title (headings, defined names) or keyword (index term) hit counts
/// three times a body hit; title and keywords are two statements of what
/// a message is about, so the better of the two counts, not their sum.
pub(crate) const MESSAGE_COLUMN_WEIGHTS: MessageColumnWeights = MessageColumnWeights {
    title: 3.0,
    body: 1.0,
    keywords: 3.0,
};

/// BM25 parameters, as FTS5's `bm25()` uses them.
///
/// FTS5's `bm25()` multiplies a column's weight into the term frequency and
/// normalises by the length of the whole row, so a heading hit in a long
/// section scores below a passing mention in a short one, and raising the
/// title weight hardly helps (the frequency saturates). Messages are
/// therefore scored per column: `bm25()` with one column weighted 1e6 and
/// the others 0 gives that column's saturated score (Σ idf·(k1+1) over the
/// query phrases the column contains); multiplied by the column's own
/// length norm `1 / (1 + k1·(1 − b + b·len/avg_len))` (lengths from
/// `message_rank`, averages from `rank_stats`), it is BM25 of
/// that column alone for the usual tf = 1 of titles. The body keeps plain
/// BM25. Score = max(title, keywords) + body, each times its
/// [`MESSAGE_COLUMN_WEIGHTS`] weight. All of it is one auxiliary function,
/// `rank::MESSAGE_RANK`, doing `bm25()`'s arithmetic with the row lengths
/// of `message_rank`. A GitSense database has no titles or
/// keywords, so its ranking is plain FTS5 bm25 over the message text, as
/// in GitSense itself.
pub(crate) const BM25_K1: f64 = 1.2;
pub(crate) const BM25_B: f64 = 0.75;

/// How much an exact name match multiplies a message's score. A message's
/// names are the lines of its title and keywords, and the last part of a
/// dotted name in its title (`json.dumps` also answers to `dumps`); a query
/// made of exactly a name's words, in order, is a reader looking for that
/// name (`float` → the definition of `float`, not `PyNumber_Float`).
pub(crate) const EXACT_NAME_BOOST: f64 = 2.0;

/// The names of a message, as [`name_key`]s (see [`EXACT_NAME_BOOST`]).
pub(crate) fn message_names(title: &str, keywords: &str) -> Vec<i64> {
    let mut keys: Vec<i64> = keywords.lines().filter_map(name_key).collect();
    for line in title.lines() {
        let line = line.trim();
        keys.extend(name_key(line));
        let dotted = line.contains('.')
            && line
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
        if dotted {
            if let Some(last) = line.rsplit('.').next() {
                keys.extend(name_key(last));
            }
        }
    }
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// A hash of text as a sequence of lower-cased tokens, for exact name
/// matches without reading titles while ranking (`message_names.key`).
/// `None` for text without tokens.
pub(crate) fn name_key(text: &str) -> Option<i64> {
    use sha2::{Digest, Sha256};
    let norm = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ");
    if norm.is_empty() {
        return None;
    }
    let h = Sha256::digest(norm.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&h[..8]);
    Some(i64::from_le_bytes(b))
}

/// `index_meta`'s value for a key (binds the key).
pub(crate) const META_VALUE_SQL: &str = formatcp!(
    "SELECT {index_meta_value} FROM {index_meta} WHERE {index_meta_key} = ?1",
    index_meta_value = schema::index_meta::VALUE,
    index_meta = schema::index_meta::TABLE,
    index_meta_key = schema::index_meta::KEY
);

/// Every key and value of `index_meta`.
const META_ALL_SQL: &str = formatcp!(
    "SELECT {index_meta_key}, {index_meta_value} FROM {index_meta}",
    index_meta_key = schema::index_meta::KEY,
    index_meta_value = schema::index_meta::VALUE,
    index_meta = schema::index_meta::TABLE
);

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

/// How the source description of an index built from a documentation
/// site starts (`docs:/usr/share/doc/python3.11/html`).
pub const DOCS_SOURCE_PREFIX: &str = "docs:";

impl IndexInfo {
    pub fn size_bytes(&self) -> u64 {
        self.page_size * self.page_count
    }

    /// Whether the index holds a documentation site: its chats are pages
    /// and its messages their sections ([`crate::plan::Corpus`]).
    pub(crate) fn is_doc_site(&self) -> bool {
        self.source.starts_with(DOCS_SOURCE_PREFIX)
    }
}

/// `tables` and every index on them, by name: the b-trees a scan of
/// those tables may read (the planner may scan an index that covers the
/// columns a statement needs instead of the table).
pub fn btrees_of(conn: &Connection, tables: &[&str]) -> Result<Vec<String>> {
    let mut s = conn
        .prepare_cached(
            "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ?1 ORDER BY name",
        )
        .ctx("listing indexes")?;
    let mut out = Vec::new();
    for t in tables {
        out.push((*t).to_string());
        let names = s
            .query_map([t], |r| r.get::<_, String>(0))
            .ctx("listing indexes")?;
        for n in names {
            out.push(n.ctx("listing indexes")?);
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
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

/// Whether the file at `path` is a gitsense-search index of any format
/// version (an SQLite database with the `index_meta` table): what a build
/// may replace without being told to.
pub fn is_index_file(path: &Path) -> bool {
    let Ok(conn) = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    ) else {
        return false;
    };
    conn.query_row(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?1",
        [schema::index_meta::TABLE],
        |_| Ok(()),
    )
    .is_ok()
}

/// Checks that a connection holds an index of this format version.
pub fn verify(conn: &Connection) -> Result<IndexInfo> {
    let has_meta: Option<String> = conn
        .query_row(
            "SELECT name FROM sqlite_master WHERE type='table' AND name=?1",
            [schema::index_meta::TABLE],
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
    check_version(&info)?;
    Ok(info)
}

/// An index of another format version is an `index.version_mismatch`.
pub(crate) fn check_version(info: &IndexInfo) -> Result<()> {
    if info.format_version != FORMAT_VERSION {
        return Err(Error::new(
            "index.version_mismatch",
            format!(
                "index format version {} is not supported by this build (expects {}); rebuild the index",
                info.format_version, FORMAT_VERSION
            ),
        ));
    }
    Ok(())
}

/// Reads `index_meta` and the page geometry.
pub(crate) fn read_info(conn: &Connection) -> Result<IndexInfo> {
    // One statement for the whole table (a few short rows): each statement
    // prepared is a parse and a code generation, which a cold browser
    // module runs slowly on the first answer's path.
    let meta: std::collections::HashMap<String, String> = conn
        .prepare(META_ALL_SQL)
        .and_then(|mut s| {
            s.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?
                .collect()
        })
        .ctx("reading index_meta")?;
    let page_size: u64 = conn
        .query_row("PRAGMA page_size", [], |r| r.get::<_, i64>(0))
        .ctx("reading page size")? as u64;
    let page_count: u64 = conn
        .query_row("PRAGMA page_count", [], |r| r.get::<_, i64>(0))
        .ctx("reading page count")? as u64;
    info_from(&meta, page_size, page_count)
}

/// An [`IndexInfo`] from `index_meta`'s entries and the page geometry
/// (however they were read).
pub(crate) fn info_from(
    meta: &std::collections::HashMap<String, String>,
    page_size: u64,
    page_count: u64,
) -> Result<IndexInfo> {
    let get = |key: &str| -> Result<String> {
        meta.get(key)
            .cloned()
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

/// Builds a small index at `path` for the documentation's examples: one
/// chat ("Payments", id 1) with a user question and an assistant answer
/// holding a JavaScript code block.
#[doc(hidden)]
pub fn write_example(path: &Path) -> Result<std::path::PathBuf> {
    use crate::model::{Chat, CodeBlock, Message};
    use serde_json::json;
    let mut w = IndexWriter::create(
        path,
        SourceInfo {
            description: "example".into(),
            built_at: Some("2026-01-01T00:00:00Z".into()),
        },
    )?;
    w.add_chat(&Chat {
        id: 1,
        parent_id: 0,
        chat_type: "regular".into(),
        uuid: None,
        name: "Payments".into(),
        owner: None,
        group_id: None,
        created_at: None,
        modified_at: None,
        meta: json!({}),
    })?;
    let message = |id: i64, role: &str, content: &str| Message {
        id,
        chat_id: 1,
        msg_type: "regular".into(),
        role: role.into(),
        content: content.into(),
        title: String::new(),
        keywords: String::new(),
        meta: json!({}),
        created_at: None,
        updated_at: None,
    };
    w.add_message(&message(10, "user", "How do I retry a failed payment?"))?;
    let code = "async function retryPayment(id) {\n  return charge(id, { retry: true });\n}";
    w.add_message(&message(
        11,
        "assistant",
        &format!("Call the charge again with retry set:\n\n```javascript\n{code}\n```"),
    ))?;
    w.add_code_block(&CodeBlock::from_text(
        11_000,
        11,
        code.into(),
        Some("javascript".into()),
        || "example-block".into(),
    ))?;
    w.finish()?;
    Ok(path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dotted_titles_also_answer_to_their_last_part() {
        let names = message_names("json.dumps\nSerialize", "module json\nos.path");
        for n in ["json dumps", "dumps", "serialize", "module json", "os path"] {
            assert!(names.contains(&name_key(n).unwrap()), "{n}");
        }
        // Keywords match as whole lines only.
        assert!(!names.contains(&name_key("path").unwrap()));
        assert_eq!(name_key("JSON.Dumps"), name_key("json dumps"));
        assert_eq!(name_key("--"), None);
    }
}
