//! The OPFS backend: sqlite-wasm-vfs's sync-access-handle pool.
//!
//! The pool lives in the OPFS directory [`DIRECTORY`] and is registered as
//! the VFS [`VFS_NAME`]. Only a dedicated worker in a secure context can
//! install it, and only one worker at a time: a second tab finds the
//! handles taken (`storage.busy`) and falls back to IndexedDB. A page
//! reload can briefly race the old worker releasing its handles, so a busy
//! pool is retried a few times before giving up.

use super::{import_bytes, StoredIndex};
use crate::host;
use gitsense_engine::error::{Error, Result};
use js_sys::{Reflect, Uint8Array};
use sqlite_wasm_rs::vfs::transfer::{DbImport, DbTransfer};
use sqlite_wasm_rs::vfs::VfsFilesManager;
use sqlite_wasm_rs::WasmOsCallback;
use sqlite_wasm_vfs::sahpool::{install, OpfsSAHError, OpfsSAHPoolCfgBuilder, OpfsSAHPoolUtil};

/// OPFS directory of the pool (relative to the origin's OPFS root).
pub const DIRECTORY: &str = ".gitsense-search";
/// SQLite VFS name of the pool.
pub const VFS_NAME: &str = "gitsense-opfs";

/// Slots: two indexes during a swap, plus room to spare.
const INITIAL_CAPACITY: usize = 4;
/// Busy retries cover a reloaded page racing its old worker (~1 s total).
const BUSY_RETRIES: u32 = 5;
const BUSY_RETRY_MS: u32 = 200;

pub struct OpfsStore {
    util: OpfsSAHPoolUtil,
}

fn is_busy(e: &OpfsSAHError) -> bool {
    match e {
        OpfsSAHError::Opfs { value, .. } => {
            Reflect::get(value, &"name".into())
                .ok()
                .and_then(|n| n.as_string())
                .as_deref()
                == Some("NoModificationAllowedError")
        }
        OpfsSAHError::Cleanup { error, .. } => is_busy(error),
        _ => false,
    }
}

/// Chromium's sync access handles have answered a failed write with a
/// negative error code read as an unsigned 32-bit count (4294967288: -8,
/// `base::File`'s `FILE_ERROR_NO_SPACE`, when the quota is exhausted): a
/// count beyond what was asked is that code, never a length.
fn io_error_code(expected: usize, actual: f64) -> Option<i64> {
    (actual > expected as f64 && (2f64.powi(31)..2f64.powi(32)).contains(&actual))
        .then(|| actual as i64 - (1i64 << 32))
}

const FILE_ERROR_NO_SPACE: i64 = -8;

pub(crate) fn opfs_err(what: &str, e: OpfsSAHError) -> Error {
    if let OpfsSAHError::ShortIo {
        operation,
        expected,
        actual,
    } = &e
    {
        return match io_error_code(*expected, *actual) {
            Some(FILE_ERROR_NO_SPACE) => Error::new(
                "storage.quota_exceeded",
                format!("{what}: {operation} failed for lack of space (error -8): the browser's storage quota is exhausted"),
            ),
            Some(code) => Error::new("storage.failed", format!("{what}: {operation} failed (error {code})")),
            None => Error::new("storage.failed", format!("{what}: {e}")),
        };
    }
    let code = match &e {
        OpfsSAHError::NotSupported => "storage.unavailable",
        OpfsSAHError::NoCapacity => "storage.failed",
        e if is_busy(e) => "storage.busy",
        OpfsSAHError::Opfs { value, .. }
            if Reflect::get(value, &"name".into())
                .ok()
                .and_then(|n| n.as_string())
                .as_deref()
                == Some("QuotaExceededError") =>
        {
            "storage.quota_exceeded"
        }
        _ => "storage.failed",
    };
    let message = match code {
        "storage.busy" => {
            format!("{what}: another tab or worker holds the OPFS storage pool ({e})")
        }
        "storage.unavailable" => {
            format!("{what}: OPFS sync access handles are not available here ({e})")
        }
        _ => format!("{what}: {e}"),
    };
    Error::new(code, message)
}

impl OpfsStore {
    pub async fn install() -> Result<OpfsStore> {
        let cfg = OpfsSAHPoolCfgBuilder::new()
            .vfs_name(VFS_NAME)
            .directory(DIRECTORY)
            .initial_capacity(INITIAL_CAPACITY)
            .build();
        let mut attempt = 0;
        loop {
            match install::<WasmOsCallback>(&cfg, false).await {
                Ok(util) => {
                    // A pool paused by close() in this worker comes back here.
                    match util.resume().await {
                        Ok(()) => return Ok(OpfsStore { util }),
                        // Its directory was removed meanwhile (clear()):
                        // drop the stale registration and start afresh.
                        Err(e) if util.is_paused() && attempt == 0 => {
                            // SAFETY: a paused pool has no open files, and
                            // no connection of this worker uses it.
                            unsafe { util.uninstall() }
                                .map_err(|_| opfs_err("resuming the OPFS pool", e))?;
                            attempt += 1;
                        }
                        Err(e) => return Err(opfs_err("resuming the OPFS pool", e)),
                    }
                }
                Err(e) if is_busy(&e) && attempt < BUSY_RETRIES => {
                    attempt += 1;
                    host::sleep(BUSY_RETRY_MS).await;
                }
                Err(e) => return Err(opfs_err("installing the OPFS pool", e)),
            }
        }
    }

    pub fn list(&self) -> Result<Vec<StoredIndex>> {
        let names = self
            .util
            .names()
            .map_err(|e| opfs_err("listing OPFS files", e))?;
        Ok(names
            .iter()
            .filter_map(|n| StoredIndex::parse(n, 0))
            .collect())
    }

    /// Imports the bytes; the pool publishes the name only on commit, so an
    /// interrupted import leaves no file behind.
    pub async fn store(&self, idx: &StoredIndex, bytes: &Uint8Array) -> Result<()> {
        let files = self.util.len().map_err(|e| opfs_err("counting files", e))?;
        self.util
            .ensure_capacity(files + 2)
            .await
            .map_err(|e| opfs_err("growing the OPFS pool", e))?;
        import_bytes(&self.util, idx, bytes, opfs_err)
    }

    /// Starts a streamed import (see [`super::StoreStream`]).
    pub async fn begin_import(
        &self,
        idx: &StoredIndex,
    ) -> Result<DbImport<<OpfsSAHPoolUtil as DbTransfer>::Target<'_>>> {
        let files = self.util.len().map_err(|e| opfs_err("counting files", e))?;
        self.util
            .ensure_capacity(files + 2)
            .await
            .map_err(|e| opfs_err("growing the OPFS pool", e))?;
        self.util
            .begin_import(&idx.name, idx.size)
            .map_err(|e| opfs_err("starting the import", e))
    }

    /// Whether the pool holds a file called `name` (any file, not only a
    /// published index).
    pub fn contains(&self, name: &str) -> Result<bool> {
        Ok(self.names()?.iter().any(|n| n == name))
    }

    /// Every file in the pool.
    pub fn names(&self) -> Result<Vec<String>> {
        self.util
            .names()
            .map_err(|e| opfs_err("listing OPFS files", e))
    }

    /// Makes room for `n` more files in the pool.
    pub async fn ensure_room(&self, n: usize) -> Result<()> {
        let files = self.util.len().map_err(|e| opfs_err("counting files", e))?;
        self.util
            .ensure_capacity(files + n)
            .await
            .map_err(|e| opfs_err("growing the OPFS pool", e))
    }

    pub fn remove(&self, name: &str) -> Result<()> {
        self.util
            .remove(name)
            .map_err(|e| opfs_err("removing an OPFS file", e))?;
        Ok(())
    }

    /// Lets go of the access handles so another tab can take the pool.
    pub fn release(&self) {
        let _ = self.util.pause();
    }
}
