//! The hot file's page encoding (manifest `hotFormat` 2): interior table
//! b-tree pages as deltas, every other page as it is.
//!
//! An interior table page is a list of (child page, rowid) cells; SQLite
//! stores each as a 4-byte page number and a varint, which DEFLATE
//! compresses poorly (and interior pages are the larger part of the hot
//! pages a cold visit fetches first). Written
//! as differences from the previous cell, a page of 450 cells takes a few
//! hundred bytes.
//!
//! In: a page, its number (page 1's b-tree header follows the 100-byte
//! file header) and the page size. Out ([`encode_page`]): a codec byte,
//! then
//! - `0`: the page as it is;
//! - `1`: the page with its cell pointer array and cells zeroed, trailing
//!   zeros cut (a LEB128 length, then the bytes; the header stays, cell
//!   count included), then for each cell, in pointer order, three LEB128
//!   zigzag numbers: the gap between the cell's end and the previous
//!   cell's start (0 when cells are packed from the page's end, as SQLite
//!   writes them), the child's difference from the previous child and the
//!   rowid's from the previous rowid (both from 0 for the first).
//!
//! A page is encoded only when [`decode_page`] gives it back byte for
//! byte, so the encoding never changes what SQLite reads. The browser
//! module decodes the hot file with [`decode_hot`] too (`take_hot` in
//! `src/storage/lazy/mod.rs`): the page hands it over as published.

use gitsense_engine::index::btree::{header_at, varint};
use gitsense_engine::index::records::{put as put_leb, unzigzag, zigzag};

/// Every number in the format stays below 2^53, so that a decoder that
/// computes with JavaScript numbers reads it exactly.
const MAX_SAFE: u64 = (1 << 53) - 1;

/// A LEB128 number below 2^53 at `at` (advanced past it).
fn get_leb(b: &[u8], at: &mut usize) -> Option<u64> {
    gitsense_engine::index::records::get(b, at).filter(|&v| v <= MAX_SAFE)
}

/// SQLite's varint of `v` (below 2^56: never the 9-byte form).
fn sqlite_varint(v: u64, out: &mut [u8; 9]) -> usize {
    let mut groups = [0u8; 9];
    let (mut n, mut v) = (0, v);
    loop {
        groups[n] = (v & 0x7f) as u8;
        n += 1;
        v >>= 7;
        if v == 0 {
            break;
        }
    }
    for (k, byte) in out.iter_mut().take(n).enumerate() {
        *byte = groups[n - 1 - k] | if k + 1 < n { 0x80 } else { 0 };
    }
    n
}

/// `page` encoded (see the module docs): deltas for an interior table page
/// that decodes back to itself, else as it is.
pub fn encode_page(page: &[u8], page_no: u32) -> Vec<u8> {
    if let Some(enc) = encode_interior(page, page_no) {
        if decode_page(&enc, page_no, page.len()).as_deref() == Some(page) {
            return enc;
        }
    }
    let mut out = Vec::with_capacity(page.len() + 1);
    out.push(0);
    out.extend_from_slice(page);
    out
}

fn encode_interior(page: &[u8], page_no: u32) -> Option<Vec<u8>> {
    let h = header_at(page_no);
    if *page.get(h)? != 0x05 {
        return None;
    }
    let n = u16::from_be_bytes([*page.get(h + 3)?, *page.get(h + 4)?]) as usize;
    let ptrs = h + 12;
    let mut residual = page.to_vec();
    residual.get_mut(ptrs..ptrs + 2 * n)?.fill(0);
    let mut deltas = Vec::with_capacity(3 * n);
    // A difference of two values below 2^53 may zigzag past it.
    let put = |out: &mut Vec<u8>, d: i64| {
        let z = zigzag(d);
        put_leb(out, z);
        z <= MAX_SAFE
    };
    let mut safe = true;
    let (mut prev_ptr, mut prev_child, mut prev_rowid) = (page.len() as i64, 0i64, 0i64);
    for i in 0..n {
        let ptr = u16::from_be_bytes([page[ptrs + 2 * i], page[ptrs + 2 * i + 1]]) as usize;
        let child = u32::from_be_bytes(page.get(ptr..ptr + 4)?.try_into().ok()?);
        let (rowid, len) = varint(page, ptr + 4)?;
        if rowid > MAX_SAFE {
            return None;
        }
        let cell = 4 + len;
        residual.get_mut(ptr..ptr + cell)?.fill(0);
        safe &= put(&mut deltas, prev_ptr - (ptr + cell) as i64);
        safe &= put(&mut deltas, i64::from(child) - prev_child);
        safe &= put(&mut deltas, rowid as i64 - prev_rowid);
        (prev_ptr, prev_child, prev_rowid) = (ptr as i64, i64::from(child), rowid as i64);
    }
    if !safe {
        return None;
    }
    let kept = residual.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let mut out = Vec::with_capacity(kept + deltas.len() + 4);
    out.push(1);
    put_leb(&mut out, kept as u64);
    out.extend_from_slice(&residual[..kept]);
    out.extend_from_slice(&deltas);
    Some(out)
}

/// The page `enc` holds (see the module docs), or `None` when it is not a
/// valid encoding of a page of `page_size` bytes.
pub fn decode_page(enc: &[u8], page_no: u32, page_size: usize) -> Option<Vec<u8>> {
    match *enc.first()? {
        0 => (enc.len() == page_size + 1).then(|| enc[1..].to_vec()),
        1 => {
            let mut at = 1;
            let kept = get_leb(enc, &mut at)? as usize;
            if kept > page_size {
                return None;
            }
            let mut page = vec![0u8; page_size];
            page[..kept].copy_from_slice(enc.get(at..at + kept)?);
            at += kept;
            let h = header_at(page_no);
            let n = u16::from_be_bytes([*page.get(h + 3)?, *page.get(h + 4)?]) as usize;
            let ptrs = h + 12;
            let (mut prev_ptr, mut prev_child, mut prev_rowid) = (page_size as i64, 0i64, 0i64);
            for i in 0..n {
                let gap = unzigzag(get_leb(enc, &mut at)?);
                let child = prev_child + unzigzag(get_leb(enc, &mut at)?);
                let rowid = prev_rowid + unzigzag(get_leb(enc, &mut at)?);
                if !(0..=i64::from(u32::MAX)).contains(&child)
                    || !(0..=MAX_SAFE as i64).contains(&rowid)
                {
                    return None;
                }
                let mut v = [0u8; 9];
                let len = sqlite_varint(rowid as u64, &mut v);
                let ptr = prev_ptr - gap - 4 - len as i64;
                if ptr < (ptrs + 2 * n) as i64 || ptr + 4 + len as i64 > page_size as i64 {
                    return None;
                }
                let p = ptr as usize;
                page[ptrs + 2 * i..ptrs + 2 * i + 2].copy_from_slice(&(p as u16).to_be_bytes());
                page[p..p + 4].copy_from_slice(&(child as u32).to_be_bytes());
                page[p + 4..p + 4 + len].copy_from_slice(&v[..len]);
                (prev_ptr, prev_child, prev_rowid) = (ptr, child, rowid);
            }
            (at == enc.len()).then_some(page)
        }
        _ => None,
    }
}

/// The hot pages (`pages`, `page_size` bytes each, of page numbers
/// `page_nos`) as the hot file of `hotFormat` 2 holds them: each encoded
/// page's length (4 bytes, little-endian), then the encoded pages.
///
/// Never exactly `page_nos.len() * page_size` bytes before what follows:
/// the length of format 1's pages. A client that knows only format 1 (and
/// checks that length) then leaves the file out instead of reading deltas
/// as pages. Should the encoded pages come to that length, they are put
/// back as they are (each one byte longer than a page), first to last,
/// until they do not.
pub fn encode_hot(page_nos: &[u32], pages: &[u8], page_size: usize) -> Vec<u8> {
    let mut encoded: Vec<Vec<u8>> = page_nos
        .iter()
        .zip(pages.chunks(page_size))
        .map(|(&p, page)| encode_page(page, p))
        .collect();
    let total = |e: &[Vec<u8>]| 4 * e.len() + e.iter().map(Vec::len).sum::<usize>();
    let plain = page_nos.len() * page_size;
    for i in 0..encoded.len() {
        if total(&encoded) != plain {
            break;
        }
        if encoded[i][0] != 0 {
            encoded[i] = [&[0u8][..], &pages[i * page_size..(i + 1) * page_size]].concat();
        }
    }
    let mut out = Vec::with_capacity(total(&encoded));
    for e in &encoded {
        out.extend_from_slice(&(e.len() as u32).to_le_bytes());
    }
    for e in &encoded {
        out.extend_from_slice(e);
    }
    out
}

/// The bytes after the `pages` encoded pages of [`encode_hot`]'s output,
/// without decoding them; `None` when `bytes` is shorter than its
/// lengths say.
pub fn hot_tail(bytes: &[u8], pages: usize) -> Option<&[u8]> {
    let mut at = 4usize.checked_mul(pages)?;
    for i in 0..pages {
        let len = u32::from_le_bytes(bytes.get(4 * i..4 * i + 4)?.try_into().ok()?) as usize;
        at = at.checked_add(len)?;
    }
    bytes.get(at..)
}

/// The inverse of [`encode_hot`]: the pages concatenated, and the bytes
/// after them; `None` when `bytes` does not hold `page_nos.len()` valid
/// encoded pages.
pub fn decode_hot<'a>(
    bytes: &'a [u8],
    page_nos: &[u32],
    page_size: usize,
) -> Option<(Vec<u8>, &'a [u8])> {
    let mut at = 4 * page_nos.len();
    let mut pages = Vec::with_capacity(page_nos.len() * page_size);
    for (i, &p) in page_nos.iter().enumerate() {
        let len = u32::from_le_bytes(bytes.get(4 * i..4 * i + 4)?.try_into().ok()?) as usize;
        pages.extend(decode_page(
            bytes.get(at..at.checked_add(len)?)?,
            p,
            page_size,
        )?);
        at += len;
    }
    Some((pages, bytes.get(at..)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An interior table page of `cells` (child, rowid), packed from the
    /// page's end as SQLite writes them.
    fn interior(page_no: u32, cells: &[(u32, u64)], right: u32, page_size: usize) -> Vec<u8> {
        let h = header_at(page_no);
        let mut page = vec![0u8; page_size];
        page[h] = 0x05;
        page[h + 3..h + 5].copy_from_slice(&(cells.len() as u16).to_be_bytes());
        page[h + 8..h + 12].copy_from_slice(&right.to_be_bytes());
        let mut end = page_size;
        for (i, &(child, rowid)) in cells.iter().enumerate() {
            let mut v = [0u8; 9];
            let len = sqlite_varint(rowid, &mut v);
            end -= 4 + len;
            page[end..end + 4].copy_from_slice(&child.to_be_bytes());
            page[end + 4..end + 4 + len].copy_from_slice(&v[..len]);
            page[h + 12 + 2 * i..h + 14 + 2 * i].copy_from_slice(&(end as u16).to_be_bytes());
        }
        page[h + 5..h + 7].copy_from_slice(&(end as u16).to_be_bytes());
        page
    }

    #[test]
    fn interior_pages_round_trip_smaller() {
        let cells: Vec<(u32, u64)> = (0..400)
            .map(|i| (10 + 3 * i, 1000 + 7 * u64::from(i)))
            .collect();
        for page_no in [1, 2, 900] {
            let page = interior(page_no, &cells, 5000, 4096);
            let enc = encode_page(&page, page_no);
            assert_eq!(enc[0], 1, "page {page_no} encoded as deltas");
            assert!(enc.len() < 1500, "{} bytes", enc.len());
            assert_eq!(decode_page(&enc, page_no, 4096).unwrap(), page);
        }
    }

    #[test]
    fn garbage_gaps_and_big_values_round_trip() {
        // Free bytes left in the page, cells out of order, rowids past
        // 32 bits and large children.
        let mut page = interior(3, &[(7, 1 << 40), (u32::MAX, 3), (1, 1 << 51)], 2, 4096);
        page[200..230].fill(0xab);
        let (a, b) = (
            u16::from_be_bytes([page[12], page[13]]),
            u16::from_be_bytes([page[14], page[15]]),
        );
        page[12..14].copy_from_slice(&b.to_be_bytes());
        page[14..16].copy_from_slice(&a.to_be_bytes());
        let enc = encode_page(&page, 3);
        assert_eq!(enc[0], 1);
        assert_eq!(decode_page(&enc, 3, 4096).unwrap(), page);
    }

    #[test]
    fn other_pages_stay_as_they_are() {
        let mut leaf = vec![0u8; 4096];
        leaf[0] = 0x0d;
        leaf[100..140].fill(9);
        // A rowid, or a rowid's difference, beyond what the browser's
        // numbers hold.
        let big = interior(4, &[(5, 1 << 60)], 6, 4096);
        let far = interior(4, &[(5, 1 << 52), (6, 1)], 6, 4096);
        // A cell that runs off the page.
        let mut off = interior(4, &[(5, 10), (6, 20)], 7, 4096);
        off[14..16].copy_from_slice(&4094u16.to_be_bytes());
        for page in [leaf, big, far, off] {
            let enc = encode_page(&page, 4);
            assert_eq!(enc[0], 0);
            assert_eq!(decode_page(&enc, 4, 4096).unwrap(), page);
        }
    }

    #[test]
    fn bad_encodings_are_refused() {
        let page = interior(2, &[(5, 10), (6, 20)], 7, 4096);
        let enc = encode_page(&page, 2);
        assert!(
            decode_page(&enc[..enc.len() - 1], 2, 4096).is_none(),
            "cut short"
        );
        let mut longer = enc.clone();
        longer.push(0);
        assert!(decode_page(&longer, 2, 4096).is_none(), "trailing bytes");
        assert!(decode_page(&enc, 2, 1024).is_some());
        assert!(decode_page(&[2], 2, 4096).is_none(), "unknown codec");
        assert!(
            decode_page(&[0, 1, 2], 2, 4096).is_none(),
            "raw page of the wrong size"
        );
        // A gap that puts a cell over the pointer array.
        let mut bad = vec![1u8];
        put_leb(&mut bad, 12);
        bad.extend_from_slice(&[0x05, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 7]);
        put_leb(&mut bad, zigzag(4080));
        put_leb(&mut bad, zigzag(5));
        put_leb(&mut bad, zigzag(10));
        assert!(decode_page(&bad, 2, 4096).is_none());
    }

    #[test]
    fn a_hand_made_page_decodes_to_sqlite_bytes() {
        // One cell: gap 0, child 5, rowid 2 (zigzag 0, 10, 4).
        let header = [0x05, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 7];
        let enc = [&[1, 12][..], &header, &[0, 10, 4]].concat();
        let page = decode_page(&enc, 2, 4096).unwrap();
        // The cell pointer (4091 = 0x0ffb), then the cell at the page's
        // end: the child as 4 bytes, the rowid as SQLite's varint.
        assert_eq!(page[..12], header);
        assert_eq!(page[12..14], [0x0f, 0xfb]);
        assert!(page[14..4091].iter().all(|&b| b == 0));
        assert_eq!(page[4091..], [0, 0, 0, 5, 2]);
        // Framed as the hot file holds it.
        let framed = [&(enc.len() as u32).to_le_bytes()[..], &enc].concat();
        assert_eq!(decode_hot(&framed, &[2], 4096).unwrap(), (page, &[][..]));
        // A child difference of 2^56 - 1 (past the format's 2^53) is
        // refused, not rounded.
        let big = [
            &[1, 12][..],
            &header,
            &[0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0],
        ]
        .concat();
        assert!(decode_page(&big, 2, 4096).is_none());
        // A page of an unknown codec, or a file cut short, is refused.
        let odd = [&(enc.len() as u32).to_le_bytes()[..], &[7], &enc[1..]].concat();
        assert!(decode_hot(&odd, &[2], 4096).is_none());
        assert!(decode_hot(&framed[..10], &[2], 4096).is_none());
    }

    #[test]
    fn a_hot_file_never_has_format_1_length() {
        // Interior pages whose encodings, with the 4-byte lengths, add up
        // to exactly the pages' own length: one goes back as it is.
        let page_size = 512;
        let cells = [(5, 10), (6, 20)];
        let page = interior(2, &cells, 99, page_size);
        let enc = encode_page(&page, 2).len();
        assert!(enc < page_size);
        // n pages: 4n + enc·n == n·page_size needs enc == page_size - 4,
        // so fill the page's free bytes (after the pointer array) until
        // the encoding is that long.
        let mut padded = page.clone();
        let mut at = 12 + 2 * cells.len();
        while encode_page(&padded, 2).len() < page_size - 4 {
            padded[at] = 0xee;
            at += 1;
        }
        assert_eq!(encode_page(&padded, 2).len(), page_size - 4);
        let pages = [padded.clone(), padded.clone()].concat();
        let bytes = encode_hot(&[2, 3], &pages, page_size);
        assert_ne!(bytes.len(), 2 * page_size);
        assert_eq!(decode_hot(&bytes, &[2, 3], page_size).unwrap().0, pages);
    }

    #[test]
    fn hot_bundles_round_trip() {
        let mut leaf = vec![0u8; 4096];
        leaf[0] = 0x0d;
        let pages = [
            interior(1, &[(2, 5)], 3, 4096),
            leaf,
            interior(9, &[(4, 1), (8, 2)], 11, 4096),
        ]
        .concat();
        let nos = [1, 2, 9];
        let mut bytes = encode_hot(&nos, &pages, 4096);
        bytes.extend_from_slice(b"tail");
        let (back, tail) = decode_hot(&bytes, &nos, 4096).unwrap();
        assert_eq!(back, pages);
        assert_eq!(tail, b"tail");
        assert_eq!(hot_tail(&bytes, nos.len()), Some(&b"tail"[..]));
        assert!(decode_hot(&bytes[..20], &nos, 4096).is_none());
        assert!(hot_tail(&bytes[..20], nos.len()).is_none());
        assert!(hot_tail(&bytes[..7], nos.len()).is_none());
    }
}
