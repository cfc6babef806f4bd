//! Typo correction from the index's own vocabulary.
//!
//! When a search finds nothing with every word ([`crate::search`]), each
//! word it typed that no indexed text holds (`useEfect`, `borowed`) is
//! looked up among the words that are indexed: those at most one edit
//! away (a letter dropped, doubled, changed, or two swapped; two edits for
//! words of [`TWO_EDITS_FROM`] letters or more) replace it, the most used
//! first, and the search runs again. A word the index holds is never
//! changed, so a search that finds something exactly is never touched.
//!
//! The words are the `typo_terms` table, written when an index is built
//! (`build_terms`): each word as `w` + word and as `r` + the word
//! reversed. One edit leaves the first or the last half of a word intact,
//! so its neighbours are found by two range scans of a few keys (a page or
//! two of a b-tree when the index is read lazily), never by reading the
//! vocabulary: a cold visit fetches nothing more until a word is missing.

use crate::error::{DbContext, Result};
use crate::index::schema::typo_terms;
use crate::query::{Expr, Query};
pub use crate::results::Correction;
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::BTreeMap;

/// Words shorter than this are neither corrected nor suggested: at one
/// edit, most other short words are neighbours.
pub const MIN_CHARS: usize = 4;
/// Longer words (hashes, encoded data) are not kept.
pub const MAX_CHARS: usize = 32;
/// Words of this many characters or more may be two edits away.
pub const TWO_EDITS_FROM: usize = 8;
/// Most words a range scan reads.
const MAX_SCANNED: i64 = 2000;
/// Most replacements of one word.
const MAX_REPLACEMENTS: usize = 3;

/// Key prefixes of `typo_terms`.
const FORWARD: char = 'w';
const REVERSED: char = 'r';

/// Whether a word is one typo correction considers: letters and digits
/// (ASCII; the tokenizer folds other scripts in ways not mirrored here),
/// at least three letters, [`MIN_CHARS`]..=[`MAX_CHARS`] long.
fn considered(word: &str) -> bool {
    let n = word.chars().count();
    (MIN_CHARS..=MAX_CHARS).contains(&n)
        && word.chars().all(|c| c.is_ascii_alphanumeric())
        && word.chars().filter(char::is_ascii_alphabetic).count() >= 3
}

/// Fills `typo_terms` from the full-text index of a finished build: the
/// words of messages and chat names, with the rows holding them.
pub(crate) fn build_terms(conn: &Connection) -> Result<()> {
    let mut rows: BTreeMap<String, i64> = BTreeMap::new();
    for (vocab, fts) in [
        (
            "gs_typo_messages",
            crate::index::schema::fts_messages::TABLE,
        ),
        ("gs_typo_chats", crate::index::schema::fts_chats::TABLE),
    ] {
        conn.execute_batch(&format!(
            "CREATE VIRTUAL TABLE temp.{vocab} USING fts5vocab(main, {fts}, 'row');"
        ))
        .ctx("reading the full-text vocabulary")?;
        let mut stmt = conn
            .prepare(&format!("SELECT term, doc FROM temp.{vocab}"))
            .ctx("reading the full-text vocabulary")?;
        let mut q = stmt.query([]).ctx("reading the full-text vocabulary")?;
        while let Some(r) = q.next().ctx("reading the full-text vocabulary")? {
            let term: String = r.get(0).ctx("reading the full-text vocabulary")?;
            if considered(&term) {
                *rows.entry(term).or_insert(0) += r.get::<_, i64>(1).unwrap_or(0);
            }
        }
        drop(q);
        drop(stmt);
        conn.execute_batch(&format!("DROP TABLE temp.{vocab};"))
            .ctx("reading the full-text vocabulary")?;
    }
    let mut insert = conn
        .prepare(&format!(
            "INSERT INTO {t}({k}, {r}) VALUES (?1, ?2)",
            t = typo_terms::TABLE,
            k = typo_terms::KEY,
            r = typo_terms::ROWS
        ))
        .ctx("writing typo_terms")?;
    for (term, n) in &rows {
        insert
            .execute(params![format!("{FORWARD}{term}"), n])
            .ctx("writing typo_terms")?;
        let reversed: String = term.chars().rev().collect();
        insert
            .execute(params![format!("{REVERSED}{reversed}"), n])
            .ctx("writing typo_terms")?;
    }
    Ok(())
}

/// The query with each word the index does not hold replaced by its
/// nearest indexed words, and what was replaced; `None` when no word was
/// (all are indexed, none has a neighbour, or the index has no
/// `typo_terms`: a writable index, or one built before them).
pub(crate) fn correct(conn: &dyn Terms, query: &Query) -> Result<Option<(Query, Vec<Correction>)>> {
    let Some(expr) = &query.expr else {
        return Ok(None);
    };
    if query.regex {
        return Ok(None);
    }
    let mut corrections: Vec<Correction> = Vec::new();
    // Looked at with the first word to correct: a query with none reads
    // nothing of the table.
    let mut usable = None;
    let corrected = rewrite(expr, false, &mut |word, prefix| {
        if usable.is_none() {
            usable = Some(conn.any()?);
        }
        if usable == Some(false) {
            return Ok(None);
        }
        if let Some(c) = corrections.iter().find(|c| c.word == word) {
            return Ok(Some(c.replacements.clone()));
        }
        let found = neighbours(conn, word, prefix)?;
        if let Some(r) = &found {
            corrections.push(Correction {
                word: word.to_string(),
                replacements: r.clone(),
            });
        }
        Ok(found)
    })?;
    if corrections.is_empty() {
        return Ok(None);
    }
    let mut q = query.clone();
    q.expr = Some(corrected);
    Ok(Some((q, corrections)))
}

/// `text` with each corrected word (as a whole word, any case) replaced by
/// its best replacement: the query a "did you mean" offers.
pub fn corrected_text(text: &str, corrections: &[Correction]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    // A word after `-` (excluded) or `:` (a filter's value) is left.
    let mut kept = false;
    let mut last = ' ';
    for ch in text.chars().chain(std::iter::once(' ')) {
        if ch.is_alphanumeric() {
            if word.is_empty() {
                kept = matches!(last, '-' | ':');
            }
            word.push(ch);
        } else {
            let lower = word.to_lowercase();
            match corrections.iter().find(|c| c.word == lower) {
                Some(c) if !kept => out.push_str(&c.replacements[0]),
                _ => out.push_str(&word),
            }
            word.clear();
            out.push(ch);
        }
        last = ch;
    }
    out.pop();
    out
}

/// What typo correction reads of `typo_terms`: through SQLite, or
/// through the reader (`crate::reader`).
pub(crate) trait Terms {
    /// Whether the table holds any word (false without the table: an
    /// index built before it).
    fn any(&self) -> Result<bool>;
    /// Whether it holds `key`.
    fn has(&self, key: &str) -> Result<bool>;
    /// The keys starting with `prefix`, in order, and their rows (at most
    /// `limit`).
    fn scan(&self, prefix: &str, limit: i64) -> Result<Vec<(String, i64)>>;
}

impl Terms for Connection {
    fn any(&self) -> Result<bool> {
        let sql = format!("SELECT 1 FROM {} LIMIT 1", typo_terms::TABLE);
        match self.prepare_cached(&sql) {
            Ok(mut stmt) => Ok(stmt
                .query_row([], |_| Ok(()))
                .optional()
                .ctx("reading typo_terms")?
                .is_some()),
            // An index built before the table existed.
            Err(_) => Ok(false),
        }
    }

    fn has(&self, key: &str) -> Result<bool> {
        Ok(self
            .prepare_cached(&format!(
                "SELECT 1 FROM {t} WHERE {k} = ?1",
                t = typo_terms::TABLE,
                k = typo_terms::KEY,
            ))
            .ctx("reading typo_terms")?
            .query_row([key], |_| Ok(()))
            .optional()
            .ctx("reading typo_terms")?
            .is_some())
    }

    fn scan(&self, prefix: &str, limit: i64) -> Result<Vec<(String, i64)>> {
        let end = scan_end(prefix);
        let mut stmt = self
            .prepare_cached(&format!(
                "SELECT {k}, {r} FROM {t} WHERE {k} >= ?1 AND {k} < ?2 LIMIT ?3",
                t = typo_terms::TABLE,
                k = typo_terms::KEY,
                r = typo_terms::ROWS
            ))
            .ctx("reading typo_terms")?;
        let rows = stmt
            .query_map(params![prefix, end, limit], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
            })
            .ctx("reading typo_terms")?
            .collect::<std::result::Result<Vec<_>, _>>()
            .ctx("reading typo_terms")?;
        Ok(rows)
    }
}

/// Given a word (lower-cased) and whether it is a prefix, its
/// replacements, or `None` to leave it.
type Fixer<'a> = dyn FnMut(&str, bool) -> Result<Option<Vec<String>>> + 'a;

/// Replaces the positive plain words of `e` that `fix` corrects.
fn rewrite(e: &Expr, negated: bool, fix: &mut Fixer<'_>) -> Result<Expr> {
    Ok(match e {
        Expr::Term { text, prefix } if !negated && considered(&text.to_lowercase()) => {
            match fix(&text.to_lowercase(), *prefix)? {
                Some(mut r) if r.len() == 1 => Expr::Term {
                    text: r.remove(0),
                    prefix: *prefix,
                },
                Some(r) => Expr::Or {
                    items: r
                        .into_iter()
                        .map(|text| Expr::Term {
                            text,
                            prefix: *prefix,
                        })
                        .collect(),
                },
                None => e.clone(),
            }
        }
        // A name of several words (`os.path.jion`, `operater<<`): each
        // word of it the index does not hold is replaced in place by its
        // nearest indexed word.
        Expr::Term { text, prefix } if !negated => {
            let mut out = String::with_capacity(text.len());
            let mut changed = false;
            let mut rest = text.as_str();
            while let Some(start) = rest.find(|c: char| c.is_ascii_alphanumeric()) {
                out.push_str(&rest[..start]);
                rest = &rest[start..];
                let end = rest
                    .find(|c: char| !c.is_ascii_alphanumeric())
                    .unwrap_or(rest.len());
                let (word, tail) = rest.split_at(end);
                let lower = word.to_lowercase();
                // Only the last word of a name being typed is a prefix.
                let open = *prefix && tail.is_empty();
                match considered(&lower).then(|| fix(&lower, open)).transpose()? {
                    Some(Some(r)) => {
                        out.push_str(&r[0]);
                        changed = true;
                    }
                    _ => out.push_str(word),
                }
                rest = tail;
            }
            out.push_str(rest);
            if changed {
                Expr::Term {
                    text: out,
                    prefix: *prefix,
                }
            } else {
                e.clone()
            }
        }
        Expr::And { items } => Expr::And {
            items: items
                .iter()
                .map(|i| rewrite(i, negated, fix))
                .collect::<Result<_>>()?,
        },
        Expr::Or { items } => Expr::Or {
            items: items
                .iter()
                .map(|i| rewrite(i, negated, fix))
                .collect::<Result<_>>()?,
        },
        Expr::Not { item } => Expr::Not {
            item: Box::new(rewrite(item, !negated, fix)?),
        },
        _ => e.clone(),
    })
}

/// The indexed words nearest `word` (lower-cased), the most used first;
/// `None` when the index holds `word` itself (as a word, or as the start
/// of one when it is a `prefix` being typed) or nothing is near.
fn neighbours(conn: &dyn Terms, word: &str, prefix: bool) -> Result<Option<Vec<String>>> {
    let key = format!("{FORWARD}{word}");
    let held = if prefix {
        !conn.scan(&key, 1)?.is_empty()
    } else {
        conn.has(&key)?
    };
    if held {
        return Ok(None);
    }
    let chars: Vec<char> = word.chars().collect();
    let n = chars.len();
    let max = edits_allowed(n);
    let mut best: Vec<(usize, i64, String)> = Vec::new();
    for stem in stems(&chars) {
        let tag = stem.chars().next().unwrap_or(FORWARD);
        for (k, rows) in conn.scan(&stem, MAX_SCANNED)? {
            let candidate: String = if tag == FORWARD {
                k.chars().skip(1).collect()
            } else {
                k.chars()
                    .skip(1)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect()
            };
            let c: Vec<char> = candidate.chars().collect();
            if c.len().abs_diff(n) > max {
                continue;
            }
            if let Some(d) = distance(&chars, &c, max) {
                if !best.iter().any(|(_, _, w)| *w == candidate) {
                    best.push((d, rows, candidate));
                }
            }
        }
    }
    let Some(nearest) = best.iter().map(|(d, _, _)| *d).min() else {
        return Ok(None);
    };
    best.retain(|(d, _, _)| *d == nearest);
    best.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.2.cmp(&b.2)));
    Ok(Some(
        best.into_iter()
            .take(MAX_REPLACEMENTS)
            .map(|(_, _, w)| w)
            .collect(),
    ))
}

/// Edits a word of `n` letters may be from its replacement.
fn edits_allowed(n: usize) -> usize {
    if n >= TWO_EDITS_FROM {
        2
    } else {
        1
    }
}

/// The two key prefixes a word's neighbours are scanned by: its start
/// (`w`) and its end reversed (`r`), each the part of the word an edit
/// leaves intact: with one edit, a half (less one letter, so that two
/// letters swapped across the middle break neither); with two, a third.
fn stems(chars: &[char]) -> [String; 2] {
    let n = chars.len();
    let part = if edits_allowed(n) == 1 {
        (n - 1) / 2
    } else {
        n / 3
    }
    .max(2);
    let start: String = chars[..part].iter().collect();
    let end: String = chars[n - part..].iter().rev().collect();
    [format!("{FORWARD}{start}"), format!("{REVERSED}{end}")]
}

/// The end of a scan of the keys starting with `prefix`: U+10FFFF sorts
/// after every character in UTF-8 (BINARY collation).
pub(crate) fn scan_end(prefix: &str) -> String {
    format!("{prefix}\u{10FFFF}")
}

/// The keys of `typo_terms` `correct` reads for `query`, as inclusive
/// ranges (low, high) of key bytes, without reading anything: for a query
/// with a word it may correct, whether the table holds any, then, for
/// each such word, the word itself and the two scans of its neighbours. A lazily read index
/// fetches their pages in one round before a search that matched nothing.
pub fn lookups(query: &Query) -> Vec<(Vec<u8>, Vec<u8>)> {
    let Some(expr) = &query.expr else {
        return Vec::new();
    };
    if query.regex {
        return Vec::new();
    }
    let mut out = Vec::new();
    let _ = rewrite(expr, false, &mut |word, prefix| {
        if out.is_empty() {
            // `has_terms`: the table's first key.
            out.push((Vec::new(), Vec::new()));
        }
        let key = format!("{FORWARD}{word}");
        let high = if prefix { scan_end(&key) } else { key.clone() };
        out.push((key.into_bytes(), high.into_bytes()));
        let chars: Vec<char> = word.chars().collect();
        for stem in stems(&chars) {
            let end = scan_end(&stem);
            out.push((stem.into_bytes(), end.into_bytes()));
        }
        Ok(None)
    });
    out
}

/// The optimal string alignment distance of `a` and `b` (insertions,
/// deletions, substitutions and swaps of neighbours), when at most `max`.
fn distance(a: &[char], b: &[char], max: usize) -> Option<usize> {
    let (n, m) = (a.len(), b.len());
    let mut rows = vec![vec![0usize; m + 1]; n + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=n {
        let mut low = usize::MAX;
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
            low = low.min(d);
        }
        if low > max {
            return None;
        }
    }
    Some(rows[n][m]).filter(|&d| d <= max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(a: &str, b: &str) -> Option<usize> {
        let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        distance(&a, &b, 2)
    }

    #[test]
    fn one_edit_of_each_kind_is_distance_one() {
        assert_eq!(d("borowed", "borrowed"), Some(1)); // dropped
        assert_eq!(d("borrrowed", "borrowed"), Some(1)); // doubled
        assert_eq!(d("borrowad", "borrowed"), Some(1)); // changed
        assert_eq!(d("brorowed", "borrowed"), Some(1)); // swapped
        assert_eq!(d("borrowed", "borrowed"), Some(0));
        assert_eq!(d("brwd", "borrowed"), None);
    }

    #[test]
    fn only_plain_words_of_some_length_are_considered() {
        assert!(considered("useefect"));
        assert!(considered("utf8string"));
        assert!(!considered("abc"));
        assert!(!considered("1234"));
        assert!(!considered("x86"));
        assert!(!considered("café"));
        assert!(!considered(&"a".repeat(33)));
    }

    #[test]
    fn the_corrected_text_keeps_everything_else_as_typed() {
        let c = [Correction {
            word: "borowed".into(),
            replacements: vec!["borrowed".into(), "borrower".into()],
        }];
        assert_eq!(
            corrected_text("Borowed values lang:borowed -borowed (borowed)", &c),
            "borrowed values lang:borowed -borowed (borrowed)"
        );
    }
}
