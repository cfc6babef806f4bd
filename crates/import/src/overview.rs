//! Derived file overviews: a file's path and text in, GitSense-style
//! `tiny-overview::file-content::default` and
//! `short-overview::file-content::default` messages out.
//!
//! GitSense Chat writes these with an LLM analyzer; this importer derives
//! them without one, from what the file says about itself: its first doc
//! comment or heading (the purpose), the names it defines (found with simple
//! per-language patterns, see [`super::languages`]), and its most frequent
//! words (keywords). The messages carry `meta.extracted_metadata`-style
//! fields (`file_path`, `file_name`, `file_extension`, `chat_id`, `purpose`,
//! `keywords`, `parent_keywords`, `key_entities`) so the AI search profiles
//! (`profile:tiny-overview-query-optimization`) find the files.

use super::languages::{extension, language_for, language_from_shebang, CommentStyle, Language};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashSet};

/// Message type of the tiny overview.
pub const TINY_OVERVIEW: &str = "tiny-overview::file-content::default";
/// Message type of the short overview.
pub const SHORT_OVERVIEW: &str = "short-overview::file-content::default";

/// Most characters of a purpose sentence.
const PURPOSE_MAX_CHARS: usize = 220;
/// Most characters of the doc summary in the short overview.
const SUMMARY_MAX_CHARS: usize = 800;
/// Lines scanned for a doc comment.
const DOC_SCAN_LINES: usize = 300;
/// Most definitions kept per file.
const MAX_DEFINITIONS: usize = 300;
/// Key entities in the tiny overview.
const MAX_KEY_ENTITIES: usize = 25;
/// Keywords per file.
const MAX_KEYWORDS: usize = 10;

/// A named thing a file defines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    /// `function`, `struct`, `class`, `section`, ...
    pub kind: &'static str,
    pub name: String,
}

/// What the heuristics found in one file.
#[derive(Debug, Clone, PartialEq)]
pub struct Overview {
    pub path: String,
    /// The file name without its extension (GitSense's `file_name`).
    pub file_name: String,
    pub file_extension: Option<String>,
    pub language: Option<&'static str>,
    /// One sentence: the first sentence of the doc comment or heading, or a
    /// description built from the definitions.
    pub purpose: String,
    /// The doc comment or first paragraph, shortened (may be empty).
    pub summary: String,
    pub definitions: Vec<Definition>,
    pub keywords: Vec<String>,
    pub parent_keywords: Vec<String>,
    pub lines: usize,
}

impl Overview {
    /// Analyzes a file's text.
    pub fn of(path: &str, text: &str) -> Overview {
        let base = path.rsplit('/').next().unwrap_or(path);
        let file_extension = extension(base);
        let file_name = match &file_extension {
            Some(ext) => base[..base.len() - ext.len() - 1].to_string(),
            None => base.to_string(),
        };
        let lang = language_for(base).or_else(|| {
            file_extension
                .is_none()
                .then(|| text.lines().next().and_then(language_from_shebang))
                .flatten()
        });
        let doc = lang
            .map(|l| doc_text(l, text))
            .unwrap_or_else(|| prose_doc(text, false));
        let definitions = lang.map(|l| definitions(l, text)).unwrap_or_default();
        let summary = shorten(&doc, SUMMARY_MAX_CHARS);
        let category = category(path, lang);
        let label = lang.map_or("text", |l| l.label);
        let purpose = match first_sentence(&doc) {
            Some(s) => s,
            None => fallback_purpose(label, category, &definitions),
        };
        let keywords = keywords(path, text, &purpose, &definitions, lang);
        let mut parent_keywords = vec![category.to_string()];
        if let Some(l) = lang {
            parent_keywords.push(l.name.to_string());
        }
        if let Some((top, _)) = path.split_once('/') {
            let top = top.to_lowercase();
            if !GENERIC_DIRS.contains(&top.as_str()) && !top.starts_with('.') {
                parent_keywords.push(top);
            }
        }
        dedup(&mut parent_keywords);
        Overview {
            path: path.to_string(),
            file_name,
            file_extension,
            language: lang.map(|l| l.name),
            purpose,
            summary,
            definitions,
            keywords,
            parent_keywords,
            lines: text.lines().count(),
        }
    }

    /// Names of the definitions, unique, in file order.
    pub fn key_entities(&self, max: usize) -> Vec<String> {
        let mut seen = HashSet::new();
        self.definitions
            .iter()
            .filter(|d| seen.insert(d.name.as_str()))
            .take(max)
            .map(|d| d.name.clone())
            .collect()
    }

    fn base_meta(&self, chat_id: i64) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        m.insert("file_path".into(), json!(self.path));
        m.insert("file_name".into(), json!(self.file_name));
        m.insert("file_extension".into(), json!(self.file_extension));
        m.insert("chat_id".into(), json!(chat_id));
        m.insert("purpose".into(), json!(self.purpose));
        m.insert("keywords".into(), json!(self.keywords));
        m.insert("parent_keywords".into(), json!(self.parent_keywords));
        m.insert(
            "key_entities".into(),
            json!(self.key_entities(MAX_KEY_ENTITIES)),
        );
        m
    }

    fn header(&self, kind: &str, chat_id: i64) -> String {
        format!(
            "# GitSense Chat Analysis\n## {kind}\n\n*   **Path:** {}\n*   **Chat ID:** {chat_id}\n\
             *   **Analyzer:** gitsense-search heuristics (doc comment, definitions, word counts; no LLM)\n",
            self.path
        )
    }

    /// The tiny overview: text and `extracted_metadata`.
    pub fn tiny(&self, chat_id: i64) -> (String, Value) {
        let mut s = self.header(TINY_OVERVIEW, chat_id);
        s.push_str(&format!("\n## Summary\n{}\n", self.purpose));
        s.push_str("\n## Keywords and Categories\n");
        s.push_str(&format!(
            "*   **Keywords:** {}\n*   **Parent Keywords:** {}\n*   **Key Entities:** {}\n",
            self.keywords.join(", "),
            self.parent_keywords.join(", "),
            self.key_entities(MAX_KEY_ENTITIES).join(", ")
        ));
        (s, Value::Object(self.base_meta(chat_id)))
    }

    /// The short overview: purpose, doc summary, every definition found.
    pub fn short(&self, chat_id: i64) -> (String, Value) {
        let mut s = self.header(SHORT_OVERVIEW, chat_id);
        if let Some(l) = self.language {
            s.push_str(&format!("*   **Language:** {l}\n"));
        }
        s.push_str(&format!("*   **Lines:** {}\n", self.lines));
        s.push_str(&format!("\n## Purpose\n{}\n", self.purpose));
        if !self.summary.is_empty() && self.summary != self.purpose {
            s.push_str(&format!("\n## Summary\n{}\n", self.summary));
        }
        if !self.definitions.is_empty() {
            s.push_str("\n## Definitions\n");
            let mut by_kind: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for d in &self.definitions {
                by_kind.entry(d.kind).or_default().push(&d.name);
            }
            for (kind, names) in by_kind {
                s.push_str(&format!(
                    "*   **{kind}** ({}): {}\n",
                    names.len(),
                    names.join(", ")
                ));
            }
        }
        s.push_str(&format!(
            "\n## Keywords\n{}\n",
            self.keywords
                .iter()
                .chain(&self.parent_keywords)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
        let mut meta = self.base_meta(chat_id);
        meta.insert("summary".into(), json!(self.summary));
        meta.insert("language".into(), json!(self.language));
        meta.insert("line_count".into(), json!(self.lines));
        meta.insert(
            "definitions".into(),
            json!(self
                .definitions
                .iter()
                .map(|d| format!("{} {}", d.kind, d.name))
                .collect::<Vec<_>>()),
        );
        (s, Value::Object(meta))
    }
}

/// Directory names too common to say anything about a file.
#[rustfmt::skip]
const GENERIC_DIRS: &[&str] = &["src", "lib", "app", "pkg", "internal", "source", "sources"];

fn dedup(v: &mut Vec<String>) {
    let mut seen = HashSet::new();
    v.retain(|s| seen.insert(s.clone()));
}

/// A broad category for `parent_keywords`.
fn category(path: &str, lang: Option<&Language>) -> &'static str {
    let lower = path.to_lowercase();
    let parts: Vec<&str> = lower.split('/').collect();
    let base = parts.last().copied().unwrap_or("");
    let stem = base.split('.').next().unwrap_or(base);
    let in_dir = |names: &[&str]| parts[..parts.len() - 1].iter().any(|p| names.contains(p));
    if in_dir(&["test", "tests", "spec", "specs", "__tests__", "testdata"])
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || base.contains(".test.")
        || base.contains(".spec.")
    {
        return "tests";
    }
    if in_dir(&["bench", "benches", "benchmarks"]) {
        return "benchmarks";
    }
    if in_dir(&["examples", "example"]) {
        return "examples";
    }
    match lang.map(|l| l.name) {
        Some("markdown" | "rst" | "text") => "documentation",
        None if matches!(
            stem,
            "readme" | "license" | "copying" | "changelog" | "notice"
        ) =>
        {
            "documentation"
        }
        Some("makefile" | "cmake" | "dockerfile") => "build",
        Some("json" | "yaml" | "toml" | "ini" | "hcl") => "configuration",
        Some("html" | "css" | "scss" | "less" | "vue" | "svelte") => "web",
        Some("bash" | "powershell" | "batch" | "fish") => "scripts",
        Some("csv" | "xml") => "data",
        Some(_) if base == "build.rs" || base == "setup.py" => "build",
        Some(_) => "source-code",
        None if base.starts_with('.') => "configuration",
        None => "other",
    }
}

fn fallback_purpose(label: &str, category: &str, defs: &[Definition]) -> String {
    let what = match category {
        "source-code" => format!("{label} source file"),
        "documentation" => format!("{label} document"),
        "tests" => format!("{label} test file"),
        "scripts" => format!("{label} script"),
        other => format!("{label} {} file", other.replace('-', " ")),
    };
    let mut seen = HashSet::new();
    let names: Vec<&str> = defs
        .iter()
        .map(|d| d.name.as_str())
        .filter(|n| seen.insert(*n))
        .collect();
    let mut s = match names.len() {
        0 => what,
        n if n <= 4 => format!("{what} defining {}", names.join(", ")),
        n => format!(
            "{what} defining {} and {} more",
            names[..4].join(", "),
            n - 4
        ),
    };
    s.push('.');
    capitalize(&s)
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Collapses whitespace and cuts to `max` characters at a word boundary.
fn shorten(s: &str, max: usize) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if i > max / 2 => cut[..i].to_string(),
        _ => cut,
    };
    format!("{}…", cut.trim_end_matches([',', ';', ':']))
}

/// The first sentence of a doc text, shortened.
fn first_sentence(doc: &str) -> Option<String> {
    let flat = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().filter(|c| c.is_alphabetic()).count() < 3 {
        return None;
    }
    let mut end = flat.len();
    for (i, _) in flat.match_indices(['.', '!', '?']) {
        let next = flat[i + 1..].chars().next();
        let before = &flat[..i];
        let abbreviation = ["e.g", "i.e", "etc", "vs"]
            .iter()
            .any(|a| before.to_lowercase().ends_with(a));
        if (next.is_none() || next == Some(' ')) && !abbreviation && i >= 12 {
            end = i + 1;
            break;
        }
    }
    Some(shorten(&flat[..end], PURPOSE_MAX_CHARS))
}

fn is_license(text: &str) -> bool {
    let l = text.to_lowercase();
    [
        "copyright",
        "license",
        "spdx-",
        "all rights reserved",
        "licensed under",
    ]
    .iter()
    .any(|k| l.contains(k))
}

/// Strips comment markers and decoration from one comment line.
fn clean_comment_line(line: &str) -> &str {
    let t = line.trim();
    let t = t
        .trim_start_matches("/**")
        .trim_start_matches("/*!")
        .trim_start_matches("/*")
        .trim_end_matches("*/");
    let t = t
        .trim_start_matches(['/', '!', '*', '#', ';', '-', '%'])
        .trim();
    if t.chars().all(|c| "=-*#~_+/".contains(c)) {
        ""
    } else {
        t
    }
}

/// The doc text of a file: its module doc comment, docstring, heading and
/// first paragraph, or a `description` field.
fn doc_text(lang: &Language, text: &str) -> String {
    match lang.comments {
        CommentStyle::Prose => prose_doc(text, lang.name == "markdown"),
        CommentStyle::Markup => markup_doc(text),
        _ => {
            if let Some(d) = description_field(text) {
                return d;
            }
            if lang.name == "python" {
                if let Some(d) = python_docstring(text) {
                    return d;
                }
            }
            comment_doc(lang, text).unwrap_or_default()
        }
    }
}

/// `description = "..."` (TOML), `"description": "..."` (JSON),
/// `description: ...` (YAML) near the top of a manifest.
fn description_field(text: &str) -> Option<String> {
    for line in text.lines().take(60) {
        let t = line.trim().trim_start_matches('"');
        let Some(rest) = t.strip_prefix("description") else {
            continue;
        };
        let rest = rest.trim_start_matches('"').trim_start();
        let Some(value) = rest.strip_prefix(['=', ':']) else {
            continue;
        };
        let v = value
            .trim()
            .trim_end_matches(',')
            .trim_matches(['"', '\''])
            .trim();
        if v.split_whitespace().count() >= 2 {
            return Some(v.to_string());
        }
    }
    None
}

fn python_docstring(text: &str) -> Option<String> {
    let mut lines = text
        .lines()
        .map(str::trim)
        .skip_while(|l| l.is_empty() || l.starts_with('#'));
    let first = lines.next()?;
    let first = first.trim_start_matches(['r', 'u', 'R', 'U']);
    let quote = ["\"\"\"", "'''"]
        .into_iter()
        .find(|q| first.starts_with(q))?;
    let body = &first[3..];
    if let Some(end) = body.find(quote) {
        return Some(body[..end].to_string());
    }
    let mut out = vec![body.to_string()];
    for l in lines {
        if let Some(end) = l.find(quote) {
            out.push(l[..end].to_string());
            break;
        }
        out.push(l.to_string());
    }
    Some(out.join("\n"))
}

/// Comment blocks near the top; Rust's `//!` module docs first, then the
/// first block that is not a licence header.
fn comment_doc(lang: &Language, text: &str) -> Option<String> {
    let mut blocks: Vec<(bool, Vec<String>)> = Vec::new();
    let mut current: Option<(bool, Vec<String>)> = None;
    let mut in_block = false;
    let flush = |cur: &mut Option<(bool, Vec<String>)>, blocks: &mut Vec<(bool, Vec<String>)>| {
        if let Some(b) = cur.take() {
            if b.1.iter().any(|l| !l.is_empty()) {
                blocks.push(b);
            }
        }
    };
    for (i, line) in text.lines().take(DOC_SCAN_LINES).enumerate() {
        let t = line.trim();
        if i == 0 && t.starts_with("#!") {
            continue;
        }
        let (is_comment, module_doc) = match lang.comments {
            CommentStyle::CFamily => {
                if in_block {
                    if t.contains("*/") {
                        in_block = false;
                    }
                    (true, false)
                } else if t.starts_with("/*") {
                    in_block = !t.contains("*/") || t == "/*";
                    (true, t.starts_with("/*!"))
                } else {
                    (t.starts_with("//"), t.starts_with("//!"))
                }
            }
            CommentStyle::Hash => (
                t.starts_with('#') && !t.starts_with("#[") && !t.starts_with("#!"),
                false,
            ),
            CommentStyle::Dash => (t.starts_with("--"), false),
            CommentStyle::Semicolon => (t.starts_with(';') || t.starts_with('#'), false),
            _ => (false, false),
        };
        if is_comment {
            let cleaned = clean_comment_line(t).to_string();
            match &mut current {
                Some((m, lines)) if *m == module_doc => lines.push(cleaned),
                _ => {
                    flush(&mut current, &mut blocks);
                    current = Some((module_doc, vec![cleaned]));
                }
            }
        } else {
            flush(&mut current, &mut blocks);
        }
    }
    flush(&mut current, &mut blocks);
    let text_of = |b: &(bool, Vec<String>)| b.1.join("\n").trim().to_string();
    blocks
        .iter()
        .find(|b| b.0)
        .or_else(|| {
            blocks.iter().find(|b| {
                let t = text_of(b);
                !is_license(&t) && t.split_whitespace().count() >= 3
            })
        })
        .map(text_of)
}

/// Markdown, reStructuredText or plain text: the first heading and the
/// first paragraph of prose after it.
fn prose_doc(text: &str, markdown: bool) -> String {
    let lines: Vec<&str> = text.lines().take(DOC_SCAN_LINES).collect();
    let mut title: Option<String> = None;
    let mut para: Vec<&str> = Vec::new();
    let mut in_fence = false;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
            if !para.is_empty() {
                break;
            }
            continue;
        }
        if in_fence {
            continue;
        }
        let underline = lines
            .get(i + 1)
            .map(|n| {
                let n = n.trim();
                n.len() >= 3 && n.chars().all(|c| "=-~^*#".contains(c))
            })
            .unwrap_or(false);
        let heading = if markdown && t.starts_with('#') {
            Some(t.trim_start_matches('#').trim())
        } else if underline && !t.is_empty() {
            Some(t)
        } else {
            None
        };
        if let Some(h) = heading {
            if !para.is_empty() {
                break;
            }
            if title.is_none() && !h.is_empty() {
                title = Some(h.to_string());
            }
            continue;
        }
        let decoration = t.chars().all(|c| "=-~^*#_|:".contains(c));
        let markup = t.starts_with("[![")
            || t.starts_with("![")
            || t.starts_with('<')
            || t.starts_with('|')
            || t.starts_with("..")
            || t.starts_with("[!");
        if t.is_empty() || decoration {
            if !para.is_empty() {
                break;
            }
            continue;
        }
        if markup && para.is_empty() {
            continue;
        }
        para.push(t);
    }
    let body = para.join(" ");
    match (title, body.is_empty()) {
        (Some(t), true) => t,
        (Some(t), false) if !body.to_lowercase().contains(&t.to_lowercase()) => {
            format!("{t}: {body}")
        }
        (_, _) => body,
    }
}

/// HTML/XML: the `<title>` or first `<h1>`, else the first comment.
fn markup_doc(text: &str) -> String {
    let lower = text.to_lowercase();
    for (open, close) in [("<title>", "</title>"), ("<h1", "</h1>")] {
        if let Some(s) = lower.find(open) {
            let after = &text[s..];
            if let (Some(gt), Some(e)) = (after.find('>'), after.to_lowercase().find(close)) {
                if gt < e {
                    let inner = strip_tags(&after[gt + 1..e]);
                    if !inner.trim().is_empty() {
                        return inner.trim().to_string();
                    }
                }
            }
        }
    }
    if let (Some(s), Some(e)) = (text.find("<!--"), text.find("-->")) {
        if s < e && !is_license(&text[s + 4..e]) {
            return text[s + 4..e].trim().to_string();
        }
    }
    String::new()
}

fn strip_tags(s: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

/// The identifier at the start of `s` (after whitespace).
fn ident(s: &str) -> Option<&str> {
    let s = s.trim_start();
    let end = s
        .char_indices()
        .find(|&(_, c)| !is_ident_char(c))
        .map_or(s.len(), |(i, _)| i);
    let id = &s[..end];
    (!id.is_empty() && !id.chars().next().is_some_and(|c| c.is_ascii_digit())).then_some(id)
}

/// Words that may precede a definition keyword.
#[rustfmt::skip]
const MODIFIERS: &[&str] = &[
    "pub", "export", "default", "async", "public", "private", "protected", "internal", "abstract",
    "final", "sealed", "open", "override", "unsafe", "extern", "inline", "virtual", "declare",
    "data", "inner", "partial", "readonly", "local", "static", "const", "@objc", "suspend",
    "actual", "expect", "lazy", "noinline", "case",
];

/// Keywords that look like a C function's name but are not.
#[rustfmt::skip]
const C_NOT_NAMES: &[&str] = &[
    "if", "for", "while", "switch", "return", "sizeof", "else", "do", "case", "typedef", "using",
    "template", "defined", "catch",
];

fn definitions(lang: &Language, text: &str) -> Vec<Definition> {
    let mut out = Vec::new();
    let mut in_block_comment = false;
    let mut in_docstring = false;
    let mut in_fence = false;
    for raw in text.lines() {
        if out.len() >= MAX_DEFINITIONS {
            break;
        }
        let t = raw.trim();
        if lang.name == "rust" && t == "#[cfg(test)]" {
            // Unit tests follow; their names describe tests, not the file.
            break;
        }
        if lang.comments == CommentStyle::Prose {
            if t.starts_with("```") || t.starts_with("~~~") {
                in_fence = !in_fence;
            }
            if in_fence {
                continue;
            }
        }
        if lang.comments == CommentStyle::CFamily {
            if in_block_comment {
                if t.contains("*/") {
                    in_block_comment = false;
                }
                continue;
            }
            if t.starts_with("/*") {
                in_block_comment = !t.contains("*/");
                continue;
            }
            if t.starts_with("//") {
                continue;
            }
        }
        if lang.name == "python" {
            let quotes = t.matches("\"\"\"").count() + t.matches("'''").count();
            if in_docstring {
                if quotes % 2 == 1 {
                    in_docstring = false;
                }
                continue;
            }
            if quotes % 2 == 1 {
                in_docstring = true;
                continue;
            }
        }
        if let Some(d) = definition_in_line(lang, raw, t) {
            out.push(d);
        }
    }
    out
}

fn definition_in_line(lang: &Language, raw: &str, t: &str) -> Option<Definition> {
    match lang.name {
        "markdown" => {
            let level = t.chars().take_while(|&c| c == '#').count();
            let name = t[level..].trim();
            return ((1..=3).contains(&level) && t[level..].starts_with(' ') && !name.is_empty())
                .then(|| Definition {
                    kind: "section",
                    name: name.to_string(),
                });
        }
        "yaml" => {
            if raw.starts_with([' ', '\t', '#', '-']) {
                return None;
            }
            let (k, _) = t.split_once(':')?;
            return ident(k)
                .filter(|i| i.len() == k.trim().len())
                .map(|i| Definition {
                    kind: "key",
                    name: i.to_string(),
                });
        }
        "toml" => {
            let inner = t.strip_prefix('[')?.trim_start_matches('[');
            let end = inner.find(']')?;
            return Some(Definition {
                kind: "section",
                name: inner[..end].trim().to_string(),
            });
        }
        "makefile" => {
            if raw.starts_with([' ', '\t', '#', '.']) {
                return None;
            }
            let (target, rest) = t.split_once(':')?;
            if target.contains(['=', '$', '%', ' ']) || rest.starts_with('=') || target.is_empty() {
                return None;
            }
            return Some(Definition {
                kind: "target",
                name: target.to_string(),
            });
        }
        "sql" => return sql_definition(t),
        _ => {}
    }
    // Strip modifiers (`pub(crate)`, `export default async`, `extern "C"`).
    let mut rest = t;
    loop {
        let word = rest.split_whitespace().next().unwrap_or("");
        let is_def_keyword = lang.definitions.iter().any(|(k, _)| *k == word);
        let next_is_def = rest[word.len()..]
            .split_whitespace()
            .next()
            .is_some_and(|n| {
                lang.definitions.iter().any(|(k, _)| *k == n) || MODIFIERS.contains(&n)
            });
        let strip = word.starts_with("pub(")
            || word.starts_with('@') && word.len() > 1 && lang.name != "python"
            || (MODIFIERS.contains(&word) && (!is_def_keyword || next_is_def));
        if !strip || word.is_empty() {
            break;
        }
        rest = rest[word.len()..].trim_start();
        if let Some(r) = rest.strip_prefix('"') {
            // extern "C"
            if let Some(end) = r.find('"') {
                rest = r[end + 1..].trim_start();
            }
        }
    }
    let word = rest.split_whitespace().next().unwrap_or("");
    if let Some(&(kw, kind)) = lang.definitions.iter().find(|(k, _)| *k == word) {
        let mut after = rest[kw.len()..].trim_start();
        if lang.name == "go" && kw == "func" && after.starts_with('(') {
            // Method receiver: func (s *Server) Name(
            after = &after[after.find(')')? + 1..];
        }
        if after.starts_with('<') {
            // Kotlin / Swift generics before the name: fun <T> name(
            after = &after[after.find('>')? + 1..];
        }
        let name = ident(after)?;
        if matches!(kw, "const" | "let" | "var") && kind == "function" {
            // Only function-valued bindings: const f = (...) => ..., = function
            let tail = after.trim_start()[name.len()..].trim_start();
            let is_fn = (tail.starts_with('=') || tail.starts_with(':'))
                && (tail.contains("=>") || tail.contains("function"));
            if !is_fn {
                return None;
            }
        }
        return Some(Definition {
            kind,
            name: name.to_string(),
        });
    }
    match lang.name {
        "bash" | "fish" => {
            // name() { ... }
            let name = ident(t)?;
            let tail = t[name.len()..].trim_start();
            tail.starts_with("()").then(|| Definition {
                kind: "function",
                name: name.to_string(),
            })
        }
        "c" | "cpp" | "objective-c" => c_function(raw, t),
        _ => None,
    }
}

fn sql_definition(t: &str) -> Option<Definition> {
    let lower = t.to_lowercase();
    let rest = lower.strip_prefix("create ")?;
    let rest = rest.strip_prefix("or replace ").unwrap_or(rest);
    let rest = rest
        .strip_prefix("unique ")
        .or_else(|| rest.strip_prefix("temporary "))
        .or_else(|| rest.strip_prefix("temp "))
        .unwrap_or(rest);
    for kind in ["table", "view", "function", "index", "procedure", "trigger"] {
        if let Some(r) = rest.strip_prefix(kind) {
            let r = r.trim_start();
            let r = r.strip_prefix("if not exists").unwrap_or(r).trim_start();
            // Keep the original case of the name.
            let offset = t.len() - r.len();
            let name: String = t[offset..]
                .chars()
                .take_while(|&c| is_ident_char(c) || c == '.')
                .collect();
            return (!name.is_empty()).then_some(Definition { kind, name });
        }
    }
    None
}

/// A C/C++ function definition at column 0: `type name(args)` without `;`.
fn c_function(raw: &str, t: &str) -> Option<Definition> {
    if raw.starts_with([' ', '\t', '#', '}', '{', '/', '*']) || t.ends_with(';') {
        return None;
    }
    let paren = t.find('(')?;
    let before = t[..paren].trim_end();
    let name: String = before
        .chars()
        .rev()
        .take_while(|&c| is_ident_char(c) || c == ':' || c == '~')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let ret = before[..before.len() - name.len()].trim();
    if name.is_empty()
        || ret.is_empty()
        || ret.ends_with('=')
        || C_NOT_NAMES.contains(&name.as_str())
        || C_NOT_NAMES.contains(&ret.split_whitespace().next().unwrap_or(""))
    {
        return None;
    }
    Some(Definition {
        kind: "function",
        name,
    })
}

/// Words never worth a keyword.
#[rustfmt::skip]
const STOP: &[&str] = &[
    "about", "above", "after", "again", "also", "because", "been", "before", "being", "below",
    "between", "both", "could", "does", "doing", "done", "down", "during", "each", "either",
    "every", "from", "have", "having", "here", "into", "just", "like", "made", "make", "many",
    "more", "most", "much", "must", "need", "only", "other", "over", "same", "should", "since",
    "some", "such", "than", "that", "their", "them", "then", "there", "these", "they", "this",
    "those", "through", "under", "until", "upon", "used", "uses", "using", "very", "want", "were",
    "what", "when", "where", "which", "while", "will", "with", "within", "without", "would",
    "your", "self", "true", "false", "none", "null", "undefined", "return", "returns", "function",
    "const", "import", "export", "class", "struct", "impl", "public", "private", "protected",
    "static", "void", "string", "else", "elif", "default", "param", "params", "args", "kwargs",
    "pass", "break", "continue", "println", "print", "unwrap", "expect", "some", "option", "http",
    "https", "www", "com", "org", "html", "todo", "fixme", "value", "values", "type", "types",
    "let", "var", "new", "get", "set", "the", "and", "for", "not", "are", "but", "can", "all",
    "any", "has", "was", "you", "use", "len", "str", "int", "bool", "usize", "i64", "u64", "u8",
    "vec", "mut", "ref", "fn", "def", "end", "begin", "each", "super", "crate", "await", "async",
    "match", "case", "switch", "try", "catch", "throw", "throws", "raise", "except", "finally",
    "assert", "assert_eq", "test", "tests", "std", "foo", "bar", "baz", "self", "this", "of", "to",
    "in", "is", "it", "be", "as", "at", "by", "on", "or", "an", "if",
];

/// Splits an identifier into lower-case words (`parseCodeHeader`,
/// `parse_code_header` → parse, code, header).
fn split_identifier(id: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in id.chars() {
        if c == '_' || c == '-' || c == '$' || c.is_ascii_digit() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

fn keyword_ok(w: &str) -> bool {
    w.chars().count() >= 4 && !STOP.contains(&w) && w.chars().all(|c| c.is_alphabetic())
}

/// The most frequent meaningful words of the file, with words from the
/// path, the purpose and the definitions counted extra.
fn keywords(
    path: &str,
    text: &str,
    purpose: &str,
    defs: &[Definition],
    lang: Option<&Language>,
) -> Vec<String> {
    let mut score: BTreeMap<String, u64> = BTreeMap::new();
    let mut add = |w: String, n: u64| {
        if keyword_ok(&w) {
            *score.entry(w).or_insert(0) += n;
        }
    };
    for token in text.split(|c: char| !is_ident_char(c)) {
        for w in split_identifier(token) {
            add(w, 1);
        }
    }
    let boosted = path
        .split(['/', '.'])
        .chain(purpose.split(|c: char| !is_ident_char(c)))
        .chain(defs.iter().map(|d| d.name.as_str()));
    for token in boosted {
        for w in split_identifier(token) {
            add(w, 5);
        }
    }
    let mut ranked: Vec<(String, u64)> = score.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let mut out: Vec<String> = ranked
        .into_iter()
        .take(MAX_KEYWORDS - 1)
        .map(|(w, _)| w)
        .collect();
    if let Some(l) = lang {
        out.push(l.name.to_string());
    }
    dedup(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(o: &Overview) -> Vec<&str> {
        o.definitions.iter().map(|d| d.name.as_str()).collect()
    }

    #[test]
    fn rust_module_docs_and_items_are_found() {
        let src = "// Copyright 2024 Someone. Licensed under MIT.\n\
                   //! Parses query text into an AST. More detail here.\n\
                   use std::fmt;\n\
                   pub(crate) struct Parser { pos: usize }\n\
                   pub async fn parse_query(s: &str) {}\n\
                   const fn limit() -> u8 { 3 }\n\
                   macro_rules! ensure { () => {} }\n\
                   impl Parser { fn advance(&mut self) {} }\n";
        let o = Overview::of("src/query/parser.rs", src);
        assert_eq!(o.purpose, "Parses query text into an AST.");
        assert_eq!(names(&o), ["Parser", "parse_query", "limit", "ensure"]);
        assert_eq!(o.language, Some("rust"));
        assert_eq!(o.file_name, "parser");
        assert_eq!(o.file_extension.as_deref(), Some("rs"));
        assert!(o.keywords.contains(&"parser".to_string()));
        assert!(o.keywords.contains(&"query".to_string()));
        assert_eq!(o.parent_keywords[0], "source-code");
    }

    #[test]
    fn python_docstrings_and_defs_are_found() {
        let src = "#!/usr/bin/env python3\n\"\"\"Utilities for slugs.\n\nLonger text.\n\"\"\"\n\
                   import re\n\nclass Slugger:\n    def slugify(self, s):\n        \"\"\"def not_me(): pass\"\"\"\n\
                   async def fetch_all():\n    pass\n";
        let o = Overview::of("pkg/slugs.py", src);
        assert_eq!(o.purpose, "Utilities for slugs.");
        assert_eq!(names(&o), ["Slugger", "slugify", "fetch_all"]);
    }

    #[test]
    fn javascript_arrow_functions_count_but_plain_constants_do_not() {
        let src = "/**\n * Payment form helpers.\n */\nexport const total = (items) => items.length;\n\
                   const LIMIT = 10;\nexport default async function submit(form) {}\nclass Form {}\n";
        let o = Overview::of("web/form.js", src);
        assert_eq!(o.purpose, "Payment form helpers.");
        assert_eq!(names(&o), ["total", "submit", "Form"]);
    }

    #[test]
    fn go_methods_c_functions_and_shell_functions_are_found() {
        let go = Overview::of(
            "s.go",
            "// Package s serves.\npackage s\nfunc (s *Server) Start() {}\ntype Server struct{}\n",
        );
        assert_eq!(names(&go), ["Start", "Server"]);
        let c = Overview::of("x.c", "#include <x.h>\nstatic int add(int a, int b)\n{\n  if (a) return b;\n}\nint x = f(3);\n");
        assert_eq!(names(&c), ["add"]);
        let sh = Overview::of(
            "run.sh",
            "#!/bin/sh\n# Runs the thing.\nbuild() {\n  make\n}\nfunction deploy {\n}\n",
        );
        assert_eq!(sh.purpose, "Runs the thing.");
        assert_eq!(names(&sh), ["build", "deploy"]);
    }

    #[test]
    fn markdown_uses_heading_and_first_paragraph() {
        let md = "[![ci](x)](y)\n# Widgets\n\nWidgets makes widgets fast. It is small.\n\n## Install\n\n## Usage\n";
        let o = Overview::of("README.md", md);
        assert_eq!(o.purpose, "Widgets makes widgets fast.");
        assert_eq!(names(&o), ["Widgets", "Install", "Usage"]);
        assert_eq!(o.parent_keywords[0], "documentation");
        let o = Overview::of(
            "docs/guide.md",
            "# Guide\n\nStart here.\n```sh\n# not a heading\n```\n",
        );
        assert_eq!(o.purpose, "Guide: Start here.");
        assert_eq!(names(&o), ["Guide"]);
    }

    #[test]
    fn manifests_use_their_description_and_files_without_docs_get_one_built() {
        let o = Overview::of(
            "Cargo.toml",
            "[package]\nname = \"x\"\ndescription = \"Fast widget search\"\n[dependencies]\n",
        );
        assert_eq!(o.purpose, "Fast widget search");
        assert_eq!(names(&o), ["package", "dependencies"]);
        let o = Overview::of("tests/util.rs", "fn a() {}\nfn b() {}\n");
        assert_eq!(o.purpose, "Rust test file defining a, b.");
        assert_eq!(o.parent_keywords[0], "tests");
        let o = Overview::of(
            ".ci/run",
            "#!/usr/bin/env bash\n# Runs the CI.\nmain() {\n}\n",
        );
        assert_eq!(o.language, Some("bash"));
        assert_eq!(o.purpose, "Runs the CI.");
        let o = Overview::of("run", "#!/bin/sh\nmain() {\n}\n");
        assert_eq!(o.purpose, "Shell script defining main.");
        assert_eq!(names(&o), ["main"]);
        let o = Overview::of(
            "src/a.rs",
            "fn a() {}\n#[cfg(test)]\nmod tests {\n    fn t() {}\n}\n",
        );
        assert_eq!(names(&o), ["a"]);
    }

    #[test]
    fn overview_messages_carry_extracted_metadata() {
        let o = Overview::of("src/lib.rs", "//! The library.\npub fn run() {}\n");
        let (text, meta) = o.tiny(7);
        assert!(text.contains("tiny-overview::file-content::default"));
        assert!(text.contains("**Key Entities:** run"));
        assert_eq!(meta["file_path"], "src/lib.rs");
        assert_eq!(meta["file_name"], "lib");
        assert_eq!(meta["file_extension"], "rs");
        assert_eq!(meta["chat_id"], 7);
        assert_eq!(meta["purpose"], "The library.");
        assert_eq!(meta["key_entities"][0], "run");
        let (text, meta) = o.short(7);
        assert!(text.contains("*   **function** (1): run"));
        assert_eq!(meta["line_count"], 2);
    }

    #[test]
    fn identifiers_split_into_words() {
        assert_eq!(
            split_identifier("parseCodeHeader"),
            ["parse", "code", "header"]
        );
        assert_eq!(split_identifier("HTTP_server2x"), ["http", "server", "x"]);
    }
}
