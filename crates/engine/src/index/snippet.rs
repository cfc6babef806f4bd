//! FTS5's `snippet()` without SQLite: the same window of the same column,
//! marked and cut byte for byte as `fts5SnippetFunction` does it.
//!
//! In: a row's column texts, its hits ([`Inst`], in `xInst` order, from
//! [`super::fts5expr::Loaded::row_hits`]), each phrase's token count,
//! and `snippet()`'s arguments. Out: the snippet's bytes.
//!
//! A port of `fts5_aux.c` (SQLite, public domain): each column's windows
//! starting at a hit or at the start of its sentence are scored (1000 for
//! each phrase's first hit in the window, 1 for its others; +120 or +100
//! for a window starting a sentence), the best wins, and its tokens are
//! copied with the hits marked (hits that overlap are marked as one).
//! Like FTS5, which appends with printf's `%.*s`, every piece of text
//! copied stops at a NUL byte.

use super::doclists::Tokenizer;
use super::fts5expr::Inst;
use super::unicode61;

/// `snippet()`'s arguments after the table: the column (negative: any),
/// the marks, the ellipsis and the window's size in tokens.
#[derive(Debug, Clone, Copy)]
pub struct SnippetArgs<'a> {
    pub column: i64,
    pub open: &'a str,
    pub close: &'a str,
    pub ellipsis: &'a str,
    pub tokens: i64,
}

/// `fts5HighlightAppend`: text up to its first NUL byte.
fn append(out: &mut Vec<u8>, text: &[u8]) {
    let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
    out.extend_from_slice(&text[..end]);
}

fn tokens(text: &[u8], tokenizer: Tokenizer, f: impl FnMut(&[u8], usize, usize)) {
    match tokenizer {
        Tokenizer::Words => unicode61::words(text, f),
        Tokenizer::Trigram => unicode61::trigrams(text, f),
    }
}

/// `fts5SnippetScore`: the score of the window of `n_token` tokens from
/// `start` in column `col`, and where a window around its hits would
/// start.
fn score(
    hits: &[Inst],
    sizes: &[usize],
    seen: &mut [bool],
    col: u32,
    start: i64,
    n_token: i64,
    doc_size: i64,
) -> (i64, i64) {
    let end = start + n_token;
    let (mut score, mut first, mut last) = (0i64, -1i64, 0i64);
    for &(p, c, off) in hits {
        let off = i64::from(off);
        if c == col && off >= start && off < end {
            score += if seen[p] { 1 } else { 1000 };
            seen[p] = true;
            if first < 0 {
                first = off;
            }
            last = off + sizes[p] as i64;
        }
    }
    let mut adj = first - (n_token - (last - first)) / 2;
    if adj + n_token > doc_size {
        adj = doc_size - n_token;
    }
    (score, adj.max(0))
}

/// The coalesced hits of a column (`CInstIter`): runs of overlapping
/// hits as (first token, last token).
struct Coalesced<'a> {
    hits: &'a [Inst],
    sizes: &'a [usize],
    col: u32,
    at: usize,
    start: i64,
    end: i64,
}

impl Coalesced<'_> {
    fn next(&mut self) {
        self.start = -1;
        self.end = -1;
        while self.at < self.hits.len() {
            let (p, c, off) = self.hits[self.at];
            if c == self.col {
                let off = i64::from(off);
                let end = off - 1 + self.sizes[p] as i64;
                if self.start < 0 {
                    self.start = off;
                    self.end = end;
                } else if off <= self.end {
                    self.end = self.end.max(end);
                } else {
                    break;
                }
            }
            self.at += 1;
        }
    }
}

/// The snippet of a row (see the module docs). `None` when a hit lies
/// past its column's end (FTS5's `SQLITE_CORRUPT`).
pub fn snippet(
    columns: &[&[u8]],
    tokenizer: Tokenizer,
    hits: &[Inst],
    sizes: &[usize],
    args: SnippetArgs<'_>,
) -> Option<Vec<u8>> {
    let n_token = args.tokens.clamp(0, 64);
    let mut best_col = usize::try_from(args.column).unwrap_or(0);
    let (mut best_start, mut best_score, mut best_col_size) = (0i64, 0i64, 0i64);
    let mut seen = vec![false; sizes.len()];
    for (i, text) in columns.iter().enumerate() {
        if args.column >= 0 && args.column != i as i64 {
            continue;
        }
        // The first token of each sentence (`fts5SentenceFinderCb`), and
        // the column's size in tokens (`xColumnSize`).
        let mut firsts: Vec<i64> = Vec::new();
        let mut pos = 0i64;
        tokens(text, tokenizer, |_, start, _| {
            if pos == 0 {
                firsts.push(0);
            } else {
                let before = text[..start]
                    .iter()
                    .rposition(|&c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'));
                let spaced = before.map_or(start > 0, |b| b + 1 != start);
                if spaced && before.is_some_and(|b| matches!(text[b], b'.' | b':')) {
                    firsts.push(pos);
                }
            }
            pos += 1;
        });
        let doc_size = pos;
        let col = i as u32;
        for &(_, c, off) in hits {
            if c != col {
                continue;
            }
            let off = i64::from(off);
            if off > doc_size {
                return None;
            }
            seen.fill(false);
            let (s, adj) = score(hits, sizes, &mut seen, col, off, n_token, doc_size);
            if s > best_score {
                (best_score, best_col, best_start, best_col_size) = (s, i, adj, doc_size);
            }
            if !firsts.is_empty() && doc_size > n_token {
                let mut j = 0;
                while j < firsts.len() - 1 && firsts[j + 1] <= off {
                    j += 1;
                }
                if firsts[j] < off {
                    seen.fill(false);
                    let (s, _) = score(hits, sizes, &mut seen, col, firsts[j], n_token, doc_size);
                    let s = s + if firsts[j] == 0 { 120 } else { 100 };
                    if s > best_score {
                        (best_score, best_col, best_start, best_col_size) =
                            (s, i, firsts[j], doc_size);
                    }
                }
            }
        }
    }
    let text = *columns.get(best_col)?;
    if best_col_size == 0 {
        let mut n = 0i64;
        tokens(text, tokenizer, |_, _, _| n += 1);
        best_col_size = n;
    }
    let mut out = Vec::new();
    let mut iter = Coalesced {
        hits,
        sizes,
        col: best_col as u32,
        at: 0,
        start: -1,
        end: -1,
    };
    iter.next();
    let (range_start, range_end) = (best_start, best_start + n_token - 1);
    if best_start > 0 {
        append(&mut out, args.ellipsis.as_bytes());
    }
    while iter.start >= 0 && iter.start < best_start {
        iter.next();
    }
    // `fts5HighlightCb` over the column's tokens.
    let (mut pos, mut copied, mut open) = (0i64, 0usize, false);
    tokens(text, tokenizer, |_, start, end| {
        let at = pos;
        pos += 1;
        // A window of no token (`range_end` -1) is no window: FTS5 then
        // marks the whole column.
        if range_end >= 0 {
            if at < range_start || at > range_end {
                return;
            }
            if range_start > 0 && at == range_start {
                copied = start;
            }
        }
        if open && (at <= iter.start || iter.start < 0) && start > copied {
            append(&mut out, args.close.as_bytes());
            open = false;
        }
        if at == iter.start && !open {
            append(&mut out, &text[copied..start]);
            append(&mut out, args.open.as_bytes());
            copied = start;
            open = true;
        }
        if at == iter.end {
            if !open {
                append(&mut out, args.open.as_bytes());
                open = true;
            }
            append(&mut out, &text[copied..end]);
            copied = end;
            iter.next();
        }
        if at == range_end {
            if open {
                if iter.start >= 0 && at >= iter.start {
                    append(&mut out, &text[copied..end]);
                    copied = end;
                }
                append(&mut out, args.close.as_bytes());
                open = false;
            }
            append(&mut out, &text[copied..end]);
            copied = end;
        }
    });
    if open {
        append(&mut out, args.close.as_bytes());
    }
    if range_end >= best_col_size - 1 {
        append(&mut out, &text[copied..]);
    } else {
        append(&mut out, args.ellipsis.as_bytes());
    }
    Some(out)
}
