//! Fenced code blocks in Markdown text (chat messages): text in, the
//! blocks' info strings, languages and contents out.
//!
//! Follows CommonMark's fence rules where they matter for chat text: a fence
//! is a line of three or more backticks or tildes; a backtick fence's info
//! string holds no backtick (so `` ```x``` `` on one line is inline code);
//! the block closes at a line of the same character, at least as long, with
//! nothing after it; the opening fence's indentation is removed from the
//! content lines; an unclosed block runs to the end of the text. Unlike
//! CommonMark, fences may be indented by any amount, since chat answers nest
//! them deep in lists.

/// One fenced block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FencedBlock {
    /// The info string after the opening fence, trimmed (may be empty).
    pub(crate) info: String,
    /// The first word of the info string, lower-cased, without `{`, `.` or
    /// `}` decoration; `None` when the info string is empty.
    pub language: Option<String>,
    /// The text between the fences, without the final line break.
    pub content: String,
    /// Whether a closing fence was found.
    pub(crate) closed: bool,
}

struct Fence {
    ch: u8,
    len: usize,
    indent: usize,
}

/// Splits a line into (indent width in bytes, rest).
fn indent_of(line: &str) -> (usize, &str) {
    let rest = line.trim_start_matches([' ', '\t']);
    (line.len() - rest.len(), rest)
}

fn opening(line: &str) -> Option<(Fence, &str)> {
    let (indent, rest) = indent_of(line);
    let ch = *rest.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = rest.bytes().take_while(|&b| b == ch).count();
    if len < 3 {
        return None;
    }
    let info = rest[len..].trim();
    if ch == b'`' && info.contains('`') {
        return None;
    }
    Some((Fence { ch, len, indent }, info))
}

fn closes(line: &str, f: &Fence) -> bool {
    let (_, rest) = indent_of(line);
    let n = rest.bytes().take_while(|&b| b == f.ch).count();
    n >= f.len && rest[n..].trim().is_empty()
}

fn language_of(info: &str) -> Option<String> {
    let word = info.split_whitespace().next()?;
    let word = word
        .trim_start_matches(['{', '.'])
        .split([',', '}', '{'])
        .next()
        .unwrap_or("")
        .trim();
    (!word.is_empty()).then(|| word.to_lowercase())
}

/// Removes up to `n` bytes of leading spaces or tabs.
fn dedent(line: &str, n: usize) -> &str {
    let ws = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[ws.min(n)..]
}

/// Every fenced block of `text`, in order.
pub fn fenced_blocks(text: &str) -> Vec<FencedBlock> {
    let mut out = Vec::new();
    let mut open: Option<(Fence, String, Vec<&str>)> = None;
    for raw in text.split('\n') {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        match open.take() {
            None => {
                if let Some((fence, info)) = opening(line) {
                    open = Some((fence, info.to_string(), Vec::new()));
                }
            }
            Some((fence, info, mut lines)) => {
                if closes(line, &fence) {
                    out.push(block(info, &lines, true));
                } else {
                    lines.push(dedent(line, fence.indent));
                    open = Some((fence, info, lines));
                }
            }
        }
    }
    if let Some((_, info, mut lines)) = open {
        // A text ending in a line break leaves one empty last "line".
        if lines.last() == Some(&"") {
            lines.pop();
        }
        out.push(block(info, &lines, false));
    }
    out
}

fn block(info: String, lines: &[&str], closed: bool) -> FencedBlock {
    FencedBlock {
        language: language_of(&info),
        info,
        content: lines.join("\n"),
        closed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backtick_and_tilde_fences_with_languages_are_found() {
        let t = "Intro\n```python\nprint(1)\n```\ntext\n~~~ {.rust}\nfn main() {}\n~~~\n";
        let b = fenced_blocks(t);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].language.as_deref(), Some("python"));
        assert_eq!(b[0].content, "print(1)");
        assert_eq!(b[1].language.as_deref(), Some("rust"));
        assert_eq!(b[1].content, "fn main() {}");
        assert!(b[0].closed && b[1].closed);
    }

    #[test]
    fn a_longer_fence_holds_shorter_ones() {
        let t = "````md\n```js\nx\n```\n````";
        let b = fenced_blocks(t);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].content, "```js\nx\n```");
        assert_eq!(b[0].language.as_deref(), Some("md"));
    }

    #[test]
    fn inline_triple_backticks_are_not_fences() {
        assert!(fenced_blocks("use ```x``` inline").is_empty());
        assert!(fenced_blocks("``\nnot a fence\n``").is_empty());
    }

    #[test]
    fn indented_fences_are_dedented_and_unclosed_blocks_run_to_the_end() {
        let t = "1. step\n   ```bash\n   ls -l\n     cd x\n   ```\n```\nopen block\n";
        let b = fenced_blocks(t);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].content, "ls -l\n  cd x");
        assert_eq!(b[1].language, None);
        assert_eq!(b[1].content, "open block");
        assert!(!b[1].closed);
    }

    #[test]
    fn a_closing_fence_with_text_after_it_does_not_close() {
        let b = fenced_blocks("```\na\n``` b\nc\n```");
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].content, "a\n``` b\nc");
    }

    #[test]
    fn crlf_line_ends_are_handled() {
        let b = fenced_blocks("```c\r\nint x;\r\n```\r\n");
        assert_eq!(b[0].content, "int x;");
        assert_eq!(b[0].language.as_deref(), Some("c"));
    }
}
