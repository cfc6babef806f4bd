//! Writable indexes (`gitsense_engine::index::live`): a run of adds,
//! updates and removes leaves an index that searches exactly like a build
//! of the same records, and a bad write names its record and field and
//! writes nothing.

use gitsense_engine::index::live::{self, WriteOp};
use gitsense_engine::index::{IndexWriter, SourceInfo};
use gitsense_engine::model::{Chat, CodeBlock, Message};
use gitsense_engine::{Engine, SearchOptions};
use rusqlite::Connection;
use serde_json::{json, Value};

fn writable() -> Engine {
    let conn = Connection::open_in_memory().unwrap();
    live::create(&conn, "local:test", "2026-01-01T00:00:00Z").unwrap();
    Engine::from_connection(conn).unwrap()
}

fn write(e: &mut Engine, op: WriteOp, v: Value) -> live::WriteSummary {
    e.write(op, &v.to_string()).unwrap()
}

fn chat(id: i64, parent: i64, name: &str) -> Value {
    json!({ "id": id, "parent_id": parent, "name": name, "created_at": "2026-01-02T00:00:00Z" })
}

fn message(id: i64, chat: i64, role: &str, content: &str) -> Value {
    json!({ "id": id, "chat_id": chat, "role": role, "content": content,
            "created_at": format!("2026-01-02T00:00:{:02}Z", id % 60) })
}

/// A conversation's turns: questions, answers with fenced code, enough
/// vocabulary overlap for ranking to matter.
fn conversation(chat: i64, first_id: i64, topic: &str, turns: usize) -> Vec<Value> {
    (0..turns)
        .map(|t| {
            let id = first_id + t as i64;
            if t % 2 == 0 {
                message(id, chat, "user", &format!("How do I {topic} with retries, step {t}?"))
            } else {
                message(
                    id,
                    chat,
                    "assistant",
                    &format!(
                        "Use a loop for {topic}; backoff doubles each time.\n\n```python\ndef {}_{t}():\n    return retry({topic:?})\n```\nThen log the payment id.",
                        topic.replace(' ', "_")
                    ),
                )
            }
        })
        .collect()
}

/// What the records become in a build: every search-visible field the
/// same as what the writable index holds now (code block ids and uuids
/// read from it, in message order).
fn rebuild(e: &Engine, dir: &std::path::Path) -> Engine {
    let conn = e.connection();
    let path = dir.join("rebuilt.gsx");
    let mut w = IndexWriter::create(
        &path,
        SourceInfo {
            description: "local:test".into(),
            built_at: Some("2026-01-01T00:00:00Z".into()),
        },
    )
    .unwrap();
    let mut s = conn
        .prepare("SELECT c.id, c.parent_id, c.name, c.created_at FROM chats c ORDER BY id")
        .unwrap();
    let chats: Vec<(i64, i64, String, Option<String>)> = s
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (id, parent_id, name, created_at) in chats {
        w.add_chat(&Chat {
            id,
            parent_id,
            chat_type: "regular".into(),
            uuid: None,
            name,
            owner: None,
            group_id: None,
            created_at,
            modified_at: None,
            meta: json!({}),
        })
        .unwrap();
    }
    let mut s = conn
        .prepare(
            "SELECT m.id, m.chat_id, m.role, t.body, m.created_at FROM messages m
             JOIN message_text t ON t.id = m.id ORDER BY m.id",
        )
        .unwrap();
    let messages: Vec<(i64, i64, String, String, Option<String>)> = s
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (id, chat_id, role, content, created_at) in messages {
        let blocks: Vec<(i64, String)> = conn
            .prepare("SELECT id, uuid FROM code_blocks WHERE message_id = ?1 ORDER BY id")
            .unwrap()
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let fenced = gitsense_engine::fenced::fenced_blocks(&content);
        assert_eq!(
            blocks.len(),
            fenced.len(),
            "message {id}: one code block per fenced block"
        );
        for ((bid, uuid), f) in blocks.into_iter().zip(fenced) {
            w.add_code_block(&CodeBlock::from_text(
                bid,
                id,
                f.content,
                f.language,
                || uuid,
            ))
            .unwrap();
        }
        w.add_message(&Message {
            id,
            chat_id,
            msg_type: "regular".into(),
            role,
            content,
            title: String::new(),
            keywords: String::new(),
            meta: json!({}),
            created_at,
            updated_at: None,
        })
        .unwrap();
    }
    w.finish().unwrap();
    Engine::open(&path).unwrap()
}

/// What a search shows: the counts, pagination and results (not the
/// revision-bound cursor, nor timings).
fn shown(e: &Engine, q: &str) -> Value {
    let r = e
        .search(
            q,
            &SearchOptions {
                per_page: Some(50),
                ..Default::default()
            },
        )
        .unwrap();
    let v = serde_json::to_value(&r).unwrap();
    json!({ "counts": v["total_counts"], "pagination": v["pagination"], "results": v["results"] })
}

const QUERIES: [&str; 8] = [
    "retry",
    "payment retries",
    "backoff",
    "lang:python retry",
    "role:user step",
    "refund OR invoice",
    "\"log the payment\"",
    "Billing",
];

#[test]
fn writes_leave_an_index_that_searches_like_a_build_of_the_same_records() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = writable();
    write(
        &mut e,
        WriteOp::Add,
        json!({
            "chats": [chat(1, 0, "Billing"), chat(2, 1, "Refunds"), chat(3, 0, "Invoices")],
            "messages": conversation(1, 1, "payment", 20),
        }),
    );
    write(
        &mut e,
        WriteOp::Add,
        json!({ "messages": conversation(2, 100, "refund", 6) }),
    );
    write(
        &mut e,
        WriteOp::Add,
        json!({ "messages": conversation(3, 300, "invoice", 4) }),
    );
    // A renamed parent renames its child's path; a changed message
    // replaces its code blocks.
    write(
        &mut e,
        WriteOp::Update,
        json!({
            "chats": [chat(1, 0, "Billing and payments")],
            "messages": [message(2, 1, "assistant", "Plain text now, no code.")],
        }),
    );
    write(
        &mut e,
        WriteOp::Remove,
        json!({ "messageIds": [4, 5], "chatIds": [3] }),
    );
    // Ids past the first ranking chunk (256 ids to a chunk).
    write(
        &mut e,
        WriteOp::Add,
        json!({ "chats": [chat(4, 2, "Disputes")], "messages": conversation(4, 700, "dispute payment", 5) }),
    );

    let info = e.info().clone();
    assert_eq!((info.chats, info.messages), (3, 20 - 2 + 6 + 5));
    let rebuilt = rebuild(&e, dir.path());
    assert_eq!(rebuilt.info().code_blocks, info.code_blocks);
    for q in QUERIES {
        assert_eq!(shown(&e, q), shown(&rebuilt, q), "query {q:?}");
    }
    let r = e.search("dispute", &SearchOptions::default()).unwrap();
    assert_eq!(
        r.results.messages[0].chat_path.as_deref(),
        Some("Billing and payments -> Refunds -> Disputes"),
        "chat paths follow from parent chats"
    );
    assert_eq!(
        e.search("invoice", &SearchOptions::default())
            .unwrap()
            .total_counts
            .messages,
        0
    );
}

#[test]
fn a_bad_record_names_its_record_and_field_and_writes_nothing() {
    let mut e = writable();
    write(
        &mut e,
        WriteOp::Add,
        json!({ "chats": [chat(1, 0, "First")], "messages": [message(1, 1, "user", "hello there")] }),
    );
    let before = e.info().clone();
    let cases = [
        (
            json!({ "messages": [message(2, 1, "user", "fine"), message(3, 9, "user", "orphan")] }),
            "write.not_found",
            "messages[1].chat_id",
        ),
        (
            json!({ "chats": [chat(5, 0, "x")], "messages": [{ "id": 6, "chat_id": 5, "role": "robot", "content": "x" }] }),
            "write.bad_record",
            "messages[0].role",
        ),
        (
            json!({ "chats": [{ "id": 7 }] }),
            "write.bad_record",
            "chats[0].name",
        ),
        (
            json!({ "chats": [{ "id": "7", "name": "x" }] }),
            "write.bad_record",
            "chats[0].id",
        ),
        (
            json!({ "chats": [chat(8, 0, "y")], "messages": [message(1, 8, "user", "again")] }),
            "write.duplicate_id",
            "messages[0].id",
        ),
        (
            json!({ "messages": [{ "id": 9, "chat_id": 1, "role": "user", "content": "x", "colour": 1 }] }),
            "write.bad_record",
            "messages[0].colour",
        ),
        (
            json!({ "chats": [chat(10, 44, "z")] }),
            "write.not_found",
            "chats[0].parent_id",
        ),
    ];
    for (input, code, location) in cases {
        let err = e.write(WriteOp::Add, &input.to_string()).unwrap_err();
        assert_eq!(
            (err.code.as_str(), err.location.as_deref()),
            (code, Some(location)),
            "{input}"
        );
    }
    let err = e
        .write(
            WriteOp::Update,
            &json!({ "messages": [message(50, 1, "user", "x")] }).to_string(),
        )
        .unwrap_err();
    assert_eq!(
        (err.code.as_str(), err.location.as_deref()),
        ("write.not_found", Some("messages[0].id"))
    );
    assert_eq!(e.info(), &before, "nothing was written");
    for q in ["fine", "again", "x"] {
        assert_eq!(
            e.search(q, &SearchOptions::default())
                .unwrap()
                .total_counts
                .messages,
            0,
            "{q}"
        );
    }
}

#[test]
fn chat_trees_with_a_cycle_or_deeper_than_the_bound_are_refused_and_nothing_is_written() {
    use gitsense_engine::index::MAX_CHAT_DEPTH;
    let mut e = writable();
    write(
        &mut e,
        WriteOp::Add,
        json!({ "chats": [chat(1, 0, "Root"), chat(2, 1, "Child")] }),
    );
    let before = e.info().clone();
    let refused = |e: &mut Engine, op, v: Value| e.write(op, &v.to_string()).unwrap_err().code;
    // Two new chats that are each other's parent.
    assert_eq!(
        refused(
            &mut e,
            WriteOp::Add,
            json!({ "chats": [chat(3, 4, "A"), chat(4, 3, "B")] })
        ),
        "write.chat_cycle"
    );
    // The root made a child of its own child.
    assert_eq!(
        refused(
            &mut e,
            WriteOp::Update,
            json!({ "chats": [chat(1, 2, "Root")] })
        ),
        "write.chat_cycle"
    );
    // One chat more than a path may name.
    let chain = |first: i64, n: usize| -> Vec<Value> {
        (0..n as i64)
            .map(|i| {
                chat(
                    first + i,
                    if i == 0 { 0 } else { first + i - 1 },
                    &format!("c{i}"),
                )
            })
            .collect()
    };
    assert_eq!(
        refused(
            &mut e,
            WriteOp::Add,
            json!({ "chats": chain(100, MAX_CHAT_DEPTH + 1) })
        ),
        "write.chat_too_deep"
    );
    assert_eq!(e.info(), &before, "nothing was written");
    let r = e
        .search("in:chats Child", &SearchOptions::default())
        .unwrap();
    assert_eq!(r.results.chats.len(), 1);
    assert_eq!(
        r.results.chats[0].chat_path.as_deref(),
        Some("Root -> Child")
    );
    // A chain of the bound itself is fine.
    write(
        &mut e,
        WriteOp::Add,
        json!({ "chats": chain(1000, MAX_CHAT_DEPTH) }),
    );
}

#[test]
fn a_build_refuses_a_chat_tree_with_a_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = IndexWriter::create(
        &dir.path().join("cycle.gsx"),
        SourceInfo {
            description: "cycle".into(),
            built_at: Some("2026-01-01T00:00:00Z".into()),
        },
    )
    .unwrap();
    for (id, parent) in [(1, 3), (2, 1), (3, 2), (4, 0)] {
        w.add_chat(&regular_chat(id, parent, &format!("chat {id}")))
            .unwrap();
    }
    let err = w.finish().unwrap_err();
    assert_eq!(err.code, "import.chat_cycle");
}

#[test]
fn a_lone_surrogate_is_replaced_with_a_warning_instead_of_refusing_the_write() {
    let mut e = writable();
    // What `JSON.stringify` makes of a JS string holding a lone surrogate
    // (half an emoji cut off) and of a whole pair.
    let json = r#"{"chats": [{"id": 1, "parent_id": 0, "name": "Cut \ud83d emoji"}],
        "messages": [{"id": 1, "chat_id": 1, "role": "user", "content": "tangerine \ud83d\ude00 and \ude00 alone"}]}"#;
    let summary = e.write(WriteOp::Add, json).unwrap();
    assert_eq!((summary.chats, summary.messages), (1, 1));
    assert_eq!(summary.warnings.len(), 1, "{:?}", summary.warnings);
    assert!(
        summary.warnings[0].contains("replaced 2 lone surrogate"),
        "{:?}",
        summary.warnings
    );
    let r = e.search("tangerine", &SearchOptions::default()).unwrap();
    assert_eq!(r.results.messages.len(), 1);
    let content = r.results.messages[0]
        .messages_content
        .clone()
        .unwrap_or_default();
    assert!(
        content.contains("\u{1F600} and \u{FFFD} alone"),
        "{content}"
    );
    let clean = write(
        &mut e,
        WriteOp::Add,
        json!({ "messages": [message(2, 1, "user", "plain")] }),
    );
    assert!(clean.warnings.is_empty());
}

#[test]
fn a_published_index_refuses_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = published(&dir.path().join("p.gsx"), &[(1, "retry the payment")]);
    let conn = Connection::open(&path).unwrap();
    let mut e = Engine::from_connection(conn).unwrap();
    let err = e.write(WriteOp::Add, r#"{"chats": []}"#).unwrap_err();
    assert_eq!(err.code, "write.read_only");
}

/// A regular chat as a build adds it.
fn regular_chat(id: i64, parent_id: i64, name: &str) -> Chat {
    Chat {
        id,
        parent_id,
        chat_type: "regular".into(),
        uuid: None,
        name: name.into(),
        owner: None,
        group_id: None,
        created_at: None,
        modified_at: None,
        meta: json!({}),
    }
}

/// A published index of chat 1 (`Payments`) with `messages` (id, text).
fn published(path: &std::path::Path, messages: &[(i64, &str)]) -> std::path::PathBuf {
    let mut w = IndexWriter::create(
        path,
        SourceInfo {
            description: "published".into(),
            built_at: Some("2026-01-01T00:00:00Z".into()),
        },
    )
    .unwrap();
    w.add_chat(&regular_chat(1, 0, "Payments")).unwrap();
    for (id, text) in messages {
        w.add_message(&Message {
            id: *id,
            chat_id: 1,
            msg_type: "regular".into(),
            role: "user".into(),
            content: (*text).into(),
            title: String::new(),
            keywords: String::new(),
            meta: json!({}),
            created_at: None,
            updated_at: None,
        })
        .unwrap();
    }
    w.finish().unwrap();
    path.to_path_buf()
}

/// A copy of a published file made writable as an overlay.
fn overlay_of(
    file: &std::path::Path,
    copy: &std::path::Path,
    previous: Option<&Engine>,
) -> (Engine, u64) {
    std::fs::copy(file, copy).unwrap();
    let conn = Connection::open(copy).unwrap();
    let replayed = live::adopt(&conn, "base", previous.map(Engine::connection)).unwrap();
    (Engine::from_connection(conn).unwrap(), replayed)
}

fn ids(e: &Engine, q: &str) -> Vec<i64> {
    let r = e
        .search(
            q,
            &SearchOptions {
                per_page: Some(50),
                ..Default::default()
            },
        )
        .unwrap();
    let mut ids: Vec<i64> = r.results.messages.iter().map(|m| m.messages_id).collect();
    ids.sort_unstable();
    ids
}

#[test]
fn an_overlay_searches_the_published_records_and_the_pages_own_as_one_index_and_survives_a_new_revision(
) {
    let dir = tempfile::tempdir().unwrap();
    let rev1 = published(
        &dir.path().join("rev1.gsx"),
        &[
            (1, "refund the payment"),
            (2, "payment failed twice"),
            (3, "card payment declined"),
        ],
    );
    let (mut e, _) = overlay_of(&rev1, &dir.path().join("overlay1.db"), None);
    write(
        &mut e,
        WriteOp::Add,
        json!({ "messages": [message(10, 1, "user", "my own payment note")] }),
    );
    write(
        &mut e,
        WriteOp::Add,
        json!({ "chats": [chat(20, 1, "Drafts")], "messages": [message(21, 20, "user", "draft about a payment plan")] }),
    );
    write(&mut e, WriteOp::Remove, json!({ "messageIds": [2] }));
    write(
        &mut e,
        WriteOp::Update,
        json!({ "messages": [message(3, 1, "user", "card declined, no longer about money")] }),
    );
    assert_eq!(
        ids(&e, "payment"),
        [1, 10, 21],
        "one ranking and count over both"
    );
    let r = e
        .search(
            "payment",
            &SearchOptions {
                per_page: Some(2),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(
        (r.total_counts.messages, r.pagination.total_pages),
        (3, 2),
        "paginated across both"
    );

    // The publisher's next revision holds the page's message 10 itself
    // (same id) and a new message 4.
    let rev2 = published(
        &dir.path().join("rev2.gsx"),
        &[
            (1, "refund the payment"),
            (2, "payment failed twice"),
            (3, "card payment declined"),
            (4, "payment by bank transfer"),
            (10, "my own payment note"),
        ],
    );
    let (next, replayed) = overlay_of(&rev2, &dir.path().join("overlay2.db"), Some(&e));
    assert_eq!(replayed, 4);
    assert_eq!(
        ids(&next, "payment"),
        [1, 4, 10, 21],
        "the page's writes survive; id 10 is not doubled"
    );
    assert_eq!(ids(&next, "declined"), [3]);
    assert_eq!(next.info().messages, 5);
    // Its log holds the four writes again, for the revision after.
    let (third, replayed) = overlay_of(&rev2, &dir.path().join("overlay3.db"), Some(&next));
    assert_eq!((replayed, ids(&third, "payment")), (4, vec![1, 4, 10, 21]));
}

#[test]
fn a_write_sent_again_under_its_key_is_applied_once() {
    let mut e = writable();
    let input =
        json!({ "chats": [chat(1, 0, "Once")], "messages": [message(1, 1, "user", "only once")] })
            .to_string();
    let first = e.write_once(WriteOp::Add, &input, "tab-a:1").unwrap();
    let again = e.write_once(WriteOp::Add, &input, "tab-a:1").unwrap();
    assert_eq!(first, again, "the first attempt's summary");
    assert_eq!(e.info().messages, 1);
    let other = e.write_once(WriteOp::Add, &input, "tab-b:1").unwrap_err();
    assert_eq!(
        other.code, "write.duplicate_id",
        "another key is another write"
    );
}
