//! The index schema against the browser module's SQLite: its parser is
//! generated without the SQL features in `xtask/sqlite/grammar-omits` (see
//! build.sh), and it must still read the schema of every index the writer
//! makes. A schema entry that needs a left-out feature (a view, a trigger,
//! AUTOINCREMENT, a foreign key, a generated column) would make the index
//! unreadable in the browser; the browser tests cover the SQL queries run.

mod common;

use common::{fixture_index, sample_index};
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

/// What each left-out option forbids in `sqlite_schema` (type, SQL text
/// patterns, lower-case); options that only remove statements forbid
/// nothing here.
fn forbidden(option: &str) -> Option<(&'static [&'static str], &'static [&'static str])> {
    Some(match option {
        "SQLITE_OMIT_VIEW" => (&["view"], &[]),
        "SQLITE_OMIT_TRIGGER" => (&["trigger"], &[]),
        "SQLITE_OMIT_AUTOINCREMENT" => (&[], &["autoincrement"]),
        "SQLITE_OMIT_FOREIGN_KEY" => (&[], &["references", "foreign key"]),
        "SQLITE_OMIT_GENERATED_COLUMNS" => (&[], &["generated always", " as ("]),
        // Statements the schema never holds.
        "SQLITE_OMIT_ALTERTABLE"
        | "SQLITE_OMIT_CTE"
        | "SQLITE_OMIT_REINDEX"
        | "SQLITE_OMIT_RETURNING"
        | "SQLITE_OMIT_UPSERT"
        | "SQLITE_OMIT_WINDOWFUNC" => (&[], &[]),
        _ => return None,
    })
}

fn omits() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("xtask/sqlite/grammar-omits");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

fn check(index: &Path) {
    let conn = Connection::open_with_flags(index, OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut stmt = conn
        .prepare("SELECT type, name, coalesce(sql, '') FROM sqlite_schema")
        .unwrap();
    let entries: Vec<(String, String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(entries.iter().any(|(t, _, _)| t == "table"));
    for option in omits() {
        let (types, patterns) = forbidden(&option).unwrap_or_else(|| {
            panic!("{option} in xtask/sqlite/grammar-omits: say here what it forbids in an index schema")
        });
        for (kind, name, sql) in &entries {
            assert!(
                !types.contains(&kind.as_str()),
                "{}: {kind} {name} needs what {option} leaves out",
                index.display()
            );
            let sql = sql.to_lowercase();
            for p in patterns {
                assert!(
                    !sql.contains(p),
                    "{}: {name} ({sql}) needs what {option} leaves out",
                    index.display()
                );
            }
        }
    }
}

#[test]
fn the_sample_index_schema_needs_no_left_out_sql_feature() {
    check(&sample_index());
}

#[test]
fn a_code_and_chat_index_schema_needs_no_left_out_sql_feature() {
    check(&fixture_index("schema"));
}

#[test]
fn every_left_out_option_is_known_here() {
    let omits = omits();
    assert!(omits.iter().any(|o| o == "SQLITE_OMIT_VIEW"), "{omits:?}");
    for o in &omits {
        assert!(
            forbidden(o).is_some(),
            "{o} is not checked against the schema"
        );
    }
}
