//! The warm-up before a lazily read query: which pages its row lookups
//! will read, fetched a b-tree level at a time in parallel requests.
//!
//! In: the query and options (planned as the engine will run them), the
//! engine's connection and the [`LazyIndex`]. Out: the pages in place, so
//! the query itself makes few synchronous requests. Rounds:
//! 1. the doclist leaves of each target's FTS expression (located through
//!    the FTS index, `index::doclists`), then the rowids it matches
//!    (`SELECT rowid ... MATCH`, now from pages in place),
//! 2. the leaves of the filter tables and FTS document sizes those rows are
//!    looked up in (then the chats and messages they point to),
//! 3. ranking (as the engine will run it; pages are in place now), then the
//!    leaves and overflow pages of the payload rows of the returned page.
//!
//! Everything here is an optimisation: any failure ends the warm-up and
//! the query reads what it still needs page by page.

use super::LazyIndex;
use crate::error::Result;
use crate::index::btree::{self, PageKind};
use crate::index::doclists;
use crate::plan::{self, MatchMode, SearchOptions};
use crate::query::ast::Target;
use crate::{profiles, query};
use rusqlite::{params_from_iter, types::Value as SqlValue, Connection};
use std::collections::{BTreeMap, BTreeSet};

/// Rows looked up per table at most (a bigger match set reads most of the
/// table anyway; the walk's cost stays bounded).
const MAX_KEYS: usize = 50_000;
/// Deepest b-tree walked.
const MAX_LEVELS: usize = 6;

/// Rowids to look up, per table.
type Keys = BTreeMap<&'static str, BTreeSet<i64>>;

fn fts_table(t: Target) -> &'static str {
    match t {
        Target::Chats => "fts_chats",
        Target::Messages => "fts_messages",
        Target::CodeBlocks => "fts_code_blocks",
    }
}

fn rows_table(t: Target) -> &'static str {
    match t {
        Target::Chats => "chats",
        Target::Messages => "messages",
        Target::CodeBlocks => "code_blocks",
    }
}

fn docsize_table(t: Target) -> &'static str {
    match t {
        Target::Chats => "fts_chats_docsize",
        Target::Messages => "fts_messages_docsize",
        Target::CodeBlocks => "fts_code_blocks_docsize",
    }
}

fn ints(conn: &Connection, sql: &str, params: &[SqlValue]) -> rusqlite::Result<Vec<i64>> {
    let mut s = conn.prepare_cached(sql)?;
    let rows = s.query_map(params_from_iter(params.iter()), |r| {
        r.get::<_, Option<i64>>(0)
    })?;
    Ok(rows.filter_map(|r| r.ok().flatten()).collect())
}

/// Ids bound in one `IN (...)` list at most.
const IN_CHUNK: usize = 500;

/// `select` (a statement ending in `IN`) over `ids`, in chunks of bound
/// parameters (the browser's SQLite has no JSON functions to pass a list).
fn ints_in(conn: &Connection, select: &str, ids: &BTreeSet<i64>) -> Vec<i64> {
    let ids: Vec<SqlValue> = ids.iter().map(|&i| SqlValue::Integer(i)).collect();
    let mut out = Vec::new();
    for chunk in ids.chunks(IN_CHUNK) {
        let marks = vec!["?"; chunk.len()].join(",");
        out.extend(ints(conn, &format!("{select} ({marks})"), chunk).unwrap_or_default());
    }
    out
}

/// Follows `keys` from each table's root down to its leaves, fetching each
/// level's missing pages in one batch; returns the leaves with their keys.
async fn walk(lazy: &LazyIndex, conn: &Connection, keys: &Keys) -> Result<Vec<(u32, Vec<i64>)>> {
    let mut frontier: Vec<(u32, Vec<i64>)> = Vec::new();
    for (table, ks) in keys {
        if ks.is_empty() {
            continue;
        }
        let root: Option<i64> = conn
            .query_row(
                "SELECT rootpage FROM sqlite_schema WHERE name = ?1",
                [table],
                |r| r.get(0),
            )
            .ok();
        if let Some(root) = root.filter(|r| *r > 0) {
            frontier.push((root as u32, ks.iter().copied().take(MAX_KEYS).collect()));
        }
    }
    let mut leaves = Vec::new();
    for _ in 0..MAX_LEVELS {
        if frontier.is_empty() {
            break;
        }
        let pages: Vec<u32> = frontier.iter().map(|(p, _)| *p).collect();
        lazy.fetch_pages(&pages).await?;
        let mut next = Vec::new();
        for (page_no, ks) in frontier {
            let Some(page) = lazy.peek(page_no) else {
                continue;
            };
            match btree::kind(&page, page_no) {
                Some(PageKind::InteriorTable) => {
                    if let Some(children) = btree::descend(&page, page_no, &ks) {
                        next.extend(children);
                    }
                }
                Some(PageKind::LeafTable) => leaves.push((page_no, ks)),
                _ => {}
            }
        }
        frontier = next;
    }
    Ok(leaves)
}

/// Fetches the overflow pages of the rows `leaves` hold for their keys.
async fn overflows(lazy: &LazyIndex, leaves: &[(u32, Vec<i64>)]) -> Result<()> {
    let mut pages = Vec::new();
    for (page_no, ks) in leaves {
        let Some(page) = lazy.peek(*page_no) else {
            continue;
        };
        for (first, n) in
            btree::leaf_overflows(&page, *page_no, lazy.usable_size(), ks).unwrap_or_default()
        {
            pages.extend(first..first.saturating_add(n));
        }
    }
    lazy.fetch_pages(&pages).await
}

/// See the module docs. `options_json` holds [`SearchOptions`].
pub async fn warm(
    lazy: &LazyIndex,
    conn: &Connection,
    text: &str,
    options_json: &str,
) -> Result<()> {
    let opts: SearchOptions = crate::util::from_json_arg(options_json, "search options")?;
    if opts.cursor.is_some() {
        return Ok(());
    }
    let q = query::parse(text, &profiles::exists)?;
    let p = plan::plan(&q, &opts, MatchMode::AllTerms)?;

    // Round 1: the doclists (found through the FTS index), then the rows
    // each target matches.
    let exprs: Vec<(Target, String)> = p
        .target_plans
        .iter()
        .filter_map(|tp| Some((tp.target, tp.sql.as_ref()?.fts.clone()?)))
        .collect();
    let mut keys = Keys::new();
    for (t, expr) in &exprs {
        let data: &'static str = match t {
            Target::Chats => "fts_chats_data",
            Target::Messages => "fts_messages_data",
            Target::CodeBlocks => "fts_code_blocks_data",
        };
        let rowids = doclists::doclist_rowids(conn, fts_table(*t), expr).unwrap_or_default();
        keys.entry(data).or_default().extend(rowids);
    }
    walk(lazy, conn, &keys).await?;
    let mut matched: Vec<(Target, BTreeSet<i64>)> = Vec::new();
    for (target, expr) in exprs {
        let fts = fts_table(target);
        let ids = ints(
            conn,
            &format!("SELECT rowid FROM {fts} WHERE {fts} MATCH ?1 LIMIT {MAX_KEYS}"),
            &[SqlValue::Text(expr)],
        )
        .unwrap_or_default();
        matched.push((target, ids.into_iter().collect()));
    }
    if matched.iter().all(|(_, ids)| ids.is_empty()) {
        return Ok(());
    }

    // Round 2: filter rows and document sizes, then what they point to.
    let mut keys = Keys::new();
    for (t, ids) in &matched {
        keys.entry(rows_table(*t)).or_default().extend(ids);
        keys.entry(docsize_table(*t)).or_default().extend(ids);
    }
    walk(lazy, conn, &keys).await?;
    let mut keys = Keys::new();
    for (t, ids) in &matched {
        let chats = match t {
            Target::Chats => continue,
            Target::Messages => "SELECT DISTINCT chat_id FROM messages WHERE id IN",
            Target::CodeBlocks => "SELECT DISTINCT chat_id FROM code_blocks WHERE id IN",
        };
        keys.entry("chats")
            .or_default()
            .extend(ints_in(conn, chats, ids));
        if *t == Target::CodeBlocks {
            let messages = "SELECT DISTINCT message_id FROM code_blocks WHERE id IN";
            keys.entry("messages")
                .or_default()
                .extend(ints_in(conn, messages, ids));
        }
    }
    walk(lazy, conn, &keys).await?;

    // Round 3: ranking, then the payload of the returned page.
    let mut keys = Keys::new();
    let offset = (p.page.saturating_sub(1)) * p.per_page;
    for tp in &p.target_plans {
        let Some(sql) = &tp.sql else { continue };
        let params = sql.page_params(p.per_page, offset);
        let ids: BTreeSet<i64> = ints(conn, &sql.page_sql, &params)
            .unwrap_or_default()
            .into_iter()
            .collect();
        if ids.is_empty() {
            continue;
        }
        let (payload, chats) = match tp.target {
            Target::Chats => ("chat_details", "SELECT id FROM chats WHERE id IN"),
            Target::Messages => ("message_text", "SELECT chat_id FROM messages WHERE id IN"),
            Target::CodeBlocks => ("code_text", "SELECT chat_id FROM code_blocks WHERE id IN"),
        };
        keys.entry(payload).or_default().extend(&ids);
        keys.entry("chat_details")
            .or_default()
            .extend(ints_in(conn, chats, &ids));
    }
    let leaves = walk(lazy, conn, &keys).await?;
    overflows(lazy, &leaves).await
}
