//! The executor: runs a [`Plan`] against an index and assembles the
//! results object.
//!
//! Two phases per target keep the pages a query touches few: first the
//! count and the ranked ids of the requested page (FTS index, small filter
//! tables only), then content, metadata and snippets for those ids alone.
//! When an all-terms query finds nothing anywhere, the query is run again
//! with any-term matching and `searchCriteria.fallback` says so.

use crate::error::{DbContext, Error, Result};
use crate::facets;
use crate::index::schema::{chats, fts_chats, fts_code_blocks, fts_messages};
use crate::index::{self, IndexInfo};
use crate::langs::{Demoted, PageLanguages};
use crate::plan::{self, Highlight, MatchMode, Plan, QueryMode, SearchOptions, TargetSql};
use crate::query::ast::{Query, Scope, Target};
use crate::results::*;
use crate::util::escape_html;
use const_format::formatcp;
use rusqlite::{config::DbConfig, params, params_from_iter, Connection, OptionalExtension};
use serde_json::{json, Map, Value};
use std::cell::Cell;
use std::sync::Arc;

pub(crate) mod rows;
use rows::{ChatRow, CodeRow, MessageRow};

pub(crate) const MARK_OPEN: &str = "\u{E000}";
pub(crate) const MARK_CLOSE: &str = "\u{E001}";
const SNIPPET_TOKENS_TEXT: i64 = 12;
const SNIPPET_TOKENS_CODE: i64 = 64;

const LISTING_SNIPPET_CHARS: usize = 160;

/// Chat meta keys too bulky or internal to return as `chats_meta_*`.
const CHAT_META_SKIP: &[&str] = &[
    "tokens",
    "import",
    "commit",
    "refContext",
    "type",
    "blob",
    "highlight",
    "tree",
];

/// A query parsed and planned for one revision of an index
/// ([`Engine::plan_search`]), ready for [`Engine::search_planned`].
#[derive(Debug, Clone)]
pub struct PlannedSearch {
    text: String,
    /// The options as given (a cursor included), to plan again with.
    asked: SearchOptions,
    /// The options the plan was made for: a cursor decoded into its page
    /// and page size.
    opts: SearchOptions,
    query: Query,
    plan: Plan,
    corpus: plan::Corpus,
    revision: String,
    plan_ms: f64,
    /// The pages in another language than the reader's, ranked below the
    /// others ([`crate::langs`]).
    demoted: Option<Arc<Demoted>>,
}

impl PlannedSearch {
    /// The pages the search ranks below the others, for a connection
    /// running its statements ([`index::rank::Tally::demote`]).
    pub fn demoted(&self) -> Option<Arc<Demoted>> {
        self.demoted.clone()
    }

    /// The parsed query.
    pub fn query(&self) -> &Query {
        &self.query
    }

    /// The statements the search will run, per target.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The options planned for (a cursor already decoded into its page).
    pub fn options(&self) -> &SearchOptions {
        &self.opts
    }

    /// Whether the search continues from a cursor (`nextCursor`).
    pub fn from_cursor(&self) -> bool {
        self.asked.cursor.is_some()
    }

    /// This search with another query and plan (what it runs when nothing
    /// matched every word).
    fn instead(&self, query: Query, plan: Plan) -> PlannedSearch {
        PlannedSearch {
            text: self.text.clone(),
            asked: self.asked.clone(),
            opts: self.opts.clone(),
            query,
            plan,
            corpus: self.corpus,
            revision: self.revision.clone(),
            plan_ms: self.plan_ms,
            demoted: self.demoted.clone(),
        }
    }

    /// The keys of `typo_terms` typo correction reads when nothing
    /// matched every word ([`crate::typo::lookups`]).
    pub fn typo_lookups(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        crate::typo::lookups(&self.query)
    }

    /// When nothing matched every word: the search with its typos
    /// corrected, as the engine runs it then; `None` when no word is
    /// corrected. Reads `typo_terms` through `conn`.
    pub fn corrected(&self, conn: &Connection) -> Result<Option<PlannedSearch>> {
        self.corrected_with(&SqlSource { conn, tally: None })
    }

    /// [`PlannedSearch::corrected`], reading through `src`.
    pub(crate) fn corrected_with(&self, src: &dyn Source) -> Result<Option<PlannedSearch>> {
        Ok(corrected_plan(src, &self.query, &self.opts, self.corpus)?
            .map(|(query, plan, _)| self.instead(query, plan)))
    }

    /// When nothing matched every word (typos corrected): the search
    /// matching any of them, as the engine runs it then; `None` when the
    /// query has no such reading.
    pub fn any_term(&self) -> Option<PlannedSearch> {
        any_term_plan(&self.query, &self.opts, self.corpus)
            .map(|p| self.instead(self.query.clone(), p))
    }
}

/// The query typo correction makes of `q` (see [`crate::typo`]) and its
/// plan, with the corrections; `None` when no word is corrected.
fn corrected_plan(
    src: &dyn Source,
    q: &Query,
    opts: &SearchOptions,
    corpus: plan::Corpus,
) -> Result<Option<(Query, Plan, Vec<crate::typo::Correction>)>> {
    let Some((fixed, corrections)) = src.correct(q)? else {
        return Ok(None);
    };
    Ok(plan::plan_in(&fixed, opts, MatchMode::AllTerms, corpus)
        .ok()
        .map(|p| (fixed, p, corrections)))
}

/// The any-term reading of `q`, a second chance: none where it cannot be
/// planned (an OR branch left with only an excluded term, once a word
/// that holds no token is dropped).
fn any_term_plan(q: &Query, opts: &SearchOptions, corpus: plan::Corpus) -> Option<Plan> {
    if !plan::can_fall_back(q) {
        return None;
    }
    plan::plan_in(q, opts, MatchMode::AnyTerm, corpus).ok()
}

/// The results object as JSON text, as [`Engine::search_json`] returns it.
pub fn results_json(r: &SearchResults) -> Result<String> {
    serde_json::to_string(r).map_err(|e| Error::new("internal.serialize", e.to_string()))
}

/// A clock in milliseconds; the browser build installs `performance.now`.
pub type Clock = fn() -> f64;

pub(crate) fn system_clock() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}

/// A deferred read transaction for as long as it lives, when the
/// connection is not in one already; ended (`COMMIT`, else `ROLLBACK`)
/// on drop, whatever the search returned. Failing to begin only costs the
/// per-statement locking it saves. Not rusqlite's `Transaction`: it
/// compiles `BEGIN DEFERRED` and `ROLLBACK` anew on every search (+5 % on
/// a native Python-docs query, 0.25 -> 0.27 ms median); these are cached.
struct ReadTransaction<'a>(Option<&'a Connection>);

impl<'a> ReadTransaction<'a> {
    fn begin(conn: &'a Connection) -> Self {
        let began = conn.is_autocommit()
            && conn
                .prepare_cached("BEGIN")
                .and_then(|mut s| s.execute([]))
                .is_ok();
        ReadTransaction(began.then_some(conn))
    }
}

impl Drop for ReadTransaction<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.0 {
            let end = |sql: &str| conn.prepare_cached(sql).and_then(|mut s| s.execute([]));
            if end("COMMIT").is_err() {
                let _ = end("ROLLBACK");
            }
        }
    }
}

/// How long one search may work by default, in milliseconds (see
/// [`Engine::set_time_budget`]).
pub const DEFAULT_TIME_BUDGET_MS: f64 = 1000.0;

/// One search's time budget, read by SQLite's progress handler (every
/// [`PROGRESS_OPS`] virtual-machine steps) and before each snippet.
/// Boxed, so its address stays put for the handler's pointer.
pub(crate) struct Budget {
    clock: Cell<Clock>,
    /// When the running search's budget ends (`INFINITY` between
    /// searches).
    until: Cell<f64>,
    /// The running search's budget in milliseconds (`INFINITY`: none), as
    /// its hints name it.
    ms: Cell<f64>,
    /// When the progress handler stops a statement: `until` while the
    /// ranking runs, `INFINITY` otherwise (rows and snippets of a page
    /// are never cut off halfway; snippets look at `until` themselves).
    deadline: Cell<f64>,
    /// Set once the handler interrupted a statement.
    interrupted: Cell<bool>,
    /// Set once a snippet was left out for the budget.
    plain_snippets: Cell<bool>,
}

impl Budget {
    /// A budget that never runs out (until a search sets one), counted
    /// with `clock`.
    pub(crate) fn unbounded(clock: Clock) -> Budget {
        Budget {
            clock: Cell::new(clock),
            until: Cell::new(f64::INFINITY),
            ms: Cell::new(f64::INFINITY),
            deadline: Cell::new(f64::INFINITY),
            interrupted: Cell::new(false),
            plain_snippets: Cell::new(false),
        }
    }

    fn spent(&self) -> bool {
        (self.clock.get())() > self.until.get()
    }
}

/// Virtual-machine steps between two looks at the clock.
const PROGRESS_OPS: std::os::raw::c_int = 4000;

extern "C" fn over_budget(budget: *mut std::os::raw::c_void) -> std::os::raw::c_int {
    // SAFETY: registered by `Engine::from_connection` with the address of
    // the engine's boxed `Budget`, which outlives the connection (the
    // handler is removed in `Drop for Engine` before either goes).
    let budget = unsafe { &*(budget as *const Budget) };
    let over = (budget.clock.get())() > budget.deadline.get();
    if over {
        budget.interrupted.set(true);
    }
    std::os::raw::c_int::from(over)
}

/// An open index, ready to answer queries: [`Engine::open`] a file, then
/// [`Engine::search`] it as often as needed (the statements are prepared
/// once and cached).
///
/// ```
/// use gitsense_engine::{Engine, SearchOptions};
/// # let dir = tempfile::tempdir()?;
/// # let path = gitsense_engine::index::write_example(&dir.path().join("chats.gsx"))?;
/// let engine = Engine::open(&path)?;
/// for query in ["retry", "payment in:messages", "lang:javascript charge"] {
///     let r = engine.search(query, &SearchOptions::default())?;
///     assert!(r.total_results_returned > 0, "{query}");
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Engine {
    conn: Connection,
    info: IndexInfo,
    /// A site's page languages, when it has several ([`crate::langs`]).
    page_languages: Option<PageLanguages>,
    clock: Clock,
    /// Rows the ranking functions scored (counts of rank-sorted targets).
    tally: index::rank::Tally,
    budget: Box<Budget>,
    /// Milliseconds one search may work; `None`: no bound.
    time_budget_ms: Option<f64>,
}

impl Drop for Engine {
    fn drop(&mut self) {
        // SAFETY: the connection's handle is valid while `self.conn` lives.
        unsafe {
            rusqlite::ffi::sqlite3_progress_handler(
                self.conn.handle(),
                0,
                None,
                std::ptr::null_mut(),
            );
        }
    }
}

/// Parses and plans a query for an index described by `info` (see
/// [`Engine::plan_search`]).
pub(crate) fn plan_for(
    info: &IndexInfo,
    page_languages: Option<&PageLanguages>,
    clock: Clock,
    text: &str,
    opts: &SearchOptions,
) -> Result<PlannedSearch> {
    let t0 = clock();
    let corpus = plan::Corpus::of(info);
    let mut planned_opts = opts.clone();
    if let Some(c) = planned_opts.cursor.take() {
        let (page, per_page) = decode_cursor(&c, &info.revision, text)?;
        planned_opts.page = page;
        planned_opts.per_page = Some(per_page);
    }
    let (query, plan) = plan::plan_text_in(text, &planned_opts, corpus)?;
    Ok(PlannedSearch {
        text: text.to_string(),
        asked: opts.clone(),
        opts: planned_opts,
        query,
        plan,
        corpus,
        revision: info.revision.clone(),
        plan_ms: clock() - t0,
        demoted: page_languages
            .and_then(|l| l.demoted(opts.lang.as_deref()))
            .map(Arc::new),
    })
}

/// Where the executor reads a search's answers: SQLite through a
/// connection ([`SqlSource`]), or the index file read without it
/// ([`crate::reader::Reader`], which answers what it can and is
/// `reader.unsupported` for the rest).
pub(crate) trait Source {
    /// A target's number of results (`count_sql`).
    fn count_rows(&self, sql: &TargetSql) -> Result<u64>;
    /// A page of a ranked target's ids and its number of results
    /// ([`ranked_page`]).
    fn ranked_page(&self, sql: &TargetSql, limit: u64, offset: u64) -> Result<(Vec<Ranked>, u64)>;
    fn chat_row(&self, id: i64) -> Result<ChatRow>;
    fn message_row(&self, id: i64) -> Result<MessageRow>;
    fn code_row(&self, id: i64) -> Result<CodeRow>;
    /// FTS5's `snippet(table, column, MARK_OPEN, MARK_CLOSE, '...',
    /// tokens)` of row `id` matching `fts`.
    fn snippet(
        &self,
        table: &str,
        column: i64,
        tokens: i64,
        fts: &str,
        id: i64,
    ) -> Result<Option<String>>;
    fn chat_exists(&self, id: i64) -> Result<bool>;
    /// The query with its typos corrected ([`crate::typo::correct`]).
    fn correct(&self, q: &Query) -> Result<Option<(Query, Vec<crate::typo::Correction>)>>;
    /// The requested facets' counts ([`facets::count`]).
    fn facets(
        &self,
        p: &Plan,
        requests: &[facets::FacetRequest],
        spent: &dyn Fn() -> bool,
    ) -> Result<facets::Counted>;
}

/// The executor's reads through SQLite.
pub(crate) struct SqlSource<'a> {
    conn: &'a Connection,
    /// The ranking functions' tally (none: nothing is ranked).
    tally: Option<&'a index::rank::Tally>,
}

impl Source for SqlSource<'_> {
    fn count_rows(&self, sql: &TargetSql) -> Result<u64> {
        Ok(self
            .conn
            .prepare_cached(&sql.count_sql)
            .and_then(|mut s| {
                s.query_row(params_from_iter(sql.params.iter()), |r| r.get::<_, i64>(0))
            })
            .map_err(fts_error)? as u64)
    }

    fn ranked_page(&self, sql: &TargetSql, limit: u64, offset: u64) -> Result<(Vec<Ranked>, u64)> {
        let tally = self
            .tally
            .ok_or_else(|| Error::new("internal.error", "ranking without the ranking functions"))?;
        ranked_page(self.conn, tally, sql, limit, offset)
    }

    fn chat_row(&self, id: i64) -> Result<ChatRow> {
        ChatRow::read(self.conn, id).ctx("reading chat")
    }

    fn message_row(&self, id: i64) -> Result<MessageRow> {
        MessageRow::read(self.conn, id).ctx("reading message")
    }

    fn code_row(&self, id: i64) -> Result<CodeRow> {
        CodeRow::read(self.conn, id).ctx("reading code block")
    }

    fn snippet(
        &self,
        table: &str,
        column: i64,
        tokens: i64,
        fts: &str,
        id: i64,
    ) -> Result<Option<String>> {
        self.conn
            .prepare_cached(&snippet_sql(table))
            .and_then(|mut s| {
                s.query_row(
                    params![column, MARK_OPEN, MARK_CLOSE, tokens, fts, id],
                    |r| r.get::<_, Option<String>>(0),
                )
                .optional()
            })
            .map(|o| o.flatten())
            .map_err(fts_error)
    }

    fn chat_exists(&self, id: i64) -> Result<bool> {
        Ok(self
            .conn
            .prepare_cached(formatcp!(
                "SELECT 1 FROM {chats} WHERE {chats_id} = ?1",
                chats = chats::TABLE,
                chats_id = chats::ID
            ))
            .and_then(|mut s| s.query_row([id], |_| Ok(())).optional())
            .ctx("looking up chat")?
            .is_some())
    }

    fn correct(&self, q: &Query) -> Result<Option<(Query, Vec<crate::typo::Correction>)>> {
        crate::typo::correct(self.conn, q)
    }

    fn facets(
        &self,
        p: &Plan,
        requests: &[facets::FacetRequest],
        spent: &dyn Fn() -> bool,
    ) -> Result<facets::Counted> {
        facets::count(self.conn, p, requests, spent)
    }
}

/// One search's run over a [`Source`]: counts, pages, rows and snippets
/// assembled into the results object.
pub(crate) struct Exec<'a> {
    pub(crate) src: &'a dyn Source,
    pub(crate) info: &'a IndexInfo,
    pub(crate) clock: Clock,
    pub(crate) budget: &'a Budget,
}

/// A target's number of results and, when counting ranked them too,
/// its returned page.
struct Counted {
    target: Target,
    total: u64,
    page: Option<Vec<Ranked>>,
}

/// A row of a ranked page.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked {
    pub id: i64,
    pub rank: f64,
    /// The query's phrases the row holds (bit `i`: phrase `i` of
    /// [`TargetSql::phrases`]), when the ranking gave them (a search
    /// judged per page): its snippet then matches only those.
    pub phrases: Option<i64>,
}

impl Engine {
    /// Opens an index file (native).
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # let path = gitsense_engine::index::write_example(&dir.path().join("chats.gsx"))?;
    /// let engine = gitsense_engine::Engine::open(&path)?;
    /// assert_eq!(engine.info().messages, 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(path: &std::path::Path) -> Result<Engine> {
        Engine::from_connection(index::open_file(path)?)
    }

    /// Wraps an already open connection (the browser opens it on its own
    /// VFS); checks the format version and registers the ranking function.
    pub fn from_connection(conn: Connection) -> Result<Engine> {
        let info = index::verify(&conn)?;
        let page_languages = conn
            .query_row(index::META_VALUE_SQL, [crate::langs::META_KEY], |r| {
                r.get::<_, String>(0)
            })
            .optional()
            .ctx("reading index_meta")?
            .as_deref()
            .and_then(PageLanguages::decode);
        let tally = index::rank::register(&conn)?;
        crate::pattern::register(&conn)?;
        crate::meta::register(&conn)?;
        // Plans that never depend on bound values (the query planner
        // stability guarantee): otherwise SQLite compiles a statement
        // again each time a value bound to its LIMIT (or one it compared
        // while planning) changes, that is on nearly every search.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
            .ctx("configuring the connection")?;
        // Many small statements run per search; keep them prepared.
        conn.set_prepared_statement_cache_capacity(64);
        // Bounded per search (`search_planned`).
        let budget = Box::new(Budget::unbounded(system_clock));
        // SAFETY: the pointer is to the boxed budget the engine owns, and
        // the handler is removed before the engine drops it.
        unsafe {
            rusqlite::ffi::sqlite3_progress_handler(
                conn.handle(),
                PROGRESS_OPS,
                Some(over_budget),
                &*budget as *const Budget as *mut std::os::raw::c_void,
            );
        }
        Ok(Engine {
            conn,
            info,
            page_languages,
            clock: system_clock,
            tally,
            budget,
            time_budget_ms: Some(DEFAULT_TIME_BUDGET_MS),
        })
    }

    /// Replaces the clock used for `trace` timings and the time budget.
    pub fn set_clock(&mut self, clock: Clock) {
        self.clock = clock;
        self.budget.clock.set(clock);
    }

    /// Replaces the clock the time budget counts with (after
    /// [`Engine::set_clock`]): the browser's leaves out the waits for
    /// pages read over the network, so the budget bounds work, not the
    /// network.
    pub fn set_budget_clock(&mut self, clock: Clock) {
        self.budget.clock.set(clock);
    }

    /// Bounds the work of each search to `ms` milliseconds (`None`: no
    /// bound; default [`DEFAULT_TIME_BUDGET_MS`]). A search that runs out
    /// returns what it has, marked `truncated` with a `hint` saying why:
    /// a target whose ranking was stopped has no results (its count is
    /// 0), and results whose snippet would have come after the deadline
    /// get the start of their text instead (a prefix such as `a*` makes
    /// SQLite's FTS5 merge the doclists of every word it matches, for the
    /// ranking and again for each snippet).
    ///
    /// ```
    /// use gitsense_engine::{Engine, SearchOptions};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = gitsense_engine::index::write_example(&dir.path().join("chats.gsx"))?;
    /// let mut engine = Engine::open(&path)?;
    /// engine.set_time_budget(Some(150.0));
    /// // A small index answers well within the bound: nothing is cut short.
    /// let r = engine.search("retry", &SearchOptions::default())?;
    /// assert_eq!(r.truncated, None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_time_budget(&mut self, ms: Option<f64>) {
        self.time_budget_ms = ms;
    }

    /// The engine's clock in milliseconds (what `trace` timings use); callers
    /// time their own stages with it, since `std::time` is unavailable in
    /// the browser.
    pub(crate) fn now_ms(&self) -> f64 {
        (self.clock)()
    }

    pub fn info(&self) -> &IndexInfo {
        &self.info
    }

    /// Applies a write to a writable index (see [`index::live`]): `json`
    /// holds the records (`add`, `update`) or ids (`remove`); one
    /// transaction, all or nothing. The next search sees it.
    pub fn write(
        &mut self,
        op: index::live::WriteOp,
        json: &str,
    ) -> Result<index::live::WriteSummary> {
        let summary = index::live::write(&self.conn, op, json)?;
        self.forget_cached()?;
        Ok(summary)
    }

    /// [`Engine::write`] at most once per `key` (see
    /// `index::live::write_once`).
    pub fn write_once(
        &mut self,
        op: index::live::WriteOp,
        json: &str,
        key: &str,
    ) -> Result<index::live::WriteSummary> {
        let summary = index::live::write_once(&self.conn, op, json, key)?;
        self.forget_cached()?;
        Ok(summary)
    }

    /// After the index changed under the connection: counts and phrase
    /// row counts read afresh. [`Engine::write`] calls it; a caller that
    /// changes the index through [`Engine::connection`] (an
    /// [`index::live::Import`]) calls it after each change.
    pub fn forget_cached(&mut self) -> Result<()> {
        self.tally.forget_counts();
        self.info = index::read_info(&self.conn)?;
        Ok(())
    }

    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Runs a query and returns the results object: chats, messages and
    /// code blocks, each counted and paged on its own.
    ///
    /// ```
    /// use gitsense_engine::{Engine, SearchOptions};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = gitsense_engine::index::write_example(&dir.path().join("chats.gsx"))?;
    /// let engine = Engine::open(&path)?;
    /// let r = engine.search("retry lang:javascript", &SearchOptions::default())?;
    /// assert_eq!(r.total_counts.code_blocks, 1);
    /// // Words with no filter match chats, messages and code blocks alike.
    /// let r = engine.search("payment -refund", &SearchOptions { per_page: Some(5), ..Default::default() })?;
    /// assert_eq!(r.total_counts.messages, 1);
    /// // Bad queries are errors with a stable code and a position.
    /// let e = engine.search("\"unbalanced", &SearchOptions::default()).unwrap_err();
    /// assert!(e.code.starts_with("query."));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn search(&self, text: &str, opts: &SearchOptions) -> Result<SearchResults> {
        let planned = self.plan_search(text, opts)?;
        self.search_planned(planned)
    }

    /// Parses and plans a query for this index without running it: what
    /// [`Engine::search_planned`] runs. A caller that reads the plan first
    /// (the browser's warm-up fetches the pages the plan will read) then
    /// parses and plans each query once.
    ///
    /// ```
    /// use gitsense_engine::{Engine, SearchOptions};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = gitsense_engine::index::write_example(&dir.path().join("chats.gsx"))?;
    /// let engine = Engine::open(&path)?;
    /// let planned = engine.plan_search("retry lang:javascript", &SearchOptions::default())?;
    /// // The statements the search will run, one set per target.
    /// assert!(planned.plan().target_plans.iter().any(|tp| tp.sql.is_some()));
    /// let r = engine.search_planned(planned)?;
    /// assert_eq!(r.total_counts.code_blocks, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn plan_search(&self, text: &str, opts: &SearchOptions) -> Result<PlannedSearch> {
        plan_for(
            &self.info,
            self.page_languages.as_ref(),
            self.clock,
            text,
            opts,
        )
    }

    /// Runs a query [`Engine::plan_search`] planned. One planned for
    /// another revision of the index (swapped in meanwhile) is planned
    /// again first.
    pub fn search_planned(&self, planned: PlannedSearch) -> Result<SearchResults> {
        let planned = if planned.revision == self.info.revision {
            planned
        } else {
            self.plan_search(&planned.text, &planned.asked)?
        };
        // One read transaction for the search's twenty-odd statements:
        // outside one, SQLite takes and drops its shared lock around each
        // of them, and each time looks for a hot journal and rereads the
        // file's change counter (VFS calls; in the browser, calls out of
        // wasm into OPFS).
        let _read = ReadTransaction::begin(&self.conn);
        // The budget starts with the run: a plan made ahead (before the
        // browser's warm-up, whose first call compiles the planner's code)
        // does not count against it.
        let start = (self.budget.clock.get())();
        self.budget.interrupted.set(false);
        self.budget.plain_snippets.set(false);
        // A search's own `timeBudgetMs` overrides the engine's; 0 lifts it.
        let ms = match planned.opts.time_budget_ms {
            Some(0) => f64::INFINITY,
            Some(ms) => ms as f64,
            None => self.time_budget_ms.unwrap_or(f64::INFINITY),
        };
        self.budget.ms.set(ms);
        self.budget.until.set(start + ms);
        self.tally.demote(planned.demoted());
        let src = SqlSource {
            conn: &self.conn,
            tally: Some(&self.tally),
        };
        let exec = Exec {
            src: &src,
            info: &self.info,
            clock: self.clock,
            budget: &self.budget,
        };
        let out = exec.search_in_transaction(planned);
        self.tally.demote(None);
        self.budget.until.set(f64::INFINITY);
        self.budget.deadline.set(f64::INFINITY);
        out
    }

    /// Runs a query with options given as JSON and returns the results
    /// object as JSON text (what the browser module and `--format json`
    /// print, so both are identical byte for byte).
    pub fn search_json(&self, text: &str, options_json: &str) -> Result<String> {
        let opts: SearchOptions = crate::util::from_json_arg(options_json, "search options")?;
        let r = self.search(text, &opts)?;
        results_json(&r)
    }
}

impl Exec<'_> {
    pub(crate) fn search_in_transaction(&self, planned: PlannedSearch) -> Result<SearchResults> {
        let t0 = (self.clock)() - planned.plan_ms;
        let PlannedSearch {
            text,
            opts,
            query: q,
            plan: mut p,
            corpus,
            ..
        } = planned;
        let text = text.as_str();
        let strict = opts.mode == QueryMode::Strict;
        let facet_requests = facets::requested(&q, &opts.facets, &p.profile.name, strict)?;
        if let (Some(cur), Some(scope)) = (opts.current_chat_id, q.scope) {
            if scope != Scope::AllChats && !self.src.chat_exists(cur)? {
                return Err(Error::new(
                    "options.unknown_chat",
                    format!("the current chat id {cur} is not in this index"),
                ));
            }
        }
        let t_parse = (self.clock)();
        if opts.mode == QueryMode::Box && q.is_blank() {
            return Ok(self.blank_results(text, &p, &opts));
        }
        let mut counted = self.count(&p)?;
        let mut fallback = None;
        let mut did_you_mean = None;
        // Words no indexed text holds are typos until shown otherwise:
        // searched as the indexed words nearest them, before any reading
        // that drops a word.
        let mut q = q;
        if counted.iter().all(|c| c.total == 0) && !self.budget.interrupted.get() {
            if let Some((fixed, fixed_plan, corrections)) =
                corrected_plan(self.src, &q, &opts, corpus)?
            {
                counted = self.count(&fixed_plan)?;
                did_you_mean = Some(DidYouMean {
                    query: crate::typo::corrected_text(text, &corrections),
                    corrections,
                });
                p = fixed_plan;
                q = fixed;
            }
        }
        // The any-term reading is a second chance, not the query: where it
        // cannot be planned the all-terms answer stands; nor is it tried
        // once the time budget ran out.
        let any_plan = if counted.iter().all(|c| c.total == 0) && !self.budget.interrupted.get() {
            any_term_plan(&q, &opts, corpus)
        } else {
            None
        };
        if let Some(any) = any_plan {
            let any_counted = self.count(&any)?;
            fallback = Some(json!({
                "from": "all-terms",
                "to": "any-term",
                "reason": "no result contains every term, so results containing any of them are shown, best first",
            }));
            p = any;
            counted = any_counted;
        }
        let t_count = (self.clock)();
        let mut results = ResultSets::default();
        let offset = (p.page - 1) * p.per_page;
        let counts: Vec<(Target, u64)> = counted.iter().map(|c| (c.target, c.total)).collect();
        for (tp, c) in p.target_plans.iter().zip(counted) {
            let Some(sql) = &tp.sql else { continue };
            let ids = match c.page {
                Some(ids) => ids,
                None if offset >= c.total => continue,
                None => {
                    self.budget.deadline.set(self.budget.until.get());
                    let ranked = self.src.ranked_page(sql, p.per_page, offset);
                    self.budget.deadline.set(f64::INFINITY);
                    match ranked {
                        Ok((ids, _)) => ids,
                        Err(_) if self.budget.interrupted.get() => Vec::new(),
                        Err(e) => return Err(e),
                    }
                }
            };
            for Ranked { id, rank, phrases } in ids {
                match tp.target {
                    Target::Chats => results.chats.push(self.chat_result(id, rank, sql, &opts)?),
                    Target::Messages => results
                        .messages
                        .push(self.message_result(id, rank, phrases, sql, &opts)?),
                    Target::CodeBlocks => results
                        .code_blocks
                        .push(self.code_result(id, rank, sql, &opts)?),
                }
            }
        }
        let t_fetch = (self.clock)();
        let count_of = |t: Target| {
            counts
                .iter()
                .find(|(x, _)| *x == t)
                .map(|(_, n)| *n)
                .unwrap_or(0)
        };
        let total_counts = TotalCounts {
            chats: count_of(Target::Chats),
            messages: count_of(Target::Messages),
            code_blocks: count_of(Target::CodeBlocks),
        };
        let total = total_counts.chats + total_counts.messages + total_counts.code_blocks;
        let max_count = counts.iter().map(|(_, n)| *n).max().unwrap_or(0);
        let total_pages = max_count.div_ceil(p.per_page);
        let returned =
            (results.chats.len() + results.messages.len() + results.code_blocks.len()) as u64;
        let mut out = SearchResults {
            search_criteria: self.criteria(text, &p, &opts, fallback),
            pagination: Pagination {
                current_page: p.page,
                total_pages,
                total_results: total,
                results_per_page: returned,
            },
            total_counts,
            results,
            total_results_returned: returned,
            hint: p.hint.clone(),
            next_cursor: (p.page < total_pages)
                .then(|| encode_cursor(&self.info.revision, text, p.page + 1, p.per_page)),
            truncated: None,
            trace: None,
            facets: None,
            did_you_mean,
        };
        if p.narrowed {
            out.truncated = Some(true);
        }
        self.mark_budget_cuts(&mut out);
        if !facet_requests.is_empty() {
            self.add_facets(&mut out, &p, &facet_requests)?;
        }
        if opts.trace {
            let t_end = (self.clock)();
            out.trace = Some(json!({
                "timing": {
                    "parse_ms": round3(t_parse - t0),
                    "count_ms": round3(t_count - t_parse),
                    "fetch_ms": round3(t_fetch - t_count),
                    "total_ms": round3(t_end - t0),
                },
                "plans": p.target_plans.iter().map(|tp| json!({
                    "target": tp.target.name(),
                    "fts": tp.sql.as_ref().and_then(|s| s.fts.clone()),
                    "skipped": tp.skipped,
                })).collect::<Vec<_>>(),
            }));
        }
        // Last, so the budget covers everything the caller receives.
        if let Some(budget) = opts.max_tokens {
            crate::budget::apply(&mut out, budget)?;
        }
        Ok(out)
    }

    /// Marks results the time budget cut short (`truncated`, and a `hint`
    /// after any the plan gave).
    fn mark_budget_cuts(&self, out: &mut SearchResults) {
        let ms = self.budget.ms.get();
        let why = if self.budget.interrupted.get() {
            format!(
                "the query matched too much to rank within the {ms} ms budget, so some targets show no \
                 results; use longer prefixes (not `a*`) or more words"
            )
        } else if self.budget.plain_snippets.get() {
            format!(
                "the {ms} ms budget ran out before every snippet was made, so some show the start of \
                 their text; longer prefixes (not `a*`) or more words make snippets cheaper"
            )
        } else {
            return;
        };
        out.truncated = Some(true);
        out.hint = Some(match out.hint.take() {
            Some(h) => format!("{h}; {why}"),
            None => why,
        });
    }

    /// Counts the requested facets over the plan's matches, in what is
    /// left of the time budget; a facet it cuts short is marked, and so
    /// are the results.
    fn add_facets(
        &self,
        out: &mut SearchResults,
        p: &Plan,
        requests: &[facets::FacetRequest],
    ) -> Result<()> {
        self.budget.deadline.set(self.budget.until.get());
        let counted = self.src.facets(p, requests, &|| self.budget.spent());
        self.budget.deadline.set(f64::INFINITY);
        let facets::Counted {
            facets: counted,
            warnings,
        } = counted?;
        if let Some(list) = out.search_criteria["warnings"].as_array_mut() {
            list.extend(warnings.into_iter().map(Value::String));
        }
        if counted.iter().any(|f| f.truncated.is_some()) {
            let why = format!(
                "the {} ms budget ran out while counting facets; those marked truncated count \
                 only the records reached",
                self.budget.ms.get()
            );
            out.truncated = Some(true);
            out.hint = Some(match out.hint.take() {
                Some(h) => format!("{h}; {why}"),
                None => why,
            });
        }
        out.facets = Some(counted);
        Ok(())
    }

    /// The results of a search-box text with nothing to search: none,
    /// where the query language would list everything.
    fn blank_results(&self, text: &str, p: &Plan, opts: &SearchOptions) -> SearchResults {
        SearchResults {
            search_criteria: self.criteria(text, p, opts, None),
            pagination: Pagination {
                current_page: p.page,
                total_pages: 0,
                total_results: 0,
                results_per_page: 0,
            },
            total_counts: TotalCounts::default(),
            results: ResultSets::default(),
            total_results_returned: 0,
            hint: None,
            next_cursor: None,
            truncated: None,
            trace: None,
            facets: None,
            did_you_mean: None,
        }
    }

    /// Each target's number of results. A target sorted by rank gets its
    /// returned page at the same time: its ranking scores every match
    /// (see [`crate::index::rank::Tally`]), so one pass over the doclists
    /// both ranks and counts; the others run `count(*)`.
    fn count(&self, p: &Plan) -> Result<Vec<Counted>> {
        let offset = (p.page - 1) * p.per_page;
        let mut out = Vec::new();
        for tp in &p.target_plans {
            // The ranking (and counting) is what the progress handler
            // stops once the budget is spent.
            self.budget.deadline.set(self.budget.until.get());
            let counted = match &tp.sql {
                None => Ok((0, None)),
                Some(sql) if sql.counted_by_rank => self
                    .src
                    .ranked_page(sql, p.per_page, offset)
                    .map(|(ids, scored)| (scored, Some(ids))),
                Some(sql) => self.src.count_rows(sql).map(|n| (n, None)),
            };
            self.budget.deadline.set(f64::INFINITY);
            let (total, page) = match counted {
                Ok(c) => c,
                // Stopped for the budget: this target has no results.
                Err(_) if self.budget.interrupted.get() => (0, Some(Vec::new())),
                Err(e) => return Err(e),
            };
            out.push(Counted {
                target: tp.target,
                total,
                page,
            });
        }
        Ok(out)
    }

    /// An FTS5 snippet, or `None` when the time budget is spent (the
    /// caller then shows the start of the text: a snippet of a prefix
    /// query costs a merge of every matching word's doclist).
    fn snippet_in_budget(
        &self,
        table: &str,
        column: i64,
        tokens: i64,
        fts: &str,
        id: i64,
    ) -> Result<Option<Option<String>>> {
        if self.budget.spent() {
            self.budget.plain_snippets.set(true);
            return Ok(None);
        }
        self.src.snippet(table, column, tokens, fts, id).map(Some)
    }

    fn chat_result(
        &self,
        id: i64,
        rank: f64,
        sql: &TargetSql,
        opts: &SearchOptions,
    ) -> Result<ChatResult> {
        let row = self.src.chat_row(id)?;
        let meta_v = parse_json(row.meta.as_deref());
        let mut trimmed = Map::new();
        if let Value::Object(m) = &meta_v {
            for (k, v) in m {
                if !CHAT_META_SKIP.contains(&k.as_str()) && !v.is_object() {
                    trimmed.insert(k.clone(), v.clone());
                }
            }
        }
        let mut meta = flatten_meta("chats", &Value::Object(trimmed));
        insert_absent_strings(
            &mut meta,
            [
                ("chats_meta_file_path", row.path),
                ("chats_meta_git_repo", row.repo),
                ("chats_meta_language", row.language),
            ],
        );
        let name = row.name;
        let name_snippet = match &sql.fts {
            Some(f) if opts.highlight != Highlight::None => {
                match self.snippet_in_budget(fts_chats::TABLE, 0, 64, f, id)? {
                    Some(s) => s.map(|s| finish_snippet(&s, opts.highlight)),
                    None => name.as_deref().map(|n| listing_snippet(n, opts.highlight)),
                }
            }
            _ => None,
        };
        let chats_name_html = html_of(name.as_deref(), opts);
        let chat_path_html = html_of(row.chat_path.as_deref(), opts);
        Ok(ChatResult {
            source_type: SOURCE_CHAT.into(),
            fts_rank: rank,
            result_chat_id: id,
            chat_path: row.chat_path,
            chats_id: id,
            chats_uuid: row.uuid,
            chats_name: name,
            chats_type: row.chat_type,
            chats_owner: row.owner,
            chats_modified_at: row.modified_at,
            cte_chat_message_stats_num_messages: row.num_messages,
            cte_chat_message_stats_last_updated_at: row.last_updated_at,
            chats_name_snippet: name_snippet,
            chats_name_html,
            chat_path_html,
            meta,
        })
    }

    fn message_result(
        &self,
        id: i64,
        rank: f64,
        phrases: Option<i64>,
        sql: &TargetSql,
        opts: &SearchOptions,
    ) -> Result<MessageResult> {
        let row = self.src.message_row(id)?;
        let mut meta = flatten_meta("messages", &parse_json(row.meta.as_deref()));
        insert_commit(&mut meta, &parse_json(row.blob_meta.as_deref()));
        insert_absent_strings(
            &mut meta,
            [
                ("messages_meta_file_path", row.file_path),
                ("messages_meta_git_repo", row.repo),
                // The language of the file the message is about (from its chat).
                ("messages_meta_language", row.language),
                (
                    "messages_meta_title",
                    Some(row.title).filter(|t| !t.is_empty()),
                ),
            ],
        );
        let body = row.body;
        let snippet = match &sql.fts {
            Some(f) => {
                let tokens = opts.snippet_tokens.map_or(SNIPPET_TOKENS_TEXT, i64::from);
                let held = phrases.and_then(|held| plan::held_phrases(&sql.phrases, held));
                let f = held.as_deref().unwrap_or(f);
                match self.snippet_in_budget(fts_messages::TABLE, 1, tokens, f, id)? {
                    Some(s) => s.map(|s| finish_snippet(&s, opts.highlight)),
                    None => Some(listing_snippet(&body, opts.highlight)),
                }
            }
            None => Some(listing_snippet(&body, opts.highlight)),
        };
        let chat_path_html = html_of(row.chat_path.as_deref(), opts);
        Ok(MessageResult {
            source_type: SOURCE_MESSAGE.into(),
            fts_rank: rank,
            result_chat_id: row.chat_id,
            chat_path: row.chat_path,
            messages_id: id,
            messages_chat_id: row.chat_id,
            messages_type: row.message_type,
            messages_role: row.role,
            messages_content: opts.include_content.then_some(body),
            messages_content_snippet: snippet,
            messages_branch_name: row.branch_name,
            messages_created_at: row.created_at,
            messages_updated_at: row.updated_at,
            messages_title_html: html_of(
                meta.get("messages_meta_title").and_then(Value::as_str),
                opts,
            ),
            chat_path_html,
            meta,
        })
    }

    fn code_result(
        &self,
        id: i64,
        rank: f64,
        sql: &TargetSql,
        opts: &SearchOptions,
    ) -> Result<CodeBlockResult> {
        let row = self.src.code_row(id)?;
        let header = row.header.as_deref().map(|h| parse_json(Some(h)));
        let mut meta = header
            .as_ref()
            .map(|h| flatten_meta("code_blocks", h))
            .unwrap_or_default();
        insert_absent_strings(
            &mut meta,
            [
                ("code_blocks_meta_file_path", row.file_path),
                ("code_blocks_meta_git_repo", row.repo),
            ],
        );
        let content = row.content;
        let snippet = match &sql.fts {
            Some(f) => {
                match self.snippet_in_budget(
                    fts_code_blocks::TABLE,
                    0,
                    SNIPPET_TOKENS_CODE,
                    f,
                    id,
                )? {
                    Some(s) => s.map(|s| finish_snippet(&s, opts.highlight)),
                    None => Some(listing_snippet(&content, opts.highlight)),
                }
            }
            None => Some(listing_snippet(&content, opts.highlight)),
        };
        let code_blocks_component_html = html_of(row.component.as_deref(), opts);
        let chat_path_html = html_of(row.chat_path.as_deref(), opts);
        Ok(CodeBlockResult {
            source_type: SOURCE_CODE_BLOCK.into(),
            fts_rank: rank,
            result_chat_id: row.chat_id,
            chat_path: row.chat_path,
            code_blocks_uuid: row.uuid,
            code_blocks_message_id: row.message_id,
            code_blocks_content: opts.include_content.then_some(content),
            code_blocks_content_snippet: snippet,
            code_blocks_component: row.component,
            code_blocks_parent_uuid: row.parent_uuid,
            code_blocks_major_version: row.major,
            code_blocks_minor_version: row.minor,
            code_blocks_patch_version: row.patch,
            code_blocks_header: header,
            code_blocks_created_at: row.created_at,
            code_blocks_size: row.size,
            code_blocks_branch_name: row.branch_name,
            code_blocks_language: row.language,
            code_blocks_component_html,
            chat_path_html,
            meta,
        })
    }

    fn criteria(
        &self,
        text: &str,
        p: &Plan,
        opts: &SearchOptions,
        fallback: Option<Value>,
    ) -> Value {
        let skipped: Map<String, Value> = p
            .target_plans
            .iter()
            .filter_map(|t| {
                t.skipped
                    .clone()
                    .map(|s| (t.target.name().to_string(), Value::String(s)))
            })
            .collect();
        let mut c = json!({
            "query": text,
            "expression": p.effective_expr,
            "matchMode": p.match_mode,
            "targets": p.targets.iter().map(|t| t.name()).collect::<Vec<_>>(),
            "scope": p.scope.name(),
            "currentChatId": opts.current_chat_id,
            "profile": p.profile.name,
            "filters": p.filters,
            "sort": p.sort,
            "options": {
                "caseSensitive": p.query.case_sensitive,
                "highlight": opts.highlight,
                "mode": opts.mode,
                "page": p.page,
                "perPage": p.per_page,
            },
            "engine": "gitsense-search",
            "engineVersion": env!("CARGO_PKG_VERSION"),
            "indexRevision": self.info.revision,
            "aiAssistant": false,
            "warnings": p.warnings,
        });
        if let Some(f) = fallback {
            c["fallback"] = f;
        }
        if p.query.regex {
            c["options"]["regex"] = Value::Bool(true);
        }
        if !p.query.meta_filters.is_empty() {
            c["metaFilters"] = json!(p.query.meta_filters);
        }
        if !p.query.git_nav.is_empty() {
            c["gitNav"] = json!(p.query.git_nav);
        }
        if !skipped.is_empty() {
            c["skippedTargets"] = Value::Object(skipped);
        }
        c
    }
}

/// `text` escaped for HTML, when the caller asked for HTML highlighting
/// (see [`crate::results`] for which fields are text and which HTML).
fn html_of(text: Option<&str>, opts: &SearchOptions) -> Option<String> {
    (opts.highlight == Highlight::Html)
        .then(|| text.map(escape_html))
        .flatten()
}

/// The snippet of one row of FTS table `table` (binds: column, marks,
/// tokens, expression, rowid).
fn snippet_sql(table: &str) -> String {
    format!("SELECT snippet({table}, ?1, ?2, ?3, '...', ?4) FROM {table} WHERE {table} MATCH ?5 AND rowid = ?6")
}

/// A page of a ranked target's ids with their rank, and the number of
/// results: the rows the ranking scored meanwhile (see
/// [`crate::index::rank::Tally`]), or for a search judged per page the
/// sections it keeps. `conn`'s ranking functions are registered with
/// `tally` ([`index::rank::register`]). The browser's warm-up runs it
/// too, to fetch the rows of the page a search will return.
pub fn ranked_page(
    conn: &Connection,
    tally: &index::rank::Tally,
    sql: &TargetSql,
    limit: u64,
    offset: u64,
) -> Result<(Vec<Ranked>, u64)> {
    tally.begin(&sql.phrases, &sql.phrase_weights);
    let ids = match &sql.page_terms {
        Some(terms) => rarest_term_pages(conn, sql)
            .and_then(|pages| {
                if let Some(pages) = pages {
                    tally.score_only_pages(pages);
                }
                page_sections(conn, tally, sql)
            })
            .map(|sections| {
                let (kept, total) = plan::keep_by_page(sections, terms, limit, offset);
                let page = kept.into_iter().map(|s| Ranked {
                    id: s.id,
                    rank: s.rank,
                    phrases: Some(s.phrases),
                });
                (page.collect(), Some(total))
            }),
        None => page_ids(conn, sql, limit, offset).map(|ids| (ids, None)),
    };
    tally.end();
    let (ids, total) = ids?;
    Ok((ids, total.unwrap_or_else(|| tally.rows())))
}

fn page_ids(conn: &Connection, sql: &TargetSql, limit: u64, offset: u64) -> Result<Vec<Ranked>> {
    let params = sql.page_params(limit, offset);
    let mut s = conn.prepare_cached(&sql.page_sql).map_err(fts_error)?;
    let rows = s
        .query_map(params_from_iter(params.iter()), |r| {
            Ok(Ranked {
                id: r.get(0)?,
                rank: r.get(1)?,
                phrases: None,
            })
        })
        .map_err(fts_error)?;
    rows.collect::<std::result::Result<Vec<_>, _>>()
        .map_err(fts_error)
}

/// Sections [`rarest_term_pages`] reads of each term at most: a term held
/// by more is too common to narrow the pages much.
pub(crate) const TERM_PROBE_ROWS: i64 = 256;

/// For a plan judged per page, the pages of the sections holding its
/// rarest term, when some term is held by at most [`TERM_PROBE_ROWS`]
/// sections. A page holding every term is one of them, so only their
/// sections need scoring: a query of common words and one rare word
/// otherwise scores every section holding any of them. The sections a
/// probe reads are among those the search reads next (for a lazily read
/// index: no page of its own).
fn rarest_term_pages(
    conn: &Connection,
    sql: &TargetSql,
) -> Result<Option<std::collections::HashSet<i64>>> {
    let mut rarest: Option<Vec<i64>> = None;
    for fts in &sql.page_term_fts {
        let mut s = conn
            .prepare_cached(plan::TERM_PAGES_SQL)
            .map_err(fts_error)?;
        let pages = s
            .query_map(params![fts, TERM_PROBE_ROWS + 1], |r| r.get::<_, i64>(0))
            .and_then(|rows| rows.collect::<std::result::Result<Vec<_>, _>>())
            .map_err(fts_error)?;
        let held_by = pages.len();
        if held_by as i64 <= TERM_PROBE_ROWS && rarest.as_ref().is_none_or(|r| held_by < r.len()) {
            rarest = Some(pages);
        }
    }
    Ok(rarest.map(|pages| pages.into_iter().collect()))
}

/// Every section a plan judged per page matches, unordered: its
/// statement's ranking function hands them over through the tally.
fn page_sections(
    conn: &Connection,
    tally: &index::rank::Tally,
    sql: &TargetSql,
) -> Result<Vec<plan::PageSection>> {
    let params = sql.page_params(0, 0);
    let mut s = conn.prepare_cached(&sql.page_sql).map_err(fts_error)?;
    let mut rows = s
        .query(params_from_iter(params.iter()))
        .map_err(fts_error)?;
    while rows.next().map_err(fts_error)?.is_some() {}
    Ok(tally.take_sections())
}

/// Prepares (into the connection's statement cache) the statements a
/// search with plan `p` runs, without running them: preparing reads only
/// the schema, so the browser's lazy mode does it while the pages the
/// search needs are on the way, and the search then starts on compiled
/// statements (and code already run once).
pub fn prepare_statements(conn: &Connection, p: &Plan) {
    for tp in &p.target_plans {
        let Some(sql) = &tp.sql else { continue };
        let (row, fts) = match tp.target {
            Target::Chats => (ChatRow::SQL, fts_chats::TABLE),
            Target::Messages => (MessageRow::SQL, fts_messages::TABLE),
            Target::CodeBlocks => (CodeRow::SQL, fts_code_blocks::TABLE),
        };
        // A statement that does not prepare fails the same way in the
        // search, which reports it.
        if !sql.counted_by_rank {
            let _ = conn.prepare_cached(&sql.count_sql);
        }
        let _ = conn.prepare_cached(&sql.page_sql);
        if !sql.page_term_fts.is_empty() {
            let _ = conn.prepare_cached(plan::TERM_PAGES_SQL);
        }
        let _ = conn.prepare_cached(row);
        if sql.fts.is_some() {
            let _ = conn.prepare_cached(&snippet_sql(fts));
        }
    }
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

fn insert_absent(m: &mut Map<String, Value>, key: &str, v: Option<Value>) {
    if let Some(v) = v {
        m.entry(key.to_string()).or_insert(v);
    }
}

/// The row's own columns as meta keys, in order, each only where the
/// item's meta does not already hold that key.
fn insert_absent_strings<const N: usize>(
    m: &mut Map<String, Value>,
    fields: [(&str, Option<String>); N],
) {
    for (key, v) in fields {
        insert_absent(m, key, v.map(Value::String));
    }
}

fn parse_json(s: Option<&str>) -> Value {
    s.and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or(Value::Null)
}

/// Maps a failure of a search statement: FTS5 syntax errors cannot come
/// from user text (it is always quoted), so any error here is internal.
fn fts_error(e: rusqlite::Error) -> Error {
    Error::db("running search", e)
}

/// Replaces the internal match markers according to the highlight mode.
fn finish_snippet(s: &str, mode: Highlight) -> String {
    match mode {
        Highlight::Html => escape_html(s)
            .replace(MARK_OPEN, "<mark>")
            .replace(MARK_CLOSE, "</mark>"),
        Highlight::Raw => s.replace(MARK_OPEN, "<GSC>").replace(MARK_CLOSE, "</GSC>"),
        Highlight::None => s.replace(
            [
                MARK_OPEN.chars().next().unwrap(),
                MARK_CLOSE.chars().next().unwrap(),
            ],
            "",
        ),
    }
}

/// The last commit that changed a git file (its chat's `meta.commit`), as
/// `messages_meta_commit_{hash,author,date,message}` on each of the file's
/// messages, so a result can say which version of the file it shows.
fn insert_commit(meta: &mut Map<String, Value>, chat_meta: &Value) {
    let Some(c) = chat_meta.get("commit").filter(|c| c.is_object()) else {
        return;
    };
    let text = |k: &str| {
        c.get(k)
            .and_then(Value::as_str)
            .map(|s| Value::String(s.to_string()))
    };
    insert_absent(meta, "messages_meta_commit_hash", text("hash"));
    insert_absent(meta, "messages_meta_commit_author", text("author"));
    insert_absent(
        meta,
        "messages_meta_commit_date",
        c.get("timestamp")
            .and_then(Value::as_i64)
            .map(|t| Value::String(crate::util::iso8601_utc(t))),
    );
    insert_absent(meta, "messages_meta_commit_message", text("message"));
}

/// First characters of a text, for results of searches without keywords.
fn listing_snippet(s: &str, mode: Highlight) -> String {
    let mut out: String = s.chars().take(LISTING_SNIPPET_CHARS).collect();
    if out.len() < s.len() {
        out.push_str("...");
    }
    match mode {
        Highlight::Html => escape_html(&out),
        _ => out,
    }
}

/// A short fingerprint of the query a cursor continues, so a cursor handed
/// to another query is refused instead of paging through the wrong results.
fn query_fingerprint(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .take(4)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `v2:<corpus revision>:<query fingerprint>:<page>:<per page>`, hex-encoded
/// (opaque to callers).
fn encode_cursor(revision: &str, text: &str, page: u64, per_page: u64) -> String {
    let raw = format!(
        "v2:{revision}:{}:{page}:{per_page}",
        query_fingerprint(text)
    );
    raw.bytes().map(|b| format!("{b:02x}")).collect()
}

fn decode_cursor(c: &str, revision: &str, text: &str) -> Result<(u64, u64)> {
    let bad = || Error::new("cursor.invalid", "the cursor is not one this engine issued");
    if c.len() % 2 != 0 || c.len() > 512 {
        return Err(bad());
    }
    let bytes: Option<Vec<u8>> = (0..c.len())
        .step_by(2)
        .map(|i| c.get(i..i + 2).and_then(|h| u8::from_str_radix(h, 16).ok()))
        .collect();
    let raw = String::from_utf8(bytes.ok_or_else(bad)?).map_err(|_| bad())?;
    let parts: Vec<&str> = raw.split(':').collect();
    if parts.len() != 5 || parts[0] != "v2" {
        return Err(bad());
    }
    if parts[1] != revision {
        return Err(Error::new(
            "stale_cursor",
            "the cursor belongs to another revision of the index; run the search again",
        ));
    }
    if parts[2] != query_fingerprint(text) {
        return Err(Error::new(
            "cursor.query_mismatch",
            "the cursor continues a different query; pass the query it came from",
        ));
    }
    let page = parts[3].parse::<u64>().map_err(|_| bad())?;
    let per_page = parts[4].parse::<u64>().map_err(|_| bad())?;
    if page == 0 || per_page == 0 {
        return Err(bad());
    }
    Ok((page, per_page))
}
