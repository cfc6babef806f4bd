// JS half of the storage backends, called from Rust (src/storage/):
// IndexedDB for the IndexedDB backend, and removing everything stored.
//
// IndexedDB: the index bytes live in the `data` store keyed by file name,
// their description ({ name, seq, sha256, size }) in `indexes`; both are
// written in one transaction, so a file is either fully stored and
// described or not there at all.

export const DB_NAME = 'gitsense-search';
const DB_VERSION = 1;

function fail(code, message) {
  const e = new Error(message);
  e.code = code;
  return e;
}

function storageError(what, err) {
  if (err && err.name === 'QuotaExceededError') {
    return fail('storage.quota_exceeded', `${what}: the browser's storage quota is exhausted`);
  }
  return fail('storage.failed', `${what}: ${err ? `${err.name}: ${err.message}` : 'unknown IndexedDB error'}`);
}

function request(r, what) {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(storageError(what, r.error));
  });
}

function finished(tx, what) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onabort = tx.onerror = () => reject(storageError(what, tx.error));
  });
}

export async function idbOpen() {
  if (typeof indexedDB === 'undefined' || !indexedDB) {
    throw fail('storage.unavailable', 'IndexedDB is not available in this context');
  }
  let r;
  try {
    r = indexedDB.open(DB_NAME, DB_VERSION);
  } catch (e) {
    throw storageError('opening IndexedDB', e);
  }
  r.onupgradeneeded = () => {
    const db = r.result;
    if (!db.objectStoreNames.contains('indexes')) db.createObjectStore('indexes', { keyPath: 'name' });
    if (!db.objectStoreNames.contains('data')) db.createObjectStore('data');
  };
  const db = await request(r, 'opening IndexedDB');
  // Let GitSenseSearch.clear() in any tab delete the database; the index
  // already imported into memory keeps answering here.
  db.onversionchange = () => db.close();
  return db;
}

/** Descriptions of the stored files. */
export async function idbList(db) {
  const tx = db.transaction('indexes', 'readonly');
  return request(tx.objectStore('indexes').getAll(), 'listing stored indexes');
}

export async function idbPut(db, meta, bytes) {
  const tx = db.transaction(['indexes', 'data'], 'readwrite');
  tx.objectStore('data').put(bytes, meta.name);
  tx.objectStore('indexes').put(meta);
  await finished(tx, 'storing the index in IndexedDB');
}

export async function idbGet(db, name) {
  const tx = db.transaction('data', 'readonly');
  const v = await request(tx.objectStore('data').get(name), 'reading the stored index');
  if (v === undefined) throw fail('storage.failed', `the stored index ${name} is missing from IndexedDB`);
  return v instanceof Uint8Array ? v : new Uint8Array(v);
}

export async function idbDelete(db, name) {
  const tx = db.transaction(['indexes', 'data'], 'readwrite');
  tx.objectStore('data').delete(name);
  tx.objectStore('indexes').delete(name);
  await finished(tx, 'removing a stored index');
}

export function idbClose(db) {
  db.close();
}

/** Deletes the IndexedDB database (open connections close themselves). */
export function idbDeleteDatabase() {
  return new Promise((resolve, reject) => {
    if (typeof indexedDB === 'undefined' || !indexedDB) return resolve();
    const r = indexedDB.deleteDatabase(DB_NAME);
    r.onsuccess = () => resolve();
    r.onerror = () => reject(storageError('deleting the IndexedDB database', r.error));
  });
}

/** Removes an OPFS directory and everything in it; false if it was not there. */
export async function removeOpfsDirectory(name) {
  if (typeof navigator === 'undefined' || !navigator.storage || !navigator.storage.getDirectory) return false;
  try {
    const root = await navigator.storage.getDirectory();
    await root.removeEntry(name, { recursive: true });
    return true;
  } catch (e) {
    if (e && e.name === 'NotFoundError') return false;
    if (e && (e.name === 'NoModificationAllowedError' || e.name === 'InvalidModificationError')) {
      throw fail('storage.busy', 'an open search engine (in this or another tab) holds the OPFS storage; close it first');
    }
    throw storageError('removing the OPFS storage', e);
  }
}
