//! Importer for a GitSense Chat database (the app's own SQLite file).
//!
//! Carries over groups, live chats (hierarchy and meta), searchable
//! messages (with `meta.extracted_metadata` as their metadata) and code
//! blocks (header parsed, versions as numbers). Deleted rows and messages
//! whose `meta.searchable` is false are left out.

use super::ImportReport;
use gitsense_engine::error::{Error, Result};
use gitsense_engine::index::IndexWriter;
use gitsense_engine::model::{Chat, CodeBlock, Group, Message};
use indicatif::ProgressBar;
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde_json::Value;
use std::path::Path;

fn src_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::new(
        "import.bad_source",
        format!("cannot read GitSense database: {e}"),
    )
    .with_location(path.display().to_string())
}

/// Imports `db` into `w`.
pub fn import(db: &Path, w: &mut IndexWriter, progress: &ProgressBar) -> Result<ImportReport> {
    if !db.is_file() {
        return Err(
            Error::new("import.not_found", "no such file").with_location(db.display().to_string())
        );
    }
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| src_err(db, e))?;
    for t in ["chats", "messages", "groups"] {
        let found: Option<i64> = conn
            .query_row(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?1",
                [t],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| src_err(db, e))?;
        if found.is_none() {
            return Err(src_err(
                db,
                format!("no '{t}' table: not a GitSense Chat database"),
            ));
        }
    }
    let has_code_blocks: bool = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='code_blocks'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map_err(|e| src_err(db, e))?
        > 0;
    let mut report = ImportReport::default();
    let total: i64 = conn
        .query_row(
            "SELECT (SELECT count(*) FROM chats) + (SELECT count(*) FROM messages)",
            [],
            |r| r.get(0),
        )
        .map_err(|e| src_err(db, e))?;
    progress.set_length(total as u64);

    let mut s = conn
        .prepare("SELECT id, name FROM groups WHERE deleted = 0 ORDER BY id")
        .map_err(|e| src_err(db, e))?;
    let groups = s
        .query_map([], |r| {
            Ok(Group {
                id: r.get(0)?,
                name: r.get(1)?,
            })
        })
        .map_err(|e| src_err(db, e))?;
    for g in groups {
        w.add_group(&g.map_err(|e| src_err(db, e))?)?;
    }

    let mut bad_meta = 0usize;
    let mut repaired = Repaired::default();
    let mut s = conn
        .prepare(
            "SELECT id, parent_id, type, uuid, name, owner, group_id, created_at, modified_at, meta
             FROM chats WHERE deleted = 0 ORDER BY id",
        )
        .map_err(|e| src_err(db, e))?;
    let mut rows = s.query([]).map_err(|e| src_err(db, e))?;
    while let Some(r) = rows.next().map_err(|e| src_err(db, e))? {
        let id: i64 = r.get(0).map_err(|e| src_err(db, e))?;
        let mut text = |i: usize| repaired.text(r, i, "chats", id);
        let meta = parse_meta(text(9), &mut bad_meta);
        let chat = Chat {
            id,
            parent_id: r
                .get::<_, Option<i64>>(1)
                .map_err(|e| src_err(db, e))?
                .unwrap_or(0),
            chat_type: text(2).unwrap_or_default(),
            uuid: text(3),
            name: text(4).unwrap_or_default(),
            owner: text(5),
            group_id: r.get(6).map_err(|e| src_err(db, e))?,
            created_at: text_of(r, 7),
            modified_at: text_of(r, 8),
            meta,
        };
        w.add_chat(&chat)?;
        progress.inc(1);
    }
    drop(rows);

    let mut skipped_unsearchable = 0usize;
    let mut s = conn
        .prepare(
            "SELECT m.id, m.chat_id, m.type, m.role, m.message, m.meta, m.created_at, m.updated_at
             FROM messages m JOIN chats c ON c.id = m.chat_id
             WHERE m.deleted = 0 AND c.deleted = 0 ORDER BY m.id",
        )
        .map_err(|e| src_err(db, e))?;
    let mut rows = s.query([]).map_err(|e| src_err(db, e))?;
    let mut kept = std::collections::HashSet::new();
    while let Some(r) = rows.next().map_err(|e| src_err(db, e))? {
        progress.inc(1);
        let id: i64 = r.get(0).map_err(|e| src_err(db, e))?;
        let mut text = |i: usize| repaired.text(r, i, "messages", id);
        let meta = parse_meta(text(5), &mut bad_meta);
        if matches!(meta.get("searchable"), Some(Value::Bool(false)))
            || matches!(meta.get("searchable"), Some(Value::String(s)) if s == "false")
            || matches!(meta.get("searchable"), Some(Value::Number(n)) if n.as_i64() == Some(0))
        {
            skipped_unsearchable += 1;
            continue;
        }
        let extracted = match meta.get("extracted_metadata") {
            Some(v @ Value::Object(_)) => v.clone(),
            _ => Value::Null,
        };
        kept.insert(id);
        let msg_type = text(2).unwrap_or_default();
        let role = text(3).unwrap_or_default();
        let content = text(4).unwrap_or_default();
        w.add_message(&Message {
            id,
            chat_id: r.get(1).map_err(|e| src_err(db, e))?,
            msg_type,
            role,
            content,
            title: String::new(),
            keywords: String::new(),
            meta: extracted,
            created_at: text_of(r, 6),
            updated_at: text_of(r, 7),
        })?;
    }
    drop(rows);

    if has_code_blocks {
        let mut s = conn
            .prepare(
                "SELECT id, message_id, type, uuid, parent_uuid, component, description, language,
                        major, minor, patch, header, content, created_at
                 FROM code_blocks ORDER BY id",
            )
            .map_err(|e| src_err(db, e))?;
        let mut rows = s.query([]).map_err(|e| src_err(db, e))?;
        while let Some(r) = rows.next().map_err(|e| src_err(db, e))? {
            let message_id: i64 = r.get(1).map_err(|e| src_err(db, e))?;
            if !kept.contains(&message_id) {
                continue;
            }
            let id: i64 = r.get(0).map_err(|e| src_err(db, e))?;
            let mut text = |i: usize| repaired.text(r, i, "code_blocks", id);
            let parent = text(4);
            let header = text(11)
                .and_then(|h| serde_json::from_str::<Value>(&h).ok())
                .filter(|v| v.is_object());
            w.add_code_block(&CodeBlock {
                id,
                message_id,
                block_type: text(2).unwrap_or_else(|| "code".into()),
                uuid: text(3).unwrap_or_default(),
                parent_uuid: parent.filter(|p| !p.eq_ignore_ascii_case("n/a") && !p.is_empty()),
                component: text(5),
                description: text(6),
                language: text(7),
                major: r.get(8).map_err(|e| src_err(db, e))?,
                minor: r.get(9).map_err(|e| src_err(db, e))?,
                patch: r.get(10).map_err(|e| src_err(db, e))?,
                header,
                content: text(12).unwrap_or_default(),
                created_at: text_of(r, 13),
            })?;
        }
    }
    if skipped_unsearchable > 0 {
        report.warnings.push(format!(
            "left out {skipped_unsearchable} messages marked not searchable"
        ));
    }
    if let Some(first) = &repaired.first {
        report.warnings.push(format!(
            "replaced invalid UTF-8 in {} values with U+FFFD (the first: {first})",
            repaired.count
        ));
    }
    if bad_meta > 0 {
        report.warnings.push(format!(
            "{bad_meta} rows had meta that is not valid JSON; it was ignored"
        ));
    }
    progress.finish_and_clear();
    Ok(report)
}

/// Text values that were not valid UTF-8 (a BLOB, or text written
/// without checking), read with U+FFFD in place of the bad bytes.
#[derive(Default)]
struct Repaired {
    count: usize,
    /// `table.column of row id`, for the warning.
    first: Option<String>,
}

impl Repaired {
    /// Column `i` as text: bytes of any storage class, repaired when they
    /// are not UTF-8, so one bad value never fails the import.
    fn text(&mut self, r: &rusqlite::Row, i: usize, table: &str, id: i64) -> Option<String> {
        use rusqlite::types::ValueRef;
        match r.get_ref(i).ok()? {
            ValueRef::Text(b) | ValueRef::Blob(b) => match std::str::from_utf8(b) {
                Ok(s) => Some(s.to_string()),
                Err(_) => {
                    self.count += 1;
                    self.first.get_or_insert_with(|| {
                        let column = r.as_ref().column_name(i).unwrap_or("?");
                        format!("{table}.{column} of row {id}")
                    });
                    Some(String::from_utf8_lossy(b).into_owned())
                }
            },
            ValueRef::Integer(n) => Some(n.to_string()),
            ValueRef::Real(f) => Some(f.to_string()),
            ValueRef::Null => None,
        }
    }
}

/// Reads a column that may hold text or a number as text.
fn text_of(r: &rusqlite::Row, i: usize) -> Option<String> {
    match r.get_ref(i).ok()? {
        rusqlite::types::ValueRef::Text(t) => Some(String::from_utf8_lossy(t).into_owned()),
        rusqlite::types::ValueRef::Integer(n) => Some(n.to_string()),
        rusqlite::types::ValueRef::Real(f) => Some(f.to_string()),
        _ => None,
    }
}

fn parse_meta(s: Option<String>, bad: &mut usize) -> Value {
    match s.as_deref().map(str::trim) {
        None | Some("") => Value::Null,
        Some(t) => match serde_json::from_str::<Value>(t) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => Value::Null,
            Err(_) => {
                *bad += 1;
                Value::Null
            }
        },
    }
}
