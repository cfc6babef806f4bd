//! Which pages of an index a query reads, traced through the page VFS
//! (`index::pagevfs`, `index::hot`): what lazy loading in the browser relies
//! on. Ranking reads only FTS and filter tables; content tables are read
//! only for the results returned; hot pages cover what every query reads;
//! the b-tree walk predicts the pages a rowid lookup reads.

mod common;

use common::{fixture_index, sample_index};
use gitsense_engine::index::{btree, doclists};
use gitsense_engine::plan::{self, MatchMode};
use gitsense_engine::{profiles, query, SearchOptions};
use gitsense_publish::hot::{hot_pages, page_owners, Traced};
use std::collections::BTreeSet;
use std::path::Path;

/// Payload tables: read only for the returned page of results.
const CONTENT_TABLES: &[&str] = &["chat_details", "message_text", "code_text"];

const QUERIES: &[&str] = &[
    "payment",
    "stripe lang:js",
    "\"form validation\"",
    "auth* -test msg-type:git-blob",
    "in:chats payment",
    "token OR session",
    "in:messages role:user checkout",
];

fn owners(path: &Path) -> std::collections::BTreeMap<u32, String> {
    let t = Traced::open(path).unwrap();
    page_owners(&t.conn).unwrap()
}

fn tables_of(pages: &[u32], owners: &std::collections::BTreeMap<u32, String>) -> BTreeSet<String> {
    pages
        .iter()
        .map(|p| {
            owners
                .get(p)
                .cloned()
                .unwrap_or_else(|| format!("page {p}"))
        })
        .collect()
}

/// A target's `count(*)` and the ids of its first page of 25, by the
/// plan's own statements.
fn count_and_page(conn: &rusqlite::Connection, sql: &plan::TargetSql) -> (i64, Vec<i64>) {
    let n: i64 = conn
        .query_row(
            &sql.count_sql,
            rusqlite::params_from_iter(sql.params.iter()),
            |r| r.get(0),
        )
        .unwrap();
    let params = sql.page_params(25, 0);
    let mut s = conn.prepare(&sql.page_sql).unwrap();
    let ids: Vec<i64> = s
        .query_map(rusqlite::params_from_iter(params.iter()), |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    (n, ids)
}

#[test]
fn ranking_reads_only_fts_and_filter_pages() {
    let path = sample_index();
    let owners = owners(&path);
    for q in QUERIES {
        let (engine, trace) = Traced::engine(&path).unwrap();
        trace.take_pages();
        let parsed = query::parse(q, &profiles::exists).unwrap();
        let p = plan::plan(&parsed, &SearchOptions::default(), MatchMode::AllTerms).unwrap();
        let mut ranked = 0;
        for tp in &p.target_plans {
            let Some(sql) = &tp.sql else { continue };
            let (n, ids) = count_and_page(engine.connection(), sql);
            assert!(ids.len() as i64 <= n);
            ranked += ids.len();
        }
        assert!(ranked > 0 || q.contains("checkout"), "{q} ranks something");
        let tables = tables_of(&trace.take_pages(), &owners);
        for t in CONTENT_TABLES {
            assert!(!tables.contains(*t), "{q}: ranking read {t} ({tables:?})");
        }
    }
}

#[test]
fn content_pages_are_read_only_for_the_returned_results() {
    let path = sample_index();
    let owners = owners(&path);
    for q in QUERIES {
        let (engine, trace) = Traced::engine(&path).unwrap();
        trace.take_pages();
        let r = engine.search(q, &SearchOptions::default()).unwrap();
        let read: BTreeSet<u32> = trace
            .take_pages()
            .into_iter()
            .filter(|p| {
                owners
                    .get(p)
                    .is_some_and(|o| CONTENT_TABLES.contains(&o.as_str()))
            })
            .collect();
        // The pages a lookup of each returned row reads, on its own.
        let lookup = Traced::open(&path).unwrap();
        lookup
            .conn
            .query_row("SELECT count(*) FROM index_meta", [], |_| Ok(()))
            .unwrap();
        lookup.take_pages();
        let v = serde_json::to_value(&r).unwrap();
        let ids = |list: &str, key: &str| -> Vec<i64> {
            v["results"][list]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|i| i[key].as_i64())
                .collect()
        };
        for id in ids("messages", "messages_id") {
            lookup
                .conn
                .query_row("SELECT length(body), length(meta), length(title) FROM message_text WHERE id = ?1", [id], |_| Ok(()))
                .unwrap();
        }
        let mut chats = ids("chats", "chats_id");
        chats.extend(ids("messages", "messages_chat_id"));
        chats.extend(ids("chats", "result_chat_id"));
        chats.extend(ids("messages", "result_chat_id"));
        for id in chats {
            let _ = lookup.conn.query_row(
                "SELECT length(meta), length(chat_path), length(uuid) FROM chat_details WHERE id = ?1",
                [id],
                |_| Ok(()),
            );
        }
        let allowed: BTreeSet<u32> = lookup.take_pages().into_iter().collect();
        let extra: Vec<_> = read.difference(&allowed).collect();
        assert!(
            extra.is_empty(),
            "{q}: content pages read beyond the returned results: {extra:?}"
        );
        assert!(
            r.total_results_returned == 0 || !read.is_empty(),
            "{q}: content was read for results"
        );
    }
}

/// The root page of table or index `name`.
fn root_page(conn: &rusqlite::Connection, name: &str) -> u32 {
    conn.query_row(
        "SELECT rootpage FROM sqlite_schema WHERE name = ?1",
        [name],
        |r| r.get(0),
    )
    .unwrap()
}

/// Bytes of page `n` (1-based) of a file.
fn page(bytes: &[u8], n: u32, size: usize) -> &[u8] {
    &bytes[(n as usize - 1) * size..n as usize * size]
}

#[test]
fn the_btree_walk_predicts_the_pages_a_rowid_lookup_reads() {
    let path = sample_index();
    let bytes = std::fs::read(&path).unwrap();
    let page_size = u16::from_be_bytes([bytes[16], bytes[17]]) as usize;
    let t = Traced::open(&path).unwrap();
    let root = root_page(&t.conn, "message_text");
    let ids: Vec<i64> = {
        let mut s = t
            .conn
            .prepare("SELECT id FROM message_text ORDER BY id")
            .unwrap();
        s.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    t.take_pages();
    let mut checked_overflow = 0;
    for &id in ids.iter().step_by(7) {
        // SQLite's own reads for the row, all columns.
        t.conn
            .query_row(
                "SELECT length(body), length(meta), title FROM message_text WHERE id = ?1",
                [id],
                |_| Ok(()),
            )
            .unwrap();
        let sqlite: BTreeSet<u32> = t.take_pages().into_iter().collect();
        // The walk.
        let mut predicted = BTreeSet::new();
        let mut at = root;
        loop {
            predicted.insert(at);
            let p = page(&bytes, at, page_size);
            match btree::kind(p, at) {
                Some(btree::PageKind::InteriorTable) => {
                    let next = btree::descend(p, at, &[id]).unwrap();
                    assert_eq!(next.len(), 1);
                    at = next[0].0;
                }
                Some(btree::PageKind::LeafTable) => {
                    for (first, n) in btree::leaf_overflows(p, at, page_size, &[id]).unwrap() {
                        checked_overflow += 1;
                        predicted.extend(first..first + n);
                    }
                    break;
                }
                other => panic!("unexpected page kind {other:?} at {at}"),
            }
        }
        // Pages already in SQLite's cache are not read again: the walk may
        // predict more, never something else.
        assert!(
            sqlite.is_subset(&predicted),
            "row {id}: SQLite read {sqlite:?}, the walk predicts {predicted:?}"
        );
        assert!(!sqlite.is_empty() || predicted.len() <= 2, "row {id}");
    }
    assert!(checked_overflow > 0, "some rows have overflow pages");
}

#[test]
fn hot_pages_cover_what_every_query_reads_first() {
    let path = sample_index();
    let hot = hot_pages(&path).unwrap();
    assert!(
        hot.pages.contains(&1),
        "page 1 (header, schema root) is hot"
    );
    assert!(!hot.probes.is_empty());
    let owners = owners(&path);
    let tables = tables_of(&hot.pages, &owners);
    for t in [
        "sqlite_schema",
        "index_meta",
        "fts_messages_data",
        "fts_messages_idx",
        "messages",
    ] {
        assert!(tables.contains(t), "{t} has hot pages: {tables:?}");
    }
    for p in &hot.pages {
        assert_ne!(
            owners.get(p).map(String::as_str),
            Some("sqlite_stat4"),
            "the browser's SQLite does not read sqlite_stat4"
        );
    }
    let page_count = std::fs::metadata(&path).unwrap().len() / 4096;
    assert!(
        (hot.pages.len() as u64) * 10 < page_count,
        "{} of {page_count} pages are hot",
        hot.pages.len()
    );
    // Opening and a first query miss far fewer pages with the hot ones in hand.
    let hot_set: BTreeSet<u32> = hot.pages.iter().copied().collect();
    for q in QUERIES {
        let (engine, trace) = Traced::engine(&path).unwrap();
        engine.search(q, &SearchOptions::default()).unwrap();
        let read = trace.take_pages();
        let missed = read.iter().filter(|p| !hot_set.contains(p)).count();
        assert!(
            missed < read.len() * 3 / 4,
            "{q}: {missed} of {} pages are not hot",
            read.len()
        );
    }
}

/// The leaves rowids lead to, walking the b-tree of the table rooted at
/// `root` in the file's bytes.
fn leaves_of(bytes: &[u8], page_size: usize, root: u32, keys: &[i64]) -> BTreeSet<u32> {
    let mut out = BTreeSet::new();
    let mut frontier = vec![(root, keys.to_vec())];
    while let Some((at, ks)) = frontier.pop() {
        let p = page(bytes, at, page_size);
        match btree::kind(p, at) {
            Some(btree::PageKind::InteriorTable) => {
                frontier.extend(btree::descend(p, at, &ks).unwrap())
            }
            Some(btree::PageKind::LeafTable) => {
                out.insert(at);
            }
            other => panic!("unexpected page kind {other:?} at {at}"),
        }
    }
    out
}

/// The `_data` leaves a `MATCH expr` on `fts` reads (cold) that the
/// prediction (`doclist_rowids`) missed, how many it read, how many it
/// predicted, and how many it predicts without `fts_leaf_ends`.
fn unpredicted(path: &Path, fts: &str, expr: &str) -> (Vec<u32>, usize, usize, usize) {
    let bytes = std::fs::read(path).unwrap();
    let page_size = u16::from_be_bytes([bytes[16], bytes[17]]) as usize;
    let owners = owners(path);
    let t = Traced::open(path).unwrap();
    let root = root_page(&t.conn, &format!("{fts}_data"));
    let rowids = doclists::doclist_rowids(&t.conn, fts, expr).unwrap();
    let predicted = leaves_of(&bytes, page_size, root, &rowids);
    let segids = doclists::segids(&t.conn, &format!("{fts}_idx")).unwrap();
    let without = doclists::doclist_rowids_in(&t.conn, fts, &segids, expr, |_| None).unwrap();
    let without = leaves_of(&bytes, page_size, root, &without).len();
    // A fresh connection: SQLite's own reads for the MATCH, cold.
    let m = Traced::open(path).unwrap();
    m.conn
        .query_row("SELECT count(*) FROM index_meta", [], |_| Ok(()))
        .unwrap();
    m.take_pages();
    m.conn
        .query_row(
            &format!("SELECT count(*) FROM {fts} WHERE {fts} MATCH ?1"),
            [expr],
            |r| r.get::<_, i64>(0),
        )
        .unwrap();
    let data_leaves: BTreeSet<u32> = m
        .take_pages()
        .into_iter()
        .filter(|p| owners.get(p).map(String::as_str) == Some(&format!("{fts}_data")))
        .filter(|&p| btree::kind(page(&bytes, p, page_size), p) == Some(btree::PageKind::LeafTable))
        .collect();
    // Rowid 1 (averages) and 10 (structure) sit in the first leaf.
    let first = leaves_of(&bytes, page_size, root, &[1, 10]);
    let missed = data_leaves
        .difference(&predicted)
        .filter(|p| !first.contains(p))
        .copied()
        .collect();
    (missed, data_leaves.len(), predicted.len(), without)
}

#[test]
fn doclist_leaves_are_predicted_from_the_fts_index() {
    let path = sample_index();
    let mut checked = 0;
    for (fts, expr) in [
        ("fts_messages", r#""payment""#),
        ("fts_messages", r#""token" OR "session""#),
        ("fts_messages", r#""secure payments""#),
        ("fts_messages", r#""auth"* NOT "test""#),
        ("fts_messages", r#""the""#),
        ("fts_chats", r#""readme""#),
        ("fts_chats", r#""pay"*"#),
    ] {
        let (missed, read, _, _) = unpredicted(&path, fts, expr);
        assert!(
            missed.is_empty(),
            "{fts} MATCH {expr}: doclist leaves not predicted: {missed:?}"
        );
        checked += read;
    }
    assert!(checked > 7);
}

/// Every term of the sample's messages (and the last term of every leaf,
/// whose doclist runs on to the next one): the prediction, which leaves
/// out the next leaf unless the term may be the last of its own
/// (`fts_leaf_ends`), misses no leaf `MATCH` reads.
#[test]
fn doclist_leaves_are_predicted_for_every_term_and_the_next_leaf_only_when_needed() {
    let path = sample_index();
    let conn =
        rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    // The last term of every leaf, decoded from the leaves themselves.
    let mut lasts = Vec::new();
    let mut blocks = conn
        .prepare("SELECT id, block FROM fts_messages_data WHERE id >= 137438953472")
        .unwrap();
    let rows = blocks
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?)))
        .unwrap();
    for row in rows {
        let (id, block) = row.unwrap();
        if id & (1 << 36) != 0 {
            continue; // a doclist-index page, not a leaf
        }
        if let Some(t) = doclists::last_term(&block) {
            assert_eq!(t[0], b'0', "leaf {id}: {t:?}");
            lasts.push(String::from_utf8(t[1..].to_vec()).unwrap());
        }
    }
    assert!(lasts.len() > 3, "{} leaves with terms", lasts.len());
    // fts5vocab lists the terms; each leaf's last term is one of them.
    conn.execute_batch("").unwrap();
    let vocab = rusqlite::Connection::open_in_memory().unwrap();
    vocab
        .execute("ATTACH DATABASE ?1 AS ix", [path.to_str().unwrap()])
        .unwrap();
    vocab
        .execute_batch("CREATE VIRTUAL TABLE temp.v USING fts5vocab(ix, fts_messages, 'row');")
        .unwrap();
    let terms: Vec<String> = vocab
        .prepare("SELECT term FROM temp.v")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for l in &lasts {
        assert!(
            terms.binary_search(l).is_ok(),
            "{l:?} is not a term of the index"
        );
    }
    // Every last term, and every 7th term besides (terms of every kind of
    // leaf position), read no leaf the prediction missed.
    let mut sample: Vec<&String> = terms.iter().step_by(7).chain(lasts.iter()).collect();
    sample.sort();
    sample.dedup();
    let (mut predicted, mut without) = (0, 0);
    for term in sample {
        let expr = format!("\"{}\"", term.replace('"', "\"\""));
        let (missed, _, p, w) = unpredicted(&path, "fts_messages", &expr);
        assert!(
            missed.is_empty(),
            "MATCH {expr}: leaves not predicted: {missed:?}"
        );
        predicted += p;
        without += w;
    }
    // The next leaf is left out for most terms (here 953 pages instead of
    // 1597).
    assert!(
        predicted * 10 < without * 8,
        "predicted {predicted} pages, {without} without the leaf-end hashes"
    );
}

/// The leaves a lookup of the first (integer) column of an index b-tree
/// reads, walking it in the file's bytes.
fn index_leaves_of(bytes: &[u8], page_size: usize, root: u32, key: i64) -> BTreeSet<u32> {
    let mut out = BTreeSet::new();
    let mut frontier = vec![root];
    while let Some(at) = frontier.pop() {
        out.insert(at);
        let p = page(bytes, at, page_size);
        match btree::kind(p, at) {
            Some(btree::PageKind::InteriorIndex) => frontier.extend(
                btree::descend_index(p, at, &[key])
                    .unwrap()
                    .into_iter()
                    .map(|(c, _)| c),
            ),
            Some(btree::PageKind::LeafIndex) => {}
            other => panic!("unexpected page kind {other:?} at {at}"),
        }
    }
    out
}

#[test]
fn index_lookups_are_predicted_from_interior_index_pages() {
    // A WITHOUT ROWID table shaped like message_names (hash key, id): keys
    // over the whole i64 range, some repeated across many leaves, three
    // levels deep.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("names.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "PRAGMA page_size=4096;
             CREATE TABLE names(key INTEGER NOT NULL, id INTEGER NOT NULL, PRIMARY KEY(key, id)) WITHOUT ROWID;",
        )
        .unwrap();
        let tx = c.unchecked_transaction().unwrap();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for id in 0..120_000i64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Every 10th row shares one of 5 keys (runs spanning leaves);
            // small keys use the short integer encodings.
            let key = match id % 10 {
                0 => (x % 5) as i64 * 1_000_003 - 2,
                1 => (x % 300) as i64 - 150,
                _ => x as i64,
            };
            tx.execute("INSERT OR IGNORE INTO names VALUES (?1, ?2)", [key, id])
                .unwrap();
        }
        tx.commit().unwrap();
        c.execute_batch("VACUUM").unwrap();
    }
    let bytes = std::fs::read(&path).unwrap();
    let page_size = 4096;
    let t = Traced::open(&path).unwrap();
    let root = root_page(&t.conn, "names");
    let keys: Vec<i64> = {
        let mut s = t
            .conn
            .prepare("SELECT DISTINCT key FROM names WHERE key % 97 = 0 OR abs(key) < 5000000")
            .unwrap();
        s.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert!(keys.len() > 50, "{} keys", keys.len());
    let mut multi_leaf = 0;
    drop(t);
    for key in keys.iter().copied().chain([i64::MIN, i64::MAX, 7]) {
        // A fresh connection each time: SQLite's page cache hides reads.
        let t = Traced::open(&path).unwrap();
        let ids: Vec<i64> = {
            let mut s = t
                .conn
                .prepare_cached("SELECT id FROM names WHERE key = ?1")
                .unwrap();
            s.query_map([key], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect()
        };
        // Page 1 holds the schema, read when the statement is prepared.
        let sqlite: BTreeSet<u32> = t.take_pages().into_iter().filter(|&p| p != 1).collect();
        let predicted = index_leaves_of(&bytes, page_size, root, key);
        assert!(
            sqlite.is_subset(&predicted),
            "key {key} ({} rows): SQLite read {sqlite:?}, the walk predicts {predicted:?}",
            ids.len()
        );
        if sqlite.len() > 3 {
            multi_leaf += 1;
        }
        // The walk adds at most the neighbour leaf of a run's edge per level.
        assert!(
            predicted.len() <= sqlite.len() + 3,
            "key {key}: {predicted:?} vs {sqlite:?}"
        );
    }
    assert!(multi_leaf > 0, "some keys span several leaves");
}

/// The pages a walk of an FTS5 `_idx` b-tree visits for term `keys`, in
/// the file's bytes.
fn term_pages_of(
    bytes: &[u8],
    page_size: usize,
    root: u32,
    keys: &[btree::TermKey],
) -> Option<BTreeSet<u32>> {
    let mut out = BTreeSet::new();
    let mut frontier = vec![(root, keys.to_vec())];
    while let Some((at, ks)) = frontier.pop() {
        out.insert(at);
        let p = page(bytes, at, page_size);
        match btree::kind(p, at) {
            Some(btree::PageKind::InteriorIndex) => {
                frontier.extend(btree::descend_terms(p, at, page_size, &ks)?)
            }
            // A leaf, or an overflow page of a compared cell.
            Some(btree::PageKind::LeafIndex) | None => {}
            other => panic!("unexpected page kind {other:?} at {at}"),
        }
    }
    Some(out)
}

#[test]
fn fts_index_lookups_are_predicted_from_interior_pages() {
    // An FTS5 table with a deep `_idx` (small FTS leaves, small pages):
    // one optimized segment in `t`, three segments in `u`; some terms too
    // long for an index cell's local bytes (their tails overflow).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("terms.db");
    let page_size = 1024;
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut rand = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let word = |r: u64, len: usize| -> String {
        (0..len)
            .map(|i| ((b'a' + ((r >> (i % 12 * 5)) % 26) as u8) ^ (i as u8 % 3)) as char)
            .filter(|c| c.is_ascii_lowercase())
            .collect()
    };
    let mut words = Vec::new();
    for i in 0..20_000 {
        let r = rand();
        let len = if i % 97 == 0 {
            300
        } else {
            3 + (r % 10) as usize
        };
        let w = word(r, len);
        if !w.is_empty() {
            words.push(w);
        }
    }
    // Long terms alike in their first 250 bytes: comparing them needs
    // bytes past a cell's local part.
    for i in 0..400 {
        words.push(format!("{}{}", "k".repeat(250), word(rand(), 4 + i % 5)));
    }
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(&format!(
            "PRAGMA page_size={page_size};
             CREATE VIRTUAL TABLE t USING fts5(body);
             CREATE VIRTUAL TABLE u USING fts5(body);
             INSERT INTO t(t, rank) VALUES('pgsz', 64);
             INSERT INTO u(u, rank) VALUES('pgsz', 64);
             INSERT INTO u(u, rank) VALUES('automerge', 0);"
        ))
        .unwrap();
        let tx = c.unchecked_transaction().unwrap();
        for chunk in words.chunks(4) {
            tx.execute("INSERT INTO t(body) VALUES (?1)", [chunk.join(" ")])
                .unwrap();
        }
        tx.commit().unwrap();
        for part in words.chunks(words.len() / 3 + 1) {
            let tx = c.unchecked_transaction().unwrap();
            for chunk in part.chunks(4) {
                tx.execute("INSERT INTO u(body) VALUES (?1)", [chunk.join(" ")])
                    .unwrap();
            }
            tx.commit().unwrap();
        }
        c.execute_batch("INSERT INTO t(t) VALUES('optimize'); VACUUM;")
            .unwrap();
    }
    let bytes = std::fs::read(&path).unwrap();
    let mut probes: Vec<(String, bool)> = words
        .iter()
        .step_by(37)
        .map(|w| (w.clone(), false))
        .collect();
    // Prefixes, terms past either end, a term that is not there.
    probes.extend([
        ("ab".to_string(), true),
        ("q".to_string(), true),
        ("a".to_string(), false),
        ("zzzzzzzz".to_string(), false),
        ("nosuchterm".to_string(), false),
    ]);
    probes.extend(
        words
            .iter()
            .filter(|w| w.len() > 200)
            .map(|w| (w.clone(), false)),
    );
    let mut deep = 0;
    let mut undecided = 0;
    let mut overflow_hits = 0;
    for table in ["t", "u"] {
        let t = Traced::open(&path).unwrap();
        let segments = doclists::segids(&t.conn, &format!("{table}_idx")).unwrap();
        assert_eq!(segments.len(), if table == "t" { 1 } else { 3 }, "{table}");
        let root = root_page(&t.conn, &format!("{table}_idx"));
        drop(t);
        let mut predicted_any = 0;
        for (w, prefix) in &probes {
            let expr = format!("\"{w}\"{}", if *prefix { "*" } else { "" });
            // A fresh connection each time: SQLite's page cache hides reads.
            let t = Traced::open(&path).unwrap();
            // The segment seeks first, as the warm-up makes them (their
            // edge leaves are hot pages); then the term lookups are traced.
            let segs = doclists::segids(&t.conn, &format!("{table}_idx")).unwrap();
            assert_eq!(segs, segments);
            let keys = doclists::term_keys(&segs, table, &expr);
            assert_eq!(
                keys.len(),
                segments.len() * if *prefix { 2 } else { 1 },
                "{expr}"
            );
            t.take_pages();
            doclists::doclist_rowids_in(&t.conn, table, &segs, &expr, |s| {
                doclists::leaf_end_hashes(&t.conn, table, s)
            })
            .unwrap();
            let sqlite: BTreeSet<u32> = t.take_pages().into_iter().filter(|&p| p != 1).collect();
            let predicted = term_pages_of(&bytes, page_size, root, &keys).unwrap();
            // Whether every key's walk reaches a leaf (a key the walk
            // cannot place is dropped).
            let reaches_leaf = keys.iter().all(|k| {
                term_pages_of(&bytes, page_size, root, std::slice::from_ref(k))
                    .unwrap()
                    .iter()
                    .any(|&p| {
                        btree::kind(page(&bytes, p, page_size), p)
                            == Some(btree::PageKind::LeafIndex)
                    })
            });
            match reaches_leaf.then_some(predicted) {
                Some(predicted) => {
                    predicted_any += 1;
                    // Every b-tree page, and the overflow pages of the
                    // interior cells SQLite compares the key with; not
                    // those of the cells in the leaf (the leaf is not in
                    // hand while the walk runs).
                    let is_btree = |p: u32| btree::kind(page(&bytes, p, page_size), p).is_some();
                    let missed: Vec<u32> = sqlite.difference(&predicted).copied().collect();
                    assert!(
                        missed.iter().all(|&p| !is_btree(p)),
                        "{table} {expr}: SQLite read {sqlite:?}, the walk predicts {predicted:?}"
                    );
                    overflow_hits += sqlite
                        .intersection(&predicted)
                        .filter(|&&p| !is_btree(p))
                        .count();
                    if predicted.len() > 2 {
                        deep += 1;
                    }
                }
                // Only a term longer than an index cell's local bytes may
                // leave the walk undecided.
                None => {
                    assert!(w.len() > 200, "{table} {expr}: the walk gave up");
                    undecided += 1;
                }
            }
        }
        assert!(
            predicted_any > probes.len() / 2,
            "{table}: {predicted_any} predicted"
        );
    }
    assert!(deep > 0, "lookups cross several levels of `_idx`");
    assert!(undecided > 0, "some lookups need a long term's overflow");
    assert!(
        overflow_hits > 0,
        "some interior cells' overflow pages are predicted"
    );
}

#[test]
fn preparing_a_search_reads_only_hot_pages() {
    // The browser's lazy mode prepares a search's statements while the
    // pages it needs are on the way: that must read nothing else.
    let path = sample_index();
    let hot: BTreeSet<u32> = hot_pages(&path).unwrap().pages.into_iter().collect();
    let owners = owners(&path);
    for q in QUERIES {
        let (engine, trace) = Traced::engine(&path).unwrap();
        let parsed = query::parse(q, &profiles::exists).unwrap();
        let p = plan::plan(&parsed, &SearchOptions::default(), MatchMode::AllTerms).unwrap();
        trace.take_pages();
        gitsense_engine::search::prepare_statements(engine.connection(), &p);
        let read = trace.take_pages();
        let cold: Vec<u32> = read.iter().copied().filter(|p| !hot.contains(p)).collect();
        assert!(
            cold.is_empty(),
            "{q}: preparing read pages that are not hot: {:?}",
            tables_of(&cold, &owners)
        );
        // The search on those statements answers as one without them.
        let r = engine.search(q, &SearchOptions::default()).unwrap();
        let (fresh, _) = Traced::engine(&path).unwrap();
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::to_value(fresh.search(q, &SearchOptions::default()).unwrap()).unwrap(),
            "{q}"
        );
    }
}

/// Every page of the b-tree rooted at `root` (a file's bytes), through
/// `btree::children`.
fn btree_pages(bytes: &[u8], page_size: usize, root: u32) -> BTreeSet<u32> {
    let mut out = BTreeSet::new();
    let mut stack = vec![root];
    while let Some(p) = stack.pop() {
        if out.insert(p) {
            stack.extend(btree::children(page(bytes, p, page_size), p).unwrap_or_default());
        }
    }
    out
}

#[test]
fn a_query_without_words_reads_only_the_btrees_its_plan_scans() {
    // The sample has no code blocks; the chat-app fixture has.
    for (path, q) in [
        (sample_index(), "msg-type:regular"),
        (sample_index(), "role:user"),
        (fixture_index("scans"), "role:user"),
        (fixture_index("scans"), "lang:python"),
        (fixture_index("scans"), "msg-type:regular"),
    ] {
        let bytes = std::fs::read(&path).unwrap();
        let page_size = u16::from_be_bytes([bytes[16], bytes[17]]) as usize;
        let owners = owners(&path);
        let hot: BTreeSet<u32> = hot_pages(&path).unwrap().pages.into_iter().collect();
        let (engine, trace) = Traced::engine(&path).unwrap();
        let parsed = query::parse(q, &profiles::exists).unwrap();
        let p = plan::plan(&parsed, &SearchOptions::default(), MatchMode::AllTerms).unwrap();
        let conn = engine.connection();
        let mut scanned = BTreeSet::new();
        let mut names = BTreeSet::new();
        let tables: Vec<&str> = p
            .target_plans
            .iter()
            .flat_map(|tp| tp.scanned().iter().copied())
            .collect();
        for name in gitsense_engine::index::btrees_of(conn, &tables).unwrap() {
            scanned.extend(btree_pages(&bytes, page_size, root_page(conn, &name)));
            names.insert(name);
        }
        assert!(!names.is_empty(), "{q}: a plan without words scans");
        trace.take_pages();
        let mut returned = 0;
        for tp in &p.target_plans {
            let Some(sql) = &tp.sql else { continue };
            assert!(sql.fts.is_none());
            returned += count_and_page(conn, sql).1.len();
        }
        assert!(returned > 0, "{q}: nothing returned");
        let read: BTreeSet<u32> = trace.take_pages().into_iter().collect();
        let outside: Vec<u32> = read
            .iter()
            .copied()
            .filter(|p| !hot.contains(p) && !scanned.contains(p))
            .collect();
        assert!(
            outside.is_empty(),
            "{q}: scanning {names:?} left out pages of {:?}",
            tables_of(&outside, &owners)
        );
        // And the scanned b-trees are mostly what it reads.
        let fetched = scanned.difference(&hot).count();
        let needed = read.difference(&hot).count();
        eprintln!("{q}: {fetched} pages fetched for {needed} read");
        assert!(
            fetched <= 2 * needed + 4,
            "{q}: {fetched} pages fetched for {needed} read"
        );
    }
}

/// The pages a walk of a text-keyed b-tree visits for key `ranges`, in the
/// file's bytes.
fn range_pages_of(
    bytes: &[u8],
    page_size: usize,
    root: u32,
    ranges: &[btree::KeyRange],
) -> BTreeSet<u32> {
    let mut out = BTreeSet::new();
    let mut frontier = vec![(root, ranges.to_vec())];
    while let Some((at, rs)) = frontier.pop() {
        out.insert(at);
        let p = page(bytes, at, page_size);
        match btree::kind(p, at) {
            Some(btree::PageKind::InteriorIndex) => {
                frontier.extend(btree::descend_ranges(p, at, page_size, &rs).unwrap())
            }
            Some(btree::PageKind::LeafIndex) => {}
            other => panic!("unexpected page kind {other:?} at {at}"),
        }
    }
    out
}

#[test]
fn typo_lookups_are_predicted_from_interior_pages() {
    // A vocabulary of 30,000 words (as an index's `typo_terms` holds them,
    // each forward and reversed) on small pages: a b-tree three levels
    // deep. A search that matches nothing reads it to correct its typos;
    // lazy mode fetches what that reads from the query alone.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("typos.db");
    let page_size = 1024;
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut rand = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let words: Vec<String> = (0..30_000)
        .map(|_| {
            let r = rand();
            (0..5 + (r % 6) as usize)
                .map(|i| (b'a' + ((r >> (8 + 5 * i)) % 26) as u8) as char)
                .collect()
        })
        .collect();
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(&format!(
            "PRAGMA page_size={page_size};
             CREATE TABLE typo_terms(key TEXT PRIMARY KEY, rows INTEGER NOT NULL) WITHOUT ROWID;"
        ))
        .unwrap();
        let tx = c.unchecked_transaction().unwrap();
        for (i, w) in words.iter().enumerate() {
            let reversed: String = w.chars().rev().collect();
            for key in [format!("w{w}"), format!("r{reversed}")] {
                tx.execute(
                    "INSERT OR IGNORE INTO typo_terms(key, rows) VALUES (?1, ?2)",
                    rusqlite::params![key, 1 + (i % 7) as i64],
                )
                .unwrap();
            }
        }
        tx.commit().unwrap();
        c.execute_batch("VACUUM;").unwrap();
    }
    let bytes = std::fs::read(&path).unwrap();
    let root = {
        let t = Traced::open(&path).unwrap();
        root_page(&t.conn, "typo_terms")
    };
    // Queries are planned on any index: correcting one reads only the
    // connection it is given.
    let engine = common::sample_engine();
    let mut probes: Vec<String> = Vec::new();
    for (i, w) in words.iter().enumerate().step_by(997) {
        // A letter dropped, changed, or two swapped; the word as it is.
        let c: Vec<char> = w.chars().collect();
        let k = 1 + i % (c.len() - 2);
        let mut dropped = c.clone();
        dropped.remove(k);
        let mut changed = c.clone();
        changed[k] = if c[k] == 'q' { 'x' } else { 'q' };
        let mut swapped = c.clone();
        swapped.swap(k, k + 1);
        for v in [dropped, changed, swapped, c] {
            probes.push(v.into_iter().collect());
        }
    }
    probes.push(format!("{} {}", words[5], &words[6][1..]));
    probes.push(format!("{}*", &words[7][..6.min(words[7].len())]));
    probes.push("zzzzzzzzzz".into());
    let mut corrected = 0;
    let mut deep = 0;
    for q in &probes {
        let planned = engine.plan_search(q, &SearchOptions::default()).unwrap();
        let ranges = planned.typo_lookups();
        let predicted = range_pages_of(&bytes, page_size, root, &ranges);
        // A fresh connection each time: SQLite's page cache hides reads.
        let t = Traced::open(&path).unwrap();
        root_page(&t.conn, "typo_terms");
        t.take_pages();
        if planned.corrected(&t.conn).unwrap().is_some() {
            corrected += 1;
        }
        let read: BTreeSet<u32> = t.take_pages().into_iter().filter(|&p| p != 1).collect();
        assert!(
            read.is_subset(&predicted),
            "{q}: SQLite read {read:?}, the walk predicts {predicted:?}"
        );
        if read.len() > 2 {
            deep += 1;
        }
    }
    assert!(
        corrected > probes.len() / 2,
        "{corrected} of {} corrected",
        probes.len()
    );
    assert!(deep > 0, "lookups cross several levels of the b-tree");
}
