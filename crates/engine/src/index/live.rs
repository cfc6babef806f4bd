//! Writable indexes: an index changed in place by small transactions (the
//! browser's `create()`, `add()`, `update()`, `remove()`), where a
//! published index is built once by [`super::IndexWriter`].
//!
//! In: a connection to an empty database ([`create`]) or to a writable
//! index, and writes as JSON: `{chats, messages, codeBlocks}` records with
//! the model's fields ([`crate::model`]), or `{chatIds, messageIds,
//! blockIds}` to remove. Out: the layout a build makes, kept current by
//! each write in one SQLite transaction: the rows (the same insert code as
//! a build), their full-text entries (external content: a row's old text
//! leaves FTS5 before the row changes), the derived columns of the chats
//! touched and their descendants (chat path, lineage, branch, repo), the
//! message stats of those chats, the ranking records of the 256-id chunks
//! touched, `rank_stats` (from token sums kept in `index_meta`), the
//! counts, and a revision chained from the previous one and the write. A
//! write that fails in any record writes nothing; its error names the
//! record and field (`location`: `messages[3].chat_id`).
//!
//! Code blocks come from the fenced blocks of each message's text
//! ([`crate::fenced`]), as the chat-export importer cuts them; explicit
//! `codeBlocks` records are added as given. Updating a message replaces
//! all its code blocks with those of its new text.
//!
//! A search over a writable index ranks exactly as one over a build of
//! the same records (tested). What a build does that a write does not:
//! merge the full-text segments ('optimize'), ANALYZE, VACUUM, seal a
//! checksum and record `fts_leaf_ends` (only lazy range reads use them).

use super::records::{self, Col};
use super::writer::{
    chat_node, check_chains, code_records, derive_chat, group_names, insert_chat,
    insert_code_block, insert_message, message_records, ChatNode, IdShift,
};
use super::{schema, FORMAT_VERSION, PAGE_SIZE};
use crate::error::{DbContext, Error, Result};
use crate::model::{canonical_language, Chat, CodeBlock, Message};
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap};

/// The statements writes, imports and overlays run, naming tables and
/// columns through [`schema`] as a build's do.
mod sql {
    use crate::index::schema::chats::qualified as c;
    use crate::index::schema::code_blocks::qualified as b;
    use crate::index::schema::message_text::qualified as t;
    use crate::index::schema::messages::qualified as m;
    use crate::index::schema::{
        chat_details, chats, code_blocks, code_rank, code_text, fts_chats, fts_code_blocks,
        fts_messages, index_meta, live_requests, message_names, message_rank, message_text,
        messages, overlay_log, rank_stats,
    };
    use crate::index::writer::CHAT_NODES;
    use const_format::formatcp;

    // The statement shapes most of these share; `?1` is always the key.
    macro_rules! select_by {
        ($what:expr, $table:expr, $key:expr) => {
            formatcp!("SELECT {} FROM {} WHERE {} = ?1", $what, $table, $key)
        };
    }
    macro_rules! delete_by {
        ($table:expr, $key:expr) => {
            formatcp!("DELETE FROM {} WHERE {} = ?1", $table, $key)
        };
    }
    macro_rules! insert_pair {
        ($table:expr, $first:expr, $second:expr) => {
            formatcp!(
                "INSERT INTO {}({}, {}) VALUES (?1, ?2)",
                $table,
                $first,
                $second
            )
        };
    }
    macro_rules! set_by {
        ($table:expr, $column:expr, $key:expr) => {
            formatcp!("UPDATE {} SET {} = ?2 WHERE {} = ?1", $table, $column, $key)
        };
    }
    macro_rules! max_of {
        ($column:expr, $table:expr) => {
            formatcp!("SELECT coalesce(max({}), 0) FROM {}", $column, $table)
        };
    }

    pub(crate) const META_INSERT: &str =
        insert_pair!(index_meta::TABLE, index_meta::KEY, index_meta::VALUE);
    pub(crate) const META_UPSERT: &str = formatcp!(
        "INSERT OR REPLACE INTO {}({}, {}) VALUES (?1, ?2)",
        index_meta::TABLE,
        index_meta::KEY,
        index_meta::VALUE
    );
    pub(crate) const META_UPDATE: &str =
        set_by!(index_meta::TABLE, index_meta::VALUE, index_meta::KEY);
    pub(crate) const META_HAS: &str = select_by!("1", index_meta::TABLE, index_meta::KEY);
    pub(crate) const META_VALUE: &str =
        select_by!(index_meta::VALUE, index_meta::TABLE, index_meta::KEY);
    pub(crate) const META_DELETE: &str = delete_by!(index_meta::TABLE, index_meta::KEY);
    pub(crate) const META_ALL: &str = formatcp!(
        "SELECT {}, {} FROM {}",
        index_meta::KEY,
        index_meta::VALUE,
        index_meta::TABLE
    );

    pub(crate) const RANK_STATS_INSERT: &str = formatcp!(
        "INSERT INTO {}({}, {}) VALUES (NULL, NULL)",
        rank_stats::TABLE,
        rank_stats::AVG_TITLE_LEN,
        rank_stats::AVG_KEYWORDS_LEN
    );
    pub(crate) const RANK_STATS_SET: &str = formatcp!(
        "UPDATE {} SET {} = ?1, {} = ?2",
        rank_stats::TABLE,
        rank_stats::AVG_TITLE_LEN,
        rank_stats::AVG_KEYWORDS_LEN
    );

    pub(crate) const REQUEST_SUMMARY: &str = select_by!(
        live_requests::SUMMARY,
        live_requests::TABLE,
        live_requests::KEY
    );
    pub(crate) const REQUEST_INSERT: &str = insert_pair!(
        live_requests::TABLE,
        live_requests::KEY,
        live_requests::SUMMARY
    );
    /// Keeps the last `?1` keys (rowids grow with each insert).
    pub(crate) const REQUESTS_TRIM: &str = formatcp!(
        "DELETE FROM {t} WHERE rowid <= (SELECT max(rowid) FROM {t}) - ?1",
        t = live_requests::TABLE
    );

    pub(crate) const LOG_INSERT: &str =
        insert_pair!(overlay_log::TABLE, overlay_log::OP, overlay_log::INPUT);
    pub(crate) const LOG_ALL: &str = formatcp!(
        "SELECT {}, {} FROM {} ORDER BY {}",
        overlay_log::OP,
        overlay_log::INPUT,
        overlay_log::TABLE,
        overlay_log::SEQ
    );

    pub(crate) const MESSAGE_RANK_ALL: &str = formatcp!(
        "SELECT {}, {} FROM {}",
        message_rank::CHUNK,
        message_rank::RECORDS,
        message_rank::TABLE
    );

    /// A ranking-records table's statements, by chunk.
    pub(crate) struct RankTable {
        pub(crate) name: &'static str,
        pub(crate) records: &'static str,
        pub(crate) delete: &'static str,
        pub(crate) put: &'static str,
    }

    macro_rules! rank_table {
        ($t:ident) => {
            RankTable {
                name: $t::TABLE,
                records: select_by!($t::RECORDS, $t::TABLE, $t::CHUNK),
                delete: delete_by!($t::TABLE, $t::CHUNK),
                put: formatcp!(
                    "INSERT OR REPLACE INTO {}({}, {}) VALUES (?1, ?2)",
                    $t::TABLE,
                    $t::CHUNK,
                    $t::RECORDS
                ),
            }
        };
    }

    pub(crate) const MESSAGE_RANK: RankTable = rank_table!(message_rank);
    pub(crate) const CODE_RANK: RankTable = rank_table!(code_rank);

    pub(crate) const CHAT_EXISTS: &str = select_by!("1", chats::TABLE, chats::ID);
    pub(crate) const MESSAGE_EXISTS: &str = select_by!("1", messages::TABLE, messages::ID);
    pub(crate) const BLOCK_EXISTS: &str = select_by!("1", code_blocks::TABLE, code_blocks::ID);

    /// The largest chat, message and code block ids.
    pub(crate) const MAX_IDS: [&str; 3] = [
        max_of!(chats::ID, chats::TABLE),
        max_of!(messages::ID, messages::TABLE),
        max_of!(code_blocks::ID, code_blocks::TABLE),
    ];
    pub(crate) const NEXT_BLOCK_ID: &str = formatcp!(
        "SELECT coalesce(max({}), 0) + 1 FROM {}",
        code_blocks::ID,
        code_blocks::TABLE
    );

    pub(crate) const FTS_CHAT_INSERT: &str = formatcp!(
        "INSERT INTO {}(rowid, {}) VALUES (?1, ?2)",
        fts_chats::TABLE,
        fts_chats::NAME
    );
    pub(crate) const FTS_CHAT_DELETE: &str = formatcp!(
        "INSERT INTO {t}({t}, rowid, {}) VALUES ('delete', ?1, ?2)",
        fts_chats::NAME,
        t = fts_chats::TABLE
    );
    pub(crate) const FTS_MESSAGE_INSERT: &str = formatcp!(
        "INSERT INTO {}(rowid, {}, {}, {}) VALUES (?1, ?2, ?3, ?4)",
        fts_messages::TABLE,
        fts_messages::TITLE,
        fts_messages::BODY,
        fts_messages::KEYWORDS
    );
    pub(crate) const FTS_MESSAGE_DELETE: &str = formatcp!(
        "INSERT INTO {t}({t}, rowid, {}, {}, {}) VALUES ('delete', ?1, ?2, ?3, ?4)",
        fts_messages::TITLE,
        fts_messages::BODY,
        fts_messages::KEYWORDS,
        t = fts_messages::TABLE
    );
    pub(crate) const FTS_BLOCK_INSERT: &str = formatcp!(
        "INSERT INTO {}(rowid, {}) VALUES (?1, ?2)",
        fts_code_blocks::TABLE,
        fts_code_blocks::CONTENT
    );
    pub(crate) const FTS_BLOCK_DELETE: &str = formatcp!(
        "INSERT INTO {t}({t}, rowid, {}) VALUES ('delete', ?1, ?2)",
        fts_code_blocks::CONTENT,
        t = fts_code_blocks::TABLE
    );

    pub(crate) const CHAT_OF_MESSAGE: &str =
        select_by!(messages::CHAT_ID, messages::TABLE, messages::ID);
    /// A chat and its descendants (`?2`: `%/id/%`).
    pub(crate) const CHAT_SUBTREE: &str = formatcp!(
        "SELECT {id} FROM {} WHERE {id} = ?1 OR {} LIKE ?2",
        chats::TABLE,
        chats::LINEAGE,
        id = chats::ID
    );
    /// A chat's descendants (`?1`: `%/id/%`).
    pub(crate) const CHATS_BELOW: &str = formatcp!(
        "SELECT {} FROM {} WHERE {} LIKE ?1",
        chats::ID,
        chats::TABLE,
        chats::LINEAGE
    );
    pub(crate) const MESSAGES_OF_CHAT: &str =
        select_by!(messages::ID, messages::TABLE, messages::CHAT_ID);
    pub(crate) const CHAT_NAME: &str = select_by!(chats::NAME, chats::TABLE, chats::ID);
    pub(crate) const CHAT_NODE: &str = formatcp!("{} WHERE {} = ?1", CHAT_NODES, c::ID);
    /// A message's chat and text.
    pub(crate) const MESSAGE: &str = formatcp!(
        "SELECT {}, {}, {}, {} FROM {} {} JOIN {} {} ON {t_id} = {m_id} WHERE {m_id} = ?1",
        m::CHAT_ID,
        t::TITLE,
        t::BODY,
        t::KEYWORDS,
        messages::TABLE,
        messages::ALIAS,
        message_text::TABLE,
        message_text::ALIAS,
        t_id = t::ID,
        m_id = m::ID
    );
    pub(crate) const BLOCKS_OF_MESSAGE: &str =
        select_by!(code_blocks::ID, code_blocks::TABLE, code_blocks::MESSAGE_ID);
    pub(crate) const BLOCK_CONTENT: &str =
        select_by!(code_text::CONTENT, code_text::TABLE, code_text::ID);

    /// The rows of a chat, of a message, of a code block, by id.
    pub(crate) const CHAT_DELETES: [&str; 2] = [
        delete_by!(chats::TABLE, chats::ID),
        delete_by!(chat_details::TABLE, chat_details::ID),
    ];
    pub(crate) const MESSAGE_DELETES: [&str; 3] = [
        delete_by!(messages::TABLE, messages::ID),
        delete_by!(message_text::TABLE, message_text::ID),
        delete_by!(message_names::TABLE, message_names::MESSAGE_ID),
    ];
    pub(crate) const BLOCK_DELETES: [&str; 2] = [
        delete_by!(code_blocks::TABLE, code_blocks::ID),
        delete_by!(code_text::TABLE, code_text::ID),
    ];

    /// A chat's message count and latest message time.
    pub(crate) const CHAT_STATS: &str = formatcp!(
        "UPDATE {chats} SET
           {num_messages} = (SELECT count(*) FROM {messages} {m} WHERE {m_chat_id} = {chats}.{id}),
           {last_updated_at} = (SELECT max(coalesce({m_updated_at}, {m_created_at}))
                                FROM {messages} {m} WHERE {m_chat_id} = {chats}.{id})
         WHERE {id} = ?1",
        chats = chats::TABLE,
        id = chats::ID,
        num_messages = chats::NUM_MESSAGES,
        last_updated_at = chats::LAST_UPDATED_AT,
        messages = messages::TABLE,
        m = messages::ALIAS,
        m_chat_id = m::CHAT_ID,
        m_updated_at = m::UPDATED_AT,
        m_created_at = m::CREATED_AT
    );
    /// A chat's messages with their meta.
    pub(crate) const MESSAGE_METAS: &str = formatcp!(
        "SELECT {}, {} FROM {} {} JOIN {} {} ON {} = {}
         WHERE {} = ?1",
        m::ID,
        t::META,
        messages::TABLE,
        messages::ALIAS,
        message_text::TABLE,
        message_text::ALIAS,
        t::ID,
        m::ID,
        m::CHAT_ID
    );
    /// A message's path and language: its own (`?2`, `?4`), else those of
    /// its chat (`?3`).
    pub(crate) const MESSAGE_INHERITS: &str = formatcp!(
        "UPDATE {messages} SET
           {file_path} = coalesce(?2, (SELECT {c_path} FROM {chats} {c} WHERE {c_id} = ?3)),
           {language} = coalesce(?4, (SELECT {c_language} FROM {chats} {c} WHERE {c_id} = ?3))
         WHERE {id} = ?1",
        messages = messages::TABLE,
        file_path = messages::FILE_PATH,
        language = messages::LANGUAGE,
        id = messages::ID,
        chats = chats::TABLE,
        c = chats::ALIAS,
        c_path = c::PATH,
        c_language = c::LANGUAGE,
        c_id = c::ID
    );
    /// The code blocks of a chat's messages that name another chat.
    pub(crate) const STRAY_BLOCKS: &str = formatcp!(
        "SELECT {b_id} FROM {code_blocks} {b} JOIN {messages} {m} ON {m_id} = {b_message_id}
         WHERE {m_chat_id} = ?1 AND {b_chat_id} != ?1",
        b_id = b::ID,
        code_blocks = code_blocks::TABLE,
        b = code_blocks::ALIAS,
        messages = messages::TABLE,
        m = messages::ALIAS,
        m_id = m::ID,
        b_message_id = b::MESSAGE_ID,
        m_chat_id = m::CHAT_ID,
        b_chat_id = b::CHAT_ID
    );
    pub(crate) const SET_BLOCK_CHAT: &str =
        set_by!(code_blocks::TABLE, code_blocks::CHAT_ID, code_blocks::ID);
    pub(crate) const SET_CHAT_META: &str =
        set_by!(chat_details::TABLE, chat_details::META, chat_details::ID);
}

/// What a write does with its records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOp {
    /// New records; an id already in the index is `write.duplicate_id`.
    Add,
    /// Replaces records by id; an id not in the index is `write.not_found`.
    Update,
    /// Removes records by id (a chat with its messages, code blocks and
    /// child chats; a message with its code blocks); ids not in the index
    /// are skipped.
    Remove,
}

impl WriteOp {
    /// `add`, `update` or `remove`.
    pub fn parse(name: &str) -> Result<WriteOp> {
        match name {
            "add" => Ok(WriteOp::Add),
            "update" => Ok(WriteOp::Update),
            "remove" => Ok(WriteOp::Remove),
            other => Err(Error::new(
                "write.bad_input",
                format!("unknown write {other:?}: expects add, update or remove"),
            )),
        }
    }

    fn name(self) -> &'static str {
        match self {
            WriteOp::Add => "add",
            WriteOp::Update => "update",
            WriteOp::Remove => "remove",
        }
    }
}

/// What a write changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteSummary {
    /// Rows added, replaced or removed, by kind.
    pub chats: u64,
    pub messages: u64,
    pub code_blocks: u64,
    /// The index's revision after the write.
    pub revision: String,
    /// What was repaired in the input (text that was not valid Unicode).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// `index_meta` keys of the token sums `rank_stats` averages come from.
const SUM_KEYS: [&str; 4] = [
    "live_title_tokens",
    "live_title_messages",
    "live_keywords_tokens",
    "live_keywords_messages",
];

/// Makes `conn` (an empty database) a writable index with no records.
/// `description` becomes `info().source`, `created_at` its build time.
///
/// ```
/// use gitsense_engine::index::live::{self, WriteOp};
/// use gitsense_engine::{Engine, SearchOptions};
/// let conn = rusqlite::Connection::open_in_memory()?;
/// live::create(&conn, "local:notes", "2026-01-01T00:00:00Z")?;
/// let mut engine = Engine::from_connection(conn)?;
/// engine.write(WriteOp::Add, r#"{"chats": [{"id": 1, "name": "Retries"}],
///   "messages": [{"id": 1, "chat_id": 1, "role": "user",
///                 "content": "How do I retry a payment?"}]}"#)?;
/// let r = engine.search("retry", &SearchOptions::default())?;
/// assert_eq!(r.total_counts.messages, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn create(conn: &Connection, description: &str, created_at: &str) -> Result<()> {
    conn.execute_batch(&format!("PRAGMA page_size={PAGE_SIZE};"))
        .ctx("configuring the new index")?;
    let tx = conn.unchecked_transaction().ctx("starting the new index")?;
    tx.execute_batch(&schema::ddl())
        .ctx("creating the index schema")?;
    let revision = chain_revision("", "create", description);
    let meta = [
        ("format_version", FORMAT_VERSION.to_string()),
        ("revision", revision),
        ("built_at", created_at.to_string()),
        ("source", description.to_string()),
        ("count_chats", "0".into()),
        ("count_messages", "0".into()),
        ("count_code_blocks", "0".into()),
        ("count_groups", "0".into()),
        (
            "generator",
            format!("gitsense-search {}", env!("CARGO_PKG_VERSION")),
        ),
    ];
    for (k, v) in meta
        .into_iter()
        .chain(SUM_KEYS.iter().map(|k| (*k, "0".to_string())))
    {
        tx.execute(sql::META_INSERT, params![k, v])
            .ctx("writing index_meta")?;
    }
    tx.execute(sql::RANK_STATS_INSERT, [])
        .ctx("writing rank_stats")?;
    tx.commit().ctx("committing the new index")
}

/// Whether `conn` holds a writable index (made by [`create`]).
pub(crate) fn is_writable(conn: &Connection) -> bool {
    conn.query_row(sql::META_HAS, [SUM_KEYS[0]], |_| Ok(()))
        .optional()
        .ok()
        .flatten()
        .is_some()
}

/// Applies one write (see the module docs) in one transaction; the engine
/// over `conn` must forget what it cached ([`crate::Engine::write`] does).
pub(crate) fn write(conn: &Connection, op: WriteOp, json: &str) -> Result<WriteSummary> {
    apply(conn, op, json, false, None)
}

/// [`write`] at most once per `key`: a request id its sender may send
/// again when it cannot know whether the first attempt committed (a
/// tab's write relayed by another tab that closed meanwhile). A key
/// applied already answers with the summary it had and writes nothing.
/// The last [`KEYS_KEPT`] keys are remembered.
pub(crate) fn write_once(
    conn: &Connection,
    op: WriteOp,
    json: &str,
    key: &str,
) -> Result<WriteSummary> {
    if !is_writable(conn) {
        // write.read_only, before anything is created.
        return apply(conn, op, json, false, None);
    }
    if let Some(summary) = request_done(conn, key)? {
        return serde_json::from_str(&summary)
            .map_err(|e| Error::new("index.corrupt", format!("a stored write summary: {e}")));
    }
    apply(conn, op, json, false, Some(key))
}

/// The summary (JSON) a request applied under `key` answered with, if
/// one was: a write's (`write_once`) or an import's
/// ([`Import::commit`]).
pub fn request_done(conn: &Connection, key: &str) -> Result<Option<String>> {
    if !is_writable(conn) {
        return Ok(None);
    }
    conn.execute_batch(&schema::live_requests::DEF.create_if_missing())
        .ctx("creating the request table")?;
    conn.query_row(sql::REQUEST_SUMMARY, [key], |r| r.get(0))
        .optional()
        .ctx("reading the request table")
}

/// Records that the request `key` was applied, with its answer, in the
/// transaction that applied it.
fn remember_request(conn: &Connection, key: &str, summary: &str) -> Result<()> {
    conn.execute_batch(&schema::live_requests::DEF.create_if_missing())
        .ctx("creating the request table")?;
    conn.execute(sql::REQUEST_INSERT, params![key, summary])
        .ctx("recording the request")?;
    conn.execute(sql::REQUESTS_TRIM, [KEYS_KEPT])
        .ctx("recording the request")?;
    Ok(())
}

/// How many request keys [`write_once`] remembers.
pub(crate) const KEYS_KEPT: i64 = 1000;

/// [`write`]; `upsert`: an add replaces a record of the same id, an
/// update adds one that is missing (replaying an overlay's writes over a
/// new revision of its published index).
fn apply(
    conn: &Connection,
    op: WriteOp,
    json: &str,
    upsert: bool,
    key: Option<&str>,
) -> Result<WriteSummary> {
    if !is_writable(conn) {
        return Err(Error::new(
            "write.read_only",
            "this index is published, not writable: only indexes made by create() take writes",
        ));
    }
    // A JS string may hold a lone surrogate, which `JSON.stringify` writes
    // as an escape that no UTF-8 text can hold: replaced, as `importFile`
    // replaces invalid bytes, rather than the whole write refused.
    let (json, repaired) = crate::util::repair_lone_surrogates(json);
    let json = json.as_ref();
    let input: Value = serde_json::from_str(json)
        .map_err(|e| Error::new("write.bad_input", format!("the write is not JSON: {e}")))?;
    let Value::Object(input) = input else {
        return Err(Error::new(
            "write.bad_input",
            "a write is an object: {chats, messages, codeBlocks} or {chatIds, messageIds, blockIds}",
        ));
    };
    super::rank::register_column_size(conn)?;
    let tx = conn.unchecked_transaction().ctx("starting the write")?;
    let mut w = Write::new(&tx)?;
    match op {
        WriteOp::Remove => w.remove(&RemoveIds::parse(&input)?)?,
        WriteOp::Add | WriteOp::Update => w.put(op, &Batch::parse(&input)?, upsert)?,
    }
    let mut summary = w.finish(op, json)?;
    if repaired > 0 {
        summary.warnings.push(format!(
            "replaced {repaired} lone surrogate(s) (text that is not valid Unicode) with U+FFFD"
        ));
    }
    if overlay_base(&tx)?.is_some() {
        tx.execute(sql::LOG_INSERT, params![op.name(), json])
            .ctx("logging the write")?;
    }
    if let Some(key) = key {
        let text = serde_json::to_string(&summary)
            .map_err(|e| Error::new("internal.error", format!("a write summary: {e}")))?;
        remember_request(&tx, key, &text)?;
    }
    tx.commit().ctx("committing the write")?;
    Ok(summary)
}

/// `index_meta` key of an overlay: the SHA-256 of the published index it
/// is a copy of.
const BASE_KEY: &str = "overlay_base";

/// Makes a copy of a published index (opened read-write) a writable
/// overlay over it: the page's writes go into the copy, so a search ranks,
/// counts and pages the published records and the page's own as one
/// index, and each write is logged. `previous`: the overlay over an
/// earlier revision, whose logged writes are applied to the copy in order
/// (a record the new revision holds already is matched by id and
/// replaced, never doubled); returns how many. `base_sha256` names the
/// published file; it is recorded last, so a copy with it
/// ([`overlay_base`]) is complete, and one without it (an interrupted
/// adoption) is not to be used.
///
/// ```
/// use gitsense_engine::index::live::{self, WriteOp};
/// use gitsense_engine::{Engine, SearchOptions};
/// # let dir = tempfile::tempdir()?;
/// # let path = gitsense_engine::index::write_example(&dir.path().join("p.gsx"))?;
/// let conn = rusqlite::Connection::open(&path)?; // a copy of the published file
/// live::adopt(&conn, "sha-of-the-published-file", None)?;
/// let mut engine = Engine::from_connection(conn)?;
/// engine.write(WriteOp::Add, r#"{"messages": [{"id": 99, "chat_id": 1,
///   "role": "user", "content": "Can a payment be retried twice?"}]}"#)?;
/// let r = engine.search("payment", &SearchOptions::default())?;
/// assert_eq!(r.total_counts.messages, 2); // the published one and the page's
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn adopt(conn: &Connection, base_sha256: &str, previous: Option<&Connection>) -> Result<u64> {
    let tx = conn.unchecked_transaction().ctx("adopting the index")?;
    let mut sums = [0i64; 4];
    {
        let mut s = tx
            .prepare(sql::MESSAGE_RANK_ALL)
            .ctx("reading ranking records")?;
        let mut rows = s.query([]).ctx("reading ranking records")?;
        while let Some(r) = rows.next().ctx("reading ranking records")? {
            let chunk: i64 = r.get(0).ctx("reading ranking records")?;
            let blob: Vec<u8> = r.get(1).ctx("reading ranking records")?;
            let decoded =
                records::decode(chunk, &blob, &records::MESSAGE_FIELDS).ok_or_else(|| {
                    Error::new(
                        "index.corrupt",
                        format!(
                            "{} chunk {chunk} does not decode",
                            schema::message_rank::TABLE
                        ),
                    )
                })?;
            for (_, f) in decoded.iter() {
                add_lengths(&mut sums, f, 1);
            }
        }
    }
    for (k, v) in SUM_KEYS.iter().zip(sums) {
        tx.execute(sql::META_UPSERT, params![k, v.to_string()])
            .ctx("writing index_meta")?;
    }
    // The file is no longer the one published: its checksum would lie.
    tx.execute(sql::META_DELETE, [super::checksum::CHECKSUM_KEY])
        .ctx("writing index_meta")?;
    tx.execute_batch(&schema::overlay_log::DEF.create_if_missing())
        .ctx("creating the overlay log")?;
    tx.commit().ctx("adopting the index")?;
    let log: Vec<(String, String)> = match previous {
        Some(from) => from
            .prepare(sql::LOG_ALL)
            .and_then(|mut s| s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
            .ctx("reading the overlay log")?,
        None => Vec::new(),
    };
    // Not logged as they apply (no base yet): the log is copied whole below.
    for (op, input) in &log {
        match op.as_str() {
            IMPORT_OP => replay_import(conn, input)?,
            op => {
                apply(conn, WriteOp::parse(op)?, input, true, None)?;
            }
        }
    }
    let tx = conn.unchecked_transaction().ctx("adopting the index")?;
    for (op, input) in &log {
        tx.execute(sql::LOG_INSERT, params![op, input])
            .ctx("copying the overlay log")?;
    }
    tx.execute(sql::META_UPSERT, params![BASE_KEY, base_sha256])
        .ctx("writing index_meta")?;
    tx.commit().ctx("adopting the index")?;
    Ok(log.len() as u64)
}

/// The SHA-256 of the published index an overlay is a copy of; `None`
/// for an index that is not an overlay (or whose adoption did not finish).
pub fn overlay_base(conn: &Connection) -> Result<Option<String>> {
    conn.query_row(sql::META_VALUE, [BASE_KEY], |r| r.get(0))
        .optional()
        .ctx("reading index_meta")
}

/// Adds (`sign` 1) or takes away (-1) a message record's title and
/// keyword token counts (fields 1 and 3) to the sums `rank_stats`
/// averages come from.
fn add_lengths(sums: &mut [i64; 4], f: &[i64], sign: i64) {
    for (slot, col) in [(0usize, 1usize), (2, 3)] {
        if f[col] > 0 {
            sums[slot] += sign * f[col];
            sums[slot + 1] += sign;
        }
    }
}

/// A revision: the first 16 bytes of SHA-256 over the previous revision,
/// the kind of write and its input, in hex.
fn chain_revision(previous: &str, op: &str, input: &str) -> String {
    let mut h = Sha256::new();
    for part in [previous, op, input] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    crate::util::hex(&h.finalize()[..16])
}

// ---------------------------------------------------------------------------
// Input: records and ids, checked field by field.

fn bad(location: String, message: impl Into<String>) -> Error {
    Error::new("write.bad_record", message).with_location(location)
}

/// One input record: its place (`messages[3]`) and fields.
struct Record<'a> {
    at: String,
    fields: &'a Map<String, Value>,
}

impl<'a> Record<'a> {
    fn new(list: &str, i: usize, v: &'a Value, known: &[&str]) -> Result<Record<'a>> {
        let at = format!("{list}[{i}]");
        let Value::Object(fields) = v else {
            return Err(bad(at, "a record is an object of fields"));
        };
        if let Some(k) = fields.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(bad(
                format!("{at}.{k}"),
                format!("unknown field {k:?} (known: {})", known.join(", ")),
            ));
        }
        Ok(Record { at, fields })
    }

    fn field(&self, name: &str) -> String {
        format!("{}.{name}", self.at)
    }

    fn get(&self, name: &str) -> Option<&'a Value> {
        self.fields.get(name).filter(|v| !v.is_null())
    }

    fn int(&self, name: &str) -> Result<Option<i64>> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => match v.as_i64() {
                Some(n) if n.unsigned_abs() < (1 << 53) => Ok(Some(n)),
                _ => Err(bad(
                    self.field(name),
                    format!("{name} must be an integer (a safe JavaScript integer), not {v}"),
                )),
            },
        }
    }

    fn id(&self, name: &str) -> Result<i64> {
        match self.int(name)? {
            Some(n) if n > 0 => Ok(n),
            Some(n) => Err(bad(
                self.field(name),
                format!("{name} must be a positive integer, not {n}"),
            )),
            None => Err(bad(self.field(name), format!("{name} is required"))),
        }
    }

    fn text(&self, name: &str) -> Result<Option<String>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(bad(
                self.field(name),
                format!("{name} must be a string, not {v}"),
            )),
        }
    }

    fn required_text(&self, name: &str) -> Result<String> {
        self.text(name)?
            .ok_or_else(|| bad(self.field(name), format!("{name} is required")))
    }

    fn meta(&self) -> Result<Value> {
        match self.get("meta") {
            None => Ok(Value::Object(Map::new())),
            Some(v @ Value::Object(_)) => Ok(v.clone()),
            Some(v) => Err(bad(
                self.field("meta"),
                format!("meta must be an object, not {v}"),
            )),
        }
    }
}

const CHAT_FIELDS: [&str; 10] = [
    "id",
    "parent_id",
    "type",
    "uuid",
    "name",
    "owner",
    "group_id",
    "created_at",
    "modified_at",
    "meta",
];
const MESSAGE_FIELDS: [&str; 10] = [
    "id",
    "chat_id",
    "type",
    "role",
    "content",
    "title",
    "keywords",
    "meta",
    "created_at",
    "updated_at",
];
const BLOCK_FIELDS: [&str; 9] = [
    "id",
    "message_id",
    "type",
    "uuid",
    "language",
    "component",
    "description",
    "content",
    "created_at",
];
const ROLES: [&str; 3] = ["system", "user", "assistant"];

fn chat_of(r: &Record) -> Result<Chat> {
    let parent_id = r.int("parent_id")?.unwrap_or(0);
    if parent_id < 0 {
        return Err(bad(
            r.field("parent_id"),
            "parent_id must be 0 (no parent) or a chat id",
        ));
    }
    Ok(Chat {
        id: r.id("id")?,
        parent_id,
        chat_type: r.text("type")?.unwrap_or_else(|| "regular".into()),
        uuid: r.text("uuid")?,
        name: r.required_text("name")?,
        owner: r.text("owner")?,
        group_id: r.int("group_id")?,
        created_at: r.text("created_at")?,
        modified_at: r.text("modified_at")?,
        meta: r.meta()?,
    })
}

fn message_of(r: &Record) -> Result<Message> {
    let role = r.required_text("role")?;
    if !ROLES.contains(&role.as_str()) {
        return Err(bad(
            r.field("role"),
            format!("role must be one of {}, not {role:?}", ROLES.join(", ")),
        ));
    }
    Ok(Message {
        id: r.id("id")?,
        chat_id: r.id("chat_id")?,
        msg_type: r.text("type")?.unwrap_or_else(|| "regular".into()),
        role,
        content: r.required_text("content")?,
        title: r.text("title")?.unwrap_or_default(),
        keywords: r.text("keywords")?.unwrap_or_default(),
        meta: r.meta()?,
        created_at: r.text("created_at")?,
        updated_at: r.text("updated_at")?,
    })
}

fn block_of(r: &Record) -> Result<CodeBlock> {
    let (id, message_id) = (r.id("id")?, r.id("message_id")?);
    let mut b = CodeBlock::from_text(
        id,
        message_id,
        r.required_text("content")?,
        r.text("language")?,
        || block_uuid(message_id, id),
    );
    if let Some(uuid) = r.text("uuid")? {
        b.uuid = uuid;
    }
    if let Some(t) = r.text("type")? {
        b.block_type = t;
    }
    if let Some(c) = r.text("component")? {
        b.component = Some(c);
    }
    if let Some(d) = r.text("description")? {
        b.description = Some(d);
    }
    if let Some(c) = r.text("created_at")? {
        b.created_at = Some(c);
    }
    Ok(b)
}

/// A stable uuid for a code block without a GitSense header.
fn block_uuid(message_id: i64, n: i64) -> String {
    let h = crate::util::hex(&Sha256::digest(format!("live:{message_id}:{n}").as_bytes()));
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// Records of an add or update, each with its place in the input.
struct Batch {
    chats: Vec<(String, Chat)>,
    messages: Vec<(String, Message)>,
    blocks: Vec<(String, CodeBlock)>,
    /// Whether a message's fenced blocks become code blocks (a page's
    /// write); an import's records bring their code blocks with them.
    cut_fenced: bool,
}

fn list<'a>(input: &'a Map<String, Value>, key: &str) -> Result<&'a [Value]> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => {
            Err(Error::new("write.bad_input", format!("{key} must be an array")).with_location(key))
        }
    }
}

fn only_keys(input: &Map<String, Value>, known: &[&str]) -> Result<()> {
    match input.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(Error::new(
            "write.bad_input",
            format!("unknown key {k:?} (expects {})", known.join(", ")),
        )
        .with_location(k.clone())),
        None => Ok(()),
    }
}

impl Batch {
    fn parse(input: &Map<String, Value>) -> Result<Batch> {
        only_keys(input, &["chats", "messages", "codeBlocks"])?;
        let mut batch = Batch {
            chats: Vec::new(),
            messages: Vec::new(),
            blocks: Vec::new(),
            cut_fenced: true,
        };
        for (i, v) in list(input, "chats")?.iter().enumerate() {
            let r = Record::new("chats", i, v, &CHAT_FIELDS)?;
            batch.chats.push((r.at.clone(), chat_of(&r)?));
        }
        for (i, v) in list(input, "messages")?.iter().enumerate() {
            let r = Record::new("messages", i, v, &MESSAGE_FIELDS)?;
            batch.messages.push((r.at.clone(), message_of(&r)?));
        }
        for (i, v) in list(input, "codeBlocks")?.iter().enumerate() {
            let r = Record::new("codeBlocks", i, v, &BLOCK_FIELDS)?;
            batch.blocks.push((r.at.clone(), block_of(&r)?));
        }
        Ok(batch)
    }
}

/// Ids a remove names.
struct RemoveIds {
    chats: Vec<i64>,
    messages: Vec<i64>,
    blocks: Vec<i64>,
}

impl RemoveIds {
    fn parse(input: &Map<String, Value>) -> Result<RemoveIds> {
        only_keys(input, &["chatIds", "messageIds", "blockIds"])?;
        let ids = |key: &str| -> Result<Vec<i64>> {
            list(input, key)?
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    v.as_i64().filter(|n| *n > 0).ok_or_else(|| {
                        bad(
                            format!("{key}[{i}]"),
                            format!("an id is a positive integer, not {v}"),
                        )
                    })
                })
                .collect()
        };
        Ok(RemoveIds {
            chats: ids("chatIds")?,
            messages: ids("messageIds")?,
            blocks: ids("blockIds")?,
        })
    }
}

// ---------------------------------------------------------------------------
// The write: rows, full-text entries, then what derives from them.

/// A write in progress inside its transaction: what it touched, for the
/// derived data [`Write::finish`] brings up to date.
struct Write<'c> {
    conn: &'c Connection,
    /// Chats whose derived columns and stats are recomputed.
    chats: BTreeSet<i64>,
    /// Chats whose name, parent or meta changed: their descendants' paths
    /// and their messages' inherited fields follow.
    reshaped: BTreeSet<i64>,
    message_chunks: BTreeSet<i64>,
    code_chunks: BTreeSet<i64>,
    /// Rows inserted and deleted, by kind (chats, messages, code blocks).
    inserted: [u64; 3],
    deleted: [u64; 3],
}

/// A build's duplicate-id error as a write's, naming the record.
fn located(e: Error, at: &str) -> Error {
    if e.code == "import.duplicate_id" {
        let message = e
            .message
            .replace("was added twice", "is already in the index");
        return Error::new("write.duplicate_id", message).with_location(format!("{at}.id"));
    }
    e
}

fn fts(e: rusqlite::Error) -> Error {
    Error::db("updating the full-text index", e)
}

impl<'c> Write<'c> {
    fn new(conn: &'c Connection) -> Result<Write<'c>> {
        Ok(Write {
            conn,
            chats: BTreeSet::new(),
            reshaped: BTreeSet::new(),
            message_chunks: BTreeSet::new(),
            code_chunks: BTreeSet::new(),
            inserted: [0; 3],
            deleted: [0; 3],
        })
    }

    /// Whether the row of `id` is there; `query` is one of `sql::*_EXISTS`.
    fn exists(&self, query: &str, id: i64) -> Result<bool> {
        self.conn
            .prepare_cached(query)
            .and_then(|mut s| s.exists([id]))
            .ctx("looking up a record")
    }

    fn must_exist(&self, query: &str, id: i64, at: String, what: &str) -> Result<()> {
        if self.exists(query, id)? {
            return Ok(());
        }
        Err(Error::new(
            "write.not_found",
            format!("{what} {id} is not in the index"),
        )
        .with_location(at))
    }

    /// Adds or replaces the batch's records.
    fn put(&mut self, op: WriteOp, b: &Batch, upsert: bool) -> Result<()> {
        if upsert {
            // Whatever holds these ids goes first (a chat keeps its messages).
            for (_, c) in &b.chats {
                if self.delete_chat_row(c.id)? {
                    self.reshaped.insert(c.id);
                }
            }
            for (_, m) in &b.messages {
                self.delete_message(m.id)?;
            }
            for (_, cb) in &b.blocks {
                self.delete_block(cb.id)?;
            }
        } else if op == WriteOp::Update {
            for (at, c) in &b.chats {
                self.must_exist(sql::CHAT_EXISTS, c.id, format!("{at}.id"), "chat")?;
                self.delete_chat_row(c.id)?;
                self.reshaped.insert(c.id);
            }
            for (at, m) in &b.messages {
                self.must_exist(sql::MESSAGE_EXISTS, m.id, format!("{at}.id"), "message")?;
                self.delete_message(m.id)?;
            }
            for (at, cb) in &b.blocks {
                self.must_exist(sql::BLOCK_EXISTS, cb.id, format!("{at}.id"), "code block")?;
                self.delete_block(cb.id)?;
            }
        }
        let zero = IdShift::default();
        for (at, c) in &b.chats {
            insert_chat(self.conn, c, zero).map_err(|e| located(e, at))?;
            self.conn
                .prepare_cached(sql::FTS_CHAT_INSERT)
                .and_then(|mut s| s.execute(params![c.id, c.name]))
                .map_err(fts)?;
            self.chats.insert(c.id);
            self.count(0, 1);
        }
        for (at, c) in &b.chats {
            if c.parent_id != 0 {
                self.must_exist(
                    sql::CHAT_EXISTS,
                    c.parent_id,
                    format!("{at}.parent_id"),
                    "parent chat",
                )?;
            }
        }
        for (at, m) in &b.messages {
            self.must_exist(sql::CHAT_EXISTS, m.chat_id, format!("{at}.chat_id"), "chat")?;
            insert_message(self.conn, m, zero).map_err(|e| located(e, at))?;
            self.conn
                .prepare_cached(sql::FTS_MESSAGE_INSERT)
                .and_then(|mut s| s.execute(params![m.id, m.title, m.content, m.keywords]))
                .map_err(fts)?;
            self.chats.insert(m.chat_id);
            self.message_chunks.insert(records::chunk_of(m.id));
            self.count(1, 1);
            if b.cut_fenced {
                self.add_fenced_blocks(m)?;
            }
        }
        for (at, cb) in &b.blocks {
            self.must_exist(
                sql::MESSAGE_EXISTS,
                cb.message_id,
                format!("{at}.message_id"),
                "message",
            )?;
            self.insert_block(cb).map_err(|e| located(e, at))?;
        }
        Ok(())
    }

    /// The code blocks of a message's fenced blocks, numbered after the
    /// largest code block id in the index.
    fn add_fenced_blocks(&mut self, m: &Message) -> Result<()> {
        for (n, f) in crate::fenced::fenced_blocks(&m.content)
            .into_iter()
            .enumerate()
        {
            let id: i64 = self
                .conn
                .query_row(sql::NEXT_BLOCK_ID, [], |r| r.get(0))
                .ctx("numbering code blocks")?;
            let b = CodeBlock::from_text(id, m.id, f.content, f.language, || {
                block_uuid(m.id, n as i64)
            });
            self.insert_block(&b)?;
        }
        Ok(())
    }

    fn insert_block(&mut self, b: &CodeBlock) -> Result<()> {
        insert_code_block(self.conn, b, IdShift::default())?;
        self.conn
            .prepare_cached(sql::FTS_BLOCK_INSERT)
            .and_then(|mut s| s.execute(params![b.id, b.content]))
            .map_err(fts)?;
        let chat: Option<i64> = self
            .conn
            .query_row(sql::CHAT_OF_MESSAGE, [b.message_id], |r| r.get(0))
            .optional()
            .ctx("reading a message's chat")?;
        self.chats.extend(chat);
        self.code_chunks.insert(records::chunk_of(b.id));
        self.count(2, 1);
        Ok(())
    }

    fn count(&mut self, kind: usize, delta: i64) {
        if delta > 0 {
            self.inserted[kind] += 1;
        } else {
            self.deleted[kind] += 1;
        }
    }

    /// Removes the named records and what belongs to them.
    fn remove(&mut self, ids: &RemoveIds) -> Result<()> {
        for &id in &ids.blocks {
            self.delete_block(id)?;
        }
        for &id in &ids.messages {
            self.delete_message(id)?;
        }
        for &id in &ids.chats {
            // The chat and its descendants (their lineage runs through it).
            let mut s = self
                .conn
                .prepare_cached(sql::CHAT_SUBTREE)
                .ctx("finding child chats")?;
            let subtree: Vec<i64> = s
                .query_map(params![id, format!("%/{id}/%")], |r| r.get(0))
                .and_then(|rows| rows.collect())
                .ctx("finding child chats")?;
            for chat in subtree {
                let messages: Vec<i64> = self
                    .conn
                    .prepare_cached(sql::MESSAGES_OF_CHAT)
                    .and_then(|mut s| s.query_map([chat], |r| r.get(0))?.collect())
                    .ctx("finding a chat's messages")?;
                for m in messages {
                    self.delete_message(m)?;
                }
                self.delete_chat_row(chat)?;
            }
        }
        Ok(())
    }

    /// Deletes a chat's rows and full-text entry (not its messages);
    /// whether it was there.
    fn delete_chat_row(&mut self, id: i64) -> Result<bool> {
        let name: Option<String> = self
            .conn
            .query_row(sql::CHAT_NAME, [id], |r| r.get(0))
            .optional()
            .ctx("reading a chat")?;
        let Some(name) = name else { return Ok(false) };
        self.conn
            .prepare_cached(sql::FTS_CHAT_DELETE)
            .and_then(|mut s| s.execute(params![id, name]))
            .map_err(fts)?;
        for delete in sql::CHAT_DELETES {
            self.conn
                .prepare_cached(delete)
                .and_then(|mut s| s.execute([id]))
                .ctx("deleting a chat")?;
        }
        self.count(0, -1);
        Ok(true)
    }

    /// Deletes a message, its full-text entry and its code blocks.
    fn delete_message(&mut self, id: i64) -> Result<()> {
        let row: Option<(i64, String, String, String)> = self
            .conn
            .query_row(sql::MESSAGE, [id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .optional()
            .ctx("reading a message")?;
        let Some((chat, title, body, keywords)) = row else {
            return Ok(());
        };
        let blocks: Vec<i64> = self
            .conn
            .prepare_cached(sql::BLOCKS_OF_MESSAGE)
            .and_then(|mut s| s.query_map([id], |r| r.get(0))?.collect())
            .ctx("finding a message's code blocks")?;
        for b in blocks {
            self.delete_block(b)?;
        }
        self.conn
            .prepare_cached(sql::FTS_MESSAGE_DELETE)
            .and_then(|mut s| s.execute(params![id, title, body, keywords]))
            .map_err(fts)?;
        for delete in sql::MESSAGE_DELETES {
            self.conn
                .prepare_cached(delete)
                .and_then(|mut s| s.execute([id]))
                .ctx("deleting a message")?;
        }
        self.chats.insert(chat);
        self.message_chunks.insert(records::chunk_of(id));
        self.count(1, -1);
        Ok(())
    }

    /// Deletes a code block and its full-text entry.
    fn delete_block(&mut self, id: i64) -> Result<()> {
        let content: Option<String> = self
            .conn
            .query_row(sql::BLOCK_CONTENT, [id], |r| r.get(0))
            .optional()
            .ctx("reading a code block")?;
        let Some(content) = content else {
            return Ok(());
        };
        self.conn
            .prepare_cached(sql::FTS_BLOCK_DELETE)
            .and_then(|mut s| s.execute(params![id, content]))
            .map_err(fts)?;
        for delete in sql::BLOCK_DELETES {
            self.conn
                .prepare_cached(delete)
                .and_then(|mut s| s.execute([id]))
                .ctx("deleting a code block")?;
        }
        self.code_chunks.insert(records::chunk_of(id));
        self.count(2, -1);
        Ok(())
    }

    /// Brings derived data up to date and records the write in
    /// `index_meta`.
    fn finish(mut self, op: WriteOp, input: &str) -> Result<WriteSummary> {
        self.derive_chats()?;
        self.chat_stats()?;
        self.rank_chunks()?;
        let meta = read_meta(self.conn)?;
        let num = |k: &str| meta.get(k).and_then(|v| v.parse::<i64>().ok()).unwrap_or(0);
        let revision = chain_revision(meta.get("revision").map_or("", |s| s), op.name(), input);
        let mut set = vec![("revision", revision.clone())];
        for (k, delta) in ["count_chats", "count_messages", "count_code_blocks"]
            .into_iter()
            .zip(self.inserted.iter().zip(self.deleted))
        {
            let n = num(k) + *delta.0 as i64 - delta.1 as i64;
            set.push((k, n.max(0).to_string()));
        }
        for (k, v) in set {
            self.conn
                .prepare_cached(sql::META_UPDATE)
                .and_then(|mut s| s.execute(params![k, v]))
                .ctx("writing index_meta")?;
        }
        // An update deletes and inserts each record: it counts once.
        let done = if op == WriteOp::Remove {
            self.deleted
        } else {
            self.inserted
        };
        Ok(WriteSummary {
            chats: done[0],
            messages: done[1],
            code_blocks: done[2],
            revision,
            warnings: Vec::new(),
        })
    }

    /// Chat paths, lineages, branches and repos of the chats touched and
    /// of the descendants of those reshaped.
    fn derive_chats(&mut self) -> Result<()> {
        let mut targets: BTreeSet<i64> = self.chats.iter().copied().collect();
        for &id in &self.reshaped {
            let mut s = self
                .conn
                .prepare_cached(sql::CHATS_BELOW)
                .ctx("finding child chats")?;
            let below: Vec<i64> = s
                .query_map([format!("%/{id}/%")], |r| r.get(0))
                .and_then(|rows| rows.collect())
                .ctx("finding child chats")?;
            targets.extend(below);
        }
        let groups = group_names(self.conn)?;
        let mut nodes: HashMap<i64, ChatNode> = HashMap::new();
        let mut derived = Vec::new();
        for &id in &targets {
            // The chain up to the root (a cycle or a missing parent ends it).
            let mut cur = id;
            while cur != 0 && !nodes.contains_key(&cur) {
                let node = self
                    .conn
                    .prepare_cached(sql::CHAT_NODE)
                    .and_then(|mut s| s.query_row([cur], chat_node).optional())
                    .ctx("reading chats")?;
                let Some((_, node)) = node else { break };
                let parent = node.parent();
                nodes.insert(cur, node);
                cur = parent;
            }
            if nodes.contains_key(&id) {
                derived.push(id);
            }
        }
        check_chains(&nodes, derived.iter().copied(), "write")?;
        for id in derived {
            derive_chat(self.conn, id, &nodes, &groups)?;
        }
        // Their messages inherit path and language afresh, their code
        // blocks their chat.
        self.chats.extend(targets);
        Ok(())
    }

    /// Message stats of the chats touched; inherited message fields; code
    /// blocks' chats (as a build's `derive` makes them).
    fn chat_stats(&mut self) -> Result<()> {
        let ctx = "deriving chat stats";
        for &chat in &self.chats {
            if !self.exists(sql::CHAT_EXISTS, chat)? {
                continue;
            }
            self.conn
                .prepare_cached(sql::CHAT_STATS)
                .and_then(|mut s| s.execute([chat]))
                .ctx(ctx)?;
            // A message's own path and language (its meta), else its chat's.
            let own: Vec<(i64, Option<String>)> = self
                .conn
                .prepare_cached(sql::MESSAGE_METAS)
                .and_then(|mut s| {
                    s.query_map([chat], |r| Ok((r.get(0)?, r.get(1)?)))?
                        .collect()
                })
                .ctx(ctx)?;
            for (id, meta) in own {
                let meta: Value = meta
                    .and_then(|m| serde_json::from_str(&m).ok())
                    .unwrap_or(Value::Null);
                let text = |k: &str| {
                    meta.get(k)
                        .and_then(Value::as_str)
                        .filter(|s| !s.is_empty())
                };
                self.conn
                    .prepare_cached(sql::MESSAGE_INHERITS)
                    .and_then(|mut s| {
                        s.execute(params![
                            id,
                            text("file_path"),
                            chat,
                            text("language").map(canonical_language)
                        ])
                    })
                    .ctx(ctx)?;
            }
            let blocks: Vec<i64> = self
                .conn
                .prepare_cached(sql::STRAY_BLOCKS)
                .and_then(|mut s| s.query_map([chat], |r| r.get(0))?.collect())
                .ctx(ctx)?;
            for b in blocks {
                self.conn
                    .prepare_cached(sql::SET_BLOCK_CHAT)
                    .and_then(|mut s| s.execute(params![b, chat]))
                    .ctx(ctx)?;
                self.code_chunks.insert(records::chunk_of(b));
            }
            // Ranking records carry each message's chat.
            let ids: Vec<i64> = self
                .conn
                .prepare_cached(sql::MESSAGES_OF_CHAT)
                .and_then(|mut s| s.query_map([chat], |r| r.get(0))?.collect())
                .ctx(ctx)?;
            self.message_chunks
                .extend(ids.into_iter().map(records::chunk_of));
        }
        Ok(())
    }

    /// Rewrites the ranking records of the chunks touched, and the title
    /// and keyword averages from the token sums.
    fn rank_chunks(&mut self) -> Result<()> {
        let mut sums = [0i64; 4];
        let meta = read_meta(self.conn)?;
        for (s, k) in sums.iter_mut().zip(SUM_KEYS) {
            *s = meta.get(k).and_then(|v| v.parse().ok()).unwrap_or(0);
        }
        for &chunk in &self.message_chunks {
            let old = self.rewrite_chunk(
                &sql::MESSAGE_RANK,
                chunk,
                &records::MESSAGE_FIELDS,
                message_records,
            )?;
            let (old, new) = old;
            for (_, f) in &old {
                add_lengths(&mut sums, f, -1);
            }
            for (_, f) in &new {
                add_lengths(&mut sums, f, 1);
            }
        }
        for &chunk in &self.code_chunks {
            self.rewrite_chunk(&sql::CODE_RANK, chunk, &records::CODE_FIELDS, code_records)?;
        }
        for (k, v) in SUM_KEYS.iter().zip(sums) {
            self.conn
                .prepare_cached(sql::META_UPDATE)
                .and_then(|mut s| s.execute(params![k, v.to_string()]))
                .ctx("writing index_meta")?;
        }
        let avg =
            |slot: usize| (sums[slot + 1] > 0).then(|| sums[slot] as f64 / sums[slot + 1] as f64);
        self.conn
            .execute(sql::RANK_STATS_SET, params![avg(0), avg(2)])
            .ctx("writing rank_stats")?;
        Ok(())
    }

    /// Rewrites one chunk of `table` from the rows now there; its records
    /// before and after.
    #[allow(clippy::type_complexity)]
    fn rewrite_chunk(
        &self,
        table: &sql::RankTable,
        chunk: i64,
        cols: &[Col],
        read: fn(
            &Connection,
            std::ops::RangeInclusive<i64>,
            &mut dyn FnMut(),
        ) -> Result<Vec<(i64, Vec<i64>)>>,
    ) -> Result<(Vec<(i64, Vec<i64>)>, Vec<(i64, Vec<i64>)>)> {
        let ctx = "writing ranking records";
        let blob: Option<Vec<u8>> = self
            .conn
            .prepare_cached(table.records)
            .and_then(|mut s| s.query_row([chunk], |r| r.get(0)).optional())
            .ctx(ctx)?;
        let old: Vec<(i64, Vec<i64>)> = match blob {
            Some(b) => records::decode(chunk, &b, cols)
                .ok_or_else(|| {
                    Error::new(
                        "index.corrupt",
                        format!("{} chunk {chunk} does not decode", table.name),
                    )
                })?
                .iter()
                .map(|(id, f)| (id, f.to_vec()))
                .collect(),
            None => Vec::new(),
        };
        let lo = chunk << records::CHUNK_SHIFT;
        let hi = lo + (1 << records::CHUNK_SHIFT) - 1;
        let new = read(self.conn, lo..=hi, &mut || {})?;
        if new.is_empty() {
            self.conn
                .prepare_cached(table.delete)
                .and_then(|mut s| s.execute([chunk]))
                .ctx(ctx)?;
        } else {
            self.conn
                .prepare_cached(table.put)
                .and_then(|mut s| s.execute(params![chunk, records::encode(chunk, &new, cols)]))
                .ctx(ctx)?;
        }
        Ok((old, new))
    }
}

fn read_meta(conn: &Connection) -> Result<HashMap<String, String>> {
    conn.prepare_cached(sql::META_ALL)
        .and_then(|mut s| s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
        .ctx("reading index_meta")
}

// ---------------------------------------------------------------------------
// Imports: many records from a chat export, in one transaction.

/// The `overlay_log` op of an import's batch: its records (code blocks
/// among them) added as logged, none cut from message text again.
const IMPORT_OP: &str = "import";

/// A bulk import into a writable index: a chat export's records, read in
/// pieces (the browser's `engine.importFile`), added batch by batch
/// inside one SQLite transaction, so that a bad file, a failure or an
/// abort halfway leaves the index exactly as it was ([`Import::rollback`]).
///
/// The records number their chats, messages and code blocks from 1 among
/// themselves (as [`super::IndexWriter::next_source`] expects); they are
/// stored past the index's largest ids, so an import into a non-empty
/// index never collides. Each batch is added as a write is (rows,
/// full-text entries, derived chats, ranking records, counts), so a search
/// on the same connection between batches sees the batches so far,
/// complete; other connections see nothing until [`Import::commit`].
/// On an overlay each batch is logged, and replayed on a new revision.
///
/// ```
/// use gitsense_engine::index::live::{self, Import};
/// use gitsense_engine::model::{Chat, Message};
/// use gitsense_engine::{Engine, SearchOptions};
/// let conn = rusqlite::Connection::open_in_memory()?;
/// live::create(&conn, "local:notes", "2026-01-01T00:00:00Z")?;
/// let chat = |id, parent_id, name: &str| Chat {
///     id, parent_id, chat_type: "regular".into(), uuid: None, name: name.into(),
///     owner: None, group_id: None, created_at: None, modified_at: None,
///     meta: serde_json::json!({}),
/// };
/// let message = Message {
///     id: 1, chat_id: 2, msg_type: "regular".into(), role: "user".into(),
///     content: "Why does the retry loop never stop?".into(), title: String::new(),
///     keywords: String::new(), meta: serde_json::json!({}), created_at: None, updated_at: None,
/// };
/// let mut import = Import::begin(&conn, &chat(1, 0, "export.json"), Default::default())?;
/// import.add(&conn, &[chat(2, 1, "Retries")], &[message], &[])?;
/// let summary = import.commit(&conn, &serde_json::json!({"format": "sharegpt"}), None)?;
/// assert_eq!((summary.chats, summary.messages), (2, 1));
/// let mut engine = Engine::from_connection(conn)?;
/// let r = engine.search("retry", &SearchOptions::default())?;
/// assert_eq!(r.results.messages[0].chat_path.as_deref(), Some("export.json -> Retries"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
/// How much memory an import may use to go faster, while it runs:
/// SQLite's page cache (the pages a batch's inserts and full-text merges
/// go back to stay in memory, not read again from storage) and FTS5's
/// buffer of pending terms (flushed as a segment when full: a larger one
/// makes fewer, larger segments to merge). Both are set back when the
/// import ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportTuning {
    pub cache_mib: u32,
    pub fts_buffer_mib: u32,
}

impl Default for ImportTuning {
    fn default() -> Self {
        ImportTuning {
            cache_mib: 32,
            fts_buffer_mib: 8,
        }
    }
}

/// SQLite's page cache when nothing sets it (`PRAGMA cache_size`, KiB
/// when negative), and FTS5's pending-term buffer (its `hashsize`).
const DEFAULT_CACHE: i64 = -2000;
const DEFAULT_FTS_BUFFER: i64 = 1 << 20;

fn set_fts_buffer(conn: &Connection, bytes: i64) -> Result<()> {
    for t in super::FTS_TABLES {
        conn.execute(
            &format!("INSERT INTO {t}({t}, rank) VALUES ('hashsize', ?1)"),
            [bytes],
        )
        .map_err(fts)?;
    }
    Ok(())
}

#[derive(Debug)]
pub struct Import {
    /// The largest chat, message and code block ids before the import.
    shift: [i64; 3],
    /// The root chat's id in the index.
    root: i64,
    revision_before: String,
    /// Chained from each batch's records, for the revision at the end.
    digest: Sha256,
    added: [u64; 3],
    overlay: bool,
}

impl Import {
    /// Starts an import into the writable index `conn` holds (opens its
    /// transaction) with the export's root chat, the parent of its
    /// conversations' chats (id 1 among the records).
    pub fn begin(conn: &Connection, root: &Chat, tuning: ImportTuning) -> Result<Import> {
        if !is_writable(conn) {
            return Err(Error::new(
                "write.read_only",
                "this index is published, not writable: only indexes made by create() take imports",
            ));
        }
        super::rank::register_column_size(conn)?;
        conn.execute_batch(&format!(
            "PRAGMA cache_size = {}",
            -i64::from(tuning.cache_mib.max(1)) * 1024
        ))
        .ctx("starting the import")?;
        conn.execute_batch("BEGIN").ctx("starting the import")?;
        // In the transaction: a rollback sets it back too.
        let started = set_fts_buffer(conn, i64::from(tuning.fts_buffer_mib.max(1)) << 20)
            .and_then(|()| Import::start(conn, root));
        if started.is_err() {
            let _ = Import::rollback(conn);
        }
        started
    }

    fn start(conn: &Connection, root: &Chat) -> Result<Import> {
        let max = |query: &str| -> Result<i64> {
            conn.query_row(query, [], |r| r.get(0))
                .ctx("reading the largest id")
        };
        let [chats, messages, blocks] = sql::MAX_IDS;
        let shift = [max(chats)?, max(messages)?, max(blocks)?];
        let mut import = Import {
            shift,
            root: root.id + shift[0],
            revision_before: read_meta(conn)?
                .get("revision")
                .cloned()
                .unwrap_or_default(),
            digest: Sha256::new(),
            added: [0; 3],
            overlay: overlay_base(conn)?.is_some(),
        };
        import.add(conn, std::slice::from_ref(root), &[], &[])?;
        Ok(import)
    }

    /// Adds a batch of records (ids as the export numbers them); on an
    /// error the caller rolls the whole import back.
    pub fn add(
        &mut self,
        conn: &Connection,
        chats: &[Chat],
        messages: &[Message],
        blocks: &[CodeBlock],
    ) -> Result<()> {
        let [c, m, b] = self.shift;
        let at = |kind: &str, i: usize| format!("{kind}[{}]", i);
        let batch = Batch {
            chats: chats
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    let parent_id = if x.parent_id == 0 { 0 } else { x.parent_id + c };
                    (
                        at("chats", i),
                        Chat {
                            id: x.id + c,
                            parent_id,
                            ..x.clone()
                        },
                    )
                })
                .collect(),
            messages: messages
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    let (id, chat_id) = (x.id + m, x.chat_id + c);
                    (
                        at("messages", i),
                        Message {
                            id,
                            chat_id,
                            ..x.clone()
                        },
                    )
                })
                .collect(),
            blocks: blocks
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    let (id, message_id) = (x.id + b, x.message_id + m);
                    (
                        at("codeBlocks", i),
                        CodeBlock {
                            id,
                            message_id,
                            ..x.clone()
                        },
                    )
                })
                .collect(),
            cut_fenced: false,
        };
        let mut w = Write::new(conn)?;
        w.put(WriteOp::Add, &batch, false)?;
        let inserted = w.inserted;
        // Counts and ranking data current after every batch; the revision
        // is set once, by commit().
        w.finish(WriteOp::Add, IMPORT_OP)?;
        for (sum, n) in self.added.iter_mut().zip(inserted) {
            *sum += n;
        }
        for (_, x) in &batch.chats {
            self.digest.update(format!("c{}:{}\n", x.id, x.name));
        }
        for (_, x) in &batch.messages {
            self.digest
                .update(format!("m{}:{}:{}\n", x.id, x.chat_id, x.content.len()));
        }
        if self.overlay {
            let input = batch_json(&batch).to_string();
            conn.prepare_cached(sql::LOG_INSERT)
                .and_then(|mut s| s.execute(params![IMPORT_OP, input]))
                .ctx("logging the import")?;
        }
        Ok(())
    }

    /// Ends the import: the root chat's meta as the export's summary has
    /// it (its counts are known only at the end), a new revision, and the
    /// transaction committed. Returns the rows added. `request`: the
    /// import's key and the fields its answer adds to the [`WriteSummary`]
    /// (an object), recorded in the same transaction, so an import sent
    /// again under the same key ([`request_done`]) is answered, not
    /// repeated.
    pub fn commit(
        self,
        conn: &Connection,
        root_meta: &Value,
        request: Option<(&str, &Value)>,
    ) -> Result<WriteSummary> {
        let done = self.finish(conn, root_meta, request);
        if done.is_err() {
            let _ = Import::rollback(conn);
        }
        done
    }

    fn finish(
        self,
        conn: &Connection,
        root_meta: &Value,
        request: Option<(&str, &Value)>,
    ) -> Result<WriteSummary> {
        conn.prepare_cached(sql::SET_CHAT_META)
            .and_then(|mut s| s.execute(params![self.root, root_meta.to_string()]))
            .ctx("writing the export's chat")?;
        let records = crate::util::hex(&self.digest.finalize());
        let revision = chain_revision(&self.revision_before, IMPORT_OP, &records);
        conn.prepare_cached(sql::META_UPDATE)
            .and_then(|mut s| s.execute(params!["revision", revision]))
            .ctx("writing index_meta")?;
        let summary = WriteSummary {
            chats: self.added[0],
            messages: self.added[1],
            code_blocks: self.added[2],
            revision,
            warnings: Vec::new(),
        };
        if let Some((key, extra)) = request {
            let mut answer = serde_json::to_value(&summary)
                .map_err(|e| Error::new("internal.error", format!("a write summary: {e}")))?;
            if let (Value::Object(a), Value::Object(x)) = (&mut answer, extra) {
                a.extend(x.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            remember_request(conn, key, &answer.to_string())?;
        }
        set_fts_buffer(conn, DEFAULT_FTS_BUFFER)?;
        conn.execute_batch("COMMIT").ctx("committing the import")?;
        conn.execute_batch(&format!("PRAGMA cache_size = {DEFAULT_CACHE}"))
            .ctx("ending the import")?;
        Ok(summary)
    }

    /// Undoes everything an import added (its transaction rolled back).
    pub fn rollback(conn: &Connection) -> Result<()> {
        if !conn.is_autocommit() {
            conn.execute_batch("ROLLBACK")
                .ctx("rolling the import back")?;
        }
        conn.execute_batch(&format!("PRAGMA cache_size = {DEFAULT_CACHE}"))
            .ctx("rolling the import back")
    }
}

/// A batch as the JSON of a write (`{chats, messages, codeBlocks}` with
/// the model's fields), for the overlay log.
fn batch_json(b: &Batch) -> Value {
    let chats: Vec<Value> = b
        .chats
        .iter()
        .map(|(_, c)| {
            serde_json::json!({
                "id": c.id, "parent_id": c.parent_id, "type": c.chat_type, "uuid": c.uuid,
                "name": c.name, "owner": c.owner, "group_id": c.group_id,
                "created_at": c.created_at, "modified_at": c.modified_at, "meta": c.meta,
            })
        })
        .collect();
    let messages: Vec<Value> = b
        .messages
        .iter()
        .map(|(_, m)| {
            serde_json::json!({
                "id": m.id, "chat_id": m.chat_id, "type": m.msg_type, "role": m.role,
                "content": m.content, "title": m.title, "keywords": m.keywords,
                "meta": m.meta, "created_at": m.created_at, "updated_at": m.updated_at,
            })
        })
        .collect();
    // The rest of a block (header, version, parent) is parsed from its
    // content again, as the export's reader parsed it.
    let blocks: Vec<Value> = b
        .blocks
        .iter()
        .map(|(_, x)| {
            serde_json::json!({
                "id": x.id, "message_id": x.message_id, "uuid": x.uuid,
                "language": x.language, "content": x.content,
            })
        })
        .collect();
    serde_json::json!({ "chats": chats, "messages": messages, "codeBlocks": blocks })
}

/// Applies a logged import batch to a new revision's copy (upsert).
fn replay_import(conn: &Connection, input: &str) -> Result<()> {
    let Value::Object(input) = serde_json::from_str(input)
        .map_err(|e| Error::new("index.corrupt", format!("a logged import: {e}")))?
    else {
        return Err(Error::new(
            "index.corrupt",
            "a logged import is not an object",
        ));
    };
    let mut batch = Batch::parse(&input)?;
    batch.cut_fenced = false;
    super::rank::register_column_size(conn)?;
    let tx = conn.unchecked_transaction().ctx("starting the write")?;
    let mut w = Write::new(&tx)?;
    w.put(WriteOp::Add, &batch, true)?;
    w.finish(WriteOp::Add, IMPORT_OP)?;
    tx.commit().ctx("committing the write")
}
