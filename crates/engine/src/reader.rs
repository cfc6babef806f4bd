//! A search's ranking without SQLite: what `search::ranked_page` computes
//! with SQL, computed from the index file's own structures, result for
//! result and bit for bit, for the targets the planner marks
//! ([`TargetSql::reader`]: nothing asked of SQL but the `MATCH` and the
//! ranking).
//!
//! In: an index file as a [`PageSource`] and a target's [`TargetSql`].
//! Out: the page of ids with their ranks (and, for a search judged per
//! page, the phrases each holds) and the number of results. The file is
//! read through [`SqlFile`] ([`crate::index::sqlfile`]), its full-text
//! index through [`Fts5File`] and [`Expr`], ranks through
//! [`Scorer`]: the same arithmetic as the SQL ranking functions.
//!
//! A target the planner did not mark, or an index the reader cannot read
//! (several full-text segments), is `reader.unsupported`: the caller asks
//! SQLite.

use crate::error::{Error, Result};
use crate::index::fts5expr::{Expr, Matches};
use crate::index::fts5file::Fts5File;
use crate::index::pagevfs::PageSource;
use crate::index::rank::Scorer;
use crate::index::records::{self, Chunk, Col, CODE_FIELDS, MESSAGE_FIELDS};
use crate::index::schema::{
    code_rank, fts_code_blocks, fts_messages, message_names, message_rank, rank_stats,
};
use crate::index::sqlfile::{SqlFile, Value};
use crate::index::EXACT_NAME_BOOST;
use crate::langs::Demoted;
use crate::plan::{keep_by_page, PageSection, ReaderRank, TargetSql};
use crate::search::{Ranked, TERM_PROBE_ROWS};
use std::cell::RefCell;
use std::collections::HashSet;
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
    /// `rank_stats`: the average title and keywords lengths.
    averages: [f64; 2],
    demoted: Option<Arc<Demoted>>,
}

/// The ranking records of one chunk, decoded once for the rows of it
/// that come in a row.
struct Records<'a, S> {
    file: &'a SqlFile<S>,
    table: &'static str,
    cols: &'static [Col],
    last: RefCell<Option<Chunk>>,
}

impl<S: PageSource> Records<'_, S> {
    fn of(&self, id: i64) -> Result<Vec<i64>> {
        let chunk = records::chunk_of(id);
        let mut last = self.last.borrow_mut();
        if last.as_ref().map(|c| c.chunk) != Some(chunk) {
            let row = self.file.row(self.table, chunk)?;
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
    /// Reads what every ranking needs (the schema, `rank_stats`).
    pub fn open(source: S) -> Result<Self> {
        let file = SqlFile::open(source)?;
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
            averages,
            demoted: None,
        })
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
        let kind = sql
            .reader
            .ok_or_else(|| unsupported("rank a target with filters"))?;
        let expr_text = sql
            .fts
            .as_deref()
            .ok_or_else(|| unsupported("rank without words"))?;
        let table = match kind {
            ReaderRank::Messages | ReaderRank::Sections => fts_messages::TABLE,
            ReaderRank::CodeBlocks => fts_code_blocks::TABLE,
        };
        let fts = Fts5File::open(&self.file, table)?;
        let expr = Expr::parse(expr_text, table)?;
        let found = expr.evaluate(&fts)?;
        let scorer = self.scorer(&fts, &expr, &found, sql)?;
        match kind {
            ReaderRank::Messages => self.messages(&found, &scorer, sql, limit, offset),
            ReaderRank::CodeBlocks => self.code_blocks(&found, &scorer, limit, offset),
            ReaderRank::Sections => self.sections(&fts, &found, &scorer, sql, limit, offset),
        }
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
        // as FTS5 counts.
        let weights: &[f64] = if sql.phrases.len() == n {
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
            table,
            cols,
            last: RefCell::new(None),
        }
    }

    /// The exact-name boost of a message (the `CASE` of the SQL rank).
    fn name_factor(&self, key: Option<i64>, id: i64) -> Result<f64> {
        let Some(key) = key else { return Ok(1.0) };
        let found = self
            .file
            .find(message_names::TABLE, &[Value::Int(key), Value::Int(id)])?;
        Ok(if found.is_some() {
            EXACT_NAME_BOOST
        } else {
            1.0
        })
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
        let mut ranked = Vec::with_capacity(found.rows().len());
        for &id in found.rows() {
            let r = records.of(id)?;
            let rank = scorer.message(r[0], [r[1], r[2], r[3]], self.averages, found.instances(id));
            let rank = match sql.name_key {
                Some(_) => rank * self.name_factor(sql.name_key, id)?,
                None => rank,
            };
            ranked.push(Ranked {
                id,
                rank,
                phrases: None,
            });
        }
        Ok(page_of(ranked, limit, offset))
    }

    fn code_blocks(
        &self,
        found: &Matches,
        scorer: &Scorer,
        limit: u64,
        offset: u64,
    ) -> Result<(Vec<Ranked>, u64)> {
        let records = self.records(code_rank::TABLE, &CODE_FIELDS);
        let mut ranked = Vec::with_capacity(found.rows().len());
        for &id in found.rows() {
            let r = records.of(id)?;
            ranked.push(Ranked {
                id,
                rank: scorer.code_block(r[2], found.instances(id)),
                phrases: None,
            });
        }
        Ok(page_of(ranked, limit, offset))
    }

    /// `search::ranked_page` for a search judged per page: the pages of
    /// the rarest term's sections, every section of those pages scored,
    /// then [`keep_by_page`].
    fn sections(
        &self,
        fts: &Fts5File<'_, S>,
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
            let rows = Expr::parse(term, fts_messages::TABLE)?.evaluate(fts)?;
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
