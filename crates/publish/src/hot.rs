//! Which pages of an index queries read (native builds): a traced page
//! source, the owner of every page, and the hot pages `publish` records in
//! the manifest.
//!
//! In: an index file. Out: for a traced connection, the pages each
//! statement read; for the whole file, [`hot_pages`]: the pages nearly
//! every query reads (page 1, the schema, `index_meta`, b-tree roots and
//! interior pages of the tables ranking touches, FTS5 structure records),
//! found by running probe queries made from the index's own vocabulary,
//! plus what locating any term's doclist needs (inner pages of the FTS and
//! filter tables, small FTS `_idx` tables whole).
//! The browser fetches them in one request while its module compiles, so
//! the first query over HTTP Range reads needs few round trips.

use const_format::formatcp;
use gitsense_engine::error::{DbContext, Error, Result};
use gitsense_engine::index::doclists;
use gitsense_engine::index::pagevfs::{PageFiles, PageSource};
use gitsense_engine::index::schema::{
    code_rank, fts_chats, fts_leaf_ends, fts_messages, message_rank,
};
use gitsense_engine::index::FTS_TABLES;
use gitsense_engine::plan::SearchOptions;
use gitsense_engine::search::Engine;
use rsqlite_vfs::{OsCallback, VfsResult};
use rusqlite::Connection;
use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

/// VFS name of traced files.
const TRACE_VFS: &str = "gitsense-trace";

/// Share of probe queries that must read a page for it to count as hot.
const HOT_SHARE: f64 = 0.5;
/// Probe queries run by [`hot_pages`].
const PROBES: usize = 24;

/// An index file on disk whose reads are recorded as page numbers.
pub struct TracedFile {
    file: std::fs::File,
    size: u64,
    page_size: u64,
    reads: Vec<u32>,
}

impl PageSource for TracedFile {
    fn size(&self) -> u64 {
        self.size
    }

    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> Result<()> {
        let first = offset / self.page_size;
        let last = (offset + buf.len().max(1) as u64 - 1) / self.page_size;
        self.reads.extend((first..=last).map(|p| p as u32 + 1));
        self.file
            .read_exact_at(buf, offset)
            .map_err(|e| Error::io("reading the index", e))
    }
}

/// Platform services for the tracing VFS.
#[derive(Default)]
struct NativeOs;

impl OsCallback for NativeOs {
    fn sleep(&self, dur: std::time::Duration) {
        std::thread::sleep(dur)
    }

    fn random(&self, buf: &mut [u8]) -> usize {
        // Only temporary file names ask; they need not be unpredictable.
        let mut x = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
            | 1;
        for b in buf.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
        buf.len()
    }

    fn epoch_timestamp_in_ms(&self) -> VfsResult<i64> {
        Ok(std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0))
    }
}

fn registry() -> Result<&'static Arc<PageFiles<TracedFile>>> {
    static FILES: OnceLock<std::result::Result<Arc<PageFiles<TracedFile>>, Error>> =
        OnceLock::new();
    FILES
        .get_or_init(|| PageFiles::register::<NativeOs>(TRACE_VFS))
        .as_ref()
        .map_err(Clone::clone)
}

/// A connection whose page reads are recorded.
pub struct Traced {
    pub conn: Connection,
    file: Arc<Mutex<TracedFile>>,
}

impl Traced {
    /// Opens `path` read-only through the tracing VFS.
    pub fn open(path: &Path) -> Result<Traced> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let file = std::fs::File::open(path).map_err(|e| {
            Error::io("opening the index", e).with_location(path.display().to_string())
        })?;
        let size = file
            .metadata()
            .map_err(|e| Error::io("reading the index size", e))?
            .len();
        let mut header = [0u8; 2];
        file.read_exact_at(&mut header, 16)
            .map_err(|e| Error::io("reading the index header", e))?;
        let page_size = match u16::from_be_bytes(header) {
            1 => 65536,
            n => n as u64,
        };
        let name = format!(
            "trace-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let files = registry()?;
        let file = files.insert(
            &name,
            TracedFile {
                file,
                size,
                page_size: page_size.max(512),
                reads: Vec::new(),
            },
        );
        let conn = files.open(&name, TRACE_VFS);
        // The connection holds the file from here on.
        files.remove(&name);
        Ok(Traced { conn: conn?, file })
    }

    /// Wraps the connection in an engine (reads keep being recorded).
    pub fn engine(path: &Path) -> Result<(Engine, TraceHandle)> {
        let t = Traced::open(path)?;
        let handle = TraceHandle {
            file: t.file.clone(),
        };
        Ok((Engine::from_connection(t.conn)?, handle))
    }

    /// The distinct pages read since the last call, in order of first read.
    pub fn take_pages(&self) -> Vec<u32> {
        take(&self.file)
    }
}

/// Reads the pages recorded for an engine made by [`Traced::engine`].
pub struct TraceHandle {
    file: Arc<Mutex<TracedFile>>,
}

impl TraceHandle {
    /// The distinct pages read since the last call, in order of first read.
    pub fn take_pages(&self) -> Vec<u32> {
        take(&self.file)
    }
}

fn take(file: &Mutex<TracedFile>) -> Vec<u32> {
    let reads = std::mem::take(&mut file.lock().unwrap_or_else(|p| p.into_inner()).reads);
    let mut seen = BTreeSet::new();
    reads.into_iter().filter(|p| seen.insert(*p)).collect()
}

/// Every page with the table or index it belongs to and its b-tree page
/// type (`internal`, `leaf`, `overflow`), from one pass over SQLite's
/// `dbstat`.
fn page_kinds(conn: &Connection) -> Result<Vec<(u32, String, String)>> {
    let mut s = conn
        .prepare("SELECT pageno, name, pagetype FROM dbstat")
        .ctx("reading page owners")?;
    let rows = s
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)? as u32,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        })
        .ctx("reading page owners")?;
    rows.collect::<std::result::Result<_, _>>()
        .ctx("reading page owners")
}

/// The table or index every page belongs to (SQLite's `dbstat`).
pub fn page_owners(conn: &Connection) -> Result<BTreeMap<u32, String>> {
    Ok(page_kinds(conn)?
        .into_iter()
        .map(|(page, name, _)| (page, name))
        .collect())
}

/// What [`hot_pages`] found.
#[derive(Debug, Clone)]
pub struct HotPages {
    /// Pages (1-based) read by at least half of the probe queries, ascending.
    pub pages: Vec<u32>,
    /// The probe queries.
    pub probes: Vec<String>,
    /// Distinct pages each probe read (open and first query, cold cache).
    pub reads_per_probe: Vec<usize>,
}

/// Terms for probe queries: words of message and chat texts spread over
/// the range of document frequencies (common to rare), deterministically.
fn probe_terms(conn: &Connection, n: usize) -> Result<Vec<String>> {
    conn.execute_batch(formatcp!(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.hot_vocab USING fts5vocab(main, {fts_messages}, \
        row);
         CREATE VIRTUAL TABLE IF NOT EXISTS temp.hot_chat_vocab USING \
        fts5vocab(main, {fts_chats}, row);",
        fts_messages = fts_messages::TABLE,
        fts_chats = fts_chats::TABLE
    ))
    .ctx("reading the index vocabulary")?;
    let mut terms = Vec::new();
    for table in ["temp.hot_vocab", "temp.hot_chat_vocab"] {
        let mut s = conn
            .prepare(&format!(
                "SELECT term FROM {table} WHERE length(term) >= 4 AND term GLOB '[a-z]*' \
                 AND term NOT GLOB '*[0-9]*' ORDER BY doc DESC, term"
            ))
            .ctx("reading the index vocabulary")?;
        let all: Vec<String> = s
            .query_map([], |r| r.get(0))
            .ctx("reading the index vocabulary")?
            .collect::<std::result::Result<_, _>>()
            .ctx("reading the index vocabulary")?;
        terms.push(all);
    }
    let (messages, chats) = (&terms[0], &terms[1]);
    let source = if messages.is_empty() { chats } else { messages };
    if source.is_empty() {
        return Ok(Vec::new());
    }
    // Quantiles of the frequency ranking: the 10th percentile of the
    // vocabulary's common end down to its rare end, skipping the few most
    // common words (stop words, which the parser drops).
    let picks = (0..n).map(|i| {
        let q = (i as f64 + 0.5) / n as f64;
        ((q * q) * (source.len() - 1) as f64) as usize
    });
    let mut out: Vec<String> = picks.map(|i| source[i].clone()).collect();
    out.dedup();
    Ok(out)
}

/// Tables ranking reads for every matched row (hot whole when small): the
/// ranking records of messages and code blocks (see `plan::from_clause`,
/// `index::records`) and the chats' FTS document sizes (`bm25()`).
const RANKING_TABLES: &[&str] = &[
    message_rank::TABLE,
    code_rank::TABLE,
    formatcp!("{fts_chats}_docsize", fts_chats = fts_chats::TABLE),
];
/// An FTS `_idx` table (every term is looked up in it before its doclist
/// can be fetched), or `fts_leaf_ends` (which tells whether the leaf after
/// a term's is needed too), this small (in bytes) is hot whole.
const SMALL_WHOLE_BYTES: i64 = 64 * 1024;
/// Ranking tables this small together (in bytes) are hot whole: with them
/// in hand a query ranks from its doclists alone, a round trip sooner.
/// A documentation site's fit; a large chat index's would outweigh the
/// rest of the hot pages, so they are fetched per query instead.
const RANKING_WHOLE_BYTES: i64 = 256 * 1024;

/// Pages a lookup needs before it knows which leaves to read: every inner
/// b-tree page, small FTS `_idx` tables whole, and small ranking tables
/// whole (ranking reads them for every matched row). With them in hand,
/// the browser finds the leaves a query needs from pages it already has.
fn structural_pages(kinds: &[(u32, String, String)], page_size: i64) -> BTreeSet<u32> {
    let small_whole_pages = SMALL_WHOLE_BYTES / page_size.max(512);
    // Pages per table counted once (a correlated count per page made this
    // quadratic in the page count: minutes for a large index).
    let mut table_pages: BTreeMap<&str, i64> = BTreeMap::new();
    for (_, name, _) in kinds {
        *table_pages.entry(name.as_str()).or_default() += 1;
    }
    let ranking_pages: i64 = RANKING_TABLES
        .iter()
        .map(|t| table_pages.get(t).copied().unwrap_or(0))
        .sum();
    let ranking_whole = ranking_pages * page_size.max(512) <= RANKING_WHOLE_BYTES;
    let mut out = BTreeSet::new();
    for (page, name, kind) in kinds {
        let pages_of_table = table_pages[name.as_str()];
        // Every inner page: lookups pass them, and there are few.
        let inner = kind == "internal" && name != "sqlite_stat4";
        let small_idx = (name
            .strip_suffix("_idx")
            .is_some_and(|fts| FTS_TABLES.contains(&fts))
            || name == fts_leaf_ends::TABLE)
            && pages_of_table <= small_whole_pages;
        let small_ranking = RANKING_TABLES.contains(&name.as_str()) && ranking_whole;
        if inner || small_idx || small_ranking {
            out.insert(*page);
        }
    }
    out
}

/// The pages nearly every query reads (see the module docs).
pub fn hot_pages(path: &Path) -> Result<HotPages> {
    let probe = Traced::open(path)?;
    let kinds = page_kinds(&probe.conn)?;
    let owners: BTreeMap<u32, &str> = kinds
        .iter()
        .map(|(page, name, _)| (*page, name.as_str()))
        .collect();
    let probes = probe_terms(&probe.conn, PROBES)?;
    let page_size: i64 = probe
        .conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .ctx("reading the page size")?;
    drop(probe);
    let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
    let mut reads_per_probe = Vec::new();
    // The open itself (schema, index_meta) is what even an empty query reads.
    let runs: Vec<Option<&str>> = if probes.is_empty() {
        vec![None]
    } else {
        probes.iter().map(|p| Some(p.as_str())).collect()
    };
    for q in &runs {
        let (engine, trace) = Traced::engine(path)?;
        if let Some(q) = q {
            engine.search(q, &SearchOptions::default())?;
            // The browser's warm-up looks the terms up in each FTS index
            // first (`doclists`): its segment seeks read the same edge
            // leaves of `_idx` for every query.
            let quoted = format!("\"{}\"", q.replace('"', "\"\""));
            for fts in FTS_TABLES {
                doclists::doclist_rowids(engine.connection(), fts, &quoted)
                    .ctx("looking up probe terms")?;
            }
        }
        let pages = trace.take_pages();
        reads_per_probe.push(pages.len());
        for p in pages {
            *counts.entry(p).or_default() += 1;
        }
    }
    let need = ((runs.len() as f64) * HOT_SHARE).ceil() as usize;
    // sqlite_stat4 is read natively (STAT4 build) but ignored by the
    // browser's SQLite: not worth prefetching.
    let mut pages: BTreeSet<u32> = counts
        .into_iter()
        .filter(|(p, n)| *n >= need.max(1) && owners.get(p) != Some(&"sqlite_stat4"))
        .map(|(p, _)| p)
        .collect();
    pages.extend(structural_pages(&kinds, page_size));
    Ok(HotPages {
        pages: pages.into_iter().collect(),
        probes,
        reads_per_probe,
    })
}
