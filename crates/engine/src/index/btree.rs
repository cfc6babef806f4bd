//! Just enough of SQLite's file format to tell which pages a lookup by
//! rowid will read, without SQLite: the browser's lazy mode uses it to
//! fetch, in one batch of parallel requests, the pages a query's row
//! lookups would otherwise read one synchronous request at a time.
//!
//! In: pages (as bytes) of a table b-tree and sorted rowids. Out: the child
//! page each key descends to ([`descend`]), and for a leaf the overflow
//! chains of the rows it holds ([`leaf_overflows`]); for an index b-tree
//! whose first column is an integer, the children a lookup of that column
//! reads ([`descend_index`]). Anything unexpected (a bad offset, a text
//! key) yields `None`: a prefetch plan is only an optimisation, SQLite
//! reads what it needs regardless.

/// A page's b-tree kind (the first byte of its header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageKind {
    InteriorTable,
    LeafTable,
    InteriorIndex,
    LeafIndex,
}

/// Offset of the b-tree header: page 1 starts with the 100-byte file header.
pub fn header_at(page_no: u32) -> usize {
    if page_no == 1 {
        100
    } else {
        0
    }
}

pub fn kind(page: &[u8], page_no: u32) -> Option<PageKind> {
    match page.get(header_at(page_no))? {
        0x05 => Some(PageKind::InteriorTable),
        0x0d => Some(PageKind::LeafTable),
        0x02 => Some(PageKind::InteriorIndex),
        0x0a => Some(PageKind::LeafIndex),
        _ => None,
    }
}

pub(crate) fn u16_at(b: &[u8], at: usize) -> Option<usize> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]) as usize)
}

pub(crate) fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// A SQLite varint at `at`: (value, length).
pub fn varint(b: &[u8], at: usize) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    for i in 0..9 {
        let byte = *b.get(at + i)?;
        if i == 8 {
            return Some(((v << 8) | u64::from(byte), 9));
        }
        v = (v << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

/// Cell offsets of a b-tree page.
pub(crate) fn cells(page: &[u8], page_no: u32) -> Option<(PageKind, Vec<usize>)> {
    let h = header_at(page_no);
    let k = kind(page, page_no)?;
    let n = u16_at(page, h + 3)?;
    let ptrs = h + if matches!(k, PageKind::InteriorTable | PageKind::InteriorIndex) {
        12
    } else {
        8
    };
    let offsets = (0..n)
        .map(|i| u16_at(page, ptrs + 2 * i))
        .collect::<Option<Vec<_>>>()?;
    Some((k, offsets))
}

/// Every child of an interior page (table or index), left to right;
/// `None` for a leaf or a page it cannot read.
pub fn children(page: &[u8], page_no: u32) -> Option<Vec<u32>> {
    let (k, offsets) = cells(page, page_no)?;
    if !matches!(k, PageKind::InteriorTable | PageKind::InteriorIndex) {
        return None;
    }
    let mut out = offsets
        .iter()
        .map(|&o| u32_at(page, o))
        .collect::<Option<Vec<_>>>()?;
    out.push(u32_at(page, header_at(page_no) + 8)?);
    Some(out)
}

/// For an interior table page: the child page each of `keys` (ascending
/// rowids) descends to, deduplicated, in page order of first use.
pub fn descend(page: &[u8], page_no: u32, keys: &[i64]) -> Option<Vec<(u32, Vec<i64>)>> {
    let (k, offsets) = cells(page, page_no)?;
    if k != PageKind::InteriorTable {
        return None;
    }
    let h = header_at(page_no);
    let right = u32_at(page, h + 8)?;
    // (max key of the child, child), ascending.
    let bounds = offsets
        .iter()
        .map(|&o| Some((varint(page, o + 4)?.0 as i64, u32_at(page, o)?)))
        .collect::<Option<Vec<_>>>()?;
    let mut out: Vec<(u32, Vec<i64>)> = Vec::new();
    for &key in keys {
        // Keys in the left child are <= the cell's key.
        let i = bounds.partition_point(|(max, _)| *max < key);
        let child = bounds.get(i).map(|(_, c)| *c).unwrap_or(right);
        match out.last_mut() {
            Some((c, ks)) if *c == child => ks.push(key),
            _ => out.push((child, vec![key])),
        }
    }
    Some(out)
}

/// Bytes an integer of record serial type `serial` takes in the record's
/// body; `None` when the type is not an integer.
fn int_width(serial: u64) -> Option<usize> {
    match serial {
        8 | 9 => Some(0),
        1..=4 => Some(serial as usize),
        5 => Some(6),
        6 => Some(8),
        _ => None,
    }
}

/// A cell's payload of `payload` bytes: how many stay on its page (the
/// page type's `min_local` and `max_local`, `usable` bytes a page) and
/// how many overflow pages hold the rest.
pub(crate) fn local_split(
    payload: usize,
    min_local: usize,
    max_local: usize,
    usable: usize,
) -> (usize, u32) {
    if payload <= max_local {
        return (payload, 0);
    }
    let k = min_local + (payload - min_local) % (usable - 4);
    let local = if k <= max_local { k } else { min_local };
    (local, (payload - local).div_ceil(usable - 4) as u32)
}

/// The first column of an index record at `at` when it is an integer.
fn first_int(b: &[u8], at: usize) -> Option<i64> {
    let (header_len, h) = varint(b, at)?;
    if (header_len as usize) <= h {
        return None;
    }
    let (serial, _) = varint(b, at + h)?;
    let body = at + header_len as usize;
    match serial {
        8 => return Some(0),
        9 => return Some(1),
        _ => {}
    }
    let width = int_width(serial)?;
    let bytes = b.get(body..body + width)?;
    let mut v: i64 = if bytes[0] & 0x80 != 0 { -1 } else { 0 };
    for &x in bytes {
        v = (v << 8) | i64::from(x);
    }
    Some(v)
}

/// For an interior index page of a b-tree whose first column is an
/// integer: the children a lookup of each of `keys` (ascending values of
/// that column) reads, deduplicated, in page order of first use. Entries
/// equal to a key can sit on both sides of a cell holding that key, so
/// every child whose range touches the key is taken.
pub fn descend_index(page: &[u8], page_no: u32, keys: &[i64]) -> Option<Vec<(u32, Vec<i64>)>> {
    let (k, offsets) = cells(page, page_no)?;
    if k != PageKind::InteriorIndex {
        return None;
    }
    let h = header_at(page_no);
    let right = u32_at(page, h + 8)?;
    // (first column of the cell, left child), ascending.
    let bounds = offsets
        .iter()
        .map(|&o| {
            let (_, n) = varint(page, o + 4)?;
            Some((first_int(page, o + 4 + n)?, u32_at(page, o)?))
        })
        .collect::<Option<Vec<_>>>()?;
    let mut out: Vec<(u32, Vec<i64>)> = Vec::new();
    for &key in keys {
        // The left child of the first cell >= key, and every later child
        // while the cells still equal the key.
        let mut i = bounds.partition_point(|(v, _)| *v < key);
        loop {
            let child = bounds.get(i).map(|(_, c)| *c).unwrap_or(right);
            match out.iter_mut().find(|(c, _)| *c == child) {
                Some((_, ks)) => {
                    if ks.last() != Some(&key) {
                        ks.push(key)
                    }
                }
                None => out.push((child, vec![key])),
            }
            if bounds.get(i).is_some_and(|(v, _)| *v == key) {
                i += 1;
            } else {
                break;
            }
        }
    }
    Some(out)
}

/// An FTS5 `_idx` key: the segment and the term (a blob, `'0'` + token for
/// the main index).
pub type TermKey = (i64, Vec<u8>);

/// How an index cell's record `(segid INTEGER, term BLOB, ...)` at `at`
/// (`local` bytes of it on the page) compares with `key`; a record whose
/// segid and term equal the key's sorts before it (SQLite seeks these
/// lookups past equal prefixes). `None` when the record is not of that
/// shape or the bytes on the page do not decide it.
fn cmp_term_record(b: &[u8], at: usize, local: usize, key: &TermKey) -> Option<std::cmp::Ordering> {
    use std::cmp::Ordering;
    let rec = b.get(at..at + local)?;
    let (header_len, h) = varint(rec, 0)?;
    let header_len = header_len as usize;
    let (segid_type, a) = varint(rec, h)?;
    let (term_type, _) = varint(rec, h + a)?;
    if h + a >= header_len || header_len > rec.len() {
        return None;
    }
    let segid = first_int(rec, 0)?;
    let width = int_width(segid_type)?;
    match segid.cmp(&key.0) {
        Ordering::Equal => {}
        o => return Some(o),
    }
    if term_type < 12 || term_type % 2 == 1 {
        return None;
    }
    let len = ((term_type - 12) / 2) as usize;
    let start = header_len + width;
    let avail = rec.len().saturating_sub(start).min(len);
    let here = rec.get(start..start + avail)?;
    let n = avail.min(key.1.len());
    match here[..n].cmp(&key.1[..n]) {
        Ordering::Equal => {}
        o => return Some(o),
    }
    if avail < len && avail < key.1.len() {
        // The rest of the term is on an overflow page.
        return None;
    }
    match len.cmp(&key.1.len()) {
        Ordering::Equal => Some(Ordering::Less),
        o => Some(o),
    }
}

/// For an interior page of an FTS5 `_idx` b-tree (`usable` bytes of each
/// page in use): the child each lookup of `keys` (ascending) lands in,
/// the way FTS5 looks a term up (`term <= key ORDER BY term DESC LIMIT 1`
/// and `term > key ORDER BY term LIMIT 1` on one segment: both seek past
/// every entry equal to the key, then step to a neighbour entry, which
/// is on this page or in the leaf sought), deduplicated, in page order.
/// SQLite reads the whole record of every cell its binary search compares
/// with the key: the overflow pages of those cells come too, as children
/// with no keys (assuming each chain is contiguous, as VACUUM writes it).
pub fn descend_terms(
    page: &[u8],
    page_no: u32,
    usable: usize,
    keys: &[TermKey],
) -> Option<Vec<(u32, Vec<TermKey>)>> {
    let (k, offsets) = cells(page, page_no)?;
    if k != PageKind::InteriorIndex {
        return None;
    }
    let h = header_at(page_no);
    let right = u32_at(page, h + 8)?;
    let max_local = (usable - 12) * 64 / 255 - 23;
    let min_local = (usable - 12) * 32 / 255 - 23;
    // (record offset, local record bytes, left child, overflow pages as
    // (first, count)), ascending.
    let cells = offsets
        .iter()
        .map(|&o| {
            let (payload, n) = varint(page, o + 4)?;
            let payload = payload as usize;
            let at = o + 4 + n;
            let (local, pages) = local_split(payload, min_local, max_local, usable);
            let overflow = match pages {
                0 => None,
                _ => Some((u32_at(page, at + local)?, pages)),
            };
            Some((at, local, u32_at(page, o)?, overflow))
        })
        .collect::<Option<Vec<_>>>()?;
    let mut out: Vec<(u32, Vec<TermKey>)> = Vec::new();
    let mut add =
        |child: u32, key: Option<&TermKey>| match out.iter_mut().find(|(c, _)| *c == child) {
            Some((_, ks)) => ks.extend(key.cloned()),
            None => out.push((child, key.into_iter().cloned().collect())),
        };
    // A key the bytes on this page cannot place (a long term alike in its
    // first bytes with a cell's overflowing term) is dropped: its lookup
    // reads on its own.
    'keys: for key in keys {
        // SQLite's binary search (`sqlite3BtreeIndexMoveto`): the left
        // child of the first cell after the key, or the right child.
        let (mut lwr, mut upr) = (0i64, cells.len() as i64 - 1);
        while lwr <= upr {
            let idx = ((lwr + upr) >> 1) as usize;
            let (at, local, _, overflow) = cells[idx];
            if let Some((first, n)) = overflow {
                for p in first..first.saturating_add(n) {
                    add(p, None);
                }
            }
            let Some(order) = cmp_term_record(page, at, local, key) else {
                continue 'keys;
            };
            if order == std::cmp::Ordering::Less {
                lwr = idx as i64 + 1;
            } else {
                upr = idx as i64 - 1;
            }
        }
        let child = cells.get(lwr as usize).map(|c| c.2).unwrap_or(right);
        add(child, Some(key));
    }
    Some(out)
}

/// An inclusive range of keys (low, high) of an index b-tree whose records
/// start with a TEXT or BLOB column, compared as bytes (BINARY collation).
pub type KeyRange = (Vec<u8>, Vec<u8>);

/// Children of one page a range reaches at most: a scan past them reads
/// on its own.
const MAX_RANGE_CHILDREN: usize = 16;

/// How the first column (TEXT or BLOB) of an index cell's record at `at`
/// (`local` bytes of it on the page) compares with `key`; `None` when the
/// record is not of that shape or the bytes on the page do not decide it.
fn cmp_first_bytes(b: &[u8], at: usize, local: usize, key: &[u8]) -> Option<std::cmp::Ordering> {
    use std::cmp::Ordering;
    let rec = b.get(at..at + local)?;
    let (header_len, h) = varint(rec, 0)?;
    let header_len = header_len as usize;
    let (serial, _) = varint(rec, h)?;
    if serial < 12 || h >= header_len || header_len > rec.len() {
        return None;
    }
    let len = ((serial - 12) / 2) as usize;
    let avail = rec.len().saturating_sub(header_len).min(len);
    let here = rec.get(header_len..header_len + avail)?;
    let n = avail.min(key.len());
    match here[..n].cmp(&key[..n]) {
        Ordering::Equal => {}
        o => return Some(o),
    }
    if avail < len && avail < key.len() {
        // The rest of the key is on an overflow page.
        return None;
    }
    Some(len.cmp(&key.len()))
}

/// For an interior page of an index b-tree keyed by a TEXT or BLOB first
/// column (a `WITHOUT ROWID` table's primary key; `usable` bytes of each
/// page in use): the children holding keys of each of `ranges`, each
/// child with the ranges it holds keys of, in page order. A range of one
/// key found on this page needs no child (SQLite's seek stops there); a
/// range that runs over more than `MAX_RANGE_CHILDREN` children is cut
/// there, and one the bytes on this page cannot place is dropped: both
/// read the rest on their own.
pub fn descend_ranges(
    page: &[u8],
    page_no: u32,
    usable: usize,
    ranges: &[KeyRange],
) -> Option<Vec<(u32, Vec<KeyRange>)>> {
    let (k, offsets) = cells(page, page_no)?;
    if k != PageKind::InteriorIndex {
        return None;
    }
    let h = header_at(page_no);
    let right = u32_at(page, h + 8)?;
    let max_local = (usable - 12) * 64 / 255 - 23;
    let min_local = (usable - 12) * 32 / 255 - 23;
    // (record offset, local record bytes, left child), ascending.
    let cells = offsets
        .iter()
        .map(|&o| {
            let (payload, n) = varint(page, o + 4)?;
            let (local, _) = local_split(payload as usize, min_local, max_local, usable);
            Some((o + 4 + n, local, u32_at(page, o)?))
        })
        .collect::<Option<Vec<_>>>()?;
    let child = |i: usize| cells.get(i).map(|c| c.2).unwrap_or(right);
    let mut out: Vec<(u32, Vec<KeyRange>)> = Vec::new();
    'ranges: for range in ranges {
        // The first cell at or after the low key, the first after the high.
        let (mut first, mut past) = (cells.len(), cells.len());
        let mut exact = false;
        for (i, &(at, local, _)) in cells.iter().enumerate() {
            let Some(low) = cmp_first_bytes(page, at, local, &range.0) else {
                continue 'ranges;
            };
            let Some(high) = cmp_first_bytes(page, at, local, &range.1) else {
                continue 'ranges;
            };
            if first == cells.len() && low.is_ge() {
                first = i;
                exact = low.is_eq() && range.0 == range.1;
            }
            if high.is_gt() {
                past = i;
                break;
            }
        }
        if exact {
            continue;
        }
        for i in first..=past.min(first + MAX_RANGE_CHILDREN - 1) {
            let c = child(i);
            match out.iter_mut().find(|(p, _)| *p == c) {
                Some((_, rs)) => rs.push(range.clone()),
                None => out.push((c, vec![range.clone()])),
            }
        }
    }
    Some(out)
}

/// For a leaf table page: the overflow pages of the rows with `keys`,
/// assuming each chain is contiguous (as VACUUM writes it; a wrong guess
/// only costs a synchronous read later): (first page, pages).
pub fn leaf_overflows(
    page: &[u8],
    page_no: u32,
    usable: usize,
    keys: &[i64],
) -> Option<Vec<(u32, u32)>> {
    let (k, offsets) = cells(page, page_no)?;
    if k != PageKind::LeafTable {
        return None;
    }
    let max_local = usable - 35;
    let min_local = (usable - 12) * 32 / 255 - 23;
    let mut out = Vec::new();
    for o in offsets {
        let (payload, a) = varint(page, o)?;
        let (rowid, b) = varint(page, o + a)?;
        let (local, pages) = local_split(payload as usize, min_local, max_local, usable);
        if pages == 0 || keys.binary_search(&(rowid as i64)).is_err() {
            continue;
        }
        out.push((u32_at(page, o + a + b + local)?, pages));
    }
    Some(out)
}
