//! Renderers of a results object for people and LLMs (gitctx's formats):
//! `terse` (one line per result), `verbose` (header, metadata, context),
//! `markdown` (YAML front matter + a section per result with a fenced block
//! in the result's language, falling back to `markdown`). Each ends with
//! `N results in X.XXs` when given the elapsed time.
//!
//! A file of a git repository is shown as gitctx shows it: its path and
//! the lines where the match is (`match_lines`), and the last commit
//! that changed it (short SHA, date, author, message). Verbose output draws
//! those lines numbered, through a [`Paint`] (plain here; the CLI's paints
//! a terminal's colours).
//!
//! [`format_results`] is the entry point for LLM consumers: it renders
//! within a token budget (chars/4 estimate of the rendered text), shortening
//! and then dropping results through `crate::budget::fit`.

use crate::budget;
use crate::error::Result;
use crate::results::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;

/// Options of [`format_results`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct FormatOptions {
    /// Token budget for the rendered text (chars/4 estimate).
    pub max_tokens: Option<u64>,
    /// Seconds the search took, for the `N results in X.XXs` footer.
    pub elapsed_secs: Option<f64>,
}

/// What comes before the results: extra front-matter fields (markdown;
/// values written as JSON, which YAML reads as flow values) and titled
/// text sections (all formats), e.g. an assisted search's answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Preamble {
    pub(crate) fields: Vec<(String, Value)>,
    /// `(title, text)`; sections with blank text are left out.
    pub(crate) sections: Vec<(String, String)>,
}

impl Preamble {
    fn sections(&self) -> impl Iterator<Item = (&str, &str)> {
        self.sections
            .iter()
            .filter(|(_, t)| !t.trim().is_empty())
            .map(|(h, t)| (h.as_str(), t.trim_end()))
    }
}

/// The output formats: the results object as JSON, or text for people
/// and LLMs. Parsed from the names the CLI's `--format` takes.
///
/// ```
/// use gitsense_engine::format::{render, Format};
/// use gitsense_engine::{Engine, SearchOptions};
/// # let dir = tempfile::tempdir()?;
/// # let path = gitsense_engine::index::write_example(&dir.path().join("chats.gsx"))?;
/// let r = Engine::open(&path)?.search("retry", &SearchOptions::default())?;
/// let f: Format = "markdown".parse()?;
/// assert!(render(&r, f, None).contains("Payments"));
/// let json: serde_json::Value = serde_json::from_str(&render(&r, "json".parse()?, None))?;
/// assert_eq!(json["totalResultsReturned"], r.total_results_returned);
/// assert_eq!("html".parse::<Format>().unwrap_err().code, "options.bad_format");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Terse,
    Verbose,
    Markdown,
    /// Markdown as gitctx's `--mcp` writes it (`mcp`).
    Mcp,
}

impl std::str::FromStr for Format {
    type Err = crate::Error;
    fn from_str(s: &str) -> crate::Result<Format> {
        Ok(match s {
            "json" => Format::Json,
            "terse" => Format::Terse,
            "verbose" => Format::Verbose,
            "markdown" | "md" => Format::Markdown,
            "mcp" => Format::Mcp,
            _ => {
                return Err(crate::Error::new(
                    "options.bad_format",
                    format!("unknown format '{s}'; use json, terse, verbose, markdown or mcp"),
                ))
            }
        })
    }
}

/// A field as one line of output: control characters (a newline in a file
/// name, a terminal escape) written as escapes, so indexed text can
/// neither split a result's line or heading (forging another result) nor
/// drive the terminal. Tabs stay (they split nothing).
pub(crate) fn one_line_field(s: &str) -> Cow<'_, str> {
    let escaped = |c: char| c.is_control() && c != '\t';
    if !s.chars().any(escaped) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if escaped(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn owned_line(s: String) -> String {
    match one_line_field(&s) {
        Cow::Borrowed(_) => s,
        Cow::Owned(o) => o,
    }
}

/// One result seen through the fields every format prints.
pub(crate) struct Row<'a> {
    pub(crate) kind: &'static str,
    pub(crate) id: String,
    pub(crate) chat_id: i64,
    pub(crate) score: f64,
    pub(crate) title: String,
    pub(crate) chat_path: Option<Cow<'a, str>>,
    pub(crate) path: Option<String>,
    pub(crate) branch: Option<Cow<'a, str>>,
    pub(crate) role: Option<Cow<'a, str>>,
    pub(crate) language: String,
    pub(crate) snippet: String,
    pub(crate) content: Option<&'a str>,
    /// The last commit that changed a git file.
    pub(crate) commit: Option<CommitLine>,
    /// Where the match is in `content` (1-based, inclusive), for a git
    /// file's text.
    pub(crate) lines: Option<(usize, usize)>,
}

/// A commit as one line shows it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CommitLine {
    pub(crate) hash: String,
    /// `YYYY-MM-DD`.
    pub(crate) date: String,
    pub(crate) author: String,
    /// The message's first line.
    pub(crate) subject: String,
}

impl CommitLine {
    fn of(m: &serde_json::Map<String, Value>) -> Option<CommitLine> {
        let hash = meta_str(m, "messages_meta_commit_hash")?;
        let date = meta_str(m, "messages_meta_commit_date").unwrap_or_default();
        Some(CommitLine {
            hash,
            date: date.chars().take(10).collect(),
            author: meta_str(m, "messages_meta_commit_author").unwrap_or_default(),
            subject: m
                .get("messages_meta_commit_message")
                .and_then(Value::as_str)
                .and_then(|t| t.lines().next())
                .map(|t| one_line_field(t).into_owned())
                .unwrap_or_default(),
        })
    }

    /// The first seven characters of the hash, as git abbreviates it
    /// (counted in characters: an index's meta is not trusted to be hex).
    pub(crate) fn short(&self) -> &str {
        match self.hash.char_indices().nth(7) {
            Some((end, _)) => &self.hash[..end],
            None => &self.hash,
        }
    }
}

/// The lines of `content` where a snippet's matches are (1-based,
/// inclusive): the snippet's longest fragment (`...` separates them) is
/// found in the text, and the range runs from its first highlighted term
/// to its last (the whole fragment if it has none). `None` when the
/// fragment is not in the text (a snippet of a shortened text, or of
/// another column). Highlights may be `<mark>` (HTML) or `<GSC>` (raw).
pub(crate) fn match_lines(content: &str, snippet: &str) -> Option<(usize, usize)> {
    let (plain, first, last) = snippet
        .split("...")
        .map(unmark)
        .filter(|(p, _, _)| !p.trim().is_empty())
        .max_by_key(|(p, _, _)| p.len())?;
    let at = content.find(plain.as_str())?;
    let line_at = |offset: usize| content[..at + offset].matches('\n').count() + 1;
    Some((
        line_at(first.unwrap_or(0)),
        line_at(last.unwrap_or(plain.len())),
    ))
}

/// A snippet fragment's plain text and the byte offsets in it of the first
/// highlight's start and the last highlight's end.
fn unmark(fragment: &str) -> (String, Option<usize>, Option<usize>) {
    const TAGS: [(&str, bool); 4] = [
        ("<mark>", true),
        ("</mark>", false),
        ("<GSC>", true),
        ("</GSC>", false),
    ];
    let (mut plain, mut first, mut last) = (String::new(), None, None);
    let mut rest = fragment;
    loop {
        let next = TAGS
            .iter()
            .filter_map(|(t, open)| rest.find(t).map(|i| (i, *t, *open)))
            .min_by_key(|(i, _, _)| *i);
        let Some((i, tag, open)) = next else {
            plain.push_str(&strip_marks(rest));
            return (plain, first, last);
        };
        plain.push_str(&strip_marks(&rest[..i]));
        if open {
            first.get_or_insert(plain.len());
        } else {
            last = Some(plain.len());
        }
        rest = &rest[i + tag.len()..];
    }
}

/// A meta field as one line (see [`one_line_field`]).
fn meta_str(m: &serde_json::Map<String, Value>, key: &str) -> Option<String> {
    m.get(key)
        .and_then(|v| v.as_str())
        .map(|s| one_line_field(s).into_owned())
}

/// Removes highlight markup so plain-text renderers show plain text.
pub(crate) fn strip_marks(s: &str) -> String {
    let s = s
        .replace("<mark>", "")
        .replace("</mark>", "")
        .replace("<GSC>", "")
        .replace("</GSC>", "");
    if s.contains('&') {
        s.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&amp;", "&")
    } else {
        s
    }
}

/// Every result in display order as [`Row`]s.
pub(crate) fn rows(r: &SearchResults) -> Vec<Row<'_>> {
    let mut out = Vec::new();
    for c in &r.results.chats {
        out.push(Row {
            kind: "chat",
            id: c.chats_id.to_string(),
            chat_id: c.result_chat_id,
            score: c.fts_rank,
            title: owned_line(c.chats_name.clone().unwrap_or_default()),
            chat_path: c.chat_path.as_deref().map(one_line_field),
            path: meta_str(&c.meta, "chats_meta_file_path")
                .or_else(|| meta_str(&c.meta, "chats_meta_url")),
            branch: None,
            role: None,
            language: meta_str(&c.meta, "chats_meta_language").unwrap_or_else(|| "markdown".into()),
            snippet: strip_marks(
                c.chats_name_snippet
                    .as_deref()
                    .or(c.chats_name.as_deref())
                    .unwrap_or(""),
            ),
            content: None,
            commit: None,
            lines: None,
        });
    }
    for m in &r.results.messages {
        let marked = m.messages_content_snippet.as_deref().unwrap_or("");
        let is_file = m.messages_type.as_deref() == Some("git-blob");
        out.push(Row {
            kind: "message",
            id: m.messages_id.to_string(),
            chat_id: m.result_chat_id,
            score: m.fts_rank,
            title: meta_str(&m.meta, "messages_meta_title")
                .unwrap_or_else(|| owned_line(m.messages_type.clone().unwrap_or_default())),
            chat_path: m.chat_path.as_deref().map(one_line_field),
            path: meta_str(&m.meta, "messages_meta_url")
                .or_else(|| meta_str(&m.meta, "messages_meta_file_path")),
            branch: m.messages_branch_name.as_deref().map(one_line_field),
            role: m.messages_role.as_deref().map(one_line_field),
            // Only a file's own text is in the file's language; overviews
            // and chat messages are prose (markdown).
            language: if is_file {
                meta_str(&m.meta, "messages_meta_language")
                    .filter(|l| !l.is_empty())
                    .unwrap_or_else(|| "markdown".into())
            } else {
                "markdown".into()
            },
            lines: m
                .messages_content
                .as_deref()
                .filter(|_| is_file)
                .and_then(|c| match_lines(c, marked)),
            snippet: strip_marks(marked),
            content: m.messages_content.as_deref(),
            // The file's own text; an overview of it stays a message.
            commit: CommitLine::of(&m.meta).filter(|_| is_file),
        });
    }
    for b in &r.results.code_blocks {
        out.push(Row {
            kind: "code-block",
            id: owned_line(b.code_blocks_uuid.clone()),
            chat_id: b.result_chat_id,
            score: b.fts_rank,
            title: owned_line(b.code_blocks_component.clone().unwrap_or_default()),
            chat_path: b.chat_path.as_deref().map(one_line_field),
            path: meta_str(&b.meta, "code_blocks_meta_file_path"),
            branch: b.code_blocks_branch_name.as_deref().map(one_line_field),
            role: None,
            language: b
                .code_blocks_language
                .clone()
                .filter(|l| !l.is_empty())
                .map(owned_line)
                .unwrap_or_else(|| "markdown".into()),
            snippet: strip_marks(b.code_blocks_content_snippet.as_deref().unwrap_or("")),
            content: b.code_blocks_content.as_deref(),
            commit: None,
            lines: None,
        });
    }
    out
}

fn one_line(s: &str, max: usize) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let flat = owned_line(flat);
    if flat.chars().count() > max {
        let mut t: String = flat.chars().take(max).collect();
        t.push_str("...");
        t
    } else {
        flat
    }
}

fn footer(r: &SearchResults, elapsed: Option<f64>) -> String {
    match elapsed {
        Some(s) => format!("{} results in {:.2}s\n", r.total_results_returned, s),
        None => String::new(),
    }
}

fn truncation_note(r: &SearchResults) -> String {
    if r.truncated == Some(true) {
        format!(
            "(truncated to fit the token budget: {} of {} results shown)\n",
            r.total_results_returned, r.pagination.total_results
        )
    } else {
        String::new()
    }
}

/// One line per facet: `facet FIELD (TARGET): value count, ...`, with
/// `prefix` before each (`- ` in markdown).
fn facet_lines(r: &SearchResults, prefix: &str) -> String {
    let mut s = String::new();
    for f in r.facets.iter().flatten() {
        let values: Vec<String> = f
            .values
            .iter()
            .map(|v| {
                let text = match &v.value {
                    serde_json::Value::String(t) => one_line(t, 60),
                    other => other.to_string(),
                };
                format!("{text} {}", v.count)
            })
            .collect();
        s.push_str(&format!(
            "{prefix}facet {} ({}): {}{}{}\n",
            one_line(&f.field, 64),
            f.target,
            if values.is_empty() {
                "none".to_string()
            } else {
                values.join(", ")
            },
            if f.other_values > 0 {
                format!(" (+{} more)", f.other_values)
            } else {
                String::new()
            },
            if f.truncated.is_some() {
                " (truncated)"
            } else {
                ""
            }
        ));
    }
    s
}

fn text_preamble(p: &Preamble) -> String {
    p.sections()
        .map(|(h, t)| format!("{h}:\n{t}\n\n"))
        .collect()
}

/// Lines of a git file shown around the lines of its match.
const CONTEXT_LINES: usize = 2;

/// How verbose output draws its parts; [`Plain`] leaves text as it is.
/// Text handed to a painter is already one line each (`one_line_field`).
pub trait Paint {
    /// Secondary text (a commit message).
    fn dim(&self, text: &str) -> String;
    /// Lines of code in `language`, in order, so a painter can carry state
    /// (an open block comment) from one line to the next.
    fn code(&self, language: &str, lines: &[&str]) -> Vec<String>;
}

/// Text as it is: for pipes, files, `NO_COLOR` and the browser.
pub struct Plain;

impl Paint for Plain {
    fn dim(&self, text: &str) -> String {
        text.to_string()
    }
    fn code(&self, _language: &str, lines: &[&str]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }
}

/// `(first, last)` line of `content` shown for a match on `lines`: the
/// match and [`CONTEXT_LINES`] either side, within the text.
fn excerpt_range(content: &str, lines: (usize, usize)) -> (usize, usize) {
    let total = content.lines().count().max(1);
    let last = (lines.1 + CONTEXT_LINES).min(total);
    (lines.0.saturating_sub(CONTEXT_LINES).clamp(1, last), last)
}

/// `(date, author)` and the subject of a commit, as terse shows them.
fn commit_terse(c: &CommitLine) -> String {
    format!(
        "{} ({}, {}) \"{}\"",
        c.short(),
        c.date,
        c.author,
        one_line(&c.subject, 50)
    )
}

/// `location:score kind#id [role] "snippet"`, one line per result; a git
/// file's `path:line:score sha (date, author) "commit subject"`.
pub(crate) fn terse(r: &SearchResults, elapsed: Option<f64>, pre: &Preamble) -> String {
    let mut s = text_preamble(pre);
    for row in rows(r) {
        let loc = row
            .path
            .clone()
            .or_else(|| row.chat_path.as_deref().map(str::to_string))
            .unwrap_or_default();
        if let Some(c) = &row.commit {
            let line = row.lines.map(|(a, _)| format!(":{a}")).unwrap_or_default();
            s.push_str(&format!(
                "{loc}{line}:{:.2} {}\n",
                row.score,
                commit_terse(c)
            ));
            continue;
        }
        s.push_str(&format!(
            "{}:{:.2} {}#{} chat:{}{} \"{}\"\n",
            loc,
            row.score,
            row.kind,
            row.id,
            row.chat_id,
            row.role
                .as_deref()
                .map(|x| format!(" [{x}]"))
                .unwrap_or_default(),
            one_line(&row.snippet, 80)
        ));
    }
    s + &facet_lines(r, "") + &truncation_note(r) + &footer(r, elapsed)
}

/// A git file's header (`path:first-last (score) sha (date, author)`) and
/// its commit subject, painted dim.
fn git_header(row: &Row, c: &CommitLine, paint: &dyn Paint) -> String {
    let range = row
        .lines
        .map(|(a, b)| format!(":{a}-{b}"))
        .unwrap_or_default();
    format!(
        "{}{range} ({:.3}) {} ({}, {})\n  {}\n",
        row.path.as_deref().unwrap_or(&row.title),
        row.score,
        c.short(),
        c.date,
        c.author,
        paint.dim(&c.subject)
    )
}

/// The lines around a git file's match, numbered from their place in the
/// file.
fn numbered_excerpt(content: &str, lines: (usize, usize), lang: &str, paint: &dyn Paint) -> String {
    let (first, last) = excerpt_range(content, lines);
    let text: Vec<Cow<str>> = content
        .lines()
        .skip(first - 1)
        .take(last + 1 - first)
        .map(one_line_field)
        .collect();
    let plain: Vec<&str> = text.iter().map(|l| l.as_ref()).collect();
    let width = last.to_string().len();
    let mut s = String::new();
    for (i, line) in paint.code(lang, &plain).into_iter().enumerate() {
        let n = format!("{:>width$}", first + i);
        s.push_str(&format!("    {} │ {line}\n", paint.dim(&n)));
    }
    s
}

/// Header, metadata line and the snippet in context, blank line between;
/// the code of git files drawn by `paint`.
pub(crate) fn verbose_painted(
    r: &SearchResults,
    elapsed: Option<f64>,
    pre: &Preamble,
    paint: &dyn Paint,
) -> String {
    let mut s = text_preamble(pre);
    for row in rows(r) {
        match &row.commit {
            Some(c) => s.push_str(&git_header(&row, c, paint)),
            None => s.push_str(&format!(
                "{} {} ({:.3}) {}\n",
                row.kind,
                row.id,
                row.score,
                row.path.clone().unwrap_or_else(|| row.title.clone())
            )),
        }
        s.push_str(&format!(
            "  chat {}: {}{}{}\n",
            row.chat_id,
            row.chat_path.as_deref().unwrap_or(""),
            row.branch
                .as_deref()
                .map(|b| format!(" | branch {b}"))
                .unwrap_or_default(),
            row.role
                .as_deref()
                .map(|x| format!(" | {x}"))
                .unwrap_or_default()
        ));
        match (row.content, row.lines) {
            (Some(content), Some(lines)) => {
                s.push_str(&numbered_excerpt(content, lines, &row.language, paint))
            }
            _ => {
                for line in row.snippet.lines() {
                    s.push_str(&format!("    {}\n", one_line_field(line)));
                }
            }
        }
        s.push('\n');
    }
    s + &facet_lines(r, "") + &truncation_note(r) + &footer(r, elapsed)
}

fn yaml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

fn fence_for(content: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for ch in content.chars() {
        if ch == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// YAML front matter listing the results, then one `##` section each with
/// a fenced block in the result's language (fallback `markdown`).
pub(crate) fn markdown(r: &SearchResults, elapsed: Option<f64>, pre: &Preamble) -> String {
    markdown_as(r, elapsed, pre, false)
}

/// [`markdown`] as gitctx's `--mcp` writes a git file: its section is
/// `## path:first-last` over the lines of its match (with
/// [`CONTEXT_LINES`] either side) instead of the whole file.
pub(crate) fn mcp(r: &SearchResults, elapsed: Option<f64>, pre: &Preamble) -> String {
    markdown_as(r, elapsed, pre, true)
}

fn markdown_as(r: &SearchResults, elapsed: Option<f64>, pre: &Preamble, mcp: bool) -> String {
    let rows = rows(r);
    let mut s = String::from("---\n");
    for (k, v) in &pre.fields {
        s.push_str(&format!("{k}: {v}\n"));
    }
    s.push_str(&format!(
        "query: {}\n",
        yaml_str(
            r.search_criteria
                .get("query")
                .and_then(|q| q.as_str())
                .unwrap_or("")
        )
    ));
    s.push_str(&format!("total_results: {}\n", r.pagination.total_results));
    s.push_str(&format!("page: {}\n", r.pagination.current_page));
    if r.truncated == Some(true) {
        s.push_str("truncated: true\n");
    }
    if let Some(c) = &r.next_cursor {
        s.push_str(&format!("next_cursor: {}\n", yaml_str(c)));
    }
    if rows.is_empty() {
        s.push_str("results: []\n");
    } else {
        s.push_str("results:\n");
    }
    for row in &rows {
        s.push_str(&format!("  - source_type: {}\n", row.kind));
        s.push_str(&format!("    id: {}\n", yaml_str(&row.id)));
        s.push_str(&format!("    chat_id: {}\n", row.chat_id));
        if let Some(p) = &row.path {
            s.push_str(&format!("    path: {}\n", yaml_str(p)));
        }
        if let Some(c) = &row.commit {
            if let Some(p) = &row.path {
                s.push_str(&format!("    file_path: {}\n", yaml_str(p)));
            }
            if let Some((a, b)) = row.lines {
                s.push_str(&format!("    line_numbers: {a}-{b}\n"));
            }
            s.push_str(&format!("    commit_sha: {}\n", yaml_str(&c.hash)));
        }
        s.push_str(&format!("    score: {:.3}\n", row.score));
    }
    s.push_str("---\n");
    for (h, t) in pre.sections() {
        s.push_str(&format!("\n## {h}\n\n{t}\n"));
    }
    let facets = facet_lines(r, "- ");
    if !facets.is_empty() {
        s.push_str(&format!("\n## Facets\n\n{facets}"));
    }
    for row in &rows {
        let heading = row.path.clone().unwrap_or_else(|| {
            row.chat_path
                .as_deref()
                .map(str::to_string)
                .unwrap_or_else(|| row.title.clone())
        });
        // The lines of a git file's match, where mcp shows them alone.
        let excerpt = match (&row.commit, row.lines, row.content) {
            (Some(_), Some(lines), Some(content)) if mcp => Some((lines, content)),
            _ => None,
        };
        match excerpt {
            Some(((a, b), _)) => s.push_str(&format!("\n## {heading}:{a}-{b}\n\n")),
            None => s.push_str(&format!("\n## {} {}: {}\n\n", row.kind, row.id, heading)),
        }
        s.push_str(&format!(
            "**Score:** {:.3}{} | **Chat:** {}{}{}\n\n",
            row.score,
            row.commit
                .as_ref()
                .map(|c| format!(" | **Commit:** {}", c.short()))
                .unwrap_or_default(),
            row.chat_id,
            row.branch
                .as_deref()
                .map(|b| format!(" | **Branch:** {b}"))
                .unwrap_or_default(),
            row.chat_path
                .as_deref()
                .map(|p| format!(" | **Path:** {p}"))
                .unwrap_or_default()
        ));
        let body = match (excerpt, row.content) {
            (Some((lines, content)), _) => {
                let (first, last) = excerpt_range(content, lines);
                let shown: Vec<&str> = content
                    .lines()
                    .skip(first - 1)
                    .take(last + 1 - first)
                    .collect();
                shown.join("\n")
            }
            (None, Some(content)) => content.to_string(),
            (None, None) => row.snippet.clone(),
        };
        let fence = fence_for(&body);
        s.push_str(&format!(
            "{fence}{}\n{}\n{fence}\n",
            row.language,
            body.trim_end()
        ));
    }
    if let Some(e) = elapsed {
        s.push('\n');
        s.push_str(&format!(
            "{} results in {:.2}s\n",
            r.total_results_returned, e
        ));
    }
    s
}

/// Renders in any format (`Json` is compact JSON), without a budget.
///
/// ```
/// use gitsense_engine::format::{render, Format};
/// use gitsense_engine::{Engine, SearchOptions};
/// # let dir = tempfile::tempdir()?;
/// # let path = gitsense_engine::index::write_example(&dir.path().join("chats.gsx"))?;
/// let r = Engine::open(&path)?.search("retry", &SearchOptions::default())?;
/// let text = render(&r, Format::Terse, None);
/// assert!(text.contains("Payments"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn render(r: &SearchResults, f: Format, elapsed: Option<f64>) -> String {
    render_with(r, f, elapsed, &Preamble::default())
}

/// Renders with a preamble (ignored by `Json`, which is the object alone).
pub(crate) fn render_with(
    r: &SearchResults,
    f: Format,
    elapsed: Option<f64>,
    pre: &Preamble,
) -> String {
    render_painted(r, f, elapsed, pre, &Plain)
}

fn render_painted(
    r: &SearchResults,
    f: Format,
    elapsed: Option<f64>,
    pre: &Preamble,
    paint: &dyn Paint,
) -> String {
    match f {
        Format::Json => serde_json::to_string(r).unwrap_or_default(),
        Format::Terse => terse(r, elapsed, pre),
        Format::Verbose => verbose_painted(r, elapsed, pre, paint),
        Format::Markdown => markdown(r, elapsed, pre),
        Format::Mcp => mcp(r, elapsed, pre),
    }
}

/// Renders `r` so that the estimate of the text (chars/4) stays within
/// `opts.max_tokens`: contents and snippets are shortened, then the
/// lowest-ranked results dropped, and the output says it was truncated.
/// Fails with `options.max_tokens_too_small` when not even the frame fits.
pub fn format_results(r: &SearchResults, f: Format, opts: &FormatOptions) -> Result<String> {
    format_with(r, f, opts, &Preamble::default())
}

/// [`format_results`] over JSON: a results object as JSON text (what
/// `Engine::search_json` returns), a format name (`json`, `terse`,
/// `verbose`, `markdown`) and options as JSON (`{"maxTokens": 2000}`), for
/// hosts that hold the results object as JSON (the browser module).
pub fn format_results_json(results_json: &str, format: &str, options_json: &str) -> Result<String> {
    let r: SearchResults = crate::util::json_arg(results_json, "results object")?;
    let opts: FormatOptions = crate::util::from_json_arg(options_json, "format options")?;
    format_results(&r, format.parse()?, &opts)
}

/// [`format_results`] with a preamble, which counts against the budget.
pub(crate) fn format_with(
    r: &SearchResults,
    f: Format,
    opts: &FormatOptions,
    pre: &Preamble,
) -> Result<String> {
    format_painted(r, f, opts, pre, &Plain)
}

/// `format_with` with verbose code drawn by `paint`. The budget is
/// measured on what is drawn, colours included, so it holds for the
/// bytes printed.
pub fn format_painted(
    r: &SearchResults,
    f: Format,
    opts: &FormatOptions,
    pre: &Preamble,
    paint: &dyn Paint,
) -> Result<String> {
    let draw = |r: &SearchResults| render_painted(r, f, opts.elapsed_secs, pre, paint);
    let Some(max) = opts.max_tokens else {
        return Ok(draw(r));
    };
    let mut fitted = r.clone();
    budget::fit(&mut fitted, max, &|r| budget::estimate_text(&draw(r)))?;
    Ok(draw(&fitted))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(hash: &str) -> CommitLine {
        CommitLine {
            hash: hash.into(),
            date: String::new(),
            author: String::new(),
            subject: String::new(),
        }
    }

    #[test]
    fn a_short_hash_is_seven_characters_whatever_they_are() {
        assert_eq!(commit("6c4d2e74d98725").short(), "6c4d2e7");
        assert_eq!(commit("abc").short(), "abc");
        assert_eq!(commit("ééééééééé").short(), "ééééééé");
    }

    #[test]
    fn an_excerpt_stays_within_the_text() {
        let text = "a\nb\nc\nd\ne\nf\ng\n";
        assert_eq!(excerpt_range(text, (4, 4)), (2, 6));
        assert_eq!(excerpt_range(text, (1, 2)), (1, 4));
        // A match reported on the line after the last (a fragment that
        // ends with the text's final newline) shows the text's end.
        assert_eq!(excerpt_range("a\nb\n", (3, 3)), (1, 2));
        assert_eq!(excerpt_range("", (1, 1)), (1, 1));
    }

    #[test]
    fn match_lines_spans_the_highlighted_terms_of_the_longest_fragment() {
        use crate::format::match_lines;
        let text = "fn a() {}\nfn retry_payment() {\n    charge()\n}\n";
        let snippet = "...a() {}\nfn <GSC>retry_payment</GSC>() {\n    charge...";
        assert_eq!(match_lines(text, snippet), Some((2, 2)));
        assert_eq!(match_lines(text, "fn a() {}\nfn retry"), Some((1, 2)));
        assert_eq!(match_lines(text, "elsewhere"), None);
    }
}
