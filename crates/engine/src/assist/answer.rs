//! Reading what a model wrote: the query line of a stage-1 answer, and the
//! files a stage-2 or stage-4 answer names.
//!
//! Models answer in many shapes whatever the prompt asks for: bare JSON,
//! JSON in a fenced block with prose around it, markdown lists, tables,
//! prose naming paths and chat ids, or nonsense. [`parse_file_refs`] tries
//! JSON first and then scans the text line by line. Every reference is
//! resolved against the candidate set the model was shown; references to
//! anything else are dropped from the files and reported as [`Flagged`].

use super::IdentifiedFile;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A file reference in a model's answer that matches no candidate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Flagged {
    /// What the model wrote (a path, `chat 99`, ...).
    pub(crate) mention: String,
    /// `unknown-path`, `unknown-chat-id`, `ambiguous-path` (a bare name
    /// that fits several candidates, with no chat id to choose), or
    /// `path-not-candidate` (the path was unknown but the chat id it came
    /// with was a candidate, so the file was taken by its chat id).
    pub reason: String,
}

/// How the answer was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum AnswerShape {
    /// A JSON value with files and/or an answer.
    Json,
    /// Text (markdown, a table, prose, or nothing recognisable).
    Text,
}

/// Files named in a model's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileRefs {
    pub files: Vec<IdentifiedFile>,
    pub flagged: Vec<Flagged>,
    /// The JSON `answer` field (`None` when absent, null or empty); for a
    /// text answer, the whole text.
    pub answer: Option<String>,
    pub(crate) shape: AnswerShape,
}

/// The query in a stage-1 answer: the first line of the first fenced
/// block, else a line labelled `query:`, else the first non-empty line;
/// bullets and surrounding backticks are stripped (quotes are kept: they
/// make phrases).
pub(crate) fn extract_query(answer: &str) -> String {
    let text = answer.trim();
    let mut lines: Vec<&str> = text.lines().collect();
    if let Some(open) = lines.iter().position(|l| l.trim_start().starts_with("```")) {
        let inner: Vec<&str> = lines[open + 1..]
            .iter()
            .take_while(|l| !l.trim_start().starts_with("```"))
            .copied()
            .collect();
        if inner.iter().any(|l| !l.trim().is_empty()) {
            lines = inner;
        }
    }
    let labelled = lines.iter().find_map(|l| strip_label(l));
    let line = labelled
        .or_else(|| lines.iter().map(|l| l.trim()).find(|l| !l.is_empty()))
        .unwrap_or("");
    clean_query_line(line)
}

fn strip_label(line: &str) -> Option<&str> {
    let t = line.trim().trim_start_matches(['*', '_']);
    let lower = t.to_ascii_lowercase();
    for label in ["search query:", "query:"] {
        if lower.starts_with(label) {
            let rest = t[label.len()..].trim_start_matches(['*', '_']).trim();
            if !rest.is_empty() {
                return Some(rest);
            }
        }
    }
    None
}

fn clean_query_line(line: &str) -> String {
    let mut t = line.trim();
    for bullet in ["- ", "* ", "> "] {
        if let Some(rest) = t.strip_prefix(bullet) {
            t = rest.trim();
        }
    }
    if t.len() >= 2 && t.starts_with('`') && t.ends_with('`') {
        t = t.trim_matches('`').trim();
    }
    t.to_string()
}

/// Finds the files an answer names among `candidates` (the files the model
/// was shown), in the order it names them, each once.
pub(crate) fn parse_file_refs(answer: &str, candidates: &[IdentifiedFile]) -> FileRefs {
    let set = Candidates::new(candidates);
    for v in json_values(answer) {
        if let Some(refs) = from_json(&v, &set) {
            return refs;
        }
    }
    from_text(answer, &set)
}

/// The candidate set with the lookups answers need.
struct Candidates<'a> {
    all: &'a [IdentifiedFile],
}

impl<'a> Candidates<'a> {
    fn new(all: &'a [IdentifiedFile]) -> Self {
        Candidates { all }
    }

    fn by_chat(&self, id: i64) -> Option<&'a IdentifiedFile> {
        self.all.iter().find(|c| c.chat_id == id)
    }

    /// Candidates a written path names: exact, then case-insensitive, then
    /// by suffix either way (`paymentService.js` for
    /// `backend/src/payment/paymentService.js`, or a path with an extra
    /// leading directory such as the repository name). The flag is set when
    /// a suffix fits several different paths.
    fn by_path(&self, written: &str) -> (Vec<&'a IdentifiedFile>, bool) {
        let p = normalize_path(written);
        if p.is_empty() {
            return (vec![], false);
        }
        let exact: Vec<_> = self.all.iter().filter(|c| c.path == p).collect();
        if !exact.is_empty() {
            return (exact, false);
        }
        let lower = p.to_lowercase();
        let ci: Vec<_> = self
            .all
            .iter()
            .filter(|c| c.path.to_lowercase() == lower)
            .collect();
        if !ci.is_empty() {
            return (ci, false);
        }
        let suffix: Vec<_> = self
            .all
            .iter()
            .filter(|c| {
                let cp = c.path.to_lowercase();
                cp.ends_with(&format!("/{lower}")) || lower.ends_with(&format!("/{cp}"))
            })
            .collect();
        let ambiguous = suffix.iter().any(|c| c.path != suffix[0].path);
        (suffix, ambiguous)
    }

    /// Resolves a reference made of a path and/or a chat id.
    fn resolve(
        &self,
        path: Option<&str>,
        chat_id: Option<i64>,
    ) -> (Option<IdentifiedFile>, Vec<Flagged>) {
        let flag = |mention: String, reason: &str| Flagged {
            mention,
            reason: reason.into(),
        };
        if let Some(p) = path.filter(|p| !p.trim().is_empty()) {
            let (hits, ambiguous) = self.by_path(p);
            let by_id = chat_id.and_then(|id| hits.iter().find(|c| c.chat_id == id));
            match (by_id, hits.first()) {
                (Some(c), _) => return (Some((*c).clone()), vec![]),
                (None, Some(c)) if !ambiguous => return (Some((*c).clone()), vec![]),
                (None, Some(_)) => return (None, vec![flag(p.trim().into(), "ambiguous-path")]),
                (None, None) => {}
            }
            if let Some(c) = chat_id.and_then(|id| self.by_chat(id)) {
                return (
                    Some(c.clone()),
                    vec![flag(p.trim().into(), "path-not-candidate")],
                );
            }
            return (None, vec![flag(p.trim().into(), "unknown-path")]);
        }
        match chat_id {
            Some(id) => match self.by_chat(id) {
                Some(c) => (Some(c.clone()), vec![]),
                None => (None, vec![flag(format!("chat {id}"), "unknown-chat-id")]),
            },
            None => (None, vec![]),
        }
    }
}

fn normalize_path(p: &str) -> String {
    let t = p
        .trim()
        .trim_matches(|c: char| matches!(c, '`' | '"' | '\'' | '*'))
        .replace('\\', "/");
    let mut t = t.as_str();
    while let Some(rest) = t.strip_prefix("./") {
        t = rest;
    }
    t.trim_start_matches('/').to_string()
}

/// Collects references in order, each file once, flags once each.
#[derive(Default)]
struct Collector {
    files: Vec<IdentifiedFile>,
    flagged: Vec<Flagged>,
}

impl Collector {
    fn add(&mut self, (file, flagged): (Option<IdentifiedFile>, Vec<Flagged>)) {
        if let Some(f) = file {
            if !self.files.iter().any(|x| x.chat_id == f.chat_id) {
                self.files.push(f);
            }
        }
        for f in flagged {
            if !self.flagged.contains(&f) {
                self.flagged.push(f);
            }
        }
    }
}

// ---- JSON answers ----

/// JSON values in a text: the whole text, else every balanced `{...}` or
/// `[...]` that parses, in order (fenced blocks included, since the fence
/// is outside the brackets).
fn json_values(text: &str) -> Vec<Value> {
    let t = text.trim();
    if let Ok(v) = serde_json::from_str::<Value>(t) {
        return vec![v];
    }
    let b = t.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut attempts = 0;
    while i < b.len() && attempts < 64 {
        if b[i] == b'{' || b[i] == b'[' {
            attempts += 1;
            if let Some(end) = matching_close(b, i) {
                if let Ok(v) = serde_json::from_str::<Value>(&t[i..=end]) {
                    out.push(v);
                    i = end + 1;
                    continue;
                }
            }
        }
        i += 1;
    }
    out
}

/// Index of the bracket closing the one at `start`, skipping strings.
fn matching_close(b: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0i32;
    let mut in_str = false;
    let mut esc = false;
    for (i, &c) in b.iter().enumerate().skip(start) {
        if in_str {
            match (esc, c) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_str = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

fn key_norm(k: &str) -> String {
    k.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

fn field<'v>(o: &'v serde_json::Map<String, Value>, names: &[&str]) -> Option<&'v Value> {
    o.iter()
        .find(|(k, _)| names.contains(&key_norm(k).as_str()))
        .map(|(_, v)| v)
}

const PATH_KEYS: &[&str] = &["path", "filepath", "file", "filename", "name"];
const CHAT_KEYS: &[&str] = &["chatid", "chat", "id"];
const FILES_KEYS: &[&str] = &[
    "identifiedfiles",
    "files",
    "relevantfiles",
    "selectedfiles",
    "selected",
    "results",
];
const ANSWER_KEYS: &[&str] = &["answer", "directanswer"];

fn as_chat_id(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s
            .trim()
            .trim_start_matches(|c: char| !c.is_ascii_digit())
            .parse()
            .ok(),
        _ => None,
    }
}

/// One JSON item: an object with a path and/or chat id, a path string, or
/// a chat id number.
fn json_item(v: &Value, set: &Candidates, out: &mut Collector) -> bool {
    match v {
        Value::Object(o) => {
            let path = field(o, PATH_KEYS).and_then(|p| p.as_str());
            let chat = field(o, CHAT_KEYS).and_then(as_chat_id);
            if path.is_none() && chat.is_none() {
                return false;
            }
            out.add(set.resolve(path, chat));
            true
        }
        Value::String(s) => {
            out.add(set.resolve(Some(s), None));
            true
        }
        Value::Number(_) => {
            out.add(set.resolve(None, as_chat_id(v)));
            true
        }
        _ => false,
    }
}

fn from_json(v: &Value, set: &Candidates) -> Option<FileRefs> {
    let mut out = Collector::default();
    let answer = match v {
        Value::Array(items) => {
            let mut any = false;
            for i in items {
                any |= json_item(i, set, &mut out);
            }
            if !any && !items.is_empty() {
                return None;
            }
            None
        }
        Value::Object(o) => {
            let files = field(o, FILES_KEYS);
            let answer = field(o, ANSWER_KEYS);
            match files {
                Some(Value::Array(items)) => {
                    for i in items {
                        json_item(i, set, &mut out);
                    }
                }
                Some(_) | None => {
                    // A single file object, or an object with an answer only.
                    if !json_item(v, set, &mut out) && answer.is_none() {
                        return None;
                    }
                }
            }
            answer
                .and_then(|a| a.as_str())
                .map(str::trim)
                .and_then(|a| {
                    let lower = a.to_ascii_lowercase();
                    (!a.is_empty() && !matches!(lower.as_str(), "null" | "none" | "n/a"))
                        .then(|| a.to_string())
                })
        }
        _ => return None,
    };
    Some(FileRefs {
        files: out.files,
        flagged: out.flagged,
        answer,
        shape: AnswerShape::Json,
    })
}

// ---- text answers ----

/// Characters that end a path-like token in prose, lists and tables.
fn is_separator(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '|' | '('
                | ')'
                | '['
                | ']'
                | '<'
                | '>'
                | ','
                | ';'
                | '"'
                | '\''
                | '`'
                | '*'
                | '{'
                | '}'
        )
}

/// File extensions a bare name (no `/`) must have to count as a path.
const FILE_EXTENSIONS: &[&str] = &[
    "js",
    "jsx",
    "ts",
    "tsx",
    "mjs",
    "cjs",
    "py",
    "rs",
    "go",
    "java",
    "kt",
    "rb",
    "php",
    "c",
    "h",
    "cc",
    "cpp",
    "hpp",
    "cs",
    "swift",
    "m",
    "scala",
    "md",
    "rst",
    "txt",
    "json",
    "yaml",
    "yml",
    "toml",
    "ini",
    "cfg",
    "conf",
    "env",
    "lock",
    "css",
    "scss",
    "sass",
    "less",
    "html",
    "htm",
    "vue",
    "svelte",
    "sh",
    "bash",
    "zsh",
    "ps1",
    "sql",
    "xml",
    "gradle",
    "proto",
    "graphql",
    "dockerfile",
    "mk",
];

/// Whether a token reads as a file path: it has a `/` (and is not a URL),
/// or it is a name with a known file extension. `Node.js`-style product
/// names (capitalised stem, `.js`) are not paths.
fn path_like(tok: &str) -> bool {
    if !tok.chars().any(|c| c.is_alphabetic()) || tok.contains("://") {
        return false;
    }
    if tok.contains('/') {
        return tok.len() > 2 && !tok.starts_with("//");
    }
    let Some((stem, ext)) = tok.rsplit_once('.') else {
        return false;
    };
    if stem.is_empty() || !FILE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()) {
        return false;
    }
    let product = ext.eq_ignore_ascii_case("js")
        && stem.chars().next().is_some_and(|c| c.is_uppercase())
        && stem.chars().all(|c| c.is_alphanumeric());
    !product
}

/// Path-like tokens of a line, trailing sentence punctuation removed.
fn path_tokens(line: &str) -> Vec<&str> {
    line.split(is_separator)
        .map(|t| {
            t.trim_end_matches(['.', ':', '!', '?'])
                .trim_start_matches(':')
        })
        .filter(|t| path_like(t))
        .collect()
}

/// Chat ids written in a line: a number after the word "chat" (`chat 42`,
/// `chat_id: 42`, `Chat ID 42`, `chat:42`), a table cell holding only a
/// number, or a line that is only numbers (`42, 29`).
fn chat_ids(line: &str) -> Vec<i64> {
    let mut out = Vec::new();
    let lower = line.to_lowercase();
    let mut from = 0;
    while let Some(i) = lower[from..].find("chat") {
        let after = from + i + 4;
        let rest = &lower[after..];
        let gap: String = rest
            .chars()
            .take_while(|c| !c.is_ascii_digit())
            .take(12)
            .collect();
        if gap
            .chars()
            .all(|c| matches!(c, ' ' | '_' | '-' | ':' | '#' | '=' | '*' | 'i' | 'd' | '`'))
        {
            let digits: String = rest[gap.len()..]
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            if let Ok(n) = digits.parse() {
                out.push(n);
            }
        }
        from = after;
    }
    if line.contains('|') {
        for cell in line.split('|') {
            if let Ok(n) = cell.trim().trim_matches('*').parse::<i64>() {
                out.push(n);
            }
        }
    }
    let bare = line.trim().trim_start_matches(['-', '*', '+', '>']).trim();
    if !bare.is_empty()
        && bare
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, ',' | ' ' | ';'))
    {
        out.extend(
            bare.split([',', ' ', ';'])
                .filter_map(|n| n.trim().parse::<i64>().ok()),
        );
    }
    let mut seen = Vec::new();
    out.retain(|n| {
        let new = !seen.contains(n);
        seen.push(*n);
        new
    });
    out
}

fn from_text(answer: &str, set: &Candidates) -> FileRefs {
    let mut out = Collector::default();
    for line in answer.lines() {
        let ids = chat_ids(line);
        let mut used_ids = Vec::new();
        for tok in path_tokens(line) {
            let (hits, _) = set.by_path(tok);
            if hits.is_empty() {
                // A path the model made up or mistyped, unless it is only
                // a piece of a candidate path already written in full.
                if !set
                    .all
                    .iter()
                    .any(|c| c.path.contains(tok) && line.contains(&c.path))
                {
                    out.add((
                        None,
                        vec![Flagged {
                            mention: tok.to_string(),
                            reason: "unknown-path".into(),
                        }],
                    ));
                }
                continue;
            }
            let id = ids
                .iter()
                .copied()
                .find(|id| hits.iter().any(|c| c.chat_id == *id));
            used_ids.extend(id);
            out.add(set.resolve(Some(tok), id));
        }
        for id in ids {
            if !used_ids.contains(&id) {
                out.add(set.resolve(None, Some(id)));
            }
        }
    }
    let text = answer.trim();
    FileRefs {
        files: out.files,
        flagged: out.flagged,
        answer: (!text.is_empty()).then(|| text.to_string()),
        shape: AnswerShape::Text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cands() -> Vec<IdentifiedFile> {
        [
            ("backend/src/payment/paymentService.js", 42),
            ("backend/src/auth/authService.js", 37),
            ("frontend/src/styles/main.css", 29),
            ("README.md", 106),
        ]
        .iter()
        .map(|(p, c)| IdentifiedFile {
            path: p.to_string(),
            chat_id: *c,
        })
        .collect()
    }

    fn ids(r: &FileRefs) -> Vec<i64> {
        r.files.iter().map(|f| f.chat_id).collect()
    }

    #[test]
    fn query_is_taken_from_fences_labels_or_the_first_line() {
        assert_eq!(extract_query("payment OR stripe"), "payment OR stripe");
        assert_eq!(
            extract_query("Here you go:\n```\nlang:js \"webhook signature\"\n```\nThis finds..."),
            "lang:js \"webhook signature\""
        );
        assert_eq!(
            extract_query("I would search for this.\n**Query:** `auth OR login`"),
            "auth OR login"
        );
        assert_eq!(extract_query("- `payment`\n"), "payment");
        assert_eq!(extract_query("  \n\n"), "");
    }

    #[test]
    fn bare_and_fenced_json_are_read() {
        let r = parse_file_refs(
            r#"{"answer": null, "identifiedFiles": [{"path": "backend/src/auth/authService.js", "chat_id": 37}]}"#,
            &cands(),
        );
        assert_eq!(
            (ids(&r), r.shape, r.answer.clone()),
            (vec![37], AnswerShape::Json, None)
        );
        let r = parse_file_refs(
            "Sure! Here are the files:\n```json\n{\"answer\": \"Stripe handles it.\", \"files\": [{\"file_path\": \"README.md\", \"chatId\": \"106\"}, {\"path\": \"frontend/src/styles/main.css\"}]}\n```\nHope this helps.",
            &cands(),
        );
        assert_eq!(ids(&r), vec![106, 29]);
        assert_eq!(r.answer.as_deref(), Some("Stripe handles it."));
    }

    #[test]
    fn json_arrays_of_paths_or_ids_are_read() {
        assert_eq!(ids(&parse_file_refs("[42, 29]", &cands())), vec![42, 29]);
        assert_eq!(
            ids(&parse_file_refs(
                r#"["README.md", "paymentService.js"]"#,
                &cands()
            )),
            vec![106, 42]
        );
    }

    #[test]
    fn markdown_lists_and_tables_are_read() {
        let list = "The most relevant files:\n\n1. **backend/src/payment/paymentService.js** (chat 42) - creates charges\n2. `backend/src/auth/authService.js` — Chat ID: 37\n";
        assert_eq!(ids(&parse_file_refs(list, &cands())), vec![42, 37]);
        let table = "| Path | Chat ID | Why |\n|---|---|---|\n| frontend/src/styles/main.css | 29 | styles |\n| README.md | 106 | overview |\n";
        assert_eq!(ids(&parse_file_refs(table, &cands())), vec![29, 106]);
    }

    #[test]
    fn prose_with_basenames_and_chat_ids_is_read() {
        let prose = "Payments are created in paymentService.js. For login, see chat 37.";
        let r = parse_file_refs(prose, &cands());
        assert_eq!(ids(&r), vec![42, 37]);
        assert_eq!(r.shape, AnswerShape::Text);
        assert_eq!(r.answer.as_deref(), Some(prose));
    }

    #[test]
    fn nonsense_yields_no_files_and_keeps_the_text() {
        let r = parse_file_refs(
            "Bananas are yellow; Node.js is fun, e.g. on Mondays.",
            &cands(),
        );
        assert!(r.files.is_empty());
        assert!(r.flagged.is_empty(), "{:?}", r.flagged);
        assert_eq!(
            r.answer.as_deref(),
            Some("Bananas are yellow; Node.js is fun, e.g. on Mondays.")
        );
        assert!(parse_file_refs("", &cands()).answer.is_none());
    }

    #[test]
    fn references_outside_the_candidates_are_flagged_and_dropped() {
        let r = parse_file_refs(
            r#"{"identifiedFiles": [{"path": "src/made/up.js", "chat_id": 999}, {"path": "wrong/name.js", "chat_id": 42}, {"chat_id": 7}]}"#,
            &cands(),
        );
        assert_eq!(ids(&r), vec![42]);
        let reasons: Vec<&str> = r.flagged.iter().map(|f| f.reason.as_str()).collect();
        assert_eq!(
            reasons,
            ["unknown-path", "path-not-candidate", "unknown-chat-id"]
        );
        let r = parse_file_refs("Look at lib/secret/keys.py and chat 5.", &cands());
        assert!(r.files.is_empty());
        assert_eq!(r.flagged.len(), 2);
    }

    #[test]
    fn the_chat_id_picks_among_candidates_sharing_a_path() {
        let mut c = cands();
        c.push(IdentifiedFile {
            path: "README.md".into(),
            chat_id: 500,
        });
        assert_eq!(ids(&parse_file_refs("README.md (chat 500)", &c)), vec![500]);
        assert_eq!(ids(&parse_file_refs("README.md", &c)), vec![106]);
    }

    #[test]
    fn a_bare_name_fitting_several_paths_needs_its_chat_id() {
        let mut c = cands();
        c.push(IdentifiedFile {
            path: "lib/other/paymentService.js".into(),
            chat_id: 99,
        });
        let r = parse_file_refs("See paymentService.js.", &c);
        assert!(r.files.is_empty());
        assert_eq!(r.flagged[0].reason, "ambiguous-path");
        assert_eq!(
            ids(&parse_file_refs("See paymentService.js (chat 99).", &c)),
            vec![99]
        );
    }

    proptest::proptest! {
        #[test]
        fn any_text_parses_without_panicking_into_candidates_only(
            text in "(?s).{0,400}",
            noise in proptest::collection::vec(
                proptest::sample::select(vec![
                    "{", "}", "[", "]", "\"", "chat ", "chat_id: ", "|", "42", "106", "```json\n",
                    "README.md", "paymentService.js", "backend/src/", "İ", "é", "\n", ":", ".",
                ]),
                0..40,
            ),
        ) {
            let mixed = format!("{text}{}", noise.concat());
            let c = cands();
            let r = parse_file_refs(&mixed, &c);
            for f in &r.files {
                proptest::prop_assert!(c.contains(f));
            }
            let _ = extract_query(&mixed);
        }
    }

    #[test]
    fn each_file_is_listed_once_in_first_mention_order() {
        let r = parse_file_refs(
            "README.md first.\nThen backend/src/payment/paymentService.js, and README.md again (chat 106).",
            &cands(),
        );
        assert_eq!(ids(&r), vec![106, 42]);
    }
}
