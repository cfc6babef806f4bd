//! Where an FTS5 expression's doclists live, without running it: the rows
//! of an FTS5 table's `_data` shadow table a `MATCH` will read.
//!
//! In: a connection, an FTS5 table of this index and the expression the
//! planner built (quoted strings, `*` prefixes, AND/OR/NOT). Out: the
//! `_data` rowids of the leaves holding each term's doclist, found through
//! the `_idx` shadow table (the first term of every leaf). The browser's
//! lazy mode walks them to SQLite pages and fetches them all at once,
//! where `MATCH` would read them one synchronous request at a time.
//!
//! It follows FTS5's on-disk format (`fts5_index.c`): `_idx(segid, term,
//! pgno)` with `pgno = leaf << 1 | has-doclist-index`, terms prefixed by
//! `'0'` for the main index, leaf rowids `segid << 37 | leaf` and
//! doclist-index rowids `segid << 37 | 1 << 36 | height << 31 | leaf`.
//! Tokens are approximated (lower case, split at what is not a letter or
//! digit; no diacritic folding): a wrong guess costs a synchronous read.
//!
//! A term's doclist may run on past its leaf only when it is the last term
//! that starts there; otherwise `MATCH` stops at the next term and never
//! reads the next leaf. The index records a 16-bit hash of the last term
//! of every leaf (`fts_leaf_ends`, written by [`leaf_ends`]), so the next
//! leaf is fetched only for a term that may be last on its own (a hash
//! collision fetches it needlessly, never the reverse).

use super::btree;
use super::schema::fts_leaf_ends::{self, FTS, HASHES, SEGID};
use crate::error::{DbContext, Result};
use const_format::formatcp;
use rusqlite::{Connection, OptionalExtension};

/// Leaves fetched per term at most (a longer doclist is read as usual).
const MAX_LEAVES_PER_TERM: i64 = 64;

/// How the table tokenizes (see `crate::index::schema`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tokenizer {
    /// `unicode61`: runs of letters and digits.
    Words,
    /// `trigram`: every three characters.
    Trigram,
}

/// The tokenizer of one of this index's FTS5 tables.
pub fn tokenizer_of(fts_table: &str) -> Tokenizer {
    if fts_table == "fts_code_blocks" {
        Tokenizer::Trigram
    } else {
        Tokenizer::Words
    }
}

/// The quoted strings of an FTS5 expression, each with whether a `*`
/// (prefix query) follows it.
pub(crate) fn quoted_strings(expr: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut chars = expr.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut s = String::new();
        loop {
            match chars.next() {
                Some('"') if chars.peek() == Some(&'"') => {
                    chars.next();
                    s.push('"');
                }
                Some('"') | None => break,
                Some(c) => s.push(c),
            }
        }
        let prefix = chars.peek() == Some(&'*');
        out.push((s, prefix));
    }
    out
}

/// Index keys (`'0'` + token) of a quoted string.
fn keys(s: &str, tokenizer: Tokenizer) -> Vec<Vec<u8>> {
    let lower = s.to_lowercase();
    let tokens: Vec<String> = match tokenizer {
        Tokenizer::Words => lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect(),
        Tokenizer::Trigram => {
            let chars: Vec<char> = lower.chars().collect();
            chars.windows(3).map(|w| w.iter().collect()).collect()
        }
    };
    tokens
        .into_iter()
        .map(|t| {
            let mut k = vec![b'0'];
            k.extend_from_slice(t.as_bytes());
            k
        })
        .collect()
}

/// The segments of an FTS5 table's index, by seeks on `_idx` (each reads
/// one path from the root; a scan would read every leaf).
pub fn segids(conn: &Connection, idx: &str) -> rusqlite::Result<Vec<i64>> {
    let mut first =
        conn.prepare_cached(&format!("SELECT segid FROM {idx} ORDER BY segid LIMIT 1"))?;
    let mut next = conn.prepare_cached(&format!(
        "SELECT segid FROM {idx} WHERE segid > ?1 ORDER BY segid LIMIT 1"
    ))?;
    let mut out: Vec<i64> = Vec::new();
    let mut at: Option<i64> = first.query_row([], |r| r.get(0)).optional()?;
    while let Some(s) = at {
        out.push(s);
        at = next.query_row([s], |r| r.get(0)).optional()?;
    }
    Ok(out)
}

/// The `_idx` keys an expression's term lookups seek, per quoted string
/// and token: the key itself and the key past every term it (or, for the
/// last token of a prefix query, the prefix) can start.
fn lookups(expr: &str, tokenizer: Tokenizer) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    for (s, prefix) in quoted_strings(expr) {
        let ks = keys(&s, tokenizer);
        let last = ks.len().saturating_sub(1);
        for (i, key) in ks.into_iter().enumerate() {
            let mut upper = key.clone();
            if prefix && i == last {
                upper.push(0xff);
            }
            out.push((key, upper));
        }
    }
    out
}

/// The `_idx` keys (segment, term) [`doclist_rowids`] seeks for `expr` on
/// `fts_table` with segments `segids` ([`segids`]), ascending: the
/// browser's lazy mode walks them to the leaves of `_idx` it needs before
/// the doclists.
pub fn term_keys(segids: &[i64], fts_table: &str, expr: &str) -> Vec<btree::TermKey> {
    let mut out = Vec::new();
    for (key, upper) in lookups(expr, tokenizer_of(fts_table)) {
        for &segid in segids {
            out.push((segid, key.clone()));
            out.push((segid, upper.clone()));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The `_data` rowids a `MATCH expr` on `fts_table` reads for its
/// doclists (see the module docs); empty when the table is not there.
pub fn doclist_rowids(
    conn: &Connection,
    fts_table: &str,
    expr: &str,
) -> rusqlite::Result<Vec<i64>> {
    let segids = segids(conn, &format!("{fts_table}_idx"))?;
    doclist_rowids_in(conn, fts_table, &segids, expr, |s| {
        leaf_end_hashes(conn, fts_table, s)
    })
}

/// The hash `fts_leaf_ends` keeps of an index key (`'0'` + token).
pub(crate) fn term_hash(key: &[u8]) -> u16 {
    // FNV-1a, folded to 16 bits.
    let h = key.iter().fold(0x811c_9dc5_u32, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    (h ^ (h >> 16)) as u16
}

/// The last term (index key) that starts on an FTS5 leaf (a `_data`
/// block), or None when none does (or the block is not a leaf). The leaf
/// is FTS5's: a 4-byte header (first rowid's offset, the page index's
/// offset), then terms (the first whole: varint length and bytes; the
/// others varint prefix length shared with the term before, varint suffix
/// length and suffix), then the page index (varint offsets of each term,
/// each relative to the one before).
pub fn last_term(leaf: &[u8]) -> Option<Vec<u8>> {
    let page_index = usize::from(u16::from_be_bytes([*leaf.get(2)?, *leaf.get(3)?]));
    if page_index < 4 || page_index > leaf.len() {
        return None;
    }
    let (mut at, mut offset) = (page_index, 0usize);
    let mut term: Option<Vec<u8>> = None;
    while at < leaf.len() {
        let (delta, n) = btree::varint(leaf, at)?;
        at += n;
        offset = offset.checked_add(usize::try_from(delta).ok()?)?;
        let mut pos = offset;
        let shared = match term {
            None => 0,
            Some(_) => {
                let (p, n) = btree::varint(leaf, pos)?;
                pos += n;
                usize::try_from(p).ok()?
            }
        };
        let (len, n) = btree::varint(leaf, pos)?;
        pos += n;
        let end = pos.checked_add(usize::try_from(len).ok()?)?;
        if end > page_index {
            return None;
        }
        let mut t = term.take().unwrap_or_default();
        if shared > t.len() {
            return None;
        }
        t.truncate(shared);
        t.extend_from_slice(&leaf[pos..end]);
        term = Some(t);
    }
    term
}

/// Fills `fts_leaf_ends` for FTS5 table `fts` (after its last merge): for
/// each segment, the `term_hash` of each leaf's [`last_term`] (0 for a
/// leaf where no term starts), two bytes a leaf, big-endian, leaf 1 first.
pub fn leaf_ends(conn: &Connection, fts: &str) -> Result<()> {
    let ctx = "recording the FTS leaves' last terms";
    let segids = segids(conn, &format!("{fts}_idx")).ctx(ctx)?;
    let mut leaf = conn
        .prepare(&format!("SELECT block FROM {fts}_data WHERE id = ?1"))
        .ctx(ctx)?;
    let mut insert = conn
        .prepare(formatcp!(
            "INSERT INTO {fts_leaf_ends}({FTS}, {SEGID}, {HASHES}) VALUES (?1, ?2, ?3)",
            fts_leaf_ends = fts_leaf_ends::TABLE
        ))
        .ctx(ctx)?;
    for segid in segids {
        let mut hashes = Vec::new();
        for n in 1i64.. {
            let block: Option<Vec<u8>> = leaf
                .query_row([(segid << 37) | n], |r| r.get(0))
                .optional()
                .ctx(ctx)?;
            let Some(block) = block else { break };
            let h = last_term(&block).map_or(0, |t| term_hash(&t));
            hashes.extend_from_slice(&h.to_be_bytes());
        }
        insert
            .execute(rusqlite::params![fts, segid, hashes])
            .ctx(ctx)?;
    }
    Ok(())
}

/// The `fts_leaf_ends` hashes of a segment, if the index has them.
pub fn leaf_end_hashes(conn: &Connection, fts: &str, segid: i64) -> Option<Vec<u8>> {
    const SQL: &str = formatcp!(
        "SELECT {HASHES} FROM {fts_leaf_ends} WHERE {FTS} = ?1 AND {SEGID} = ?2",
        fts_leaf_ends = fts_leaf_ends::TABLE
    );
    conn.prepare_cached(SQL)
        .ok()?
        .query_row(rusqlite::params![fts, segid], |r| r.get(0))
        .ok()
}

/// Whether the doclist of `key`, found on leaf `leaf`, may run on to the
/// next leaf: `key` may be the last term of its leaf (or the hashes are
/// not there).
pub(crate) fn may_run_on(hashes: Option<&[u8]>, leaf: i64, key: &[u8]) -> bool {
    let Some(at) = usize::try_from(leaf - 1).ok().map(|i| i * 2) else {
        return true;
    };
    match hashes.and_then(|h| h.get(at..at + 2)) {
        Some(h) => u16::from_be_bytes([h[0], h[1]]) == term_hash(key),
        None => true,
    }
}

/// [`doclist_rowids`] with the table's segments already known, and the
/// `fts_leaf_ends` hashes of a segment from `ends` (None: the next leaf is
/// fetched as if the term may run on; the browser passes what it has at
/// hand without a request, [`leaf_end_hashes`] reads them).
pub fn doclist_rowids_in(
    conn: &Connection,
    fts_table: &str,
    segids: &[i64],
    expr: &str,
    ends: impl Fn(i64) -> Option<Vec<u8>>,
) -> rusqlite::Result<Vec<i64>> {
    let idx = format!("{fts_table}_idx");
    let mut at_or_before = conn.prepare_cached(&format!(
        "SELECT pgno FROM {idx} WHERE segid = ?1 AND term <= ?2 ORDER BY term DESC LIMIT 1"
    ))?;
    let mut after = conn.prepare_cached(&format!(
        "SELECT pgno FROM {idx} WHERE segid = ?1 AND term > ?2 ORDER BY term LIMIT 1"
    ))?;
    let ends: Vec<Option<Vec<u8>>> = segids.iter().map(|&s| ends(s)).collect();
    let mut out = Vec::new();
    for (key, upper) in lookups(expr, tokenizer_of(fts_table)) {
        for (&segid, hashes) in segids.iter().zip(&ends) {
            let lo: i64 = at_or_before
                .query_row(rusqlite::params![segid, key], |r| r.get(0))
                .optional()?
                .unwrap_or(2);
            let hi: Option<i64> = after
                .query_row(rusqlite::params![segid, upper], |r| r.get(0))
                .optional()?;
            let first = lo >> 1;
            let mut last_leaf = hi
                .map(|h| h >> 1)
                .unwrap_or(first)
                .clamp(first, first + MAX_LEAVES_PER_TERM - 1);
            // The next term starts on the next leaf: that leaf is read only
            // if this term's doclist may run on to it (a prefix query reads
            // on to whatever terms follow).
            if last_leaf == first + 1 && key == upper && !may_run_on(hashes.as_deref(), first, &key)
            {
                last_leaf = first;
            }
            out.extend((first..=last_leaf).map(|leaf| (segid << 37) | leaf));
            if lo & 1 == 1 {
                // The doclist index (its first level) of the term.
                out.push((segid << 37) | (1 << 36) | first);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_term_reads_prefix_compressed_terms_and_refuses_what_is_not_a_leaf() {
        // Header (no rowid; the page index at 12), "0abc" whole at 4, then
        // at 9 "0abd" sharing 3 bytes, then the page index: 4, then +5.
        let leaf = [0, 0, 0, 12, 4, b'0', b'a', b'b', b'c', 3, 1, b'd', 4, 5];
        assert_eq!(last_term(&leaf), Some(b"0abd".to_vec()));
        // A suffix running into the page index is not a leaf.
        assert_eq!(
            last_term(&[0, 0, 0, 12, 4, b'0', b'a', b'b', b'c', 3, 9, b'd', 4, 5]),
            None
        );
        // No term starts on it: no last term.
        assert_eq!(last_term(&[0, 4, 0, 6, 1, 2]), None);
        // Truncated or inconsistent blocks never panic.
        let mut x: u32 = 0x9e37_79b9;
        for n in 0..2000 {
            let len = n % 40;
            let block: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    x as u8
                })
                .collect();
            let _ = last_term(&block);
        }
        assert_ne!(term_hash(b"0abc"), term_hash(b"0abd"));
    }

    #[test]
    fn quoted_strings_are_read_from_fts_expressions() {
        assert_eq!(
            quoted_strings(r#"("pay"* OR "card") NOT "say ""hi""""#),
            vec![
                ("pay".to_string(), true),
                ("card".to_string(), false),
                ("say \"hi\"".to_string(), false)
            ]
        );
    }
}
