//! Fixtures for integration tests, built by code: the real GitSense sample
//! database imported into an index, and small git-like corpora written
//! through `IndexWriter` (a repository with files, their text, and tiny /
//! short overviews where a test wants them).

#![allow(dead_code)]

use gitsense_search::import;
use gitsense_search::index::IndexWriter;
use gitsense_search::model::{Chat, CodeBlock, Group, Message};
use gitsense_search::Engine;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// The gzipped sample database: `GITSENSE_SAMPLE_DB_GZ`, else
/// `../shared/data/gitsense-sample.db.gz` beside the repository.
pub fn sample_gz() -> PathBuf {
    std::env::var_os("GITSENSE_SAMPLE_DB_GZ")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/gitsense-sample.db.gz")
        })
}

/// Gunzips the sample database into `dir` and builds an index from it.
pub fn sample_index(dir: &TempDir) -> PathBuf {
    let gz = sample_gz();
    assert!(gz.is_file(), "sample database missing at {}", gz.display());
    let db = dir.path().join("sample.db");
    let out = std::process::Command::new("gunzip")
        .arg("-c")
        .arg(&gz)
        .output()
        .expect("gunzip runs");
    assert!(out.status.success(), "gunzip failed");
    std::fs::write(&db, out.stdout).unwrap();
    let index = dir.path().join("sample.gsx");
    import::build_with(&index, "gitsense-db:sample".into(), |w| {
        import::gitsense_db::import(&db, w, &import::no_progress())
    })
    .expect("sample index builds");
    index
}

pub fn sample_engine() -> (TempDir, Engine) {
    let dir = TempDir::new().unwrap();
    let index = sample_index(&dir);
    let engine = Engine::open(&index).unwrap();
    (dir, engine)
}

/// One file of a fixture repository.
#[derive(Clone)]
pub struct File {
    pub path: String,
    pub language: String,
    pub text: String,
    /// Purpose and keywords of its tiny overview, if it has one.
    pub tiny: Option<(String, Vec<String>)>,
    /// Text of its short overview, if it has one.
    pub short: Option<String>,
    /// Code blocks inside the file-text message: (language, content).
    pub code: Vec<(String, String)>,
}

impl File {
    pub fn new(path: &str, language: &str, text: &str) -> File {
        File {
            path: path.into(),
            language: language.into(),
            text: text.into(),
            tiny: None,
            short: None,
            code: vec![],
        }
    }

    pub fn tiny(mut self, purpose: &str, keywords: &[&str]) -> File {
        self.tiny = Some((
            purpose.into(),
            keywords.iter().map(|k| k.to_string()).collect(),
        ));
        self
    }

    pub fn short(mut self, text: &str) -> File {
        self.short = Some(text.into());
        self
    }

    pub fn code(mut self, language: &str, content: &str) -> File {
        self.code.push((language.into(), content.into()));
        self
    }
}

/// Chat id of the `i`-th file's git-blob chat in a fixture.
pub fn blob_chat_id(i: usize) -> i64 {
    100 + i as i64
}

/// An analyzer message as GitSense writes it: banner, path and chat id,
/// summary, keywords, then the analyzer's restated instructions.
fn analysis_text(
    kind: &str,
    path: &str,
    chat_id: i64,
    summary: &str,
    keywords: &[String],
) -> String {
    format!(
        "\n# GitSense Chat Analysis\n## {kind}\n\n*   **Path:** {path}\n*   **Chat ID:** {chat_id}\n\n## Summary\n{summary}\n\n## Keywords and Categories\n*   **Keywords:** {}\n\n### Custom Metadata Definitions\n*   `purpose` (string): A single, concise sentence describing the file's primary role.\n",
        keywords.join(", ")
    )
}

/// Builds a git-like index at `out`: repository `acme/shop`, branch
/// `main`, one git-blob chat per file (ids from [`blob_chat_id`]) with the
/// file text, and tiny / short overview messages where the file has them.
/// `revision_salt` changes the corpus (and so its revision) without
/// changing the files.
pub fn git_fixture(out: &Path, files: &[File], revision_salt: &str) {
    import::build_with(
        out,
        format!("fixture:{revision_salt}"),
        |w: &mut IndexWriter| {
            w.add_group(&Group {
                id: 1,
                name: "acme/shop".into(),
            })?;
            let chat = |id: i64, parent: i64, kind: &str, name: &str, meta: Value| Chat {
                id,
                parent_id: parent,
                chat_type: kind.into(),
                uuid: None,
                name: name.into(),
                owner: Some("tester".into()),
                group_id: Some(1),
                created_at: Some("2025-01-01T00:00:00Z".into()),
                modified_at: Some("2025-01-01T00:00:00Z".into()),
                meta,
            };
            w.add_chat(&chat(1, 0, "git-repos", "Repositories", json!({})))?;
            w.add_chat(&chat(
                2,
                1,
                "git-repo",
                "shop",
                json!({"salt": revision_salt}),
            ))?;
            w.add_chat(&chat(
                3,
                2,
                "git-ref",
                "main",
                json!({"type": "branch", "name": "main"}),
            ))?;
            let mut msg_id = 1000;
            let mut block_id = 1;
            for (i, f) in files.iter().enumerate() {
                let chat_id = blob_chat_id(i);
                let name = f.path.rsplit('/').next().unwrap_or(&f.path);
                w.add_chat(&chat(
                chat_id,
                3,
                "git-blob",
                name,
                json!({"type": "git-blob", "path": f.path, "name": name, "language": f.language}),
            ))?;
                let mut message = |msg_type: &str, role: &str, content: String, meta: Value| {
                    msg_id += 1;
                    Message {
                        id: msg_id,
                        chat_id,
                        msg_type: msg_type.into(),
                        role: role.into(),
                        content,
                        title: String::new(),
                        meta,
                        created_at: Some("2025-01-02T00:00:00Z".into()),
                        updated_at: Some("2025-01-02T00:00:00Z".into()),
                    }
                };
                let text_msg = message("git-blob", "user", f.text.clone(), Value::Null);
                let text_msg_id = text_msg.id;
                w.add_message(&text_msg)?;
                for (lang, content) in &f.code {
                    w.add_code_block(&CodeBlock {
                        id: block_id,
                        message_id: text_msg_id,
                        block_type: "code".into(),
                        uuid: format!("00000000-0000-4000-8000-{block_id:012}"),
                        parent_uuid: None,
                        component: Some(name.into()),
                        description: None,
                        language: Some(lang.clone()),
                        major: Some(1),
                        minor: Some(0),
                        patch: Some(0),
                        header: None,
                        content: content.clone(),
                        created_at: None,
                    })?;
                    block_id += 1;
                }
                if let Some((purpose, keywords)) = &f.tiny {
                    let mut meta = Map::new();
                    meta.insert("file_path".into(), json!(f.path));
                    meta.insert("chat_id".into(), json!(chat_id));
                    meta.insert("purpose".into(), json!(purpose));
                    meta.insert("keywords".into(), json!(keywords));
                    let text = analysis_text(
                        "tiny-overview::file-content::default",
                        &f.path,
                        chat_id,
                        purpose,
                        keywords,
                    );
                    w.add_message(&message(
                        "tiny-overview::file-content::default",
                        "assistant",
                        text,
                        Value::Object(meta),
                    ))?;
                }
                if let Some(short) = &f.short {
                    let text = analysis_text(
                        "short-overview::file-content::default",
                        &f.path,
                        chat_id,
                        short,
                        &[],
                    );
                    w.add_message(&message(
                        "short-overview::file-content::default",
                        "assistant",
                        text,
                        json!({"file_path": f.path, "chat_id": chat_id}),
                    ))?;
                }
            }
            Ok(import::ImportReport::default())
        },
    )
    .expect("fixture index builds");
}

/// `n` source files that all mention `widget`, each with a tiny overview.
pub fn widget_files(n: usize) -> Vec<File> {
    (0..n)
        .map(|i| {
            File::new(
                &format!("src/widgets/widget_{i:03}.rs"),
                "rust",
                &format!("// widget {i}\nfn render_widget_{i}() {{}}\n"),
            )
            .tiny(
                &format!("Renders widget number {i} on the dashboard."),
                &["widget", "dashboard", "render"],
            )
        })
        .collect()
}

/// Estimated tokens (chars / 4, rounded up), computed independently of the
/// crate's own estimate.
pub fn tokens(s: &str) -> u64 {
    (s.chars().count() as u64).div_ceil(4)
}

/// Reads the YAML front matter the markdown format writes: `key: value`
/// lines, a `results:` block list of `- key: value` maps, and JSON flow
/// values (which YAML reads the same way). Fails on anything else, so a
/// change that breaks the YAML breaks the tests.
pub fn front_matter(doc: &str) -> Result<Map<String, Value>, String> {
    let rest = doc.strip_prefix("---\n").ok_or("does not start with ---")?;
    let end = rest.find("\n---\n").ok_or("front matter is not closed")?;
    let mut out = Map::new();
    let mut list: Option<(String, Vec<Value>)> = None;
    for line in rest[..end].lines() {
        if let Some(item) = line.strip_prefix("  - ") {
            let (k, v) = key_value(item)?;
            let (_, items) = list.as_mut().ok_or("list item outside a list")?;
            let mut m = Map::new();
            m.insert(k, v);
            items.push(Value::Object(m));
        } else if let Some(cont) = line.strip_prefix("    ") {
            let (k, v) = key_value(cont)?;
            let (_, items) = list.as_mut().ok_or("continuation outside a list")?;
            items
                .last_mut()
                .and_then(Value::as_object_mut)
                .ok_or("continuation before an item")?
                .insert(k, v);
        } else if line.starts_with(' ') {
            return Err(format!("unexpected indentation: {line:?}"));
        } else {
            if let Some((k, items)) = list.take() {
                out.insert(k, Value::Array(items));
            }
            if let Some(k) = line.strip_suffix(':') {
                list = Some((k.to_string(), vec![]));
            } else {
                let (k, v) = key_value(line)?;
                out.insert(k, v);
            }
        }
    }
    if let Some((k, items)) = list.take() {
        out.insert(k, Value::Array(items));
    }
    Ok(out)
}

fn key_value(s: &str) -> Result<(String, Value), String> {
    let (k, v) = s
        .split_once(": ")
        .ok_or(format!("no `key: value` in {s:?}"))?;
    if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("bad key {k:?}"));
    }
    let v = v.trim();
    let value = serde_json::from_str(v).or_else(|_| {
        // A plain YAML scalar: no quoting needed only when it cannot be
        // read as anything but a string.
        if v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            Ok(Value::String(v.to_string()))
        } else {
            Err(format!("value {v:?} is not a plain scalar or JSON"))
        }
    })?;
    Ok((k.to_string(), value))
}
