//! `option:regex`: the query's terms and phrases read as regular
//! expressions, matched against each target's text (a chat's name, a
//! message's title, body and keywords, a code block's content).
//!
//! In: the parsed expression, whose literals are the patterns. Out: a SQL
//! condition over [`REGEXP_FUNCTION`] (registered on the connection by
//! [`register`]) with every pattern a bound parameter, and the words every
//! match must contain, read from the patterns' literal runs
//! ([`required_words`]), which the planner hands to FTS5 so only rows
//! holding them are tested. A pattern without such words is tested on every
//! row of the target, under the search's time budget.
//!
//! Patterns are compiled by `regex-lite`: matching time is linear in the
//! text, the compiled program is bounded ([`MAX_PROGRAM_BYTES`]) and so is
//! the pattern ([`MAX_PATTERN_CHARS`]); `\w`, `\d`, `\b` and
//! case-insensitive matching are ASCII-only.

use crate::error::{Error, Result};
use crate::query::ast::Expr;
use regex_lite::{Regex, RegexBuilder};
use rusqlite::functions::FunctionFlags;
use rusqlite::types::Value as SqlValue;
use rusqlite::Connection;

/// The SQL function `gs_regexp(pattern, text)`: 1 when `pattern` matches
/// somewhere in `text`, 0 otherwise (and for a NULL text).
pub(crate) const REGEXP_FUNCTION: &str = "gs_regexp";

/// Longest pattern accepted, in characters.
pub(crate) const MAX_PATTERN_CHARS: usize = 500;

/// Most memory one compiled pattern may take (`regex-lite`'s size limit):
/// `a{1000}{1000}` and the like are refused instead of compiled.
pub(crate) const MAX_PROGRAM_BYTES: usize = 256 * 1024;

/// Deepest nesting of groups and repetitions accepted.
const MAX_NESTING: u32 = 32;

/// Shortest literal run handed to FTS5 (the trigram index of code blocks
/// cannot look up fewer characters).
const MIN_WORD_CHARS: usize = crate::index::TRIGRAM_MIN_CHARS;

fn compile(pattern: &str) -> std::result::Result<Regex, regex_lite::Error> {
    RegexBuilder::new(pattern)
        .size_limit(MAX_PROGRAM_BYTES)
        .nest_limit(MAX_NESTING)
        .build()
}

/// Checks that `pattern` (at character `at` of the query) compiles within
/// the limits, as written and as the case-insensitive form
/// [`condition`] binds.
pub(crate) fn check(pattern: &str, at: usize) -> Result<()> {
    if pattern.chars().count() > MAX_PATTERN_CHARS {
        return Err(Error::at(
            "query.bad_regex",
            format!("the pattern is longer than {MAX_PATTERN_CHARS} characters"),
            at,
        ));
    }
    compile(pattern)
        .and_then(|_| compile(&format!("(?i:{pattern})")))
        .map(|_| ())
        .map_err(|e| {
            let why = e.to_string();
            let why = why.lines().last().unwrap_or("invalid pattern").trim();
            Error::at(
                "query.bad_regex",
                format!("'{pattern}' is not a regular expression this engine accepts: {why}"),
                at,
            )
        })
}

/// Registers [`REGEXP_FUNCTION`] on a connection. Each statement compiles
/// a pattern once (SQLite keeps it with the bound parameter).
pub(crate) fn register(conn: &Connection) -> Result<()> {
    conn.create_scalar_function(
        REGEXP_FUNCTION,
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let re = ctx.get_or_create_aux(0, |v| -> std::result::Result<Regex, BoxError> {
                Ok(compile(v.as_str()?)?)
            })?;
            let text = ctx.get_raw(1);
            Ok(match text.as_str_or_null() {
                Ok(Some(t)) => re.is_match(t),
                _ => false,
            })
        },
    )
    .map_err(|e| {
        Error::new(
            "index.open_failed",
            format!("registering {REGEXP_FUNCTION}: {e}"),
        )
    })
}

type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The pattern a literal of the expression stands for, case-insensitive
/// unless `case_sensitive`. A `word*` term keeps its star (the parser
/// reads it as a prefix mark).
fn pattern_of(e: &Expr, case_sensitive: bool) -> Option<String> {
    let text = match e {
        Expr::Term { text, prefix } if *prefix => format!("{text}*"),
        Expr::Term { text, .. } | Expr::Phrase { text } => text.clone(),
        _ => return None,
    };
    Some(if case_sensitive {
        text
    } else {
        format!("(?i:{text})")
    })
}

/// The SQL condition an expression of patterns puts on `text_sql` (a
/// target's text), and its parameters in order.
pub(crate) fn condition(e: &Expr, text_sql: &str, case_sensitive: bool) -> (String, Vec<SqlValue>) {
    match e {
        Expr::Term { .. } | Expr::Phrase { .. } => {
            let p = pattern_of(e, case_sensitive).unwrap_or_default();
            (
                format!("{REGEXP_FUNCTION}(?, {text_sql})"),
                vec![SqlValue::Text(p)],
            )
        }
        Expr::And { items } | Expr::Or { items } => {
            let op = if matches!(e, Expr::And { .. }) {
                " AND "
            } else {
                " OR "
            };
            let mut params = Vec::new();
            let parts: Vec<String> = items
                .iter()
                .map(|i| {
                    let (sql, p) = condition(i, text_sql, case_sensitive);
                    params.extend(p);
                    sql
                })
                .collect();
            (format!("({})", parts.join(op)), params)
        }
        Expr::Not { item } => {
            let (sql, p) = condition(item, text_sql, case_sensitive);
            (format!("NOT {sql}"), p)
        }
    }
}

/// Words every match of the expression must contain, as an all-terms
/// expression for FTS5 (`None`: none are known, every row is tested).
/// Only patterns every match must satisfy count (those ANDed at the top,
/// not negated), and of them only their literal runs outside groups.
pub(crate) fn required_words(e: &Expr) -> Option<Expr> {
    let mandatory: Vec<&Expr> = match e {
        Expr::And { items } => items.iter().collect(),
        Expr::Term { .. } | Expr::Phrase { .. } => vec![e],
        _ => Vec::new(),
    };
    let mut words = Vec::new();
    for item in mandatory {
        if let Some(p) = pattern_of(item, true) {
            words.extend(literal_words(&p));
        }
    }
    match words.len() {
        0 => None,
        1 => words.pop(),
        _ => Some(Expr::And { items: words }),
    }
}

/// A run of word characters being read, and whether a word boundary (of
/// FTS5's unicode61 tokenizer: any ASCII character that is not a letter
/// or digit, or the start of the text) is known to come before it.
#[derive(Default)]
struct Run {
    text: String,
    bounded_left: bool,
}

/// The FTS5 terms a pattern's matches must contain: each literal run of
/// letters and digits outside groups, with a token boundary known before
/// it (an exact word when one is known after it too, else a prefix).
/// Anything the reading is unsure of (alternation, inline flags, escapes
/// naming characters by code) yields no words at all: they narrow the
/// candidates, so they must never exclude a real match.
fn literal_words(pattern: &str) -> Vec<Expr> {
    let chars: Vec<char> = pattern.chars().collect();
    if pattern.contains('|') || pattern.contains("(?") {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut run = Run::default();
    let mut depth = 0usize;
    // Ends the run: `right` says whether a token boundary follows it;
    // `next_left` whether one precedes what comes next.
    let end = |run: &mut Run, out: &mut Vec<Expr>, right: bool, next_left: bool| {
        if run.bounded_left && run.text.chars().count() >= MIN_WORD_CHARS {
            out.push(Expr::Term {
                text: run.text.clone(),
                prefix: !right,
            });
        }
        *run = Run {
            text: String::new(),
            bounded_left: next_left,
        };
    };
    // A separator the pattern may leave out (`\.?`, ` *`) is no boundary.
    let optional_at = |j: usize| matches!(chars.get(j), Some('?' | '*' | '{'));
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if depth > 0 {
            match c {
                '\\' => i += 1,
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            i += 1;
            continue;
        }
        match c {
            c if c.is_alphanumeric() => run.text.push(c),
            '^' if i == 0 => run.bounded_left = true,
            '$' => end(&mut run, &mut out, true, false),
            '?' | '*' | '{' => {
                // The atom before is optional or repeated any number of
                // times: drop it from the run.
                run.text.pop();
                end(&mut run, &mut out, false, false);
                if c == '{' {
                    while i < chars.len() && chars[i] != '}' {
                        i += 1;
                    }
                }
            }
            '+' | '.' => end(&mut run, &mut out, false, false),
            '(' => {
                end(&mut run, &mut out, false, false);
                depth = 1;
            }
            '[' => {
                end(&mut run, &mut out, false, false);
                let mut class_depth = 1;
                i += 1;
                if chars.get(i) == Some(&']') {
                    i += 1;
                }
                while i < chars.len() && class_depth > 0 {
                    match chars[i] {
                        '\\' => i += 1,
                        '[' => class_depth += 1,
                        ']' => class_depth -= 1,
                        _ => {}
                    }
                    i += 1;
                }
                continue;
            }
            '\\' => {
                let Some(&next) = chars.get(i + 1) else {
                    return Vec::new();
                };
                i += 1;
                let sure = !optional_at(i + 1);
                match next {
                    'n' | 't' | 'r' | 'f' | 'v' | 's' => end(&mut run, &mut out, sure, sure),
                    'd' | 'D' | 'w' | 'W' | 'S' | 'b' | 'B' | 'A' | 'z' => {
                        end(&mut run, &mut out, false, false)
                    }
                    n if n.is_ascii_punctuation() || n == ' ' => {
                        end(&mut run, &mut out, sure, sure)
                    }
                    _ => return Vec::new(),
                }
            }
            c if c.is_ascii() => {
                let sure = !optional_at(i + 1);
                end(&mut run, &mut out, sure, sure)
            }
            _ => end(&mut run, &mut out, false, false),
        }
        i += 1;
    }
    end(&mut run, &mut out, false, false);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(p: &str) -> Vec<String> {
        literal_words(p)
            .iter()
            .map(|e| match e {
                Expr::Term { text, prefix } => format!("{text}{}", if *prefix { "*" } else { "" }),
                _ => unreachable!(),
            })
            .collect()
    }

    #[test]
    fn only_runs_with_a_known_token_start_become_words() {
        assert_eq!(words(r"^payment\s+\d+"), ["payment"]);
        assert_eq!(words(r"fn main\(\) \{"), ["main"]);
        assert_eq!(words(r"retry_count = \d"), ["count"]);
        assert_eq!(words(r"\.unwrap\("), ["unwrap"]);
        assert_eq!(words(r"-payments?"), ["payment*"]);
        assert_eq!(words(r" colou?r "), ["colo*"]);
        assert_eq!(words(r"(foo|bar) baz"), Vec::<String>::new());
        assert_eq!(words(r"(?x) pay ment"), Vec::<String>::new());
        assert_eq!(words(r" \x41bc "), Vec::<String>::new());
        assert_eq!(words(r" (group) after"), ["after*"]);
        assert_eq!(words(r" [abc]def word"), ["word*"]);
        assert_eq!(words(r" ab{2}cde "), Vec::<String>::new());
        // An optional separator is no boundary.
        assert_eq!(words(r" foo\.?bar "), ["foo*"]);
        assert_eq!(words(r" foo ?bar "), ["foo*"]);
    }

    #[test]
    fn bad_and_oversized_patterns_are_refused() {
        assert_eq!(check("a(", 4).unwrap_err().position, Some(4));
        assert!(check("[z-a]", 0).is_err());
        assert!(check(r"\w{1000}{1000}", 0).is_err());
        assert!(check(&"a".repeat(MAX_PATTERN_CHARS + 1), 0).is_err());
        assert!(check(&"(".repeat(40), 0).is_err());
        assert!(check(r"pay(ment|out)", 0).is_ok());
        // Valid only inside the case-insensitive group condition() adds.
        assert!(check(")(", 0).is_err());
    }

    #[test]
    fn conditions_bind_every_pattern() {
        let e = Expr::And {
            items: vec![
                Expr::Phrase { text: "a b".into() },
                Expr::Not {
                    item: Box::new(Expr::Term {
                        text: "c".into(),
                        prefix: true,
                    }),
                },
            ],
        };
        let (sql, params) = condition(&e, "x.t", false);
        assert_eq!(sql, "(gs_regexp(?, x.t) AND NOT gs_regexp(?, x.t))");
        assert_eq!(
            params,
            vec![
                SqlValue::Text("(?i:a b)".into()),
                SqlValue::Text("(?i:c*)".into())
            ]
        );
    }

    #[test]
    fn check_accepts_a_pattern_and_points_a_bad_one_at_its_position() {
        use crate::pattern::check;
        assert!(check(r"pay(ment|out)s?\b", 0).is_ok());
        let e = check("fn (", 10).unwrap_err();
        assert_eq!((e.code.as_str(), e.position), ("query.bad_regex", Some(10)));
    }
}
