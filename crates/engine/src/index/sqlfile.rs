//! An index file's SQLite b-trees read without SQLite: the tables and
//! indexes a search reads, for the first answer of a lazily read index
//! before (or without) the SQLite module.
//!
//! In: a [`PageSource`] over one immutable SQLite file (as `publish`
//! writes it: no WAL, no pending journal). Out: rows by rowid, rows in
//! rowid order, and the entry of an index (or `WITHOUT ROWID` table) at
//! or before a key, as [`Value`]s decoded from SQLite's record format.
//! Pages are read through the source once and kept.
//!
//! What SQLite would call corruption (a bad offset, a loop, a record
//! shorter than its header says) is an `index.corrupt` error, never a
//! panic; a missing page is the source's error.

use super::btree::{cells, header_at, local_split, u32_at, varint, PageKind};
use super::pagevfs::{PageSource, PAGE_MISSING};
use crate::error::{Error, Result};
use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::rc::Rc;

/// A column value, as SQLite stores it (text as its UTF-8 bytes).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(Vec<u8>),
    Blob(Vec<u8>),
}

impl Value {
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(v) => Some(*v),
            _ => None,
        }
    }

    /// Text or blob bytes.
    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Text(b) | Value::Blob(b) => Some(b),
            _ => None,
        }
    }

    /// Text as a string (`None` for another type or invalid UTF-8).
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(b) => std::str::from_utf8(b).ok(),
            _ => None,
        }
    }

    /// SQLite's order of values under the BINARY collation: NULL, numbers,
    /// text, blobs.
    pub fn cmp_sql(&self, other: &Value) -> Ordering {
        fn class(v: &Value) -> u8 {
            match v {
                Value::Null => 0,
                Value::Int(_) | Value::Real(_) => 1,
                Value::Text(_) => 2,
                Value::Blob(_) => 3,
            }
        }
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a.cmp(b),
            (Value::Int(a), Value::Real(b)) => (*a as f64).total_cmp(b),
            (Value::Real(a), Value::Int(b)) => a.total_cmp(&(*b as f64)),
            (Value::Real(a), Value::Real(b)) => a.total_cmp(b),
            (Value::Text(a), Value::Text(b)) | (Value::Blob(a), Value::Blob(b)) => a.cmp(b),
            _ => class(self).cmp(&class(other)),
        }
    }
}

fn corrupt(what: impl Into<String>) -> Error {
    Error::new(
        "index.corrupt",
        format!("the index file is damaged: {}", what.into()),
    )
}

/// Decodes a record (SQLite's record format: a header of serial types,
/// then the values).
pub fn decode_record(rec: &[u8]) -> Result<Vec<Value>> {
    let bad = || corrupt("a record does not match its header");
    let (header_len, mut h) = varint(rec, 0).ok_or_else(bad)?;
    let header_len = usize::try_from(header_len).map_err(|_| bad())?;
    if header_len > rec.len() || header_len < h {
        return Err(bad());
    }
    let mut body = header_len;
    let mut out = Vec::new();
    while h < header_len {
        let (serial, n) = varint(rec, h).ok_or_else(bad)?;
        h += n;
        let width = match serial {
            0 | 8 | 9 | 10 | 11 => 0,
            1..=4 => serial as usize,
            5 => 6,
            6 | 7 => 8,
            s => usize::try_from((s - 12) / 2).map_err(|_| bad())?,
        };
        let bytes = rec
            .get(body..body.checked_add(width).ok_or_else(bad)?)
            .ok_or_else(bad)?;
        body += width;
        out.push(match serial {
            0 | 10 | 11 => Value::Null,
            8 => Value::Int(0),
            9 => Value::Int(1),
            1..=6 => {
                let mut v: i64 = if bytes[0] & 0x80 != 0 { -1 } else { 0 };
                for &x in bytes {
                    v = (v << 8) | i64::from(x);
                }
                Value::Int(v)
            }
            7 => Value::Real(f64::from_bits(u64::from_be_bytes(
                bytes.try_into().map_err(|_| bad())?,
            ))),
            s if s % 2 == 0 => Value::Blob(bytes.to_vec()),
            _ => Value::Text(bytes.to_vec()),
        });
    }
    Ok(out)
}

/// A page's bytes, shared with the file's page cache.
pub type Page = Rc<[u8]>;

/// The deepest b-tree descended (SQLite's own limit is 20).
const MAX_DEPTH: usize = 20;

/// One SQLite file, read page by page (see the module docs).
///
/// ```
/// use gitsense_engine::index::sqlfile::{SqlFile, Value};
/// # let dir = tempfile::tempdir()?;
/// # let path = gitsense_engine::index::write_example(&dir.path().join("chats.gsx"))?;
/// let file = SqlFile::open(std::fs::read(&path)?)?;
/// let version = file.find("index_meta", &[Value::Text(b"format_version".to_vec())])?;
/// assert!(version.is_some());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct SqlFile<S> {
    source: RefCell<S>,
    page_size: usize,
    usable: usize,
    page_count: u32,
    pages: RefCell<HashMap<u32, Page>>,
    roots: HashMap<String, u32>,
}

impl PageSource for Vec<u8> {
    fn size(&self) -> u64 {
        self.len() as u64
    }

    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> Result<()> {
        let at = usize::try_from(offset).map_err(|_| corrupt("an offset past the file"))?;
        let src = self
            .get(at..at + buf.len())
            .ok_or_else(|| corrupt("a read past the end of the file"))?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

impl<S: PageSource> SqlFile<S> {
    /// Reads the file header and the schema (page 1 and the schema's
    /// other pages).
    pub fn open(source: S) -> Result<Self> {
        let mut head = [0u8; 100];
        let size = source.size();
        if size < 100 {
            return Err(corrupt("shorter than a SQLite header"));
        }
        let mut source = source;
        source.read_at(&mut head, 0)?;
        if &head[..16] != b"SQLite format 3\0" {
            return Err(Error::new(
                "index.not_an_index",
                "the file is not a SQLite database",
            ));
        }
        let page_size = match u16::from_be_bytes([head[16], head[17]]) {
            1 => 65536,
            n if n >= 512 && n.is_power_of_two() => usize::from(n),
            _ => return Err(corrupt("a bad page size")),
        };
        let usable = page_size - usize::from(head[20]);
        if usable < 480 {
            return Err(corrupt("a bad reserved size"));
        }
        let page_count = u32::try_from(size / page_size as u64)
            .map_err(|_| corrupt("more pages than SQLite allows"))?;
        let mut file = SqlFile {
            source: RefCell::new(source),
            page_size,
            usable,
            page_count,
            pages: RefCell::new(HashMap::new()),
            roots: HashMap::new(),
        };
        let mut roots = HashMap::new();
        file.scan_tree(1, &mut |_, rec| {
            let row = decode_record(rec)?;
            if let (Some(name), Some(Value::Int(root))) = (row.get(1), row.get(3)) {
                if let (Some(name), Ok(root)) = (name.as_str(), u32::try_from(*root)) {
                    roots.insert(name.to_string(), root);
                }
            }
            Ok(true)
        })?;
        file.roots = roots;
        Ok(file)
    }

    /// Bytes in a page.
    pub fn page_size(&self) -> usize {
        self.page_size
    }

    /// Pages in the file.
    pub fn page_count(&self) -> u32 {
        self.page_count
    }

    /// Bytes a page holds for b-tree content (the page size less the
    /// reserved bytes).
    pub fn usable_size(&self) -> usize {
        self.usable
    }

    /// The root page of a table or index of the schema.
    pub fn root(&self, name: &str) -> Result<u32> {
        self.roots
            .get(name)
            .copied()
            .filter(|&r| r > 0)
            .ok_or_else(|| corrupt(format!("no table or index named {name}")))
    }

    /// Whether the schema has a table or index of that name.
    pub fn has(&self, name: &str) -> bool {
        self.roots.contains_key(name)
    }

    /// A page, read once and kept.
    pub fn page(&self, no: u32) -> Result<Page> {
        if let Some(p) = self.pages.borrow().get(&no) {
            return Ok(p.clone());
        }
        if no == 0 || no > self.page_count {
            return Err(corrupt(format!("page {no} is outside the file")));
        }
        let mut buf = vec![0u8; self.page_size];
        self.source
            .borrow_mut()
            .read_at(&mut buf, u64::from(no - 1) * self.page_size as u64)?;
        let page: Page = buf.into();
        self.pages.borrow_mut().insert(no, page.clone());
        Ok(page)
    }

    /// Drops the pages read so far (a search's reads are kept until it
    /// ends; a long session must not keep every page it ever read).
    pub fn forget_pages(&self) {
        self.pages.borrow_mut().clear();
    }

    /// The payload of the cell at `at` on `page`: `len` bytes, the first
    /// `local` of them on the page, the rest on its overflow chain.
    fn payload(&self, page: &[u8], at: usize, len: usize, local: usize) -> Result<Vec<u8>> {
        let bad = || corrupt("a cell runs off its page");
        let mut out = Vec::with_capacity(len);
        out.extend_from_slice(page.get(at..at + local).ok_or_else(bad)?);
        if local == len {
            return Ok(out);
        }
        let mut next = u32_at(page, at + local).ok_or_else(bad)?;
        let mut hops = 0u32;
        while out.len() < len {
            hops += 1;
            if next == 0 || hops > self.page_count {
                return Err(corrupt("an overflow chain ends early or loops"));
            }
            let p = self.page(next).inspect_err(|e| {
                if e.code == PAGE_MISSING {
                    // A source collecting the pages a search needs gets
                    // the rest of the chain with this one: the overflow
                    // pages of a file written in one go follow each other.
                    let rest = (len - out.len()).div_ceil(self.usable - 4);
                    let end = next.saturating_add(u32::try_from(rest).unwrap_or(u32::MAX));
                    for n in next + 1..end.min(self.page_count.saturating_add(1)) {
                        let _ = self.page(n);
                    }
                }
            })?;
            let take = (len - out.len()).min(self.usable - 4);
            out.extend_from_slice(p.get(4..4 + take).ok_or_else(bad)?);
            next = u32_at(&p, 0).ok_or_else(bad)?;
        }
        Ok(out)
    }

    /// The (rowid, record) of a table leaf cell.
    fn table_cell(&self, page: &[u8], at: usize) -> Result<(i64, Vec<u8>)> {
        let bad = || corrupt("a table cell is cut short");
        let (len, a) = varint(page, at).ok_or_else(bad)?;
        let (rowid, b) = varint(page, at + a).ok_or_else(bad)?;
        let len = usize::try_from(len).map_err(|_| bad())?;
        let max_local = self.usable - 35;
        let min_local = (self.usable - 12) * 32 / 255 - 23;
        let (local, _) = local_split(len, min_local, max_local, self.usable);
        Ok((rowid as i64, self.payload(page, at + a + b, len, local)?))
    }

    /// The record of an index cell whose payload size starts at `at`.
    fn index_cell(&self, page: &[u8], at: usize) -> Result<Vec<u8>> {
        let bad = || corrupt("an index cell is cut short");
        let (len, a) = varint(page, at).ok_or_else(bad)?;
        let len = usize::try_from(len).map_err(|_| bad())?;
        let max_local = (self.usable - 12) * 64 / 255 - 23;
        let min_local = (self.usable - 12) * 32 / 255 - 23;
        let (local, _) = local_split(len, min_local, max_local, self.usable);
        self.payload(page, at + a, len, local)
    }

    fn cells_of(&self, page: &[u8], no: u32) -> Result<(PageKind, Vec<usize>)> {
        cells(page, no).ok_or_else(|| corrupt(format!("page {no} is not a b-tree page")))
    }

    /// Visits every entry of the b-tree at `root` in order (a table's rows
    /// by rowid, with their rowid; an index's records with 0), until `f`
    /// says stop (false). Returns whether it ran to the end.
    pub fn scan_tree(
        &self,
        root: u32,
        f: &mut dyn FnMut(i64, &[u8]) -> Result<bool>,
    ) -> Result<bool> {
        self.scan_from_page(root, f, 0)
    }

    fn scan_from_page(
        &self,
        no: u32,
        f: &mut dyn FnMut(i64, &[u8]) -> Result<bool>,
        depth: usize,
    ) -> Result<bool> {
        if depth > MAX_DEPTH {
            return Err(corrupt("a b-tree deeper than SQLite allows"));
        }
        let page = self.page(no)?;
        let (kind, offsets) = self.cells_of(&page, no)?;
        let bad = || corrupt("a b-tree cell is cut short");
        match kind {
            PageKind::LeafTable => {
                for o in offsets {
                    let (rowid, rec) = self.table_cell(&page, o)?;
                    if !f(rowid, &rec)? {
                        return Ok(false);
                    }
                }
            }
            PageKind::LeafIndex => {
                for o in offsets {
                    if !f(0, &self.index_cell(&page, o)?)? {
                        return Ok(false);
                    }
                }
            }
            PageKind::InteriorTable => {
                for o in offsets {
                    if !self.scan_from_page(u32_at(&page, o).ok_or_else(bad)?, f, depth + 1)? {
                        return Ok(false);
                    }
                }
                let right = u32_at(&page, header_at(no) + 8).ok_or_else(bad)?;
                return self.scan_from_page(right, f, depth + 1);
            }
            PageKind::InteriorIndex => {
                for o in offsets {
                    if !self.scan_from_page(u32_at(&page, o).ok_or_else(bad)?, f, depth + 1)? {
                        return Ok(false);
                    }
                    if !f(0, &self.index_cell(&page, o + 4)?)? {
                        return Ok(false);
                    }
                }
                let right = u32_at(&page, header_at(no) + 8).ok_or_else(bad)?;
                return self.scan_from_page(right, f, depth + 1);
            }
        }
        Ok(true)
    }

    /// The row of `table` with this rowid, or `None`.
    pub fn row(&self, table: &str, rowid: i64) -> Result<Option<Vec<Value>>> {
        let mut no = self.root(table)?;
        let bad = || corrupt("a table b-tree cell is cut short");
        for _ in 0..=MAX_DEPTH {
            let page = self.page(no)?;
            let (kind, offsets) = self.cells_of(&page, no)?;
            match kind {
                PageKind::InteriorTable => {
                    let key_of = |o: usize| varint(&page, o + 4).map(|(k, _)| k as i64);
                    // The first cell whose key is >= rowid holds it on its left.
                    let (mut lo, mut hi) = (0, offsets.len());
                    while lo < hi {
                        let mid = (lo + hi) / 2;
                        if key_of(offsets[mid]).ok_or_else(bad)? < rowid {
                            lo = mid + 1;
                        } else {
                            hi = mid;
                        }
                    }
                    no = match offsets.get(lo) {
                        Some(&o) => u32_at(&page, o),
                        None => u32_at(&page, header_at(no) + 8),
                    }
                    .ok_or_else(bad)?;
                }
                PageKind::LeafTable => {
                    let key_of =
                        |o: usize| varint(&page, o).and_then(|(_, a)| varint(&page, o + a));
                    let (mut lo, mut hi) = (0, offsets.len());
                    while lo < hi {
                        let mid = (lo + hi) / 2;
                        let k = key_of(offsets[mid]).ok_or_else(bad)?.0 as i64;
                        match k.cmp(&rowid) {
                            Ordering::Less => lo = mid + 1,
                            Ordering::Greater => hi = mid,
                            Ordering::Equal => {
                                let (_, rec) = self.table_cell(&page, offsets[mid])?;
                                return decode_record(&rec).map(Some);
                            }
                        }
                    }
                    return Ok(None);
                }
                _ => return Err(corrupt(format!("{table} is not a table b-tree"))),
            }
        }
        Err(corrupt("a b-tree deeper than SQLite allows"))
    }

    /// The last entry of index (or `WITHOUT ROWID` table) `index` whose
    /// first columns are at most `key` (compared column by column as
    /// SQLite does, a record equal on `key`'s columns counting as not
    /// greater), or `None` when every entry is greater.
    pub fn floor(&self, index: &str, key: &[Value]) -> Result<Option<Vec<Value>>> {
        self.seek(self.root(index)?, key, false, 0)
    }

    /// Visits the entries of index (or `WITHOUT ROWID` table) `index`
    /// whose first columns are at least `key`, in order, decoded, until
    /// `f` says stop (false). `end`: the scan stops before it (`f` is
    /// told so too), which a source collecting the pages a search needs
    /// uses to ask for every leaf of the range at once.
    pub fn scan_from(
        &self,
        index: &str,
        key: &[Value],
        end: &[Value],
        f: &mut dyn FnMut(Vec<Value>) -> Result<bool>,
    ) -> Result<()> {
        self.index_from(self.root(index)?, (key, end), f, 0)
            .map(drop)
    }

    fn index_from(
        &self,
        no: u32,
        (key, end): (&[Value], &[Value]),
        f: &mut dyn FnMut(Vec<Value>) -> Result<bool>,
        depth: usize,
    ) -> Result<bool> {
        let at = self.index_page(no, depth)?;
        let (record, child) = (|i| self.index_record(&at, i), |i| at.child(i));
        let (offsets, interior) = (&at.offsets, at.interior);
        // The first entry not less than the key.
        let lo = self.partition(&at, |r| cmp_prefix(r, key) != Ordering::Less)?;
        // A child not at hand, for a collecting source: the children after
        // it that the range reaches are asked for too.
        let ask_after = |i: usize, e: &Error| {
            if e.code == PAGE_MISSING && interior {
                for j in i + 1..=offsets.len() {
                    if record(j - 1).is_ok_and(|r| cmp_prefix(&r, end) != Ordering::Less) {
                        break;
                    }
                    if let Ok(c) = child(j) {
                        let _ = self.page(c);
                    }
                }
            }
        };
        if interior {
            let more = self
                .index_from(child(lo)?, (key, end), f, depth + 1)
                .inspect_err(|e| ask_after(lo, e))?;
            if !more {
                return Ok(false);
            }
        }
        for i in lo..offsets.len() {
            let entry = record(i)?;
            if cmp_prefix(&entry, end) != Ordering::Less || !f(entry)? {
                return Ok(false);
            }
            if interior {
                let more = self
                    .scan_from_page(
                        child(i + 1)?,
                        &mut |_, rec| {
                            let entry = decode_record(rec)?;
                            Ok(cmp_prefix(&entry, end) == Ordering::Less && f(entry)?)
                        },
                        depth + 1,
                    )
                    .inspect_err(|e| ask_after(i + 1, e))?;
                if !more {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// The first entry of index `index` whose first columns are greater
    /// than `key`, or `None`.
    pub fn above(&self, index: &str, key: &[Value]) -> Result<Option<Vec<Value>>> {
        self.seek(self.root(index)?, key, true, 0)
    }

    /// The first entry whose first columns equal `key`, if any.
    pub fn find(&self, index: &str, key: &[Value]) -> Result<Option<Vec<Value>>> {
        let mut found = None;
        let root = self.root(index)?;
        // The entries equal on the key are the last ones at most it; the
        // floor is the last of them, and keys of this index are unique in
        // this codebase's use (primary keys of `WITHOUT ROWID` tables).
        if let Some(row) = self.seek(root, key, false, 0)? {
            if cmp_prefix(&row, key) == Ordering::Equal {
                found = Some(row);
            }
        }
        Ok(found)
    }

    /// [`SqlFile::floor`] (`above` false) or [`SqlFile::above`] in the
    /// subtree at page `no`.
    fn seek(
        &self,
        no: u32,
        key: &[Value],
        above: bool,
        depth: usize,
    ) -> Result<Option<Vec<Value>>> {
        let at = self.index_page(no, depth)?;
        let record = |i| self.index_record(&at, i);
        // The first entry greater than the key.
        let i = self.partition(&at, |r| cmp_prefix(r, key) == Ordering::Greater)?;
        if at.interior {
            if let Some(found) = self.seek(at.child(i)?, key, above, depth + 1)? {
                return Ok(Some(found));
            }
        }
        if above {
            // In an interior page, the cell after the child's subtree.
            return (i < at.offsets.len()).then(|| record(i)).transpose();
        }
        i.checked_sub(1).map(record).transpose()
    }
}

/// An index b-tree page, read for a lookup or a scan.
struct IndexPage {
    page: Page,
    no: u32,
    offsets: Vec<usize>,
    interior: bool,
}

impl IndexPage {
    /// The child left of cell `i` (the rightmost child for `i` past the
    /// last cell).
    fn child(&self, i: usize) -> Result<u32> {
        match self.offsets.get(i) {
            Some(&o) => u32_at(&self.page, o),
            None => u32_at(&self.page, header_at(self.no) + 8),
        }
        .ok_or_else(|| corrupt("an index b-tree cell is cut short"))
    }
}

impl<S: PageSource> SqlFile<S> {
    fn index_page(&self, no: u32, depth: usize) -> Result<IndexPage> {
        if depth > MAX_DEPTH {
            return Err(corrupt("a b-tree deeper than SQLite allows"));
        }
        let page = self.page(no)?;
        let (kind, offsets) = self.cells_of(&page, no)?;
        let interior = match kind {
            PageKind::LeafIndex => false,
            PageKind::InteriorIndex => true,
            _ => return Err(corrupt("an index lookup met a table page")),
        };
        Ok(IndexPage {
            page,
            no,
            offsets,
            interior,
        })
    }

    /// The record of cell `i`.
    fn index_record(&self, at: &IndexPage, i: usize) -> Result<Vec<Value>> {
        let skip = if at.interior { 4 } else { 0 };
        decode_record(&self.index_cell(&at.page, at.offsets[i] + skip)?)
    }

    /// The first cell whose record `after` holds for (cells are in key
    /// order and `after` holds from some cell on), by binary search.
    fn partition(&self, at: &IndexPage, after: impl Fn(&[Value]) -> bool) -> Result<usize> {
        let (mut lo, mut hi) = (0, at.offsets.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if after(&self.index_record(at, mid)?) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Ok(lo)
    }
}

/// How a record compares with a key on the key's columns.
fn cmp_prefix(record: &[Value], key: &[Value]) -> Ordering {
    for (a, b) in record.iter().zip(key) {
        match a.cmp_sql(b) {
            Ordering::Equal => {}
            o => return o,
        }
    }
    if record.len() < key.len() {
        Ordering::Less
    } else {
        Ordering::Equal
    }
}

impl<S> std::fmt::Debug for SqlFile<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlFile")
            .field("page_size", &self.page_size)
            .field("page_count", &self.page_count)
            .finish_non_exhaustive()
    }
}
