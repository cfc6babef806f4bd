//! Lazy mode: the published index read page by page over HTTP Range
//! requests (of its packed file, pages compressed one by one, else of the
//! raw index), while a background fill copies it into OPFS.
//!
//! In: a manifest with `packedFile` or `rawFile` (and its hot pages, with
//! the packed file's page lengths, prefetched by the worker while the
//! module compiled). Out: the index read without SQLite
//! ([`LazyIndex::reader`], each search's pages fetched in batched rounds by
//! [`LazyIndex::attempt`]), a read-only connection on the VFS
//! [`VFS_NAME`] when a search needs SQLite ([`LazyIndex::connect`]), and
//! [`LazyIndex::fill_step`],
//! which the session calls until every page is stored, then
//! [`LazyIndex::store_verified`] to import the copy into the storage pool.
//!
//! Where a page comes from, in order: the OPFS fill file (`<base>.part`,
//! with a one-byte-per-page map `<base>.map` flushed after the page, so a
//! reload resumes and never fetches a stored page again), else a bounded
//! in-memory cache (when there is no fill file: no OPFS, quota exhausted),
//! else a synchronous Range request (SQLite reads synchronously; the worker
//! may block). Pages fetched for queries are stored like the fill's.
//!
//! Before a query runs on SQLite, [`warm`] predicts the pages its row
//! lookups will read and fetches them in one batch of parallel requests per b-tree level
//! (SQLite would otherwise read them one synchronous request at a time).
//!
//! Every answer is checked by `js/lazy.js` (206, exact Content-Range with
//! the manifest's size, no Content-Encoding, Content-Length); a server that
//! cannot serve ranges fails with `lazy.range_unsupported` before any page
//! is used, and the session downloads the whole index instead. The file
//! name is content-addressed and the finished copy must match the
//! manifest's SHA-256 before it replaces the lazy connection, so pages of
//! two published versions can never be mixed into a stored index.

pub mod warm;

use super::{Storage, StoredIndex};
use crate::host::{self, js_error};
use gitsense_engine::error::{Error, Result};
use gitsense_engine::index::pagevfs::PAGE_MISSING;
use gitsense_engine::index::pagevfs::{PageCache, PageFiles, PageSource};
use gitsense_engine::index::rank::Tally;
use gitsense_engine::reader::Reader;
use gitsense_engine::results::SearchResults;
use gitsense_engine::search::PlannedSearch;
use gitsense_engine::util::lock;
use gitsense_publish::{pagecodec, Manifest, HOT_FORMAT_DELTA, HOT_FORMAT_PLAIN};
use js_sys::Uint8Array;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use wasm_bindgen::{JsCast, JsValue};

/// SQLite VFS name of lazily read indexes.
pub const VFS_NAME: &str = "gitsense-lazy";
/// OPFS directory of the fill files (`FILL_DIR` in `js/lazy.js`).
pub const FILL_DIRECTORY: &str = ".gitsense-search-lazy";

/// Bound of the in-memory page cache (used when there is no fill file).
const CACHE_BYTES: usize = 8 << 20;
/// Bytes the background fill asks for per request.
const FILL_CHUNK_BYTES: u64 = 1 << 20;
/// Bytes hashed and imported per step when storing the finished copy.
const VERIFY_CHUNK_BYTES: u64 = 1 << 20;
/// A synchronous page read waits at most this long (then retries twice),
/// unless the page set `requestTimeoutMs` (which then bounds every range
/// request of the session).
const SYNC_TIMEOUT_MS: u32 = 15_000;
/// A fill request waits at most this long (then retries twice).
const FILL_TIMEOUT_MS: u32 = 60_000;
/// Sequential misses double the read-ahead up to this many pages.
const MAX_READ_AHEAD_PAGES: u32 = 16;

thread_local! {
    /// Milliseconds this worker has spent blocked on synchronous range
    /// requests, in all: [`work_clock`] leaves them out.
    static NETWORK_WAIT_MS: std::cell::Cell<f64> = const { std::cell::Cell::new(0.0) };
}

/// The time a search's budget counts, in milliseconds: `performance.now`
/// without the waits for pages read by range. The budget bounds the
/// engine's work; a slow network is bounded by the requests' timeouts.
pub fn work_clock() -> f64 {
    host::now_ms() - NETWORK_WAIT_MS.with(std::cell::Cell::get)
}

/// What the page fetched before the module was ready, handed to the
/// session (`handOff()` in `js/lazy.js` makes it; `sessionOpen` receives
/// it, or a Promise of it). Anything missing or malformed is read as not
/// fetched: the session then fetches for itself.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Prefetched {
    /// The manifest text.
    pub manifest: Option<String>,
    /// The hot file gunzipped, as published: the hot pages in the
    /// manifest's `hotPages` order, as its `hotFormat` says, then the
    /// packed file's page lengths ([`LazySource::take_hot`] decodes it).
    #[serde(deserialize_with = "bytes")]
    pub hot: Option<Vec<u8>>,
    /// Why the hot pages could not be had (a file inflating past what the
    /// manifest declares: `download.too_large`).
    #[serde(deserialize_with = "hot_failure")]
    pub hot_error: Option<Error>,
    /// The range probe's failure, `None` when the server serves ranges.
    #[serde(deserialize_with = "probe_failure")]
    pub probe: Option<Error>,
    /// Whether a probe was made at all (not when the index is stored).
    pub probed: bool,
    /// The probe found that several ranges can be asked for in one
    /// request (a multipart/byteranges answer).
    #[serde(rename = "multi")]
    pub multi_range: bool,
    /// Fill files the worker opened meanwhile (`prepareFill()` in
    /// `js/lazy.js`), and their base name.
    #[serde(with = "serde_wasm_bindgen::preserve")]
    pub fill: JsValue,
    pub fill_base: Option<String>,
}

impl Prefetched {
    /// The fill files the worker opened, and their base name.
    pub fn fill_files(&self) -> Option<(&JsValue, &str)> {
        match &self.fill_base {
            Some(base) if self.fill.is_object() => Some((&self.fill, base)),
            _ => None,
        }
    }
}

/// A JS value as it is (a Uint8Array's bytes, copied into wasm memory).
fn bytes<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<Vec<u8>>, D::Error> {
    let v: JsValue = serde_wasm_bindgen::preserve::deserialize(d)?;
    Ok(v.dyn_into::<Uint8Array>().ok().map(|b| b.to_vec()))
}

fn hot_failure<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<Error>, D::Error> {
    let v: JsValue = serde_wasm_bindgen::preserve::deserialize(d)?;
    Ok(v.is_object()
        .then(|| js_error(&v, "download.corrupt", "reading the hot pages")))
}

fn probe_failure<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<Error>, D::Error> {
    let v: JsValue = serde_wasm_bindgen::preserve::deserialize(d)?;
    Ok((!v.is_null() && !v.is_undefined())
        .then(|| js_error(&v, "network.failed", "probing range requests")))
}

/// A range probe's result (`probeRanges()` in `js/lazy.js`): the failure,
/// if ranges are not usable, and whether several ranges per request work.
#[derive(Deserialize)]
struct RangeProbe {
    #[serde(deserialize_with = "probe_failure")]
    probe: Option<Error>,
    #[serde(default)]
    multi: bool,
}

/// Counters for `info().lazy`.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LazyStats {
    /// Synchronous range requests made for queries.
    pub read_requests: u64,
    /// Bytes those requests brought.
    pub read_bytes: u64,
    /// Batched parallel requests made by the warm-up before queries.
    pub prefetch_requests: u64,
    pub prefetch_bytes: u64,
    /// Batches of prefetch requests (each waits for one round trip).
    pub prefetch_rounds: u64,
    pub prefetch_wait_ms: f64,
    /// Background fill requests.
    pub fill_requests: u64,
    pub fill_bytes: u64,
    /// Hot pages received from the prefetch.
    pub hot_pages: u64,
    pub hot_bytes: u64,
    /// Pages SQLite asked for (each page once per read call).
    pub page_reads: u64,
    /// Milliseconds spent waiting for synchronous range requests.
    pub read_wait_ms: f64,
    /// Milliseconds spent writing pages to OPFS: pages fetched for
    /// queries, and the hot pages once the fill starts.
    pub store_ms: f64,
    /// Whether the warm-up asks for several ranges per request.
    pub multi_range: bool,
    /// Whether the worker opened the fill files while the module loaded,
    /// rather than the session after it.
    pub fill_prepared: bool,
    /// Whether the warm-up and the fill read the packed file (pages
    /// compressed one by one) rather than the raw index.
    pub packed: bool,
}

/// The packed file (`Manifest::packed_file`): where each page is in it.
struct Packed {
    url: String,
    size: u64,
    /// Byte offset of each page, and the file's size last.
    offsets: Vec<u64>,
}

impl Packed {
    /// The byte range `start..=end` holding pages `first..=last` (0-based)
    /// and their lengths.
    fn range(&self, first: u32, last: u32) -> (u64, u64, Vec<u32>) {
        let o = &self.offsets[first as usize..=last as usize + 1];
        let lengths = o.windows(2).map(|w| (w[1] - w[0]) as u32).collect();
        (o[0], o[o.len() - 1] - 1, lengths)
    }
}

/// The page source of one lazily read index.
pub struct LazySource {
    /// The raw index, when published (a site published with a packed file
    /// has none: every page comes from the packed file).
    raw: Option<String>,
    /// Timeouts of a synchronous page read and of an async range request.
    sync_timeout_ms: u32,
    fetch_timeout_ms: u32,
    size: u64,
    page_size: u64,
    page_count: u32,
    /// `fillOpen()` handles, while pages go to OPFS.
    fill: Option<JsValue>,
    /// Pages stored in the fill file.
    present: Vec<bool>,
    stored: u32,
    cache: PageCache,
    stats: LazyStats,
    /// Why pages are not (or no longer) stored in OPFS.
    fill_stopped: Option<String>,
    /// The storage error that stopped the fill, until the fill reports it.
    fill_error: Option<Error>,
    /// Set once the pages read did not hash to the manifest's SHA-256:
    /// every read fails with it, nothing read is served again.
    refused: Option<Error>,
    /// Pages written to the fill file but not yet in its map.
    unmarked: Vec<(u32, u32)>,
    /// Read-ahead state: where the last fetch ended and how long it was.
    last_end: u32,
    last_len: u32,
    /// Reads fail rather than fetch a missing page (`LazyIndex::local_only`).
    local_only: bool,
    /// While the reader attempts a search ([`LazyIndex::attempt`]): the
    /// pages (0-based) its reads missed; such a read fails with
    /// `PAGE_MISSING` instead of fetching.
    collect: Option<BTreeSet<u32>>,
    /// The packed file, while it is used.
    packed: Option<Packed>,
    /// Why pages are read from the raw index, when there is a packed file.
    packed_off: Option<String>,
    /// Why the hot pages are not used (`code: message`).
    hot_off: Option<String>,
    /// Pages held in the memory cache until [`LazySource::store_held`]
    /// writes them into the fill file: the hot pages, and the pages a
    /// search fetched, stored after its answer (an OPFS write and flush
    /// of a round's hundred pages takes a couple of hundred milliseconds
    /// on a slow disk, which the answer need not wait for).
    held: Vec<u32>,
}

impl LazySource {
    fn has(&self, page: u32) -> bool {
        self.present[page as usize] || self.cache.contains(page)
    }

    /// Keeps fetched pages (`first` is 0-based): in the fill file when
    /// there is one, else in the memory cache. Stored pages are recorded
    /// in the map only by [`LazySource::commit`], after the file is
    /// flushed.
    fn keep(&mut self, first: u32, bytes: &[u8]) {
        let pages = (bytes.len() as u64 / self.page_size) as u32;
        if let Some(fill) = &self.fill {
            let at = u64::from(first) * self.page_size;
            match host::fill_write(fill, at as f64, bytes) {
                Ok(()) => {
                    for p in first..first + pages {
                        if !self.present[p as usize] {
                            self.present[p as usize] = true;
                            self.stored += 1;
                        }
                    }
                    self.unmarked.push((first, pages));
                    return;
                }
                Err(e) => self.fill_failed(js_error(&e, "storage.failed", "storing fetched pages")),
            }
        }
        for (i, chunk) in bytes.chunks(self.page_size as usize).enumerate() {
            self.cache.insert(first + i as u32, chunk);
        }
    }

    /// Flushes the fill file, then records the pages written since the
    /// last commit in the map (so a map entry never outlives its page).
    fn commit(&mut self) {
        if self.unmarked.is_empty() {
            return;
        }
        let Some(fill) = &self.fill else {
            self.unmarked.clear();
            return;
        };
        let (firsts, counts): (Vec<u32>, Vec<u32>) = self.unmarked.drain(..).unzip();
        if let Err(e) = host::fill_commit(fill, firsts, counts) {
            self.fill_failed(js_error(&e, "storage.failed", "recording stored pages"));
        }
    }

    /// The fill file failed (a full disk, the quota): pages go to the
    /// memory cache from now on, and the fill reports `e` (`fillerror`).
    fn fill_failed(&mut self, e: Error) {
        self.stop_fill(format!(
            "pages are no longer stored in OPFS ({}: {})",
            e.code, e.message
        ));
        self.fill_error = Some(e);
    }

    fn stop_fill(&mut self, reason: String) {
        if let Some(fill) = self.fill.take() {
            host::fill_close(&fill);
        }
        self.present.iter_mut().for_each(|p| *p = false);
        self.stored = 0;
        self.fill_stopped = Some(reason);
    }

    /// Stops reading the packed file for the session (it failed with
    /// `e`); pages come from the raw index from now on.
    fn drop_packed(&mut self, e: &Error) {
        self.packed = None;
        self.stats.packed = false;
        self.packed_off = Some(format!(
            "the packed file failed, pages are read from the raw index: {}",
            e.message
        ));
    }

    /// The URL pages are read from: the packed file's while it is used,
    /// else the raw index's.
    fn reads_from(&self) -> String {
        match &self.packed {
            Some(p) => p.url.clone(),
            None => self.raw.clone().unwrap_or_default(),
        }
    }

    /// Fetches pages `first..=last` (0-based) synchronously: from the
    /// packed file when there is one (should that fail and a raw index be
    /// published, from the raw index from then on).
    fn fetch_sync(&mut self, first: u32, last: u32) -> Result<()> {
        let t = host::now_ms();
        let fail = |e: JsValue| js_error(&e, "network.failed", "reading index pages");
        let mut fetched = None;
        if let Some(p) = &self.packed {
            let (start, end, lengths) = p.range(first, last);
            let got = host::range_sync(
                &p.url,
                start as f64,
                end as f64,
                p.size as f64,
                self.sync_timeout_ms,
            )
            .and_then(|answer| {
                let answers = js_sys::Array::of1(&answer);
                host::inflate_runs(
                    &answers,
                    lengths,
                    vec![last - first + 1],
                    self.page_size as f64,
                )
                .map(|pages| Uint8Array::new(&pages.get(0)).to_vec())
            });
            match got {
                Ok(pages) => fetched = Some((pages, end - start + 1)),
                Err(e) if self.raw.is_some() => self.drop_packed(&fail(e)),
                Err(e) => return Err(fail(e)),
            }
        }
        let (bytes, wire) = match fetched {
            Some(f) => f,
            None => {
                let raw = self.raw.as_deref().ok_or_else(|| {
                    Error::new(
                        "lazy.unavailable",
                        "the index has no file to read pages from",
                    )
                })?;
                let start = u64::from(first) * self.page_size;
                let end = (u64::from(last) + 1) * self.page_size - 1;
                let bytes = host::range_sync(
                    raw,
                    start as f64,
                    end as f64,
                    self.size as f64,
                    self.sync_timeout_ms,
                )
                .map_err(fail)?;
                let bytes = Uint8Array::new(&bytes).to_vec();
                let n = bytes.len() as u64;
                (bytes, n)
            }
        };
        let t2 = host::now_ms();
        self.stats.read_wait_ms += t2 - t;
        NETWORK_WAIT_MS.with(|w| w.set(w.get() + (t2 - t)));
        self.stats.read_requests += 1;
        self.stats.read_bytes += wire;
        self.keep(first, &bytes);
        self.commit();
        self.stats.store_ms += host::now_ms() - t2;
        Ok(())
    }

    /// The next run of missing pages (0-based first page and count), at
    /// most `max` pages.
    fn next_missing(&self, max: u32) -> Option<(u32, u32)> {
        let first = self.present.iter().position(|p| !p)? as u32;
        let mut n = 1;
        while n < max
            && ((first + n) as usize) < self.present.len()
            && !self.present[(first + n) as usize]
        {
            n += 1;
        }
        Some((first, n))
    }
}

impl LazySource {
    /// Bytes of page `page` (0-based) if stored or cached; no request.
    fn peek(&mut self, page: u32) -> Option<Vec<u8>> {
        let ps = self.page_size as usize;
        if self.present.get(page as usize).copied().unwrap_or(false) {
            let mut buf = vec![0u8; ps];
            let fill = self.fill.as_ref()?;
            host::fill_read(fill, (u64::from(page) * self.page_size) as f64, &mut buf).ok()?;
            return Some(buf);
        }
        self.cache.get(page).map(|b| b.to_vec())
    }
}

impl PageSource for LazySource {
    fn size(&self) -> u64 {
        self.size
    }

    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> Result<()> {
        if let Some(e) = &self.refused {
            return Err(e.clone());
        }
        let first = (offset / self.page_size) as u32;
        let last = ((offset + buf.len() as u64 - 1) / self.page_size) as u32;
        self.stats.page_reads += u64::from(last - first + 1);
        let mut p = first;
        while p <= last {
            if self.has(p) {
                p += 1;
                continue;
            }
            let start = p;
            while p <= last && !self.has(p) {
                p += 1;
            }
            if let Some(missed) = self.collect.as_mut() {
                missed.extend(start..p);
                return Err(Error::new(PAGE_MISSING, "the page is not here yet"));
            }
            if self.local_only {
                return Err(Error::new(
                    "lazy.not_here",
                    "the page is not here and this read may not fetch it",
                ));
            }
            // Sequential misses (a scan of a table's leaves in key order)
            // read ahead, doubling up to MAX_READ_AHEAD_PAGES.
            let mut end = p - 1;
            if start == self.last_end + 1 || start == self.last_end + 2 {
                let want = (self.last_len * 2).min(MAX_READ_AHEAD_PAGES);
                while end + 1 < self.page_count && end + 1 - start < want && !self.has(end + 1) {
                    end += 1;
                }
            }
            self.fetch_sync(start, end)?;
            self.last_len = end - start + 1;
            self.last_end = end;
        }
        let ps = self.page_size;
        for q in first..=last {
            let page_start = u64::from(q) * ps;
            let lo = offset.max(page_start);
            let hi = (offset + buf.len() as u64).min(page_start + ps);
            let dst = &mut buf[(lo - offset) as usize..(hi - offset) as usize];
            // A stored page read once stays in the memory cache too: a
            // search reads the same b-tree pages again and again, and a
            // read from OPFS costs far more than a copy (a fifth of a
            // millisecond a page in a private window's OPFS).
            if !self.cache.contains(q) && self.present[q as usize] {
                let fill = self
                    .fill
                    .as_ref()
                    .ok_or_else(|| Error::new("storage.failed", "the fill file is gone"))?;
                let mut page = vec![0u8; ps as usize];
                host::fill_read(fill, page_start as f64, &mut page)
                    .map_err(|e| js_error(&e, "storage.failed", "reading stored pages"))?;
                self.cache.insert(q, &page);
            }
            let page = self.cache.get(q).ok_or_else(|| {
                Error::new("storage.failed", "the page cache is smaller than one read")
            })?;
            dst.copy_from_slice(&page[(lo - page_start) as usize..(hi - page_start) as usize]);
        }
        Ok(())
    }
}

/// The pages of a lazily read index as the reader reads them (the
/// source SQLite's connections read too).
pub struct ReaderPages(Arc<Mutex<LazySource>>);

impl PageSource for ReaderPages {
    fn size(&self) -> u64 {
        lock(&self.0).size
    }

    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> Result<()> {
        lock(&self.0).read_at(buf, offset)
    }
}

thread_local! {
    static FILES: RefCell<Option<Arc<PageFiles<LazySource>>>> = const { RefCell::new(None) };
}

/// The registry, if SQLite has been set up (no lazy index has been read
/// with SQLite in this worker otherwise).
fn files_if_any() -> Option<Arc<PageFiles<LazySource>>> {
    FILES.with(|f| f.borrow().clone())
}

fn files() -> Result<Arc<PageFiles<LazySource>>> {
    FILES.with(|f| {
        if let Some(files) = f.borrow().as_ref() {
            return Ok(files.clone());
        }
        // SAFETY: the worker is single-threaded; sqlite3_initialize is
        // idempotent and must run before a VFS is registered.
        unsafe {
            sqlite_wasm_rs::sqlite3_initialize();
        }
        let files = PageFiles::register::<sqlite_wasm_rs::WasmOsCallback>(VFS_NAME)?;
        *f.borrow_mut() = Some(files.clone());
        Ok(files)
    })
}

/// What `info().lazy` says.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LazyInfo {
    /// `filling` (pages are copied into OPFS), `complete` (the copy is
    /// stored; the engine switched to it) or `memory` (no OPFS copy: pages
    /// live in a bounded memory cache).
    pub state: &'static str,
    /// Why there is no OPFS copy, for `memory`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub url: String,
    pub page_size: u64,
    pub page_count: u32,
    /// Pages stored in OPFS so far.
    pub pages_stored: u32,
    /// Pages held in the memory cache only (not stored in OPFS).
    pub pages_cached: u32,
    /// Why pages are read from the raw index although a packed file is
    /// published.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub packed_off: Option<String>,
    /// Why the hot pages are not used (their file failed: its code and
    /// message), when they are not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hot_off: Option<String>,
    /// The storage failure that stopped the copy (its code), until the
    /// fill reports it (`fillerror`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fill_error: Option<String>,
    #[serde(flatten)]
    pub stats: LazyStats,
}

/// One lazily read index (see the module docs); clones share it.
#[derive(Clone)]
pub struct LazyIndex {
    /// File name on the lazy VFS.
    pub name: String,
    source: Arc<Mutex<LazySource>>,
    pub manifest: Manifest,
    /// Prefix of the fill files.
    base: String,
    /// A second connection for the warm-up (it awaits between statements,
    /// so it cannot borrow the engine's), with the tally its ranking
    /// functions were registered with.
    spare: Rc<RefCell<Option<(rusqlite::Connection, Tally)>>>,
}

/// The packed file `manifest` names (`None` when it names none), its page
/// lengths read from `tail`, what follows the hot pages in the hot file;
/// `Err` says why it cannot be used.
fn packed_of(
    manifest: &Manifest,
    manifest_url: &str,
    tail: &[u8],
) -> Option<std::result::Result<Packed, String>> {
    let file = manifest.packed_file.as_deref()?;
    let count = manifest.page_count as usize;
    Some(
        (|| {
            let lengths = gitsense_publish::decode_packed_lengths(tail, count)
                .ok_or("the hot file does not end with its page lengths")?;
            let offsets = gitsense_publish::packed_offsets(
                &lengths,
                manifest.page_size,
                manifest.packed_size,
            )
            .ok_or("its page lengths do not add up to its size")?;
            let url =
                host::resolve_url(file, manifest_url).map_err(|_| "its URL does not resolve")?;
            Ok(Packed {
                url,
                size: manifest.packed_size,
                offsets,
            })
        })()
        .map_err(|e: &str| e.to_string()),
    )
}

/// Prefix of every fill file of a storage scope.
pub fn fill_prefix(scope: &str) -> String {
    format!("{scope}-")
}

/// The fill files' base name of the index with `sha256` in `scope`.
pub fn fill_base(scope: &str, sha256: &str) -> String {
    format!("{}{}", fill_prefix(scope), &sha256[..16.min(sha256.len())])
}

/// Whether the server answers several ranges in one request; an error
/// when it does not serve ranges at all. The server must serve ranges
/// before any synchronous read: a server ignoring Range would send the
/// whole file to each one. The page's probe is used when it made one.
async fn range_support(
    url: &str,
    size: u64,
    prefetched: &Prefetched,
    timeout_ms: u32,
) -> Result<bool> {
    match (prefetched.probed, &prefetched.probe) {
        (true, Some(e)) => Err(e.clone()),
        (true, None) => Ok(prefetched.multi_range),
        (false, _) => {
            let probe = host::probe_ranges(url, size as f64, timeout_ms).await;
            match serde_wasm_bindgen::from_value::<RangeProbe>(probe) {
                Ok(RangeProbe { probe: Some(e), .. }) => Err(e),
                Ok(RangeProbe { probe: None, multi }) => Ok(multi),
                // Not a probe's answer: ranges are tried page by page.
                Err(_) => Ok(false),
            }
        }
    }
}

impl LazySource {
    /// A source of the index (its raw file at `raw`, if published) with
    /// no page in hand yet.
    fn new(
        raw: Option<String>,
        manifest: &Manifest,
        request_timeout_ms: Option<u32>,
        multi_range: bool,
    ) -> LazySource {
        let page_count = manifest.page_count as u32;
        LazySource {
            raw,
            sync_timeout_ms: request_timeout_ms.unwrap_or(SYNC_TIMEOUT_MS),
            fetch_timeout_ms: request_timeout_ms.unwrap_or(FILL_TIMEOUT_MS),
            size: manifest.size,
            page_size: manifest.page_size,
            page_count,
            fill: None,
            present: vec![false; page_count as usize],
            stored: 0,
            cache: PageCache::new(CACHE_BYTES / manifest.page_size as usize),
            stats: LazyStats {
                multi_range,
                ..LazyStats::default()
            },
            fill_stopped: None,
            fill_error: None,
            refused: None,
            unmarked: Vec::new(),
            last_end: u32::MAX - 2,
            last_len: 0,
            local_only: false,
            collect: None,
            packed: None,
            packed_off: None,
            hot_off: None,
            held: Vec::new(),
        }
    }

    /// Takes the fill files (`ready`: those the worker opened, else opened
    /// here, stale ones of this site removed) and the pages they hold; a
    /// failure leaves the source without a copy and says why.
    async fn open_fill(&mut self, ready: Option<JsValue>, scope: &str, base: &str) {
        let opened = match ready {
            Some(handles) => {
                self.stats.fill_prepared = true;
                Ok(handles)
            }
            None => {
                // Fill files of other versions of this site are stale.
                host::fill_remove(&fill_prefix(scope), base).await;
                host::fill_open(base, f64::from(self.page_count), self.page_size as f64).await
            }
        };
        match opened {
            Ok(handles) => {
                let present = Uint8Array::new(
                    &js_sys::Reflect::get(&handles, &"present".into())
                        .unwrap_or(JsValue::UNDEFINED),
                )
                .to_vec();
                for (i, b) in present.iter().enumerate().take(self.page_count as usize) {
                    if *b == 1 {
                        self.present[i] = true;
                        self.stored += 1;
                    }
                }
                self.fill = Some(handles);
            }
            Err(e) => {
                let e = js_error(&e, "storage.failed", "opening the fill files");
                self.fill_stopped =
                    Some(format!("no OPFS copy is made ({}: {})", e.code, e.message));
                // No room (or OPFS failing): the copy the visit asked
                // for fails with it (`fillerror`), as one that runs out
                // of room midway does.
                if matches!(e.code.as_str(), "storage.quota_exceeded" | "storage.failed") {
                    self.fill_error = Some(e);
                }
            }
        }
    }

    /// Takes in the hot file as published (gunzipped): the hot pages, as
    /// they are (`hotFormat` 1) or encoded (2, [`pagecodec::decode_hot`]),
    /// then the packed file's page lengths (the packed file is used only
    /// when they are usable). The pages wait in the memory cache: writing
    /// them into the fill file (an OPFS write and flush) is left to the
    /// fill ([`LazySource::store_held`]), after the first answer. A hot
    /// file of another format, or whose pages do not decode or have the
    /// wrong total size, is not used, and `hot_off` says why: those pages
    /// are read like any other.
    fn take_hot(&mut self, manifest: &Manifest, manifest_url: &str, file: &[u8]) {
        let ps = manifest.page_size as usize;
        let pages_end = manifest.hot_pages.len() * ps;
        let decoded;
        let (pages, tail): (&[u8], &[u8]) = match manifest.hot_format {
            HOT_FORMAT_PLAIN => file.split_at(pages_end.min(file.len())),
            HOT_FORMAT_DELTA => match pagecodec::decode_hot(file, &manifest.hot_pages, ps) {
                Some((pages, tail)) => {
                    decoded = pages;
                    (&decoded, tail)
                }
                None => {
                    self.hot_off = Some(
                        "download.corrupt: the hot file's pages do not decode (hotFormat 2)".into(),
                    );
                    return;
                }
            },
            other => {
                self.hot_off = Some(format!(
                    "index.version_mismatch: the hot file's format (hotFormat {other}) is not one this module reads"
                ));
                return;
            }
        };
        match packed_of(manifest, manifest_url, tail) {
            Some(Ok(p)) => {
                self.packed = Some(p);
                self.stats.packed = true;
            }
            Some(Err(why)) => {
                self.packed_off = Some(format!("the packed file is not used: {why}"));
            }
            None => {}
        }
        let expected = pages_end
            + if manifest.packed_file.is_some() {
                2 * self.page_count as usize
            } else {
                0
            };
        let total = pages.len() + tail.len();
        if total == expected {
            self.stats.hot_pages = manifest.hot_pages.len() as u64;
            self.stats.hot_bytes = total as u64;
            for (i, &p) in manifest.hot_pages.iter().enumerate() {
                let page = p - 1;
                if !self.has(page) {
                    self.cache.insert(page, &pages[i * ps..(i + 1) * ps]);
                    if self.fill.is_some() {
                        self.held.push(page);
                    }
                }
            }
        } else {
            self.hot_off = Some(format!(
                "download.corrupt: the hot file holds {total} bytes of pages and lengths, not {expected}"
            ));
        }
    }

    /// Keeps pages a search fetched (`first` is 0-based) in the memory
    /// cache, held there for [`LazySource::store_held`] when there is a
    /// fill file.
    fn hold(&mut self, first: u32, bytes: &[u8]) {
        for (i, chunk) in bytes.chunks(self.page_size as usize).enumerate() {
            let page = first + i as u32;
            if self.present[page as usize] || self.cache.contains(page) {
                continue;
            }
            self.cache.insert(page, chunk);
            if self.fill.is_some() {
                self.held.push(page);
            }
        }
    }

    /// Writes the pages held in memory (the hot pages, those searches
    /// fetched) into the fill file, so that the copy and the next visit do
    /// not fetch them again. They stay in the cache for this visit's reads.
    fn store_held(&mut self) {
        if self.fill.is_none() || self.held.is_empty() {
            return;
        }
        let t = host::now_ms();
        for page in std::mem::take(&mut self.held) {
            if !self.present[page as usize] {
                if let Some(bytes) = self.cache.get(page).map(<[u8]>::to_vec) {
                    self.keep(page, &bytes);
                }
            }
        }
        self.commit();
        self.stats.store_ms += host::now_ms() - t;
    }
}

impl LazyIndex {
    /// Opens the raw index `manifest` names. `persist`: copy pages into
    /// OPFS fill files (resuming an earlier fill of the same index).
    /// SQLite is not involved: [`LazyIndex::connect`] opens a connection
    /// when one is needed, [`LazyIndex::reader`] reads without.
    pub async fn open(
        manifest: &Manifest,
        manifest_url: &str,
        scope: &str,
        persist: bool,
        prefetched: Prefetched,
        request_timeout_ms: Option<u32>,
    ) -> Result<LazyIndex> {
        let fetch_timeout_ms = request_timeout_ms.unwrap_or(FILL_TIMEOUT_MS);
        let resolve = |file: &str| {
            host::resolve_url(file, manifest_url)
                .map_err(|e| js_error(&e, "manifest.invalid", "resolving an index file's URL"))
        };
        let raw = manifest.raw_file.as_deref().map(resolve).transpose()?;
        // The file range reads go to (as the page's probe chose it).
        let (ranged, ranged_size) = match (&raw, &manifest.packed_file) {
            (Some(url), _) => (url.clone(), manifest.size),
            (None, Some(file)) => (resolve(file)?, manifest.packed_size),
            (None, None) => {
                return Err(Error::new(
                    "lazy.unavailable",
                    "the manifest names no file to read by range (packedFile or rawFile)",
                ))
            }
        };
        let multi_range =
            range_support(&ranged, ranged_size, &prefetched, fetch_timeout_ms).await?;
        let base = fill_base(scope, &manifest.sha256);
        let mut source = LazySource::new(raw, manifest, request_timeout_ms, multi_range);
        source.hot_off = prefetched
            .hot_error
            .as_ref()
            .map(|e| format!("{}: {}", e.code, e.message));
        // Fill files the worker opened while the module loaded, if they
        // are this index's (else closed unused).
        let ready = match prefetched.fill_files() {
            Some((handles, b)) if b == base && persist => Some(handles.clone()),
            Some((handles, _)) => {
                host::fill_close(handles);
                None
            }
            None => None,
        };
        if persist {
            source.open_fill(ready, scope, &base).await;
        } else {
            source.fill_stopped = Some(
                "lazy storage requested without OPFS: pages live in a bounded memory cache".into(),
            );
        }
        if let Some(hot) = prefetched.hot {
            source.take_hot(manifest, manifest_url, &hot);
        }
        if source.raw.is_none() && source.packed.is_none() {
            // The packed file's page lengths come with the hot pages.
            if let Some(fill) = source.fill.take() {
                host::fill_close(&fill);
            }
            let why = source
                .packed_off
                .or(source.hot_off)
                .unwrap_or_else(|| "the hot file did not come".into());
            return Err(Error::new(
                "lazy.unavailable",
                format!("the packed file cannot be read without its page lengths ({why})"),
            ));
        }
        Ok(LazyIndex {
            name: format!("lazy-{}.db", manifest.sha256),
            source: Arc::new(Mutex::new(source)),
            manifest: manifest.clone(),
            base,
            spare: Rc::new(RefCell::new(None)),
        })
    }

    /// A read-only SQLite connection on the index (setting SQLite up and
    /// registering the lazy VFS, the first time in this worker).
    pub fn connect(&self) -> Result<rusqlite::Connection> {
        let files = files()?;
        files.insert_shared(&self.name, self.source.clone());
        files.open(&self.name, VFS_NAME).inspect_err(|_| {
            files.remove(&self.name);
        })
    }

    /// The index read without SQLite ([`Reader`]), over the same pages.
    pub fn reader(&self) -> Result<Reader<ReaderPages>> {
        let mut reader = Reader::open(ReaderPages(self.source.clone()))?;
        reader.set_clock(host::now_ms);
        Ok(reader)
    }

    /// One attempt at a search with the reader: the pages it lacks are
    /// collected, not fetched one at a time ([`Reader::attempt`]). The
    /// results, or the pages (1-based) to fetch before the next attempt.
    pub fn attempt(
        &self,
        reader: &mut Reader<ReaderPages>,
        planned: &PlannedSearch,
    ) -> Result<std::result::Result<SearchResults, Vec<u32>>> {
        lock(&self.source).collect = Some(BTreeSet::new());
        let out = reader.attempt(planned);
        let missed = lock(&self.source).collect.take().unwrap_or_default();
        match out? {
            Some(results) => Ok(Ok(results)),
            None if missed.is_empty() => Err(Error::new(
                "internal.error",
                "the reader missed pages but named none",
            )),
            None => Ok(Err(missed.into_iter().map(|p| p + 1).collect())),
        }
    }

    /// Runs `f` (reads through this index's connection) with the pages
    /// at hand only: a read of a missing page fails instead of fetching
    /// it. For lookups that only help when free (the leaf-end hashes of
    /// the warm-up).
    pub fn local_only<T>(&self, f: impl FnOnce() -> T) -> T {
        lock(&self.source).local_only = true;
        let out = f();
        lock(&self.source).local_only = false;
        // A read it refused is not the session's error.
        let _ = self.take_error();
        out
    }

    /// Bytes of page `page` (1-based) if already here; no request.
    pub fn peek(&self, page: u32) -> Option<Vec<u8>> {
        lock(&self.source).peek(page.checked_sub(1)?)
    }

    /// Fetches the pages (1-based) not here yet, all at once: on a server
    /// that serves several ranges per request, runs of adjacent pages in
    /// requests of `RANGES_PER_REQUEST` ranges; else runs joined as
    /// [`gitsense_engine::index::pagevfs::coalesce_runs`] says, at most
    /// `MAX_PARALLEL` requests. From the packed file when there is one:
    /// if that fails in any way (not there, not what its lengths say) and
    /// a raw index is published, the round is asked again of the raw
    /// index, which serves every later one, and `info().lazy.packedOff`
    /// says why.
    pub async fn fetch_pages(&self, pages: &[u32]) -> Result<()> {
        match self.fetch_round(pages).await {
            Err((e, true)) if lock(&self.source).raw.is_some() => {
                self.drop_packed(&e);
                self.fetch_round(pages).await.map_err(|(e, _)| e)
            }
            r => r.map_err(|(e, _)| e),
        }
    }

    /// Stops reading the packed file for the session (it failed with `e`).
    fn drop_packed(&self, e: &Error) {
        lock(&self.source).drop_packed(e);
    }

    /// One round of [`LazyIndex::fetch_pages`]; a failure says whether
    /// it read the packed file.
    async fn fetch_round(&self, pages: &[u32]) -> std::result::Result<(), (Error, bool)> {
        const MAX_PARALLEL: usize = 24;
        // A Range header of 64 ranges is about 1.3 KB, well inside what
        // servers accept (nginx: 8 KB; Apache: 200 ranges).
        const RANGES_PER_REQUEST: usize = 64;
        let (url, size, page_size, timeout, multi, runs, packed) = {
            let s = lock(&self.source);
            let missing = pages
                .iter()
                .filter_map(|p| p.checked_sub(1))
                .filter(|&p| p < s.page_count && !s.has(p))
                .collect::<std::collections::BTreeSet<u32>>()
                .into_iter();
            let multi = s.stats.multi_range;
            let runs = if multi {
                gitsense_engine::index::pagevfs::adjacent_runs(missing)
            } else {
                gitsense_engine::index::pagevfs::coalesce_runs(missing, MAX_PARALLEL)
            };
            // Byte ranges, and for the packed file each page's length.
            let packed = s.packed.as_ref().map(|p| {
                (
                    p.url.clone(),
                    p.size,
                    runs.iter().map(|r| p.range(r.0, r.1)).collect::<Vec<_>>(),
                )
            });
            (
                s.raw.clone().unwrap_or_default(),
                s.size,
                s.page_size,
                s.fetch_timeout_ms,
                multi,
                runs,
                packed,
            )
        };
        if runs.is_empty() {
            return Ok(());
        }
        let used_packed = packed.is_some();
        let fail = |e: JsValue| {
            (
                js_error(&e, "network.failed", "prefetching index pages"),
                used_packed,
            )
        };
        let (url, size, starts, ends, lengths) = match packed {
            Some((url, size, ranges)) => {
                let starts = ranges.iter().map(|r| r.0 as f64).collect();
                let ends = ranges.iter().map(|r| r.1 as f64).collect();
                let lengths: Vec<u32> = ranges.into_iter().flat_map(|r| r.2).collect();
                (url, size, starts, ends, Some(lengths))
            }
            None => (
                url,
                size,
                runs.iter()
                    .map(|r| (u64::from(r.0) * page_size) as f64)
                    .collect(),
                runs.iter()
                    .map(|r| ((u64::from(r.1) + 1) * page_size - 1) as f64)
                    .collect(),
                None,
            ),
        };
        let t = host::now_ms();
        let answers = if multi {
            host::range_fetch_multi(
                &url,
                starts,
                ends,
                size as f64,
                timeout,
                RANGES_PER_REQUEST as u32,
            )
            .await
        } else {
            host::range_fetch_all(&url, starts, ends, size as f64, timeout).await
        }
        .map_err(fail)?;
        let fell_back = multi
            && js_sys::Reflect::get(&answers, &JsValue::from_str("fellBack"))
                .is_ok_and(|v| v.is_truthy());
        let wire: u64 = js_sys::Array::from(&answers)
            .iter()
            .map(|a| u64::from(Uint8Array::new(&a).length()))
            .sum();
        let pages: js_sys::Array = match lengths {
            Some(lengths) => {
                let counts = runs.iter().map(|r| r.1 - r.0 + 1).collect();
                host::inflate_runs(&answers, lengths, counts, page_size as f64).map_err(fail)?
            }
            None => answers.into(),
        };
        let mut s = lock(&self.source);
        if fell_back {
            // Range by range from now on, joined as on any other host.
            s.stats.multi_range = false;
        }
        s.stats.prefetch_rounds += 1;
        s.stats.prefetch_wait_ms += host::now_ms() - t;
        s.stats.prefetch_requests += if multi && !fell_back {
            runs.len().div_ceil(RANGES_PER_REQUEST) as u64
        } else {
            runs.len() as u64
        };
        s.stats.prefetch_bytes += wire;
        for (i, r) in runs.iter().enumerate() {
            let bytes = Uint8Array::new(&pages.get(i as u32)).to_vec();
            s.hold(r.0, &bytes);
        }
        Ok(())
    }

    /// Usable bytes per page (page size less the reserved bytes).
    pub fn usable_size(&self) -> usize {
        self.manifest.page_size as usize
    }

    /// The structured error of the last failed page read, if any.
    pub fn take_error(&self) -> Option<Error> {
        files_if_any().and_then(|f| f.take_error())
    }

    /// Whether pages are being copied into OPFS.
    pub fn filling(&self) -> bool {
        lock(&self.source).fill.is_some()
    }

    /// Stores the pages held in memory ([`LazySource::store_held`]) once
    /// the worker is idle: after the answer that fetched them went out.
    pub fn store_held_later(&self) {
        let source = Arc::clone(&self.source);
        wasm_bindgen_futures::spawn_local(async move {
            host::sleep(0).await;
            lock(&source).store_held();
        });
    }

    /// Stops copying pages into OPFS (the fill files are closed, kept for
    /// a later visit); `reason` shows in `info().lazy.reason`.
    pub fn stop_fill(&self, reason: String) {
        lock(&self.source).stop_fill(reason);
    }

    /// Stops the fill for a storage failure `e` (its code and message in
    /// `info().lazy.reason`); the fill reports `e` (`fillerror`).
    pub fn fail_fill(&self, e: Error) {
        lock(&self.source).fill_failed(e);
    }

    /// The storage failure that stopped the fill, once.
    pub fn take_fill_error(&self) -> Option<Error> {
        lock(&self.source).fill_error.take()
    }

    /// Pages stored so far and in total.
    pub fn progress(&self) -> (u32, u32) {
        let s = lock(&self.source);
        (s.stored, s.page_count)
    }

    /// Fetches the next run of missing pages (one request) into the fill
    /// file; `Ok(false)` once every page is stored (or there is no fill).
    /// From the packed file when there is one (a run of up to
    /// `FILL_CHUNK_BYTES` of it); should that fail, from the raw index.
    pub async fn fill_step(&self) -> Result<bool> {
        let (url, size, page_size, timeout, run, packed) = {
            let mut s = lock(&self.source);
            s.store_held();
            if s.fill.is_none() {
                // Stopped by a storage failure: the fill fails with it
                // (queries go on from memory).
                return match s.fill_error.take() {
                    Some(e) => Err(e),
                    None => Ok(false),
                };
            }
            let max = (FILL_CHUNK_BYTES / s.page_size).max(1) as u32;
            let run = match &s.packed {
                // Pages compress: ask for more of them, as many as fit the
                // chunk packed.
                Some(p) => s.next_missing(max * 8).map(|(first, count)| {
                    let (a, b) = (first as usize, (first + count) as usize);
                    let limit = p.offsets[a] + FILL_CHUNK_BYTES;
                    let fit = p.offsets[a + 1..=b].partition_point(|&o| o <= limit);
                    (first, (fit as u32).max(1))
                }),
                None => s.next_missing(max),
            };
            let packed = match (&s.packed, run) {
                (Some(p), Some((first, count))) => {
                    Some((p.url.clone(), p.size, p.range(first, first + count - 1)))
                }
                _ => None,
            };
            (
                s.raw.clone(),
                s.size,
                s.page_size,
                s.fetch_timeout_ms,
                run,
                packed,
            )
        };
        let Some((first, count)) = run else {
            return Ok(false);
        };
        let fail = |e: JsValue| js_error(&e, "network.failed", "filling the index copy");
        let mut wire = 0u64;
        let mut bytes = None;
        if let Some((purl, psize, (start, end, lengths))) = packed {
            let got =
                match host::range_fetch(&purl, start as f64, end as f64, psize as f64, timeout)
                    .await
                {
                    Ok(answer) => {
                        wire = end - start + 1;
                        let answers = js_sys::Array::of1(&answer);
                        host::inflate_runs(&answers, lengths, vec![count], page_size as f64)
                            .map(|pages| Uint8Array::new(&pages.get(0)).to_vec())
                    }
                    Err(e) => Err(e),
                };
            match got {
                Ok(b) => bytes = Some(b),
                Err(e) if url.is_some() => {
                    self.drop_packed(&fail(e));
                    // The next step asks the raw index.
                    return Ok(true);
                }
                Err(e) => return Err(fail(e)),
            }
        }
        let bytes = match (bytes, url) {
            (Some(b), _) => b,
            (None, None) => {
                return Err(Error::new(
                    "lazy.unavailable",
                    "the index has no file to read pages from",
                ))
            }
            (None, Some(url)) => {
                let start = u64::from(first) * page_size;
                let end = u64::from(first + count) * page_size - 1;
                let b = host::range_fetch(&url, start as f64, end as f64, size as f64, timeout)
                    .await
                    .map_err(fail)?;
                let b = Uint8Array::new(&b).to_vec();
                wire = b.len() as u64;
                b
            }
        };
        let mut s = lock(&self.source);
        s.stats.fill_requests += 1;
        s.stats.fill_bytes += wire;
        if s.fill.is_some() {
            // Pages a query fetched meanwhile are written again: the same
            // bytes (the file is content-addressed).
            s.keep(first, &bytes);
            s.commit();
        }
        Ok(true)
    }

    /// Hashes the complete fill file and imports it into `storage` as a
    /// stored index, if its SHA-256 is the manifest's; yields between
    /// chunks so queries keep being answered. A mismatch discards the fill.
    pub async fn store_verified(&self, storage: &Storage) -> Result<StoredIndex> {
        use sha2::{Digest, Sha256};
        let size = self.manifest.size;
        let mut hasher = Sha256::new();
        let mut offset = 0u64;
        let mut buf = vec![0u8; VERIFY_CHUNK_BYTES.min(size) as usize];
        let mut import = storage.begin_store(&self.manifest.sha256, size).await?;
        while offset < size {
            let n = (size - offset).min(VERIFY_CHUNK_BYTES) as usize;
            {
                let s = lock(&self.source);
                let fill = s.fill.as_ref().ok_or_else(|| {
                    Error::new(
                        "storage.failed",
                        s.fill_stopped
                            .clone()
                            .unwrap_or_else(|| "the fill stopped".into()),
                    )
                })?;
                host::fill_read(fill, offset as f64, &mut buf[..n])
                    .map_err(|e| js_error(&e, "storage.failed", "reading the index copy"))?;
            }
            hasher.update(&buf[..n]);
            import.write(&buf[..n])?;
            offset += n as u64;
            host::sleep(0).await;
        }
        let sha = gitsense_engine::util::hex(&hasher.finalize());
        if sha != self.manifest.sha256 {
            let e = Error::new(
                "download.checksum_mismatch",
                format!(
                    "the index read by range has SHA-256 {sha} but the manifest announces {}; \
                     nothing read by range is used any more",
                    self.manifest.sha256
                ),
            );
            self.refuse(e.clone()).await;
            return Err(e);
        }
        import.finish()
    }

    /// `info().lazy`.
    /// The pages read are proven wrong (`e`): reads fail with `e` from
    /// now on, the memory cache and the fill files are dropped, and the
    /// index is marked so that later visits do not read it by range
    /// (`refused-<base>` in the fill directory, see [`LazyIndex::is_refused`]).
    pub async fn refuse(&self, e: Error) {
        {
            let mut s = lock(&self.source);
            s.stop_fill(format!("{}: {}", e.code, e.message));
            s.cache = PageCache::new(1);
            s.refused = Some(e);
        }
        self.spare.borrow_mut().take();
        host::fill_remove(&self.base, "").await;
        host::mark_refused(&self.base).await;
    }

    /// Whether an earlier visit proved the pages of `sha256` read by range
    /// wrong ([`LazyIndex::refuse`]).
    pub async fn is_refused(scope: &str, sha256: &str) -> bool {
        host::is_refused(&fill_base(scope, sha256))
            .await
            .is_truthy()
    }

    pub fn info(&self, complete: bool) -> LazyInfo {
        let s = lock(&self.source);
        let state = if complete {
            "complete"
        } else if s.fill.is_some() {
            "filling"
        } else {
            "memory"
        };
        LazyInfo {
            state,
            reason: s.fill_stopped.clone(),
            url: s.reads_from(),
            page_size: s.page_size,
            page_count: s.page_count,
            pages_stored: s.stored,
            // (a stored page read this visit is in both)
            pages_cached: s.cache.pages().filter(|&p| !s.present[p as usize]).count() as u32,
            packed_off: s.packed_off.clone(),
            hot_off: s.hot_off.clone(),
            fill_error: s.fill_error.as_ref().map(|e| e.code.clone()),
            stats: s.stats.clone(),
        }
    }

    /// A connection of its own for the warm-up, with its ranking tally;
    /// give it back with [`LazyIndex::give_back`].
    pub fn take_connection(&self) -> Result<(rusqlite::Connection, Tally)> {
        match self.spare.borrow_mut().take() {
            Some(c) => Ok(c),
            None => {
                let conn = self.connect()?;
                let tally = gitsense_engine::index::rank::register(&conn)?;
                Ok((conn, tally))
            }
        }
    }

    pub fn give_back(&self, conn: (rusqlite::Connection, Tally)) {
        *self.spare.borrow_mut() = Some(conn);
    }

    /// Runs the warm-up for a query (see [`warm`]); failures only mean
    /// the query reads its pages one by one.
    pub async fn warm(&self, planned: &PlannedSearch) {
        let Ok((conn, tally)) = self.take_connection() else {
            return;
        };
        // Ranked as the engine will rank (the reader's language first), so
        // the rows fetched are the rows it returns.
        tally.demote(planned.demoted());
        let _ = warm::warm(self, &conn, &tally, planned).await;
        tally.demote(None);
        self.give_back((conn, tally));
    }

    /// Closes the fill files, keeping them for a later visit to resume.
    pub fn close_files(&self) {
        self.spare.borrow_mut().take();
        if let Some(f) = files_if_any() {
            f.remove(&self.name);
        }
        let mut s = lock(&self.source);
        if let Some(fill) = s.fill.take() {
            host::fill_close(&fill);
            s.fill_stopped = Some("the engine was closed".into());
        }
    }

    /// Closes the fill files and removes them (the copy is stored, or not
    /// wanted any more).
    pub async fn discard(&self) {
        self.spare.borrow_mut().take();
        if let Some(f) = files_if_any() {
            f.remove(&self.name);
        }
        if let Some(fill) = lock(&self.source).fill.take() {
            host::fill_close(&fill);
        }
        host::fill_remove(&self.base, "").await;
    }
}
