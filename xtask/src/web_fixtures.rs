//! Builds the fixtures the browser tests use (run by `./build.sh test`):
//!
//!   cargo run --release -p xtask --bin web-fixtures -- OUT_DIR SAMPLE_INDEX
//!
//! - `OUT_DIR/hostile.gsx`: a small index whose chat names, messages, code
//!   blocks, metadata and group name are HTML/script injection payloads, for
//!   checking that the demo page renders index content as text.
//! - `OUT_DIR/sample.gsx`: a copy of the sample index.
//! - `OUT_DIR/vocab.gsx`: 3,000 messages of random words, rebuilt with
//!   small FTS leaves (FTS5 `pgsz` 64) so that its FTS index
//!   (`fts_messages_idx`) is as big as a large corpus's, too big to be
//!   shipped hot whole, and
//!   `OUT_DIR/vocab.json`: queries on it, the pages of that FTS index and
//!   of its leaf-end hashes (`fts_leaf_ends`, recorded again for the new
//!   leaves), for checking that lazy mode looks terms up in batched rounds
//!   and does without the hashes when they are not at hand.
//! - `OUT_DIR/ranked.gsx`: 2,400 messages and 800 code blocks of words
//!   from a 300-word vocabulary (a common word matches messages and code
//!   blocks on every page of the index), and `OUT_DIR/ranked.json`:
//!   queries on it and the pages of its ranking records (`message_rank`,
//!   `code_rank`), for checking that lazy mode ranks without a round trip
//!   of its own when those ship with the hot pages.
//! - `OUT_DIR/large-docs/`: a made-up documentation site in Markdown
//!   (400 pages of sections, prose and Python code blocks, words drawn
//!   with a heavy head: a few occur in every section, many once), and
//!   `OUT_DIR/large.json`: queries on it. Built into an index with the
//!   CLI's docs importer by `./build.sh`, whose module split profiles a
//!   visit on it: a corpus the size of a real site takes paths (doclists
//!   over many leaves, deep b-trees, long rows) the small indexes do not.
//! - `OUT_DIR/prose-docs.gsx`: a small documentation-site index (its
//!   source a `docs:` one: pages as chats, sections as messages), where
//!   words are searched with their inflections and all-terms matching is
//!   judged per page.
//! - `OUT_DIR/expected.json`: for a list of queries on the sample index,
//!   on `hostile.gsx` and on `prose-docs.gsx`, the results object JSON the native engine produces
//!   (what `gitsense-search search --format json` prints); the wasm tests
//!   check the browser engine answers with the same bytes.

use gitsense_engine::index::{IndexWriter, SourceInfo};
use gitsense_engine::model::{Chat, CodeBlock, Group, Message};
use gitsense_engine::Engine;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Payloads that execute if any of them reaches the DOM as HTML.
const PAYLOADS: &[&str] = &[
    r#"<img src=x onerror="window.__xss='img'">"#,
    r#"<script>window.__xss='script'</script>"#,
    r#"<svg onload="window.__xss='svg'"></svg>"#,
    r#"<a href="javascript:window.__xss='link'">click</a>"#,
    r#""><iframe srcdoc="<script>parent.__xss='iframe'</script>">"#,
];

/// A page URL (what documentation results link to) that runs script if a
/// page makes it a link.
const JS_URL: &str = "javascript:window.__xss='url'";

const TIME: &str = "2026-01-02T03:04:05.000Z";

fn chat(id: i64, parent_id: i64, name: &str, meta: serde_json::Value) -> Chat {
    Chat {
        id,
        parent_id,
        chat_type: "regular".into(),
        uuid: Some(format!("00000000-0000-4000-8000-{id:012}")),
        name: name.into(),
        owner: Some(PAYLOADS[0].into()),
        group_id: Some(1),
        created_at: Some(TIME.into()),
        modified_at: Some(TIME.into()),
        meta,
    }
}

fn message(id: i64, chat_id: i64, role: &str, content: String, meta: serde_json::Value) -> Message {
    Message {
        id,
        chat_id,
        msg_type: "regular".into(),
        role: role.into(),
        content,
        title: String::new(),
        keywords: String::new(),
        meta,
        created_at: Some(TIME.into()),
        updated_at: Some(TIME.into()),
    }
}

fn build_hostile(out: &Path) -> gitsense_engine::Result<()> {
    let mut w = IndexWriter::create(
        out,
        SourceInfo {
            description: "fixture:hostile".into(),
            built_at: Some(TIME.into()),
        },
    )?;
    w.add_group(&Group {
        id: 1,
        name: format!("evil/{}", PAYLOADS[2]),
    })?;
    w.add_chat(&chat(
        1,
        0,
        &format!("hostile root {}", PAYLOADS[0]),
        json!({}),
    ))?;
    w.add_chat(&chat(
        2,
        1,
        &format!("hostile payload chat {}", PAYLOADS[1]),
        json!({ "git_repo": PAYLOADS[3], "status": PAYLOADS[4], "url": JS_URL }),
    ))?;
    w.add_message(&message(
        1,
        2,
        "user",
        format!(
            "Is this hostile payload rendered as text? {} {} {}",
            PAYLOADS[0], PAYLOADS[1], PAYLOADS[2]
        ),
        json!({}),
    ))?;
    w.add_message(&message(
        2,
        2,
        "assistant",
        format!(
            "The hostile payload stays text: {} {}\n\n```html\n{}\n```",
            PAYLOADS[3], PAYLOADS[4], PAYLOADS[0]
        ),
        json!({
            "file_path": format!("src/{}.js", PAYLOADS[0]),
            "purpose": format!("hostile purpose {}", PAYLOADS[1]),
            "tags": [PAYLOADS[2]],
            "url": JS_URL,
        }),
    ))?;
    let code = format!(
        "<!--\nComponent: Hostile {}\nBlock-UUID: 11111111-2222-4333-8444-555555555555\nVersion: 1.2.3\n-->\n<div>hostile payload</div>\n{}\n{}",
        PAYLOADS[1], PAYLOADS[0], PAYLOADS[2]
    );
    w.add_code_block(&CodeBlock {
        id: 1,
        message_id: 2,
        block_type: "code".into(),
        uuid: "11111111-2222-4333-8444-555555555555".into(),
        parent_uuid: None,
        component: Some(format!("Hostile {}", PAYLOADS[1])),
        description: Some(PAYLOADS[3].into()),
        language: Some(r#"html"><img src=x onerror="window.__xss='lang'">"#.into()),
        major: Some(1),
        minor: Some(2),
        patch: Some(3),
        header: gitsense_engine::model::parse_code_header(&code).map(serde_json::Value::Object),
        content: code,
        created_at: Some(TIME.into()),
    })?;
    w.finish()?;
    Ok(())
}

/// See the module docs: sections (heading, text) of pages (title).
const PROSE_PAGES: &[(&str, &[(&str, &str)])] = &[
    (
        "threading",
        &[
            (
                "threading",
                "Every class below wraps a primitive of the low-level module.",
            ),
            (
                "Thread objects",
                "The Thread class represents an activity run in a separate thread.",
            ),
            (
                "Lock objects",
                "A primitive lock is in one of two states, locked or unlocked.",
            ),
        ],
    ),
    (
        "Pools",
        &[
            (
                "Opening",
                "Each connection is opened lazily, when a request first needs it.",
            ),
            (
                "Retries",
                "When the server goes away, the pool keeps connecting again.",
            ),
            (
                "connections",
                "The list of open sockets of the pool, newest first.",
            ),
        ],
    ),
];

fn build_prose_docs(out: &Path) -> gitsense_engine::Result<()> {
    let mut w = IndexWriter::create(
        out,
        SourceInfo {
            description: format!("{}fixture", gitsense_engine::index::DOCS_SOURCE_PREFIX),
            built_at: Some(TIME.into()),
        },
    )?;
    let mut id = 1;
    for (page, (title, sections)) in PROSE_PAGES.iter().enumerate() {
        let chat_id = page as i64 + 1;
        let mut c = chat(chat_id, 0, title, json!({ "kind": "doc-page" }));
        c.chat_type = "git-blob".into();
        w.add_chat(&c)?;
        for (heading, text) in *sections {
            let mut m = message(
                id,
                chat_id,
                "user",
                text.to_string(),
                json!({ "title": heading }),
            );
            m.msg_type = "git-blob".into();
            m.title = heading.to_string();
            w.add_message(&m)?;
            id += 1;
        }
    }
    w.finish()?;
    Ok(())
}

/// Queries whose results the browser must reproduce byte for byte.
const QUERIES: &[(&str, &str, &str)] = &[
    ("sample", "payment", "{}"),
    ("sample", "payment", r#"{"perPage":3,"page":2}"#),
    ("sample", "stripe lang:js", "{}"),
    ("sample", "\"form validation\"", r#"{"highlight":"raw"}"#),
    ("sample", "in:chats payment", "{}"),
    (
        "sample",
        "auth* -test msg-type:git-blob",
        r#"{"includeContent":false}"#,
    ),
    ("sample", "msg-type:regular", r#"{"perPage":5}"#),
    ("sample", "payment OR checkout", r#"{"maxTokens":400}"#),
    // Facets: built-in fields counted by SQLite, analyzer metadata
    // (arrays value by value) counted from the JSON by the engine.
    (
        "sample",
        "profile:meta-insights insight-field:keywords:array,git-path msg-type:tiny-overview",
        "{}",
    ),
    (
        "sample",
        "payment",
        r#"{"facets":["chat-type","lang","repo","role","msg-type","purpose:string"]}"#,
    ),
    // option:regex on few rows: chat names narrowed by a word, and a small
    // index. (Tests of more rows depend on the time budget of the
    // unoptimised test build: tests/regex_search.rs covers them natively.)
    ("sample", r#"option:regex "^README" in:chats"#, "{}"),
    ("hostile", r#"option:regex "<script[^>]*>""#, "{}"),
    // meta-search: analyzer metadata compared by the engine's gs_meta.
    (
        "sample",
        "profile:meta-search analyzer:tiny-overview meta:keywords:array=payvault||express",
        "{}",
    ),
    (
        "sample",
        "session meta:file_extension:string=js -analyzer:tiny-overview",
        r#"{"facets":["msg-type"]}"#,
    ),
    // git-nav: a branch's top level, sorted by name, the default page.
    (
        "sample",
        "git-repository:Tutorial/secure-payments git-branch:main",
        "{}",
    ),
    ("hostile", "hostile payload", "{}"),
    ("hostile", "script", r#"{"highlight":"none"}"#),
    // Inflections (`connection`, `connecting`) and all terms per page.
    ("docs", "connections", "{}"),
    ("docs", "lock class", "{}"),
];

/// See the module docs: `vocab.gsx` and `vocab.json`.
/// A deterministic xorshift generator seeded with `x`.
fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

fn sqlite_error(e: rusqlite::Error) -> gitsense_engine::Error {
    gitsense_engine::Error::new("internal.sqlite", e.to_string())
}

/// The pages of tables or indexes `names` (SQLite's `dbstat`).
fn pages_of(conn: &rusqlite::Connection, names: &[&str]) -> gitsense_engine::Result<Vec<i64>> {
    let marks = vec!["?"; names.len()].join(", ");
    let mut s = conn
        .prepare(&format!(
            "SELECT pageno FROM dbstat WHERE name IN ({marks})"
        ))
        .map_err(sqlite_error)?;
    let pages = s
        .query_map(rusqlite::params_from_iter(names), |r| r.get(0))
        .map_err(sqlite_error)?;
    pages
        .collect::<rusqlite::Result<Vec<i64>>>()
        .map_err(sqlite_error)
}

/// Writes a fixture's facts (queries, pages) as JSON for the browser tests.
fn write_facts(path: &Path, facts: serde_json::Value) -> gitsense_engine::Result<()> {
    let text = serde_json::to_string_pretty(&facts).expect("JSON values serialize");
    std::fs::write(path, text).map_err(|e| gitsense_engine::Error::io("writing fixture facts", e))
}

fn build_vocab(out: &Path, facts: &Path) -> gitsense_engine::Result<()> {
    let mut rand = xorshift(0x9E37_79B9_7F4A_7C15);
    let mut word = || {
        let r = rand();
        let len = 5 + (r % 6) as usize;
        (0..len)
            .map(|i| (b'a' + ((r >> (8 + 5 * i)) % 26) as u8) as char)
            .collect::<String>()
    };
    let mut w = IndexWriter::create(
        out,
        SourceInfo {
            description: "fixture:vocab".into(),
            built_at: Some(TIME.into()),
        },
    )?;
    w.add_group(&Group {
        id: 1,
        name: "vocab".into(),
    })?;
    let mut texts = Vec::new();
    for c in 1..=40i64 {
        w.add_chat(&chat(c, 0, &format!("vocab chat {c}"), json!({})))?;
    }
    for id in 1..=3_000i64 {
        let text: Vec<String> = (0..80).map(|_| word()).collect();
        let text = text.join(" ");
        let role = if id % 2 == 0 { "assistant" } else { "user" };
        w.add_message(&message(id, 1 + id % 40, role, text.clone(), json!({})))?;
        texts.push(text);
    }
    w.finish()?;
    let words = |m: usize| -> Vec<&str> { texts[m].split(' ').collect() };
    let queries = vec![
        words(16)[3].to_string(),
        words(2_999)[40].to_string(),
        format!("{} {}", words(1_234)[7], words(1_234)[70]),
        format!("{} OR {}", words(10)[0], words(2_500)[79]),
        format!("{}*", &words(777)[5][..3]),
        "zzzzzzzzz".to_string(),
        // A typo: a word with a letter dropped, searched as the words
        // nearest it.
        {
            let w = words(321)
                .into_iter()
                .find(|w| w.len() >= 8)
                .unwrap_or("abcdefgh");
            format!("{}{}", &w[..3], &w[4..])
        },
    ];
    let conn = rusqlite::Connection::open(out).map_err(sqlite_error)?;
    conn.execute_batch(
        "INSERT INTO fts_messages(fts_messages, rank) VALUES('pgsz', 64);
         INSERT INTO fts_messages(fts_messages) VALUES('rebuild');
         INSERT INTO fts_messages(fts_messages) VALUES('optimize');
         DELETE FROM fts_leaf_ends WHERE fts = 'fts_messages';",
    )
    .map_err(sqlite_error)?;
    // The new leaves' last terms, as the writer records them.
    gitsense_engine::index::doclists::leaf_ends(&conn, "fts_messages")?;
    // Changed after its build: sealed again as a build seals an index, so
    // publish takes it (it refuses files altered after their build).
    use gitsense_engine::index::checksum;
    let revision: String = conn
        .query_row(
            "SELECT value FROM index_meta WHERE key = 'revision'",
            [],
            |r| r.get(0),
        )
        .map_err(sqlite_error)?;
    conn.execute(
        "UPDATE index_meta SET value = ?1 WHERE key = ?2",
        [
            checksum::placeholder(&revision),
            checksum::CHECKSUM_KEY.to_string(),
        ],
    )
    .map_err(sqlite_error)?;
    conn.execute_batch("VACUUM;").map_err(sqlite_error)?;
    let idx_pages = pages_of(&conn, &["fts_messages_idx"])?;
    let leaf_ends_pages = pages_of(&conn, &["fts_leaf_ends"])?;
    drop(conn);
    checksum::seal(out, &revision)?;
    write_facts(
        facts,
        json!({ "queries": queries, "idxPages": idx_pages, "leafEndsPages": leaf_ends_pages }),
    )
}

fn build_ranked(out: &Path, facts: &Path) -> gitsense_engine::Result<()> {
    let mut rand = xorshift(0x2545_F491_4F6C_DD1D);
    let vocab: Vec<String> = (0..300)
        .map(|_| {
            let r = rand();
            (0..6)
                .map(|i| (b'a' + ((r >> (8 + 5 * i)) % 26) as u8) as char)
                .collect()
        })
        .collect();
    let mut text = |n: usize| -> String {
        (0..n)
            .map(|_| vocab[(rand() % vocab.len() as u64) as usize].as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut w = IndexWriter::create(
        out,
        SourceInfo {
            description: "fixture:ranked".into(),
            built_at: Some(TIME.into()),
        },
    )?;
    w.add_group(&Group {
        id: 1,
        name: "ranked".into(),
    })?;
    for c in 1..=30i64 {
        w.add_chat(&chat(c, 0, &format!("ranked chat {c}"), json!({})))?;
    }
    for id in 1..=2_400i64 {
        let role = if id % 2 == 0 { "assistant" } else { "user" };
        w.add_message(&message(id, 1 + id % 30, role, text(50), json!({})))?;
        if id % 3 == 0 {
            w.add_code_block(&CodeBlock {
                id: id / 3,
                message_id: id,
                block_type: "code".into(),
                uuid: format!("00000000-0000-4000-9000-{id:012}"),
                parent_uuid: None,
                component: None,
                description: None,
                language: Some("text".into()),
                major: None,
                minor: None,
                patch: None,
                header: None,
                content: text(20),
                created_at: Some(TIME.into()),
            })?;
        }
    }
    w.finish()?;
    let queries = vec![
        vocab[0].clone(),
        format!("{} {}", vocab[1], vocab[2]),
        format!("{} OR {}", vocab[3], vocab[4]),
        format!("{}*", &vocab[5][..4]),
    ];
    let conn = rusqlite::Connection::open(out).map_err(sqlite_error)?;
    let ranking_pages = pages_of(&conn, &["message_rank", "code_rank"])?;
    write_facts(
        facts,
        json!({ "queries": queries, "rankingPages": ranking_pages }),
    )
}

/// See the module docs: `large-docs/` and `large.json`.
fn build_large_docs(dir: &Path, facts: &Path) -> gitsense_engine::Result<()> {
    let io = |e| gitsense_engine::Error::io("writing the large docs fixture", e);
    let mut rand = xorshift(0x9E37_79B9_7F4A_7C15);
    let vocab: Vec<String> = (0..4_000)
        .map(|_| {
            let r = rand();
            let len = 3 + (r % 8) as usize;
            (0..len)
                .map(|i| (b'a' + ((r >> (8 + 5 * i)) % 26) as u8) as char)
                .collect()
        })
        .collect();
    const COMMON: &[&str] = &[
        "the", "of", "and", "to", "a", "in", "is", "for", "returns", "value",
    ];
    // Heavy head: word i with probability ~ u^3.
    let word = |rand: &mut dyn FnMut() -> u64| -> String {
        let r = rand();
        if r % 4 == 0 {
            return COMMON[(r >> 8) as usize % COMMON.len()].to_string();
        }
        let u = (r >> 11) as f64 / (1u64 << 53) as f64;
        vocab[((u * u * u) * vocab.len() as f64) as usize].clone()
    };
    let api = |page: usize, k: usize| {
        format!(
            "mod{page}.{}_{}",
            vocab[(page * 7 + k) % 997],
            vocab[(k * 13) % 1_009]
        )
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    for page in 0..400usize {
        let mut md = format!("# {} {} module\n\n", word(&mut rand), word(&mut rand));
        for section in 0..(8 + page % 8) {
            md.push_str(&format!(
                "## {} `{}`\n\n",
                word(&mut rand),
                api(page, section)
            ));
            let words = 80 + (rand() % 220) as usize;
            let prose: Vec<String> = (0..words).map(|_| word(&mut rand)).collect();
            md.push_str(&prose.join(" "));
            md.push_str("\n\n");
            if rand() % 3 != 0 {
                md.push_str("```python\n");
                for line in 0..(2 + rand() % 8) {
                    md.push_str(&format!(
                        "result_{line} = {}({}, {})\n",
                        api(page, section + line as usize),
                        word(&mut rand),
                        rand() % 1000
                    ));
                }
                md.push_str("```\n\n");
            }
        }
        std::fs::write(dir.join(format!("page{page:03}.md")), md).map_err(io)?;
    }
    let queries = vec![
        // First, as the profile's first visit's first query: two words
        // each in about a quarter of the sections, seldom together, as a
        // real site's first query is. Judged per page, the sections
        // holding one word are ranked down among those holding both, so
        // the hundreds kept come out of order and their sort takes its
        // paths for large unsorted input (words sharing their sections
        // leave them in order).
        format!("{} {}", vocab[20], vocab[30]),
        "the".to_string(),
        "the value".to_string(),
        // A rare word beside a common one: only the pages of the rare
        // word's sections are scored.
        format!("{} value", vocab[3_000]),
        format!("{} {}", vocab[0], vocab[1]),
        format!("\"{} {}\"", COMMON[0], vocab[2]),
        api(5, 1),
        // A long dotted name: dozens of code-block trigrams, so dozens of
        // doclist pages in one warm-up round.
        format!("{}.{}.handle_{}", api(5, 1), api(7, 3), vocab[11]),
        format!("{}*", &vocab[3][..2]),
        format!("in:code-blocks {}", api(12, 2)),
        format!("{} OR {}", vocab[3_999], vocab[3_998]),
        format!("returns -{}", vocab[4]),
        // English words with their inflections (a doubled consonant, a
        // `y` plural), as readers type them.
        "formatting running libraries".to_string(),
    ];
    write_facts(facts, json!({ "queries": queries }))
}

fn run(out: &Path, sample: &Path) -> gitsense_engine::Result<()> {
    std::fs::create_dir_all(out)
        .map_err(|e| gitsense_engine::Error::io("creating the fixture dir", e))?;
    let hostile = out.join("hostile.gsx");
    build_hostile(&hostile)?;
    std::fs::copy(sample, out.join("sample.gsx"))
        .map_err(|e| gitsense_engine::Error::io("copying the sample index", e))?;
    build_vocab(&out.join("vocab.gsx"), &out.join("vocab.json"))?;
    build_ranked(&out.join("ranked.gsx"), &out.join("ranked.json"))?;
    build_large_docs(&out.join("large-docs"), &out.join("large.json"))?;
    let docs = out.join("prose-docs.gsx");
    build_prose_docs(&docs)?;
    let mut expected = Vec::new();
    for (index, query, options) in QUERIES {
        let path: PathBuf = match *index {
            "sample" => sample.into(),
            "docs" => docs.clone(),
            _ => hostile.clone(),
        };
        let engine = Engine::open(&path)?;
        expected.push(json!({
            "index": index,
            "query": query,
            "options": options,
            "json": engine.search_json(query, options)?,
        }));
    }
    let text = serde_json::to_string_pretty(&expected).expect("JSON values serialize");
    std::fs::write(out.join("expected.json"), text)
        .map_err(|e| gitsense_engine::Error::io("writing expected.json", e))?;
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [out, sample] = args.as_slice() else {
        eprintln!("usage: web-fixtures OUT_DIR SAMPLE_INDEX");
        return ExitCode::from(2);
    };
    match run(Path::new(out), Path::new(sample)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
