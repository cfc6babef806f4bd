//! The warm-up before a lazily read query SQLite runs (one the reader
//! cannot: filters, sorts, typo correction): which pages its row lookups
//! will read, fetched a b-tree level at a time in parallel requests.
//!
//! In: the query as the engine planned it ([`PlannedSearch`]: the search
//! then runs that same plan), the engine's connection and the
//! [`LazyIndex`]. Out: the pages in place, so the query itself makes few
//! synchronous requests. Rounds:
//! 1. the leaves of the FTS index its terms are looked up in, when not in
//!    hand (hot pages hold a small FTS index whole; a batch of its own),
//!    then the doclist leaves of each target's FTS expression (located through
//!    the FTS index, `index::doclists`) with the `message_names` leaf of
//!    the exact-name boost, then the rowids it matches
//!    (`SELECT rowid ... MATCH`, now from pages in place),
//! 2. the leaves of the tables ranking joins (`TargetSql::tables`: the
//!    ranking records of `message_rank` and `code_rank` for plain words,
//!    filter tables when filters need them) and of the chats' FTS
//!    document sizes, then the chats and messages filters point to; no
//!    round at all when those pages are in hand (a small index ships its
//!    ranking records with the hot pages),
//! 3. ranking (as the engine will run it; pages are in place now), then the
//!    rows and payload of the returned page with their chats (and, for code
//!    blocks, messages), known from the ranking records (or, for a query
//!    that ranks nothing, in a round of their own),
//! 4. the overflow pages of those rows.
//!
//! When nothing matches every word, the search corrects its typos
//! (`gitsense_engine::typo`), and failing that matches any word: the
//! `typo_terms` pages the correction reads come in a round (a level of
//! its b-tree at a time: the lookups are key ranges known from the query,
//! [`PlannedSearch::typo_lookups`]), then the corrected query is warmed as
//! above, then (if that matches nothing either) the any-term reading.
//!
//! A query without words (filters only) scans its targets' tables: their
//! pages and their indexes' come in one round
//! ([`gitsense_engine::plan::TargetPlan::scanned`]; the inner pages are hot, so
//! every leaf is known), up to
//! [`MAX_SCAN_PAGES`], then rounds 3 and 4.
//!
//! Everything here is an optimisation: any failure ends the warm-up and
//! the query reads what it still needs page by page.

use super::LazyIndex;
use const_format::formatcp;
use gitsense_engine::error::Result;
use gitsense_engine::index::btree::{self, PageKind};
use gitsense_engine::index::doclists;
use gitsense_engine::index::rank::Tally;
use gitsense_engine::index::records::{self, Col};
use gitsense_engine::index::schema::{
    chat_details, chats, code_blocks, code_rank, code_text, fts_chats, fts_code_blocks,
    fts_messages, message_names, message_rank, message_text, messages, typo_terms,
};
use gitsense_engine::plan::{Plan, QueryMode};
use gitsense_engine::query::ast::Target;
use gitsense_engine::search::{self, PlannedSearch};
use rusqlite::{params_from_iter, types::Value as SqlValue, Connection};
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::pin;

/// Rows looked up per table at most (a bigger match set reads most of the
/// table anyway; the walk's cost stays bounded).
const MAX_KEYS: usize = 50_000;
/// Deepest b-tree walked.
const MAX_LEVELS: usize = 6;
/// Pages fetched at most for the tables a query without words scans
/// (16 MiB raw; above it the scan reads page by page).
const MAX_SCAN_PAGES: usize = 4096;

/// The links of rows to the rows they belong to, by id (`ints_in` adds
/// the list of ids).
const CHAT_OF_MESSAGES: &str = formatcp!(
    "SELECT {messages_chat_id} FROM {messages} WHERE {messages_id} IN",
    messages_chat_id = messages::CHAT_ID,
    messages = messages::TABLE,
    messages_id = messages::ID
);
const DISTINCT_CHAT_OF_MESSAGES: &str = formatcp!(
    "SELECT DISTINCT {messages_chat_id} FROM {messages} WHERE {messages_id} IN",
    messages_chat_id = messages::CHAT_ID,
    messages = messages::TABLE,
    messages_id = messages::ID
);
const CHAT_OF_BLOCKS: &str = formatcp!(
    "SELECT {code_blocks_chat_id} FROM {code_blocks} WHERE {code_blocks_id} IN",
    code_blocks_chat_id = code_blocks::CHAT_ID,
    code_blocks = code_blocks::TABLE,
    code_blocks_id = code_blocks::ID
);
const DISTINCT_CHAT_OF_BLOCKS: &str = formatcp!(
    "SELECT DISTINCT {code_blocks_chat_id} FROM {code_blocks} WHERE {code_blocks_id} IN",
    code_blocks_chat_id = code_blocks::CHAT_ID,
    code_blocks = code_blocks::TABLE,
    code_blocks_id = code_blocks::ID
);
const MESSAGE_OF_BLOCKS: &str = formatcp!(
    "SELECT {code_blocks_message_id} FROM {code_blocks} WHERE {code_blocks_id} IN",
    code_blocks_message_id = code_blocks::MESSAGE_ID,
    code_blocks = code_blocks::TABLE,
    code_blocks_id = code_blocks::ID
);
const DISTINCT_MESSAGE_OF_BLOCKS: &str = formatcp!(
    "SELECT DISTINCT {code_blocks_message_id} FROM {code_blocks} WHERE {code_blocks_id} IN",
    code_blocks_message_id = code_blocks::MESSAGE_ID,
    code_blocks = code_blocks::TABLE,
    code_blocks_id = code_blocks::ID
);

/// Rowids to look up, per table.
type Keys = BTreeMap<&'static str, BTreeSet<i64>>;

fn fts_table(t: Target) -> &'static str {
    match t {
        Target::Chats => fts_chats::TABLE,
        Target::Messages => fts_messages::TABLE,
        Target::CodeBlocks => fts_code_blocks::TABLE,
    }
}

fn rows_table(t: Target) -> &'static str {
    match t {
        Target::Chats => chats::TABLE,
        Target::Messages => messages::TABLE,
        Target::CodeBlocks => code_blocks::TABLE,
    }
}

/// The FTS5 document sizes ranking reads: messages and code blocks rank
/// from their ranking records alone (`index::rank`).
fn docsize_table(t: Target) -> Option<&'static str> {
    match t {
        Target::Chats => Some(formatcp!(
            "{fts_chats}_docsize",
            fts_chats = fts_chats::TABLE
        )),
        Target::Messages | Target::CodeBlocks => None,
    }
}

/// The ranking records of a target: table and layout.
fn records_of(t: Target) -> Option<(&'static str, &'static [Col])> {
    match t {
        Target::Chats => None,
        Target::Messages => Some((message_rank::TABLE, &records::MESSAGE_FIELDS)),
        Target::CodeBlocks => Some((code_rank::TABLE, &records::CODE_FIELDS)),
    }
}

/// The records of `ids` in `table` (pages in place), by id.
fn read_records(
    conn: &Connection,
    table: &str,
    cols: &[Col],
    ids: &BTreeSet<i64>,
) -> BTreeMap<i64, Vec<i64>> {
    let chunks: BTreeSet<i64> = ids.iter().map(|&id| records::chunk_of(id)).collect();
    let mut out = BTreeMap::new();
    // Both ranking tables name their columns alike.
    let (records, chunk) = (message_rank::RECORDS, message_rank::CHUNK);
    debug_assert_eq!((records, chunk), (code_rank::RECORDS, code_rank::CHUNK));
    let Ok(mut s) =
        conn.prepare_cached(&format!("SELECT {records} FROM {table} WHERE {chunk} = ?1"))
    else {
        return out;
    };
    for chunk in chunks {
        let Ok(blob) = s.query_row([chunk], |r| r.get::<_, Vec<u8>>(0)) else {
            continue;
        };
        let Some(c) = records::decode(chunk, &blob, cols) else {
            continue;
        };
        for (id, fields) in c.iter() {
            if ids.contains(&id) {
                out.insert(id, fields.to_vec());
            }
        }
    }
    out
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

/// The root page of table or index `name`.
fn root_of(conn: &Connection, name: &str) -> Option<u32> {
    conn.query_row(
        "SELECT rootpage FROM sqlite_schema WHERE name = ?1",
        [name],
        |r| r.get::<_, i64>(0),
    )
    .ok()
    .filter(|r| *r > 0)
    .map(|r| r as u32)
}

/// The rows of an FTS table a `MATCH` finds (at most [`MAX_KEYS`]).
fn match_sql(fts: &str) -> String {
    format!("SELECT rowid FROM {fts} WHERE {fts} MATCH ?1 LIMIT {MAX_KEYS}")
}

/// Awaits `fut`, running `work` once `fut` waits for the network (its
/// first poll sent the request): the worker is idle then. Not run when
/// `fut` needs no request.
async fn meanwhile<T>(fut: impl Future<Output = T>, work: impl FnOnce()) -> T {
    let mut fut = pin!(fut);
    let mut work = Some(work);
    std::future::poll_fn(|cx| {
        let polled = fut.as_mut().poll(cx);
        if polled.is_pending() {
            if let Some(w) = work.take() {
                w();
            }
        }
        polled
    })
    .await
}

/// Follows `keys` from each table's root down to its leaves, fetching each
/// level's missing pages in one batch (the first with `extra` pages, known
/// beforehand); returns the leaves with their keys.
async fn walk(
    lazy: &LazyIndex,
    conn: &Connection,
    keys: &Keys,
    extra: &[u32],
) -> Result<Vec<(u32, Vec<i64>)>> {
    let mut frontier: Vec<(u32, Vec<i64>)> = Vec::new();
    for (table, ks) in keys {
        if let Some(root) = root_of(conn, table).filter(|_| !ks.is_empty()) {
            frontier.push((root, ks.iter().copied().take(MAX_KEYS).collect()));
        }
    }
    walk_by(
        lazy,
        frontier,
        extra,
        |page, page_no, ks| match btree::kind(page, page_no)? {
            PageKind::InteriorTable => btree::descend(page, page_no, ks),
            PageKind::InteriorIndex => btree::descend_index(page, page_no, ks),
            PageKind::LeafTable | PageKind::LeafIndex => None,
        },
    )
    .await
}

/// [`walk`] over the FTS index `_idx` of each table of `keys`, for the
/// term lookups of the doclists (`doclists::term_keys`).
async fn walk_terms(
    lazy: &LazyIndex,
    conn: &Connection,
    keys: Vec<(String, Vec<btree::TermKey>)>,
) -> Result<()> {
    let frontier: Vec<(u32, Vec<btree::TermKey>)> = keys
        .into_iter()
        .filter(|(_, ks)| !ks.is_empty())
        .filter_map(|(idx, ks)| Some((root_of(conn, &idx)?, ks)))
        .collect();
    let usable = lazy.usable_size();
    walk_by(
        lazy,
        frontier,
        &[],
        |page, page_no, ks| match btree::kind(page, page_no)? {
            PageKind::InteriorIndex => btree::descend_terms(page, page_no, usable, ks),
            _ => None,
        },
    )
    .await?;
    Ok(())
}

/// The walk itself: `descend` gives an interior page's children for keys
/// (`None` for a leaf or a page it cannot read, which ends that path).
async fn walk_by<K>(
    lazy: &LazyIndex,
    mut frontier: Vec<(u32, Vec<K>)>,
    extra: &[u32],
    descend: impl Fn(&[u8], u32, &[K]) -> Option<Vec<(u32, Vec<K>)>>,
) -> Result<Vec<(u32, Vec<K>)>> {
    // Pages in hand are descended at once, so every table reaches its
    // leaves in the same batch whatever its depth; one batch per level
    // that has missing pages.
    let mut leaves = Vec::new();
    let mut extra = extra.to_vec();
    let mut fetches = 0;
    loop {
        let mut missing = Vec::new();
        let mut steps = 0;
        while !frontier.is_empty() && steps < 4 * MAX_LEVELS {
            steps += 1;
            let mut next = Vec::new();
            for (page_no, ks) in std::mem::take(&mut frontier) {
                let Some(page) = lazy.peek(page_no) else {
                    missing.push((page_no, ks));
                    continue;
                };
                if matches!(
                    btree::kind(&page, page_no),
                    Some(PageKind::LeafTable) | Some(PageKind::LeafIndex)
                ) {
                    leaves.push((page_no, ks));
                    continue;
                }
                next.extend(descend(&page, page_no, &ks).unwrap_or_default());
            }
            frontier = next;
        }
        if (missing.is_empty() && extra.is_empty()) || fetches == MAX_LEVELS {
            break;
        }
        fetches += 1;
        let mut pages: Vec<u32> = missing.iter().map(|(p, _)| *p).collect();
        pages.append(&mut extra);
        lazy.fetch_pages(&pages).await?;
        frontier = missing;
    }
    Ok(leaves)
}

/// Fetches every page of the b-trees `names` not in hand (their inner
/// pages are hot: the leaves come in one round), unless that is more than
/// [`MAX_SCAN_PAGES`]: SQLite then reads them page by page.
async fn scan(lazy: &LazyIndex, conn: &Connection, names: &[String]) -> Result<()> {
    let roots: Vec<u32> = names.iter().filter_map(|n| root_of(conn, n)).collect();
    // Count what is missing from the pages in hand.
    let mut stack = roots.clone();
    let mut seen = BTreeSet::new();
    let mut missing = 0;
    while let Some(p) = stack.pop() {
        if !seen.insert(p) {
            continue;
        }
        match lazy.peek(p) {
            None => missing += 1,
            Some(page) => stack.extend(btree::children(&page, p).unwrap_or_default()),
        }
        if missing > MAX_SCAN_PAGES {
            return Ok(());
        }
    }
    walk_by(
        lazy,
        roots.into_iter().map(|r| (r, vec![()])).collect(),
        &[],
        |page, page_no, _| {
            Some(
                btree::children(page, page_no)?
                    .into_iter()
                    .map(|c| (c, vec![()]))
                    .collect(),
            )
        },
    )
    .await?;
    Ok(())
}

/// The overflow pages of the rows `leaves` hold for their keys.
fn overflow_pages(lazy: &LazyIndex, leaves: &[(u32, Vec<i64>)]) -> Vec<u32> {
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
    pages
}

/// Adds the messages of code blocks `ids` (rows in place) to `keys`;
/// returns their chats.
fn code_links(conn: &Connection, keys: &mut Keys, ids: &BTreeSet<i64>) -> Vec<i64> {
    keys.entry(messages::TABLE)
        .or_default()
        .extend(ints_in(conn, MESSAGE_OF_BLOCKS, ids));
    ints_in(conn, CHAT_OF_BLOCKS, ids)
}

/// Adds chats `ids` and their details to `keys` (a returned row's chat
/// fields come from both).
fn add_chats(keys: &mut Keys, ids: &[i64]) {
    keys.entry(chats::TABLE).or_default().extend(ids);
    keys.entry(chat_details::TABLE).or_default().extend(ids);
}

/// See the module docs.
pub async fn warm(
    lazy: &LazyIndex,
    conn: &Connection,
    tally: &Tally,
    planned: &PlannedSearch,
) -> Result<()> {
    if planned.from_cursor() || warm_plan(lazy, conn, tally, planned).await? {
        return Ok(());
    }
    // Nothing matches every word: the search corrects its typos, and
    // failing that matches any word; each of those readings is warmed
    // in turn.
    let corrected = correct_typos(lazy, conn, planned).await?;
    let now = match corrected {
        Some(fixed) if warm_plan(lazy, conn, tally, &fixed).await? => return Ok(()),
        Some(fixed) => fixed,
        None => planned.clone(),
    };
    if let Some(any) = now.any_term() {
        warm_plan(lazy, conn, tally, &any).await?;
    }
    Ok(())
}

/// Fetches the pages of `typo_terms` typo correction reads for `planned`
/// (its b-tree a level at a time), then corrects it as the search will
/// (pages in place): the corrected search, if a word was corrected.
async fn correct_typos(
    lazy: &LazyIndex,
    conn: &Connection,
    planned: &PlannedSearch,
) -> Result<Option<PlannedSearch>> {
    let ranges = planned.typo_lookups();
    if ranges.is_empty() {
        return Ok(None);
    }
    if let Some(root) = root_of(conn, typo_terms::TABLE) {
        let usable = lazy.usable_size();
        walk_by(
            lazy,
            vec![(root, ranges)],
            &[],
            |page, page_no, rs| match btree::kind(page, page_no)? {
                PageKind::InteriorIndex => btree::descend_ranges(page, page_no, usable, rs),
                _ => None,
            },
        )
        .await?;
    }
    planned.corrected(conn)
}

/// Warms one reading of a query (rounds 1 to 4); whether it matched
/// anything (the rounds after the first run only then).
async fn warm_plan(
    lazy: &LazyIndex,
    conn: &Connection,
    tally: &Tally,
    planned: &PlannedSearch,
) -> Result<bool> {
    let p = planned.plan();
    if planned.options().mode == QueryMode::Box && planned.query().is_blank() {
        return Ok(true);
    }

    // Round 1: the doclists (found through the FTS index), then the rows
    // each target matches.
    let exprs: Vec<(Target, String)> = p
        .target_plans
        .iter()
        .filter_map(|tp| Some((tp.target, tp.sql.as_ref()?.fts.clone()?)))
        .collect();
    // Each FTS index's segments (found once, used by both lookups).
    let segids: Vec<Vec<i64>> = exprs
        .iter()
        .map(|(t, _)| doclists::segids(conn, &format!("{}_idx", fts_table(*t))).unwrap_or_default())
        .collect();
    // The leaves of the FTS index the term lookups land on (in hand when
    // the index is small enough to be hot whole), then the doclists.
    let terms = exprs
        .iter()
        .zip(&segids)
        .map(|((t, expr), segs)| {
            let fts = fts_table(*t);
            (format!("{fts}_idx"), doclists::term_keys(segs, fts, expr))
        })
        .collect();
    walk_terms(lazy, conn, terms).await?;
    if exprs.is_empty() {
        // No words: the filters and sort scan the targets' tables. Those
        // in one round (the search's statements compiled meanwhile), then
        // the returned page.
        let tables: Vec<&str> = p
            .target_plans
            .iter()
            .flat_map(|tp| tp.scanned().iter().copied())
            .collect();
        if tables.is_empty() {
            return Ok(true);
        }
        let names = gitsense_engine::index::btrees_of(conn, &tables)?;
        meanwhile(scan(lazy, conn, &names), || {
            gitsense_engine::search::prepare_statements(conn, p)
        })
        .await?;
        returned_page(lazy, conn, tally, p).await?;
        return Ok(true);
    }
    let mut keys = Keys::new();
    for ((t, expr), segs) in exprs.iter().zip(&segids) {
        let data: &'static str = match t {
            Target::Chats => formatcp!("{fts_chats}_data", fts_chats = fts_chats::TABLE),
            Target::Messages => {
                formatcp!("{fts_messages}_data", fts_messages = fts_messages::TABLE)
            }
            Target::CodeBlocks => formatcp!(
                "{fts_code_blocks}_data",
                fts_code_blocks = fts_code_blocks::TABLE
            ),
        };
        let rowids = doclists::doclist_rowids_in(conn, fts_table(*t), segs, expr, |s| {
            lazy.local_only(|| doclists::leaf_end_hashes(conn, fts_table(*t), s))
        })
        .unwrap_or_default();
        keys.entry(data).or_default().extend(rowids);
    }
    // The exact-name boost's key is known before anything matches.
    for tp in &p.target_plans {
        if let Some(k) = tp.sql.as_ref().and_then(|sql| sql.name_key) {
            keys.entry(message_names::TABLE).or_default().insert(k);
        }
    }
    // While the doclists are on the way: the search's statements, so that
    // the rest of the warm-up and the search start on compiled ones.
    meanwhile(walk(lazy, conn, &keys, &[]), || {
        for (t, _) in &exprs {
            let _ = conn.prepare_cached(&match_sql(fts_table(*t)));
        }
        gitsense_engine::search::prepare_statements(conn, p)
    })
    .await?;
    let mut matched: Vec<(Target, BTreeSet<i64>)> = Vec::new();
    for (target, expr) in exprs {
        let fts = fts_table(target);
        let ids = ints(conn, &match_sql(fts), &[SqlValue::Text(expr)]).unwrap_or_default();
        matched.push((target, ids.into_iter().collect()));
    }
    if matched.iter().all(|(_, ids)| ids.is_empty()) {
        return Ok(false);
    }

    // Round 2: the rows of the tables ranking joins (for plain words only
    // the ranking records) and chats' document sizes, then what filter
    // tables point to.
    let sql_of = |t: Target| {
        p.target_plans
            .iter()
            .find(|tp| tp.target == t)
            .and_then(|tp| tp.sql.as_ref())
    };
    let joined = |t: Target| sql_of(t).map(|sql| sql.tables.clone()).unwrap_or_default();
    let mut keys = Keys::new();
    for (t, ids) in &matched {
        if let Some(table) = docsize_table(*t) {
            keys.entry(table).or_default().extend(ids);
        }
        for table in joined(*t) {
            if table == rows_table(*t) {
                // Keyed by the matched rowid itself.
                keys.entry(table).or_default().extend(ids);
            } else if records_of(*t).is_some_and(|(r, _)| r == table) {
                // Keyed by its chunk.
                keys.entry(table)
                    .or_default()
                    .extend(ids.iter().map(|&id| records::chunk_of(id)));
            }
        }
    }
    walk(lazy, conn, &keys, &[]).await?;
    let mut keys = Keys::new();
    for (t, ids) in &matched {
        let tables = joined(*t);
        let via: &[(&'static str, &str)] = match t {
            Target::Chats => &[],
            Target::Messages => &[(chats::TABLE, DISTINCT_CHAT_OF_MESSAGES)],
            Target::CodeBlocks => &[
                (chats::TABLE, DISTINCT_CHAT_OF_BLOCKS),
                (messages::TABLE, DISTINCT_MESSAGE_OF_BLOCKS),
            ],
        };
        for (table, select) in via {
            if tables.contains(table) {
                keys.entry(*table)
                    .or_default()
                    .extend(ints_in(conn, select, ids));
            }
        }
    }
    walk(lazy, conn, &keys, &[]).await?;
    returned_page(lazy, conn, tally, p).await?;
    Ok(true)
}

/// Rounds 3 and 4 (see the module docs): ranking (as the engine will run
/// it; pages are in place now), then the rows of the returned page: their
/// own rows, payload, chats and the messages of code blocks (known from
/// the ranking records when ranking read them, else from the rows of
/// filter tables in place, else a round later); then the overflow pages
/// of those rows.
async fn returned_page(lazy: &LazyIndex, conn: &Connection, tally: &Tally, p: &Plan) -> Result<()> {
    let mut keys = Keys::new();
    let mut code_later = BTreeSet::new();
    let offset = (p.page.saturating_sub(1)) * p.per_page;
    for tp in &p.target_plans {
        let Some(sql) = &tp.sql else { continue };
        // Ranked as the search will rank them (a search judged per page
        // returns the sections it keeps, not the first rows of its
        // statement), so the rows it returns are the rows fetched.
        let ids: BTreeSet<i64> = search::ranked_page(conn, tally, sql, p.per_page, offset)
            .map(|(ids, _)| ids.into_iter().map(|r| r.id).collect())
            .unwrap_or_default();
        if ids.is_empty() {
            continue;
        }
        let payload = match tp.target {
            Target::Chats => chat_details::TABLE,
            Target::Messages => message_text::TABLE,
            Target::CodeBlocks => code_text::TABLE,
        };
        keys.entry(payload).or_default().extend(&ids);
        // (Message and code-block snippets need no document sizes: their
        // tables keep none, see `index`; chats' came with round 2.)
        keys.entry(rows_table(tp.target)).or_default().extend(&ids);
        let ranked = records_of(tp.target).filter(|(table, _)| sql.tables.contains(table));
        let chats = match (tp.target, ranked) {
            (Target::Chats, _) => ids.iter().copied().collect(),
            (Target::Messages, Some((table, cols))) => read_records(conn, table, cols, &ids)
                .values()
                .map(|f| f[0])
                .collect(),
            (Target::CodeBlocks, Some((table, cols))) => {
                let parents = read_records(conn, table, cols, &ids);
                keys.entry(messages::TABLE)
                    .or_default()
                    .extend(parents.values().map(|f| f[0]));
                parents.values().map(|f| f[1]).collect()
            }
            // Without ranking, the target's own rows are what the page
            // query read (in place).
            (Target::Messages, None) => ints_in(conn, CHAT_OF_MESSAGES, &ids),
            (Target::CodeBlocks, None) if sql.tables.contains(&code_blocks::TABLE) => {
                code_links(conn, &mut keys, &ids)
            }
            (Target::CodeBlocks, None) => {
                // Their rows arrive with this round; what they point to
                // comes with the next.
                code_later = ids.clone();
                Vec::new()
            }
        };
        add_chats(&mut keys, &chats);
    }
    let mut leaves = walk(lazy, conn, &keys, &[]).await?;
    if !code_later.is_empty() {
        let mut keys = Keys::new();
        let chats = code_links(conn, &mut keys, &code_later);
        add_chats(&mut keys, &chats);
        let extra = overflow_pages(lazy, &leaves);
        leaves = walk(lazy, conn, &keys, &extra).await?;
    }
    lazy.fetch_pages(&overflow_pages(lazy, &leaves)).await
}
