//! A writable index of the page's own (`GitSenseSearch.create({ name })`,
//! `open({ name })`): no manifest, records written by the page
//! (`add`, `update`, `remove`), searched by the same engine.
//!
//! In: a name, a storage preference, writes as JSON (see
//! [`gitsense_engine::index::live`]). Out: the results object, write
//! summaries and structured errors. Where the file lives:
//! - OPFS (the sync-access-handle pool of [`crate::storage::opfs`]): the
//!   database itself, written page by page; a write's promise resolves
//!   once its transaction has committed to the pool's files. One worker
//!   at a time holds the pool (`storage.busy` in a second tab).
//! - IndexedDB (where OPFS is missing): the database lives in the memory
//!   VFS and its bytes are saved in IndexedDB after every write, before
//!   the write's promise resolves; a failed save rolls nothing back in
//!   memory, so the write is refused and the index reopened from the copy
//!   saved last.
//! - memory: nothing survives the worker.
//!
//! The file is `gsw-<name>.db`, apart from the published indexes'
//! `gsx-…` names, so neither ever takes the other for its own.
//!
//! An overlay (`open({ manifestUrl, name })`) is a copy of the published
//! index made writable ([`live::adopt`]): the page's writes go into the
//! copy, so one search ranks, counts and pages the published records and
//! the page's own together, with the statistics of both (two searches
//! merged by rank could not: each index's scores rest on its own term
//! statistics, and a published record the page removed or replaced would
//! still be counted). Each write is logged in the copy; a new revision of
//! the published index is downloaded into a new copy, the log applied to
//! it (records it already holds are matched by id), and the copies
//! swapped. Its files are `gso-<name>~<seq>.db`: the highest whose
//! adoption finished is the overlay, a lower or unfinished one is removed.

use super::host::{self, js_error, now_ms, report};
use super::session::{download_verified, fetch_manifest};
use super::storage::memory::{self, MemoryStore};
use super::storage::opfs::{self, OpfsStore};
use super::storage::StoragePref;
use super::storage::StoredIndex;
use super::update_check::UpdateCheck;
use super::visit::{self, Background, OfflineVisit, Opened};
use gitsense_engine::error::{Error, Result};
use gitsense_engine::index::live::{self, WriteOp, WriteSummary};
use gitsense_engine::index::IndexInfo;
use gitsense_engine::search::Engine;
use js_sys::Function;
use js_sys::{Promise, Uint8Array};
use rusqlite::{Connection, OpenFlags};
use serde::Serialize;
use sqlite_wasm_rs::vfs::transfer::DbTransfer;
use std::cell::{Cell, RefCell};
use std::future::Future;
use std::rc::Rc;
use wasm_bindgen::{JsCast, JsValue};

/// Where the writable index lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LocalKind {
    Opfs,
    #[serde(rename = "indexeddb")]
    IndexedDb,
    Memory,
}

enum Place {
    Opfs(OpfsStore),
    IndexedDb { db: JsValue, memory: MemoryStore },
    Memory(MemoryStore),
}

impl Place {
    fn kind(&self) -> LocalKind {
        match self {
            Place::Opfs(_) => LocalKind::Opfs,
            Place::IndexedDb { .. } => LocalKind::IndexedDb,
            Place::Memory(_) => LocalKind::Memory,
        }
    }

    fn vfs(&self) -> &'static str {
        match self {
            Place::Opfs(_) => opfs::VFS_NAME,
            _ => memory::VFS_NAME,
        }
    }

    /// Every file stored here.
    async fn names(&self) -> Result<Vec<String>> {
        match self {
            Place::Opfs(s) => s.names(),
            Place::IndexedDb { db, .. } => idb_names(db).await,
            Place::Memory(m) => m.names(),
        }
    }

    /// Makes a stored file openable (IndexedDB: into the memory VFS).
    async fn load(&self, file: &str) -> Result<()> {
        if let Place::IndexedDb { db, memory } = self {
            if !memory.contains(file) {
                let bytes: Uint8Array = host::idb_get(db, file)
                    .await
                    .map_err(|e| js_error(&e, "storage.failed", "reading IndexedDB"))?
                    .unchecked_into();
                memory.import(file, &bytes)?;
            }
        }
        Ok(())
    }

    /// Stores bytes (a published index) as `file`; IndexedDB keeps them
    /// once [`LocalIndex::save`] runs.
    async fn import(&self, file: &str, bytes: &Uint8Array) -> Result<()> {
        match self {
            Place::Opfs(s) => {
                let f = StoredIndex {
                    name: file.to_string(),
                    scope: String::new(),
                    seq: 0,
                    sha256: String::new(),
                    size: u64::from(bytes.length()),
                };
                s.store(&f, bytes).await?;
                s.ensure_room(1).await
            }
            Place::IndexedDb { memory, .. } | Place::Memory(memory) => memory.import(file, bytes),
        }
    }

    async fn remove(&self, file: &str) -> Result<()> {
        match self {
            Place::Opfs(s) => s.remove(file),
            Place::IndexedDb { db, memory } => {
                if memory.contains(file) {
                    memory.remove(file)?;
                }
                host::idb_delete(db, file)
                    .await
                    .map_err(|e| js_error(&e, "storage.failed", "removing from IndexedDB"))?;
                Ok(())
            }
            Place::Memory(m) => m.remove(file),
        }
    }

    /// A read-write engine over `file`.
    fn engine(&self, file: &str) -> Result<Engine> {
        engine_over(self.connection(file)?)
    }

    /// A read-write connection to `file` (made if missing).
    fn connection(&self, file: &str) -> Result<Connection> {
        let conn = Connection::open_with_flags_and_vfs(
            file,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            self.vfs(),
        )
        .map_err(|e| storage_err("opening the writable index", e))?;
        // PERSIST: the rollback journal's file stays between commits (its
        // header zeroed), so a write does not create and delete a file of
        // the OPFS pool each time (two slot-header flushes a commit).
        conn.execute_batch("PRAGMA temp_store = MEMORY; PRAGMA journal_mode = PERSIST;")
            .map_err(|e| Error::db("configuring the connection", e))?;
        Ok(conn)
    }
}

fn engine_over(conn: Connection) -> Result<Engine> {
    let mut engine = Engine::from_connection(conn)?;
    engine.set_clock(now_ms);
    engine.set_time_budget(Some(SEARCH_BUDGET_MS));
    Ok(engine)
}

/// How an overlay's copy in use came.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OverlaySource {
    /// Opened from storage, no network needed.
    Stored,
    /// Downloaded this session, at open or by an update.
    Downloaded,
}

/// An overlay's published side.
struct Overlay {
    source: Cell<OverlaySource>,
    manifest_url: String,
    request_timeout_ms: Option<u32>,
    /// The SHA-256 of the published index the copy in use was made from.
    base: RefCell<String>,
    seq: Cell<u64>,
    /// Set while an update runs.
    updating: Cell<bool>,
    last_update: RefCell<Option<OverlayUpdate>>,
}

/// What `info().overlay` says.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OverlayInfo {
    /// How the copy in use came: `stored` or `downloaded`.
    pub source: OverlaySource,
    pub manifest_url: String,
    /// The SHA-256 of the published index under the page's writes.
    pub base_sha256: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_update: Option<OverlayUpdate>,
}

/// What an update check did: `current`, `updated` (a new revision with
/// the page's writes applied is in use) or `offline`; the same fields as
/// a published index's (`session::UpdateStatus`). A type of its own: the
/// module's split keeps in its first part what a published index's visit
/// runs, and code this module shared with that one's would change shape
/// there (a published visit's `info()` after its update check then
/// needed the second part).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OverlayUpdate {
    pub status: &'static str,
    pub revision: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The file of an overlay's copy number `seq`.
fn overlay_file(name: &str, seq: u64) -> String {
    format!("gso-{name}~{seq:08}.db")
}

/// Milliseconds of the last write and search.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalTimings {
    pub open_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_write_ms: Option<f64>,
    /// Of the last write: saving the database's bytes (IndexedDB only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_save_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_search_ms: Option<f64>,
}

/// What `engine.info()` returns for a writable index.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalInfo {
    pub writable: bool,
    pub name: String,
    pub storage: LocalKind,
    pub storage_reason: String,
    pub file: String,
    pub index: IndexInfo,
    pub size_bytes: u64,
    pub timings: LocalTimings,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overlay: Option<OverlayInfo>,
}

pub struct LocalIndex {
    name: String,
    file: RefCell<String>,
    place: Place,
    storage_reason: String,
    engine: RefCell<Option<Engine>>,
    timings: RefCell<LocalTimings>,
    overlay: Option<Overlay>,
    /// The visit's background work ([`LocalIndex::plan_visit`]) until it
    /// runs.
    background: Cell<Option<Background>>,
    /// The page's and the background's update checks, shared.
    update_check: UpdateCheck,
}

/// The longest index name.
const MAX_NAME: usize = 64;

/// The file of the index called `name` (letters, digits, `-`, `_`, `.`).
fn file_of(name: &str) -> Result<String> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if !ok {
        return Err(Error::new(
            "options.invalid",
            format!("name must be 1 to {MAX_NAME} letters, digits, '-', '_' or '.', not {name:?}"),
        ));
    }
    Ok(format!("gsw-{name}.db"))
}

fn storage_err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::new("storage.failed", format!("{what}: {e}"))
}

/// How long one search may work (as for published indexes, see
/// `session::SEARCH_BUDGET_MS`).
const SEARCH_BUDGET_MS: f64 = 150.0;

impl LocalIndex {
    /// An index just opened, with no timings yet.
    fn new(
        name: &str,
        file: String,
        place: Place,
        storage_reason: String,
        engine: Engine,
        overlay: Option<Overlay>,
    ) -> LocalIndex {
        LocalIndex {
            name: name.to_string(),
            file: RefCell::new(file),
            place,
            storage_reason,
            engine: RefCell::new(Some(engine)),
            timings: RefCell::new(LocalTimings::default()),
            overlay,
            background: Cell::new(None),
            update_check: UpdateCheck::default(),
        }
    }

    /// Opens the writable index `name`; `create`: makes it, and fails
    /// with `index.exists` if there is one, else fails with
    /// `index.not_found` if there is none.
    pub async fn open(name: &str, pref: StoragePref, create: bool) -> Result<LocalIndex> {
        let t = now_ms();
        let file = file_of(name)?;
        let (place, reason) = Self::place(pref, &file, create).await?;
        let exists = place.names().await?.contains(&file);
        if exists {
            place.load(&file).await?;
        }
        match (create, exists) {
            (true, true) => {
                return Err(Error::new(
                    "index.exists",
                    format!("a writable index called {name:?} exists already: open({{ name }}) opens it"),
                ))
            }
            (false, false) => {
                return Err(Error::new(
                    "index.not_found",
                    format!("no writable index called {name:?} is stored here: create({{ name }}) makes one"),
                ))
            }
            _ => {}
        }
        if let Place::Opfs(s) = &place {
            // The database and its rollback journal.
            s.ensure_room(2).await?;
        }
        if create {
            let now = js_sys::Date::new_0()
                .to_iso_string()
                .as_string()
                .unwrap_or_default();
            live::create(&place.connection(&file)?, &format!("local:{name}"), &now)?;
        }
        // Opened afresh: create() made the schema under the engine.
        let engine = place.engine(&file)?;
        let index = LocalIndex::new(name, file, place, reason, engine, None);
        if create {
            index.save().await?;
        }
        index.timings.borrow_mut().open_ms = now_ms() - t;
        Ok(index)
    }

    /// Opens the overlay `name` over the index published at
    /// `manifest_url`: the copy stored last (no network needed), else a
    /// copy of the index the manifest names, downloaded now.
    /// [`LocalIndex::plan_visit`] then says whether to check for a new
    /// revision.
    pub async fn open_overlay(
        manifest_url: &str,
        name: &str,
        pref: StoragePref,
        request_timeout_ms: Option<u32>,
        on_progress: Option<&Function>,
    ) -> Result<LocalIndex> {
        let t = now_ms();
        file_of(name)?;
        let (place, reason) = Self::place(pref, "", true).await?;
        let prefix = format!("gso-{name}~");
        let mut copies: Vec<(u64, String)> = place
            .names()
            .await?
            .into_iter()
            .filter_map(|f| {
                let seq = f.strip_prefix(&prefix)?.strip_suffix(".db")?.parse().ok()?;
                Some((seq, f))
            })
            .collect();
        copies.sort_unstable_by(|a, b| b.cmp(a));
        // The newest copy whose adoption finished; the rest go.
        let mut found: Option<(u64, String, Engine, String)> = None;
        for (seq, file) in copies {
            if found.is_none() {
                place.load(&file).await?;
                let engine = place.engine(&file)?;
                if let Some(base) = live::overlay_base(engine.connection())? {
                    found = Some((seq, file, engine, base));
                    continue;
                }
            }
            place.remove(&file).await?;
        }
        let stored = found.is_some();
        let (seq, file, engine, base) = match found {
            Some(f) => f,
            None => {
                if !host::is_online() {
                    return Err(Error::new(
                        "network.offline",
                        "the browser is offline and this overlay's published index is not stored yet",
                    ));
                }
                let manifest = fetch_manifest(manifest_url, request_timeout_ms).await?;
                let file = overlay_file(name, 1);
                Self::fetch_into(
                    &place,
                    &file,
                    manifest_url,
                    &manifest,
                    on_progress,
                    request_timeout_ms,
                )
                .await?;
                let engine = Self::adopt(&place, &file, &manifest, None)?;
                (1, file, engine, manifest.sha256)
            }
        };
        let overlay = Overlay {
            source: Cell::new(if stored {
                OverlaySource::Stored
            } else {
                OverlaySource::Downloaded
            }),
            manifest_url: manifest_url.to_string(),
            request_timeout_ms,
            base: RefCell::new(base),
            seq: Cell::new(seq),
            updating: Cell::new(false),
            last_update: RefCell::new(None),
        };
        let index = LocalIndex::new(name, file, place, reason, engine, Some(overlay));
        index.save().await?;
        index.timings.borrow_mut().open_ms = now_ms() - t;
        report(on_progress, "ready", 1.0, 1.0);
        Ok(index)
    }

    /// Downloads the index `manifest` names and stores it as `file`.
    async fn fetch_into(
        place: &Place,
        file: &str,
        manifest_url: &str,
        manifest: &gitsense_publish::Manifest,
        on_progress: Option<&Function>,
        request_timeout_ms: Option<u32>,
    ) -> Result<()> {
        let fetched =
            download_verified(manifest_url, manifest, on_progress, request_timeout_ms).await?;
        place.import(file, &fetched.bytes).await
    }

    /// Makes the stored copy `file` of the index `manifest` names an
    /// overlay with the writes of `previous` applied, and opens it; a
    /// failure removes the file. Synchronous: no write can come between
    /// reading `previous`'s log and the swap that follows.
    fn adopt(
        place: &Place,
        file: &str,
        manifest: &gitsense_publish::Manifest,
        previous: Option<&Engine>,
    ) -> Result<Engine> {
        let made = place.engine(file).and_then(|engine| {
            if engine.info().revision != manifest.revision {
                return Err(Error::new(
                    "download.revision_mismatch",
                    format!(
                        "the downloaded index has corpus revision {} but the manifest announces {}",
                        engine.info().revision,
                        manifest.revision
                    ),
                ));
            }
            live::adopt(
                engine.connection(),
                &manifest.sha256,
                previous.map(Engine::connection),
            )?;
            // Opened afresh: the adoption changed the index under it.
            place.engine(file)
        });
        if made.is_err() {
            // (An IndexedDB copy is saved only once adopted: none to remove.)
            let _ = match place {
                Place::Opfs(s) => s.remove(file),
                Place::IndexedDb { memory, .. } | Place::Memory(memory) => memory.remove(file),
            };
        }
        made
    }

    /// Decides the visit's background work as a published index's
    /// session does ([`visit::plan`]): a copy opened from storage is
    /// checked for a new revision, a copy downloaded now is the published
    /// one; a writable index of the page's own has nothing published.
    /// The copy is whole from the start, so the offline policy, which
    /// only decides when a copy is made, has no say. Returns `info()`
    /// and the work, kept for [`LocalIndex::background`].
    pub fn plan_visit(&self) -> Result<(LocalInfo, Option<Background>)> {
        let info = self.info()?;
        let work = info.overlay.as_ref().and_then(|o| {
            let opened = match o.source {
                OverlaySource::Stored => Opened::Stored,
                OverlaySource::Downloaded => Opened::Downloaded,
            };
            visit::plan(OfflineVisit::default(), opened).background
        });
        self.background.set(work);
        Ok((info, work))
    }

    /// Starts the visit's background work once (later calls: `None`):
    /// the update check, shared with the page's as
    /// [`UpdateCheck::background`] says; `None` when the page checked
    /// first. Resolves with the `OverlayUpdate`.
    pub fn background(self: &Rc<Self>, on_progress: Option<Function>) -> Option<Promise> {
        match self.background.take()? {
            Background::Update => self.update_check.background(self.check(on_progress)),
            // An overlay has no copy to fill: `plan_visit` never names it.
            Background::Fill => None,
        }
    }

    /// The page's `engine.update()`: [`LocalIndex::update`], or the
    /// outcome of the check already running (the background one).
    /// Resolves with the `OverlayUpdate`, rejects with the structured
    /// error.
    pub fn update_for_page(self: &Rc<Self>, on_progress: Option<Function>) -> Promise {
        self.update_check.page(self.check(on_progress))
    }

    /// [`LocalIndex::update`] as a future owning what it needs.
    fn check(
        self: &Rc<Self>,
        on_progress: Option<Function>,
    ) -> impl Future<Output = std::result::Result<JsValue, JsValue>> + 'static {
        let index = Rc::clone(self);
        async move {
            index
                .update(on_progress.as_ref())
                .await
                .map(|status| host::to_js(&status))
                .map_err(|e| host::error_to_js(&e))
        }
    }

    /// An overlay: checks the manifest and, for a new revision, makes a
    /// copy of it with the page's writes applied and swaps it in; the
    /// old copy answers until then. A plain writable index: `current`.
    pub async fn update(&self, on_progress: Option<&Function>) -> Result<OverlayUpdate> {
        let revision = self.with_engine(|e| Ok(e.info().revision.clone()))?;
        let Some(o) = &self.overlay else {
            return Ok(OverlayUpdate {
                status: "current",
                revision,
                reason: None,
            });
        };
        if super::import::running() {
            return Err(Error::new(
                "engine.busy",
                "an import is in progress: the update can run once it ends",
            ));
        }
        if o.updating.replace(true) {
            return Err(Error::new(
                "engine.busy",
                "an update is already in progress",
            ));
        }
        let result = self.update_overlay(o, on_progress, revision).await;
        o.updating.set(false);
        if let Ok(status) = &result {
            *o.last_update.borrow_mut() = Some(status.clone());
        }
        result
    }

    async fn update_overlay(
        &self,
        o: &Overlay,
        on_progress: Option<&Function>,
        revision: String,
    ) -> Result<OverlayUpdate> {
        let offline = |reason: String| OverlayUpdate {
            status: "offline",
            revision: revision.clone(),
            reason: Some(reason),
        };
        if !host::is_online() {
            return Ok(offline("the browser is offline".into()));
        }
        let manifest = match fetch_manifest(&o.manifest_url, o.request_timeout_ms).await {
            Ok(m) => m,
            Err(e) if e.code == "network.failed" || e.code == "network.timeout" => {
                return Ok(offline(e.message))
            }
            Err(e) => return Err(e),
        };
        if manifest.sha256 == *o.base.borrow() {
            return Ok(OverlayUpdate {
                status: "current",
                revision,
                reason: None,
            });
        }
        let seq = o.seq.get() + 1;
        let file = overlay_file(&self.name, seq);
        Self::fetch_into(
            &self.place,
            &file,
            &o.manifest_url,
            &manifest,
            on_progress,
            o.request_timeout_ms,
        )
        .await?;
        // From here to the swap nothing awaits: the page's writes so far
        // are in the log the new copy replays, later ones go to it.
        let engine = {
            let current = self.engine.borrow();
            let Some(current) = current.as_ref() else {
                return Err(Error::new(
                    "engine.closed",
                    "the search engine has been closed",
                ));
            };
            Self::adopt(&self.place, &file, &manifest, Some(current))?
        };
        let old = self.file.replace(file);
        *self.engine.borrow_mut() = Some(engine);
        *o.base.borrow_mut() = manifest.sha256.clone();
        o.seq.set(seq);
        o.source.set(OverlaySource::Downloaded);
        self.save().await?;
        self.place.remove(&old).await?;
        let revision = self.with_engine(|e| Ok(e.info().revision.clone()))?;
        report(on_progress, "ready", 1.0, 1.0);
        Ok(OverlayUpdate {
            status: "updated",
            revision,
            reason: None,
        })
    }

    /// The storage `pref` asks for. `auto`: OPFS where sync access
    /// handles exist, else IndexedDB; an index already in IndexedDB (made
    /// where OPFS was missing) is opened there. A pool held by another
    /// tab is `storage.busy`, never a fallback: the index lives there.
    async fn place(pref: StoragePref, file: &str, create: bool) -> Result<(Place, String)> {
        let idb = || async {
            let db = host::idb_open()
                .await
                .map_err(|e| js_error(&e, "storage.unavailable", "opening IndexedDB"))?;
            Ok::<_, Error>(Place::IndexedDb {
                db,
                memory: MemoryStore::new()?,
            })
        };
        match pref {
            StoragePref::Opfs => Ok((
                Place::Opfs(OpfsStore::install().await?),
                "OPFS requested".into(),
            )),
            StoragePref::IndexedDb => Ok((idb().await?, "IndexedDB requested".into())),
            StoragePref::Memory => Ok((
                Place::Memory(MemoryStore::new()?),
                "memory requested: nothing is kept after the engine closes".into(),
            )),
            StoragePref::Lazy => Err(Error::new(
                "options.invalid",
                "storage 'lazy' reads a published index; a writable index is stored in 'opfs', 'indexeddb' or 'memory'",
            )),
            StoragePref::Auto => match OpfsStore::install().await {
                Ok(s) => {
                    if !create && !s.contains(file)? {
                        // Made where OPFS was missing, perhaps.
                        if let Ok(p @ Place::IndexedDb { .. }) = idb().await {
                            if let Place::IndexedDb { db, .. } = &p {
                                if idb_names(db).await?.iter().any(|n| n == file) {
                                    s.release();
                                    return Ok((p, "the index is stored in IndexedDB".into()));
                                }
                            }
                        }
                    }
                    Ok((
                        Place::Opfs(s),
                        "OPFS sync access handles are available".into(),
                    ))
                }
                Err(e) if e.code == "storage.unavailable" => Ok((
                    idb().await?,
                    format!("OPFS is not usable ({}); using IndexedDB", e.message),
                )),
                Err(e) => Err(e),
            },
        }
    }

    pub fn with_engine<T>(&self, f: impl FnOnce(&mut Engine) -> Result<T>) -> Result<T> {
        match self.engine.borrow_mut().as_mut() {
            Some(e) => f(e),
            None => Err(Error::new(
                "engine.closed",
                "the search engine has been closed",
            )),
        }
    }

    /// Runs a query; the results object as JSON text.
    pub fn search(&self, query: &str, options_json: &str) -> Result<String> {
        let t = now_ms();
        let out = self.with_engine(|e| e.search_json(query, options_json))?;
        self.timings.borrow_mut().last_search_ms = Some(now_ms() - t);
        Ok(out)
    }

    /// Applies a write (at most once per `key`, when given); resolves
    /// once it is committed where the index lives (see the module docs).
    pub async fn write(&self, op: WriteOp, json: &str, key: Option<&str>) -> Result<WriteSummary> {
        if super::import::running() {
            // Its transaction is open on this connection (worker.js
            // queues writes behind an import; this is the guard).
            return Err(Error::new(
                "engine.busy",
                "an import is in progress: the write can run once it ends",
            ));
        }
        let t = now_ms();
        let summary = self.with_engine(|e| match key {
            Some(key) => e.write_once(op, json, key),
            None => e.write(op, json),
        })?;
        if let Err(e) = self.save().await {
            // Memory holds a write IndexedDB does not: back to the copy
            // saved last, so that what searches see is what is kept.
            self.reload().await?;
            return Err(e);
        }
        self.timings.borrow_mut().last_write_ms = Some(now_ms() - t);
        Ok(summary)
    }

    /// IndexedDB: saves the database's bytes (a no-op elsewhere).
    pub async fn save(&self) -> Result<()> {
        let Place::IndexedDb { db, memory } = &self.place else {
            return Ok(());
        };
        let t = now_ms();
        let file = self.file.borrow().clone();
        let bytes = memory.export(&file)?;
        let size = bytes.len();
        let bytes = Uint8Array::from(bytes.as_slice());
        #[derive(Serialize)]
        struct Meta<'a> {
            name: &'a str,
            writable: bool,
            size: usize,
        }
        host::idb_put(
            db,
            host::to_js(&Meta {
                name: &file,
                writable: true,
                size,
            }),
            &bytes,
        )
        .await
        .map_err(|e| js_error(&e, "storage.failed", "saving the index in IndexedDB"))?;
        self.timings.borrow_mut().last_save_ms = Some(now_ms() - t);
        Ok(())
    }

    /// IndexedDB: reopens the index from the bytes saved last.
    pub async fn reload(&self) -> Result<()> {
        let Place::IndexedDb { memory, .. } = &self.place else {
            return Ok(());
        };
        let file = self.file.borrow().clone();
        self.engine.borrow_mut().take();
        memory.remove(&file)?;
        self.place.load(&file).await?;
        *self.engine.borrow_mut() = Some(self.place.engine(&file)?);
        Ok(())
    }

    pub fn info(&self) -> Result<LocalInfo> {
        let index = self.with_engine(|e| Ok(e.info().clone()))?;
        Ok(LocalInfo {
            writable: true,
            name: self.name.clone(),
            storage: self.place.kind(),
            storage_reason: self.storage_reason.clone(),
            file: self.file.borrow().clone(),
            size_bytes: index.size_bytes(),
            index,
            timings: self.timings.borrow().clone(),
            overlay: self.overlay.as_ref().map(|o| OverlayInfo {
                source: o.source.get(),
                manifest_url: o.manifest_url.clone(),
                base_sha256: o.base.borrow().clone(),
                last_update: o.last_update.borrow().clone(),
            }),
        })
    }

    /// Closes the index and lets go of its storage (the OPFS pool, the
    /// memory copy of an IndexedDB index).
    pub fn close(&self) {
        self.engine.borrow_mut().take();
        match &self.place {
            Place::Opfs(s) => s.release(),
            Place::IndexedDb { db, memory } => {
                let _ = memory.remove(&self.file.borrow());
                host::idb_close(db);
            }
            // The memory VFS keeps it for the worker's life: a reopen in
            // the same worker finds it.
            Place::Memory(_) => {}
        }
    }
}

/// Names of the files described in IndexedDB.
async fn idb_names(db: &JsValue) -> Result<Vec<String>> {
    let v = host::idb_list(db)
        .await
        .map_err(|e| js_error(&e, "storage.failed", "listing IndexedDB"))?;
    let all: Vec<serde_json::Value> = serde_wasm_bindgen::from_value(v)
        .map_err(|e| storage_err("unreadable IndexedDB record", e))?;
    Ok(all
        .into_iter()
        .filter_map(|m| m.get("name").and_then(|n| n.as_str()).map(str::to_string))
        .collect())
}

impl memory::MemoryStore {
    /// The bytes of file `name`.
    pub fn export(&self, name: &str) -> Result<Vec<u8>> {
        self.util()
            .export_db(name)
            .map_err(|e| memory::mem_err("exporting the index", e))
    }
}

thread_local! {
    /// The worker's writable index, when it serves one.
    static CURRENT: RefCell<Option<Rc<LocalIndex>>> = const { RefCell::new(None) };
}

pub fn current() -> Option<Rc<LocalIndex>> {
    CURRENT.with(|s| s.borrow().clone())
}

pub fn install(index: LocalIndex) {
    CURRENT.with(|s| *s.borrow_mut() = Some(Rc::new(index)));
}

pub fn take() -> Option<Rc<LocalIndex>> {
    CURRENT.with(|s| s.borrow_mut().take())
}
