//! Ranking as FTS5 auxiliary functions, registered on every connection
//! ([`register`]):
//! - `gs_message_rank(fts_messages, records, avg_title_len,
//!   avg_keywords_len)` computes what three `bm25()` calls and two length
//!   norms did (see `super::BM25_K1`),
//! - `gs_code_rank(fts_code_blocks, records)` is `bm25(fts_code_blocks)`,
//! - `gs_message_section(fts_messages, records, avg_title_len,
//!   avg_keywords_len, factor)` is `gs_message_rank` times `factor` for a
//!   search judged per page (`crate::plan`): it hands the executor each
//!   row's rank, chat and the query phrases it holds through the
//!   [`Tally`] ([`Tally::take_sections`]),
//! - `gs_message_page(fts_messages, records)` gives a matched message's
//!   chat.
//!
//! Both do FTS5's own BM25 arithmetic (`fts5Bm25Function`, operation for
//! operation) over the phrase hits of the current row (`xInst`, from the
//! doclists already read). The row's token counts come from its ranking
//! record (`records`: the blob of the `message_rank` or `code_rank` row
//! of its chunk, decoded once per chunk and query), instead of from FTS5's
//! `_docsize` table: a lazily read index then ships or fetches a few
//! packed bytes per matched row rather than a b-tree row.
//!
//! Messages score (lower is better, as `bm25()`) `min(title ·
//! norm(title_len) · w_title, keywords · norm(keywords_len) · w_keywords)`
//! plus `body`, where `title` and `keywords` are BM25 saturated per column
//! (weight 1e6) and `body` is BM25 of body hits, all normalised by the
//! whole row's length.

use super::records::{self, Chunk, Col, CODE_FIELDS, MESSAGE_FIELDS};
use super::{BM25_B, BM25_K1, MESSAGE_COLUMN_WEIGHTS};
use crate::error::{Error, Result};
use crate::index::fts5expr::Inst;
use crate::langs::Demoted;
use crate::util::lock;
use rusqlite::{ffi, Connection};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::ffi::{c_int, c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The SQL name of the message ranking function.
pub const MESSAGE_RANK: &str = "gs_message_rank";
/// The SQL name of the code-block ranking function.
pub const CODE_RANK: &str = "gs_code_rank";
/// The SQL name of the function giving a matched message's chat.
pub const MESSAGE_PAGE: &str = "gs_message_page";
/// The SQL name of the message ranking function of a search judged per
/// page.
pub const MESSAGE_SECTION: &str = "gs_message_section";

/// Column order of `fts_messages`.
const TITLE: c_int = 0;
const BODY: c_int = 1;
const KEYWORDS: c_int = 2;

/// The weight `bm25(fts, 1e6, 0, 0)` gives a column to saturate it.
const SATURATE: f64 = 1e6;

/// Per query: FTS5's average row length, each phrase's IDF, and the
/// ranking records of the chunk last read (rows come in rowid order, so
/// a chunk is decoded once).
struct QueryData {
    avgdl: f64,
    idf: Vec<f64>,
    /// The word each phrase stands for: a phrase weighted below 1 (an
    /// inflection the planner added) belongs to the phrase of weight 1
    /// before it (the word typed), whose other forms it is; a row scores
    /// the best form of each word it holds, not their sum, so an
    /// inflection finds rows the typed word misses without lifting rows
    /// that hold both.
    word: Vec<usize>,
    chunk: RefCell<Option<Arc<CachedChunk>>>,
    /// The pages whose sections are scored ([`Tally::score_only_pages`]);
    /// `None`: every row's.
    pages: Option<Arc<HashSet<i64>>>,
    /// The pages in another language than the reader's
    /// ([`Tally::demote`]).
    demoted: Option<Arc<Demoted>>,
}

impl QueryData {
    /// `rank` of a message on page `chat`: times [`crate::langs::DEMOTED`]
    /// on a page in another language than the reader's.
    fn in_language(&self, chat: i64, rank: f64) -> f64 {
        match &self.demoted {
            Some(d) if d.contains(chat) => rank * crate::langs::DEMOTED,
            _ => rank,
        }
    }
}

/// The rows the ranking functions of a connection scored since
/// [`Tally::reset`]. A statement whose `ORDER BY` starts with the rank
/// scores every row it matches (a sorter sees them all, even under a
/// `LIMIT`), so after it this is that statement's `count(*)`: a search
/// needs no second pass over the doclists to count its results. A row
/// scored twice in a row (SQLite evaluating the expression once for the
/// sort key and once for the column) counts once.
#[derive(Clone, Default)]
pub struct Tally(Arc<TallyInner>);

#[derive(Default)]
struct TallyInner {
    rows: AtomicU64,
    last: AtomicI64,
    /// The phrases of the statement running now, in FTS5's order, as
    /// [`Tally::begin`] gave them, with their ranking weights.
    phrases: Mutex<Option<(Vec<String>, Vec<f64>)>>,
    /// The pages the statement running now scores the sections of
    /// ([`Tally::score_only_pages`]).
    pages: Mutex<Option<Arc<HashSet<i64>>>>,
    /// The pages the search running now ranks below the others
    /// ([`Tally::demote`]).
    demoted: Mutex<Option<Arc<Demoted>>>,
    /// The rows `gs_message_section` scored since [`Tally::begin`].
    sections: Mutex<Vec<Section>>,
    /// Decoded ranking records by table and chunk, for every statement of
    /// the connection: a query of common words reads a record of most
    /// chunks, and the next query the same ones again.
    chunks: Mutex<HashMap<(Kind, i64), Arc<CachedChunk>>>,
    /// Rows containing each phrase, by ranking function and phrase text:
    /// counted once per connection instead of once per search, and
    /// forgotten when a write changes the index ([`Tally::forget_counts`]).
    hits: Mutex<HashMap<(Kind, String), i64>>,
}

/// Which ranking function (and so which FTS table) a phrase was counted in.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Message,
    Code,
}

/// A row `gs_message_section` scored: its id, rank (times the statement's
/// factor), chat (for a documentation site, the page) and the phrases it
/// holds (bit `i`: phrase `i` of the query, below
/// [`MAX_MASKED_PHRASES`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Section {
    pub id: i64,
    pub rank: f64,
    pub page: i64,
    pub phrases: i64,
}

/// A decoded chunk of ranking records with the blob it was decoded from:
/// a cached chunk is used only for the same bytes, so a write that
/// changes the records never meets a stale one.
struct CachedChunk {
    blob: Vec<u8>,
    records: Chunk,
}

/// Chunks of ranking records a connection keeps decoded (then it starts
/// over): a few MiB at most, the records of about 130,000 rows.
const MAX_CACHED_CHUNKS: usize = 512;

/// Phrases whose row counts a connection keeps (then it starts over).
const MAX_CACHED_PHRASES: usize = 4096;

impl Tally {
    pub fn reset(&self) {
        self.0.rows.store(0, Ordering::Relaxed);
    }

    /// Before a statement that ranks: resets the count and names the
    /// phrases of its FTS5 expression in order (`crate::plan::fts_phrases`),
    /// so their row counts can come from, and go to, the cache, and
    /// their ranking weights (`weights[i]` multiplies phrase `i`'s IDF;
    /// missing ones are 1). Ranking checks the number against FTS5's own
    /// and counts afresh, unweighted, when they differ. [`Tally::end`]
    /// after the statement.
    pub fn begin(&self, phrases: &[String], weights: &[f64]) {
        self.reset();
        *lock(&self.0.phrases) = Some((phrases.to_vec(), weights.to_vec()));
        lock(&self.0.sections).clear();
    }

    pub fn end(&self) {
        *lock(&self.0.phrases) = None;
        *lock(&self.0.pages) = None;
        *lock(&self.0.sections) = Vec::new();
    }

    /// Until [`Tally::end`]: `gs_message_section` scores only the sections
    /// of these pages (chats) and passes over every other row without
    /// reading its hits. For a search judged per page that has found which
    /// pages can hold every term: the other rows would be dropped.
    pub fn score_only_pages(&self, pages: HashSet<i64>) {
        *lock(&self.0.pages) = Some(Arc::new(pages));
    }

    /// Until the next call: messages on these pages rank below all others
    /// (a site's pages in another language than the reader's,
    /// [`crate::langs`]); `None`: none do.
    pub fn demote(&self, pages: Option<Arc<Demoted>>) {
        *lock(&self.0.demoted) = pages;
    }

    /// The rows `gs_message_section` scored since [`Tally::begin`] (or the
    /// last take), in the order it scored them.
    pub fn take_sections(&self) -> Vec<Section> {
        std::mem::take(&mut *lock(&self.0.sections))
    }

    /// Forgets the phrases' row counts: the index has changed under the
    /// connection (a writable index's write).
    pub fn forget_counts(&self) {
        lock(&self.0.hits).clear();
        lock(&self.0.chunks).clear();
    }

    /// Rows scored since the last reset.
    pub fn rows(&self) -> u64 {
        self.0.rows.load(Ordering::Relaxed)
    }
}

impl TallyInner {
    fn scored(&self, rowid: i64) {
        if self.rows.load(Ordering::Relaxed) == 0 || self.last.load(Ordering::Relaxed) != rowid {
            self.rows.fetch_add(1, Ordering::Relaxed);
            self.last.store(rowid, Ordering::Relaxed);
        }
    }
}

/// The tally a ranking function was registered with (borrowed: the
/// registration holds a reference).
unsafe fn tally_of<'a>(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
) -> Option<&'a TallyInner> {
    let user = api.xUserData?;
    (user(fts) as *const TallyInner).as_ref()
}

unsafe extern "C" fn free_tally(p: *mut c_void) {
    if !p.is_null() {
        drop(Arc::from_raw(p as *const TallyInner));
    }
}

unsafe extern "C" fn free_query_data(p: *mut c_void) {
    if !p.is_null() {
        drop(Box::from_raw(p as *mut QueryData));
    }
}

unsafe extern "C" fn count_hit(
    _api: *const ffi::Fts5ExtensionApi,
    _fts: *mut ffi::Fts5Context,
    user: *mut c_void,
) -> c_int {
    *(user as *mut i64) += 1;
    ffi::SQLITE_OK
}

fn ok(rc: c_int) -> std::result::Result<(), c_int> {
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rc)
    }
}

/// The query's data, computed on the first row as `fts5Bm25GetData` does.
unsafe fn query_data(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    kind: Kind,
) -> std::result::Result<*const QueryData, c_int> {
    let (Some(get), Some(set), Some(phrases), Some(rows), Some(total), Some(query)) = (
        api.xGetAuxdata,
        api.xSetAuxdata,
        api.xPhraseCount,
        api.xRowCount,
        api.xColumnTotalSize,
        api.xQueryPhrase,
    ) else {
        return Err(ffi::SQLITE_MISUSE);
    };
    let p = get(fts, 0) as *const QueryData;
    if !p.is_null() {
        return Ok(p);
    }
    let n_phrase = phrases(fts);
    let mut n_row: i64 = 0;
    ok(rows(fts, &mut n_row))?;
    let mut n_token: i64 = 0;
    ok(total(fts, -1, &mut n_token))?;
    let avgdl = avgdl(n_row, n_token);
    let tally = tally_of(api, fts);
    // The statement's phrases, when the engine named as many as FTS5 has.
    let named = tally.and_then(|t| {
        lock(&t.phrases)
            .as_ref()
            .filter(|(p, _)| p.len() == n_phrase.max(0) as usize)
            .cloned()
    });
    let mut counts = Vec::with_capacity(n_phrase.max(0) as usize);
    for i in 0..n_phrase {
        let key = named.as_ref().map(|(p, _)| (kind, p[i as usize].clone()));
        let cached = match (tally, &key) {
            (Some(t), Some(k)) => lock(&t.hits).get(k).copied(),
            _ => None,
        };
        let hits = match cached {
            Some(h) => h,
            None => {
                let mut hits: i64 = 0;
                ok(query(
                    fts,
                    i,
                    &mut hits as *mut i64 as *mut c_void,
                    Some(count_hit),
                ))?;
                if let (Some(t), Some(k)) = (tally, key) {
                    let mut cache = lock(&t.hits);
                    if cache.len() >= MAX_CACHED_PHRASES {
                        cache.clear();
                    }
                    cache.insert(k, hits);
                }
                hits
            }
        };
        counts.push(hits);
    }
    let (idf, word) = weigh(n_row, &counts, named.as_ref().map(|(_, w)| &w[..]));
    let data = Box::into_raw(Box::new(QueryData {
        avgdl,
        idf,
        word,
        chunk: RefCell::new(None),
        pages: tally.and_then(|t| lock(&t.pages).clone()),
        demoted: tally.and_then(|t| lock(&t.demoted).clone()),
    }));
    // On failure FTS5 frees the data itself (xDelete).
    ok(set(fts, data as *mut c_void, Some(free_query_data)))?;
    Ok(data)
}

/// The ranking functions' arithmetic without SQLite, for rows whose hits
/// the engine read itself (`index::fts5expr`): the same operations in the
/// same order, so every rank equals the SQL path's bit for bit.
///
/// ```
/// use gitsense_engine::index::rank::Scorer;
/// // A table of 10 rows and 200 tokens; one phrase, held by 2 rows.
/// let s = Scorer::new(10, 200, &[2], &[1.0], None);
/// let once = s.message(7, [3, 10, 0], [4.0, 1.0], &[(0, 1, 5)]);
/// let twice = s.message(7, [3, 10, 0], [4.0, 1.0], &[(0, 1, 5), (0, 1, 8)]);
/// assert!(twice < once && once < 0.0, "lower is better, as bm25()");
/// ```
pub struct Scorer {
    data: QueryData,
}

impl Scorer {
    /// For a query over a table of `rows` rows and `tokens` tokens (FTS5's
    /// totals) whose phrases are held by `counts` rows each, weighted as
    /// [`Tally::begin`]'s `weights`; messages on `demoted` pages rank below
    /// the others.
    pub fn new(
        rows: i64,
        tokens: i64,
        counts: &[i64],
        weights: &[f64],
        demoted: Option<Arc<Demoted>>,
    ) -> Scorer {
        let (idf, word) = weigh(rows, counts, Some(weights));
        Scorer {
            data: QueryData {
                avgdl: avgdl(rows, tokens),
                idf,
                word,
                chunk: RefCell::new(None),
                pages: None,
                demoted,
            },
        }
    }

    /// `gs_message_rank` of a message on page `chat` with the ranking
    /// record's `lengths` (title, body, keywords), the average title and
    /// keywords lengths, and its hits (phrase, column, offset).
    pub fn message(&self, chat: i64, lengths: [i64; 3], averages: [f64; 2], hits: &[Inst]) -> f64 {
        let (score, _) = self.message_hits(lengths, averages, hits);
        self.data.in_language(chat, score)
    }

    /// `gs_message_section` of the same: the rank times `factor`, and the
    /// phrases the message holds.
    pub fn section(
        &self,
        chat: i64,
        lengths: [i64; 3],
        averages: [f64; 2],
        factor: f64,
        hits: &[Inst],
    ) -> (f64, i64) {
        let (score, held) = self.message_hits(lengths, averages, hits);
        (self.data.in_language(chat, score * factor), held)
    }

    /// `gs_code_rank` of a code block of `content_len` tokens.
    pub fn code_block(&self, content_len: i64, hits: &[Inst]) -> f64 {
        let scored = code_block_score(&self.data, content_len, |each| {
            in_phrase_order(hits, each);
            Ok::<(), std::convert::Infallible>(())
        });
        match scored {
            Ok(score) => score,
        }
    }

    /// FTS5's own `bm25()` (`fts5Bm25Function`: every column weighing 1)
    /// of a row of `tokens` tokens: unlike the engine's functions, the
    /// sum over every phrase.
    pub fn bm25(&self, tokens: i64, hits: &[Inst]) -> f64 {
        const K1: f64 = 1.2;
        const B: f64 = 0.75;
        let data = &self.data;
        let mut freq = vec![0.0f64; data.idf.len()];
        for &(p, _, _) in hits {
            if let Some(f) = freq.get_mut(p) {
                *f += 1.0;
            }
        }
        let d = tokens as f64;
        let mut score = 0.0;
        for (idf, f) in data.idf.iter().zip(&freq) {
            score += idf * ((f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * d / data.avgdl)));
        }
        // `-1.0 * score` in C: the same bits.
        -score
    }

    fn message_hits(&self, lengths: [i64; 3], averages: [f64; 2], hits: &[Inst]) -> (f64, i64) {
        let scored = message_score(&self.data, lengths, averages, |each| {
            in_phrase_order(hits, each);
            Ok::<(), std::convert::Infallible>(())
        });
        match scored {
            Ok(scored) => scored,
        }
    }
}

/// A row's hits phrase by phrase, each phrase's in position order: the
/// order the SQL path reads them in (`xPhraseFirst`), so sums of floats
/// add up alike.
fn in_phrase_order(hits: &[Inst], each: &mut dyn FnMut(usize, c_int)) {
    let mut sorted: Vec<Inst> = hits.to_vec();
    sorted.sort_unstable();
    for (phrase, column, _) in sorted {
        each(phrase, column as c_int);
    }
}

/// FTS5's average row length (`fts5Bm25GetData`).
fn avgdl(n_row: i64, n_token: i64) -> f64 {
    n_token as f64 / n_row as f64
}

/// Each phrase's IDF (times its ranking weight: `weights[i]`, 1 when
/// missing) from the rows holding it (`counts`) among `n_row`, and the
/// word each phrase stands for ([`QueryData::word`]), as
/// `fts5Bm25GetData` computes the IDFs.
fn weigh(n_row: i64, counts: &[i64], weights: Option<&[f64]>) -> (Vec<f64>, Vec<usize>) {
    let mut idf = Vec::with_capacity(counts.len());
    let mut word: Vec<usize> = Vec::with_capacity(counts.len());
    for (i, &hits) in counts.iter().enumerate() {
        let weight = weights.and_then(|w| w.get(i).copied()).unwrap_or(1.0);
        word.push(match word.last() {
            Some(&w) if weight < 1.0 => w,
            _ => i,
        });
        let v = (((n_row - hits) as f64 + 0.5) / (hits as f64 + 0.5)).ln();
        idf.push(if v <= 0.0 { 1e-6 } else { v } * weight);
    }
    (idf, word)
}

/// `fts5Bm25Function`'s sum for one column weighting: `freq` holds the
/// weighted hits per phrase, `d` the row's length in tokens.
fn bm25(data: &QueryData, freq: &[f64], d: f64) -> f64 {
    let (k1, b) = (BM25_K1, BM25_B);
    let mut score = 0.0;
    // Phrases of one word ([`QueryData::word`]) come together, the typed
    // form first: the best of them counts.
    let mut best = 0.0;
    for (i, (idf, f)) in data.idf.iter().zip(freq).enumerate() {
        let s = idf * ((f * (k1 + 1.0)) / (f + k1 * (1.0 - b + b * d / data.avgdl)));
        if data.word[i] == i {
            score += best;
            best = s;
        } else if s > best {
            best = s;
        }
    }
    -(score + best)
}

/// A column's length norm `1 / (1 + k1·(1 − b + b·len/avg))`; 1 for a
/// message without that column.
fn norm(len: i64, avg: f64) -> f64 {
    if len > 0 {
        1.0 / (1.0 + BM25_K1 * (1.0 - BM25_B + BM25_B * len as f64 / avg))
    } else {
        1.0
    }
}

/// The current row's ranking record, decoded from `blob` (its chunk's)
/// unless that chunk is the one decoded last.
unsafe fn record<const N: usize>(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    last: &RefCell<Option<Arc<CachedChunk>>>,
    blob: *mut ffi::sqlite3_value,
    kind: Kind,
) -> std::result::Result<[i64; N], c_int> {
    let Some(rowid) = api.xRowid else {
        return Err(ffi::SQLITE_MISUSE);
    };
    let id = rowid(fts);
    let chunk = records::chunk_of(id);
    let mut cached = last.borrow_mut();
    if cached.as_ref().map(|c| c.records.chunk) != Some(chunk) {
        let p = ffi::sqlite3_value_blob(blob) as *const u8;
        let n = ffi::sqlite3_value_bytes(blob);
        let bytes: &[u8] = if p.is_null() || n <= 0 {
            &[]
        } else {
            std::slice::from_raw_parts(p, n as usize)
        };
        *cached = Some(decoded(tally_of(api, fts), kind, chunk, bytes)?);
    }
    cached
        .as_ref()
        .and_then(|c| c.records.get(id)?.try_into().ok())
        .ok_or(ffi::SQLITE_CORRUPT)
}

/// Chunk `chunk`'s records of `kind`'s table, from the connection's cache
/// when it holds them for these bytes, else decoded (and cached).
fn decoded(
    tally: Option<&TallyInner>,
    kind: Kind,
    chunk: i64,
    bytes: &[u8],
) -> std::result::Result<Arc<CachedChunk>, c_int> {
    if let Some(c) = tally.and_then(|t| lock(&t.chunks).get(&(kind, chunk)).cloned()) {
        if c.blob == bytes {
            return Ok(c);
        }
    }
    let cols: &[Col] = match kind {
        Kind::Message => &MESSAGE_FIELDS,
        Kind::Code => &CODE_FIELDS,
    };
    let fresh = Arc::new(CachedChunk {
        blob: bytes.to_vec(),
        records: records::decode(chunk, bytes, cols).ok_or(ffi::SQLITE_CORRUPT)?,
    });
    if let Some(t) = tally {
        let mut cache = lock(&t.chunks);
        if cache.len() >= MAX_CACHED_CHUNKS {
            cache.clear();
        }
        cache.insert((kind, chunk), Arc::clone(&fresh));
    }
    Ok(fresh)
}

/// Calls `each(phrase, column)` for every phrase hit of the current row.
///
/// Walks each phrase's own position list (`xPhraseFirst`/`xPhraseNext`)
/// rather than FTS5's instance array (`xInst`): building that array merges
/// the phrases' lists into document order, which costs every hit a look at
/// every phrase, and a query with its words' inflections has dozens of
/// phrases. Every caller only counts hits per phrase and column, so the
/// order does not matter.
unsafe fn hits(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    each: &mut dyn FnMut(usize, c_int),
) -> std::result::Result<(), c_int> {
    let (Some(count), Some(first), Some(next)) =
        (api.xPhraseCount, api.xPhraseFirst, api.xPhraseNext)
    else {
        return Err(ffi::SQLITE_MISUSE);
    };
    for phrase in 0..count(fts) {
        let mut iter = ffi::Fts5PhraseIter {
            a: ptr::null(),
            b: ptr::null(),
        };
        let (mut column, mut offset) = (0, 0);
        ok(first(fts, phrase, &mut iter, &mut column, &mut offset))?;
        while column >= 0 {
            each(phrase as usize, column);
            next(fts, &mut iter, &mut column, &mut offset);
        }
    }
    Ok(())
}

unsafe fn score(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    args: &[*mut ffi::sqlite3_value],
) -> std::result::Result<f64, c_int> {
    let [records, avg_title, avg_keywords] = args else {
        return Err(ffi::SQLITE_MISUSE);
    };
    let (avg_title, avg_keywords) = (
        ffi::sqlite3_value_double(*avg_title),
        ffi::sqlite3_value_double(*avg_keywords),
    );
    let data = &*query_data(api, fts, Kind::Message)?;
    let [chat, title_len, body_len, keywords_len] =
        record(api, fts, &data.chunk, *records, Kind::Message)?;
    message_score(
        data,
        [title_len, body_len, keywords_len],
        [avg_title, avg_keywords],
        |each| hits(api, fts, each),
    )
    .map(|(score, _)| data.in_language(chat, score))
}

/// A message's score from its hits (`each_hit` calls its argument with
/// the phrase and column of every hit), with the phrases it holds (the
/// bits [`MAX_MASKED_PHRASES`] has room for).
fn message_score<E>(
    data: &QueryData,
    [title_len, body_len, keywords_len]: [i64; 3],
    [avg_title, avg_keywords]: [f64; 2],
    each_hit: impl FnOnce(&mut dyn FnMut(usize, c_int)) -> std::result::Result<(), E>,
) -> std::result::Result<(f64, i64), E> {
    let n = data.idf.len();
    // Weighted hits per phrase of the three bm25() calls this replaces:
    // (1e6, 0, 0), (0, w_body, 0) and (0, 0, 1e6).
    let mut freq = vec![0.0f64; 3 * n];
    let (title, rest) = freq.split_at_mut(n);
    let (body, keywords) = rest.split_at_mut(n);
    let mut held = 0i64;
    each_hit(&mut |p, column| {
        if p < MAX_MASKED_PHRASES {
            held |= 1 << p;
        }
        if p < n {
            match column {
                TITLE => title[p] += SATURATE,
                BODY => body[p] += MESSAGE_COLUMN_WEIGHTS.body,
                KEYWORDS => keywords[p] += SATURATE,
                _ => {}
            }
        }
    })?;
    let d = (title_len + body_len + keywords_len) as f64;
    let w = MESSAGE_COLUMN_WEIGHTS;
    let t = bm25(data, title, d) * norm(title_len, avg_title) * w.title;
    let k = bm25(data, keywords, d) * norm(keywords_len, avg_keywords) * w.keywords;
    // SQL's min(): the later argument when they compare equal.
    let best = if t < k { t } else { k };
    Ok((best + bm25(data, body, d), held))
}

/// `gs_message_section(fts_messages, records, avg_title_len,
/// avg_keywords_len, factor)`: scores the row as `gs_message_rank`, times
/// `factor`, and hands it to the executor through the tally
/// ([`Tally::take_sections`]) with its chat and the phrases it holds. A
/// row of a page the tally leaves out ([`Tally::score_only_pages`]) is
/// neither scored nor handed on. Returns the rank.
unsafe fn section(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    args: &[*mut ffi::sqlite3_value],
) -> std::result::Result<f64, c_int> {
    let [records, avg_title, avg_keywords, factor] = args else {
        return Err(ffi::SQLITE_MISUSE);
    };
    let (Some(tally), Some(rowid)) = (tally_of(api, fts), api.xRowid) else {
        return Err(ffi::SQLITE_MISUSE);
    };
    let data = &*query_data(api, fts, Kind::Message)?;
    let [chat, title_len, body_len, keywords_len] =
        record(api, fts, &data.chunk, *records, Kind::Message)?;
    if data.pages.as_ref().is_some_and(|p| !p.contains(&chat)) {
        return Ok(0.0);
    }
    let (score, held) = message_score(
        data,
        [title_len, body_len, keywords_len],
        [
            ffi::sqlite3_value_double(*avg_title),
            ffi::sqlite3_value_double(*avg_keywords),
        ],
        |each| hits(api, fts, each),
    )?;
    let rank = data.in_language(chat, score * ffi::sqlite3_value_double(*factor));
    lock(&tally.sections).push(Section {
        id: rowid(fts),
        rank,
        page: chat,
        phrases: held,
    });
    Ok(rank)
}

/// `bm25(fts_code_blocks)`: every column weighted 1, the row's length
/// from its record.
unsafe fn code_score(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    args: &[*mut ffi::sqlite3_value],
) -> std::result::Result<f64, c_int> {
    let [records] = args else {
        return Err(ffi::SQLITE_MISUSE);
    };
    let data = &*query_data(api, fts, Kind::Code)?;
    let [_message, _chat, content_len] = record(api, fts, &data.chunk, *records, Kind::Code)?;
    code_block_score(data, content_len, |each| hits(api, fts, each))
}

/// A code block's score from its hits (as [`message_score`]'s).
fn code_block_score<E>(
    data: &QueryData,
    content_len: i64,
    each_hit: impl FnOnce(&mut dyn FnMut(usize, c_int)) -> std::result::Result<(), E>,
) -> std::result::Result<f64, E> {
    let n = data.idf.len();
    let mut freq = vec![0.0f64; n];
    each_hit(&mut |p, _| {
        if p < n {
            freq[p] += 1.0;
        }
    })?;
    Ok(bm25(data, &freq, content_len as f64))
}

/// `gs_message_page(fts_messages, records)`: the chat (for a documentation
/// site, the page) of the current row, from its ranking record, so that
/// matches can be judged per page without reading the `messages` table.
unsafe fn message_page(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    args: &[*mut ffi::sqlite3_value],
) -> std::result::Result<i64, c_int> {
    let [records] = args else {
        return Err(ffi::SQLITE_MISUSE);
    };
    let (Some(get), Some(set)) = (api.xGetAuxdata, api.xSetAuxdata) else {
        return Err(ffi::SQLITE_MISUSE);
    };
    let mut last = get(fts, 0) as *const RefCell<Option<Arc<CachedChunk>>>;
    if last.is_null() {
        let fresh = Box::into_raw(Box::new(RefCell::new(None::<Arc<CachedChunk>>)));
        // On failure FTS5 frees the data itself (xDelete).
        ok(set(fts, fresh as *mut c_void, Some(free_chunk_cache)))?;
        last = fresh;
    }
    let [chat, ..] = record::<4>(api, fts, &*last, *records, Kind::Message)?;
    Ok(chat)
}

unsafe extern "C" fn free_chunk_cache(p: *mut c_void) {
    if !p.is_null() {
        drop(Box::from_raw(p as *mut RefCell<Option<Arc<CachedChunk>>>));
    }
}

/// Phrases [`MESSAGE_SECTION`] reports (the bits of an `i64` below its
/// sign).
pub const MAX_MASKED_PHRASES: usize = 63;

type Integer = unsafe fn(
    &ffi::Fts5ExtensionApi,
    *mut ffi::Fts5Context,
    &[*mut ffi::sqlite3_value],
) -> std::result::Result<i64, c_int>;

/// An auxiliary function's arguments as a slice (SQLite passes a null
/// pointer when there are none).
unsafe fn arguments<'a>(
    n_val: c_int,
    vals: *mut *mut ffi::sqlite3_value,
) -> &'a [*mut ffi::sqlite3_value] {
    if vals.is_null() || n_val <= 0 {
        &[]
    } else {
        std::slice::from_raw_parts(vals, n_val as usize)
    }
}

unsafe fn integer_result(
    f: Integer,
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_val: c_int,
    vals: *mut *mut ffi::sqlite3_value,
) {
    let args = arguments(n_val, vals);
    let Some(api) = api.as_ref() else {
        return ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_MISUSE);
    };
    match f(api, fts, args) {
        Ok(v) => ffi::sqlite3_result_int64(ctx, v),
        Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
    }
}

unsafe extern "C" fn message_page_fn(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_val: c_int,
    vals: *mut *mut ffi::sqlite3_value,
) {
    integer_result(message_page, api, fts, ctx, n_val, vals)
}

type Score = unsafe fn(
    &ffi::Fts5ExtensionApi,
    *mut ffi::Fts5Context,
    &[*mut ffi::sqlite3_value],
) -> std::result::Result<f64, c_int>;

unsafe fn result(
    score: Score,
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_val: c_int,
    vals: *mut *mut ffi::sqlite3_value,
) {
    let args = arguments(n_val, vals);
    let Some(api) = api.as_ref() else {
        return ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_MISUSE);
    };
    if let (Some(tally), Some(rowid)) = (tally_of(api, fts), api.xRowid) {
        tally.scored(rowid(fts));
    }
    match score(api, fts, args) {
        Ok(v) => ffi::sqlite3_result_double(ctx, v),
        Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
    }
}

unsafe extern "C" fn message_rank(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_val: c_int,
    vals: *mut *mut ffi::sqlite3_value,
) {
    result(score, api, fts, ctx, n_val, vals)
}

unsafe extern "C" fn message_section(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_val: c_int,
    vals: *mut *mut ffi::sqlite3_value,
) {
    result(section, api, fts, ctx, n_val, vals)
}

unsafe extern "C" fn code_rank(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_val: c_int,
    vals: *mut *mut ffi::sqlite3_value,
) {
    result(code_score, api, fts, ctx, n_val, vals)
}

/// Adds the FTS5 auxiliary function `name` to a connection (FTS5's API
/// pointer comes from `SELECT fts5(?1)`, as the FTS5 documentation
/// describes), with `user` as its user data, which `destroy` frees when the
/// connection closes, or at once if this fails; `what` names the function
/// in errors.
///
/// # Safety
/// `user` must be what `f` and `destroy` expect.
unsafe fn create_function(
    conn: &Connection,
    what: &str,
    name: &CStr,
    user: *mut c_void,
    f: ffi::fts5_extension_function,
    destroy: Option<unsafe extern "C" fn(*mut c_void)>,
) -> Result<()> {
    let failed = |why: &str| {
        if let Some(d) = destroy {
            d(user);
        }
        Error::new("internal.error", format!("cannot register {what}: {why}"))
    };
    let db = conn.handle();
    let mut stmt: *mut ffi::sqlite3_stmt = ptr::null_mut();
    let sql = c"SELECT fts5(?1)";
    if ffi::sqlite3_prepare_v2(db, sql.as_ptr(), -1, &mut stmt, ptr::null_mut()) != ffi::SQLITE_OK {
        return Err(failed("FTS5 is not available"));
    }
    let mut api: *mut ffi::fts5_api = ptr::null_mut();
    ffi::sqlite3_bind_pointer(
        stmt,
        1,
        &mut api as *mut *mut ffi::fts5_api as *mut c_void,
        c"fts5_api_ptr".as_ptr(),
        None,
    );
    ffi::sqlite3_step(stmt);
    ffi::sqlite3_finalize(stmt);
    let Some(create) = api.as_ref().and_then(|a| a.xCreateFunction) else {
        return Err(failed("no FTS5 API"));
    };
    // A failed registration keeps no reference to `user`.
    match create(api, name.as_ptr(), user, f, destroy) {
        ffi::SQLITE_OK => Ok(()),
        rc => Err(failed(&format!("SQLite error {rc}"))),
    }
}

/// Registers [`MESSAGE_RANK`], [`CODE_RANK`], [`MESSAGE_SECTION`] and
/// [`MESSAGE_PAGE`] on a connection; returns the [`Tally`] of the rows
/// they score.
pub fn register(conn: &Connection) -> Result<Tally> {
    let functions: [(&CStr, ffi::fts5_extension_function); 4] = [
        (c"gs_message_rank", Some(message_rank)),
        (c"gs_code_rank", Some(code_rank)),
        (c"gs_message_section", Some(message_section)),
        (c"gs_message_page", Some(message_page_fn)),
    ];
    let tally = Tally::default();
    for (name, f) in functions {
        // Each registration holds a reference, released by FTS5 when the
        // connection closes.
        let user = Arc::into_raw(tally.0.clone()) as *mut c_void;
        // SAFETY: `user` is the TallyInner the ranking functions read
        // (tally_of), freed by free_tally.
        unsafe {
            create_function(
                conn,
                "the ranking function",
                name,
                user,
                f,
                Some(free_tally),
            )?
        };
    }
    Ok(tally)
}

/// The SQL name of the token count function [`register_column_size`] adds.
pub const COLUMN_SIZE: &str = "gs_column_size";

/// `gs_column_size(fts, column)`: FTS5's token count of the current row's
/// column (`xColumnSize`): from the table's `_docsize`, or, for a table
/// made with `columnsize=0` (`fts_messages`, `fts_code_blocks`), by
/// tokenizing the row's text as FTS5 did when it indexed it (tokens at
/// the same position as the previous one not counted, as in `_docsize`).
unsafe extern "C" fn column_size(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_val: c_int,
    vals: *mut *mut ffi::sqlite3_value,
) {
    let (Some(size), true) = (api.as_ref().and_then(|a| a.xColumnSize), n_val == 1) else {
        return ffi::sqlite3_result_error_code(ctx, ffi::SQLITE_MISUSE);
    };
    let column = ffi::sqlite3_value_int(*vals);
    let mut n: c_int = 0;
    match size(fts, column, &mut n) {
        ffi::SQLITE_OK => ffi::sqlite3_result_int64(ctx, i64::from(n)),
        rc => ffi::sqlite3_result_error_code(ctx, rc),
    }
}

/// Registers [`COLUMN_SIZE`] on a connection: how the builder reads the
/// token counts of tables without `_docsize` for the ranking records.
pub fn register_column_size(conn: &Connection) -> Result<()> {
    // SAFETY: the function has no user data.
    unsafe {
        create_function(
            conn,
            "the token count function",
            c"gs_column_size",
            ptr::null_mut(),
            Some(column_size),
            None,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The column sizes in an FTS5 `_docsize` blob (one varint per column).
    fn docsize_columns(blob: &[u8]) -> Vec<i64> {
        let mut out = Vec::new();
        let mut at = 0;
        while at < blob.len() {
            let mut v: u64 = 0;
            let mut len = 0;
            for i in 0..9 {
                let Some(&byte) = blob.get(at + i) else {
                    return out;
                };
                len = i + 1;
                if i == 8 {
                    v = (v << 8) | u64::from(byte);
                    break;
                }
                v = (v << 7) | u64::from(byte & 0x7f);
                if byte & 0x80 == 0 {
                    break;
                }
            }
            out.push(v as i64);
            at += len;
        }
        out
    }

    fn record_blob(id: i64, fields: Vec<i64>, cols: &[Col]) -> Vec<u8> {
        records::encode(records::chunk_of(id), &[(id, fields)], cols)
    }

    /// Text the tests index: diacritics, punctuation, code, repeated and
    /// empty columns, a NULL, non-ASCII words.
    const TEXTS: [[Option<&str>; 3]; 6] = [
        [
            Some("Café résumé"),
            Some("os.path.join(a, b) joins paths; naïve über"),
            Some("path join"),
        ],
        [Some(""), Some("for i in range(10): print(i)  # loop"), None],
        [None, Some("x"), Some("")],
        [
            Some("subprocess — Subprocess management"),
            Some("subprocess.run([\"ls\", \"-l\"]) runs a command and waits"),
            Some("subprocess run"),
        ],
        [
            Some("Ünïcödé"),
            Some("日本語のテキスト and emoji 🙂 tokens"),
            Some("a b c d e f"),
        ],
        [
            Some("dup dup dup"),
            Some("dup dup dup dup dup"),
            Some("dup"),
        ],
    ];

    /// Two copies of an FTS5 table over the same external content, one
    /// with `_docsize` and one without (`columnsize=0`), as the index's.
    fn twin_tables(c: &Connection, columns: &str, tokenize: &str) {
        c.execute_batch(&format!(
            "CREATE TABLE t(id INTEGER PRIMARY KEY, {columns});
             CREATE VIRTUAL TABLE sized USING fts5({columns}, content='t', content_rowid='id', tokenize='{tokenize}');
             CREATE VIRTUAL TABLE unsized USING fts5({columns}, content='t', content_rowid='id', tokenize='{tokenize}', columnsize=0);"
        ))
        .unwrap();
        let n = columns.split(',').count();
        let marks = vec!["?"; n].join(", ");
        for (i, row) in TEXTS.iter().enumerate() {
            let vals: Vec<Option<&str>> = if n == 1 { vec![row[1]] } else { row.to_vec() };
            c.execute(
                &format!("INSERT INTO t VALUES ({}, {marks})", i + 1),
                rusqlite::params_from_iter(vals),
            )
            .unwrap();
        }
        c.execute_batch(
            "INSERT INTO sized(sized) VALUES('rebuild'); INSERT INTO unsized(unsized) VALUES('rebuild');",
        )
        .unwrap();
        assert_eq!(
            c.query_row(
                "SELECT count(*) FROM sqlite_schema WHERE name = 'unsized_docsize'",
                [],
                |r| r.get::<_, i64>(0)
            )
            .unwrap(),
            0
        );
    }

    /// `gs_column_size` on a table without `_docsize` counts what FTS5
    /// stored in `_docsize` at indexing, for both tokenizers the index
    /// uses (the ranking records the builder writes depend on it).
    #[test]
    fn column_size_without_docsize_equals_docsize() {
        for (columns, tokenize) in [
            ("title, body, keywords", "unicode61 remove_diacritics 2"),
            ("content", "trigram"),
        ] {
            let c = Connection::open_in_memory().unwrap();
            register_column_size(&c).unwrap();
            twin_tables(&c, columns, tokenize);
            let n = columns.split(',').count();
            let sizes: Vec<String> = (0..n)
                .map(|i| format!("gs_column_size(unsized, {i})"))
                .collect();
            let counted: Vec<(i64, Vec<i64>)> = c
                .prepare(&format!(
                    "SELECT rowid, {} FROM unsized ORDER BY rowid",
                    sizes.join(", ")
                ))
                .unwrap()
                .query_map([], |r| {
                    Ok((
                        r.get(0)?,
                        (1..=n)
                            .map(|i| r.get(i))
                            .collect::<rusqlite::Result<Vec<i64>>>()?,
                    ))
                })
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            let stored: Vec<(i64, Vec<i64>)> = c
                .prepare("SELECT id, sz FROM sized_docsize ORDER BY id")
                .unwrap()
                .query_map([], |r| {
                    Ok((r.get(0)?, docsize_columns(&r.get::<_, Vec<u8>>(1)?)))
                })
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            assert_eq!(counted.len(), TEXTS.len());
            assert_eq!(counted, stored, "{tokenize}");
            assert!(counted.iter().any(|(_, s)| s.iter().any(|&v| v > 3)));
        }
    }

    /// `snippet()`, the one reader of document sizes besides ranking, gives
    /// the same text with and without `_docsize`.
    #[test]
    fn snippets_are_the_same_without_docsize() {
        for (columns, tokenize, column, queries) in [
            (
                "title, body, keywords",
                "unicode61 remove_diacritics 2",
                1,
                &["path", "subprocess", "dup", "naive", "range OR loop"][..],
            ),
            (
                "content",
                "trigram",
                0,
                &["\"ath\"", "\"subprocess\"", "\"dup\"", "\"print\""][..],
            ),
        ] {
            let c = Connection::open_in_memory().unwrap();
            twin_tables(&c, columns, tokenize);
            let mut seen = 0;
            for q in queries {
                let run = |table: &str| -> Vec<(i64, String)> {
                    c.prepare(&format!(
                        "SELECT rowid, snippet({table}, {column}, '[', ']', '...', 3) FROM {table} WHERE {table} MATCH ?1 ORDER BY rowid"
                    ))
                    .unwrap()
                    .query_map([q], |r| Ok((r.get(0)?, r.get(1)?)))
                    .unwrap()
                    .collect::<rusqlite::Result<_>>()
                    .unwrap()
                };
                let (a, b) = (run("sized"), run("unsized"));
                assert_eq!(a, b, "{q}");
                seen += a.len();
            }
            assert!(
                seen >= queries.len(),
                "{tokenize}: the queries matched {seen} rows"
            );
        }
    }

    #[test]
    fn docsize_blobs_decode() {
        assert_eq!(docsize_columns(&[3, 0x81, 0x00, 7]), vec![3, 128, 7]);
        assert_eq!(docsize_columns(&[]), Vec::<i64>::new());
    }

    /// The function against the three bm25() calls and norms it replaces,
    /// on an FTS5 table built here (lengths from its own `_docsize`).
    #[test]
    fn equals_bm25_per_column_with_norms() {
        let c = Connection::open_in_memory().unwrap();
        register(&c).unwrap();
        c.execute_batch(
            "CREATE VIRTUAL TABLE f USING fts5(title, body, keywords);
             INSERT INTO f VALUES ('json dumps', 'serialize obj to a json formatted str', 'dumps');
             INSERT INTO f VALUES ('json', 'the json module: dumps, loads, dump and load json', '');
             INSERT INTO f VALUES ('pickle', 'like json dumps but binary', 'serialize');
             INSERT INTO f VALUES ('', 'nothing about it', 'json');",
        )
        .unwrap();
        let sizes: Vec<(i64, Vec<i64>)> = {
            let mut s = c
                .prepare("SELECT id, sz FROM f_docsize ORDER BY id")
                .unwrap();
            s.query_map([], |r| {
                Ok((r.get(0)?, docsize_columns(&r.get::<_, Vec<u8>>(1)?)))
            })
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
        };
        let avg = |col: usize| {
            let v: Vec<i64> = sizes
                .iter()
                .map(|(_, s)| s[col])
                .filter(|&n| n > 0)
                .collect();
            v.iter().sum::<i64>() as f64 / v.len() as f64
        };
        let (avg_t, avg_k) = (avg(0), avg(2));
        for q in [
            "json",
            "json dumps",
            "\"json dumps\"",
            "serialize OR binary",
            "dumps*",
        ] {
            let mut s = c
                .prepare(
                    "SELECT rowid, gs_message_rank(f, ?2, ?3, ?4),
                            bm25(f, 1e6, 0.0, 0.0), bm25(f, 0.0, 0.0, 1e6), bm25(f, 0.0, 1.0, 0.0)
                     FROM f WHERE f MATCH ?1 AND rowid = ?5",
                )
                .unwrap();
            let mut seen = 0;
            for (id, sz) in &sizes {
                let blob = record_blob(*id, vec![9, sz[0], sz[1], sz[2]], &MESSAGE_FIELDS);
                let row = s
                    .query_row(rusqlite::params![q, blob, avg_t, avg_k, id], |r| {
                        Ok((
                            r.get::<_, f64>(1)?,
                            r.get::<_, f64>(2)?,
                            r.get::<_, f64>(3)?,
                            r.get::<_, f64>(4)?,
                        ))
                    })
                    .ok();
                let Some((ours, t, k, b)) = row else { continue };
                seen += 1;
                let w = MESSAGE_COLUMN_WEIGHTS;
                let t = t * norm(sz[0], avg_t) * w.title;
                let k = k * norm(sz[2], avg_k) * w.keywords;
                let expected = if t < k { t } else { k } + b;
                assert_eq!(
                    ours.to_bits(),
                    expected.to_bits(),
                    "{q}, row {id}: {ours} vs {expected}"
                );
            }
            assert!(seen > 0, "{q} matches");
        }
    }

    /// A trigram FTS5 table `f` of four code blocks and their ranking
    /// records in `k(chunk, records)`, lengths from `f`'s own `_docsize`.
    fn code_fixture(c: &Connection) {
        c.execute_batch(
            "CREATE VIRTUAL TABLE f USING fts5(content, tokenize='trigram');
             INSERT INTO f(rowid, content) VALUES (3, 'json.dumps(obj, indent=2)');
             INSERT INTO f(rowid, content) VALUES (300, 'import json\nprint(json.loads(s))');
             INSERT INTO f(rowid, content) VALUES (301, 'def dumps(x): return pickle.dumps(x)');
             INSERT INTO f(rowid, content) VALUES (1000, 'nothing here');
             CREATE TABLE k(chunk INTEGER PRIMARY KEY, records BLOB);",
        )
        .unwrap();
        let recs: Vec<(i64, Vec<i64>)> = {
            let mut s = c
                .prepare("SELECT id, sz FROM f_docsize ORDER BY id")
                .unwrap();
            s.query_map([], |r| {
                let (id, sz): (i64, Vec<u8>) = (r.get(0)?, r.get(1)?);
                Ok((id, vec![id * 2, 5, docsize_columns(&sz)[0]]))
            })
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
        };
        for (chunk, blob) in records::chunks(&recs, &CODE_FIELDS) {
            c.execute(
                "INSERT INTO k VALUES (?1, ?2)",
                rusqlite::params![chunk, blob],
            )
            .unwrap();
        }
    }

    /// The row count of a named phrase comes from the connection's cache
    /// once counted; unnamed, or named wrongly (another number of
    /// phrases), it is counted afresh.
    #[test]
    fn phrase_row_counts_are_cached_per_connection() {
        let c = Connection::open_in_memory().unwrap();
        let tally = register(&c).unwrap();
        code_fixture(&c);
        let ranks = |phrases: Option<&[&str]>| -> (Vec<u64>, u64) {
            if let Some(p) = phrases {
                tally.begin(&p.iter().map(|s| s.to_string()).collect::<Vec<_>>(), &[]);
            } else {
                tally.reset();
            }
            let mut s = c
                .prepare(
                    "SELECT gs_code_rank(f, k.records) AS r FROM f JOIN k ON k.chunk = f.rowid >> 8
                     WHERE f MATCH '\"json\" AND \"dumps\"*' ORDER BY r",
                )
                .unwrap();
            let v = s
                .query_map([], |r| r.get::<_, f64>(0))
                .unwrap()
                .map(|r| r.unwrap().to_bits())
                .collect();
            tally.end();
            (v, tally.rows())
        };
        let named: &[&str] = &["\"json\"", "\"dumps\"*"];
        let (afresh, rows) = ranks(None);
        assert_eq!(rows, 1, "one row has both");
        assert!(lock(&tally.0.hits).is_empty());
        assert_eq!(ranks(Some(named)), (afresh.clone(), 1));
        let cached = |p: &str| {
            lock(&tally.0.hits)
                .get(&(Kind::Code, p.to_string()))
                .copied()
        };
        assert_eq!((cached(named[0]), cached(named[1])), (Some(2), Some(2)));
        assert_eq!(ranks(Some(named)).0, afresh, "from the cache");
        // The cache is what ranks a named phrase: a wrong count shows.
        lock(&tally.0.hits).insert((Kind::Code, named[0].to_string()), 1);
        assert_ne!(ranks(Some(named)).0, afresh);
        assert_eq!(ranks(None).0, afresh, "unnamed: counted afresh");
        assert_eq!(
            ranks(Some(&named[..1])).0,
            afresh,
            "one name for two phrases"
        );
        // Phrases of the other ranking function are apart.
        assert!(!lock(&tally.0.hits).contains_key(&(Kind::Message, named[0].to_string())));
    }

    /// `gs_code_rank` against `bm25()` on an FTS5 table built here (the
    /// length in the record from its own `_docsize`): the same bits.
    #[test]
    fn code_rank_equals_bm25() {
        let c = Connection::open_in_memory().unwrap();
        register(&c).unwrap();
        code_fixture(&c);
        for q in [
            "json",
            "dumps",
            "json dumps",
            "\"json.d\"",
            "pickle OR loads",
        ] {
            let mut s = c
                .prepare(&format!(
                    "SELECT f.rowid, gs_code_rank(f, k.records), bm25(f) FROM f
                     JOIN k ON k.chunk = f.rowid >> {} WHERE f MATCH ?1",
                    records::CHUNK_SHIFT
                ))
                .unwrap();
            let rows: Vec<(i64, f64, f64)> = s
                .query_map([q], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .unwrap()
                .map(|r| r.unwrap())
                .collect();
            assert!(!rows.is_empty(), "{q} matches");
            for (id, ours, theirs) in rows {
                assert_eq!(ours.to_bits(), theirs.to_bits(), "{q}, row {id}");
            }
        }
        // A record missing from its chunk is an error, not a made-up rank.
        c.execute(
            "UPDATE k SET records = ?1",
            [record_blob(5, vec![1, 1, 1], &CODE_FIELDS)],
        )
        .unwrap();
        let err = c
            .query_row(
                "SELECT gs_code_rank(f, k.records) FROM f JOIN k ON k.chunk = f.rowid >> 8
                 WHERE f MATCH 'json' AND f.rowid = 3",
                [],
                |r| r.get::<_, f64>(0),
            )
            .unwrap_err();
        assert!(err.to_string().contains("malformed"), "{err}");
    }
}
