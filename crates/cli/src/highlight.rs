//! Terminal colours for verbose output: a [`Paint`] that draws line
//! numbers and commit messages dim and colours code by a small lexer
//! (comments, strings, numbers, keywords) chosen by the result's language.
//!
//! In: lines already made safe by the formatter (control characters
//! escaped), so the only escape sequences in the output are this module's.
//! Out: the same text with ANSI SGR sequences. Languages it does not know
//! (markdown, plain text) are left uncoloured rather than guessed.

use gitsense_engine::format::Paint;

const RESET: &str = "\x1b[0m";
const DIM: &str = "\x1b[2m";
const COMMENT: &str = "\x1b[2;3m";
const STRING: &str = "\x1b[33m";
const NUMBER: &str = "\x1b[36m";
const KEYWORD: &str = "\x1b[35m";

/// What the lexer needs to know of a language.
struct Syntax {
    line_comments: &'static [&'static str],
    block_comment: Option<(&'static str, &'static str)>,
    quotes: &'static [char],
    keywords: &'static [&'static str],
}

const C_FAMILY_KEYWORDS: &[&str] = &[
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "default",
    "do",
    "else",
    "enum",
    "extends",
    "false",
    "final",
    "finally",
    "for",
    "if",
    "implements",
    "import",
    "interface",
    "namespace",
    "new",
    "null",
    "package",
    "private",
    "protected",
    "public",
    "return",
    "static",
    "struct",
    "super",
    "switch",
    "this",
    "throw",
    "throws",
    "true",
    "try",
    "typedef",
    "using",
    "var",
    "void",
    "while",
];

fn syntax(language: &str) -> Option<Syntax> {
    const SLASH: &[&str] = &["//"];
    const HASH: &[&str] = &["#"];
    const BLOCK: Option<(&str, &str)> = Some(("/*", "*/"));
    Some(match language {
        "rust" => Syntax {
            line_comments: SLASH,
            block_comment: BLOCK,
            quotes: &['"'],
            keywords: &[
                "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else",
                "enum", "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match",
                "mod", "move", "mut", "pub", "ref", "return", "self", "Self", "static", "struct",
                "super", "trait", "true", "type", "unsafe", "use", "where", "while",
            ],
        },
        "javascript" | "typescript" | "jsx" | "tsx" => Syntax {
            line_comments: SLASH,
            block_comment: BLOCK,
            quotes: &['"', '\'', '`'],
            keywords: &[
                "async",
                "await",
                "break",
                "case",
                "catch",
                "class",
                "const",
                "continue",
                "default",
                "delete",
                "do",
                "else",
                "export",
                "extends",
                "false",
                "finally",
                "for",
                "from",
                "function",
                "if",
                "import",
                "in",
                "instanceof",
                "interface",
                "let",
                "new",
                "null",
                "of",
                "return",
                "static",
                "super",
                "switch",
                "this",
                "throw",
                "true",
                "try",
                "type",
                "typeof",
                "undefined",
                "var",
                "void",
                "while",
                "yield",
            ],
        },
        "python" => Syntax {
            line_comments: HASH,
            block_comment: None,
            quotes: &['"', '\''],
            keywords: &[
                "and", "as", "assert", "async", "await", "break", "class", "continue", "def",
                "del", "elif", "else", "except", "False", "finally", "for", "from", "global", "if",
                "import", "in", "is", "lambda", "None", "nonlocal", "not", "or", "pass", "raise",
                "return", "True", "try", "while", "with", "yield",
            ],
        },
        "go" => Syntax {
            line_comments: SLASH,
            block_comment: BLOCK,
            quotes: &['"', '`', '\''],
            keywords: &[
                "break",
                "case",
                "chan",
                "const",
                "continue",
                "default",
                "defer",
                "else",
                "fallthrough",
                "false",
                "for",
                "func",
                "go",
                "goto",
                "if",
                "import",
                "interface",
                "map",
                "nil",
                "package",
                "range",
                "return",
                "select",
                "struct",
                "switch",
                "true",
                "type",
                "var",
            ],
        },
        "c" | "cpp" | "java" | "kotlin" | "csharp" | "scala" | "swift" | "php" => Syntax {
            line_comments: SLASH,
            block_comment: BLOCK,
            quotes: &['"', '\''],
            keywords: C_FAMILY_KEYWORDS,
        },
        "bash" | "ruby" | "perl" | "r" | "toml" | "yaml" | "makefile" | "dockerfile" => Syntax {
            line_comments: HASH,
            block_comment: None,
            quotes: &['"', '\''],
            keywords: &[
                "begin", "case", "def", "do", "done", "elif", "else", "end", "esac", "export",
                "fi", "for", "function", "if", "in", "local", "module", "return", "then", "unless",
                "until", "while",
            ],
        },
        "sql" => Syntax {
            line_comments: &["--"],
            block_comment: BLOCK,
            quotes: &['\''],
            keywords: &[
                "AND", "AS", "BY", "CREATE", "DELETE", "FROM", "GROUP", "INSERT", "INTO", "JOIN",
                "LIMIT", "NOT", "NULL", "ON", "OR", "ORDER", "SELECT", "SET", "TABLE", "UPDATE",
                "VALUES", "WHERE",
            ],
        },
        _ => return None,
    })
}

/// Colours for a terminal.
pub struct Ansi;

impl Paint for Ansi {
    fn dim(&self, text: &str) -> String {
        format!("{DIM}{text}{RESET}")
    }

    fn code(&self, language: &str, lines: &[&str]) -> Vec<String> {
        let Some(syn) = syntax(language) else {
            return lines.iter().map(|l| l.to_string()).collect();
        };
        let mut in_block = false;
        lines
            .iter()
            .map(|l| paint_line(&syn, l, &mut in_block))
            .collect()
    }
}

fn painted(out: &mut String, colour: &str, text: &str) {
    if !text.is_empty() {
        out.push_str(colour);
        out.push_str(text);
        out.push_str(RESET);
    }
}

/// One line; `in_block` carries an unclosed block comment to the next.
fn paint_line(syn: &Syntax, line: &str, in_block: &mut bool) -> String {
    let mut out = String::with_capacity(line.len() + 32);
    let mut rest = line;
    while !rest.is_empty() {
        if *in_block {
            let close = syn.block_comment.map_or("", |(_, c)| c);
            let end = rest.find(close).map_or(rest.len(), |i| i + close.len());
            *in_block = end == rest.len() && !rest.ends_with(close);
            painted(&mut out, COMMENT, &rest[..end]);
            rest = &rest[end..];
            continue;
        }
        if syn.line_comments.iter().any(|p| rest.starts_with(p)) {
            painted(&mut out, COMMENT, rest);
            break;
        }
        if let Some((open, _)) = syn.block_comment.filter(|(o, _)| rest.starts_with(o)) {
            out.push_str(COMMENT);
            out.push_str(open);
            out.push_str(RESET);
            rest = &rest[open.len()..];
            *in_block = true;
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        if syn.quotes.contains(&c) {
            let end = string_end(rest, c);
            painted(&mut out, STRING, &rest[..end]);
            rest = &rest[end..];
        } else if c.is_ascii_digit() {
            let end = number_end(rest);
            painted(&mut out, NUMBER, &rest[..end]);
            rest = &rest[end..];
        } else if c.is_alphabetic() || c == '_' {
            let end = word_end(rest);
            let word = &rest[..end];
            if syn.keywords.contains(&word) {
                painted(&mut out, KEYWORD, word);
            } else {
                out.push_str(word);
            }
            rest = &rest[end..];
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Byte length of the string literal at the start of `s` (to its closing
/// quote, a backslash escaping the next character; the line's end if it
/// does not close on this line).
fn string_end(s: &str, quote: char) -> usize {
    let mut escaped = false;
    for (i, c) in s.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            c if c == quote => return i + c.len_utf8(),
            _ => {}
        }
    }
    s.len()
}

fn word_end(s: &str) -> usize {
    s.char_indices()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
        .map_or(s.len(), |(i, _)| i)
}

/// A number runs on through its decimal point, exponent and suffix
/// (`3.14`, `0x1F`, `10u32`).
fn number_end(s: &str) -> usize {
    s.char_indices()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '.'))
        .map_or(s.len(), |(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(s: &str) -> String {
        let mut out = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                for c in chars.by_ref() {
                    if c == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn colours_keep_the_text_and_mark_its_parts() {
        let lines = [
            "fn retry(n: u32) -> &'static str { // try again",
            "    let s = \"a \\\" b\"; /* open",
            "    still comment */ 4.2 self.fn_name",
        ];
        let out = Ansi.code("rust", &lines);
        for (painted, plain) in out.iter().zip(lines) {
            assert_eq!(strip(painted), plain);
        }
        assert!(out[0].starts_with(&format!("{KEYWORD}fn{RESET}")));
        assert!(out[0].ends_with(&format!("{COMMENT}// try again{RESET}")));
        assert!(out[1].contains(&format!("{STRING}\"a \\\" b\"{RESET}")));
        assert!(out[2].starts_with(&format!("{COMMENT}    still comment */{RESET}")));
        assert!(out[2].contains(&format!("{NUMBER}4.2{RESET}")));
        // A keyword before a field access is still a keyword.
        assert!(out[2].ends_with(&format!("{KEYWORD}self{RESET}.fn_name")));
    }

    #[test]
    fn unknown_languages_stay_plain() {
        assert_eq!(Ansi.code("markdown", &["# Title *x*"]), ["# Title *x*"]);
    }
}
