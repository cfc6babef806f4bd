//! Builds an index file from model records.
//!
//! Importers call `add_*` in any order (parents need not come first), then
//! [`IndexWriter::finish`], which derives chat paths, lineages, branch names
//! and message stats, computes the corpus revision (SHA-256 over every row
//! in id order), rebuilds and optimizes the FTS tables, VACUUMs into
//! 4096-byte pages, seals the file's checksum ([`super::checksum`]) and
//! atomically renames the temporary file into place. A writer dropped
//! before `finish` removes its temporary file, so a failed build never
//! leaves a half-written index behind; so does an interrupted one, and the
//! next build removes what a crashed one left ([`super::tempfiles`]).

use super::schema::chat_details::qualified as d;
use super::schema::chats::qualified as c;
use super::schema::{
    chat_details, chats, code_blocks, code_text, groups, index_meta, message_names, message_text,
    messages, rank_stats,
};
use super::tempfiles::{self, TempFile};
use super::{records, schema, FORMAT_VERSION, PAGE_SIZE};
use crate::error::{DbContext, Error, Result};
use crate::model::canonical_language;
use crate::model::{Chat, CodeBlock, Group, Message};
use const_format::formatcp;
use rusqlite::{params, types::ValueRef, Connection, OptionalExtension};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Describes where an index came from (stored in `index_meta.source`).
#[derive(Debug, Clone)]
pub struct SourceInfo {
    /// e.g. `gitsense-db:sample.db`, `docs:/usr/share/doc/python3.11/html`.
    pub description: String,
    /// Build time to record; `None` uses `SOURCE_DATE_EPOCH` when set
    /// (reproducible builds) or the current time.
    pub built_at: Option<String>,
}

/// What a finished build produced.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BuildStats {
    pub path: PathBuf,
    pub revision: String,
    pub chats: u64,
    pub messages: u64,
    pub code_blocks: u64,
    pub groups: u64,
    pub size_bytes: u64,
}

/// The steps of [`IndexWriter::finish_with`] after the records are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishStep {
    /// Chat paths, lineages, branch names, message stats (not counted).
    Derive,
    /// The corpus revision: every content row hashed (rows).
    Revision,
    /// The full-text tables rebuilt and optimized (tables).
    FullText,
    /// Token counts read for ranking (messages and code blocks).
    RankingRecords,
    /// ANALYZE, VACUUM and the checksum (not counted).
    Compact,
}

impl FinishStep {
    /// What a progress line calls the step, with its unit when counted.
    pub fn label(self) -> &'static str {
        match self {
            FinishStep::Derive => "deriving chat paths and stats",
            FinishStep::Revision => "hashing the corpus (rows)",
            FinishStep::FullText => "building the full-text index (tables)",
            FinishStep::RankingRecords => "writing ranking records (records)",
            FinishStep::Compact => "compacting and sealing the index",
        }
    }
}

/// Where [`IndexWriter::finish_with`] is: `done` of `total` in `step`
/// (`total` 0: the step is not counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FinishProgress {
    pub step: FinishStep,
    pub done: u64,
    pub total: u64,
}

impl FinishProgress {
    fn start(step: FinishStep, total: u64) -> FinishProgress {
        FinishProgress {
            step,
            done: 0,
            total,
        }
    }
}

/// Writes an index file: create it, add the model records in any order,
/// then [`IndexWriter::finish`] (nothing is at `out` until then).
///
/// ```
/// use gitsense_engine::index::{IndexWriter, SourceInfo};
/// use gitsense_engine::model::{Chat, CodeBlock, Group, Message};
/// use serde_json::json;
/// # let dir = tempfile::tempdir()?;
/// let out = dir.path().join("notes.gsx");
/// let mut w = IndexWriter::create(&out, SourceInfo { description: "notes".into(), built_at: None })?;
/// w.add_group(&Group { id: 1, name: "acme/payments".into() })?;
/// w.add_chat(&Chat {
///     id: 1, parent_id: 0, chat_type: "regular".into(), uuid: None,
///     name: "Retries".into(), owner: None, group_id: Some(1),
///     created_at: None, modified_at: None, meta: json!({}),
/// })?;
/// let code = "retry(charge, 3)";
/// w.add_message(&Message {
///     id: 1, chat_id: 1, msg_type: "regular".into(), role: "assistant".into(),
///     content: format!("```python\n{code}\n```"), title: String::new(),
///     keywords: String::new(), meta: json!({}), created_at: None, updated_at: None,
/// })?;
/// w.add_code_block(&CodeBlock::from_text(1, 1, code.into(), Some("python".into()), || "b1".into()))?;
/// assert!(!out.exists());
/// let stats = w.finish()?;
/// assert_eq!((stats.chats, stats.messages, stats.code_blocks, stats.groups), (1, 1, 1, 1));
/// assert!(out.exists());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct IndexWriter {
    conn: Option<Connection>,
    tmp: TempFile,
    out_path: PathBuf,
    source: SourceInfo,
    shift: IdShift,
    /// Pages (chat ids as stored) and their languages
    /// ([`IndexWriter::set_page_languages`]).
    page_languages: Vec<(i64, String)>,
}

/// What is added to the ids an importer gives, so that several sources
/// (each numbering its records from 1) share one index: set by
/// [`IndexWriter::next_source`] to the largest ids so far.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct IdShift {
    group: i64,
    chat: i64,
    message: i64,
    code_block: i64,
}

impl IndexWriter {
    /// Starts a build that will end up at `out`.
    pub fn create(out: &Path, source: SourceInfo) -> Result<Self> {
        let file_name = out
            .file_name()
            .ok_or_else(|| Error::new("import.bad_output", "output path has no file name"))?
            .to_string_lossy()
            .to_string();
        // Unique per writer, so concurrent builds never share a temp file.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp_path = out.with_file_name(format!(".{file_name}.{}-{n}.tmp", std::process::id()));
        if let Some(dir) = out.parent() {
            if !dir.as_os_str().is_empty() && !dir.exists() {
                std::fs::create_dir_all(dir).map_err(|e| {
                    Error::io("creating output directory", e)
                        .with_location(dir.display().to_string())
                })?;
            }
            // What an interrupted or crashed build of the same output left.
            tempfiles::remove_stale(dir, &format!(".{file_name}."), ".tmp");
        }
        let tmp = TempFile::new(tmp_path.clone());
        let _ = std::fs::remove_file(&tmp_path);
        let conn = Connection::open(&tmp_path).map_err(|e| {
            Error::new(
                "import.bad_output",
                format!("cannot create index file: {e}"),
            )
            .with_location(tmp_path.display().to_string())
        })?;
        conn.execute_batch(&format!(
            "PRAGMA page_size={PAGE_SIZE}; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
        ))
        .ctx("configuring new index")?;
        conn.execute_batch(&schema::ddl())
            .ctx("creating index schema")?;
        conn.execute_batch("BEGIN")
            .ctx("starting build transaction")?;
        Ok(IndexWriter {
            conn: Some(conn),
            tmp,
            out_path: out.to_path_buf(),
            source,
            shift: IdShift::default(),
            page_languages: Vec::new(),
        })
    }

    /// Starts a build that holds every record of the index at `base` and
    /// will end up at `out` (which may be `base` itself: the new file
    /// replaces it atomically at [`IndexWriter::finish`]). The records an
    /// importer adds next are a further source ([`IndexWriter::next_source`]),
    /// and `finish` derives, hashes and indexes everything again, so the
    /// result is the index a build of all the sources in one go gives:
    /// the same ids, revision, ranking and results.
    ///
    /// `base` must be an index of this format version whose checksum holds
    /// (`index.*` errors otherwise). Its source description comes first in
    /// the new one: `base + source.description`.
    ///
    /// ```
    /// use gitsense_engine::index::{IndexWriter, SourceInfo};
    /// use gitsense_engine::model::Chat;
    /// # let dir = tempfile::tempdir()?;
    /// let chat = |name: &str| Chat {
    ///     id: 1,
    ///     parent_id: 0,
    ///     chat_type: "regular".into(),
    ///     uuid: None,
    ///     name: name.into(),
    ///     owner: None,
    ///     group_id: None,
    ///     created_at: None,
    ///     modified_at: None,
    ///     meta: serde_json::json!({}),
    /// };
    /// let index = dir.path().join("chats.gsx");
    /// let source = |d: &str| SourceInfo { description: d.into(), built_at: None };
    /// let mut w = IndexWriter::create(&index, source("first"))?;
    /// w.add_chat(&chat("first source"))?;
    /// w.finish()?;
    /// let mut w = IndexWriter::extend(&index, &index, source("second"))?;
    /// w.add_chat(&chat("second source"))?; // id 1 again: stored as 2
    /// assert_eq!(w.finish()?.chats, 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn extend(base: &Path, out: &Path, source: SourceInfo) -> Result<Self> {
        let at = || base.display().to_string();
        super::checksum::check(base)?;
        let base_source = super::read_info(&super::open_file(base)?)?.source;
        let description = if base_source.is_empty() {
            source.description
        } else {
            format!("{base_source} + {}", source.description)
        };
        let mut w = IndexWriter::create(
            out,
            SourceInfo {
                description,
                built_at: source.built_at,
            },
        )?;
        let conn = w.conn();
        // SQLite attaches and detaches outside a transaction only: the
        // build's is ended for the copy and begun again after it.
        conn.execute_batch("COMMIT")
            .ctx("starting to copy the index to add to")?;
        // Bound, not spliced: the path is user text.
        conn.execute(
            "ATTACH DATABASE ?1 AS base",
            [format!("file:{}?mode=ro", uri_path(base))],
        )
        .map_err(|e| Error::db("attaching the index to add to", e).with_location(at()))?;
        conn.execute_batch("BEGIN")
            .ctx("copying the index to add to")?;
        for t in RECORD_TABLES {
            conn.execute_batch(&format!("INSERT INTO main.{t} SELECT * FROM base.{t}"))
                .map_err(|e| Error::db(&format!("copying {t}"), e).with_location(at()))?;
        }
        // The base's page languages, every page named (its own language's
        // too: the language of most pages is elected again at the end).
        let langs: Option<String> = conn
            .query_row(
                formatcp!(
                    "SELECT {value} FROM base.{table} WHERE {key} = ?1",
                    value = index_meta::VALUE,
                    table = index_meta::TABLE,
                    key = index_meta::KEY
                ),
                [crate::langs::META_KEY],
                |r| r.get(0),
            )
            .optional()
            .ctx("reading the page languages of the index to add to")?;
        let mut base_languages = Vec::new();
        if let Some(langs) = langs
            .as_deref()
            .and_then(crate::langs::PageLanguages::decode)
        {
            let mut ids = conn
                .prepare(formatcp!(
                    "SELECT {id} FROM {chats}",
                    id = schema::chats::ID,
                    chats = schema::chats::TABLE
                ))
                .ctx("reading the pages of the index to add to")?;
            let ids = ids
                .query_map([], |r| r.get::<_, i64>(0))
                .ctx("reading the pages of the index to add to")?
                .collect::<rusqlite::Result<Vec<i64>>>()
                .ctx("reading the pages of the index to add to")?;
            let lang_of = |id: i64| {
                langs
                    .others
                    .iter()
                    .find(|(_, r)| r.iter().any(|&(a, b)| (a..=b).contains(&id)))
                    .map_or(langs.main.clone(), |(l, _)| l.clone())
            };
            base_languages = ids.into_iter().map(|id| (id, lang_of(id))).collect();
        }
        conn.execute_batch("COMMIT; DETACH DATABASE base; BEGIN")
            .ctx("detaching the index to add to")?;
        w.page_languages = base_languages;
        w.next_source()?;
        Ok(w)
    }

    /// Starts the next source of a build that has several: the records an
    /// importer adds from now on keep the ids it gives them among
    /// themselves (a chat's parent, a message's chat, a code block's
    /// message), shifted past every record already added.
    ///
    /// ```
    /// use gitsense_engine::index::{IndexWriter, SourceInfo};
    /// use gitsense_engine::model::Chat;
    /// # let dir = tempfile::tempdir()?;
    /// let source = SourceInfo { description: "two sources".into(), built_at: None };
    /// let mut w = IndexWriter::create(&dir.path().join("both.gsx"), source)?;
    /// let chat = |name: &str| Chat {
    ///     id: 1,
    ///     parent_id: 0,
    ///     chat_type: "regular".into(),
    ///     uuid: None,
    ///     name: name.into(),
    ///     owner: None,
    ///     group_id: None,
    ///     created_at: None,
    ///     modified_at: None,
    ///     meta: serde_json::json!({}),
    /// };
    /// w.add_chat(&chat("first source"))?;
    /// w.next_source()?;
    /// w.add_chat(&chat("second source"))?; // id 1 again: stored as 2
    /// assert_eq!(w.finish()?.chats, 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn next_source(&mut self) -> Result<()> {
        let max = |table: &str, id: &str| -> Result<i64> {
            self.conn()
                .query_row(
                    &format!("SELECT coalesce(max({id}), 0) FROM {table}"),
                    [],
                    |r| r.get(0),
                )
                .ctx("reading the largest id")
        };
        self.shift = IdShift {
            group: max(schema::groups::TABLE, schema::groups::ID)?,
            chat: max(schema::chats::TABLE, schema::chats::ID)?,
            message: max(schema::messages::TABLE, schema::messages::ID)?,
            code_block: max(schema::code_blocks::TABLE, schema::code_blocks::ID)?,
        };
        Ok(())
    }

    fn conn(&self) -> &Connection {
        self.conn.as_ref().expect("connection present until finish")
    }

    pub fn add_group(&mut self, g: &Group) -> Result<()> {
        self.conn()
            .prepare_cached(formatcp!(
                "INSERT INTO {table}({id}, {name}) VALUES (?1, ?2)",
                table = groups::TABLE,
                id = groups::ID,
                name = groups::NAME
            ))
            .and_then(|mut s| s.execute(params![g.id + self.shift.group, g.name]))
            .map_err(|e| dup_or_db(e, "group", g.id))?;
        Ok(())
    }

    /// Names the languages of the pages (chats, by the ids this source
    /// gave them) of a site that has any: `finish` records them when there
    /// are two or more ([`crate::langs`]).
    pub fn set_page_languages(&mut self, pages: impl IntoIterator<Item = (i64, String)>) {
        let shift = self.shift.chat;
        self.page_languages
            .extend(pages.into_iter().map(|(id, lang)| (id + shift, lang)));
    }

    pub fn add_chat(&mut self, c: &Chat) -> Result<()> {
        insert_chat(self.conn(), c, self.shift)
    }

    pub fn add_message(&mut self, m: &Message) -> Result<()> {
        insert_message(self.conn(), m, self.shift)
    }

    pub fn add_code_block(&mut self, b: &CodeBlock) -> Result<()> {
        insert_code_block(self.conn(), b, self.shift)
    }

    /// Derives, indexes, compacts and moves the index into place.
    pub fn finish(self) -> Result<BuildStats> {
        self.finish_with(&mut |_| {})
    }

    /// [`IndexWriter::finish`], telling `progress` each step as it starts
    /// and, for the counted ones, how far it is.
    pub fn finish_with(mut self, progress: &mut dyn FnMut(FinishProgress)) -> Result<BuildStats> {
        let conn = self.conn.take().expect("connection present until finish");
        let built_at = self.source.built_at.clone().unwrap_or_else(build_time);
        progress(FinishProgress::start(FinishStep::Derive, 0));
        derive(&conn)?;
        let revision = revision(&conn, progress)?;
        let count = |t: &str| -> Result<u64> {
            conn.query_row(&format!("SELECT count(*) FROM {t}"), [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n as u64)
            .ctx("counting rows")
        };
        let (chats, messages, code_blocks, groups) = (
            count(schema::chats::TABLE)?,
            count(schema::messages::TABLE)?,
            count(schema::code_blocks::TABLE)?,
            count(schema::groups::TABLE)?,
        );
        let meta: [(&str, String); 10] = [
            ("format_version", FORMAT_VERSION.to_string()),
            ("revision", revision.clone()),
            ("built_at", built_at),
            ("source", self.source.description.clone()),
            ("count_chats", chats.to_string()),
            ("count_messages", messages.to_string()),
            ("count_code_blocks", code_blocks.to_string()),
            ("count_groups", groups.to_string()),
            (
                "generator",
                format!("gitsense-search {}", env!("CARGO_PKG_VERSION")),
            ),
            // Replaced by the file's checksum once the file is final.
            (
                super::checksum::CHECKSUM_KEY,
                super::checksum::placeholder(&revision),
            ),
        ];
        let langs = crate::langs::PageLanguages::of(&self.page_languages)
            .map(|l| (crate::langs::META_KEY, l.encode()));
        for (k, v) in meta.into_iter().chain(langs) {
            conn.execute(
                formatcp!(
                    "INSERT INTO {table}({key}, {value}) VALUES (?1, ?2)",
                    table = index_meta::TABLE,
                    key = index_meta::KEY,
                    value = index_meta::VALUE
                ),
                params![k, v],
            )
            .ctx("writing index_meta")?;
        }
        let tables = super::FTS_TABLES.len() as u64;
        for (i, t) in super::FTS_TABLES.iter().enumerate() {
            progress(FinishProgress {
                step: FinishStep::FullText,
                done: i as u64,
                total: tables,
            });
            conn.execute_batch(&format!(
                "INSERT INTO {t}({t}) VALUES('rebuild'); INSERT INTO {t}({t}) VALUES('optimize');"
            ))
            .ctx("building full-text index")?;
        }
        for t in super::FTS_TABLES {
            super::doclists::leaf_ends(&conn, t)?;
        }
        crate::typo::build_terms(&conn)?;
        progress(FinishProgress::start(
            FinishStep::RankingRecords,
            messages + code_blocks,
        ));
        rank_lengths(&conn, progress)?;
        progress(FinishProgress::start(FinishStep::Compact, 0));
        conn.execute_batch("COMMIT; ANALYZE;")
            .ctx("committing build")?;
        // secure_delete: VACUUM's b-tree balancing leaves the bytes of
        // moved cells behind in free space; zeroed, they compress away
        // (the hot pages a browser fetches first are mostly interior
        // pages, where balancing moves the most cells).
        conn.execute_batch("PRAGMA journal_mode=DELETE; PRAGMA secure_delete=ON; VACUUM;")
            .ctx("compacting index")?;
        drop(conn);
        super::checksum::seal(self.tmp.path(), &revision)?;
        std::fs::rename(self.tmp.path(), &self.out_path).map_err(|e| {
            Error::io("moving index into place", e)
                .with_location(self.out_path.display().to_string())
        })?;
        self.tmp.keep();
        let size_bytes = std::fs::metadata(&self.out_path)
            .map(|m| m.len())
            .unwrap_or(0);
        Ok(BuildStats {
            path: self.out_path.clone(),
            revision,
            chats,
            messages,
            code_blocks,
            groups,
            size_bytes,
        })
    }
}

/// Inserts a chat's rows (not its full-text entry: `finish` rebuilds the
/// full-text tables, a live write adds it itself).
pub(super) fn insert_chat(conn: &Connection, c: &Chat, shift: IdShift) -> Result<()> {
    let path = meta_str(&c.meta, "path").or_else(|| meta_str(&c.meta, "file_path"));
    let language = meta_str(&c.meta, "language").map(|l| canonical_language(&l));
    let id = c.id + shift.chat;
    // 0: no parent (a top-level chat), in every source.
    let parent_id = if c.parent_id == 0 {
        0
    } else {
        c.parent_id + shift.chat
    };
    let group_id = c.group_id.map(|g| g + shift.group);
    conn.prepare_cached(formatcp!(
        "INSERT INTO {table}({ID}, {PARENT_ID}, {TYPE}, {NAME}, {PATH}, {LANGUAGE}, {CREATED_AT}, \
         {MODIFIED_AT}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        table = chats::TABLE,
        ID = chats::ID,
        PARENT_ID = chats::PARENT_ID,
        TYPE = chats::TYPE,
        NAME = chats::NAME,
        PATH = chats::PATH,
        LANGUAGE = chats::LANGUAGE,
        CREATED_AT = chats::CREATED_AT,
        MODIFIED_AT = chats::MODIFIED_AT
    ))
    .and_then(|mut s| {
        s.execute(params![
            id,
            parent_id,
            c.chat_type,
            c.name,
            path,
            language,
            c.created_at,
            c.modified_at
        ])
    })
    .map_err(|e| dup_or_db(e, "chat", c.id))?;
    conn.prepare_cached(formatcp!(
        "INSERT INTO {table}({ID}, {UUID}, {OWNER}, {GROUP_ID}, {META}) VALUES (?1, ?2, ?3, ?4, ?5)",
        table = chat_details::TABLE,
        ID = chat_details::ID,
        UUID = chat_details::UUID,
        OWNER = chat_details::OWNER,
        GROUP_ID = chat_details::GROUP_ID,
        META = chat_details::META
    ))
    .and_then(|mut s| {
        s.execute(params![
            id,
            c.uuid,
            c.owner,
            group_id,
            json_or_null(&c.meta)
        ])
    })
    .ctx("inserting chat details")?;
    Ok(())
}

/// Inserts a message's rows and names (see [`insert_chat`]).
pub(super) fn insert_message(conn: &Connection, m: &Message, shift: IdShift) -> Result<()> {
    let file_path = meta_str(&m.meta, "file_path");
    let language = meta_str(&m.meta, "language").map(|l| canonical_language(&l));
    let (id, chat_id) = (m.id + shift.message, m.chat_id + shift.chat);
    conn.prepare_cached(formatcp!(
        "INSERT INTO {table}({ID}, {CHAT_ID}, {TYPE}, {ROLE}, {FILE_PATH}, {LANGUAGE}, \
         {CREATED_AT}, {UPDATED_AT}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        table = messages::TABLE,
        ID = messages::ID,
        CHAT_ID = messages::CHAT_ID,
        TYPE = messages::TYPE,
        ROLE = messages::ROLE,
        FILE_PATH = messages::FILE_PATH,
        LANGUAGE = messages::LANGUAGE,
        CREATED_AT = messages::CREATED_AT,
        UPDATED_AT = messages::UPDATED_AT
    ))
    .and_then(|mut s| {
        s.execute(params![
            id,
            chat_id,
            m.msg_type,
            m.role,
            file_path,
            language,
            m.created_at,
            m.updated_at
        ])
    })
    .map_err(|e| dup_or_db(e, "message", m.id))?;
    conn.prepare_cached(formatcp!(
        "INSERT INTO {table}({ID}, {TITLE}, {BODY}, {KEYWORDS}, {META}) VALUES (?1, ?2, ?3, ?4, ?5)",
        table = message_text::TABLE,
        ID = message_text::ID,
        TITLE = message_text::TITLE,
        BODY = message_text::BODY,
        KEYWORDS = message_text::KEYWORDS,
        META = message_text::META
    ))
    .and_then(|mut s| {
        s.execute(params![
            id,
            m.title,
            m.content,
            m.keywords,
            json_or_null(&m.meta)
        ])
    })
    .ctx("inserting message text")?;
    for key in super::message_names(&m.title, &m.keywords) {
        conn.prepare_cached(formatcp!(
            "INSERT INTO {table}({KEY}, {MESSAGE_ID}) VALUES (?1, ?2)",
            table = message_names::TABLE,
            KEY = message_names::KEY,
            MESSAGE_ID = message_names::MESSAGE_ID
        ))
        .and_then(|mut s| s.execute(params![key, id]))
        .ctx("inserting message names")?;
    }
    Ok(())
}

/// Inserts a code block's rows (see [`insert_chat`]).
pub(super) fn insert_code_block(conn: &Connection, b: &CodeBlock, shift: IdShift) -> Result<()> {
    let (id, message_id) = (b.id + shift.code_block, b.message_id + shift.message);
    conn.prepare_cached(formatcp!(
        "INSERT INTO {table}({ID}, {MESSAGE_ID}, {CHAT_ID}, {UUID}, {TYPE}, {LANGUAGE}, \
         {COMPONENT}, {CREATED_AT}, {SIZE}) VALUES (?1, ?2, 0, ?3, ?4, ?5, ?6, ?7, ?8)",
        table = code_blocks::TABLE,
        ID = code_blocks::ID,
        MESSAGE_ID = code_blocks::MESSAGE_ID,
        CHAT_ID = code_blocks::CHAT_ID,
        UUID = code_blocks::UUID,
        TYPE = code_blocks::TYPE,
        LANGUAGE = code_blocks::LANGUAGE,
        COMPONENT = code_blocks::COMPONENT,
        CREATED_AT = code_blocks::CREATED_AT,
        SIZE = code_blocks::SIZE
    ))
    .and_then(|mut s| {
        s.execute(params![
            id,
            message_id,
            b.uuid,
            b.block_type,
            b.language.as_deref().map(canonical_language),
            b.component,
            b.created_at,
            b.content.chars().count() as i64
        ])
    })
    .map_err(|e| dup_or_db(e, "code block", b.id))?;
    conn.prepare_cached(formatcp!(
        "INSERT INTO {table}({ID}, {CONTENT}, {PARENT_UUID}, {DESCRIPTION}, {MAJOR}, {MINOR}, \
         {PATCH}, {HEADER}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        table = code_text::TABLE,
        ID = code_text::ID,
        CONTENT = code_text::CONTENT,
        PARENT_UUID = code_text::PARENT_UUID,
        DESCRIPTION = code_text::DESCRIPTION,
        MAJOR = code_text::MAJOR,
        MINOR = code_text::MINOR,
        PATCH = code_text::PATCH,
        HEADER = code_text::HEADER
    ))
    .and_then(|mut s| {
        s.execute(params![
            id,
            b.content,
            b.parent_uuid,
            b.description,
            b.major,
            b.minor,
            b.patch,
            b.header.as_ref().map(|h| h.to_string())
        ])
    })
    .ctx("inserting code text")?;
    Ok(())
}

impl Drop for IndexWriter {
    fn drop(&mut self) {
        // Closed before `tmp` (a later field) removes the file.
        self.conn.take();
    }
}

fn dup_or_db(e: rusqlite::Error, what: &str, id: i64) -> Error {
    if let rusqlite::Error::SqliteFailure(f, _) = &e {
        if f.code == rusqlite::ErrorCode::ConstraintViolation {
            return Error::new(
                "import.duplicate_id",
                format!("{what} id {id} was added twice"),
            );
        }
    }
    Error::db(&format!("inserting {what} {id}"), e)
}

fn meta_str(meta: &Value, key: &str) -> Option<String> {
    match meta.get(key)? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

fn json_or_null(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::Object(m) if m.is_empty() => None,
        v => Some(v.to_string()),
    }
}

fn build_time() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs() as i64)
                .unwrap_or(0)
        });
    crate::util::iso8601_utc(secs)
}

pub(super) struct ChatNode {
    parent: i64,
    name: String,
    chat_type: String,
    group_id: Option<i64>,
    branch_here: Option<String>,
}

/// Reads a chat's [`ChatNode`]: `CHAT_NODES` (with a `WHERE` on `c.id`
/// for some).
pub(super) const CHAT_NODES: &str = formatcp!(
    "SELECT {c_id}, {c_parent_id}, {c_name}, {c_type}, {d_group_id}, {d_meta} FROM {chats} \
     {chats_alias} JOIN {chat_details} {details_alias} ON {d_id} = {c_id}",
    c_id = c::ID,
    c_parent_id = c::PARENT_ID,
    c_name = c::NAME,
    c_type = c::TYPE,
    d_group_id = d::GROUP_ID,
    d_meta = d::META,
    chats = chats::TABLE,
    chats_alias = chats::ALIAS,
    chat_details = chat_details::TABLE,
    details_alias = chat_details::ALIAS,
    d_id = d::ID
);

/// A row of [`CHAT_NODES`] as its id and node.
pub(super) fn chat_node(r: &rusqlite::Row) -> rusqlite::Result<(i64, ChatNode)> {
    let chat_type: String = r.get(3)?;
    let meta: Option<String> = r.get(5)?;
    let meta: Value = meta
        .and_then(|m| serde_json::from_str(&m).ok())
        .unwrap_or(Value::Null);
    let name: String = r.get(2)?;
    let branch_here = if chat_type == "git-ref" {
        Some(meta_str(&meta, "name").unwrap_or_else(|| name.clone()))
    } else {
        meta.get("refContext")
            .and_then(|rc| rc.get("refName"))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    Ok((
        r.get(0)?,
        ChatNode {
            parent: r.get(1)?,
            name,
            chat_type,
            group_id: r.get(4)?,
            branch_here,
        },
    ))
}

impl ChatNode {
    pub(super) fn parent(&self) -> i64 {
        self.parent
    }
}

/// Every group's name by id.
pub(super) fn group_names(conn: &Connection) -> Result<HashMap<i64, String>> {
    let mut s = conn
        .prepare(formatcp!(
            "SELECT {ID}, {NAME} FROM {table}",
            table = groups::TABLE,
            ID = groups::ID,
            NAME = groups::NAME
        ))
        .ctx("reading groups")?;
    let rows = s
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .ctx("reading groups")?;
    rows.collect::<std::result::Result<_, _>>()
        .ctx("reading groups")
}

/// Most chats on the chain from a root down to a chat, the chat included:
/// a chat's path names them all, so a deeper tree would make paths (and
/// the work of deriving them) grow with the square of its depth.
pub const MAX_CHAT_DEPTH: usize = 256;

/// Checks that the parents of each chat of `ids` lead to a root (or to a
/// chat not in `nodes`) through at most [`MAX_CHAT_DEPTH`] chats, with no
/// chat met twice: `{prefix}.chat_cycle` naming a chat of the cycle, or
/// `{prefix}.chat_too_deep`. Linear in the chats: each chain is walked
/// once, its depths remembered for the chains that join it.
pub(super) fn check_chains(
    nodes: &HashMap<i64, ChatNode>,
    ids: impl IntoIterator<Item = i64>,
    prefix: &str,
) -> Result<()> {
    let mut depth: HashMap<i64, usize> = HashMap::new();
    for id in ids {
        let mut chain = Vec::new();
        let mut on_chain = HashSet::new();
        let mut cur = id;
        let base = loop {
            if let Some(&d) = depth.get(&cur) {
                break d;
            }
            let Some(node) = nodes.get(&cur).filter(|_| cur != 0) else {
                break 0;
            };
            if !on_chain.insert(cur) {
                return Err(Error::new(
                    &format!("{prefix}.chat_cycle"),
                    format!("chat {cur} is its own ancestor: its parents lead back to it"),
                )
                .with_location(format!("chat {cur}")));
            }
            chain.push(cur);
            cur = node.parent;
        };
        if base + chain.len() > MAX_CHAT_DEPTH {
            return Err(Error::new(
                &format!("{prefix}.chat_too_deep"),
                format!(
                    "chat {id} is {} chats below its root, over the {MAX_CHAT_DEPTH} a chat path may name",
                    base + chain.len() - 1
                ),
            )
            .with_location(format!("chat {id}")));
        }
        for (below, c) in chain.iter().rev().enumerate() {
            depth.insert(*c, base + below + 1);
        }
    }
    Ok(())
}

/// Writes the derived columns of chat `id` (root, lineage, chat path,
/// branch, repo) from its chain of ancestors in `nodes` (checked by
/// [`check_chains`]); a missing parent ends the chain.
pub(super) fn derive_chat(
    conn: &Connection,
    id: i64,
    nodes: &HashMap<i64, ChatNode>,
    groups: &HashMap<i64, String>,
) -> Result<()> {
    let mut chain = vec![id];
    let mut cur = nodes[&id].parent;
    while cur != 0 && nodes.contains_key(&cur) && chain.len() < MAX_CHAT_DEPTH {
        chain.push(cur);
        cur = nodes[&cur].parent;
    }
    chain.reverse();
    let root = chain[0];
    let lineage = format!(
        "/{}/",
        chain
            .iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join("/")
    );
    let path = chain
        .iter()
        .map(|i| nodes[i].name.as_str())
        .collect::<Vec<_>>()
        .join(" -> ");
    let branch = chain
        .iter()
        .rev()
        .find_map(|i| {
            let n = &nodes[i];
            if n.chat_type == "git-ref" {
                n.branch_here.clone()
            } else {
                None
            }
        })
        .or_else(|| nodes[&id].branch_here.clone());
    let repo = chain
        .iter()
        .rev()
        .find_map(|i| nodes[i].group_id.and_then(|g| groups.get(&g)).cloned())
        .filter(|_| nodes[&id].chat_type.starts_with("git-"));
    conn.prepare_cached(formatcp!(
        "UPDATE {table} SET {ROOT_ID}=?2, {LINEAGE}=?3, {BRANCH_NAME}=?4, {REPO}=?5 WHERE {ID}=?1",
        table = chats::TABLE,
        ROOT_ID = chats::ROOT_ID,
        LINEAGE = chats::LINEAGE,
        BRANCH_NAME = chats::BRANCH_NAME,
        REPO = chats::REPO,
        ID = chats::ID
    ))
    .and_then(|mut s| s.execute(params![id, root, lineage, branch, repo]))
    .ctx("deriving chats")?;
    conn.prepare_cached(formatcp!(
        "UPDATE {table} SET {CHAT_PATH}=?2 WHERE {ID}=?1",
        table = chat_details::TABLE,
        CHAT_PATH = chat_details::CHAT_PATH,
        ID = chat_details::ID
    ))
    .and_then(|mut s| s.execute(params![id, path]))
    .ctx("deriving chats")?;
    Ok(())
}

/// Fills chat paths, lineages, roots, branch names, repos, message stats
/// and message file paths / languages inherited from their chats.
fn derive(conn: &Connection) -> Result<()> {
    // Rows that belong to nothing: a message of a chat that is not there,
    // a code block of such a message. Search would never show them (it
    // used to join every message to its chat); dropping them here lets a
    // query without filters rank from the FTS tables alone.
    conn.execute_batch(formatcp!(
        "DELETE FROM {messages} WHERE {m_chat_id} NOT IN (SELECT {c_id} FROM {chats});
         DELETE FROM {message_text} WHERE {t_id} NOT IN (SELECT {m_id} FROM {messages});
         DELETE FROM {message_names} WHERE {n_message_id} NOT IN (SELECT {m_id} FROM {messages});
         DELETE FROM {code_blocks} WHERE {b_message_id} NOT IN (SELECT {m_id} FROM {messages});
         DELETE FROM {code_text} WHERE {x_id} NOT IN (SELECT {b_id} FROM {code_blocks});",
        messages = messages::TABLE,
        m_chat_id = messages::CHAT_ID,
        m_id = messages::ID,
        chats = chats::TABLE,
        c_id = chats::ID,
        message_text = message_text::TABLE,
        t_id = message_text::ID,
        message_names = message_names::TABLE,
        n_message_id = message_names::MESSAGE_ID,
        code_blocks = code_blocks::TABLE,
        b_message_id = code_blocks::MESSAGE_ID,
        b_id = code_blocks::ID,
        code_text = code_text::TABLE,
        x_id = code_text::ID
    ))
    .ctx("dropping rows of missing chats")?;
    let groups = group_names(conn)?;
    let nodes: HashMap<i64, ChatNode> = {
        let mut s = conn.prepare(CHAT_NODES).ctx("reading chats")?;
        let rows = s.query_map([], chat_node).ctx("reading chats")?;
        rows.collect::<rusqlite::Result<_>>().ctx("reading chats")?
    };
    let mut ids: Vec<i64> = nodes.keys().copied().collect();
    ids.sort_unstable();
    check_chains(&nodes, ids.iter().copied(), "import")?;
    for id in ids {
        derive_chat(conn, id, &nodes, &groups)?;
    }
    use schema::chats::qualified as cq;
    use schema::messages::qualified as mq;
    conn.execute_batch(formatcp!(
        "UPDATE {chats} SET
           {NUM_MESSAGES} = (SELECT count(*) FROM {messages} {m} WHERE {m_chat_id} = {chats}.{c_id}),
           {LAST_UPDATED_AT} = (SELECT max(coalesce({m_updated_at}, {m_created_at})) \
             FROM {messages} {m} WHERE {m_chat_id} = {chats}.{c_id});
         UPDATE {messages} SET {FILE_PATH} = (SELECT {c_path} FROM {chats} {c} \
           WHERE {c_id_q} = {messages}.{CHAT_ID}) WHERE {FILE_PATH} IS NULL;
         UPDATE {messages} SET {LANGUAGE} = (SELECT {c_language} FROM {chats} {c} \
           WHERE {c_id_q} = {messages}.{CHAT_ID}) WHERE {LANGUAGE} IS NULL;
         UPDATE {code_blocks} SET {B_CHAT_ID} = coalesce((SELECT {m_chat_id} FROM {messages} {m} \
           WHERE {m_id} = {code_blocks}.{B_MESSAGE_ID}), 0);",
        chats = chats::TABLE,
        messages = messages::TABLE,
        code_blocks = code_blocks::TABLE,
        c = chats::ALIAS,
        m = messages::ALIAS,
        NUM_MESSAGES = chats::NUM_MESSAGES,
        LAST_UPDATED_AT = chats::LAST_UPDATED_AT,
        c_id = chats::ID,
        c_id_q = cq::ID,
        c_path = cq::PATH,
        c_language = cq::LANGUAGE,
        m_chat_id = mq::CHAT_ID,
        m_id = mq::ID,
        m_updated_at = mq::UPDATED_AT,
        m_created_at = mq::CREATED_AT,
        FILE_PATH = messages::FILE_PATH,
        LANGUAGE = messages::LANGUAGE,
        CHAT_ID = messages::CHAT_ID,
        B_CHAT_ID = code_blocks::CHAT_ID,
        B_MESSAGE_ID = code_blocks::MESSAGE_ID
    ))
    .ctx("deriving stats")?;
    Ok(())
}

/// `message_rank`, `code_rank` and `rank_stats` from FTS5's own token
/// counts (`gs_column_size`: FTS5's `xColumnSize`, which for these tables,
/// made with `columnsize=0`, tokenizes each row's text as indexing did):
/// what ranking a message or code block reads (see `index::rank` and
/// `index::records`). Averages are over the messages that have the column
/// at all.
fn rank_lengths(conn: &Connection, progress: &mut dyn FnMut(FinishProgress)) -> Result<()> {
    let ctx = "writing ranking records";
    super::rank::register_column_size(conn)?;
    let total = count_rows(conn, &[schema::messages::TABLE, schema::code_blocks::TABLE])?;
    let mut done = 0u64;
    let mut tick = || {
        done += 1;
        if done % PROGRESS_EVERY == 0 {
            progress(FinishProgress {
                step: FinishStep::RankingRecords,
                done,
                total,
            });
        }
    };
    let all = i64::MIN..=i64::MAX;
    let messages = message_records(conn, all.clone(), &mut tick)?;
    let code = code_records(conn, all, &mut tick)?;
    let message_rank = formatcp!(
        "INSERT INTO {}({}, {}) VALUES (?1, ?2)",
        schema::message_rank::TABLE,
        schema::message_rank::CHUNK,
        schema::message_rank::RECORDS
    );
    let code_rank = formatcp!(
        "INSERT INTO {}({}, {}) VALUES (?1, ?2)",
        schema::code_rank::TABLE,
        schema::code_rank::CHUNK,
        schema::code_rank::RECORDS
    );
    for (insert, recs, cols) in [
        (message_rank, &messages, &records::MESSAGE_FIELDS[..]),
        (code_rank, &code, &records::CODE_FIELDS[..]),
    ] {
        let mut insert = conn.prepare(insert).ctx(ctx)?;
        for (chunk, blob) in records::chunks(recs, cols) {
            insert.execute(params![chunk, blob]).ctx(ctx)?;
        }
    }
    let avg = |col: usize| {
        let (sum, n) = messages
            .iter()
            .map(|(_, f)| f[col])
            .filter(|&len| len > 0)
            .fold((0i64, 0i64), |(s, n), len| (s + len, n + 1));
        (n > 0).then(|| sum as f64 / n as f64)
    };
    conn.execute(
        formatcp!(
            "INSERT INTO {table}({title}, {keywords}) VALUES (?1, ?2)",
            table = rank_stats::TABLE,
            title = rank_stats::AVG_TITLE_LEN,
            keywords = rank_stats::AVG_KEYWORDS_LEN
        ),
        params![avg(1), avg(3)],
    )
    .ctx(ctx)?;
    Ok(())
}

/// The tables importers fill (everything else is derived at finish):
/// what [`IndexWriter::extend`] copies from the index it adds to.
const RECORD_TABLES: [&str; 8] = [
    schema::groups::TABLE,
    schema::chats::TABLE,
    schema::chat_details::TABLE,
    schema::messages::TABLE,
    schema::message_text::TABLE,
    schema::message_names::TABLE,
    schema::code_blocks::TABLE,
    schema::code_text::TABLE,
];

/// `path` for an SQLite `file:` URI: `?`, `#` and `%` escaped, the
/// characters URI parsing would otherwise take as its own.
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        match c {
            '?' | '#' | '%' => out.push_str(&format!("%{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Ranking records, by id, of the rows of `fts` in `ids`: the fields of
/// `sql` (id first, then `n - 1` integers; bound to the range) followed by
/// the FTS5 token count of each of the `columns` (`tick` once a row).
fn records_of(
    conn: &Connection,
    sql: &str,
    n: usize,
    fts: &str,
    columns: usize,
    ids: &std::ops::RangeInclusive<i64>,
    tick: &mut dyn FnMut(),
) -> Result<Vec<(i64, Vec<i64>)>> {
    let ctx = "writing ranking records";
    let list: Vec<String> = (0..columns)
        .map(|i| format!("{}({fts}, {i})", super::rank::COLUMN_SIZE))
        .collect();
    let range = params![ids.start(), ids.end()];
    // Every row's token counts, by id (rows without text count 0).
    let sizes: HashMap<i64, Vec<i64>> = {
        let mut s = conn
            .prepare_cached(&format!(
                "SELECT rowid, {} FROM {fts} WHERE rowid BETWEEN ?1 AND ?2",
                list.join(", ")
            ))
            .ctx(ctx)?;
        let rows = s
            .query_map(range, |r| {
                let sizes = (1..=columns)
                    .map(|i| r.get::<_, i64>(i))
                    .collect::<rusqlite::Result<Vec<i64>>>()?;
                tick();
                Ok((r.get::<_, i64>(0)?, sizes))
            })
            .ctx(ctx)?;
        rows.collect::<rusqlite::Result<_>>().ctx(ctx)?
    };
    let mut s = conn.prepare_cached(sql).ctx(ctx)?;
    let rows = s
        .query_map(range, |r| {
            let id: i64 = r.get(0)?;
            let mut fields = Vec::with_capacity(n + 2);
            for i in 1..n {
                fields.push(r.get::<_, i64>(i)?);
            }
            fields.extend(sizes.get(&id).into_iter().flatten());
            fields.resize(n - 1 + columns, 0);
            Ok((id, fields))
        })
        .ctx(ctx)?;
    rows.collect::<rusqlite::Result<_>>().ctx(ctx)
}

/// Messages' ranking records ([`records::MESSAGE_FIELDS`]: chat, then
/// title, body and keywords token counts), ids in `ids`, in id order.
pub(super) fn message_records(
    conn: &Connection,
    ids: std::ops::RangeInclusive<i64>,
    tick: &mut dyn FnMut(),
) -> Result<Vec<(i64, Vec<i64>)>> {
    records_of(
        conn,
        formatcp!(
            "SELECT {ID}, {CHAT_ID} FROM {table} WHERE {ID} BETWEEN ?1 AND ?2 ORDER BY {ID}",
            table = messages::TABLE,
            ID = messages::ID,
            CHAT_ID = messages::CHAT_ID
        ),
        2,
        schema::fts_messages::TABLE,
        3,
        &ids,
        tick,
    )
}

/// Code blocks' ranking records ([`records::CODE_FIELDS`]: message,
/// chat, then content token count), ids in `ids`, in id order.
pub(super) fn code_records(
    conn: &Connection,
    ids: std::ops::RangeInclusive<i64>,
    tick: &mut dyn FnMut(),
) -> Result<Vec<(i64, Vec<i64>)>> {
    records_of(
        conn,
        formatcp!(
            "SELECT {ID}, {MESSAGE_ID}, {CHAT_ID} FROM {table} WHERE {ID} BETWEEN ?1 AND ?2 \
             ORDER BY {ID}",
            table = code_blocks::TABLE,
            ID = code_blocks::ID,
            MESSAGE_ID = code_blocks::MESSAGE_ID,
            CHAT_ID = code_blocks::CHAT_ID
        ),
        3,
        schema::fts_code_blocks::TABLE,
        1,
        &ids,
        tick,
    )
}

/// The tables the corpus revision covers, in hashing order, each with
/// the id column it is hashed in the order of.
const CONTENT_TABLES: [(&str, &str); 7] = [
    (schema::groups::TABLE, schema::groups::ID),
    (schema::chats::TABLE, schema::chats::ID),
    (schema::chat_details::TABLE, schema::chat_details::ID),
    (schema::messages::TABLE, schema::messages::ID),
    (schema::message_text::TABLE, schema::message_text::ID),
    (schema::code_blocks::TABLE, schema::code_blocks::ID),
    (schema::code_text::TABLE, schema::code_text::ID),
];

/// Rows between two progress reports of a counted step.
const PROGRESS_EVERY: u64 = 4096;

/// Rows in `tables` together.
fn count_rows(conn: &Connection, tables: &[&str]) -> Result<u64> {
    let mut n = 0;
    for t in tables {
        n += conn
            .query_row(&format!("SELECT count(*) FROM {t}"), [], |r| {
                r.get::<_, i64>(0)
            })
            .ctx("counting rows")? as u64;
    }
    Ok(n)
}

/// SHA-256 over every row of every content table, in id order.
fn revision(conn: &Connection, progress: &mut dyn FnMut(FinishProgress)) -> Result<String> {
    let total = count_rows(conn, &CONTENT_TABLES.map(|(t, _)| t))?;
    progress(FinishProgress::start(FinishStep::Revision, total));
    let mut done = 0u64;
    let mut h = Sha256::new();
    for (t, id) in CONTENT_TABLES {
        h.update(t.as_bytes());
        let mut s = conn
            .prepare(&format!("SELECT * FROM {t} ORDER BY {id}"))
            .ctx("hashing corpus")?;
        let n = s.column_count();
        let mut rows = s.query([]).ctx("hashing corpus")?;
        while let Some(r) = rows.next().ctx("hashing corpus")? {
            done += 1;
            if done % PROGRESS_EVERY == 0 {
                progress(FinishProgress {
                    step: FinishStep::Revision,
                    done,
                    total,
                });
            }
            for i in 0..n {
                match r.get_ref(i).ctx("hashing corpus")? {
                    ValueRef::Null => h.update([0u8]),
                    ValueRef::Integer(v) => {
                        h.update([1u8]);
                        h.update(v.to_le_bytes());
                    }
                    ValueRef::Real(v) => {
                        h.update([2u8]);
                        h.update(v.to_le_bytes());
                    }
                    ValueRef::Text(b) | ValueRef::Blob(b) => {
                        h.update([3u8]);
                        h.update((b.len() as u64).to_le_bytes());
                        h.update(b);
                    }
                }
            }
        }
    }
    let digest = h.finalize();
    Ok(digest.iter().take(16).map(|b| format!("{b:02x}")).collect())
}
