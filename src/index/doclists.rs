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

use super::btree;
use rusqlite::{Connection, OptionalExtension};

/// Leaves fetched per term at most (a longer doclist is read as usual).
const MAX_LEAVES_PER_TERM: i64 = 64;

/// How the table tokenizes (see `crate::index::SCHEMA`).
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
pub fn quoted_strings(expr: &str) -> Vec<(String, bool)> {
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
    doclist_rowids_in(conn, fts_table, &segids, expr)
}

/// [`doclist_rowids`] with the table's segments already known.
pub fn doclist_rowids_in(
    conn: &Connection,
    fts_table: &str,
    segids: &[i64],
    expr: &str,
) -> rusqlite::Result<Vec<i64>> {
    let idx = format!("{fts_table}_idx");
    let mut at_or_before = conn.prepare_cached(&format!(
        "SELECT pgno FROM {idx} WHERE segid = ?1 AND term <= ?2 ORDER BY term DESC LIMIT 1"
    ))?;
    let mut after = conn.prepare_cached(&format!(
        "SELECT pgno FROM {idx} WHERE segid = ?1 AND term > ?2 ORDER BY term LIMIT 1"
    ))?;
    let mut out = Vec::new();
    for (key, upper) in lookups(expr, tokenizer_of(fts_table)) {
        for &segid in segids {
            let lo: i64 = at_or_before
                .query_row(rusqlite::params![segid, key], |r| r.get(0))
                .optional()?
                .unwrap_or(2);
            let hi: Option<i64> = after
                .query_row(rusqlite::params![segid, upper], |r| r.get(0))
                .optional()?;
            let first = lo >> 1;
            let last_leaf = hi
                .map(|h| h >> 1)
                .unwrap_or(first)
                .clamp(first, first + MAX_LEAVES_PER_TERM - 1);
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
