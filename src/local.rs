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

use super::host::{self, js_error, now_ms};
use super::storage::memory::{self, MemoryStore};
use super::storage::opfs::{self, OpfsStore};
use super::storage::StoragePref;
use gitsense_engine::error::{Error, Result};
use gitsense_engine::index::live::{self, WriteOp, WriteSummary};
use gitsense_engine::index::IndexInfo;
use gitsense_engine::search::Engine;
use js_sys::Uint8Array;
use rusqlite::{Connection, OpenFlags};
use serde::Serialize;
use sqlite_wasm_rs::vfs::transfer::DbTransfer;
use std::cell::RefCell;
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
}

pub struct LocalIndex {
    name: String,
    file: String,
    place: Place,
    storage_reason: String,
    engine: RefCell<Option<Engine>>,
    timings: RefCell<LocalTimings>,
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
    /// Opens the writable index `name`; `create`: makes it, and fails
    /// with `index.exists` if there is one, else fails with
    /// `index.not_found` if there is none.
    pub async fn open(name: &str, pref: StoragePref, create: bool) -> Result<LocalIndex> {
        let t = now_ms();
        let file = file_of(name)?;
        let (place, reason) = Self::place(pref, &file, create).await?;
        let exists = match &place {
            Place::Opfs(s) => s.contains(&file)?,
            Place::IndexedDb { db, memory } => {
                let stored = idb_names(db).await?.contains(&file);
                if stored && !memory.contains(&file) {
                    let bytes: Uint8Array = host::idb_get(db, &file)
                        .await
                        .map_err(|e| js_error(&e, "storage.failed", "reading IndexedDB"))?
                        .unchecked_into();
                    memory.import(&file, &bytes)?;
                }
                stored
            }
            Place::Memory(m) => m.contains(&file),
        };
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
        let conn = Connection::open_with_flags_and_vfs(
            &file,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            place.vfs(),
        )
        .map_err(|e| storage_err("opening the writable index", e))?;
        conn.execute_batch("PRAGMA temp_store = MEMORY")
            .map_err(|e| Error::db("configuring the connection", e))?;
        if create {
            let now = js_sys::Date::new_0()
                .to_iso_string()
                .as_string()
                .unwrap_or_default();
            live::create(&conn, &format!("local:{name}"), &now)?;
        }
        let mut engine = Engine::from_connection(conn)?;
        engine.set_clock(now_ms);
        engine.set_time_budget(Some(SEARCH_BUDGET_MS));
        let index = LocalIndex {
            name: name.to_string(),
            file,
            place,
            storage_reason: reason,
            engine: RefCell::new(Some(engine)),
            timings: RefCell::new(LocalTimings::default()),
        };
        if create {
            index.save().await?;
        }
        index.timings.borrow_mut().open_ms = now_ms() - t;
        Ok(index)
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

    fn with_engine<T>(&self, f: impl FnOnce(&mut Engine) -> Result<T>) -> Result<T> {
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

    /// Applies a write; resolves once it is committed where the index
    /// lives (see the module docs).
    pub async fn write(&self, op: WriteOp, json: &str) -> Result<WriteSummary> {
        let t = now_ms();
        let summary = self.with_engine(|e| e.write(op, json))?;
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
    async fn save(&self) -> Result<()> {
        let Place::IndexedDb { db, memory } = &self.place else {
            return Ok(());
        };
        let t = now_ms();
        let bytes = memory.export(&self.file)?;
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
                name: &self.file,
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
    async fn reload(&self) -> Result<()> {
        let Place::IndexedDb { db, memory } = &self.place else {
            return Ok(());
        };
        self.engine.borrow_mut().take();
        memory.remove(&self.file)?;
        let bytes: Uint8Array = host::idb_get(db, &self.file)
            .await
            .map_err(|e| js_error(&e, "storage.failed", "reading IndexedDB"))?
            .unchecked_into();
        memory.import(&self.file, &bytes)?;
        let conn = Connection::open_with_flags_and_vfs(
            &self.file,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            memory::VFS_NAME,
        )
        .map_err(|e| storage_err("reopening the writable index", e))?;
        let mut engine = Engine::from_connection(conn)?;
        engine.set_clock(now_ms);
        engine.set_time_budget(Some(SEARCH_BUDGET_MS));
        *self.engine.borrow_mut() = Some(engine);
        Ok(())
    }

    pub fn info(&self) -> Result<LocalInfo> {
        let index = self.with_engine(|e| Ok(e.info().clone()))?;
        Ok(LocalInfo {
            writable: true,
            name: self.name.clone(),
            storage: self.place.kind(),
            storage_reason: self.storage_reason.clone(),
            file: self.file.clone(),
            size_bytes: index.size_bytes(),
            index,
            timings: self.timings.borrow().clone(),
        })
    }

    /// Closes the index and lets go of its storage (the OPFS pool, the
    /// memory copy of an IndexedDB index).
    pub fn close(&self) {
        self.engine.borrow_mut().take();
        match &self.place {
            Place::Opfs(s) => s.release(),
            Place::IndexedDb { db, memory } => {
                let _ = memory.remove(&self.file);
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
