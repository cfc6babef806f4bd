//! The in-memory backend: indexes live in sqlite-wasm-rs's memory VFS
//! (`memvfs`) for the life of the worker. Also the place the IndexedDB
//! backend imports its bytes into.

use super::{import_bytes, StoredIndex};
use gitsense_engine::error::{Error, Result};
use js_sys::Uint8Array;
use sqlite_wasm_rs::vfs::memvfs::MemVfsUtil;
use sqlite_wasm_rs::vfs::transfer::{DbImport, DbTransfer};
use sqlite_wasm_rs::vfs::VfsFilesManager;

/// The VFS name to open memvfs files with.
pub const VFS_NAME: &str = "memvfs";

pub struct MemoryStore {
    util: MemVfsUtil,
}

pub(crate) fn mem_err<E: std::fmt::Display>(what: &str, e: E) -> Error {
    Error::new("storage.failed", format!("{what} in memory: {e}"))
}

impl MemoryStore {
    pub fn new() -> Result<MemoryStore> {
        // SAFETY: the worker is single-threaded and all SQLite use stays on
        // it; sqlite3_initialize installs memvfs (sqlite3_os_init).
        let util = unsafe {
            sqlite_wasm_rs::sqlite3_initialize();
            MemVfsUtil::get()
        }
        .map_err(|e| mem_err("setting up the memory VFS", e))?;
        Ok(MemoryStore { util })
    }

    pub fn list(&self) -> Result<Vec<StoredIndex>> {
        let names = self.util.names().map_err(|e| mem_err("listing files", e))?;
        Ok(names
            .iter()
            .filter_map(|n| StoredIndex::parse(n, 0))
            .collect())
    }

    /// Every file in the memory VFS.
    pub fn names(&self) -> Result<Vec<String>> {
        self.util.names().map_err(|e| mem_err("listing files", e))
    }

    pub fn contains(&self, name: &str) -> bool {
        self.util.contains(name).unwrap_or(false)
    }

    pub fn store(&self, idx: &StoredIndex, bytes: &Uint8Array) -> Result<()> {
        import_bytes(&self.util, idx, bytes, mem_err)
    }

    /// Imports the bytes of a file that is not a published index (a
    /// writable index, `crate::local`) under `name`.
    pub fn import(&self, name: &str, bytes: &Uint8Array) -> Result<()> {
        let file = StoredIndex {
            name: name.to_string(),
            scope: String::new(),
            seq: 0,
            sha256: String::new(),
            size: u64::from(bytes.length()),
        };
        import_bytes(&self.util, &file, bytes, mem_err)
    }

    pub(crate) fn util(&self) -> &MemVfsUtil {
        &self.util
    }

    /// Starts a streamed import (see [`super::StoreStream`]).
    pub fn begin_import(
        &self,
        idx: &StoredIndex,
    ) -> Result<DbImport<<MemVfsUtil as DbTransfer>::Target<'_>>> {
        self.util
            .begin_import(&idx.name, idx.size)
            .map_err(|e| mem_err("starting the import", e))
    }

    /// Drops every index held in memory (the engine is closing).
    pub fn release(&self) {
        for idx in self.list().unwrap_or_default() {
            let _ = self.util.remove(&idx.name);
        }
    }

    pub fn remove(&self, name: &str) -> Result<()> {
        self.util
            .remove(name)
            .map_err(|e| mem_err("removing a file", e))?;
        Ok(())
    }
}
