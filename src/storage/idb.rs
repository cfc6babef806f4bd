//! The IndexedDB backend: index bytes persist in IndexedDB (see
//! `js/storage.js`) and are imported into the memory VFS when opened. Works in
//! any number of tabs at once and where OPFS sync access handles are
//! missing; costs one copy of the index in memory per tab.

use super::memory::MemoryStore;
use super::StoredIndex;
use crate::host::{self, js_error, to_js};
use gitsense_engine::error::Result;
use js_sys::Uint8Array;
use wasm_bindgen::{JsCast, JsValue};

pub struct IdbStore {
    db: JsValue,
    memory: MemoryStore,
}

impl IdbStore {
    pub async fn open() -> Result<IdbStore> {
        let db = host::idb_open()
            .await
            .map_err(|e| js_error(&e, "storage.unavailable", "opening IndexedDB"))?;
        Ok(IdbStore {
            db,
            memory: MemoryStore::new()?,
        })
    }

    pub async fn list(&self) -> Result<Vec<StoredIndex>> {
        let v = host::idb_list(&self.db)
            .await
            .map_err(|e| js_error(&e, "storage.failed", "listing IndexedDB"))?;
        let all: Vec<StoredIndex> = serde_wasm_bindgen::from_value(v).map_err(|e| {
            gitsense_engine::Error::new(
                "storage.failed",
                format!("unreadable IndexedDB record: {e}"),
            )
        })?;
        // Skip records written by another layout rather than trusting them.
        Ok(all
            .into_iter()
            .filter(|i| StoredIndex::parse(&i.name, i.size).as_ref() == Some(i))
            .collect())
    }

    pub async fn store(&self, idx: &StoredIndex, bytes: &Uint8Array) -> Result<()> {
        host::idb_put(&self.db, to_js(idx), bytes)
            .await
            .map_err(|e| js_error(&e, "storage.failed", "storing in IndexedDB"))?;
        self.memory.store(idx, bytes)
    }

    /// Makes `idx` openable in the memory VFS (under its own name).
    pub async fn load(&self, idx: &StoredIndex) -> Result<()> {
        if !self.memory.contains(&idx.name) {
            let v = host::idb_get(&self.db, &idx.name)
                .await
                .map_err(|e| js_error(&e, "storage.failed", "reading IndexedDB"))?;
            let bytes: Uint8Array = v.unchecked_into();
            self.memory.store(idx, &bytes)?;
        }
        Ok(())
    }

    pub async fn remove(&self, name: &str) -> Result<()> {
        if self.memory.contains(name) {
            self.memory.remove(name)?;
        }
        host::idb_delete(&self.db, name)
            .await
            .map_err(|e| js_error(&e, "storage.failed", "removing from IndexedDB"))?;
        Ok(())
    }

    pub fn release(&self) {
        self.memory.release();
        host::idb_close(&self.db);
    }
}
