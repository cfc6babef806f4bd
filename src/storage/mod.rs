//! Where the browser keeps downloaded indexes, behind one interface.
//!
//! [`Storage`] is the only type the session talks to: it lists the stored
//! indexes, stores verified bytes under a new name, opens a stored index
//! as a read-only SQLite connection and removes files. The backends:
//! - [`opfs`]: the OPFS sync-access-handle pool (survives reloads and
//!   restarts; one tab at a time),
//! - [`idb`]: the bytes in IndexedDB, imported into the in-memory VFS at
//!   start (any number of tabs; the fallback when OPFS is held or missing),
//! - [`memory`]: the in-memory VFS only (nothing survives the page),
//! - [`lazy`]: not a place to store but a way to read: the published raw
//!   index over HTTP Range requests, answering before a download could
//!   finish, while its pages are copied into OPFS; the finished, verified
//!   copy is stored in the OPFS pool like a download.
//!
//! Every stored index is named `gsx-<scope>-<seq>-<sha256>.db`: the scope
//! (a hash of the manifest URL without its query string) keeps indexes published at different URLs
//! apart, the SHA-256 of its bytes says what it is, the sequence number
//! which one is newest. Storing is atomic in every backend (a half-written
//! file never appears under its name), so "the newest stored index" is
//! always a complete, verified one and a swap is: store the new file, open
//! it, drop the old connection, remove the old file.

pub mod idb;
pub mod lazy;
pub mod memory;
pub mod opfs;

use gitsense_engine::error::{Error, Result};
use js_sys::Uint8Array;
use rusqlite::{Connection, OpenFlags};
use serde::{Deserialize, Serialize};
use sqlite_wasm_rs::vfs::memvfs::MemVfsUtil;
use sqlite_wasm_rs::vfs::transfer::{DbImport, DbTransfer};
use sqlite_wasm_vfs::sahpool::OpfsSAHPoolUtil;

/// Which backend a caller asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum StoragePref {
    /// OPFS, else IndexedDB, else memory; with nothing stored yet and
    /// OPFS usable, the index is first read lazily (see [`lazy`]).
    #[default]
    Auto,
    Opfs,
    #[serde(rename = "indexeddb")]
    IndexedDb,
    Memory,
    /// Read lazily even where no copy can be kept (then pages live in a
    /// bounded memory cache); with OPFS, as `Auto` on a first visit.
    Lazy,
}

/// Which backend is in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StorageKind {
    Opfs,
    #[serde(rename = "indexeddb")]
    IndexedDb,
    Memory,
    /// Pages read over HTTP Range requests (while OPFS fills, or kept in
    /// memory only).
    Lazy,
}

impl StorageKind {
    /// How messages name the backend.
    pub fn name(self) -> &'static str {
        match self {
            StorageKind::Opfs => "OPFS",
            StorageKind::IndexedDb => "IndexedDB",
            StorageKind::Memory => "memory",
            StorageKind::Lazy => "lazy",
        }
    }
}

/// A complete index in storage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredIndex {
    pub name: String,
    pub scope: String,
    pub seq: u64,
    pub sha256: String,
    pub size: u64,
}

impl StoredIndex {
    pub fn new(scope: &str, seq: u64, sha256: &str, size: u64) -> StoredIndex {
        StoredIndex {
            name: format!("gsx-{scope}-{seq:08}-{sha256}.db"),
            scope: scope.to_string(),
            seq,
            sha256: sha256.to_string(),
            size,
        }
    }

    /// Parses a file name made by [`StoredIndex::new`]; other names (SQLite
    /// sidecars, foreign files) give `None`.
    pub fn parse(name: &str, size: u64) -> Option<StoredIndex> {
        let rest = name.strip_prefix("gsx-")?.strip_suffix(".db")?;
        let mut parts = rest.splitn(3, '-');
        let (scope, seq, sha) = (parts.next()?, parts.next()?, parts.next()?);
        let is_hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
        let seq = seq.parse().ok()?;
        (is_hex(scope, SCOPE_LEN) && is_hex(sha, 64))
            .then(|| StoredIndex::new(scope, seq, sha, size))
    }
}

/// Hex digits of the manifest-URL hash in file names.
const SCOPE_LEN: usize = 12;

/// The storage scope of a manifest URL: a hash of the URL without its
/// query string or fragment, so `manifest.json?v=2` (a cache-busting
/// revision of the same index) finds, updates and replaces the copy
/// `manifest.json?v=1` stored instead of keeping a second one.
pub fn scope_of(manifest_url: &str) -> String {
    use sha2::{Digest, Sha256};
    let key = manifest_url.split(['?', '#']).next().unwrap_or_default();
    gitsense_engine::util::hex(&Sha256::digest(key.as_bytes()))[..SCOPE_LEN].to_string()
}

/// The newest of some stored indexes.
pub fn newest(indexes: impl IntoIterator<Item = StoredIndex>) -> Option<StoredIndex> {
    indexes.into_iter().max_by_key(|i| i.seq)
}

/// A storage backend.
enum Backend {
    Opfs(opfs::OpfsStore),
    IndexedDb(idb::IdbStore),
    Memory(memory::MemoryStore),
}

/// The storage of one session: a backend, seen through the scope of one
/// manifest URL.
pub struct Storage {
    backend: Backend,
    scope: String,
    /// Why OPFS is not the backend although it was wanted (`Auto`, `Opfs`,
    /// `Lazy`): a lazy fill fails with it (`fillerror`).
    opfs_failure: Option<Error>,
}

impl Storage {
    /// Sets up the backend `pref` asks for; `Auto` falls back from OPFS to
    /// IndexedDB to memory. Returns the storage and why that backend was
    /// chosen.
    pub async fn select(pref: StoragePref, manifest_url: &str) -> Result<(Storage, String)> {
        let mut opfs_failure = None;
        let (backend, reason) = match pref {
            // No room for even the pool's slots: IndexedDB, else memory,
            // as when a store finds no room (`Session`'s fallback).
            StoragePref::Opfs => match opfs::OpfsStore::install().await {
                Ok(s) => (Backend::Opfs(s), "OPFS requested".to_string()),
                Err(e) if e.code == "storage.quota_exceeded" => {
                    let (backend, reason) = Self::fallback_from_full(&e).await?;
                    opfs_failure = Some(e);
                    (backend, format!("OPFS requested; {reason}"))
                }
                Err(e) => return Err(e),
            },
            StoragePref::IndexedDb => (
                Backend::IndexedDb(idb::IdbStore::open().await?),
                "IndexedDB requested".to_string(),
            ),
            StoragePref::Memory => (
                Backend::Memory(memory::MemoryStore::new()?),
                "memory requested: nothing is kept after the engine closes".to_string(),
            ),
            StoragePref::Auto => {
                let (backend, reason, failure) = Self::fallback().await?;
                opfs_failure = failure;
                (backend, reason)
            }
            StoragePref::Lazy => match opfs::OpfsStore::install().await {
                Ok(s) => (
                    Backend::Opfs(s),
                    "lazy requested; pages are copied into OPFS".to_string(),
                ),
                Err(e) => {
                    let reason = format!(
                        "lazy requested; OPFS is not usable ({}), so nothing is kept after the engine closes",
                        e.message
                    );
                    opfs_failure = Some(e);
                    (Backend::Memory(memory::MemoryStore::new()?), reason)
                }
            },
        };
        let storage = Storage {
            backend,
            scope: scope_of(manifest_url),
            opfs_failure,
        };
        Ok((storage, reason))
    }

    /// IndexedDB, else memory, after OPFS had no room (`full`).
    async fn fallback_from_full(full: &Error) -> Result<(Backend, String)> {
        let why = format!("OPFS has no room ({}: {})", full.code, full.message);
        Ok(match idb::IdbStore::open().await {
            Ok(s) => (
                Backend::IndexedDb(s),
                format!("{why}, so the index goes to IndexedDB"),
            ),
            Err(_) => (
                Backend::Memory(memory::MemoryStore::new()?),
                format!("{why}, so the index lives in memory for this visit only"),
            ),
        })
    }

    /// OPFS, else IndexedDB, else memory; with why OPFS was not usable.
    async fn fallback() -> Result<(Backend, String, Option<Error>)> {
        let opfs_err = match opfs::OpfsStore::install().await {
            Ok(s) => {
                return Ok((
                    Backend::Opfs(s),
                    "OPFS sync access handles are available".into(),
                    None,
                ))
            }
            Err(e) => e,
        };
        let idb_err = match idb::IdbStore::open().await {
            Ok(s) => {
                let reason = format!("OPFS is not usable ({}); using IndexedDB", opfs_err.message);
                return Ok((Backend::IndexedDb(s), reason, Some(opfs_err)));
            }
            Err(e) => e,
        };
        let reason = format!(
            "OPFS is not usable ({}) and IndexedDB is not usable ({}); \
             the index lives in memory for this visit only",
            opfs_err.message, idb_err.message
        );
        Ok((
            Backend::Memory(memory::MemoryStore::new()?),
            reason,
            Some(opfs_err),
        ))
    }

    /// Why OPFS is not the backend although it was wanted, if it is not.
    pub fn opfs_failure(&self) -> Option<&Error> {
        self.opfs_failure.as_ref()
    }

    pub fn kind(&self) -> StorageKind {
        match &self.backend {
            Backend::Opfs(_) => StorageKind::Opfs,
            Backend::IndexedDb(_) => StorageKind::IndexedDb,
            Backend::Memory(_) => StorageKind::Memory,
        }
    }

    /// Every complete index stored for this manifest URL.
    pub async fn list(&self) -> Result<Vec<StoredIndex>> {
        let all = match &self.backend {
            Backend::Opfs(s) => s.list()?,
            Backend::IndexedDb(s) => s.list().await?,
            Backend::Memory(s) => s.list()?,
        };
        Ok(all.into_iter().filter(|i| i.scope == self.scope).collect())
    }

    /// Stores verified index bytes as the newest index.
    pub async fn store(&self, sha256: &str, bytes: &Uint8Array) -> Result<StoredIndex> {
        let seq = self.list().await?.iter().map(|i| i.seq).max().unwrap_or(0) + 1;
        let idx = StoredIndex::new(&self.scope, seq, sha256, bytes.length() as u64);
        match &self.backend {
            Backend::Opfs(s) => s.store(&idx, bytes).await?,
            Backend::IndexedDb(s) => s.store(&idx, bytes).await?,
            Backend::Memory(s) => s.store(&idx, bytes)?,
        }
        Ok(idx)
    }

    /// Starts storing an index of `size` bytes streamed in order (see
    /// [`StoreStream`]); OPFS and memory only.
    pub async fn begin_store(&self, sha256: &str, size: u64) -> Result<StoreStream<'_>> {
        let seq = self.list().await?.iter().map(|i| i.seq).max().unwrap_or(0) + 1;
        let idx = StoredIndex::new(&self.scope, seq, sha256, size);
        let inner = match &self.backend {
            Backend::Opfs(s) => StreamInner::Opfs(s.begin_import(&idx).await?),
            Backend::Memory(s) => StreamInner::Memory(s.begin_import(&idx)?),
            Backend::IndexedDb(_) => {
                return Err(Error::new(
                    "storage.unavailable",
                    "streamed stores go to OPFS or memory only",
                ))
            }
        };
        Ok(StoreStream { inner, idx })
    }

    /// Whether this storage keeps indexes across visits in OPFS.
    pub fn is_opfs(&self) -> bool {
        matches!(self.backend, Backend::Opfs(_))
    }

    /// The scope (hash of the manifest URL) of this storage.
    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// Opens a stored index read-only.
    pub async fn open(&self, idx: &StoredIndex) -> Result<Connection> {
        // SQLite is in the module's second part: wait for the worker's
        // fetch of it rather than have a stub load it again, in sync.
        crate::host::second_part().await;
        let vfs = match &self.backend {
            Backend::Opfs(_) => opfs::VFS_NAME,
            Backend::IndexedDb(s) => {
                s.load(idx).await?;
                memory::VFS_NAME
            }
            Backend::Memory(_) => memory::VFS_NAME,
        };
        let conn = Connection::open_with_flags_and_vfs(
            &idx.name,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            vfs,
        )
        .map_err(|e| {
            Error::new(
                "index.unreadable",
                format!("cannot open the stored index: {e}"),
            )
        })?;
        // Sorts and temporary b-trees stay in memory: the OPFS pool has a
        // slot per file and the index is read-only anyway.
        conn.execute_batch("PRAGMA temp_store = MEMORY")
            .map_err(|e| Error::db("configuring the connection", e))?;
        Ok(conn)
    }

    /// Removes a stored index (its connection must be closed).
    pub async fn remove(&self, idx: &StoredIndex) -> Result<()> {
        match &self.backend {
            Backend::Opfs(s) => s.remove(&idx.name),
            Backend::IndexedDb(s) => s.remove(&idx.name).await,
            Backend::Memory(s) => s.remove(&idx.name),
        }
    }

    /// Releases what the backend holds once every connection is closed:
    /// OPFS access handles, the IndexedDB connection, memory copies.
    pub fn release(&self) {
        match &self.backend {
            Backend::Opfs(s) => s.release(),
            Backend::IndexedDb(s) => s.release(),
            Backend::Memory(s) => s.release(),
        }
    }
}

/// A store streamed in order: [`StoreStream::write`] the bytes, then
/// [`StoreStream::finish`]; dropped before finishing, nothing is stored.
pub struct StoreStream<'a> {
    inner: StreamInner<'a>,
    idx: StoredIndex,
}

enum StreamInner<'a> {
    Opfs(DbImport<<OpfsSAHPoolUtil as DbTransfer>::Target<'a>>),
    Memory(DbImport<<MemVfsUtil as DbTransfer>::Target<'a>>),
}

impl StoreStream<'_> {
    pub fn write(&mut self, bytes: &[u8]) -> Result<()> {
        match &mut self.inner {
            StreamInner::Opfs(i) => i
                .write(bytes)
                .map_err(|e| opfs::opfs_err("writing the index", e)),
            StreamInner::Memory(i) => i
                .write(bytes)
                .map_err(|e| memory::mem_err("writing the index", e)),
        }
    }

    /// Publishes the stored index under its name.
    pub fn finish(self) -> Result<StoredIndex> {
        match self.inner {
            StreamInner::Opfs(i) => i
                .finish()
                .map_err(|e| opfs::opfs_err("finishing the import", e))?,
            StreamInner::Memory(i) => i
                .finish()
                .map_err(|e| memory::mem_err("finishing the import", e))?,
        }
        Ok(self.idx)
    }
}

/// Removes every stored index of every backend (the OPFS pool directory,
/// lazy fill files and the IndexedDB database). Fails with `storage.busy`
/// while an open engine, here or in another tab, holds the OPFS pool.
pub async fn clear_all() -> Result<()> {
    let opfs = crate::host::remove_opfs_directory(opfs::DIRECTORY).await;
    let fill = crate::host::remove_opfs_directory(lazy::FILL_DIRECTORY).await;
    let idb = crate::host::idb_delete_database().await;
    opfs.map_err(|e| crate::host::js_error(&e, "storage.failed", "clearing OPFS"))?;
    fill.map_err(|e| crate::host::js_error(&e, "storage.failed", "clearing OPFS"))?;
    idb.map_err(|e| crate::host::js_error(&e, "storage.failed", "clearing IndexedDB"))?;
    Ok(())
}

/// Imports JS bytes as `idx` into a backend, copying 1 MiB at a time, so
/// wasm memory never holds more than one piece of an OPFS import. The
/// backend publishes the name only when the import finishes.
pub(crate) fn import_bytes<T: DbTransfer>(
    backend: &T,
    idx: &StoredIndex,
    bytes: &Uint8Array,
    err: impl Fn(&str, T::Error) -> Error,
) -> Result<()> {
    const CHUNK: u32 = 1 << 20;
    let mut import = backend
        .begin_import(&idx.name, idx.size)
        .map_err(|e| err("starting the import", e))?;
    let len = bytes.length();
    let mut buf = vec![0u8; CHUNK.min(len) as usize];
    let mut at = 0;
    while at < len {
        let end = (at + CHUNK).min(len);
        let piece = &mut buf[..(end - at) as usize];
        bytes.subarray(at, end).copy_to(piece);
        import
            .write(piece)
            .map_err(|e| err("writing the index", e))?;
        at = end;
    }
    import.finish().map_err(|e| err("finishing the import", e))
}
