//! The SQLite-free reader (`index::sqlfile`, `index::fts5file`) against
//! SQLite as the oracle: every row of every table, every index entry a
//! lookup finds, and every term's doclist with its positions, on the real
//! sample index and on random full-text indexes whose doclists and
//! position lists run over many leaves.

mod common;

use common::{fixture_index, sample_index};
use gitsense_engine::index::fts5expr::Expr;
use gitsense_engine::index::fts5file::{Fts5File, Posting};
use gitsense_engine::index::records;
use gitsense_engine::index::sqlfile::{SqlFile, Value};
use proptest::prelude::*;
use rusqlite::types::ValueRef;
use rusqlite::Connection;
use std::collections::BTreeMap;
use std::path::Path;

fn value_of(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(r) => Value::Real(r),
        ValueRef::Text(t) => Value::Text(t.to_vec()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

/// The tables with a rowid, and the `WITHOUT ROWID` ones.
fn tables(conn: &Connection) -> (Vec<String>, Vec<String>) {
    let mut s = conn
        .prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'")
        .unwrap();
    let rows: Vec<(String, String)> = s
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let (without, with): (Vec<_>, Vec<_>) = rows
        .into_iter()
        .partition(|(_, sql)| sql.contains("WITHOUT ROWID"));
    (
        with.into_iter().map(|(n, _)| n).collect(),
        without.into_iter().map(|(n, _)| n).collect(),
    )
}

fn sql_rows(conn: &Connection, sql: &str) -> Vec<Vec<Value>> {
    let mut s = conn.prepare(sql).unwrap();
    let n = s.column_count();
    s.query_map([], |r| {
        Ok((0..n).map(|i| value_of(r.get_ref(i).unwrap())).collect())
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// Every row of every table, by scan and by rowid; every entry of every
/// `WITHOUT ROWID` table, by lookup of its key.
fn tables_agree(path: &Path) {
    let conn = Connection::open(path).unwrap();
    let file = SqlFile::open(std::fs::read(path).unwrap()).unwrap();
    let (with_rowid, without_rowid) = tables(&conn);
    assert!(!with_rowid.is_empty());
    for t in &with_rowid {
        // `rowid` first, then the columns (an INTEGER PRIMARY KEY column is
        // stored as NULL and read as the rowid, as SQLite does).
        let expected = sql_rows(
            &conn,
            &format!("SELECT rowid, * FROM \"{t}\" ORDER BY rowid"),
        );
        let pk = conn
            .prepare(&format!(
                "SELECT cid FROM pragma_table_info('{t}') WHERE pk = 1 AND lower(type) = 'integer'"
            ))
            .unwrap()
            .query_map([], |r| r.get::<_, i64>(0))
            .unwrap()
            .map(Result::unwrap)
            .collect::<Vec<_>>();
        // An INTEGER PRIMARY KEY column is stored as NULL and read as the
        // rowid; columns added after a row was written are absent from its
        // record.
        let as_sql = |rowid: i64, mut row: Vec<Value>, len: usize| {
            row.resize(len, Value::Null);
            if let [cid] = pk[..] {
                row[cid as usize] = Value::Int(rowid);
            }
            row
        };
        let width = conn
            .prepare(&format!("SELECT * FROM \"{t}\""))
            .unwrap()
            .column_count();
        let mut scanned = Vec::new();
        file.scan_tree(file.root(t).unwrap(), &mut |rowid, rec| {
            let row = gitsense_engine::index::sqlfile::decode_record(rec)?;
            let mut out = vec![Value::Int(rowid)];
            out.extend(as_sql(rowid, row, width));
            scanned.push(out);
            Ok(true)
        })
        .unwrap();
        assert_eq!(scanned, expected, "table {t} scanned");
        for want in expected.iter().step_by(expected.len() / 300 + 1) {
            let rowid = want[0].as_i64().unwrap();
            let got = file.row(t, rowid).unwrap().expect("the row is found");
            assert_eq!(
                as_sql(rowid, got, want.len() - 1),
                want[1..],
                "{t}: row {rowid}"
            );
        }
        let past = expected.last().map_or(1, |r| r[0].as_i64().unwrap() + 1);
        assert_eq!(
            file.row(t, past).unwrap(),
            None,
            "{t}: a rowid past the last"
        );
    }
    for t in &without_rowid {
        let expected = sql_rows(&conn, &format!("SELECT * FROM \"{t}\""));
        for want in &expected {
            // The whole entry as the key (`_idx`'s key is two columns);
            // `index_meta`'s by its primary key alone.
            let key = if t == "index_meta" {
                &want[..1]
            } else {
                &want[..]
            };
            let got = file.find(t, key).unwrap().expect("the entry is found");
            assert_eq!(&got[..want.len()], &want[..], "{t}");
        }
    }
}

/// Every term of every full-text table: its rows and positions as FTS5's
/// own vocabulary table lists them; the row and token totals.
fn doclists_agree(path: &Path, fts_tables: &[&str]) {
    let conn = Connection::open(path).unwrap();
    let file = SqlFile::open(std::fs::read(path).unwrap()).unwrap();
    for &t in fts_tables {
        conn.execute_batch(&format!(
            "DROP TABLE IF EXISTS temp.v; CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, {t}, instance);"
        ))
        .unwrap();
        let mut want: BTreeMap<Vec<u8>, Vec<Posting>> = BTreeMap::new();
        let mut s = conn
            .prepare("SELECT term, doc, col, offset FROM temp.v")
            .unwrap();
        let cols: Vec<String> = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{t}')"))
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let mut rows = s.query([]).unwrap();
        while let Some(r) = rows.next().unwrap() {
            let term: Vec<u8> = match r.get_ref(0).unwrap() {
                ValueRef::Text(b) | ValueRef::Blob(b) => b.to_vec(),
                _ => unreachable!(),
            };
            let doc: i64 = r.get(1).unwrap();
            let col: String = r.get(2).unwrap();
            let col = cols.iter().position(|c| *c == col).unwrap() as u64;
            let off: i64 = r.get(3).unwrap();
            let list = want.entry(term).or_default();
            match list.last_mut() {
                Some(p) if p.rowid == doc => p.positions.push(col << 32 | off as u64),
                _ => list.push(Posting {
                    rowid: doc,
                    positions: vec![col << 32 | off as u64],
                }),
            }
        }
        let fts = Fts5File::open(&file, t).unwrap();
        assert!(!want.is_empty() || t == "fts_chats" || t == "fts_code_blocks");
        for (term, list) in &want {
            assert_eq!(
                &fts.postings(term).unwrap(),
                list,
                "{t}: {}",
                String::from_utf8_lossy(term)
            );
        }
        // Terms that are not there.
        for absent in [&b"zzzzqqq"[..], b"", b"\xff\xff"] {
            if !want.contains_key(absent) {
                assert_eq!(fts.postings(absent).unwrap(), vec![], "{t}");
            }
        }
        // Prefixes: every term starting with it, in order.
        let terms: Vec<&Vec<u8>> = want.keys().collect();
        for probe in terms.iter().step_by(terms.len() / 40 + 1) {
            for n in 1..=probe.len().min(3) {
                let prefix = &probe[..n];
                let expected: Vec<(Vec<u8>, Vec<Posting>)> = want
                    .iter()
                    .filter(|(k, _)| k.starts_with(prefix))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                assert_eq!(
                    fts.prefixed(prefix).unwrap(),
                    expected,
                    "{t}: prefix {prefix:?}"
                );
            }
        }
        let (rows, per_col) = fts.totals().unwrap();
        let sql_rows: i64 = conn
            .query_row(&format!("SELECT count(*) FROM {t}"), [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, sql_rows, "{t}: rows");
        for (i, total) in per_col.iter().enumerate() {
            let want_total: usize = want
                .values()
                .flatten()
                .map(|p| p.positions.iter().filter(|&&x| x >> 32 == i as u64).count())
                .sum();
            assert_eq!(*total as usize, want_total, "{t}: tokens in column {i}");
        }
    }
}

#[test]
fn the_reader_reads_every_table_of_the_sample_index_as_sqlite_does() {
    tables_agree(&sample_index());
    tables_agree(&fixture_index("reader"));
}

#[test]
fn the_reader_reads_every_doclist_of_the_sample_index_as_fts5_does() {
    let tables = ["fts_messages", "fts_chats", "fts_code_blocks"];
    doclists_agree(&sample_index(), &tables);
    doclists_agree(&fixture_index("reader"), &tables);
}

#[test]
fn an_index_of_several_segments_is_left_to_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("segments.db");
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE VIRTUAL TABLE t USING fts5(a); INSERT INTO t(t, rank) VALUES('automerge', 0);
         INSERT INTO t(a) VALUES('one two'); INSERT INTO t(a) VALUES('two three');",
    )
    .unwrap();
    drop(conn);
    let file = SqlFile::open(std::fs::read(&path).unwrap()).unwrap();
    let e = Fts5File::open(&file, "t").unwrap_err();
    assert_eq!(e.code, "reader.unsupported");
}

#[test]
fn damaged_files_are_errors_never_panics() {
    let bytes = std::fs::read(sample_index()).unwrap();
    assert_eq!(
        SqlFile::open(b"plain text".repeat(20)).unwrap_err().code,
        "index.not_an_index"
    );
    let mut x: u32 = 0x2545_f491;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    for _ in 0..200 {
        let mut damaged = bytes.clone();
        for _ in 0..64 {
            let at = next() as usize % damaged.len();
            damaged[at] = next() as u8;
        }
        let Ok(file) = SqlFile::open(damaged) else {
            continue;
        };
        for t in ["messages", "message_text", "chats"] {
            let _ = file.row(t, i64::from(next() % 500));
        }
        if let Ok(fts) = Fts5File::open(&file, "fts_messages") {
            for term in [&b"retry"[..], b"pay", b"the"] {
                let _ = fts.postings(term);
                let _ = fts.prefixed(term);
            }
        }
    }
}

/// A random full-text index: `docs` rows of words from a small vocabulary
/// (so doclists grow long), some words repeated many times in one row (so
/// position lists grow long), on leaves of `pgsz` bytes.
fn random_index(path: &Path, docs: &[Vec<u16>], pgsz: u32) {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(&format!(
        "CREATE TABLE c(id INTEGER PRIMARY KEY, a TEXT, b TEXT);
         CREATE VIRTUAL TABLE t USING fts5(a, b, content='c', content_rowid='id');
         INSERT INTO t(t, rank) VALUES('pgsz', {pgsz});"
    ))
    .unwrap();
    let word = |w: u16| format!("w{}é{}", w % 97, "x".repeat(usize::from(w % 5)));
    let mut insert = conn
        .prepare("INSERT INTO c(id, a, b) VALUES(?1, ?2, ?3)")
        .unwrap();
    for (i, doc) in docs.iter().enumerate() {
        let (a, b) = doc.split_at(doc.len() / 3);
        let text = |ws: &[u16]| ws.iter().map(|&w| word(w)).collect::<Vec<_>>().join(" ");
        // Rowids with gaps, some large (deltas of several bytes).
        let id = (i as i64) * 3 + if i % 7 == 0 { 1 << 33 } else { 0 };
        insert
            .execute(rusqlite::params![id, text(a), text(b)])
            .unwrap();
    }
    drop(insert);
    conn.execute_batch("INSERT INTO t(t) VALUES('rebuild'); INSERT INTO t(t) VALUES('optimize');")
        .unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]
    #[test]
    fn random_indexes_read_as_fts5_reads_them(
        docs in prop::collection::vec(
            prop::collection::vec(prop_oneof![0u16..400, Just(7u16)], 0..300),
            1..120,
        ),
        pgsz in prop_oneof![Just(64u32), Just(300u32), Just(4050u32)],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("random.db");
        random_index(&path, &docs, pgsz);
        doclists_agree(&path, &["t"]);
        tables_agree(&path);
    }
}

/// Characters of many kinds: ASCII, letters with diacritics, combining
/// marks, other scripts, unassigned and private-use codepoints, planes
/// past the first, NUL.
fn pool() -> Vec<char> {
    let mut out: Vec<char> = " \t\n.,;:-_'\"()[]{}<>/\\|!?@#$%^&*+=~`0123456789abcXYZ"
        .chars()
        .collect();
    out.extend("éÉàÀçÇñÑøØåÅßæÆœŒĳĲłŁđĐħǅǈǋǲẞıİſﬁ".chars());
    out.extend((0x300u32..0x340).filter_map(char::from_u32));
    out.extend("ΑαΣσςΩωДдЖжЁёԱաოტ日本語中文한국어ไทยעבריתعربي".chars());
    out.extend("\u{0378}\u{0870}\u{E000}\u{F8FF}\u{10400}\u{10428}\u{1D400}\u{1F600}\u{2070E}\u{E0001}\u{10FFFD}\u{00A0}\u{2028}\u{200B}\u{FEFF}\u{FFFD}\u{FFFE}\u{0000}".chars());
    out.extend((0x1E00u32..0x1E20).filter_map(char::from_u32));
    out.extend((0x2160u32..0x2170).filter_map(char::from_u32));
    out.extend((0x24B6u32..0x24C0).filter_map(char::from_u32));
    out.extend((0xFF21u32..0xFF26).filter_map(char::from_u32));
    out
}

/// One of the engine's tokenizers: text, then what to call per token.
type Tokenizer = fn(&[u8], &mut dyn FnMut(&[u8], usize, usize));

/// Each text's tokens as FTS5 stores them and as `highlight()` marks
/// them (the byte ranges), next to the engine's.
fn tokenizers_agree(texts: &[Vec<u8>], tokenize: &str, ours: Tokenizer, ranges_too: bool) {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE t USING fts5(a, tokenize='{tokenize}');
         CREATE VIRTUAL TABLE v USING fts5vocab(t, instance);"
    ))
    .unwrap();
    for (i, text) in texts.iter().enumerate() {
        // As a blob cast to text: the bytes as they are, valid UTF-8 or not.
        conn.execute(
            "INSERT INTO t(rowid, a) VALUES(?1, CAST(?2 AS TEXT))",
            rusqlite::params![i as i64 + 1, text],
        )
        .unwrap();
    }
    // Each row's (offset, token), as FTS5 stored them.
    let mut stored: BTreeMap<i64, Vec<(i64, Vec<u8>)>> = BTreeMap::new();
    let mut s = conn.prepare("SELECT doc, offset, term FROM v").unwrap();
    let mut rows = s.query([]).unwrap();
    while let Some(r) = rows.next().unwrap() {
        let term = match r.get_ref(2).unwrap() {
            ValueRef::Text(b) | ValueRef::Blob(b) => b.to_vec(),
            _ => unreachable!(),
        };
        stored
            .entry(r.get(0).unwrap())
            .or_default()
            .push((r.get(1).unwrap(), term));
    }
    drop(rows);
    drop(s);
    for (i, text) in texts.iter().enumerate() {
        let rowid = i as i64 + 1;
        let mut fts5 = stored.remove(&rowid).unwrap_or_default();
        fts5.sort();
        let mut mine = Vec::new();
        let mut ranges = Vec::new();
        ours(text, &mut |t, s, e| {
            mine.push(t.to_vec());
            ranges.push((s, e));
        });
        let fts5_terms: Vec<Vec<u8>> = fts5.into_iter().map(|(_, t)| t).collect();
        assert_eq!(
            mine,
            fts5_terms,
            "tokens of {:?}",
            String::from_utf8_lossy(text)
        );
        // highlight() copies text with printf's `%.*s`, which stops at a
        // NUL byte: its marks are off after one.
        // (Bytes 1 and 2 are the marks; the query is text, so the tokens
        // of invalid UTF-8 cannot be asked for.)
        if !ranges_too
            || mine.is_empty()
            || text.iter().any(|&b| b <= 2)
            || std::str::from_utf8(text).is_err()
        {
            continue;
        }
        // Every token matched: highlight() marks each one's byte range.
        let query = mine
            .iter()
            .map(|t| format!("\"{}\"", String::from_utf8_lossy(t).replace('"', "\"\"")))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
            .join(" OR ");
        let marked: Option<Vec<u8>> = conn
            .query_row(
                "SELECT CAST(highlight(t, 0, char(1), char(2)) AS BLOB) FROM t WHERE t MATCH ?1 AND rowid = ?2",
                rusqlite::params![query, rowid],
                |r| r.get(0),
            )
            .ok();
        let Some(marked) = marked else { continue };
        let mut expected = Vec::new();
        let mut plain = 0usize;
        let mut open = None;
        for &b in &marked {
            match b {
                1 => open = Some(plain),
                2 => expected.push((open.take().unwrap(), plain)),
                _ => plain += 1,
            }
        }
        // highlight() joins the marks of touching tokens; split ours alike.
        let mut joined: Vec<(usize, usize)> = Vec::new();
        for &(s, e) in &ranges {
            match joined.last_mut() {
                Some(last) if last.1 >= s => last.1 = last.1.max(e),
                _ => joined.push((s, e)),
            }
        }
        if expected.len() == joined.len() {
            assert_eq!(
                joined,
                expected,
                "ranges in {:?}",
                String::from_utf8_lossy(text)
            );
        }
    }
}

fn text_strategy() -> impl Strategy<Value = Vec<u8>> {
    let pool = pool();
    prop_oneof![
        4 => prop::collection::vec(prop::sample::select(pool), 0..40)
            .prop_map(|cs| cs.into_iter().collect::<String>().into_bytes()),
        1 => prop::collection::vec(any::<u8>(), 0..40),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, .. ProptestConfig::default() })]
    #[test]
    fn the_tokenizers_split_and_fold_text_as_fts5_does(
        texts in prop::collection::vec(text_strategy(), 1..30),
    ) {
        tokenizers_agree(&texts, "unicode61 remove_diacritics 2", |t, f| {
            gitsense_engine::index::unicode61::words(t, |a, b, c| f(a, b, c))
        }, true);
        tokenizers_agree(&texts, "trigram", |t, f| {
            gitsense_engine::index::unicode61::trigrams(t, |a, b, c| f(a, b, c))
        }, true);
    }
}

#[test]
fn every_character_folds_and_splits_as_fts5_does() {
    // Every codepoint of the first planes once, in runs with separators.
    let texts: Vec<Vec<u8>> = (0u32..0x3_0000)
        .filter_map(char::from_u32)
        .collect::<Vec<_>>()
        .chunks(64)
        .map(|cs| {
            cs.iter()
                .map(|c| format!("x{c}y {c} "))
                .collect::<String>()
                .into_bytes()
        })
        .collect();
    tokenizers_agree(
        &texts,
        "unicode61 remove_diacritics 2",
        |t, f| gitsense_engine::index::unicode61::words(t, |a, b, c| f(a, b, c)),
        false,
    );
}

/// `test_inst(t)`: FTS5's `xInst` list of the current row,
/// `phrase:column:offset;` each, the oracle of [`Matches::instances`].
mod inst {
    use rusqlite::{ffi, Connection};
    use std::ffi::{c_int, c_void};
    use std::fmt::Write;
    use std::ptr;

    unsafe extern "C" fn test_inst(
        api: *const ffi::Fts5ExtensionApi,
        fts: *mut ffi::Fts5Context,
        ctx: *mut ffi::sqlite3_context,
        _n: c_int,
        _v: *mut *mut ffi::sqlite3_value,
    ) {
        let api = &*api;
        let mut n: c_int = 0;
        (api.xInstCount.unwrap())(fts, &mut n);
        let mut s = String::new();
        for i in 0..n {
            let (mut p, mut c, mut o) = (0, 0, 0);
            (api.xInst.unwrap())(fts, i, &mut p, &mut c, &mut o);
            write!(s, "{p}:{c}:{o};").unwrap();
        }
        ffi::sqlite3_result_text(
            ctx,
            s.as_ptr().cast(),
            s.len() as c_int,
            ffi::SQLITE_TRANSIENT(),
        );
    }

    pub fn register(conn: &Connection) {
        // SAFETY: FTS5's documented way to its API (a pointer bound to
        // `SELECT fts5(?1)`), then one function without user data.
        unsafe {
            let db = conn.handle();
            let mut stmt: *mut ffi::sqlite3_stmt = ptr::null_mut();
            assert_eq!(
                ffi::sqlite3_prepare_v2(
                    db,
                    c"SELECT fts5(?1)".as_ptr(),
                    -1,
                    &mut stmt,
                    ptr::null_mut()
                ),
                ffi::SQLITE_OK
            );
            let mut api: *mut ffi::fts5_api = ptr::null_mut();
            ffi::sqlite3_bind_pointer(
                stmt,
                1,
                &mut api as *mut *mut ffi::fts5_api as *mut c_void,
                c"fts5_api_ptr".as_ptr(),
                None,
            );
            ffi::sqlite3_step(stmt);
            ffi::sqlite3_finalize(stmt);
            let create = (*api).xCreateFunction.unwrap();
            assert_eq!(
                create(
                    api,
                    c"test_inst".as_ptr(),
                    ptr::null_mut(),
                    Some(test_inst),
                    None
                ),
                ffi::SQLITE_OK
            );
        }
    }
}

/// An expression matches the rows SQLite's `MATCH` does, with the hits
/// `xInst` lists, and each phrase's row count; or the reader declines it.
/// Returns whether the reader answered.
fn expression_agrees(
    conn: &Connection,
    fts: &Fts5File<'_, Vec<u8>>,
    table: &str,
    expr: &str,
) -> bool {
    let parsed = match Expr::parse(expr, table) {
        Ok(p) => p,
        Err(e) => {
            assert_eq!(e.code, "reader.unsupported", "{expr}: {e}");
            return false;
        }
    };
    let found = parsed.evaluate(fts).unwrap();
    let mut s = conn
        .prepare_cached(&format!(
            "SELECT rowid, test_inst({table}) FROM {table} WHERE {table} MATCH ?1 ORDER BY rowid"
        ))
        .unwrap();
    let want: Vec<(i64, String)> = s
        .query_map([expr], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let rows: Vec<i64> = want.iter().map(|(r, _)| *r).collect();
    assert_eq!(found.rows(), &rows[..], "rows of {expr}");
    for (rowid, inst) in &want {
        let mine: String = found
            .instances(*rowid)
            .iter()
            .map(|(p, c, o)| format!("{p}:{c}:{o};"))
            .collect();
        assert_eq!(&mine, inst, "hits of {expr} in row {rowid}");
    }
    for (i, phrase) in gitsense_engine::plan::fts_phrases(expr).iter().enumerate() {
        let n: i64 = conn
            .query_row(
                &format!("SELECT count(*) FROM {table} WHERE {table} MATCH ?1"),
                [phrase],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(
            found.phrase_rows(i) as i64,
            n,
            "rows of phrase {phrase} of {expr}"
        );
    }
    true
}

/// Queries of many shapes: words, inflections, prefixes, phrases, OR,
/// exclusions, filters, code.
const PLANNED: &[&str] = &[
    "payment",
    "payments processing",
    "stripe lang:js",
    "\"form validation\"",
    "auth* -test",
    "token OR session",
    "in:messages role:user checkout",
    "retry backoff",
    "error handling",
    "react hooks useEffect",
    "async await",
    "database connection pool",
    "git rebase",
    "json parse",
    "test*",
    "c",
    "in:code-blocks function",
    "config file",
    "(api OR http) -client",
    "build system",
    "connect*",
    "user authentication flow",
    "how to",
];

#[test]
fn the_planners_expressions_match_as_fts5_matches_them() {
    let path = sample_index();
    let engine = gitsense_engine::Engine::open(&path).unwrap();
    let conn = Connection::open(&path).unwrap();
    inst::register(&conn);
    let file = SqlFile::open(std::fs::read(&path).unwrap()).unwrap();
    let mut answered = 0;
    let mut asked = 0;
    for q in PLANNED {
        let planned = engine
            .plan_search(q, &gitsense_engine::SearchOptions::default())
            .unwrap();
        for tp in &planned.plan().target_plans {
            let Some(sql) = &tp.sql else { continue };
            let table = match tp.target {
                gitsense_engine::query::ast::Target::Chats => "fts_chats",
                gitsense_engine::query::ast::Target::Messages => "fts_messages",
                gitsense_engine::query::ast::Target::CodeBlocks => "fts_code_blocks",
            };
            let fts = Fts5File::open(&file, table).unwrap();
            for expr in sql.fts.iter().chain(&sql.page_term_fts) {
                asked += 1;
                answered += usize::from(expression_agrees(&conn, &fts, table, expr));
            }
        }
    }
    assert!(
        asked > 40 && answered == asked,
        "{answered} of {asked} answered"
    );
}

/// A random expression over the random index's words.
fn expr_strategy() -> impl Strategy<Value = String> {
    let word = (0u16..120, any::<bool>(), 0u8..4).prop_map(|(w, prefix, len)| {
        let text = format!("w{}é{}", w % 97, "x".repeat(usize::from(len)));
        if prefix {
            format!("\"{}\"*", text.chars().take(3).collect::<String>())
        } else {
            format!("\"{text}\"")
        }
    });
    let phrase = (0u16..97, 0u16..97).prop_map(|(a, b)| format!("\"w{a}e w{b}é\""));
    let leaf = prop_oneof![4 => word, 1 => phrase];
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} AND {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} OR {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} NOT {b})")),
            (inner.clone(), inner.clone(), inner)
                .prop_map(|(a, b, c)| format!("{a} OR {b} AND {c}")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]
    #[test]
    fn random_expressions_match_as_fts5_matches_them(
        docs in prop::collection::vec(
            prop::collection::vec(prop_oneof![0u16..400, Just(7u16)], 0..60),
            1..80,
        ),
        exprs in prop::collection::vec(expr_strategy(), 1..12),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("random.db");
        random_index(&path, &docs, 300);
        let conn = Connection::open(&path).unwrap();
        inst::register(&conn);
        let file = SqlFile::open(std::fs::read(&path).unwrap()).unwrap();
        let fts = Fts5File::open(&file, "t").unwrap();
        for e in &exprs {
            prop_assert!(expression_agrees(&conn, &fts, "t", e), "{}", e);
        }
    }
}

/// A documentation site: this repository's own `docs/`, as the docs
/// importer reads it.
fn docs_index() -> std::path::PathBuf {
    static IDX: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    IDX.get_or_init(|| {
        let out = common::temp_dir().join("reader-docs.gsx");
        gitsense_import::build_with(&out, "docs:reader".into(), |w| {
            gitsense_import::docs::import(
                &common::repo_root().join("docs"),
                &gitsense_import::docs::DocsOptions::default(),
                w,
                &gitsense_import::no_progress(),
            )
        })
        .expect("the docs index builds");
        out
    })
    .clone()
}

/// A row's ranking record: its fields, from the chunk's blob.
fn ranking_record(
    file: &SqlFile<Vec<u8>>,
    table: &str,
    id: i64,
    cols: &[records::Col],
) -> Vec<i64> {
    let chunk = records::chunk_of(id);
    let row = file
        .row(table, chunk)
        .unwrap()
        .expect("the chunk's record row");
    let blob = row[1].as_bytes().unwrap();
    records::decode(chunk, blob, cols)
        .unwrap()
        .get(id)
        .unwrap()
        .to_vec()
}

/// Every row an expression matches scores what the ranking functions
/// give it in SQL, bit for bit: messages (`gs_message_rank`, and
/// `gs_message_section` with the phrases a row holds) and code blocks.
fn ranks_agree(path: &Path, queries: &[&str]) -> usize {
    use gitsense_engine::index::rank::{self, Scorer};
    let engine = gitsense_engine::Engine::open(path).unwrap();
    let conn = Connection::open(path).unwrap();
    let tally = rank::register(&conn).unwrap();
    let file = SqlFile::open(std::fs::read(path).unwrap()).unwrap();
    let averages: Vec<f64> = {
        let mut out = Vec::new();
        file.scan_tree(file.root("rank_stats").unwrap(), &mut |_, rec| {
            let row = gitsense_engine::index::sqlfile::decode_record(rec)?;
            out = row
                .iter()
                .map(|v| match v {
                    Value::Real(r) => *r,
                    Value::Int(i) => *i as f64,
                    _ => 0.0,
                })
                .collect();
            Ok(false)
        })
        .unwrap();
        out
    };
    let mut compared = 0;
    for q in queries {
        let planned = engine
            .plan_search(q, &gitsense_engine::SearchOptions::default())
            .unwrap();
        for tp in &planned.plan().target_plans {
            let Some(sql) = &tp.sql else { continue };
            let Some(expr) = &sql.fts else { continue };
            let (table, ranked) = match tp.target {
                gitsense_engine::query::ast::Target::Messages => ("fts_messages", "message_rank"),
                gitsense_engine::query::ast::Target::CodeBlocks => ("fts_code_blocks", "code_rank"),
                gitsense_engine::query::ast::Target::Chats => continue,
            };
            let fts = Fts5File::open(&file, table).unwrap();
            let found = Expr::parse(expr, table).unwrap().evaluate(&fts).unwrap();
            let (rows, per_col) = fts.totals().unwrap();
            let counts: Vec<i64> = (0..found_phrases(expr))
                .map(|i| found.phrase_rows(i) as i64)
                .collect();
            let scorer = Scorer::new(
                rows,
                per_col.iter().sum(),
                &counts,
                &sql.phrase_weights,
                None,
            );
            tally.begin(&sql.phrases, &sql.phrase_weights);
            let statement = if table == "fts_messages" {
                format!(
                    "SELECT fts_messages.rowid, gs_message_section(fts_messages, n.records, \
                     (SELECT avg_title_len FROM rank_stats), (SELECT avg_keywords_len FROM rank_stats), 1.0) \
                     FROM fts_messages JOIN {ranked} n ON n.chunk = (fts_messages.rowid >> 8) \
                     WHERE fts_messages MATCH ?1 ORDER BY fts_messages.rowid"
                )
            } else {
                format!(
                    "SELECT fts_code_blocks.rowid, gs_code_rank(fts_code_blocks, k.records) \
                     FROM fts_code_blocks JOIN {ranked} k ON k.chunk = (fts_code_blocks.rowid >> 8) \
                     WHERE fts_code_blocks MATCH ?1 ORDER BY fts_code_blocks.rowid"
                )
            };
            let want: Vec<(i64, f64)> = conn
                .prepare(&statement)
                .unwrap()
                .query_map([expr], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let sections = tally.take_sections();
            tally.end();
            assert_eq!(
                found.rows(),
                &want.iter().map(|w| w.0).collect::<Vec<_>>()[..],
                "{q}"
            );
            for (i, &(rowid, rank)) in want.iter().enumerate() {
                let hits = found.instances(rowid);
                if table == "fts_messages" {
                    let rec = ranking_record(&file, ranked, rowid, &records::MESSAGE_FIELDS);
                    let (mine, held) = scorer.section(
                        rec[0],
                        [rec[1], rec[2], rec[3]],
                        [averages[0], averages[1]],
                        1.0,
                        hits,
                    );
                    assert_eq!(
                        mine.to_bits(),
                        rank.to_bits(),
                        "{q}: row {rowid}: {mine} against {rank}"
                    );
                    assert_eq!(sections[i].id, rowid);
                    assert_eq!(sections[i].page, rec[0]);
                    assert_eq!(sections[i].phrases, held, "{q}: row {rowid}: phrases held");
                    let plain = scorer.message(
                        rec[0],
                        [rec[1], rec[2], rec[3]],
                        [averages[0], averages[1]],
                        hits,
                    );
                    assert_eq!(plain.to_bits(), rank.to_bits());
                } else {
                    let rec = ranking_record(&file, ranked, rowid, &records::CODE_FIELDS);
                    let mine = scorer.code_block(rec[2], hits);
                    assert_eq!(mine.to_bits(), rank.to_bits(), "{q}: code block {rowid}");
                }
                compared += 1;
            }
        }
    }
    compared
}

/// The number of phrases of an expression the planner wrote.
fn found_phrases(expr: &str) -> usize {
    gitsense_engine::plan::fts_phrases(expr).len()
}

#[test]
fn every_matched_row_ranks_as_the_sql_ranking_functions_rank_it() {
    let chats = ranks_agree(&sample_index(), PLANNED);
    let docs = ranks_agree(&docs_index(), DOCS_QUERIES);
    assert!(
        chats > 200 && docs > 200,
        "{chats} messages of the sample, {docs} sections of the docs"
    );
}

/// `snippet()` of every matched row, for the columns and sizes the engine
/// asks for and a few more, next to the reader's.
fn snippets_agree(path: &Path, queries: &[&str]) -> usize {
    use gitsense_engine::index::doclists::tokenizer_of;
    use gitsense_engine::index::snippet::{snippet, SnippetArgs};
    let engine = gitsense_engine::Engine::open(path).unwrap();
    let conn = Connection::open(path).unwrap();
    let file = SqlFile::open(std::fs::read(path).unwrap()).unwrap();
    let mut compared = 0;
    for q in queries {
        let planned = engine
            .plan_search(q, &gitsense_engine::SearchOptions::default())
            .unwrap();
        for tp in &planned.plan().target_plans {
            let Some(sql) = &tp.sql else { continue };
            let Some(expr) = &sql.fts else { continue };
            let (table, content, columns) = match tp.target {
                gitsense_engine::query::ast::Target::Messages => {
                    ("fts_messages", "message_text", 1..4)
                }
                gitsense_engine::query::ast::Target::CodeBlocks => {
                    ("fts_code_blocks", "code_text", 1..2)
                }
                gitsense_engine::query::ast::Target::Chats => ("fts_chats", "chats", 5..6),
            };
            let fts = Fts5File::open(&file, table).unwrap();
            let parsed = Expr::parse(expr, table).unwrap();
            let loaded = parsed.load(&fts).unwrap();
            let rows: Vec<i64> = loaded.matches().rows().to_vec();
            let mut s = conn
                .prepare(&format!(
                    "SELECT snippet({table}, ?1, char(57344), char(57345), '...', ?2) FROM {table} WHERE {table} MATCH ?3 AND rowid = ?4"
                ))
                .unwrap();
            // The first rows and the last (debug builds tokenize slowly).
            let n = rows.len();
            for &rowid in rows
                .iter()
                .take(8)
                .chain(rows.iter().skip(n.saturating_sub(4).max(8)))
            {
                let hits = loaded.row_hits(rowid).expect("the row matches");
                let row = file.row(content, rowid).unwrap().unwrap();
                let texts: Vec<&[u8]> = columns
                    .clone()
                    .map(|c| row.get(c).and_then(Value::as_bytes).unwrap_or(b""))
                    .collect();
                let asked: &[(i64, i64)] = if texts.len() == 3 {
                    &[(1, 12), (1, 30), (0, 64), (-1, 8), (2, 5), (0, 1), (1, 0)]
                } else {
                    &[(0, 12), (0, 64), (-1, 8), (0, 1)]
                };
                for &(column, tokens) in asked {
                    let want: Option<String> = s
                        .query_row(rusqlite::params![column, tokens, expr, rowid], |r| r.get(0))
                        .unwrap();
                    let mine = snippet(
                        &texts,
                        tokenizer_of(table),
                        &hits,
                        &parsed.phrase_sizes(),
                        SnippetArgs {
                            column,
                            open: "\u{E000}",
                            close: "\u{E001}",
                            ellipsis: "...",
                            tokens,
                        },
                    )
                    .map(|b| String::from_utf8(b).unwrap());
                    assert_eq!(
                        mine, want,
                        "{q}: {table} row {rowid}, column {column}, {tokens} tokens"
                    );
                    compared += 1;
                }
            }
        }
    }
    compared
}

#[test]
fn snippets_are_fts5s_byte_for_byte() {
    let chats = snippets_agree(&sample_index(), PLANNED);
    let docs = snippets_agree(
        &docs_index(),
        &[
            "lazy loading",
            "publish",
            "search box",
            "offline copy",
            "snippet*",
            "\"hot pages\"",
            "ranking",
        ],
    );
    assert!(
        chats > 1000 && docs > 500,
        "{chats} snippets of the sample, {docs} of the docs"
    );
}

/// The reader's page of every target the planner marks for it equals
/// SQL's: ids, ranks bit for bit, phrases held, and the number of
/// results; at the first page and a later one.
fn pages_agree(path: &Path, queries: &[&str]) -> (usize, usize) {
    use gitsense_engine::index::rank;
    use gitsense_engine::reader::Reader;
    let engine = gitsense_engine::Engine::open(path).unwrap();
    let conn = Connection::open(path).unwrap();
    let tally = rank::register(&conn).unwrap();
    let reader = Reader::open(std::fs::read(path).unwrap()).unwrap();
    let (mut marked, mut all) = (0, 0);
    for q in queries {
        for mode in [
            gitsense_engine::plan::QueryMode::Strict,
            gitsense_engine::plan::QueryMode::Box,
        ] {
            let opts = gitsense_engine::SearchOptions {
                mode,
                ..Default::default()
            };
            let Ok(planned) = engine.plan_search(q, &opts) else {
                continue;
            };
            for tp in &planned.plan().target_plans {
                let Some(sql) = &tp.sql else { continue };
                all += 1;
                if sql.reader.is_none() {
                    continue;
                }
                marked += 1;
                for (limit, offset) in [(10, 0), (7, 5), (3, 1000)] {
                    let (want, want_total) =
                        gitsense_engine::search::ranked_page(&conn, &tally, sql, limit, offset)
                            .unwrap();
                    let (mine, total) = reader.ranked_page(sql, limit, offset).unwrap();
                    // A target not counted by its ranking (chats, by FTS5's
                    // own bm25()) is counted apart; the executor compares
                    // those counts (`the_readers_results_are_the_engines`).
                    let want_total = if sql.counted_by_rank {
                        want_total
                    } else {
                        total
                    };
                    assert_eq!(
                        total, want_total,
                        "{q} ({mode:?}): {:?}: results",
                        tp.target
                    );
                    let key =
                        |r: &gitsense_engine::search::Ranked| (r.id, r.rank.to_bits(), r.phrases);
                    assert_eq!(
                        mine.iter().map(key).collect::<Vec<_>>(),
                        want.iter().map(key).collect::<Vec<_>>(),
                        "{q} ({mode:?}): {:?}: page at {offset}",
                        tp.target
                    );
                }
            }
        }
    }
    (marked, all)
}

const DOCS_QUERIES: &[&str] = &[
    "lazy loading",
    "publish",
    "search box",
    "offline copy",
    "range requests",
    "ranking",
    "index format",
    "writable index",
    "snippet*",
    "\"hot pages\"",
    "chat export",
    "manifest",
    "query syntax",
    "typo",
    "storage opfs",
    "how to install",
    "the",
    "search",
    "page",
    "budget time",
    "-test index",
    "worker OR thread",
    "split wasm module",
    // Nothing matches every word: typos corrected, then any word.
    "publsh manfest",
    "lazzy loadng",
    "offlne",
    "zzqxv ranking",
    "zzqxv",
];

#[test]
fn the_readers_pages_are_sqls() {
    let (marked, all) = pages_agree(&sample_index(), PLANNED);
    assert!(
        marked >= 20,
        "{marked} of {all} targets of the sample are the reader's"
    );
    let (marked, all) = pages_agree(&docs_index(), DOCS_QUERIES);
    assert!(
        marked >= 30,
        "{marked} of {all} targets of the docs are the reader's"
    );
}

/// The results object of every query the reader answers is the engine's,
/// byte for byte; returns (answered, asked).
fn results_agree(path: &Path, queries: &[&str]) -> (usize, usize) {
    use gitsense_engine::plan::{Highlight, QueryMode};
    use gitsense_engine::reader::Reader;
    let mut engine = gitsense_engine::Engine::open(path).unwrap();
    engine.set_time_budget(None);
    let mut reader = Reader::open(std::fs::read(path).unwrap()).unwrap();
    let (mut answered, mut asked) = (0, 0);
    for q in queries {
        for (mode, per_page, page, highlight, content, snippet_tokens) in [
            (QueryMode::Box, None, 1, Highlight::default(), false, None),
            (
                QueryMode::Strict,
                Some(5),
                2,
                Highlight::Raw,
                true,
                Some(20),
            ),
            (QueryMode::Box, Some(3), 1, Highlight::None, false, Some(64)),
        ] {
            let opts = gitsense_engine::SearchOptions {
                mode,
                per_page,
                page,
                highlight,
                include_content: content,
                snippet_tokens,
                ..Default::default()
            };
            let want = engine.search(q, &opts);
            asked += 1;
            match reader.search(q, &opts) {
                Ok(mine) => {
                    let want = want.unwrap_or_else(|e| {
                        panic!("{q}: the engine failed ({e}) where the reader answered")
                    });
                    assert_eq!(
                        gitsense_engine::search::results_json(&mine).unwrap(),
                        gitsense_engine::search::results_json(&want).unwrap(),
                        "{q} ({opts:?})"
                    );
                    answered += 1;
                }
                Err(e) if e.code == "reader.unsupported" => {}
                Err(e) => assert_eq!(
                    Some(&e),
                    want.as_ref().err(),
                    "{q}: the reader failed otherwise"
                ),
            }
        }
    }
    (answered, asked)
}

#[test]
fn the_readers_results_are_the_engines_byte_for_byte() {
    let (answered, asked) = results_agree(&sample_index(), PLANNED);
    assert!(
        answered * 2 >= asked,
        "the reader answered {answered} of {asked} searches of the sample"
    );
    let (answered, asked) = results_agree(&docs_index(), DOCS_QUERIES);
    assert!(
        answered * 4 >= asked * 3,
        "the reader answered {answered} of {asked} searches of the docs"
    );
}

/// A file whose pages are fetched in rounds, as the browser fetches a
/// lazily read index: a read of a page not fetched yet fails with
/// `PAGE_MISSING` and the page is collected for the next round.
struct Rounds {
    bytes: std::rc::Rc<Vec<u8>>,
    page_size: u64,
    have: std::rc::Rc<std::cell::RefCell<std::collections::BTreeSet<u32>>>,
    missing: std::rc::Rc<std::cell::RefCell<std::collections::BTreeSet<u32>>>,
}

impl gitsense_engine::index::pagevfs::PageSource for Rounds {
    fn size(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> gitsense_engine::Result<()> {
        let first = (offset / self.page_size) as u32;
        let last = ((offset + buf.len() as u64 - 1) / self.page_size) as u32;
        let lacking: Vec<u32> = (first..=last)
            .filter(|p| !self.have.borrow().contains(p))
            .collect();
        if !lacking.is_empty() {
            self.missing.borrow_mut().extend(lacking);
            return Err(gitsense_engine::Error::new(
                gitsense_engine::index::pagevfs::PAGE_MISSING,
                "not fetched yet",
            ));
        }
        let at = offset as usize;
        buf.copy_from_slice(&self.bytes[at..at + buf.len()]);
        Ok(())
    }
}

/// Every query the reader answers, attempted over pages fetched in
/// rounds from the published hot pages on: the engine's results byte for
/// byte; returns (answered, most rounds, pages fetched, pages a plain
/// reader search reads), summed over the queries.
fn attempts_agree(path: &Path, queries: &[&str]) -> (usize, usize, usize, usize) {
    use gitsense_engine::reader::Reader;
    use std::collections::BTreeSet;
    let mut engine = gitsense_engine::Engine::open(path).unwrap();
    engine.set_time_budget(None);
    let bytes = std::rc::Rc::new(std::fs::read(path).unwrap());
    let page_size = u64::from(u16::from_be_bytes([bytes[16], bytes[17]]));
    // Published hot pages are 1-based; the source counts from 0.
    let hot: BTreeSet<u32> = gitsense_publish::hot::hot_pages(path)
        .unwrap()
        .pages
        .iter()
        .map(|p| p - 1)
        .collect();
    let (mut answered, mut most, mut fetched, mut plain) = (0, 0, 0, 0);
    for q in queries {
        for opts in [
            gitsense_engine::SearchOptions::default(),
            gitsense_engine::SearchOptions {
                mode: gitsense_engine::plan::QueryMode::Strict,
                per_page: Some(5),
                page: 2,
                ..Default::default()
            },
        ] {
            let have = std::rc::Rc::new(std::cell::RefCell::new(hot.clone()));
            let missing = std::rc::Rc::default();
            // Opening reads what every search reads: fetched at once.
            let mut reader = Reader::open(Rounds {
                bytes: bytes.clone(),
                page_size,
                have: have.clone(),
                missing: std::rc::Rc::clone(&missing),
            })
            .or_else(|_| {
                let m: BTreeSet<u32> = std::mem::take(&mut *missing.borrow_mut());
                have.borrow_mut().extend(m);
                Reader::open(Rounds {
                    bytes: bytes.clone(),
                    page_size,
                    have: have.clone(),
                    missing: std::rc::Rc::clone(&missing),
                })
            })
            .unwrap();
            let opened = have.borrow().len();
            let planned = reader.plan_search(q, &opts).unwrap();
            let mut rounds = 0;
            let got = loop {
                match reader.attempt(&planned) {
                    Ok(Some(r)) => break Some(r),
                    Ok(None) => {
                        let m: BTreeSet<u32> = std::mem::take(&mut *missing.borrow_mut());
                        assert!(
                            !m.is_empty(),
                            "{q}: an attempt missed no page yet gave no results"
                        );
                        have.borrow_mut().extend(m);
                        rounds += 1;
                        assert!(rounds <= 40, "{q}: attempts never end");
                    }
                    Err(e) if e.code == "reader.unsupported" => break None,
                    Err(e) => panic!("{q}: {e}"),
                }
            };
            let Some(got) = got else { continue };
            let want = engine.search(q, &opts).unwrap();
            assert_eq!(
                gitsense_engine::search::results_json(&got).unwrap(),
                gitsense_engine::search::results_json(&want).unwrap(),
                "{q} ({opts:?})"
            );
            answered += 1;
            most = most.max(rounds);
            fetched += have.borrow().len() - opened;
            // What a search reading page by page reads beyond the hot
            // pages: the least any batching could fetch.
            let reads = std::rc::Rc::new(std::cell::RefCell::new(BTreeSet::new()));
            struct Traced(
                std::rc::Rc<Vec<u8>>,
                std::rc::Rc<std::cell::RefCell<BTreeSet<u64>>>,
                u64,
            );
            impl gitsense_engine::index::pagevfs::PageSource for Traced {
                fn size(&self) -> u64 {
                    self.0.len() as u64
                }
                fn read_at(&mut self, buf: &mut [u8], offset: u64) -> gitsense_engine::Result<()> {
                    self.1.borrow_mut().insert(offset / self.2);
                    buf.copy_from_slice(&self.0[offset as usize..offset as usize + buf.len()]);
                    Ok(())
                }
            }
            let mut traced = Reader::open(Traced(bytes.clone(), reads.clone(), page_size)).unwrap();
            reads.borrow_mut().clear();
            traced.search(q, &opts).unwrap();
            plain += reads
                .borrow()
                .iter()
                .filter(|&&p| !hot.contains(&(p as u32)))
                .count();
        }
    }
    (answered, most, fetched, plain)
}

#[test]
fn attempts_fetch_a_searchs_pages_in_few_rounds_and_answer_as_the_engine() {
    for path in [sample_index(), docs_index()] {
        let queries = if path == sample_index() {
            PLANNED
        } else {
            DOCS_QUERIES
        };
        let (answered, most, fetched, plain) = attempts_agree(&path, queries);
        eprintln!("{}: {answered} answered, at most {most} rounds, {fetched} pages fetched, {plain} read page by page", path.display());
        assert!(
            answered >= queries.len(),
            "{answered} of {} answered",
            2 * queries.len()
        );
        // A stage's pages come in a round (the inner pages are hot): the
        // doclists, the rows returned, their overflow pages; for a query
        // nothing matches, the typo_terms leaves and the corrected words'
        // doclists too.
        assert!(most <= 5, "{most} rounds");
        // Fetching ahead (overflow chains, doclists over several leaves)
        // asks for little that reading page by page would not read.
        assert!(
            fetched <= plain + plain / 10 + 4,
            "{fetched} pages fetched, {plain} read"
        );
    }
}
