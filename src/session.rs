//! One open index in the browser: storage, the engine over the current
//! index, and the update protocol against a published manifest.
//!
//! - [`Session::open`] picks a storage backend, opens the newest stored
//!   index without touching the network, and downloads (manifest → index →
//!   size and SHA-256 check → store → open → revision check) only when
//!   nothing usable is stored.
//! - [`Session::update`] makes one manifest request (none when the browser
//!   is offline). A changed manifest downloads the new index into a new
//!   file while the current one keeps answering; only a verified index is
//!   swapped in, then the old file is removed. A failed download leaves the
//!   current index and storage as they were.
//! - With nothing stored and OPFS usable (`storage: 'auto'`, or
//!   `'lazy'`), [`Session::open`] reads the published raw index lazily over
//!   HTTP Range requests instead ([`super::storage::lazy`]): queries are
//!   answered at once, and [`Session::fill`] copies the remaining pages
//!   into OPFS, verifies the copy against the manifest's SHA-256, stores it
//!   and switches the engine to it between two searches. A server that
//!   cannot serve ranges makes it download the whole index instead, and
//!   `info().storageReason` says why.
//! - [`Session::plan`] parses and plans a query once, [`Session::warm`]
//!   fetches the pages it will read (lazy mode), and
//!   [`Session::search_planned`] answers with the results object as JSON
//!   text, byte for byte what the native CLI prints.
//! - [`Session::plan_visit`] decides, once the index is open, the visit's
//!   background work ([`super::visit`]: the fill under the page's offline
//!   policy, or an update check); [`Session::take_background`] hands it
//!   to the one export that runs it when the worker says it is time.

use super::host::{self, js_error, now_ms, report, to_js};
use super::storage::lazy::{LazyIndex, LazyInfo, Prefetched, ReaderPages};
use super::storage::{newest, Storage, StorageKind, StoragePref, StoredIndex};
use super::update_check::UpdateCheck;
use super::visit::{self, Background, OfflineState, OfflineVisit, Opened};
use gitsense_engine::error::{Error, Result};
use gitsense_engine::index::IndexInfo;
use gitsense_engine::reader::Reader;
use gitsense_engine::search::{results_json, Engine, PlannedSearch};
use gitsense_engine::util::from_json_arg;
use gitsense_engine::SearchOptions;
use gitsense_publish::Manifest;
use js_sys::{Function, Promise, Uint8Array};
use serde::Serialize;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::pin;
use std::rc::Rc;
use std::task::Poll;
use wasm_bindgen::{JsCast, JsValue};

/// How `open` got its index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Opened from storage, no network needed.
    Stored,
    /// Downloaded during this session.
    Downloaded,
    /// Read over HTTP Range requests during this session (see
    /// `info().lazy` for the copy into OPFS).
    Lazy,
}

/// What an update check did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateStatus {
    /// `current` (the manifest names the index in use), `updated` (a new
    /// index was downloaded and swapped in) or `offline` (no manifest could
    /// be fetched; the stored index keeps answering).
    pub status: &'static str,
    pub revision: String,
    /// Why the check was skipped, for `offline`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Milliseconds spent in each stage, for `info().timings`.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Timings {
    pub storage_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manifest_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub download_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store_ms: Option<f64>,
    pub open_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_search_ms: Option<f64>,
    /// Lazy mode: the page fetches of the last search (batched rounds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_warm_ms: Option<f64>,
    /// What answered the last search: `reader` (an index read lazily,
    /// without SQLite) or `sqlite`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_search_by: Option<&'static str>,
    /// Lazy mode: from opening to the verified copy being switched in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fill_ms: Option<f64>,
}

/// What `engine.info()` returns.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    pub storage: StorageKind,
    pub storage_reason: String,
    pub source: Source,
    pub manifest_url: String,
    pub file: String,
    pub sha256: String,
    pub index: IndexInfo,
    pub size_bytes: u64,
    /// Bytes of the index downloaded during this session (compressed, on
    /// the wire; in lazy mode: hot pages, page reads and the fill).
    pub downloaded_bytes: u64,
    pub online: bool,
    /// Whether SQLite is set up for the index in use: an index read
    /// lazily answers the searches the reader can run without it.
    pub sqlite_open: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_update: Option<UpdateStatus>,
    pub timings: Timings,
    /// Lazy mode: state of the copy into OPFS, pages and requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lazy: Option<LazyInfo>,
    /// The offline policy's inputs for this visit and whether the copy
    /// runs (see [`Session::plan_visit`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offline: Option<OfflineState>,
}

/// The visit's background work, waiting for the worker to run it.
pub enum BackgroundWork {
    /// The copy into OPFS ([`Session::fill`]).
    Fill,
    /// The update check, with the manifest text the page fetched for this
    /// visit (its hand-off), if it fetched one.
    Update(std::pin::Pin<Box<dyn Future<Output = Option<String>>>>),
}

/// Where the index in use lives.
enum Location {
    Stored(StoredIndex),
    Lazy(LazyIndex),
}

struct Current {
    /// SQLite's engine. An index read lazily opens it when a search first
    /// needs it (one the reader cannot run, `Current::engine`), so a
    /// reader who only searches never sets SQLite up.
    engine: std::cell::OnceCell<Engine>,
    /// An index read lazily: searches without SQLite.
    reader: Option<RefCell<Reader<ReaderPages>>>,
    info: IndexInfo,
    location: Location,
}

impl Current {
    fn stored(engine: Engine, stored: StoredIndex) -> Current {
        Current {
            info: engine.info().clone(),
            engine: engine.into(),
            reader: None,
            location: Location::Stored(stored),
        }
    }

    /// The SQLite engine, opened now if it is not open yet.
    fn engine(&self) -> Result<&Engine> {
        if let Some(e) = self.engine.get() {
            return Ok(e);
        }
        let Location::Lazy(lazy) = &self.location else {
            return Err(Error::new(
                "internal.error",
                "a stored index without its engine",
            ));
        };
        let engine = lazy
            .connect()
            .and_then(open_engine)
            .map_err(|e| lazy.take_error().unwrap_or(e))?;
        Ok(self.engine.get_or_init(|| engine))
    }

    fn sha256(&self) -> &str {
        match &self.location {
            Location::Stored(s) => &s.sha256,
            Location::Lazy(l) => &l.manifest.sha256,
        }
    }

    fn lazy(&self) -> Option<&LazyIndex> {
        match &self.location {
            Location::Lazy(l) => Some(l),
            Location::Stored(_) => None,
        }
    }

    /// Lets go of what the index holds; a stored file is removed by
    /// `retire`.
    async fn retire(self, storage: &Storage) -> Result<()> {
        drop(self.engine);
        match self.location {
            Location::Stored(s) => storage.remove(&s).await,
            Location::Lazy(l) => {
                l.discard().await;
                Ok(())
            }
        }
    }
}

/// Browser storage, or its setup still running: a first visit that reads
/// lazily sets it up while its first query runs, or, when the page's
/// prefetch was in before the session opened, only once something needs
/// it (the fill; see [`Session::open`]).
enum StorageSlot {
    Ready(Rc<Storage>),
    /// The setup's promise, and where it leaves the storage, its reason and
    /// how long it took.
    Pending(js_sys::Promise, Rc<RefCell<Option<Selected>>>),
    /// Not started: the preference and manifest URL to set it up with.
    Deferred(StoragePref, String),
    Failed(Error),
}

type Selected = (Result<(Storage, String)>, f64);

/// Starts setting up browser storage (in the background: JS tasks
/// interleave with the session's own work): the setup's promise and where
/// it leaves its result.
fn start_storage(
    pref: StoragePref,
    manifest_url: &str,
) -> (js_sys::Promise, Rc<RefCell<Option<Selected>>>) {
    let cell = Rc::new(RefCell::new(None));
    let promise = wasm_bindgen_futures::future_to_promise({
        let (cell, url) = (cell.clone(), manifest_url.to_string());
        async move {
            let t = now_ms();
            let selected = Storage::select(pref, &url).await;
            *cell.borrow_mut() = Some((selected, now_ms() - t));
            Ok(JsValue::UNDEFINED)
        }
    });
    (promise, cell)
}

/// `f`'s output if it is ready within a microtask turn (a promise that has
/// already settled), else `None`; `f` can be polled again after `None`.
async fn ready_soon<F: std::future::Future>(mut f: std::pin::Pin<&mut F>) -> Option<F::Output> {
    for turn in 0..2 {
        if let Poll::Ready(v) = std::future::poll_fn(|cx| Poll::Ready(f.as_mut().poll(cx))).await {
            return Some(v);
        }
        if turn == 0 {
            let _ =
                wasm_bindgen_futures::JsFuture::from(js_sys::Promise::resolve(&JsValue::UNDEFINED))
                    .await;
        }
    }
    None
}

/// Whether the page's prefetch makes this a first visit read lazily: no
/// stored copy, the fill files open, the manifest in and ranges served.
fn first_lazy_visit(pref: StoragePref, p: &Prefetched) -> bool {
    matches!(pref, StoragePref::Auto | StoragePref::Lazy)
        && p.fill_files().is_some()
        && p.manifest.is_some()
        && p.probe.is_none()
}

/// Where browser storage and the page's prefetch stand when the session
/// opens: the storage slot, the prefetch if it is in, and whether this is
/// a first visit read lazily.
///
/// A prefetch already in that makes this a first lazy visit: storage
/// waits until something needs it (the fill), so that its setup does not
/// take turns with the first query's work. Else browser storage is set up
/// in the background, racing the prefetch: a stored index opens as soon
/// as storage is there, a first lazy visit as soon as the prefetch is.
async fn storage_or_prefetch<F: Future<Output = Prefetched>>(
    pref: StoragePref,
    manifest_url: &str,
    mut prefetched: std::pin::Pin<&mut F>,
) -> (StorageSlot, Option<Prefetched>, bool) {
    let mut arrived = ready_soon(prefetched.as_mut()).await;
    let first_lazy = arrived.as_ref().is_some_and(|p| first_lazy_visit(pref, p));
    let pending = (!first_lazy).then(|| start_storage(pref, manifest_url));
    if let (None, Some((promise, _))) = (&arrived, &pending) {
        let mut storage_ready = pin!(wasm_bindgen_futures::JsFuture::from(promise.clone()));
        arrived = std::future::poll_fn(|cx| {
            if let Poll::Ready(p) = prefetched.as_mut().poll(cx) {
                return Poll::Ready(Some(p));
            }
            storage_ready.as_mut().poll(cx).map(|_| None)
        })
        .await;
    }
    let slot = match pending {
        Some((promise, cell)) => StorageSlot::Pending(promise, cell),
        None => StorageSlot::Deferred(pref, manifest_url.to_string()),
    };
    let first_lazy = first_lazy || arrived.as_ref().is_some_and(|p| first_lazy_visit(pref, p));
    (slot, arrived, first_lazy)
}

pub struct Session {
    storage: RefCell<StorageSlot>,
    /// Lazy mode's range request timeout (`requestTimeoutMs`), if set.
    request_timeout_ms: Option<u32>,
    storage_reason: RefCell<String>,
    manifest_url: String,
    source: Source,
    current: RefCell<Option<Current>>,
    downloaded_bytes: Cell<u64>,
    last_update: RefCell<Option<UpdateStatus>>,
    timings: RefCell<Timings>,
    /// Set while an update downloads, so two never run at once.
    updating: Cell<bool>,
    /// Set while the lazy fill runs.
    filling: Cell<bool>,
    /// `info().lazy` of a lazy session once its copy was switched in.
    lazy_done: RefCell<Option<LazyInfo>>,
    /// Set when the index read by range proved wrong and no verified
    /// download replaced it: searches fail with this error.
    refused: RefCell<Option<Error>>,
    opened_at: f64,
    /// `info().offline`, once [`Session::plan_visit`] decided.
    offline: Cell<Option<OfflineState>>,
    /// The visit's background work until it is taken to run.
    background: RefCell<Option<BackgroundWork>>,
    /// The page's and the background's update checks, shared.
    update_check: UpdateCheck,
}

fn closed() -> Error {
    Error::new("engine.closed", "the search engine has been closed")
}

/// How long one search may work in the browser, in milliseconds: the
/// worker answers one message at a time, so a query matching half the
/// index (`a*`) must not hold up the next one (see
/// `Engine::set_time_budget`).
const SEARCH_BUDGET_MS: f64 = 150.0;

/// Rounds of page fetches the reader makes for one search at most (a
/// search needs about one per b-tree level of each of its stages); then it
/// reads what it still lacks page by page.
const MAX_READ_ROUNDS: usize = 12;

fn open_engine(conn: rusqlite::Connection) -> Result<Engine> {
    let mut engine = Engine::from_connection(conn)?;
    engine.set_clock(now_ms);
    engine.set_budget_clock(crate::storage::lazy::work_clock);
    engine.set_time_budget(Some(SEARCH_BUDGET_MS));
    Ok(engine)
}

/// A verified download, not yet stored.
struct Download {
    manifest: Manifest,
    bytes: Uint8Array,
}

/// The manifest at `url`; `timeout_ms` bounds the request
/// (`network.timeout`).
pub(crate) async fn fetch_manifest(url: &str, timeout_ms: Option<u32>) -> Result<Manifest> {
    let text = host::fetch_text(url, timeout_ms)
        .await
        .map_err(|e| js_error(&e, "network.failed", "fetching the manifest"))?;
    parse_manifest(&text.as_string().unwrap_or_default())
}

/// A manifest this module can use, the index it names small enough to
/// hold (`download.too_large` before anything of it is requested).
fn parse_manifest(text: &str) -> Result<Manifest> {
    let m = Manifest::parse(text)?;
    m.check_browser_size()?;
    Ok(m)
}

/// The index a manifest names, downloaded and checked against its SHA-256.
pub(crate) struct Fetched {
    pub bytes: Uint8Array,
    pub download_ms: f64,
    pub verify_ms: f64,
}

/// Downloads the index `manifest` (fetched from `manifest_url`) names
/// and checks its SHA-256 (`download.checksum_mismatch`: nothing is kept).
pub(crate) async fn download_verified(
    manifest_url: &str,
    manifest: &Manifest,
    on_progress: Option<&Function>,
    request_timeout_ms: Option<u32>,
) -> Result<Fetched> {
    let url = host::resolve_url(&manifest.file, manifest_url)
        .map_err(|e| js_error(&e, "manifest.invalid", "resolving the index URL"))?;
    let t = now_ms();
    let bytes = if manifest.compression == gitsense_publish::COMPRESSION_PAGES {
        download_packed(
            manifest_url,
            manifest,
            &url,
            on_progress,
            request_timeout_ms,
        )
        .await?
    } else {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Expect<'a> {
            size: u64,
            compressed_size: u64,
            compression: &'a str,
        }
        let expect = to_js(&Expect {
            size: manifest.size,
            compressed_size: manifest.compressed_size,
            compression: &manifest.compression,
        });
        host::download_index(&url, expect, on_progress.cloned(), request_timeout_ms)
            .await
            .map_err(|e| js_error(&e, "network.failed", "downloading the index"))?
            .unchecked_into()
    };
    let download_ms = now_ms() - t;
    let t = now_ms();
    report(on_progress, "verify", 0.0, manifest.size as f64);
    let sha = host::sha256_hex(&bytes)
        .await
        .map_err(|e| js_error(&e, "download.verify_failed", "hashing the index"))?
        .as_string()
        .unwrap_or_default();
    if sha != manifest.sha256 {
        return Err(Error::new(
            "download.checksum_mismatch",
            format!(
                "the downloaded index has SHA-256 {sha} but the manifest announces {}; \
                 it was not stored",
                manifest.sha256
            ),
        ));
    }
    report(
        on_progress,
        "verify",
        manifest.size as f64,
        manifest.size as f64,
    );
    Ok(Fetched {
        bytes,
        download_ms,
        verify_ms: now_ms() - t,
    })
}

/// The index of a manifest of compression `pages`: the page lengths from
/// the end of its hot file, then the packed file (`url`) fetched whole and
/// inflated page by page.
async fn download_packed(
    manifest_url: &str,
    manifest: &Manifest,
    url: &str,
    on_progress: Option<&Function>,
    request_timeout_ms: Option<u32>,
) -> Result<Uint8Array> {
    let hot_url = manifest
        .hot_file
        .as_deref()
        .ok_or_else(|| Error::new("manifest.invalid", "a packed download needs a hotFile"))
        .and_then(|f| {
            host::resolve_url(f, manifest_url)
                .map_err(|e| js_error(&e, "manifest.invalid", "resolving the hot file's URL"))
        })?;
    let hot: Uint8Array = host::fetch_hot(&hot_url, to_js(manifest), request_timeout_ms)
        .await
        .map_err(|e| js_error(&e, "network.failed", "downloading the hot file"))?
        .unchecked_into();
    let offsets = gitsense_publish::packed_offsets_in_hot(manifest, &hot.to_vec())?;
    let lengths = offsets.windows(2).map(|w| (w[1] - w[0]) as u32).collect();
    Ok(host::download_packed(
        url,
        manifest.size as f64,
        manifest.packed_size as f64,
        manifest.page_size as f64,
        lengths,
        on_progress.cloned(),
        request_timeout_ms,
    )
    .await
    .map_err(|e| js_error(&e, "network.failed", "downloading the index"))?
    .unchecked_into())
}

impl Session {
    /// Opens the index published at `manifest_url`, from storage when a
    /// usable copy is there, else by downloading it.
    ///
    /// A first visit that reads lazily (the worker found no stored copy,
    /// opened the fill files and has the hot pages, before the module was
    /// ready: `prefetched` carries the fill) opens the raw index at once:
    /// nothing before the first answer needs the storage pool. Its setup
    /// starts when the fill needs it if the prefetch was in when the
    /// session opened, else at once, racing the prefetch.
    pub async fn open(
        manifest_url: &str,
        pref: StoragePref,
        request_timeout_ms: Option<u32>,
        on_progress: Option<&Function>,
        prefetched: impl std::future::Future<Output = Prefetched>,
    ) -> Result<Session> {
        let t0 = now_ms();
        let mut prefetched = pin!(prefetched);
        let (slot, arrived, first_lazy) =
            storage_or_prefetch(pref, manifest_url, prefetched.as_mut()).await;
        let mut session = Session::new(slot, manifest_url, request_timeout_ms, t0);
        if first_lazy {
            let when = if matches!(&*session.storage.borrow(), StorageSlot::Deferred(..)) {
                "when the background copy starts"
            } else {
                "while the first query runs"
            };
            *session.storage_reason.borrow_mut() = format!(
                "OPFS sync access handles are available (a first visit: browser storage is set up {when})"
            );
        } else if session.open_stored().await? {
            report(on_progress, "ready", 1.0, 1.0);
            return Ok(session);
        }
        if !host::is_online() {
            return Err(Error::new(
                "network.offline",
                "the browser is offline and no index is stored yet",
            ));
        }
        // What the page fetched meanwhile (storage is ready now, or being
        // set up).
        let prefetched = match arrived {
            Some(p) => p,
            None => prefetched.await,
        };
        let t = now_ms();
        let manifest = match prefetched.manifest.as_deref() {
            Some(text) => parse_manifest(text)?,
            None => fetch_manifest(manifest_url, request_timeout_ms).await?,
        };
        session.timings.borrow_mut().manifest_ms = Some(now_ms() - t);
        report(on_progress, "manifest", 1.0, 1.0);
        let lazy_wanted = first_lazy
            || pref == StoragePref::Lazy
            || (pref == StoragePref::Auto && session.storage().await?.is_opfs());
        let mut lazy_failure = None;
        if lazy_wanted {
            match session.open_lazily(&manifest, prefetched, first_lazy).await {
                Ok(cur) => {
                    *session.current.borrow_mut() = Some(cur);
                    session.source = Source::Lazy;
                }
                // Anything but a format problem: read it whole instead.
                Err(e) if !e.code.starts_with("index.") => lazy_failure = Some(e),
                Err(e) => return Err(e),
            }
        }
        if session.source != Source::Lazy {
            session.storage().await?;
            if let Some(e) = lazy_failure {
                let reason = format!(
                    "{}; lazy loading is not possible ({}: {}), so the whole index was downloaded",
                    session.storage_reason.borrow(),
                    e.code,
                    e.message
                );
                *session.storage_reason.borrow_mut() = reason;
            }
            let download = session.download(manifest, on_progress).await?;
            let cur = session.install(download, on_progress).await?;
            *session.current.borrow_mut() = Some(cur);
            session.source = Source::Downloaded;
        }
        report(on_progress, "ready", 1.0, 1.0);
        Ok(session)
    }

    /// A session with no index open yet.
    fn new(
        storage: StorageSlot,
        manifest_url: &str,
        request_timeout_ms: Option<u32>,
        opened_at: f64,
    ) -> Session {
        Session {
            storage: RefCell::new(storage),
            request_timeout_ms,
            storage_reason: RefCell::new(String::new()),
            manifest_url: manifest_url.to_string(),
            source: Source::Stored,
            current: RefCell::new(None),
            downloaded_bytes: Cell::new(0),
            last_update: RefCell::new(None),
            timings: RefCell::new(Timings::default()),
            updating: Cell::new(false),
            filling: Cell::new(false),
            lazy_done: RefCell::new(None),
            refused: RefCell::new(None),
            opened_at,
            offline: Cell::new(None),
            background: RefCell::new(None),
            update_check: UpdateCheck::default(),
        }
    }

    /// Opens the newest stored index, if one opens; one that does not (a
    /// format this build cannot read) is removed, and so are older
    /// leftovers of an interrupted swap. Whether one is open.
    async fn open_stored(&self) -> Result<bool> {
        let storage = self.storage().await?;
        let mut stored = storage.list().await?;
        while let Some(idx) = newest(stored.iter().cloned()) {
            let t = now_ms();
            match storage.open(&idx).await.and_then(open_engine) {
                Ok(engine) => {
                    self.timings.borrow_mut().open_ms = now_ms() - t;
                    for old in stored.iter().filter(|s| **s != idx) {
                        storage.remove(old).await?;
                    }
                    *self.current.borrow_mut() = Some(Current::stored(engine, idx));
                    return Ok(true);
                }
                Err(e) if e.code.starts_with("index.") => {
                    storage.remove(&idx).await?;
                    stored.retain(|i| i != &idx);
                }
                Err(e) => return Err(e),
            }
        }
        Ok(false)
    }

    /// Opens the index the manifest names for reading by range: a first
    /// visit's pages persist under the site's scope; else where storage
    /// keeps them (OPFS), or in memory only. Not an index an earlier visit
    /// found not to hash to the manifest's SHA-256.
    async fn open_lazily(
        &self,
        manifest: &Manifest,
        prefetched: Prefetched,
        first_lazy: bool,
    ) -> Result<Current> {
        let (scope, persist) = if first_lazy {
            (crate::storage::scope_of(&self.manifest_url), true)
        } else {
            let storage = self.storage().await?;
            (storage.scope().to_string(), storage.is_opfs())
        };
        if LazyIndex::is_refused(&scope, &manifest.sha256).await {
            if let Some((handles, _)) = prefetched.fill_files() {
                host::fill_close(handles);
            }
            return Err(Error::new(
                "download.checksum_mismatch",
                "an earlier visit found that the pages read by range do not hash to the \
                 manifest's SHA-256",
            ));
        }
        self.open_lazy(manifest, prefetched, &scope, persist).await
    }

    /// The session's storage; a setup left running by [`Session::open`]
    /// is waited for (and, when it did not end up in OPFS, the lazy fill
    /// stops: the copy could not be kept).
    async fn storage(&self) -> Result<Rc<Storage>> {
        let deferred = match &*self.storage.borrow() {
            StorageSlot::Deferred(pref, url) => Some((*pref, url.clone())),
            _ => None,
        };
        if let Some((pref, url)) = deferred {
            let (promise, cell) = start_storage(pref, &url);
            *self.storage.borrow_mut() = StorageSlot::Pending(promise, cell);
        }
        let (promise, cell) = match &*self.storage.borrow() {
            StorageSlot::Ready(s) => return Ok(s.clone()),
            StorageSlot::Failed(e) => return Err(e.clone()),
            StorageSlot::Pending(p, c) => (p.clone(), c.clone()),
            StorageSlot::Deferred(..) => {
                return Err(Error::new(
                    "internal.error",
                    "browser storage setup was not started",
                ))
            }
        };
        let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
        // Another caller may have taken it meanwhile.
        if !matches!(&*self.storage.borrow(), StorageSlot::Pending(..)) {
            return Box::pin(self.storage()).await;
        }
        let (selected, ms) = cell.borrow_mut().take().unwrap_or_else(|| {
            let e = Error::new(
                "internal.error",
                "browser storage setup ended without a result",
            );
            (Err(e), 0.0)
        });
        self.timings.borrow_mut().storage_ms = ms;
        let (storage, reason) = match selected {
            Ok(s) => s,
            Err(e) => {
                self.stop_lazy_fill(&format!(
                    "browser storage is not usable ({}: {})",
                    e.code, e.message
                ));
                *self.storage.borrow_mut() = StorageSlot::Failed(e.clone());
                return Err(e);
            }
        };
        if !storage.is_opfs() {
            let why = format!("the storage pool is not in OPFS ({reason})");
            match storage.opfs_failure() {
                // OPFS failed (no room for the pool): the copy fails with it.
                Some(e) => self.fail_lazy_fill(e.clone()),
                None => self.stop_lazy_fill(&why),
            }
        }
        *self.storage_reason.borrow_mut() = reason;
        let storage = Rc::new(storage);
        *self.storage.borrow_mut() = StorageSlot::Ready(storage.clone());
        Ok(storage)
    }

    /// A first open whose verified index does not fit where it was to be
    /// stored (`storage.quota_exceeded`, or the backend failing to write)
    /// moves on to the next backend: OPFS → IndexedDB → memory, the reason
    /// kept in `info().storageReason`. Memory is the last; an update (an
    /// index already open in its backend) never moves, and fails instead.
    async fn fall_back(&self, from: Rc<Storage>, e: Error) -> Result<Rc<Storage>> {
        let next = match from.kind() {
            StorageKind::Opfs => StoragePref::IndexedDb,
            StorageKind::IndexedDb => StoragePref::Memory,
            StorageKind::Memory | StorageKind::Lazy => return Err(e),
        };
        let opening = self.current.borrow().is_none();
        if !opening || !matches!(e.code.as_str(), "storage.quota_exceeded" | "storage.failed") {
            return Err(e);
        }
        let (storage, _) = match Storage::select(next, &self.manifest_url).await {
            Ok(s) => s,
            // IndexedDB not there either: memory.
            Err(_) => Storage::select(StoragePref::Memory, &self.manifest_url).await?,
        };
        let reason = format!(
            "{}; storing in {} failed ({}: {}), so the index is kept in {}",
            self.storage_reason.borrow(),
            from.kind().name(),
            e.code,
            e.message,
            match storage.kind() {
                StorageKind::IndexedDb => "IndexedDB",
                _ => "memory for this visit only",
            }
        );
        *self.storage_reason.borrow_mut() = reason;
        from.release();
        let storage = Rc::new(storage);
        *self.storage.borrow_mut() = StorageSlot::Ready(storage.clone());
        Ok(storage)
    }

    fn stop_lazy_fill(&self, why: &str) {
        if let Ok(Some(lazy)) = self.with_current(|c| c.lazy().cloned()) {
            lazy.stop_fill(format!("no OPFS copy is made: {why}"));
        }
    }

    /// Stops the lazy fill for a storage failure `e`, which the fill then
    /// reports (`fillerror`) and `info().lazy.reason` shows.
    fn fail_lazy_fill(&self, e: Error) {
        if let Ok(Some(lazy)) = self.with_current(|c| c.lazy().cloned()) {
            lazy.fail_fill(e);
        }
    }

    /// Opens the raw index the manifest names over range requests; checks
    /// the revision like a download. `persist`: copy pages into OPFS.
    async fn open_lazy(
        &self,
        manifest: &Manifest,
        prefetched: Prefetched,
        scope: &str,
        persist: bool,
    ) -> Result<Current> {
        let t = now_ms();
        let lazy = LazyIndex::open(
            manifest,
            &self.manifest_url,
            scope,
            persist,
            prefetched,
            self.request_timeout_ms,
        )
        .await?;
        let reader = lazy.reader().map_err(|e| lazy.take_error().unwrap_or(e))?;
        let info = reader.info().clone();
        if info.revision != manifest.revision {
            return Err(Error::new(
                "download.revision_mismatch",
                format!(
                    "the raw index has corpus revision {} but the manifest announces {}",
                    info.revision, manifest.revision
                ),
            ));
        }
        self.timings.borrow_mut().open_ms = now_ms() - t;
        Ok(Current {
            engine: std::cell::OnceCell::new(),
            reader: Some(RefCell::new(reader)),
            info,
            location: Location::Lazy(lazy),
        })
    }

    /// Lazy mode: copies the pages not stored yet into OPFS (progress phase
    /// `fill`), verifies the copy, stores it and switches the engine to it
    /// between two searches. Resolves with `info()`; a no-op when the index
    /// in use is not read lazily or no copy is being made.
    pub async fn fill(&self, on_progress: Option<&Function>) -> Result<SessionInfo> {
        if self.filling.replace(true) {
            return Err(Error::new(
                "engine.busy",
                "the lazy fill is already running",
            ));
        }
        let result = self.fill_inner(on_progress).await;
        self.filling.set(false);
        result?;
        self.info()
    }

    /// The reader's `saveOffline()`: [`Session::fill`] now, whatever the
    /// visit planned, except under policy `never` (`offline.refused`).
    /// `info().offline` reports the copy as running meanwhile, and offers
    /// it again if it fails. Resolves with `info()`; a no-op for an index
    /// that is not read lazily (it is stored whole already).
    pub async fn save_offline(&self, on_progress: Option<&Function>) -> Result<SessionInfo> {
        let before = self.offline.get();
        if before.is_some_and(|s| s.policy == visit::OfflinePolicy::Never) {
            return Err(Error::new(
                "offline.refused",
                "this site opened its index with offline: 'never': no offline copy is made",
            ));
        }
        let offered = before.filter(|s| s.can_save);
        if let Some(s) = offered {
            self.offline.set(Some(s.saving()));
        }
        let result = self.fill(on_progress).await;
        if let Some(s) = offered {
            self.offline.set(Some(s.saved(result.is_ok())));
        }
        // The copy's outcome in the info resolved with.
        result.and_then(|_| self.info())
    }

    async fn fill_inner(&self, on_progress: Option<&Function>) -> Result<()> {
        let Some(lazy) = self.with_current(|c| c.lazy().cloned())? else {
            return Ok(());
        };
        // Where the copy goes (a first visit set it up meanwhile; when it
        // is not OPFS, the fill stops: `lazy.filling()` below).
        let storage = self.storage().await?;
        let still_current = || {
            self.current
                .borrow()
                .as_ref()
                .and_then(|c| c.lazy().map(|l| l.name.clone()))
                == Some(lazy.name.clone())
        };
        let size = lazy.manifest.size as f64;
        let page_size = lazy.manifest.page_size as f64;
        while still_current() && lazy.fill_step().await? {
            let (stored, _) = lazy.progress();
            report(on_progress, "fill", f64::from(stored) * page_size, size);
        }
        if !still_current() {
            return Ok(());
        }
        if !lazy.filling() {
            // Stopped with no copy made: never a 'fill'.
            return Err(lazy.take_fill_error().unwrap_or_else(|| {
                Error::new(
                    "storage.unavailable",
                    lazy.info(false)
                        .reason
                        .unwrap_or_else(|| "no OPFS copy is made".into()),
                )
            }));
        }
        let stored = match lazy.store_verified(&storage).await {
            Ok(stored) => stored,
            Err(e) if e.code == "download.checksum_mismatch" => {
                self.replace_refused(&lazy, on_progress).await;
                return Err(e);
            }
            Err(e) => {
                // No room for the copy (or the pool failing): pages are
                // read by range and kept in memory from now on, and
                // info().lazy says why.
                lazy.fail_fill(e.clone());
                lazy.take_fill_error();
                return Err(e);
            }
        };
        let opened = storage
            .open(&stored)
            .await
            .and_then(open_engine)
            .and_then(|engine| {
                if engine.info().revision != lazy.manifest.revision {
                    return Err(Error::new(
                        "download.revision_mismatch",
                        format!(
                            "the stored copy has corpus revision {} but the manifest announces {}",
                            engine.info().revision,
                            lazy.manifest.revision
                        ),
                    ));
                }
                Ok(engine)
            });
        let engine = match opened {
            Ok(engine) => engine,
            Err(e) => {
                storage.remove(&stored).await?;
                return Err(e);
            }
        };
        // Marked before the switch, so that once info() says 'complete' a
        // new tab knows the index is stored (it then needs the pool at once).
        if storage.is_opfs() {
            host::mark_stored(storage.scope()).await;
        }
        if !still_current() {
            // Replaced meanwhile (an update): the copy is not wanted.
            drop(engine);
            storage.remove(&stored).await?;
            return Ok(());
        }
        // The switch: searches run synchronously, so none is in flight here.
        *self.lazy_done.borrow_mut() = Some(lazy.info(true));
        let old = self
            .current
            .borrow_mut()
            .replace(Current::stored(engine, stored));
        if let Some(old) = old {
            old.retire(&storage).await?;
        }
        self.timings.borrow_mut().fill_ms = Some(now_ms() - self.opened_at);
        report(on_progress, "ready", 1.0, 1.0);
        Ok(())
    }

    /// The index read by range proved wrong (the lazy source refuses every
    /// read from now on): drops its engine, whose SQLite page cache holds
    /// pages read, and downloads the whole index instead, verified like any
    /// download. Until that succeeds (or when it fails) searches fail with
    /// `download.checksum_mismatch`.
    async fn replace_refused(&self, lazy: &LazyIndex, on_progress: Option<&Function>) {
        let e = Error::new(
            "download.checksum_mismatch",
            "the index read by range does not hash to the manifest's SHA-256, so nothing \
             read from it is shown",
        );
        *self.refused.borrow_mut() = Some(e);
        let replaced = match self.download(lazy.manifest.clone(), on_progress).await {
            Ok(d) => self.install(d, on_progress).await,
            Err(e) => Err(e),
        };
        let still_current = self
            .with_current(|c| c.lazy().map(|l| l.name == lazy.name))
            .ok()
            .flatten()
            == Some(true);
        let why = match replaced {
            Ok(new) if still_current => {
                let old = self.current.borrow_mut().replace(new);
                if let (Some(old), Ok(storage)) = (old, self.storage().await) {
                    let _ = old.retire(&storage).await;
                }
                *self.refused.borrow_mut() = None;
                "so the whole index was downloaded and verified instead".to_string()
            }
            Ok(_) => return,
            Err(e) => format!(
                "and the whole index could not be had either ({}: {})",
                e.code, e.message
            ),
        };
        let reason = format!(
            "{}; the pages read by range did not hash to the manifest's SHA-256, {why}",
            self.storage_reason.borrow()
        );
        *self.storage_reason.borrow_mut() = reason;
    }

    /// Downloads and verifies the index a manifest names.
    async fn download(
        &self,
        manifest: Manifest,
        on_progress: Option<&Function>,
    ) -> Result<Download> {
        let fetched = download_verified(
            &self.manifest_url,
            &manifest,
            on_progress,
            self.request_timeout_ms,
        )
        .await;
        if matches!(&fetched, Err(e) if e.code == "download.checksum_mismatch") {
            // Downloaded, then refused.
            self.downloaded_bytes
                .set(self.downloaded_bytes.get() + manifest.compressed_size);
        }
        let fetched = fetched?;
        {
            let mut t = self.timings.borrow_mut();
            t.download_ms = Some(fetched.download_ms);
            t.verify_ms = Some(fetched.verify_ms);
        }
        self.downloaded_bytes
            .set(self.downloaded_bytes.get() + manifest.compressed_size);
        Ok(Download {
            manifest,
            bytes: fetched.bytes,
        })
    }

    /// Stores a verified download as a new file and opens it; checks that
    /// the index is the format and revision the manifest announced. On any
    /// failure the new file is removed again.
    async fn install(&self, d: Download, on_progress: Option<&Function>) -> Result<Current> {
        let mut storage = self.storage().await?;
        let t = now_ms();
        report(on_progress, "store", 0.0, d.manifest.size as f64);
        let stored = loop {
            match storage.store(&d.manifest.sha256, &d.bytes).await {
                Ok(stored) => break stored,
                Err(e) => storage = self.fall_back(storage, e).await?,
            }
        };
        self.timings.borrow_mut().store_ms = Some(now_ms() - t);
        if storage.is_opfs() {
            host::mark_stored(storage.scope()).await;
        }
        report(
            on_progress,
            "store",
            d.manifest.size as f64,
            d.manifest.size as f64,
        );
        let t = now_ms();
        let opened = storage
            .open(&stored)
            .await
            .and_then(open_engine)
            .and_then(|engine| {
                let info = engine.info();
                if info.revision != d.manifest.revision {
                    return Err(Error::new(
                        "download.revision_mismatch",
                        format!(
                        "the downloaded index has corpus revision {} but the manifest announces {}",
                        info.revision, d.manifest.revision
                    ),
                    ));
                }
                Ok(engine)
            });
        match opened {
            Ok(engine) => {
                self.timings.borrow_mut().open_ms = now_ms() - t;
                Ok(Current::stored(engine, stored))
            }
            Err(e) => {
                storage.remove(&stored).await?;
                Err(e)
            }
        }
    }

    /// Checks the manifest and swaps in a changed index (see the module
    /// docs). Errors leave the current index answering. `manifest`: its
    /// text when the page has just fetched it (the check after opening a
    /// stored index then makes no request of its own).
    pub async fn update(
        &self,
        on_progress: Option<&Function>,
        manifest: Option<&str>,
    ) -> Result<UpdateStatus> {
        if self.updating.replace(true) {
            return Err(Error::new(
                "engine.busy",
                "an update is already in progress",
            ));
        }
        let result = self.update_inner(on_progress, manifest).await;
        self.updating.set(false);
        if let Ok(status) = &result {
            *self.last_update.borrow_mut() = Some(status.clone());
        }
        result
    }

    async fn update_inner(
        &self,
        on_progress: Option<&Function>,
        fresh: Option<&str>,
    ) -> Result<UpdateStatus> {
        let (sha, revision) =
            self.with_current(|c| (c.sha256().to_string(), c.info.revision.clone()))?;
        let offline = |reason: String| UpdateStatus {
            status: "offline",
            revision: revision.clone(),
            reason: Some(reason),
        };
        if !host::is_online() {
            return Ok(offline("the browser is offline".into()));
        }
        let t = now_ms();
        let fetched = match fresh {
            Some(text) => parse_manifest(text),
            None => fetch_manifest(&self.manifest_url, self.request_timeout_ms).await,
        };
        let manifest = match fetched {
            Ok(m) => m,
            Err(e) if e.code == "network.failed" || e.code == "network.timeout" => {
                return Ok(offline(e.message))
            }
            Err(e) => return Err(e),
        };
        self.timings.borrow_mut().manifest_ms = Some(now_ms() - t);
        if manifest.sha256 == sha {
            return Ok(UpdateStatus {
                status: "current",
                revision,
                reason: None,
            });
        }
        let download = self.download(manifest, on_progress).await?;
        let new = self.install(download, on_progress).await?;
        let revision = new.info.revision.clone();
        // The swap: searches see the old engine or the new, never neither.
        let old = self.current.borrow_mut().replace(new);
        let Some(old) = old else {
            // Closed while downloading: keep nothing open.
            let new = self.current.borrow_mut().take();
            if let Some(new) = new {
                new.retire(&*self.storage().await?).await?;
            }
            return Err(closed());
        };
        old.retire(&*self.storage().await?).await?;
        report(on_progress, "ready", 1.0, 1.0);
        Ok(UpdateStatus {
            status: "updated",
            revision,
            reason: None,
        })
    }

    /// Decides the visit's background work under the page's offline
    /// policy (see [`visit::plan`]) and keeps it for
    /// [`Session::take_background`]; `info().offline` reports the
    /// decision from now on, starting with the `info()` returned.
    /// `handoff_manifest`: the manifest text the page fetched for this
    /// visit, awaited only by the update check.
    pub fn plan_visit(
        &self,
        policy: OfflineVisit,
        handoff_manifest: impl Future<Output = Option<String>> + 'static,
    ) -> Result<(SessionInfo, Option<Background>)> {
        let mut info = self.info()?;
        let opened = match info.source {
            Source::Stored => Opened::Stored,
            Source::Downloaded => Opened::Downloaded,
            Source::Lazy => Opened::Lazy {
                copy_pending: info.storage == StorageKind::Lazy
                    && info
                        .lazy
                        .as_ref()
                        .is_some_and(|l| l.state == "filling" || l.fill_error.is_some()),
            },
        };
        let plan = visit::plan(policy, opened);
        self.offline.set(Some(plan.offline));
        info.offline = Some(plan.offline);
        *self.background.borrow_mut() = plan.background.map(|work| match work {
            Background::Fill => BackgroundWork::Fill,
            Background::Update => BackgroundWork::Update(Box::pin(handoff_manifest)),
        });
        Ok((info, plan.background))
    }

    /// The visit's background work, once: later calls get `None`.
    pub fn take_background(&self) -> Option<BackgroundWork> {
        self.background.borrow_mut().take()
    }

    /// The page's `engine.update()`: [`Session::update`], or the outcome
    /// of the check already running (the background one). Resolves with
    /// the `UpdateStatus`, rejects with the structured error.
    pub fn update_for_page(self: &Rc<Self>, on_progress: Option<Function>) -> Promise {
        self.update_check.page(self.check(on_progress, None))
    }

    /// The visit's background check, with the manifest the page fetched
    /// for this visit: as [`Session::update_for_page`], or `None` when
    /// the page has asked for a check of its own (which stands for it).
    pub fn update_in_background(
        self: &Rc<Self>,
        on_progress: Option<Function>,
        manifest: Option<String>,
    ) -> Option<Promise> {
        self.update_check
            .background(self.check(on_progress, manifest))
    }

    /// [`Session::update`] as a future owning what it needs.
    fn check(
        self: &Rc<Self>,
        on_progress: Option<Function>,
        manifest: Option<String>,
    ) -> impl Future<Output = std::result::Result<JsValue, JsValue>> + 'static {
        let session = Rc::clone(self);
        async move {
            session
                .update(on_progress.as_ref(), manifest.as_deref())
                .await
                .map(|status| to_js(&status))
                .map_err(|e| host::error_to_js(&e))
        }
    }

    fn with_current<T>(&self, f: impl FnOnce(&Current) -> T) -> Result<T> {
        self.current.borrow().as_ref().map(f).ok_or_else(closed)
    }

    /// Parses and plans a query for the current index, once: the warm-up
    /// reads the plan, the search runs it. `options_json` holds
    /// [`gitsense_engine::SearchOptions`].
    pub fn plan(&self, query: &str, options_json: &str) -> Result<PlannedSearch> {
        if let Some(e) = self.refused.borrow().as_ref() {
            return Err(e.clone());
        }
        let opts: SearchOptions = from_json_arg(options_json, "search options")?;
        self.with_current(|c| match &c.reader {
            Some(reader) => reader.borrow().plan_search(query, &opts),
            None => c.engine()?.plan_search(query, &opts),
        })?
    }

    /// Runs a planned query; the results object as JSON text. An index
    /// read lazily answers with the reader, the pages each attempt lacks
    /// fetched in one batch ([`LazyIndex::attempt`]); a search the reader
    /// cannot run goes to SQLite, after the warm-up (`storage::lazy::warm`)
    /// fetched its pages in batches.
    pub async fn answer(&self, planned: PlannedSearch) -> Result<String> {
        if let Some(e) = self.refused.borrow().as_ref() {
            return Err(e.clone());
        }
        let lazy = self.with_current(|c| c.lazy().cloned())?;
        let answer = self.answer_with(planned, lazy.as_ref()).await;
        if let Some(lazy) = lazy {
            // What the search fetched is stored once it answered.
            lazy.store_held_later();
        }
        answer
    }

    async fn answer_with(
        &self,
        planned: PlannedSearch,
        lazy: Option<&LazyIndex>,
    ) -> Result<String> {
        if let Some(lazy) = lazy {
            if let Some(json) = self.read(lazy, &planned).await? {
                return Ok(json);
            }
            let t = now_ms();
            // The warm-up's connection is SQLite's: open the engine first.
            self.with_current(|c| c.engine().map(drop))??;
            lazy.warm(&planned).await;
            self.timings.borrow_mut().last_warm_ms = Some(now_ms() - t);
        }
        self.search_planned(planned)
    }

    /// [`Session::answer`] with the reader: the results object, or `None`
    /// when the reader cannot run the search (or the index in use is no
    /// longer read lazily).
    async fn read(&self, lazy: &LazyIndex, planned: &PlannedSearch) -> Result<Option<String>> {
        let (start, mut waited) = (now_ms(), 0.0);
        let mut rounds = 0;
        loop {
            let attempt = self.with_current(|c| {
                let reader = c
                    .reader
                    .as_ref()
                    .filter(|_| c.lazy().is_some_and(|l| l.name == lazy.name))?;
                let mut reader = reader.borrow_mut();
                Some(if rounds < MAX_READ_ROUNDS {
                    lazy.attempt(&mut reader, planned)
                } else {
                    // Rounds that do not end, or a batch that failed: the
                    // rest page by page.
                    reader.search_planned(planned.clone()).map(Ok)
                })
            })?;
            let missing = match attempt {
                None => return Ok(None),
                Some(Ok(Ok(results))) => {
                    let mut timings = self.timings.borrow_mut();
                    timings.last_warm_ms = Some(waited);
                    timings.last_search_ms = Some(now_ms() - start - waited);
                    timings.last_search_by = Some("reader");
                    return results_json(&results).map(Some);
                }
                Some(Ok(Err(missing))) => missing,
                Some(Err(e)) if e.code == "reader.unsupported" => return Ok(None),
                Some(Err(e)) => return Err(e),
            };
            let t = now_ms();
            rounds += 1;
            if lazy.fetch_pages(&missing).await.is_err() {
                // As after a failed warm-up: the reads that follow fetch
                // page by page, retried, and their failure is the
                // search's (`network.offline` when offline).
                rounds = MAX_READ_ROUNDS;
            }
            waited += now_ms() - t;
        }
    }

    /// Runs a planned query; the results object as JSON text.
    pub fn search_planned(&self, planned: PlannedSearch) -> Result<String> {
        if let Some(e) = self.refused.borrow().as_ref() {
            return Err(e.clone());
        }
        let t = now_ms();
        // A failed page read surfaces as its own error (network.*,
        // lazy.*), not as SQLite's "disk I/O error".
        let out = self.with_current(|c| {
            c.engine()?
                .search_planned(planned)
                .and_then(|r| results_json(&r))
                .map_err(|e| c.lazy().and_then(LazyIndex::take_error).unwrap_or(e))
        })?;
        let mut timings = self.timings.borrow_mut();
        timings.last_search_ms = Some(now_ms() - t);
        timings.last_search_by = Some("sqlite");
        out
    }

    /// Runs `f` on the engine of the current index (the assisted search
    /// drives its stages through it); `engine.closed` when closed.
    pub fn with_engine<T>(&self, f: impl FnOnce(&Engine) -> T) -> Result<T> {
        self.with_current(|c| c.engine().map(f))?
    }

    pub fn info(&self) -> Result<SessionInfo> {
        let (index, file, sha256, lazy) = self.with_current(|c| {
            let (file, lazy) = match &c.location {
                Location::Stored(s) => (s.name.clone(), self.lazy_done.borrow().clone()),
                Location::Lazy(l) => (l.name.clone(), Some(l.info(false))),
            };
            (c.info.clone(), file, c.sha256().to_string(), lazy)
        })?;
        let (reading_lazily, sqlite_open) =
            self.with_current(|c| (c.lazy().is_some(), c.engine.get().is_some()))?;
        let lazy_bytes = lazy
            .as_ref()
            .map(|l| {
                l.stats.read_bytes + l.stats.prefetch_bytes + l.stats.fill_bytes + l.stats.hot_bytes
            })
            .unwrap_or(0);
        Ok(SessionInfo {
            storage: match &*self.storage.borrow() {
                StorageSlot::Ready(s) if !reading_lazily => s.kind(),
                _ => StorageKind::Lazy,
            },
            storage_reason: self.storage_reason.borrow().clone(),
            source: self.source,
            manifest_url: self.manifest_url.clone(),
            file,
            sha256,
            size_bytes: index.size_bytes(),
            index,
            downloaded_bytes: self.downloaded_bytes.get() + lazy_bytes,
            online: host::is_online(),
            sqlite_open,
            last_update: self.last_update.borrow().clone(),
            timings: self.timings.borrow().clone(),
            lazy,
            offline: self.offline.get(),
        })
    }

    /// Names of the indexes in storage (for tests and diagnostics).
    pub async fn stored_files(&self) -> Result<Vec<String>> {
        Ok(self
            .storage()
            .await?
            .list()
            .await?
            .into_iter()
            .map(|i| i.name)
            .collect())
    }

    /// Closes the index and releases the storage (a lazy fill's files stay,
    /// for the next visit to resume).
    pub fn close(&self) {
        if let Some(cur) = self.current.borrow_mut().take() {
            if let Some(lazy) = cur.lazy() {
                lazy.close_files();
            }
        }
        match &*self.storage.borrow() {
            StorageSlot::Ready(s) => s.release(),
            // Released once set up, so that a reload can take the pool.
            StorageSlot::Pending(promise, cell) => {
                let (promise, cell) = (promise.clone(), cell.clone());
                wasm_bindgen_futures::spawn_local(async move {
                    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
                    if let Some((Ok((storage, _)), _)) = cell.borrow_mut().take() {
                        storage.release();
                    }
                });
            }
            StorageSlot::Deferred(..) | StorageSlot::Failed(_) => {}
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.close();
    }
}

thread_local! {
    /// The worker's one open session (a dedicated worker serves one index).
    static CURRENT: std::cell::RefCell<Option<std::rc::Rc<Session>>> = const { std::cell::RefCell::new(None) };
}

/// The worker's open session, if any.
pub fn current() -> Option<std::rc::Rc<Session>> {
    CURRENT.with(|s| s.borrow().clone())
}

/// Makes `s` the worker's open session.
pub fn install(s: Session) {
    CURRENT.with(|slot| *slot.borrow_mut() = Some(std::rc::Rc::new(s)));
}

/// Takes the worker's open session out (closing the worker's index).
pub fn take() -> Option<std::rc::Rc<Session>> {
    CURRENT.with(|slot| slot.borrow_mut().take())
}
