//! FTS5's tokenizers, as this index configures them, without SQLite:
//! `unicode61 remove_diacritics 2` (the text tables) and `trigram` (code
//! blocks), byte for byte.
//!
//! In: text as bytes (what a record holds; invalid UTF-8 is decoded as
//! FTS5 decodes it). Out: each token, folded (lower case, diacritics
//! removed), with the byte range of the text it came from: what FTS5
//! stores in the index and what `snippet()` and `highlight()` mark.
//!
//! A port of `fts5_tokenize.c` and `fts5_unicode2.c` (SQLite, public
//! domain), with their tables in `tables.rs` (generated from the
//! amalgamation by `xtask/sqlite/unicode61-tables.py`).

mod tables;

use tables::{
    CATEGORY_DATA, CATEGORY_PLANES, CATEGORY_STARTS, DIACRITIC_CHARS, DIACRITIC_KEYS, FOLD_OFFSETS,
    FOLD_RULES,
};

/// `remove_diacritics 2`: complex diacritics go too.
const REMOVE_COMPLEX: u8 = 2;

/// FTS5's categories, numbered as `sqlite3Fts5UnicodeCategory` returns
/// them, that are token characters by default (`L* N* Co`), and category
/// 0 (codepoints the tables do not assign), which FTS5 always counts.
const fn token_categories() -> [bool; 32] {
    let mut t = [false; 32];
    t[0] = true;
    // Ll Lm Lo Lt Lu LC
    t[5] = true;
    t[6] = true;
    t[7] = true;
    t[8] = true;
    t[9] = true;
    t[30] = true;
    // Nd Nl No
    t[13] = true;
    t[14] = true;
    t[15] = true;
    // Co
    t[31] = true;
    t
}
const TOKEN_CATEGORIES: [bool; 32] = token_categories();

/// `sqlite3Fts5UnicodeCategory`.
fn category(c: u32) -> usize {
    if c >= 1 << 20 {
        return 0;
    }
    let plane = (c >> 16) as usize;
    let (mut lo, mut hi) = (
        usize::from(CATEGORY_PLANES[plane]),
        usize::from(CATEGORY_PLANES[plane + 1]),
    );
    let key = (c & 0xffff) as u16;
    let mut found = None;
    while hi > lo {
        let mid = (lo + hi) / 2;
        if key >= CATEGORY_STARTS[mid] {
            found = Some(mid);
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let Some(i) = found else { return 0 };
    let start = u32::from(CATEGORY_STARTS[i]);
    if u32::from(key) >= start + u32::from(CATEGORY_DATA[i] >> 5) {
        return 0;
    }
    match CATEGORY_DATA[i] & 0x1f {
        30 if (u32::from(key) - start) & 1 == 1 => 5,
        30 => 9,
        cat => usize::from(cat),
    }
}

fn is_token_char(c: u32) -> bool {
    TOKEN_CATEGORIES[category(c)]
}

/// `sqlite3Fts5UnicodeIsdiacritic`.
fn is_diacritic(c: u32) -> bool {
    const MASK0: u32 = 0x0802_9fdf;
    const MASK1: u32 = 0x0003_61f8;
    if !(768..=817).contains(&c) {
        return false;
    }
    if c < 768 + 32 {
        MASK0 & (1 << (c - 768)) != 0
    } else {
        MASK1 & (1 << (c - 768 - 32)) != 0
    }
}

/// `fts5_remove_diacritic`.
fn remove_diacritic(c: u32, complex: bool) -> u32 {
    let key = (c << 3) | 7;
    let (mut lo, mut hi) = (0i32, DIACRITIC_KEYS.len() as i32 - 1);
    let mut res = 0usize;
    while hi >= lo {
        let mid = (lo + hi) / 2;
        if key >= u32::from(DIACRITIC_KEYS[mid as usize]) {
            res = mid as usize;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    let ch = DIACRITIC_CHARS[res];
    if !complex && ch & 0x80 != 0 {
        return c;
    }
    let k = u32::from(DIACRITIC_KEYS[res]);
    if c > (k >> 3) + (k & 7) {
        c
    } else {
        u32::from(ch & 0x7f)
    }
}

/// `sqlite3Fts5UnicodeFold`: lower case, and without diacritics when
/// `remove` is 1 (simple) or 2 (complex too).
pub fn fold(c: u32, remove: u8) -> u32 {
    if c < 128 {
        return if (65..=90).contains(&c) { c + 32 } else { c };
    }
    if c < 65536 {
        let i = FOLD_RULES.partition_point(|&(start, _, _)| u32::from(start) <= c) - 1;
        let (start, flags, len) = FOLD_RULES[i];
        let start = u32::from(start);
        let mut out = c;
        if c < start + u32::from(len) && (u32::from(flags) & 1 & (start ^ c)) == 0 {
            out = (c + u32::from(FOLD_OFFSETS[usize::from(flags >> 1)])) & 0xffff;
        }
        if remove != 0 {
            out = remove_diacritic(out, remove == REMOVE_COMPLEX);
        }
        return out;
    }
    if (66560..66600).contains(&c) {
        return c + 40;
    }
    c
}

/// `FTS5_READ_UTF8`: the codepoint at `at` and where the next starts.
fn read_utf8(b: &[u8], mut at: usize) -> (u32, usize) {
    let first = b[at];
    at += 1;
    let mut c = u32::from(first);
    if first >= 0xc0 {
        c = match first {
            0xc0..=0xdf => c - 0xc0,
            0xe0..=0xef => c - 0xe0,
            0xf0..=0xf7 => c - 0xf0,
            0xf8..=0xfb => c - 0xf8,
            0xfc..=0xfd => c - 0xfc,
            _ => 0,
        };
        while at < b.len() && b[at] & 0xc0 == 0x80 {
            c = (c << 6).wrapping_add(u32::from(b[at] & 0x3f));
            at += 1;
        }
        if c < 0x80 || c & 0xffff_f800 == 0xd800 || c & 0xffff_fffe == 0xfffe {
            c = 0xfffd;
        }
    }
    (c, at)
}

/// `FTS5_WRITE_UTF8`.
fn write_utf8(out: &mut Vec<u8>, c: u32) {
    if c < 0x80 {
        out.push(c as u8);
    } else if c < 0x800 {
        out.extend([0xc0 + ((c >> 6) & 0x1f) as u8, 0x80 + (c & 0x3f) as u8]);
    } else if c < 0x10000 {
        out.extend([
            0xe0 + ((c >> 12) & 0x0f) as u8,
            0x80 + ((c >> 6) & 0x3f) as u8,
            0x80 + (c & 0x3f) as u8,
        ]);
    } else {
        out.extend([
            0xf0 + ((c >> 18) & 0x07) as u8,
            0x80 + ((c >> 12) & 0x3f) as u8,
            0x80 + ((c >> 6) & 0x3f) as u8,
            0x80 + (c & 0x3f) as u8,
        ]);
    }
}

/// The `unicode61 remove_diacritics 2` tokens of `text`, in order: `f`
/// gets each folded token and the byte range it came from.
///
/// ```
/// use gitsense_engine::index::unicode61::words;
/// let mut tokens = Vec::new();
/// words("Déjà-vu, 2x".as_bytes(), |t, start, end| {
///     tokens.push((String::from_utf8(t.to_vec()).unwrap(), start, end))
/// });
/// assert_eq!(tokens, [("deja".into(), 0, 6), ("vu".into(), 7, 9), ("2x".into(), 11, 13)]);
/// ```
pub fn words(text: &[u8], mut f: impl FnMut(&[u8], usize, usize)) {
    let mut token = Vec::with_capacity(64);
    let mut at = 0;
    'tokens: loop {
        // Separators.
        let start;
        loop {
            if at >= text.len() {
                break 'tokens;
            }
            if text[at] & 0x80 != 0 {
                let (c, next) = read_utf8(text, at);
                if is_token_char(c) {
                    start = at;
                    at = next;
                    token.clear();
                    let c = fold(c, REMOVE_COMPLEX);
                    if c != 0 {
                        write_utf8(&mut token, c);
                    }
                    break;
                }
                at = next;
            } else if is_ascii_token_char(text[at]) {
                start = at;
                token.clear();
                token.push(text[at].to_ascii_lowercase());
                at += 1;
                break;
            } else {
                at += 1;
            }
        }
        // Token characters (and diacritics after them).
        while at < text.len() {
            if text[at] & 0x80 != 0 {
                let (c, next) = read_utf8(text, at);
                if !(is_token_char(c) || is_diacritic(c)) {
                    break;
                }
                at = next;
                let c = fold(c, REMOVE_COMPLEX);
                if c != 0 {
                    write_utf8(&mut token, c);
                }
            } else if is_ascii_token_char(text[at]) {
                token.push(text[at].to_ascii_lowercase());
                at += 1;
            } else {
                break;
            }
        }
        f(&token, start, at);
    }
}

/// Whether an ASCII byte is a token character (`sqlite3Fts5UnicodeAscii`:
/// its category, and NUL never).
fn is_ascii_token_char(b: u8) -> bool {
    b != 0 && is_token_char(u32::from(b))
}

/// The `trigram` tokens of `text` (case folded, diacritics kept): `f`
/// gets each three characters and the byte range they came from.
///
/// ```
/// use gitsense_engine::index::unicode61::trigrams;
/// let mut tokens = Vec::new();
/// trigrams(b"Ab_cd", |t, start, end| tokens.push((t.to_vec(), start, end)));
/// assert_eq!(tokens, [(b"ab_".to_vec(), 0, 3), (b"b_c".to_vec(), 1, 4), (b"_cd".to_vec(), 2, 5)]);
/// ```
pub fn trigrams(text: &[u8], mut f: impl FnMut(&[u8], usize, usize)) {
    let mut at = 0;
    // The next character that folds to something, and where it started.
    let next_char = |at: &mut usize| -> Option<(u32, usize)> {
        loop {
            let start = *at;
            if *at >= text.len() {
                return None;
            }
            let (c, next) = read_utf8(text, *at);
            *at = next;
            let c = fold(c, 0);
            if c != 0 {
                return Some((c, start));
            }
        }
    };
    let mut chars: [(u32, usize); 3] = [(0, 0); 3];
    for slot in chars.iter_mut() {
        match next_char(&mut at) {
            Some(c) => *slot = c,
            None => return,
        }
    }
    let mut buf = Vec::with_capacity(12);
    loop {
        // The trigram ends where the next character that folds starts.
        let next = next_char(&mut at);
        let end = next.map_or(text.len(), |(_, start)| start);
        buf.clear();
        for &(c, _) in &chars {
            write_utf8(&mut buf, c);
        }
        f(&buf, chars[0].1, end);
        match next {
            Some(c) => chars = [chars[1], chars[2], c],
            None => return,
        }
    }
}
