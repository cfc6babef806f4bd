//! Facets (GitSense's meta-insights, `insight-field:` and the `facets`
//! option) on the real GitSense sample database: every count equals a
//! direct SQL count over the database the index was built from, or the
//! engine's own filter count for that value; words and filters narrow
//! them; the time budget bounds them; bad requests are structured errors.

mod common;
use common::*;
use gitsense_engine::facets::{Facet, MAX_FACET_VALUES};
use gitsense_engine::search::Engine;
use gitsense_engine::{SearchOptions, SearchResults};
use rusqlite::Connection;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// Messages the importer keeps: live, in a live chat, searchable.
const LIVE: &str = "m.deleted = 0 AND c.deleted = 0
    AND coalesce(json_extract(m.meta, '$.searchable'), 1) NOT IN (0, 'false')";

fn raw_db() -> Connection {
    Connection::open(sample_db()).expect("sample database opens")
}

fn facet<'a>(r: &'a SearchResults, field: &str, target: &str) -> &'a Facet {
    r.facets
        .as_ref()
        .expect("facets were asked for")
        .iter()
        .find(|f| f.field == field && f.target == target)
        .unwrap_or_else(|| panic!("no {field} facet on {target}"))
}

/// A facet's counts by value text.
fn by_value(f: &Facet) -> BTreeMap<String, u64> {
    f.values
        .iter()
        .map(|v| {
            let text = match &v.value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (text, v.count)
        })
        .collect()
}

/// Rows of (value, count) from a direct SQL statement.
fn sql_counts(conn: &Connection, sql: &str) -> BTreeMap<String, u64> {
    let mut s = conn.prepare(sql).unwrap();
    let rows = s
        .query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
        })
        .unwrap();
    rows.map(Result::unwrap).collect()
}

/// The facet shows the most frequent values (ties by value) and counts
/// the rest in `otherValues`.
fn assert_same_counts(f: &Facet, expected: &BTreeMap<String, u64>) {
    let got = by_value(f);
    assert_eq!(
        f.values.len() + f.other_values as usize,
        expected.len(),
        "{}: distinct values",
        f.field
    );
    assert!(f.values.len() <= MAX_FACET_VALUES);
    for (value, n) in &got {
        assert_eq!(expected.get(value), Some(n), "{}: {value}", f.field);
    }
    let least_shown = f.values.last().map_or(0, |v| v.count);
    let hidden_max = expected
        .iter()
        .filter(|(v, _)| !got.contains_key(*v))
        .map(|(_, n)| *n)
        .max()
        .unwrap_or(0);
    assert!(
        hidden_max <= least_shown,
        "{}: most frequent first",
        f.field
    );
}

#[test]
fn array_metadata_counts_each_keyword_once_per_message_as_sql_does() {
    let r = search(
        &sample_engine(),
        "profile:meta-insights insight-field:keywords:array",
    );
    let expected = sql_counts(
        &raw_db(),
        &format!(
            "SELECT j.value, count(DISTINCT m.id) FROM messages m JOIN chats c ON c.id = m.chat_id,
                json_each(m.meta, '$.extracted_metadata.keywords') j
             WHERE {LIVE} AND j.type = 'text' GROUP BY j.value"
        ),
    );
    assert!(expected.len() > 20, "the sample has keywords");
    let f = facet(&r, "keywords", "messages");
    assert_eq!(f.truncated, None);
    assert_same_counts(f, &expected);
}

#[test]
fn words_and_filters_narrow_the_records_counted() {
    let e = sample_engine();
    let db = raw_db();
    // Scalar metadata of the overviews of payment files.
    let r = search(
        &e,
        "payment profile:meta-insights insight-field:file_extension:string msg-type:tiny-overview",
    );
    let expected = sql_counts(
        &db,
        &format!(
            "SELECT json_extract(m.meta, '$.extracted_metadata.file_extension'), count(*)
             FROM messages m JOIN chats c ON c.id = m.chat_id
             WHERE {LIVE} AND m.type GLOB 'tiny-overview::*'
               AND m.id IN (SELECT rowid FROM fts_messages WHERE fts_messages MATCH 'payment')
               AND json_type(m.meta, '$.extracted_metadata.file_extension') = 'text'
             GROUP BY 1"
        ),
    );
    assert!(!expected.is_empty());
    assert_same_counts(facet(&r, "file_extension", "messages"), &expected);
    assert_eq!(
        expected.values().sum::<u64>(),
        r.total_counts.messages,
        "every matching overview has an extension"
    );

    // Message types and roles of the messages that say "payment".
    let opts = SearchOptions {
        facets: vec!["msg-type".into(), "role".into()],
        ..Default::default()
    };
    let r = search_with(&e, "payment", opts);
    let matching = format!(
        "FROM messages m JOIN chats c ON c.id = m.chat_id WHERE {LIVE}
           AND m.id IN (SELECT rowid FROM fts_messages WHERE fts_messages MATCH 'payment')"
    );
    let types = sql_counts(
        &db,
        &format!("SELECT m.type, count(*) {matching} GROUP BY 1"),
    );
    assert_same_counts(facet(&r, "msg-type", "messages"), &types);
    assert_eq!(types.values().sum::<u64>(), r.total_counts.messages);
    let roles = sql_counts(
        &db,
        &format!("SELECT m.role, count(*) {matching} GROUP BY 1"),
    );
    assert_same_counts(facet(&r, "role", "messages"), &roles);
    // Roles and message types do not exist on chats.
    assert!(r
        .facets
        .as_ref()
        .unwrap()
        .iter()
        .all(|f| f.target != "chats"));
}

#[test]
fn each_value_counts_what_its_own_filter_finds() {
    let e = sample_engine();
    let opts = SearchOptions {
        facets: vec!["chat-type".into(), "lang".into(), "repo".into()],
        ..Default::default()
    };
    for q in ["auth*", "payment OR session", "in:chats README"] {
        let r = search_with(&e, q, opts.clone());
        let mut checked = 0;
        for f in r.facets.as_ref().unwrap() {
            let filter = match f.field.as_str() {
                "chat-type" => "chat-type",
                "lang" => "lang",
                _ => "repo",
            };
            for v in &f.values {
                let value = v.value.as_str().unwrap();
                let narrowed = search(&e, &format!("{q} {filter}:\"{value}\""));
                let n = match f.target.as_str() {
                    "chats" => narrowed.total_counts.chats,
                    "messages" => narrowed.total_counts.messages,
                    _ => narrowed.total_counts.code_blocks,
                };
                assert_eq!(n, v.count, "{q}: {} {value} on {}", f.field, f.target);
                checked += 1;
            }
        }
        assert!(checked > 2, "{q}: values checked");
    }
}

#[test]
fn git_path_facets_count_directories() {
    let e = sample_engine();
    let r = search(
        &e,
        "profile:meta-insights insight-field:git-path msg-type:git-blob",
    );
    // The same count from the index's own rows.
    let conn = Connection::open(sample_index()).unwrap();
    let mut s = conn
        .prepare("SELECT file_path FROM messages WHERE type = 'git-blob' AND coalesce(file_path, '') <> ''")
        .unwrap();
    let mut expected: BTreeMap<String, u64> = BTreeMap::new();
    for p in s.query_map([], |r| r.get::<_, String>(0)).unwrap() {
        let p = p.unwrap();
        let dir = p.rsplit_once('/').map_or(".", |(d, _)| d).to_string();
        *expected.entry(dir).or_default() += 1;
    }
    assert!(expected.len() > 2, "files in several directories");
    assert_same_counts(facet(&r, "git-path", "messages"), &expected);
}

#[test]
fn facets_are_part_of_the_results_object_only_when_asked_for() {
    let e = sample_engine();
    let plain = as_json(&search(&e, "payment"));
    assert!(plain.get("facets").is_none());
    let r = as_json(&search_with(
        &e,
        "payment",
        SearchOptions {
            facets: vec!["lang".into()],
            ..Default::default()
        },
    ));
    // The five keys of the contract are unchanged beside it.
    for key in ["searchCriteria", "pagination", "totalCounts", "results"] {
        assert_eq!(r[key], plain[key], "{key}");
    }
    let facets = r["facets"].as_array().unwrap();
    assert_eq!(facets.len(), 3, "one per target: {facets:?}");
    assert!(facets.iter().all(|f| f["field"] == "lang"));
    let messages = facets.iter().find(|f| f["target"] == "messages").unwrap();
    assert!(messages["values"][0]["count"].as_u64().unwrap() > 0);
}

#[test]
fn a_facet_the_targets_lack_is_a_warning() {
    let r = search_with(
        &sample_engine(),
        "in:chats README",
        SearchOptions {
            facets: vec!["role".into(), "keywords:array".into()],
            ..Default::default()
        },
    );
    assert_eq!(r.facets.as_deref(), Some(&[][..]));
    let warnings = r.search_criteria["warnings"].to_string();
    assert!(
        warnings.contains("role facet was not counted"),
        "{warnings}"
    );
    assert!(warnings.contains("keywords facet"), "{warnings}");
}

fn ticking_clock() -> f64 {
    static NOW: AtomicU64 = AtomicU64::new(0);
    NOW.fetch_add(1, Ordering::Relaxed) as f64
}

#[test]
fn the_time_budget_bounds_the_counting() {
    let mut e: Engine = sample_engine();
    e.set_clock(ticking_clock);
    e.set_time_budget(Some(0.0));
    let r = search(
        &e,
        "profile:meta-insights insight-field:keywords:array,chat-type",
    );
    assert_eq!(r.truncated, Some(true));
    assert!(r.hint.as_deref().unwrap_or("").contains("counting facets"));
    let f = facet(&r, "keywords", "messages");
    assert_eq!(f.truncated, Some(true));
}

#[test]
fn bad_facet_requests_are_structured_errors_with_positions() {
    let e = sample_engine();
    let err = |q: &str, opts: SearchOptions| e.search(q, &opts).unwrap_err();
    let d = SearchOptions::default;
    let x = err("profile:meta-insights insight-field:keywords:list", d());
    assert_eq!((x.code.as_str(), x.position), ("query.bad_facet", Some(45)));
    let x = err("x insight-field:\"a b\"", d());
    assert_eq!((x.code.as_str(), x.position), ("query.bad_facet", Some(17)));
    let x = err("x insight-field:lang,a.b", d());
    assert_eq!((x.code.as_str(), x.position), ("query.bad_facet", Some(21)));
    let x = err("x insight-field:lang:number", d());
    assert_eq!((x.code.as_str(), x.position), ("query.bad_facet", Some(21)));
    let x = err("x -insight-field:lang", d());
    assert_eq!(x.code, "query.bad_negation");
    let x = err("profile:meta-insights payment", d());
    assert_eq!(x.code, "query.insight_field_required");
    let opts = SearchOptions {
        facets: vec!["purpose:colour".into()],
        ..Default::default()
    };
    assert_eq!(err("payment", opts).code, "options.bad_facet");
    let opts = SearchOptions {
        facets: (0..20).map(|i| format!("field{i}")).collect(),
        ..Default::default()
    };
    assert_eq!(err("payment", opts).code, "query.too_complex");
}

#[test]
fn text_formats_list_each_facet_on_a_line() {
    use gitsense_engine::format::{render, Format};
    let r = search(
        &sample_engine(),
        "payment profile:meta-insights insight-field:role",
    );
    let roles = facet(&r, "role", "messages");
    let first = &roles.values[0];
    let line = format!(
        "facet role (messages): {} {}",
        first.value.as_str().unwrap(),
        first.count
    );
    for f in [Format::Terse, Format::Verbose] {
        assert!(render(&r, f, None).contains(&line), "{f:?}");
    }
    assert!(render(&r, Format::Markdown, None).contains(&format!("## Facets\n\n- {line}")));
}
