//! Reading an index file page by page from anywhere: a read-only SQLite VFS
//! over a [`PageSource`].
//!
//! In: a name and a source that can read byte ranges of one immutable index
//! file. Out: a [`rusqlite::Connection`] opened on it (by the VFS name given
//! to [`PageFiles::register`]). Every read SQLite makes goes to the source,
//! so a source can trace them (`publish` finds the pages nearly every query
//! reads, tests check which tables a query touches) or fetch them over HTTP
//! Range requests (the browser's lazy mode, `web::storage::lazy`).
//!
//! The file reports `IMMUTABLE` device characteristics: SQLite then takes no
//! locks, looks for no journal and opens only the main file. Temporary files
//! (sorters, with `temp_store = FILE`) live in memory.

use crate::error::{Error, Result};
use crate::util::lock;
use rsqlite_vfs::{
    register_vfs, AccessMode, DeviceCharacteristics, LockLevel, MemChunksFile, OpenAccess,
    OpenOptions, OpenRequest, OpenedFile, OsCallback, SQLiteIoMethods, SQLiteVfs, SyncOptions,
    VfsError, VfsErrorCode, VfsFile, VfsResult, VfsStore,
};
use rusqlite::{Connection, OpenFlags};
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

/// The error code of a read a source declines because the page is not at
/// hand and it collects the pages a search needs rather than fetching
/// them one at a time (the browser's lazy mode: [`crate::reader::Reader::attempt`]
/// runs a search over such a source, the pages it missed are fetched in
/// one batch, and it runs again).
pub const PAGE_MISSING: &str = "reader.page_missing";

/// One immutable file, read in byte ranges.
pub trait PageSource: 'static {
    /// Bytes in the file.
    fn size(&self) -> u64;
    /// Fills `buf` with the bytes at `offset`; the range is inside the file.
    /// An error fails the SQLite call that asked (`SQLITE_IOERR_READ`) and is
    /// kept for [`PageFiles::take_error`].
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> Result<()>;
}

/// The files a registered page VFS can open, by name.
pub struct PageFiles<S> {
    files: Mutex<HashMap<String, Arc<Mutex<S>>>>,
    error: ErrorSlot,
}

/// The structured error of the last failed read (SQLite only sees an I/O
/// error code).
type ErrorSlot = Arc<Mutex<Option<Error>>>;

impl<S: PageSource> PageFiles<S> {
    /// Registers a VFS named `vfs_name` serving the files of the returned
    /// registry. The registration lives as long as the process (or worker).
    pub fn register<O: OsCallback + Default + 'static>(vfs_name: &str) -> Result<Arc<Self>> {
        let files = Arc::new(PageFiles {
            files: Mutex::new(HashMap::new()),
            error: ErrorSlot::default(),
        });
        let data = AppData {
            files: files.clone(),
            os: O::default(),
        };
        // SAFETY: the VFS, its I/O methods and the app data are the matching
        // types of this module; the registration is never freed (into_raw),
        // so callbacks always find their data. Registration happens once per
        // name (callers keep the registry in a once-cell).
        let reg = unsafe { register_vfs::<PageIo<S, O>, PageVfs<S, O>>(vfs_name, data, false) }
            .map_err(|e| Error::new("storage.failed", format!("registering the page VFS: {e}")))?;
        let _ = reg.into_raw();
        Ok(files)
    }

    /// Makes `source` openable as `name` (replacing a source of that name).
    pub fn insert(&self, name: &str, source: S) -> Arc<Mutex<S>> {
        let shared = Arc::new(Mutex::new(source));
        self.insert_shared(name, shared.clone());
        shared
    }

    /// Makes a source already shared openable as `name`.
    pub fn insert_shared(&self, name: &str, source: Arc<Mutex<S>>) {
        lock(&self.files).insert(name.to_string(), source);
    }

    /// Forgets `name`; open connections keep reading their source.
    pub fn remove(&self, name: &str) {
        lock(&self.files).remove(name);
    }

    /// The error of the last failed read, if any (taken, so it is reported once).
    pub fn take_error(&self) -> Option<Error> {
        lock(&self.error).take()
    }

    /// Opens `name` read-only through the VFS `vfs_name` (the one this
    /// registry was registered as).
    pub fn open(&self, name: &str, vfs_name: &str) -> Result<Connection> {
        let conn = Connection::open_with_flags_and_vfs(
            name,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            vfs_name,
        )
        .map_err(|e| {
            self.take_error().unwrap_or_else(|| {
                Error::new("index.unreadable", format!("cannot open {name}: {e}"))
            })
        })?;
        conn.execute_batch("PRAGMA temp_store = MEMORY")
            .map_err(|e| Error::db("configuring the connection", e))?;
        Ok(conn)
    }
}

struct AppData<S, O> {
    files: Arc<PageFiles<S>>,
    os: O,
}

/// An open file: the index (shared source) or an anonymous temporary file.
enum PageFile<S> {
    Index {
        source: Arc<Mutex<S>>,
        size: u64,
        error: ErrorSlot,
    },
    Temp(MemChunksFile),
}

fn read_only() -> VfsError {
    VfsError::new(VfsErrorCode::ReadOnly, "the index is read-only".into())
}

impl<S: PageSource> VfsFile for PageFile<S> {
    fn read(&mut self, buf: &mut [u8], offset: u64) -> VfsResult<usize> {
        match self {
            PageFile::Temp(f) => f.read(buf, offset),
            PageFile::Index {
                source,
                size,
                error,
            } => {
                if offset >= *size || buf.is_empty() {
                    return Ok(0);
                }
                let n = buf.len().min((*size - offset) as usize);
                lock(source).read_at(&mut buf[..n], offset).map_err(|e| {
                    let v = VfsError::new(VfsErrorCode::IoRead, e.message.clone().into());
                    *lock(error) = Some(e);
                    v
                })?;
                Ok(n)
            }
        }
    }

    fn write(&mut self, buf: &[u8], offset: u64) -> VfsResult<()> {
        match self {
            PageFile::Temp(f) => f.write(buf, offset),
            PageFile::Index { .. } => Err(read_only()),
        }
    }

    fn truncate(&mut self, size: u64) -> VfsResult<()> {
        match self {
            PageFile::Temp(f) => f.truncate(size),
            PageFile::Index { .. } => Err(read_only()),
        }
    }

    fn sync(&mut self, _options: SyncOptions) -> VfsResult<()> {
        Ok(())
    }

    fn size(&self) -> VfsResult<u64> {
        match self {
            PageFile::Temp(f) => f.size(),
            PageFile::Index { size, .. } => Ok(*size),
        }
    }

    fn lock(&mut self, _level: LockLevel) -> VfsResult<()> {
        Ok(())
    }

    fn unlock(&mut self, _level: LockLevel) -> VfsResult<()> {
        Ok(())
    }

    fn check_reserved_lock(&self) -> VfsResult<bool> {
        Ok(false)
    }

    fn device_characteristics(&self) -> DeviceCharacteristics {
        match self {
            PageFile::Temp(_) => DeviceCharacteristics::NONE,
            PageFile::Index { .. } => DeviceCharacteristics::IMMUTABLE,
        }
    }
}

struct PageStore<S, O>(PhantomData<(S, O)>);

impl<S: PageSource, O: OsCallback + 'static> VfsStore for PageStore<S, O> {
    type File = PageFile<S>;
    type AppData = AppData<S, O>;

    fn open_file(
        data: &Self::AppData,
        request: OpenRequest<'_>,
    ) -> VfsResult<OpenedFile<Self::File>> {
        let Some(name) = request.filename else {
            return Ok(OpenedFile {
                file: PageFile::Temp(MemChunksFile::default()),
                access: request.options.access(),
            });
        };
        let source = lock(&data.files.files).get(name.path()).cloned();
        match source {
            Some(source) if request.options.access() == OpenAccess::ReadOnly => {
                let size = lock(&source).size();
                Ok(OpenedFile {
                    file: PageFile::Index {
                        source,
                        size,
                        error: data.files.error.clone(),
                    },
                    access: OpenAccess::ReadOnly,
                })
            }
            Some(_) => Err(read_only()),
            None => Err(VfsError::new(
                VfsErrorCode::CantOpen,
                format!("no index named {:?}", name.path()).into(),
            )),
        }
    }

    fn close_file(
        _data: &Self::AppData,
        _name: Option<&str>,
        _file: Self::File,
        _options: OpenOptions,
    ) -> VfsResult<()> {
        Ok(())
    }

    fn access(data: &Self::AppData, name: &str, mode: AccessMode) -> VfsResult<bool> {
        Ok(mode != AccessMode::ReadWrite && lock(&data.files.files).contains_key(name))
    }

    fn full_pathname(_data: &Self::AppData, name: &str) -> VfsResult<String> {
        Ok(name.to_string())
    }

    fn delete_file(_data: &Self::AppData, _name: &str, _sync_dir: bool) -> VfsResult<()> {
        Err(read_only())
    }
}

struct PageIo<S, O>(PhantomData<(S, O)>);

impl<S: PageSource, O: OsCallback + 'static> SQLiteIoMethods for PageIo<S, O> {
    type Store = PageStore<S, O>;
}

struct PageVfs<S, O>(PhantomData<(S, O)>);

impl<S: PageSource, O: OsCallback + 'static> SQLiteVfs<PageIo<S, O>> for PageVfs<S, O> {
    type Os = O;

    fn os(data: &AppData<S, O>) -> &O {
        &data.os
    }
}

/// A bounded least-recently-used cache of pages, for sources that fetch
/// pages and have nowhere else to keep them.
pub struct PageCache {
    pages: HashMap<u32, (Box<[u8]>, u64)>,
    tick: u64,
    capacity: usize,
}

impl PageCache {
    /// A cache of at most `capacity` pages (at least 64).
    pub fn new(capacity: usize) -> Self {
        PageCache {
            pages: HashMap::new(),
            tick: 0,
            capacity: capacity.max(64),
        }
    }

    /// The page's bytes, marking it used.
    pub fn get(&mut self, page: u32) -> Option<&[u8]> {
        self.tick += 1;
        let tick = self.tick;
        self.pages.get_mut(&page).map(|(b, t)| {
            *t = tick;
            &**b
        })
    }

    pub fn contains(&self, page: u32) -> bool {
        self.pages.contains_key(&page)
    }

    /// Takes a page out of the cache (a source that stores it elsewhere
    /// from now on).
    pub fn remove(&mut self, page: u32) -> Option<Box<[u8]>> {
        self.pages.remove(&page).map(|(b, _)| b)
    }

    /// Keeps a page, dropping the least recently used one when full.
    pub fn insert(&mut self, page: u32, bytes: &[u8]) {
        self.tick += 1;
        if self.pages.len() >= self.capacity && !self.pages.contains_key(&page) {
            if let Some(old) = self
                .pages
                .iter()
                .min_by_key(|(_, (_, t))| *t)
                .map(|(p, _)| *p)
            {
                self.pages.remove(&old);
            }
        }
        self.pages.insert(page, (bytes.into(), self.tick));
    }

    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// The pages held, in no order.
    pub fn pages(&self) -> impl Iterator<Item = u32> + '_ {
        self.pages.keys().copied()
    }

    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }
}

/// Gaps (in pages) always fetched to join two runs.
pub(crate) const ALWAYS_JOIN_PAGES: u32 = 1;
/// Requests a browser runs at once per host over HTTP/1.1.
pub(crate) const WAVE: usize = 6;
/// What another wave of requests costs, in pages: a round trip of 50 ms
/// moves ~30 pages at 20 Mbit/s.
pub(crate) const PAGES_PER_WAVE: u64 = 30;

/// Runs of adjacent pages (ascending input), nothing joined across a
/// gap: what one request of several ranges asks for.
pub fn adjacent_runs(pages: impl Iterator<Item = u32>) -> Vec<(u32, u32)> {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for p in pages {
        match runs.last_mut() {
            Some((_, last)) if p <= *last + 1 => *last = p,
            _ => runs.push((p, p)),
        }
    }
    runs
}

/// Sorted pages → runs `[first, last]` to request, at most `max_runs`.
/// Runs are joined across gaps of `ALWAYS_JOIN_PAGES`; then across the
/// smallest gaps as long as that pays: a browser opens `WAVE`
/// connections per host over HTTP/1.1, so every `WAVE` more requests
/// queue for another round trip, which costs about what `PAGES_PER_WAVE`
/// pages of gap do. Of the joins in order of gap size, the prefix with the
/// least cost (waves × `PAGES_PER_WAVE` + gap pages fetched) is taken;
/// then, above `max_runs`, across any gap. The browser's lazy mode
/// fetches its batches of pages this way.
pub fn coalesce_runs(pages: impl Iterator<Item = u32>, max_runs: usize) -> Vec<(u32, u32)> {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for p in pages {
        match runs.last_mut() {
            Some((_, last)) if p <= *last + 1 + ALWAYS_JOIN_PAGES => *last = p,
            _ => runs.push((p, p)),
        }
    }
    let waves = |n: usize| n.div_ceil(WAVE) as u64;
    // Gaps between neighbours, smallest first: joining them in this order
    // is what the cost is weighed over.
    let mut gaps: Vec<(u32, usize)> = (1..runs.len())
        .map(|i| (runs[i].0 - runs[i - 1].1 - 1, i))
        .collect();
    gaps.sort_unstable();
    let (mut best, mut best_cost, mut extra) = (0, waves(runs.len()) * PAGES_PER_WAVE, 0u64);
    for (k, (gap, _)) in gaps.iter().enumerate() {
        extra += u64::from(*gap);
        let cost = waves(runs.len() - k - 1) * PAGES_PER_WAVE + extra;
        if cost < best_cost {
            (best, best_cost) = (k + 1, cost);
        }
    }
    // Joins needed to fit max_runs come on top, smallest gaps first.
    let joins = best.max(runs.len().saturating_sub(max_runs));
    let mut joined: Vec<bool> = vec![false; runs.len()];
    for (_, i) in &gaps[..joins.min(gaps.len())] {
        joined[*i] = true;
    }
    let mut out: Vec<(u32, u32)> = Vec::new();
    for (i, r) in runs.into_iter().enumerate() {
        match out.last_mut() {
            Some(last) if joined[i] => last.1 = r.1,
            _ => out.push(r),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{adjacent_runs, coalesce_runs, WAVE};

    #[test]
    fn adjacent_runs_join_neighbours_only() {
        assert_eq!(
            adjacent_runs([1, 2, 3, 5, 9, 10].into_iter()),
            vec![(1, 3), (5, 5), (9, 10)]
        );
        assert_eq!(adjacent_runs([7].into_iter()), vec![(7, 7)]);
        assert!(adjacent_runs(std::iter::empty()).is_empty());
    }

    #[test]
    fn runs_join_where_a_wave_of_requests_costs_more_than_the_gap() {
        // Adjacent and one-page gaps join; few runs stay apart.
        assert_eq!(
            coalesce_runs([1, 2, 4, 10].into_iter(), 24),
            vec![(1, 4), (10, 10)]
        );
        // Seven runs, gaps of 5 pages and one of 400: joining one small gap
        // saves a wave (30 pages) for 5 pages; the big gap stays.
        let pages = [0u32, 6, 12, 18, 24, 30, 431];
        let runs = coalesce_runs(pages.into_iter(), 24);
        assert!(runs.len() <= WAVE, "{runs:?}");
        assert!(runs.contains(&(431, 431)), "{runs:?}");
        let fetched: u32 = runs.iter().map(|(a, b)| b - a + 1).sum();
        assert!(fetched <= 7 + 5, "{fetched} pages: {runs:?}");
        // Thirteen runs 20 pages apart: three waves; one join (20 pages)
        // saves the third wave, more joins would not pay.
        let spread: Vec<u32> = (0..13).map(|i| i * 21).collect();
        let runs = coalesce_runs(spread.iter().copied(), 24);
        assert_eq!(runs.len(), 2 * WAVE, "{runs:?}");
        // Far apart: nothing joins (up to max_runs); then joins to fit.
        let far: Vec<u32> = (0..10).map(|i| i * 1000).collect();
        assert_eq!(coalesce_runs(far.iter().copied(), 24).len(), 10);
        assert_eq!(coalesce_runs(far.iter().copied(), 4).len(), 4);
        // Every page stays covered.
        for (pages, max) in [(&far, 4), (&spread, 24)] {
            let runs = coalesce_runs(pages.iter().copied(), max);
            for p in pages.iter() {
                assert!(
                    runs.iter().any(|(a, b)| a <= p && p <= b),
                    "{p} in {runs:?}"
                );
            }
        }
        assert!(coalesce_runs(std::iter::empty(), 24).is_empty());
    }

    use super::PageCache;

    #[test]
    fn the_page_cache_keeps_its_bound_and_drops_the_least_recently_used_page() {
        let mut c = PageCache::new(64);
        for p in 0..64 {
            c.insert(p, &[p as u8; 8]);
        }
        assert_eq!(c.get(0), Some(&[0u8; 8][..]));
        c.insert(100, &[1; 8]);
        assert_eq!(c.len(), 64);
        assert!(c.contains(0), "recently used, kept");
        assert!(!c.contains(1), "least recently used, dropped");
        assert!(c.contains(100));
        for p in 200..1000 {
            c.insert(p, &[2; 8]);
        }
        assert_eq!(c.len(), 64);
        assert!(c.contains(999) && !c.contains(0));
    }
}
