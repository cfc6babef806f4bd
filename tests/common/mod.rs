//! Shared test fixtures: the real GitSense sample database (gunzipped into
//! a temp dir and indexed once per test binary), small indexes built by
//! code from model records (a chat-app fixture, and git-like repositories
//! with file texts and tiny / short overviews), the `git` CLI with a fixed
//! identity and date, and readers for checking output (token estimate,
//! YAML front matter).
#![allow(dead_code)]

use gitsense_engine::index::{IndexWriter, SourceInfo};
use gitsense_engine::model::{Chat, CodeBlock, Group, Message};
use gitsense_engine::{Engine, SearchOptions, SearchResults};
use gitsense_import as import;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The repository's root (tests run from the root package and from
/// `crates/cli`).
pub fn repo_root() -> PathBuf {
    let mut dir = Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf();
    while !dir.join("data/gitsense-sample.db.gz").exists() {
        assert!(
            dir.pop(),
            "no data/gitsense-sample.db.gz above {}",
            env!("CARGO_MANIFEST_DIR")
        );
    }
    dir
}

/// The `gitsense-search` binary of this build. Cargo names it for the
/// CLI crate's own tests; the root package's tests find it beside their
/// own executable (`cargo test --workspace` builds it, since the CLI crate
/// has integration tests).
pub fn cli_bin() -> PathBuf {
    if let Some(bin) = option_env!("CARGO_BIN_EXE_gitsense-search") {
        return PathBuf::from(bin);
    }
    let exe = std::env::current_exe().expect("the test's own path");
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .expect("test executables live in target/<profile>/deps")
        .join("gitsense-search");
    assert!(
        bin.exists(),
        "{} is missing: run the tests with `cargo test --workspace` (or `cargo build -p gitsense-cli` first)",
        bin.display()
    );
    bin
}

/// A directory that lives as long as the test process.
pub fn temp_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("temp dir"))
        .path()
}

/// The real sample database, gunzipped.
pub fn sample_db() -> PathBuf {
    static DB: OnceLock<PathBuf> = OnceLock::new();
    DB.get_or_init(|| {
        let gz = std::env::var("GITSENSE_SAMPLE_DB_GZ")
            .map(PathBuf::from)
            .unwrap_or_else(|_| repo_root().join("data/gitsense-sample.db.gz"));
        assert!(gz.exists(), "sample database missing: {}", gz.display());
        let out = temp_dir().join("gitsense-sample.db");
        let bytes = std::process::Command::new("gunzip")
            .arg("-c")
            .arg(&gz)
            .output()
            .expect("gunzip runs");
        assert!(bytes.status.success(), "gunzip failed");
        std::fs::write(&out, bytes.stdout).unwrap();
        out
    })
    .clone()
}

/// The sample database's index, built once.
pub fn sample_index() -> PathBuf {
    static IDX: OnceLock<PathBuf> = OnceLock::new();
    IDX.get_or_init(|| {
        let db = sample_db();
        let out = temp_dir().join("sample.gsx");
        import::build_with(&out, "gitsense-db:sample".into(), |w| {
            import::gitsense_db::import(&db, w, &import::no_progress())
        })
        .expect("sample index builds");
        out
    })
    .clone()
}

pub fn sample_engine() -> Engine {
    Engine::open(&sample_index()).expect("sample index opens")
}

pub fn search(e: &Engine, q: &str) -> SearchResults {
    e.search(q, &SearchOptions::default())
        .unwrap_or_else(|err| panic!("query {q:?} failed: {err}"))
}

pub fn search_with(e: &Engine, q: &str, opts: SearchOptions) -> SearchResults {
    e.search(q, &opts)
        .unwrap_or_else(|err| panic!("query {q:?} failed: {err}"))
}

pub fn counts(r: &SearchResults) -> (u64, u64, u64) {
    (
        r.total_counts.chats,
        r.total_counts.messages,
        r.total_counts.code_blocks,
    )
}

pub fn as_json(r: &SearchResults) -> Value {
    serde_json::to_value(r).unwrap()
}

/// Code that a chat app would hold: two conversations with code blocks in
/// several languages (one with a GitSense header), a git-like tree with a
/// branch, and metadata carrying every seed-000 meta key.
pub fn fixture_index(name: &str) -> PathBuf {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let out = temp_dir().join(format!("{name}.gsx"));
    if out.exists() {
        return out;
    }
    let mut w = IndexWriter::create(
        &out,
        SourceInfo {
            description: format!("fixture:{name}"),
            built_at: Some("2025-01-01T00:00:00Z".into()),
        },
    )
    .unwrap();
    let all_meta = json!({
        "file_path": "src/app/main.rs", "git_repo": "acme/widgets", "assignees": ["ana", "bo"],
        "status": "open", "priority": "high", "due_date": "2025-02-01", "tags": ["x", "y"],
        "summary": "sum", "description": "desc", "tiny_overview": "tiny", "short_overview": "short",
        "long_overview": "long", "purpose": "Runs the widget app."
    });
    w.add_group(&Group {
        id: 1,
        name: "acme/widgets".into(),
    })
    .unwrap();
    let chat = |id: i64, parent: i64, t: &str, name: &str, meta: Value| Chat {
        id,
        parent_id: parent,
        chat_type: t.into(),
        uuid: Some(format!("uuid-{id}")),
        name: name.into(),
        owner: Some("tester".into()),
        group_id: if t.starts_with("git-") { Some(1) } else { None },
        created_at: Some(format!("2025-01-0{}T00:00:00Z", (id % 9) + 1)),
        modified_at: Some(format!("2025-01-0{}T00:00:00Z", (id % 9) + 1)),
        meta,
    };
    w.add_chat(&chat(1, 0, "git-repo-owner", "acme", json!({})))
        .unwrap();
    w.add_chat(&chat(2, 1, "git-repo", "widgets", json!({})))
        .unwrap();
    w.add_chat(&chat(
        3,
        2,
        "git-ref",
        "develop",
        json!({"type": "branch", "name": "develop"}),
    ))
    .unwrap();
    w.add_chat(&chat(4, 3, "git-tree", "src", json!({"path": "src"})))
        .unwrap();
    let mut blob_meta = all_meta.clone();
    blob_meta["path"] = json!("src/app/main.rs");
    blob_meta["language"] = json!("rust");
    w.add_chat(&chat(5, 4, "git-blob", "main.rs", blob_meta))
        .unwrap();
    w.add_chat(&chat(
        10,
        0,
        "regular",
        "Widget chat <b>bold</b>",
        all_meta.clone(),
    ))
    .unwrap();
    w.add_chat(&chat(11, 10, "regular", "Forked widget chat", json!({})))
        .unwrap();
    w.add_chat(&chat(20, 0, "notes", "Unrelated notes", json!({})))
        .unwrap();
    let msg = |id: i64, chat: i64, t: &str, role: &str, content: &str, meta: Value| Message {
        id,
        chat_id: chat,
        msg_type: t.into(),
        role: role.into(),
        content: content.into(),
        title: String::new(),
        keywords: String::new(),
        meta,
        created_at: Some(format!("2025-01-{:02}T00:00:00Z", id % 28 + 1)),
        updated_at: Some(format!("2025-01-{:02}T00:00:00Z", id % 28 + 1)),
    };
    w.add_message(&msg(
        50,
        5,
        "git-blob",
        "assistant",
        "fn main() { widget::run(); }",
        Value::Null,
    ))
    .unwrap();
    w.add_message(&msg(51, 5, "tiny-overview::file-content::default", "assistant",
        "Entry point of the widget app.", json!({"file_path": "src/app/main.rs", "purpose": "Entry point", "keywords": ["widget", "entry"]}))).unwrap();
    w.add_message(&msg(
        100,
        10,
        "regular",
        "user",
        "How do I parse JSON in Python? <script>alert(1)</script>",
        all_meta.clone(),
    ))
    .unwrap();
    let py = "Use the json module:\n\n```python\nimport json\ndata = json.loads(text)\n```\n";
    w.add_message(&msg(101, 10, "regular", "assistant", py, Value::Null))
        .unwrap();
    let rs = "```rust\n// Component: Parser\n// Block-UUID: 11111111-2222-4333-8444-555555555555\n// Parent-UUID: N/A\n// Version: 2.3.4\n// Language: Rust\nfn parse_widget(s: &str) -> Widget { todo() }\n```";
    w.add_message(&msg(102, 11, "regular", "assistant", rs, Value::Null))
        .unwrap();
    w.add_message(&msg(
        103,
        20,
        "regular",
        "system",
        "System notes about Widget parsing and json.",
        Value::Null,
    ))
    .unwrap();
    w.add_code_block(&CodeBlock {
        id: 1,
        message_id: 101,
        block_type: "code".into(),
        uuid: "aaaaaaaa-0000-4000-8000-000000000001".into(),
        parent_uuid: None,
        component: None,
        description: None,
        language: Some("py".into()),
        major: None,
        minor: None,
        patch: None,
        header: None,
        content: "import json\ndata = json.loads(text)".into(),
        created_at: Some("2025-01-02T00:00:00Z".into()),
    })
    .unwrap();
    let body = "// Component: Parser\n// Block-UUID: 11111111-2222-4333-8444-555555555555\n// Parent-UUID: N/A\n// Version: 2.3.4\n// Language: Rust\nfn parse_widget(s: &str) -> Widget { todo() }";
    // The header fills the uuid, component and version, as an importer's
    // block gets them.
    let parsed = CodeBlock::from_text(2, 102, body.into(), Some("rust".into()), || {
        unreachable!("the body has a Block-UUID")
    });
    assert_eq!(
        (parsed.major, parsed.minor, parsed.patch),
        (Some(2), Some(3), Some(4))
    );
    w.add_code_block(&CodeBlock {
        description: Some("parses widgets".into()),
        created_at: Some("2025-01-03T00:00:00Z".into()),
        ..parsed
    })
    .unwrap();
    w.add_code_block(&CodeBlock {
        id: 3,
        message_id: 50,
        block_type: "code".into(),
        uuid: "aaaaaaaa-0000-4000-8000-000000000003".into(),
        parent_uuid: None,
        component: None,
        description: None,
        language: Some("rust".into()),
        major: None,
        minor: None,
        patch: None,
        header: None,
        content: "fn main() { widget::run(); }".into(),
        created_at: Some("2025-01-04T00:00:00Z".into()),
    })
    .unwrap();
    let mut full_header = all_meta.clone();
    full_header["Block-UUID"] = json!("bbbbbbbb-0000-4000-8000-000000000004");
    full_header["Version"] = json!("1.0.0");
    w.add_code_block(&CodeBlock {
        id: 4,
        message_id: 100,
        block_type: "code".into(),
        uuid: "bbbbbbbb-0000-4000-8000-000000000004".into(),
        parent_uuid: Some("11111111-2222-4333-8444-555555555555".into()),
        component: Some("Widget".into()),
        description: None,
        language: Some("html".into()),
        major: Some(1),
        minor: Some(0),
        patch: Some(0),
        header: Some(full_header),
        content: "<script>alert('widget')</script>".into(),
        created_at: Some("2025-01-05T00:00:00Z".into()),
    })
    .unwrap();
    w.finish().unwrap();
    out
}

pub fn fixture_engine() -> Engine {
    Engine::open(&fixture_index("fixture")).unwrap()
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
                        keywords: String::new(),
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

/// `path` when it exists, else `None` (the test skips, saying `how` to get
/// it) unless `GITSENSE_REQUIRE_CORPORA` is set, as `./build.sh test` does:
/// then a missing corpus fails the test.
pub fn corpus(path: PathBuf, how: &str) -> Option<PathBuf> {
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var_os("GITSENSE_REQUIRE_CORPORA").is_none(),
        "{} is missing: {how}",
        path.display()
    );
    eprintln!("SKIPPED: {} is missing ({how})", path.display());
    None
}

/// Runs `git` in `dir` as `author` (the committer too) at `date`, without
/// the user's or the system's config; its standard output, trimmed.
pub fn git_as(dir: &Path, author: &str, email: &str, date: &str, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", author)
        .env("GIT_AUTHOR_EMAIL", email)
        .env("GIT_COMMITTER_NAME", author)
        .env("GIT_COMMITTER_EMAIL", email)
        .env("GIT_AUTHOR_DATE", date)
        .env("GIT_COMMITTER_DATE", date)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
