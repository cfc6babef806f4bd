//! An FTS5 table's full-text index read without SQLite: the doclists of
//! its terms, with their positions, from the `_data` and `_idx` shadow
//! tables (through [`SqlFile`]).
//!
//! In: an [`SqlFile`] and the name of one of the index's FTS5 tables
//! (`detail=full`, as this codebase creates them). Out: per term (the
//! index's key: the token's UTF-8 bytes) the rows holding it in rowid
//! order, each with its positions (`column << 32 | token offset`, as
//! FTS5's `xInst` counts), and the table's row count and tokens per
//! column (the averages record BM25 reads).
//!
//! It follows FTS5's on-disk format (`fts5_index.c`): the structure record
//! (`_data` rowid 10) lists the segments; `_idx(segid, term, pgno)` holds
//! the first term of every leaf; a leaf is the `_data` row `segid << 37 |
//! pgno`: a 4-byte header (the offset of its first rowid, the offset of
//! its page index), terms (prefix-compressed; keys carry a leading `'0'`
//! for the main index) each followed by its doclist (the first rowid
//! whole, then deltas; each with a size varint and its position list), and
//! the page index (varint offsets of the terms). A doclist and a position
//! list run on over following leaves; a leaf's first rowid is written
//! whole.
//!
//! Only an index of one segment is read (every index `publish` writes: the
//! builder optimizes its full-text tables); more segments (a writable
//! index between merges) are `reader.unsupported`, and the caller asks
//! SQLite instead.

use super::btree::varint;
use super::doclists;
use super::pagevfs::{PageSource, PAGE_MISSING};
use super::schema::fts_leaf_ends;
use super::sqlfile::{SqlFile, Value};
use crate::error::{Error, Result};

/// A row holding a term, with where (positions ascending).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Posting {
    pub rowid: i64,
    /// `column << 32 | offset`, ascending.
    pub positions: Vec<u64>,
}

/// The `_data` rowid of the structure record and of the averages record.
const STRUCTURE_ROWID: i64 = 10;
const AVERAGES_ROWID: i64 = 1;
/// Structure records of version 2 start (after the cookie) with these.
const STRUCTURE_V2: [u8; 4] = [0xff, 0x00, 0x00, 0x01];
/// The prefix of a term's key in the main index.
const MAIN_INDEX: u8 = b'0';

/// A token's key in the main index.
fn main_key(token: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(token.len() + 1);
    key.push(MAIN_INDEX);
    key.extend_from_slice(token);
    key
}

fn corrupt(table: &str, what: &str) -> Error {
    Error::new(
        "index.corrupt",
        format!("the index file is damaged: the full-text index of {table} has {what}"),
    )
}

/// One FTS5 table's index (see the module docs).
///
/// ```
/// use gitsense_engine::index::{fts5file::Fts5File, sqlfile::SqlFile};
/// # let dir = tempfile::tempdir()?;
/// # let path = gitsense_engine::index::write_example(&dir.path().join("chats.gsx"))?;
/// let file = SqlFile::open(std::fs::read(&path)?)?;
/// let fts = Fts5File::open(&file, "fts_messages")?;
/// let rows = fts.postings(b"retry")?;
/// assert!(!rows.is_empty());
/// assert!(rows.windows(2).all(|w| w[0].rowid < w[1].rowid));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Fts5File<'f, S> {
    file: &'f SqlFile<S>,
    table: String,
    data: String,
    idx: String,
    /// The one segment: (segid, first leaf, last leaf); `None` for an
    /// empty index.
    segment: Option<(i64, i64, i64)>,
}

/// A leaf's parts.
struct Leaf {
    bytes: std::rc::Rc<[u8]>,
    /// Offset of its first rowid, 0 when none starts on it.
    first_rowid: usize,
    /// End of its content (start of the page index).
    size: usize,
    /// Offsets of the terms that start on it.
    terms: Vec<usize>,
}

impl<'f, S: PageSource> Fts5File<'f, S> {
    /// Reads the table's structure record.
    pub fn open(file: &'f SqlFile<S>, table: &str) -> Result<Self> {
        let data = format!("{table}_data");
        let idx = format!("{table}_idx");
        let mut out = Fts5File {
            file,
            table: table.to_string(),
            data,
            idx,
            segment: None,
        };
        let record = out
            .block(STRUCTURE_ROWID)?
            .ok_or_else(|| out.bad("no structure record"))?;
        let bad = || corrupt(table, "a damaged structure record");
        let v2 = record.get(4..8) == Some(&STRUCTURE_V2[..]);
        let mut at = if v2 { 8 } else { 4 };
        let next = |at: &mut usize| -> Result<u64> {
            let (v, n) = varint(&record, *at).ok_or_else(bad)?;
            *at += n;
            Ok(v)
        };
        let levels = next(&mut at)?;
        let segments = next(&mut at)?;
        let _write_counter = next(&mut at)?;
        if segments > 1 {
            return Err(Error::new(
                "reader.unsupported",
                format!("the full-text index of {table} has {segments} segments"),
            ));
        }
        for _ in 0..levels.min(64) {
            let _merge = next(&mut at)?;
            let n = next(&mut at)?;
            for _ in 0..n {
                let segid = next(&mut at)? as i64;
                let first = next(&mut at)? as i64;
                let last = next(&mut at)? as i64;
                if v2 {
                    // Origins and tombstone counts (contentless deletes).
                    for _ in 0..5 {
                        next(&mut at)?;
                    }
                }
                if last < first {
                    return Err(bad());
                }
                out.segment = Some((segid, first, last));
            }
        }
        Ok(out)
    }

    fn bad(&self, what: &str) -> Error {
        corrupt(&self.table, what)
    }

    /// A `_data` block.
    fn block(&self, id: i64) -> Result<Option<Vec<u8>>> {
        Ok(match self.file.row(&self.data, id)? {
            None => None,
            Some(row) => match row.into_iter().nth(1) {
                Some(Value::Blob(b)) => Some(b),
                Some(Value::Null) => Some(Vec::new()),
                _ => return Err(self.bad("a block that is not a blob")),
            },
        })
    }

    /// The number of rows and of tokens in each column (FTS5's averages
    /// record).
    pub fn totals(&self) -> Result<(i64, Vec<i64>)> {
        let Some(rec) = self.block(AVERAGES_ROWID)? else {
            return Ok((0, Vec::new()));
        };
        let mut at = 0;
        let mut values = Vec::new();
        while at < rec.len() {
            let (v, n) = varint(&rec, at).ok_or_else(|| self.bad("a damaged averages record"))?;
            values.push(v as i64);
            at += n;
        }
        let rows = values.first().copied().unwrap_or(0);
        Ok((rows, values.into_iter().skip(1).collect()))
    }

    fn leaf(&self, segid: i64, pgno: i64) -> Result<Leaf> {
        let bytes = self
            .block((segid << 37) | pgno)?
            .ok_or_else(|| self.bad("a missing leaf"))?;
        let bad = || self.bad("a damaged leaf");
        if bytes.len() < 4 {
            return Err(bad());
        }
        let first_rowid = usize::from(u16::from_be_bytes([bytes[0], bytes[1]]));
        let size = usize::from(u16::from_be_bytes([bytes[2], bytes[3]]));
        if size < 4 || size > bytes.len() || first_rowid > size {
            return Err(bad());
        }
        let mut terms = Vec::new();
        let (mut at, mut offset) = (size, 0usize);
        while at < bytes.len() {
            let (delta, n) = varint(&bytes, at).ok_or_else(bad)?;
            at += n;
            offset = offset
                .checked_add(usize::try_from(delta).map_err(|_| bad())?)
                .filter(|&o| o >= 4 && o < size)
                .ok_or_else(bad)?;
            terms.push(offset);
        }
        Ok(Leaf {
            bytes: bytes.into(),
            first_rowid,
            size,
            terms,
        })
    }

    /// Leaf `pgno`; when a source collecting the pages a search needs
    /// lacks it, it is asked for the leaves after it through `through()`
    /// too, which the read will need as well.
    fn leaf_or_ask(&self, segid: i64, pgno: i64, through: impl FnOnce() -> i64) -> Result<Leaf> {
        self.leaf(segid, pgno).inspect_err(|e| {
            if e.code == PAGE_MISSING {
                for p in pgno + 1..=through() {
                    let _ = self.block((segid << 37) | p);
                }
            }
        })
    }

    /// The last leaf a doclist of a term up to `key` can run on to: the
    /// leaf of the first `_idx` entry above `key` (the leaves before it
    /// start no term), else the segment's last; `pgno` when `_idx` cannot
    /// tell.
    fn run_on_end(&self, segid: i64, key: &[u8], pgno: i64, last: i64) -> i64 {
        match self
            .file
            .above(&self.idx, &[Value::Int(segid), Value::Blob(key.to_vec())])
        {
            Ok(Some(row)) if row.first().and_then(Value::as_i64) == Some(segid) => row
                .get(2)
                .and_then(Value::as_i64)
                .map_or(pgno, |p| (p >> 1).min(last)),
            Ok(_) => last,
            Err(_) => pgno,
        }
    }

    /// Whether the doclist of `key` on leaf `leaf` may run on to the next
    /// leaf, by the index's `fts_leaf_ends` hashes; false when they are
    /// not at hand (or not there): a guess that only saves a round.
    fn may_run_on(&self, segid: i64, leaf: i64, key: &[u8]) -> bool {
        if !self.file.has(fts_leaf_ends::TABLE) {
            return false;
        }
        let found = self.file.find(
            fts_leaf_ends::TABLE,
            &[
                Value::Text(self.table.as_bytes().to_vec()),
                Value::Int(segid),
            ],
        );
        match found {
            Ok(Some(row)) => match row.get(2).and_then(Value::as_bytes) {
                Some(hashes) => doclists::may_run_on(Some(hashes), leaf, key),
                None => false,
            },
            _ => false,
        }
    }

    /// The rows holding `token` (a term of the index, without the main
    /// index's prefix byte), in rowid order.
    pub fn postings(&self, token: &[u8]) -> Result<Vec<Posting>> {
        let key = main_key(token);
        let mut out = Vec::new();
        self.scan_terms(&key, false, &mut |term, postings| {
            if term == key.as_slice() {
                out = postings;
            }
            Ok(false)
        })?;
        Ok(out)
    }

    /// Every term starting with `prefix` (without the prefix byte), in
    /// order, with its rows.
    pub fn prefixed(&self, prefix: &[u8]) -> Result<Vec<(Vec<u8>, Vec<Posting>)>> {
        let key = main_key(prefix);
        let mut out = Vec::new();
        self.scan_terms(&key, true, &mut |term, postings| {
            if !term.starts_with(&key) {
                return Ok(false);
            }
            out.push((term[1..].to_vec(), postings));
            Ok(true)
        })?;
        Ok(out)
    }

    /// Visits the terms from the first one not less than `key`, in order,
    /// each with its doclist, while `f` says go on.
    /// `prefix`: the scan covers the terms starting with `key` (which
    /// tells a source collecting what a search needs which leaves to ask
    /// for).
    fn scan_terms(&self, key: &[u8], prefix: bool, f: &mut TermVisitor<'_>) -> Result<()> {
        let Some((segid, first, last)) = self.segment else {
            return Ok(());
        };
        let found = self
            .file
            .floor(&self.idx, &[Value::Int(segid), Value::Blob(key.to_vec())])?;
        let mut pgno = match found {
            Some(row) if row.first().and_then(Value::as_i64) == Some(segid) => {
                row.get(2)
                    .and_then(Value::as_i64)
                    .ok_or_else(|| self.bad("a bad _idx row"))?
                    >> 1
            }
            _ => first,
        }
        .max(first);
        let bad = || self.bad("a damaged leaf");
        let mut term: Vec<u8> = Vec::new();
        let start = pgno;
        while pgno <= last {
            // A source collecting what a search needs also gets the leaves
            // the key's doclist runs on to, when it may be the last term to
            // start on its leaf, and those of every term with the prefix.
            let leaf = self.leaf_or_ask(segid, pgno, || {
                if pgno != start {
                    pgno
                } else if prefix {
                    match successor(key) {
                        Some(upper) => self.run_on_end(segid, &upper, pgno, last),
                        None => last,
                    }
                } else if self.may_run_on(segid, pgno, key) {
                    self.run_on_end(segid, key, pgno, last)
                } else {
                    pgno
                }
            })?;
            for (i, &start) in leaf.terms.iter().enumerate() {
                let mut at = start;
                let keep = if i == 0 {
                    0
                } else {
                    let (k, n) = varint(&leaf.bytes, at).ok_or_else(bad)?;
                    at += n;
                    usize::try_from(k).map_err(|_| bad())?
                };
                let (len, n) = varint(&leaf.bytes, at).ok_or_else(bad)?;
                at += n;
                let end = at
                    .checked_add(usize::try_from(len).map_err(|_| bad())?)
                    .filter(|&e| e <= leaf.size)
                    .ok_or_else(bad)?;
                if keep > term.len() {
                    return Err(bad());
                }
                term.truncate(keep);
                term.extend_from_slice(&leaf.bytes[at..end]);
                if term.as_slice() < key {
                    continue;
                }
                let doclist_end = leaf.terms.get(i + 1).copied();
                let postings = self.doclist((segid, last), pgno, &leaf, end, doclist_end, &term)?;
                if !f(&term, postings)? {
                    return Ok(());
                }
            }
            pgno += 1;
            // The first term of the next leaf is written whole.
            term.clear();
        }
        Ok(())
    }

    /// The doclist of `term` starting at `at` on leaf `pgno` of segment
    /// `(segid, last leaf)`, ending at `end` on it or (`None`) running on
    /// over the following leaves.
    fn doclist(
        &self,
        (segid, last): (i64, i64),
        pgno: i64,
        leaf: &Leaf,
        at: usize,
        end: Option<usize>,
        term: &[u8],
    ) -> Result<Vec<Posting>> {
        let bad = || self.bad("a damaged doclist");
        let mut out: Vec<Posting> = Vec::new();
        let mut page = Page {
            bytes: leaf.bytes.clone(),
            end: end.unwrap_or(leaf.size),
            size: leaf.size,
            first_rowid: leaf.first_rowid,
            pgno,
        };
        let mut runs_on = end.is_none();
        let mut at = at;
        loop {
            if at >= page.end {
                if !runs_on || page.pgno >= last {
                    break;
                }
                // The doclist goes on where the next leaf's first rowid is,
                // unless a term starts there first.
                let next = page.pgno + 1;
                page = Page::of(
                    self.leaf_or_ask(segid, next, || self.run_on_end(segid, term, next, last))?,
                    next,
                );
                runs_on = page.end == page.size;
                if page.first_rowid == 0 || page.first_rowid >= page.end {
                    // No rowid of this doclist here: a leaf all position
                    // list, or its end.
                    at = page.end;
                    if runs_on {
                        continue;
                    }
                    break;
                }
                at = page.first_rowid;
            }
            // The first rowid of a doclist, and of a leaf, is written whole.
            let absolute = out.is_empty() || at == page.first_rowid;
            let (v, n) = varint(&page.bytes, at).ok_or_else(bad)?;
            at += n;
            let rowid = match out.last() {
                Some(prev) if !absolute => prev.rowid.wrapping_add(v as i64),
                _ => v as i64,
            };
            let (size, n) = varint(&page.bytes, at).ok_or_else(bad)?;
            at += n;
            let len = usize::try_from(size >> 1).map_err(|_| bad())?;
            if size & 1 == 1 {
                return Err(Error::new(
                    "reader.unsupported",
                    format!("the full-text index of {} holds deletions", self.table),
                ));
            }
            // Most position lists lie on one leaf: read in place.
            if at + len <= page.size {
                let list = &page.bytes[at..at + len];
                at += len;
                out.push(Posting {
                    rowid,
                    positions: positions(list).ok_or_else(bad)?,
                });
                continue;
            }
            let mut list = Vec::with_capacity(len);
            // The position list may run on over the next leaves (from
            // their header on).
            while list.len() < len {
                if at >= page.size {
                    if page.pgno >= last {
                        return Err(bad());
                    }
                    let next = page.pgno + 1;
                    page = Page::of(
                        self.leaf_or_ask(segid, next, || self.run_on_end(segid, term, next, last))?,
                        next,
                    );
                    runs_on = page.end == page.size;
                    at = 4;
                    continue;
                }
                let take = (len - list.len()).min(page.size - at);
                list.extend_from_slice(&page.bytes[at..at + take]);
                at += take;
            }
            out.push(Posting {
                rowid,
                positions: positions(&list).ok_or_else(bad)?,
            });
        }
        Ok(out)
    }
}

/// The least key above every key starting with `prefix` (`None`: there
/// is none, every key above it starts with it).
fn successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut upper = prefix.to_vec();
    while upper.last() == Some(&0xff) {
        upper.pop();
    }
    *upper.last_mut()? += 1;
    Some(upper)
}

/// What [`Fts5File::scan_terms`] hands each term and its doclist to;
/// false stops the scan.
type TermVisitor<'a> = dyn FnMut(&[u8], Vec<Posting>) -> Result<bool> + 'a;

/// Where a doclist is being read.
struct Page {
    bytes: std::rc::Rc<[u8]>,
    /// Where this doclist's part on the page ends.
    end: usize,
    /// The end of the page's content.
    size: usize,
    /// Offset of the leaf's first rowid (0: none).
    first_rowid: usize,
    pgno: i64,
}

impl Page {
    /// A leaf a doclist runs on to: its part ends where the leaf's first
    /// term starts.
    fn of(leaf: Leaf, pgno: i64) -> Page {
        Page {
            end: leaf.terms.first().copied().unwrap_or(leaf.size),
            size: leaf.size,
            first_rowid: leaf.first_rowid,
            pgno,
            bytes: leaf.bytes,
        }
    }
}

/// A position list's positions (`column << 32 | offset`).
fn positions(list: &[u8]) -> Option<Vec<u64>> {
    let mut out = Vec::new();
    let (mut at, mut col, mut off) = (0usize, 0u64, 0u64);
    while at < list.len() {
        let (v, n) = varint(list, at)?;
        at += n;
        let delta = if v == 1 {
            let (c, n) = varint(list, at)?;
            at += n;
            col = c;
            off = 0;
            let (v, n) = varint(list, at)?;
            at += n;
            v
        } else {
            v
        };
        if delta < 2 {
            return None;
        }
        off += delta - 2;
        out.push(col << 32 | off);
    }
    Some(out)
}
