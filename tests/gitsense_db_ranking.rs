//! Ranking changes made for documentation (per-column scores, keywords,
//! exact names) leave GitSense databases as GitSense ranks them: their
//! messages have no titles or keywords, so counts are unchanged and the
//! order is FTS5's plain bm25 over the message text.

use gitsense_engine::{Engine, Highlight, SearchOptions};
use gitsense_import as import;
use std::path::PathBuf;

fn sample_db() -> Option<(tempfile::TempDir, PathBuf)> {
    let gz = std::env::var("GITSENSE_SAMPLE_DB_GZ")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/gitsense-sample.db.gz")
        });
    if !gz.exists() {
        eprintln!("SKIPPED: no sample database at {}", gz.display());
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sample.db");
    let out = std::process::Command::new("gunzip")
        .arg("-c")
        .arg(&gz)
        .output()
        .expect("gunzip runs");
    assert!(out.status.success());
    std::fs::write(&db, out.stdout).unwrap();
    Some((dir, db))
}

#[test]
fn gitsense_counts_and_bm25_order_are_unchanged() {
    let Some((dir, db)) = sample_db() else { return };
    let out = dir.path().join("sample.gsx");
    import::build_with(&out, "gitsense-db:sample".into(), |w| {
        import::gitsense_db::import(&db, w, &import::no_progress())
    })
    .unwrap();
    let engine = Engine::open(&out).unwrap();
    let opts = SearchOptions {
        highlight: Highlight::None,
        ..SearchOptions::default()
    };
    let counts = |q: &str| {
        let r = engine.search(q, &opts).unwrap();
        (r.total_counts.chats, r.total_counts.messages)
    };
    assert_eq!(counts("payment"), (1, 46));
    assert_eq!(counts("authentication").1, 88);
    assert_eq!(counts("\"secure payments\""), (1, 28));
    assert_eq!(counts("in:chats README").0, 5);

    let r = engine
        .search(
            "payment in:messages",
            &SearchOptions {
                per_page: Some(100),
                ..opts.clone()
            },
        )
        .unwrap();
    let ours: Vec<i64> = r.results.messages.iter().map(|m| m.messages_id).collect();
    let mut s = engine
        .connection()
        .prepare(
            "SELECT rowid FROM fts_messages WHERE fts_messages MATCH '\"payment\"'
             ORDER BY bm25(fts_messages), rowid",
        )
        .unwrap();
    let plain: Vec<i64> = s
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(ours, plain);
}
