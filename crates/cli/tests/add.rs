//! `gitsense-search add`: sources added to an existing index give the
//! index a build of all of them in one go gives (ids, revision, ranking,
//! counts, results), published copies follow with `--publish`, and a
//! failed add leaves the index as it was.

#[path = "../../../tests/common/mod.rs"]
mod common;
use common::*;
mod run;
use run::{cli, stderr, stdout};
use std::path::{Path, PathBuf};

fn ok(args: &[&str]) -> String {
    let o = cli(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

fn fixture(name: &str) -> String {
    repo_root()
        .join("tests/fixtures/chat-exports")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = temp_dir().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn info(index: &Path) -> serde_json::Value {
    serde_json::from_str(&ok(&["info", index.to_str().unwrap(), "--json"])).unwrap()
}

/// Queries that reach the sample database, both exports, and both at once;
/// with filters, phrases, code and a negation.
const QUERIES: [&str; 10] = [
    "payment",
    "csv",
    "debounce",
    "rows OR webhook",
    "\"sample.csv\"",
    "lang:rust",
    "lang:javascript setTimeout",
    "index -payment",
    "stripe webhook",
    "whiteboard",
];

/// The JSON results object of every query, paged deep enough to hold
/// every hit.
fn answers(index: &Path) -> Vec<String> {
    QUERIES
        .iter()
        .map(|q| {
            ok(&[
                "search",
                index.to_str().unwrap(),
                q,
                "--format",
                "json",
                "--per-page",
                "100",
            ])
        })
        .collect()
}

fn assert_same_index(a: &Path, b: &Path) {
    let (ia, ib) = (info(a), info(b));
    for key in ["revision", "chats", "messages", "codeBlocks", "source"] {
        assert_eq!(ia[key], ib[key], "{key}: {ia} vs {ib}");
    }
    for (q, (x, y)) in QUERIES.iter().zip(answers(a).iter().zip(answers(b).iter())) {
        assert_eq!(x, y, "results of {q:?} differ");
    }
}

#[test]
fn adding_sources_one_by_one_searches_exactly_like_building_them_together() {
    let dir = scratch("add-equal");
    let db = sample_db();
    let db = db.to_str().unwrap();
    let (gpt, claude) = (
        fixture("chatgpt-conversations.json"),
        fixture("claude-conversations.json"),
    );
    let together = dir.join("together.gsx");
    ok(&[
        "build",
        "--quiet",
        "--gitsense-db",
        db,
        "--chat-export",
        &gpt,
        "--chat-export",
        &claude,
        "--out",
        together.to_str().unwrap(),
    ]);
    let grown = dir.join("grown.gsx");
    let g = grown.to_str().unwrap();
    ok(&["build", "--quiet", "--gitsense-db", db, "--out", g]);
    let before = info(&grown);
    let out = ok(&["add", g, "--quiet", "--chat-export", &gpt]);
    assert!(out.starts_with(&format!("added to {g} in ")), "{out}");
    ok(&["add", g, "--quiet", "--chat-export", &claude]);
    assert_ne!(info(&grown)["revision"], before["revision"]);
    assert_same_index(&together, &grown);
    // The answers are not all empty: each source contributes.
    let all = answers(&grown);
    for (q, want) in [("payment", 46), ("debounce", 2), ("whiteboard", 1)] {
        let i = QUERIES.iter().position(|x| *x == q).unwrap();
        let v: serde_json::Value = serde_json::from_str(&all[i]).unwrap();
        assert_eq!(v["totalCounts"]["messages"], want, "{q}");
    }
}

#[test]
fn add_with_out_keeps_the_index_and_with_publish_republishes_the_result() {
    let dir = scratch("add-publish");
    let base = dir.join("base.gsx");
    let b = base.to_str().unwrap();
    let gpt = fixture("chatgpt-conversations.json");
    ok(&["build", "--quiet", "--chat-export", &gpt, "--out", b]);
    let site = dir.join("site");
    ok(&["publish", "--quiet", b, "--out-dir", site.to_str().unwrap()]);
    let bytes = std::fs::read(&base).unwrap();
    let grown = dir.join("grown.gsx");
    ok(&[
        "add",
        b,
        "--quiet",
        "--chat-export",
        &fixture("claude-conversations.json"),
        "--out",
        grown.to_str().unwrap(),
        "--publish",
        site.to_str().unwrap(),
    ]);
    assert_eq!(
        std::fs::read(&base).unwrap(),
        bytes,
        "--out leaves INDEX alone"
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(site.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["revision"], info(&grown)["revision"]);
    assert_ne!(manifest["revision"], info(&base)["revision"]);
}

#[test]
fn a_failed_add_is_a_structured_error_and_leaves_the_index_as_it_was() {
    let dir = scratch("add-fail");
    let base = dir.join("base.gsx");
    let b = base.to_str().unwrap();
    ok(&[
        "build",
        "--quiet",
        "--chat-export",
        &fixture("claude-conversations.json"),
        "--out",
        b,
    ]);
    let bytes = std::fs::read(&base).unwrap();
    let empty = dir.join("empty.json");
    std::fs::write(
        &empty,
        r#"[{"uuid": "x", "name": "n", "chat_messages": []}]"#,
    )
    .unwrap();
    let missing = dir.join("missing.json");
    let not_index = dir.join("notes.txt");
    std::fs::write(&not_index, "not an index").unwrap();
    let cases: [(&[&str], &str); 4] = [
        (
            &["add", b, "--chat-export", empty.to_str().unwrap()],
            "import.no_messages",
        ),
        (
            &["add", b, "--chat-export", missing.to_str().unwrap()],
            "import.not_found",
        ),
        (
            &[
                "add",
                not_index.to_str().unwrap(),
                "--chat-export",
                &fixture("chatgpt-conversations.json"),
            ],
            "index.not_an_index",
        ),
        (&["add", b, "--chat-export", b], "import.output_is_input"),
    ];
    for (args, code) in cases {
        let o = cli(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(code), "{args:?}: {}", stderr(&o));
        assert_eq!(
            std::fs::read(&base).unwrap(),
            bytes,
            "{args:?} changed the index"
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
