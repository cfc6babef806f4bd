//! A search without SQLite: the results object [`crate::Engine`] gives,
//! byte for byte, computed from the index file's own structures, for the
//! searches whose targets the planner marks ([`TargetSql::reader`]: nothing
//! asked of SQL but the `MATCH` and the ranking), typo correction and the
//! any-word reading of a query nothing matches included.
//!
//! In: an index file as a [`PageSource`] and a query. Out: the results
//! object ([`Reader::search`]), or, over a source that collects the pages
//! it lacks instead of reading them, one attempt at it
//! ([`Reader::attempt`]: the browser's lazy mode). The file is read
//! through [`SqlFile`] ([`crate::index::sqlfile`]), its full-text index
//! through [`Fts5File`] and [`Expr`], ranks through [`Scorer`] (the same
//! arithmetic as the SQL ranking functions), snippets through
//! [`snippet`], the rows through the same executor as SQLite's
//! (`search::Source`).
//!
//! A search with filters, sorts or facets, or an index the reader cannot
//! read (several full-text segments), is `reader.unsupported`: the caller
//! asks SQLite.

use crate::error::{Error, Result};
use crate::facets;
use crate::index::fts5expr::{postings_of, Expr, Loaded, Matches};
use crate::index::fts5file::{Fts5File, Posting};
use crate::index::pagevfs::{PageSource, PAGE_MISSING};
use crate::index::rank::Scorer;
use crate::index::records::{self, Chunk, Col, CODE_FIELDS, MESSAGE_FIELDS};
use crate::index::schema::{
    self, chat_details, chats, code_blocks, code_text, index_meta, message_text, messages,
    FtsTable, Table,
};
use crate::index::schema::{
    code_rank, fts_chats, fts_code_blocks, fts_messages, message_names, message_rank, rank_stats,
    typo_terms,
};
use crate::index::snippet::{snippet, SnippetArgs};
use crate::index::sqlfile::{SqlFile, Value};
use crate::index::IndexInfo;
use crate::index::EXACT_NAME_BOOST;
use crate::langs::Demoted;
use crate::langs::PageLanguages;
use crate::plan::{keep_by_page, PageSection, ReaderRank, TargetSql};
use crate::plan::{Plan, SearchOptions};
use crate::query::ast::Query;
use crate::results::SearchResults;
use crate::search::rows::{ChatRow, CodeRow, MessageRow};
use crate::search::{
    plan_for, system_clock, Budget, Clock, Exec, PlannedSearch, Ranked, Source, TERM_PROBE_ROWS,
};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::collections::HashSet;
use std::rc::Rc;
use std::sync::Arc;

fn unsupported(what: &str) -> Error {
    Error::new("reader.unsupported", format!("the reader cannot {what}"))
}

/// An index file read without SQLite (see the module docs).
///
/// ```
/// use gitsense_engine::reader::Reader;
/// use gitsense_engine::{Engine, SearchOptions};
/// # let dir = tempfile::tempdir()?;
/// # let path = gitsense_engine::index::write_example(&dir.path().join("chats.gsx"))?;
/// let engine = Engine::open(&path)?;
/// let reader = Reader::open(std::fs::read(&path)?)?;
/// let planned = engine.plan_search("retry", &SearchOptions::default())?;
/// for tp in &planned.plan().target_plans {
///     let Some(sql) = tp.sql.as_ref().filter(|s| s.reader.is_some()) else { continue };
///     let (page, total) = reader.ranked_page(sql, 10, 0)?;
///     assert!(page.len() as u64 <= total);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Reader<S> {
    file: SqlFile<S>,
    info: IndexInfo,
    page_languages: Option<PageLanguages>,
    clock: Clock,
    /// `rank_stats`: the average title and keywords lengths.
    averages: [f64; 2],
    demoted: Option<Arc<Demoted>>,
    /// Doclists read, by table, token and prefix, and expressions
    /// evaluated, by table and text: a search evaluates its expression to
    /// count, to rank and again for each snippet. Dropped after each
    /// search ([`Reader::search_planned`]).
    lists: RefCell<HashMap<TokenKey, Rc<Vec<Posting>>>>,
    matches: RefCell<HashMap<(&'static str, String), Rc<Evaluated>>>,
    misses: Misses,
}

/// Reads that failed only for a page not at hand, during
/// [`Reader::attempt`]'s stages: each is taken as finding nothing, so
/// that the stage goes on and its source collects every page it lacks;
/// the stage's result is then thrown away.
#[derive(Default)]
struct Misses {
    tolerant: Cell<bool>,
    missed: Cell<bool>,
}

impl Misses {
    /// `r`, or `absent()` when `r` failed for a page not at hand while
    /// misses are tolerated.
    fn absorb<T>(&self, r: Result<T>, absent: impl FnOnce() -> T) -> Result<T> {
        match r {
            Err(e) if e.code == PAGE_MISSING && self.tolerant.get() => {
                self.missed.set(true);
                Ok(absent())
            }
            r => r,
        }
    }
}

/// A token of an FTS table, looked up whole or as a prefix.
type TokenKey = (&'static str, Vec<u8>, bool);

/// An expression parsed, its doclists, and what it matched.
type Evaluated = (Expr, Loaded, Matches);

/// The ranking records of one chunk, decoded once for the rows of it
/// that come in a row.
struct Records<'a, S> {
    file: &'a SqlFile<S>,
    misses: &'a Misses,
    table: &'static str,
    cols: &'static [Col],
    last: RefCell<Option<Chunk>>,
}

impl<S: PageSource> Records<'_, S> {
    fn of(&self, id: i64) -> Result<Vec<i64>> {
        let chunk = records::chunk_of(id);
        let mut last = self.last.borrow_mut();
        if last.as_ref().map(|c| c.chunk) != Some(chunk) {
            let Some(row) = self
                .misses
                .absorb(self.file.row(self.table, chunk).map(Some), || None)?
            else {
                return Ok(vec![0; self.cols.len()]);
            };
            let blob = row
                .as_ref()
                .and_then(|r| r.get(1))
                .and_then(Value::as_bytes);
            *last = blob.and_then(|b| records::decode(chunk, b, self.cols));
        }
        last.as_ref()
            .and_then(|c| c.get(id))
            .map(<[i64]>::to_vec)
            .ok_or_else(|| {
                Error::new(
                    "index.corrupt",
                    format!(
                        "the index file is damaged: no ranking record for row {id} of {}",
                        self.table
                    ),
                )
            })
    }
}

impl<S: PageSource> Reader<S> {
    /// Reads what every search needs: the schema, `index_meta` (the
    /// format version checked as [`crate::Engine`] checks it) and
    /// `rank_stats`.
    pub fn open(source: S) -> Result<Self> {
        let file = SqlFile::open(source)?;
        if !file.has(index_meta::TABLE) {
            return Err(Error::new(
                "index.not_an_index",
                "the file is an SQLite database but not a gitsense-search index (no index_meta table)",
            ));
        }
        let mut meta = HashMap::new();
        file.scan_tree(file.root(index_meta::TABLE)?, &mut |_, rec| {
            let row = crate::index::sqlfile::decode_record(rec)?;
            if let (Some(k), Some(v)) = (
                row.first().and_then(Value::as_str),
                row.get(1).and_then(Value::as_str),
            ) {
                meta.insert(k.to_string(), v.to_string());
            }
            Ok(true)
        })?;
        let info =
            crate::index::info_from(&meta, file.page_size() as u64, u64::from(file.page_count()))?;
        crate::index::check_version(&info)?;
        let page_languages = meta
            .get(crate::langs::META_KEY)
            .and_then(|t| PageLanguages::decode(t));
        let mut averages = [0.0; 2];
        if file.has(rank_stats::TABLE) {
            file.scan_tree(file.root(rank_stats::TABLE)?, &mut |_, rec| {
                let row = crate::index::sqlfile::decode_record(rec)?;
                for (slot, v) in averages.iter_mut().zip(&row) {
                    *slot = match v {
                        Value::Real(r) => *r,
                        Value::Int(i) => *i as f64,
                        _ => 0.0,
                    };
                }
                Ok(false)
            })?;
        }
        Ok(Reader {
            file,
            info,
            page_languages,
            clock: system_clock,
            averages,
            demoted: None,
            lists: RefCell::default(),
            matches: RefCell::default(),
            misses: Misses::default(),
        })
    }

    /// What the index says about itself.
    pub fn info(&self) -> &IndexInfo {
        &self.info
    }

    /// Replaces the clock `trace` timings use (see
    /// [`crate::Engine::set_clock`]).
    pub fn set_clock(&mut self, clock: Clock) {
        self.clock = clock;
    }

    /// Parses and plans a query (as [`crate::Engine::plan_search`]).
    pub fn plan_search(&self, text: &str, opts: &SearchOptions) -> Result<PlannedSearch> {
        plan_for(
            &self.info,
            self.page_languages.as_ref(),
            self.clock,
            text,
            opts,
        )
    }

    /// Runs a query and returns the results object [`crate::Engine::search`]
    /// returns, byte for byte, or `reader.unsupported` when the search
    /// needs what only SQLite does (filters, sorts, facets, ...). No time
    /// budget bounds it.
    pub fn search(&mut self, text: &str, opts: &SearchOptions) -> Result<SearchResults> {
        let planned = self.plan_search(text, opts)?;
        self.search_planned(planned)
    }

    /// Runs a query [`Reader::plan_search`] planned.
    pub fn search_planned(&mut self, planned: PlannedSearch) -> Result<SearchResults> {
        self.demoted = planned.demoted();
        let budget = Budget::unbounded(self.clock);
        let exec = Exec {
            src: &*self,
            info: &self.info,
            clock: self.clock,
            budget: &budget,
        };
        let out = exec.search_in_transaction(planned);
        self.end_search();
        out
    }

    /// Every target's doclists (and those of a search judged per page's
    /// terms); whether none missed a page.
    fn doclists(&self, p: &Plan) -> Result<bool> {
        for sql in p.target_plans.iter().filter_map(|tp| tp.sql.as_ref()) {
            let (kind, expr) = reader_target(sql, "rank")?;
            self.evaluate(fts_table(kind), expr)?;
            for term in &sql.page_term_fts {
                self.evaluate(fts_messages::TABLE, term)?;
            }
        }
        Ok(!self.misses.missed.get())
    }

    /// Every target's page of `p` with its number of results, as the
    /// search counts and returns them, after the doclists; empty when the
    /// doclists missed a page (the caller looks at the misses).
    fn pages_of(&self, p: &Plan) -> Result<Vec<(ReaderRank, Vec<Ranked>, u64)>> {
        if !self.doclists(p)? {
            return Ok(Vec::new());
        }
        let offset = p.page.saturating_sub(1).saturating_mul(p.per_page);
        let mut pages = Vec::new();
        for sql in p.target_plans.iter().filter_map(|tp| tp.sql.as_ref()) {
            let (kind, _) = reader_target(sql, "rank")?;
            let (page, total) = self.ranked_page(sql, p.per_page, offset)?;
            pages.push((kind, page, total));
        }
        Ok(pages)
    }

    /// Forgets what a search read, but the pages (kept between the
    /// attempts at one search).
    fn forget_search(&mut self) {
        self.demoted = None;
        self.lists.borrow_mut().clear();
        self.matches.borrow_mut().clear();
    }

    fn end_search(&mut self) {
        self.forget_search();
        self.file.forget_pages();
    }

    /// One attempt at a search over a source that declines the pages it
    /// does not have ([`PAGE_MISSING`]) and collects them: the results,
    /// or `None` when pages were missing; fetch what the source collected
    /// and attempt again. The search runs in stages, each reading what
    /// the one before found, and an attempt ends at the first stage that
    /// missed pages, having asked for all of that stage's pages: every
    /// target's doclists, then their ranking records, then the rows of
    /// the page returned (with their chats and messages), then whatever
    /// else the search reads; when nothing matches every word, the
    /// `typo_terms` lookups of typo correction and the doclists of the
    /// corrected (or any-word) reading come between. So a search needs
    /// about one attempt per b-tree level of each stage, however many rows
    /// it reads.
    ///
    /// `reader.unsupported` before reading anything for a search the
    /// reader cannot run (filters, sorts, a query without words).
    pub fn attempt(&mut self, planned: &PlannedSearch) -> Result<Option<SearchResults>> {
        let p = planned.plan();
        for tp in &p.target_plans {
            if let Some(sql) = &tp.sql {
                reader_target(sql, "rank")?;
            }
        }
        self.demoted = planned.demoted();
        self.misses.missed.set(false);
        self.misses.tolerant.set(true);
        let staged = self.stages(planned);
        self.misses.tolerant.set(false);
        let out = match staged {
            Ok(true) => match self.search_planned(planned.clone()) {
                Err(e) if e.code == PAGE_MISSING => return Ok(None),
                r => r.map(Some),
            },
            Ok(false) => {
                self.forget_search();
                return Ok(None);
            }
            Err(e) if e.code == PAGE_MISSING => return Ok(None),
            Err(e) => Err(e),
        };
        self.end_search();
        out
    }

    /// [`Reader::attempt`]'s stages before the search itself; whether
    /// none missed a page.
    fn stages(&self, planned: &PlannedSearch) -> Result<bool> {
        let missed = || self.misses.missed.get();
        let nothing = |pages: &[(ReaderRank, Vec<Ranked>, u64)]| pages.iter().all(|p| p.2 == 0);
        let mut pages = self.pages_of(planned.plan())?;
        if missed() {
            return Ok(false);
        }
        // As the search reads a query nothing matches with every word: its
        // typos corrected, then (that matching nothing either) any word.
        if nothing(&pages) {
            let fixed = planned.corrected_with(self)?;
            if missed() {
                return Ok(false);
            }
            let now = match fixed {
                Some(fixed) => {
                    pages = self.pages_of(fixed.plan())?;
                    if missed() {
                        return Ok(false);
                    }
                    fixed
                }
                None => planned.clone(),
            };
            if let Some(any) = now.any_term().filter(|_| nothing(&pages)) {
                pages = self.pages_of(any.plan())?;
                if missed() {
                    return Ok(false);
                }
            }
        }
        // The rows returned, each table's row on its own (a row missing
        // its first table's page still asks for the others'), with the
        // chats (and messages) their ranking records name.
        let touch = |table: &str, id: i64| {
            self.misses
                .absorb(self.file.row(table, id).map(drop), || ())
        };
        for (kind, page, _) in pages {
            for r in page {
                let (own, chat, message): (&[&str], _, _) = match kind {
                    ReaderRank::Chats => (&[chats::TABLE, chat_details::TABLE], None, None),
                    ReaderRank::Messages | ReaderRank::Sections => {
                        let rec = self
                            .records(message_rank::TABLE, &MESSAGE_FIELDS)
                            .of(r.id)?;
                        (&[messages::TABLE, message_text::TABLE], Some(rec[0]), None)
                    }
                    ReaderRank::CodeBlocks => {
                        let rec = self.records(code_rank::TABLE, &CODE_FIELDS).of(r.id)?;
                        (
                            &[code_blocks::TABLE, code_text::TABLE],
                            Some(rec[1]),
                            Some(rec[0]),
                        )
                    }
                };
                for table in own {
                    touch(table, r.id)?;
                }
                if let Some(chat) = chat {
                    touch(chats::TABLE, chat)?;
                    touch(chat_details::TABLE, chat)?;
                }
                if let Some(message) = message {
                    touch(messages::TABLE, message)?;
                }
            }
        }
        Ok(!missed())
    }

    /// The file, for reading its rows.
    pub fn file(&self) -> &SqlFile<S> {
        &self.file
    }

    /// Messages on these pages rank below all others (as
    /// [`crate::index::rank::Tally::demote`]).
    pub fn demote(&mut self, pages: Option<Arc<Demoted>>) {
        self.demoted = pages;
    }

    /// A page of a ranked target's ids with their rank, and the number of
    /// results: `search::ranked_page`'s answer for `sql` (which the
    /// planner marked, [`TargetSql::reader`]).
    pub fn ranked_page(
        &self,
        sql: &TargetSql,
        limit: u64,
        offset: u64,
    ) -> Result<(Vec<Ranked>, u64)> {
        let (kind, expr_text) = reader_target(sql, "rank")?;
        let table = fts_table(kind);
        let fts = Fts5File::open(&self.file, table)?;
        let evaluated = self.evaluate(table, expr_text)?;
        let (expr, _, found) = &*evaluated;
        let scorer = self.scorer(&fts, expr, found, sql)?;
        match kind {
            ReaderRank::Messages => self.messages(found, &scorer, sql, limit, offset),
            ReaderRank::CodeBlocks => self.code_blocks(found, &scorer, limit, offset),
            ReaderRank::Sections => self.sections(found, &scorer, sql, limit, offset),
            ReaderRank::Chats => self.chats(found, &scorer, limit, offset),
        }
    }

    /// `expr` on `table`: parsed, its doclists read and evaluated, once
    /// per search.
    fn evaluate(&self, table: &'static str, expr: &str) -> Result<Rc<Evaluated>> {
        if let Some(m) = self.matches.borrow().get(&(table, expr.to_string())) {
            return Ok(Rc::clone(m));
        }
        let fts = Fts5File::open(&self.file, table)?;
        let parsed = Expr::parse(expr, table)?;
        let earlier = self.misses.missed.replace(false);
        let loaded = parsed.load_with(&mut |token, prefix| {
            let key = (table, token.to_vec(), prefix);
            if let Some(l) = self.lists.borrow().get(&key) {
                return Ok(Rc::clone(l));
            }
            let read = postings_of(&fts, token, prefix).map(Some);
            let Some(l) = self.misses.absorb(read, || None)? else {
                // Not all of it at hand: not kept.
                return Ok(Rc::new(Vec::new()));
            };
            let l = Rc::new(l);
            self.lists.borrow_mut().insert(key, Rc::clone(&l));
            Ok(l)
        })?;
        let matches = loaded.matches();
        let out = Rc::new((parsed, loaded, matches));
        if !self.misses.missed.get() {
            self.matches
                .borrow_mut()
                .insert((table, expr.to_string()), Rc::clone(&out));
        }
        self.misses.missed.set(earlier || self.misses.missed.get());
        Ok(out)
    }

    fn scorer(
        &self,
        fts: &Fts5File<'_, S>,
        expr: &Expr,
        found: &Matches,
        sql: &TargetSql,
    ) -> Result<Scorer> {
        let (rows, per_col) = fts.totals()?;
        let n = expr.phrases().len();
        let counts: Vec<i64> = (0..n).map(|i| found.phrase_rows(i) as i64).collect();
        // The SQL path weighs phrases only when the planner named as many
        // as FTS5 counts; FTS5's own bm25() never.
        let weights: &[f64] = if sql.phrases.len() == n && sql.reader != Some(ReaderRank::Chats) {
            &sql.phrase_weights
        } else {
            &[]
        };
        Ok(Scorer::new(
            rows,
            per_col.iter().sum(),
            &counts,
            weights,
            self.demoted.clone(),
        ))
    }

    fn records(&self, table: &'static str, cols: &'static [Col]) -> Records<'_, S> {
        Records {
            file: &self.file,
            misses: &self.misses,
            table,
            cols,
            last: RefCell::new(None),
        }
    }

    /// The exact-name boost of a message (the `CASE` of the SQL rank).
    fn name_factor(&self, key: Option<i64>, id: i64) -> Result<f64> {
        let Some(key) = key else { return Ok(1.0) };
        let found = self.misses.absorb(
            self.file
                .find(message_names::TABLE, &[Value::Int(key), Value::Int(id)]),
            || None,
        )?;
        Ok(if found.is_some() {
            EXACT_NAME_BOOST
        } else {
            1.0
        })
    }

    /// Every matched row ranked by `rank(id)`, then the page of them.
    fn ranked_rows(
        found: &Matches,
        limit: u64,
        offset: u64,
        mut rank: impl FnMut(i64) -> Result<f64>,
    ) -> Result<(Vec<Ranked>, u64)> {
        let mut ranked = Vec::with_capacity(found.rows().len());
        for &id in found.rows() {
            ranked.push(Ranked {
                id,
                rank: rank(id)?,
                phrases: None,
            });
        }
        Ok(page_of(ranked, limit, offset))
    }

    fn messages(
        &self,
        found: &Matches,
        scorer: &Scorer,
        sql: &TargetSql,
        limit: u64,
        offset: u64,
    ) -> Result<(Vec<Ranked>, u64)> {
        let records = self.records(message_rank::TABLE, &MESSAGE_FIELDS);
        Self::ranked_rows(found, limit, offset, |id| {
            let r = records.of(id)?;
            let rank = scorer.message(r[0], [r[1], r[2], r[3]], self.averages, found.instances(id));
            Ok(match sql.name_key {
                Some(_) => rank * self.name_factor(sql.name_key, id)?,
                None => rank,
            })
        })
    }

    fn code_blocks(
        &self,
        found: &Matches,
        scorer: &Scorer,
        limit: u64,
        offset: u64,
    ) -> Result<(Vec<Ranked>, u64)> {
        let records = self.records(code_rank::TABLE, &CODE_FIELDS);
        Self::ranked_rows(found, limit, offset, |id| {
            Ok(scorer.code_block(records.of(id)?[2], found.instances(id)))
        })
    }

    /// `bm25(fts_chats)`: every hit weighs 1, the row's length from FTS5's
    /// `_docsize`.
    fn chats(
        &self,
        found: &Matches,
        scorer: &Scorer,
        limit: u64,
        offset: u64,
    ) -> Result<(Vec<Ranked>, u64)> {
        let docsize = format!("{}_docsize", fts_chats::TABLE);
        Self::ranked_rows(found, limit, offset, |id| {
            let row = self.misses.absorb(self.file.row(&docsize, id), || None)?;
            let sizes = row
                .as_ref()
                .and_then(|r| r.get(1))
                .and_then(Value::as_bytes);
            let tokens = sizes.map_or(0, |b| {
                let (mut at, mut sum) = (0, 0i64);
                while let Some((v, n)) = crate::index::btree::varint(b, at) {
                    sum += v as i64;
                    at += n;
                }
                sum
            });
            Ok(scorer.bm25(tokens, found.instances(id)))
        })
    }

    /// `search::ranked_page` for a search judged per page: the pages of
    /// the rarest term's sections, every section of those pages scored,
    /// then [`keep_by_page`].
    fn sections(
        &self,
        found: &Matches,
        scorer: &Scorer,
        sql: &TargetSql,
        limit: u64,
        offset: u64,
    ) -> Result<(Vec<Ranked>, u64)> {
        let terms = sql
            .page_terms
            .as_deref()
            .ok_or_else(|| unsupported("judge sections without terms"))?;
        let records = self.records(message_rank::TABLE, &MESSAGE_FIELDS);
        // `rarest_term_pages`: each term's first sections, in rowid order.
        let mut rarest: Option<Vec<i64>> = None;
        for term in &sql.page_term_fts {
            let evaluated = self.evaluate(fts_messages::TABLE, term)?;
            let rows = &evaluated.2;
            let probe = usize::try_from(TERM_PROBE_ROWS).unwrap_or(usize::MAX);
            let mut pages = Vec::new();
            for &id in rows.rows().iter().take(probe + 1) {
                pages.push(records.of(id)?[0]);
            }
            if pages.len() <= probe && rarest.as_ref().is_none_or(|r| pages.len() < r.len()) {
                rarest = Some(pages);
            }
        }
        let only: Option<HashSet<i64>> = rarest.map(|p| p.into_iter().collect());
        let mut sections = Vec::new();
        for &id in found.rows() {
            let r = records.of(id)?;
            let page = r[0];
            if only.as_ref().is_some_and(|p| !p.contains(&page)) {
                continue;
            }
            let factor = self.name_factor(sql.name_key, id)?;
            let (rank, phrases) = scorer.section(
                page,
                [r[1], r[2], r[3]],
                self.averages,
                factor,
                found.instances(id),
            );
            sections.push(PageSection {
                id,
                rank,
                page,
                phrases,
            });
        }
        let (kept, total) = keep_by_page(sections, terms, limit, offset);
        let page = kept
            .into_iter()
            .map(|s| Ranked {
                id: s.id,
                rank: s.rank,
                phrases: Some(s.phrases),
            })
            .collect();
        Ok((page, total))
    }
}

/// `typo_terms` as the reader reads it. During [`Reader::attempt`]'s
/// stages a page not at hand is taken as holding nothing (and the table
/// as holding words), so that every lookup asks for its pages in the same
/// round.
struct Terms<'a, S>(&'a Reader<S>);

impl<S: PageSource> crate::typo::Terms for Terms<'_, S> {
    fn any(&self) -> Result<bool> {
        let file = &self.0.file;
        if !file.has(typo_terms::TABLE) {
            return Ok(false);
        }
        let mut found = false;
        let read = file.scan_tree(file.root(typo_terms::TABLE)?, &mut |_, _| {
            found = true;
            Ok(false)
        });
        self.0.misses.absorb(read.map(|_| found), || true)
    }

    fn has(&self, key: &str) -> Result<bool> {
        let found = self
            .0
            .file
            .find(typo_terms::TABLE, &[Value::Text(key.as_bytes().to_vec())]);
        self.0.misses.absorb(found.map(|f| f.is_some()), || false)
    }

    fn scan(&self, prefix: &str, limit: i64) -> Result<Vec<(String, i64)>> {
        let end = crate::typo::scan_end(prefix);
        let limit = usize::try_from(limit).unwrap_or(0);
        let mut out = Vec::new();
        let read = self.0.file.scan_from(
            typo_terms::TABLE,
            &[Value::Text(prefix.as_bytes().to_vec())],
            &[Value::Text(end.as_bytes().to_vec())],
            &mut |row| {
                let (Some(key), Some(rows)) = (row.first(), row.get(1).and_then(Value::as_i64))
                else {
                    return Err(Error::new(
                        "index.corrupt",
                        "the index file is damaged: a bad typo_terms row",
                    ));
                };
                let key = key.as_bytes().unwrap_or_default();
                if out.len() >= limit {
                    return Ok(false);
                }
                out.push((String::from_utf8_lossy(key).into_owned(), rows));
                Ok(true)
            },
        );
        match self.0.misses.absorb(read.map(Some), || None)? {
            Some(()) => Ok(out),
            None => Ok(Vec::new()),
        }
    }
}

/// How the planner marked a target for the reader, and its expression;
/// `reader.unsupported` for a target it did not mark (`doing`: "rank",
/// "count").
fn reader_target<'s>(sql: &'s TargetSql, doing: &str) -> Result<(ReaderRank, &'s str)> {
    let kind = sql
        .reader
        .ok_or_else(|| unsupported(&format!("{doing} a target with filters")))?;
    let expr = sql
        .fts
        .as_deref()
        .ok_or_else(|| unsupported(&format!("{doing} without words")))?;
    Ok((kind, expr))
}

/// The schema's description of one of the index's FTS tables.
fn fts_def(name: &str) -> Result<&'static FtsTable> {
    schema::FTS
        .iter()
        .find(|f| f.name == name)
        .ok_or_else(|| unsupported("read another table"))
}

/// The FTS table a ranking reads.
fn fts_table(kind: ReaderRank) -> &'static str {
    match kind {
        ReaderRank::Messages | ReaderRank::Sections => fts_messages::TABLE,
        ReaderRank::CodeBlocks => fts_code_blocks::TABLE,
        ReaderRank::Chats => fts_chats::TABLE,
    }
}

/// `ORDER BY rank, id LIMIT limit OFFSET offset` (SQLite compares REALs
/// numerically), and the number of rows.
fn page_of(mut ranked: Vec<Ranked>, limit: u64, offset: u64) -> (Vec<Ranked>, u64) {
    let total = ranked.len() as u64;
    ranked.sort_unstable_by(|a, b| {
        a.rank
            .partial_cmp(&b.rank)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.id.cmp(&b.id))
    });
    let start = usize::try_from(offset)
        .unwrap_or(usize::MAX)
        .min(ranked.len());
    let end = start
        .saturating_add(usize::try_from(limit).unwrap_or(usize::MAX))
        .min(ranked.len());
    (ranked.drain(start..end).collect(), total)
}

/// A row of one of the index's tables, its columns by name.
struct TableRow<'t> {
    id: i64,
    values: Vec<Value>,
    table: &'t Table,
}

impl TableRow<'_> {
    fn value(&self, name: &str) -> Result<Value> {
        let i = self
            .table
            .columns
            .iter()
            .position(|c| c.name == name)
            .ok_or_else(|| {
                unsupported(&format!("read the column {name} of {}", self.table.name))
            })?;
        // An INTEGER PRIMARY KEY is the rowid, stored as NULL; a column
        // added after the row was written is NULL.
        if self.table.columns[i]
            .decl
            .starts_with("INTEGER PRIMARY KEY")
        {
            return Ok(Value::Int(self.id));
        }
        Ok(self.values.get(i).cloned().unwrap_or(Value::Null))
    }

    /// A TEXT column, as rusqlite reads it into an `Option<String>`.
    fn text(&self, name: &str) -> Result<Option<String>> {
        match self.value(name)? {
            Value::Null => Ok(None),
            Value::Text(b) => String::from_utf8(b)
                .map(Some)
                .map_err(|_| unsupported("read text that is not UTF-8")),
            _ => Err(unsupported(&format!("read {name} as text"))),
        }
    }

    /// A TEXT NOT NULL column.
    fn string(&self, name: &str) -> Result<String> {
        self.text(name)?
            .ok_or_else(|| unsupported(&format!("read a NULL {name} as text")))
    }

    fn int(&self, name: &str) -> Result<Option<i64>> {
        match self.value(name)? {
            Value::Null => Ok(None),
            Value::Int(v) => Ok(Some(v)),
            _ => Err(unsupported(&format!("read {name} as an integer"))),
        }
    }
}

impl<S: PageSource> Reader<S> {
    /// Row `id` of `table` (as a join finds it: a missing row is an
    /// error, as `query_row` finding no row is).
    fn table_row<'t>(&self, table: &'t Table, id: i64) -> Result<TableRow<'t>> {
        let values = self.file.row(table.name, id)?.ok_or_else(|| {
            Error::new(
                "index.query_failed",
                format!("row {id} of {} is not in the index", table.name),
            )
        })?;
        Ok(TableRow { id, values, table })
    }

    /// The texts of an FTS table's columns for row `id`, from its content
    /// table.
    fn fts_texts(&self, fts: &str, id: i64) -> Result<Vec<Vec<u8>>> {
        let def = fts_def(fts)?;
        let table = schema::TABLES
            .iter()
            .find(|t| t.name == def.content)
            .ok_or_else(|| unsupported("read another table"))?;
        let columns = def.columns;
        let row = self.table_row(table, id)?;
        columns
            .iter()
            .map(|c| {
                Ok(match row.value(c)? {
                    Value::Text(b) | Value::Blob(b) => b,
                    Value::Null => Vec::new(),
                    _ => return Err(unsupported("snip a number")),
                })
            })
            .collect()
    }
}

impl<S: PageSource> Source for Reader<S> {
    fn count_rows(&self, sql: &TargetSql) -> Result<u64> {
        let (kind, expr) = reader_target(sql, "count")?;
        Ok(self.evaluate(fts_table(kind), expr)?.2.rows().len() as u64)
    }

    fn ranked_page(&self, sql: &TargetSql, limit: u64, offset: u64) -> Result<(Vec<Ranked>, u64)> {
        Reader::ranked_page(self, sql, limit, offset)
    }

    fn chat_row(&self, id: i64) -> Result<ChatRow> {
        let c = self.table_row(&chats::DEF, id)?;
        let d = self.table_row(&chat_details::DEF, id)?;
        Ok(ChatRow {
            uuid: d.text(chat_details::UUID)?,
            name: c.text(chats::NAME)?,
            chat_type: c.text(chats::TYPE)?,
            owner: d.text(chat_details::OWNER)?,
            modified_at: c.text(chats::MODIFIED_AT)?,
            num_messages: c.int(chats::NUM_MESSAGES)?,
            last_updated_at: c.text(chats::LAST_UPDATED_AT)?,
            chat_path: d.text(chat_details::CHAT_PATH)?,
            meta: d.text(chat_details::META)?,
            path: c.text(chats::PATH)?,
            repo: c.text(chats::REPO)?,
            language: c.text(chats::LANGUAGE)?,
        })
    }

    fn message_row(&self, id: i64) -> Result<MessageRow> {
        let m = self.table_row(&messages::DEF, id)?;
        let t = self.table_row(&message_text::DEF, id)?;
        let chat_id = m
            .int(messages::CHAT_ID)?
            .ok_or_else(|| unsupported("read a message without a chat"))?;
        let c = self.table_row(&chats::DEF, chat_id)?;
        let d = self.table_row(&chat_details::DEF, chat_id)?;
        let blob_meta = match c.text(chats::TYPE)?.as_deref() {
            Some("git-blob") => d.text(chat_details::META)?,
            _ => None,
        };
        Ok(MessageRow {
            chat_id,
            message_type: m.text(messages::TYPE)?,
            role: m.text(messages::ROLE)?,
            body: t.string(message_text::BODY)?,
            meta: t.text(message_text::META)?,
            chat_path: d.text(chat_details::CHAT_PATH)?,
            branch_name: c.text(chats::BRANCH_NAME)?,
            created_at: m.text(messages::CREATED_AT)?,
            updated_at: m.text(messages::UPDATED_AT)?,
            repo: c.text(chats::REPO)?,
            file_path: m.text(messages::FILE_PATH)?,
            title: t.string(message_text::TITLE)?,
            language: m.text(messages::LANGUAGE)?,
            blob_meta,
        })
    }

    fn code_row(&self, id: i64) -> Result<CodeRow> {
        let b = self.table_row(&code_blocks::DEF, id)?;
        let x = self.table_row(&code_text::DEF, id)?;
        let message_id = b
            .int(code_blocks::MESSAGE_ID)?
            .ok_or_else(|| unsupported("read a code block without a message"))?;
        let chat_id = b
            .int(code_blocks::CHAT_ID)?
            .ok_or_else(|| unsupported("read a code block without a chat"))?;
        let m = self.table_row(&messages::DEF, message_id)?;
        let c = self.table_row(&chats::DEF, chat_id)?;
        let d = self.table_row(&chat_details::DEF, chat_id)?;
        Ok(CodeRow {
            uuid: b.string(code_blocks::UUID)?,
            message_id,
            chat_id,
            content: x.string(code_text::CONTENT)?,
            component: b.text(code_blocks::COMPONENT)?,
            parent_uuid: x.text(code_text::PARENT_UUID)?,
            major: x.int(code_text::MAJOR)?,
            minor: x.int(code_text::MINOR)?,
            patch: x.int(code_text::PATCH)?,
            header: x.text(code_text::HEADER)?,
            created_at: b.text(code_blocks::CREATED_AT)?,
            size: b.int(code_blocks::SIZE)?,
            branch_name: c.text(chats::BRANCH_NAME)?,
            chat_path: d.text(chat_details::CHAT_PATH)?,
            language: b.text(code_blocks::LANGUAGE)?,
            file_path: m.text(messages::FILE_PATH)?,
            repo: c.text(chats::REPO)?,
        })
    }

    fn snippet(
        &self,
        table: &str,
        column: i64,
        tokens: i64,
        fts: &str,
        id: i64,
    ) -> Result<Option<String>> {
        let table = fts_def(table)?.name;
        let evaluated = self.evaluate(table, fts)?;
        let (expr, loaded, _) = &*evaluated;
        let Some(hits) = loaded.row_hits(id) else {
            return Ok(None);
        };
        let texts = self.fts_texts(table, id)?;
        let columns: Vec<&[u8]> = texts.iter().map(Vec::as_slice).collect();
        let args = SnippetArgs {
            column,
            open: crate::search::MARK_OPEN,
            close: crate::search::MARK_CLOSE,
            ellipsis: "...",
            tokens,
        };
        let out = snippet(
            &columns,
            crate::index::doclists::tokenizer_of(table),
            &hits,
            &expr.phrase_sizes(),
            args,
        )
        .ok_or_else(|| {
            Error::new(
                "index.corrupt",
                "the index file is damaged: a hit past its column's end",
            )
        })?;
        String::from_utf8(out)
            .map(Some)
            .map_err(|_| unsupported("return a snippet that is not UTF-8"))
    }

    fn chat_exists(&self, id: i64) -> Result<bool> {
        Ok(self.file.row(chats::TABLE, id)?.is_some())
    }

    fn correct(&self, q: &Query) -> Result<Option<(Query, Vec<crate::typo::Correction>)>> {
        crate::typo::correct(&Terms(self), q)
    }

    fn facets(
        &self,
        _p: &Plan,
        _requests: &[facets::FacetRequest],
        _spent: &dyn Fn() -> bool,
    ) -> Result<facets::Counted> {
        Err(unsupported("count facets"))
    }
}
