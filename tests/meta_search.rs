//! GitSense's meta-search (`analyzer:ID`, `meta:FIELD:TYPE=VALUE` and
//! `!=`) on the real GitSense sample database: every count equals a direct
//! SQL count over the analyzer metadata of the database the index was
//! built from; the filters combine with words and each other; bad filters
//! are structured errors with positions.

mod common;
use common::*;
use gitsense_engine::SearchOptions;
use rusqlite::Connection;

/// Messages the importer keeps: live, in a live chat, searchable.
const LIVE: &str = "m.deleted = 0 AND c.deleted = 0
    AND coalesce(json_extract(m.meta, '$.searchable'), 1) NOT IN (0, 'false')";

fn sql_count(condition: &str) -> u64 {
    let conn = Connection::open(sample_db()).unwrap();
    let sql = format!(
        "SELECT count(DISTINCT m.id) FROM messages m JOIN chats c ON c.id = m.chat_id WHERE {LIVE} AND {condition}"
    );
    conn.query_row(&sql, [], |r| r.get::<_, i64>(0)).unwrap() as u64
}

fn messages(q: &str) -> u64 {
    let e = sample_engine();
    let opts = SearchOptions {
        per_page: Some(1000),
        ..Default::default()
    };
    let r = search_with(&e, q, opts);
    assert_eq!(
        r.results.messages.len() as u64,
        r.total_counts.messages,
        "{q}: one page"
    );
    r.total_counts.messages
}

const META: &str = "m.meta -> '$.extracted_metadata'";

#[test]
fn each_type_counts_what_sql_counts() {
    let cases = [
        (
            "meta:is_compliant:boolean=true",
            format!("json_type({META}, '$.is_compliant') = 'true'"),
        ),
        (
            "meta:is_compliant:boolean!=true",
            format!("json_type({META}, '$.is_compliant') = 'false'"),
        ),
        (
            "meta:violation_count:number=0",
            format!("json_type({META}, '$.violation_count') IN ('integer', 'real') AND {META} ->> '$.violation_count' = 0"),
        ),
        (
            "meta:max_severity:string=critical",
            format!("lower({META} ->> '$.max_severity') = 'critical' AND json_type({META}, '$.max_severity') = 'text'"),
        ),
        (
            "meta:max_severity:string!=critical",
            format!("lower({META} ->> '$.max_severity') <> 'critical' AND json_type({META}, '$.max_severity') = 'text'"),
        ),
        (
            "meta:file_extension:string=j*",
            format!("lower({META} ->> '$.file_extension') GLOB 'j*' AND json_type({META}, '$.file_extension') = 'text'"),
        ),
        (
            "meta:keywords:array=payvault",
            format!("EXISTS (SELECT 1 FROM json_each({META}, '$.keywords') j WHERE lower(j.value) = 'payvault')"),
        ),
        (
            "meta:keywords:array=payvault||express",
            format!("EXISTS (SELECT 1 FROM json_each({META}, '$.keywords') j WHERE lower(j.value) IN ('payvault', 'express'))"),
        ),
        (
            "meta:keywords:array=payvault&&express",
            format!(
                "EXISTS (SELECT 1 FROM json_each({META}, '$.keywords') j WHERE lower(j.value) = 'payvault')
                 AND EXISTS (SELECT 1 FROM json_each({META}, '$.keywords') j WHERE lower(j.value) = 'express')"
            ),
        ),
    ];
    for (query, condition) in cases {
        let expected = sql_count(&condition);
        assert!(expected > 0, "{query}: the sample has such messages");
        assert_eq!(messages(query), expected, "{query}");
    }
}

#[test]
fn analyzer_ids_select_their_messages_and_combine_with_words_and_filters() {
    assert_eq!(
        messages("analyzer:tiny-overview"),
        sql_count("m.type GLOB 'tiny-overview::*'")
    );
    // The profile's own filter keeps git files (chat type git-blob).
    let q = "profile:meta-search analyzer:simple-comment-accuracy-reviewer meta:has_accuracy_issues:boolean=true";
    let expected = sql_count(&format!(
        "c.type = 'git-blob' AND m.type GLOB 'simple-comment-accuracy-reviewer::*'
         AND json_type({META}, '$.has_accuracy_issues') = 'true'"
    ));
    assert!(expected > 0);
    assert_eq!(messages(q), expected);
    let with_word = "session analyzer:tiny-overview meta:file_extension:string=js";
    let expected = sql_count(&format!(
        "m.type GLOB 'tiny-overview::*' AND lower({META} ->> '$.file_extension') = 'js'
         AND m.id IN (SELECT rowid FROM fts_messages WHERE fts_messages MATCH 'session')"
    ));
    assert!(expected > 0);
    assert_eq!(messages(with_word), expected);
    // Excluding an analyzer.
    assert_eq!(
        messages("meta:file_extension:string=js -analyzer:tiny-overview"),
        sql_count(&format!(
            "NOT m.type GLOB 'tiny-overview::*' AND lower({META} ->> '$.file_extension') = 'js'
             AND json_type({META}, '$.file_extension') = 'text'"
        ))
    );
}

#[test]
fn meta_filters_apply_to_messages_only() {
    let r = search(&sample_engine(), "meta:is_compliant:boolean=true");
    assert_eq!(r.total_counts.chats, 0);
    assert!(r.search_criteria["skippedTargets"]["chats"]
        .as_str()
        .unwrap()
        .contains("meta:"));
    assert_eq!(r.search_criteria["metaFilters"][0]["field"], "is_compliant");
}

#[test]
fn bad_meta_filters_are_structured_errors_with_positions() {
    let e = sample_engine();
    for (q, code, at) in [
        ("x meta:purpose", "query.bad_meta", 7),
        ("x meta:n:colour=1", "query.bad_meta", 9),
        ("x meta:n:number=1||two", "query.bad_meta", 19),
        ("x meta:ok:boolean=yes", "query.bad_meta", 18),
        ("x meta:k:string=a&&b", "query.bad_meta", 16),
        ("x meta:\"a b:string=x\"", "query.bad_meta", 8),
        ("x -meta:k:string=a", "query.bad_negation", 2),
    ] {
        let err = e.search(q, &SearchOptions::default()).unwrap_err();
        assert_eq!((err.code.as_str(), err.position), (code, Some(at)), "{q}");
    }
}
