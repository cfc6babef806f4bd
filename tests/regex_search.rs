//! `option:regex` on the real GitSense sample database: the results are
//! exactly the rows whose text the pattern matches (checked by matching
//! every row of the index here), literal words narrow the candidates
//! through FTS5 without losing a match, a pattern without words is a
//! scan under the time budget, and bad patterns are structured errors.

mod common;
use common::*;
use gitsense_engine::search::Engine;
use gitsense_engine::SearchOptions;
use regex_lite::RegexBuilder;
use rusqlite::Connection;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};

/// Ids of the messages and chats whose text matches `pattern`, by
/// reading every row of the index.
fn matching_rows(pattern: &str) -> (BTreeSet<i64>, BTreeSet<i64>) {
    let re = RegexBuilder::new(pattern)
        .case_insensitive(true)
        .build()
        .unwrap();
    let conn = Connection::open(sample_index()).unwrap();
    let matching = |sql: &str| -> BTreeSet<i64> {
        let mut s = conn.prepare(sql).unwrap();
        let rows = s
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
            .unwrap();
        rows.map(Result::unwrap)
            .filter(|(_, t)| re.is_match(t))
            .map(|(id, _)| id)
            .collect()
    };
    (
        matching("SELECT id, title || ' ' || body || ' ' || keywords FROM message_text"),
        matching("SELECT id, name FROM chats"),
    )
}

/// The sample engine without a time budget: patterns without words are
/// tested on every row, slow in an unoptimised test build.
fn unbounded() -> Engine {
    let mut e = sample_engine();
    e.set_time_budget(None);
    e
}

fn all(e: &Engine, q: &str) -> gitsense_engine::SearchResults {
    let opts = SearchOptions {
        per_page: Some(1000),
        trace: true,
        ..Default::default()
    };
    search_with(e, q, opts)
}

fn ids(r: &gitsense_engine::SearchResults) -> (BTreeSet<i64>, BTreeSet<i64>) {
    (
        r.results.messages.iter().map(|m| m.messages_id).collect(),
        r.results.chats.iter().map(|c| c.chats_id).collect(),
    )
}

fn fts_of(r: &gitsense_engine::SearchResults, target: &str) -> serde_json::Value {
    let plans = r.trace.as_ref().unwrap()["plans"].as_array().unwrap();
    plans.iter().find(|p| p["target"] == target).unwrap()["fts"].clone()
}

#[test]
fn results_are_exactly_the_rows_the_pattern_matches() {
    let e = unbounded();
    for (query, pattern) in [
        // Words every match holds narrow the candidates through FTS5.
        (r#"option:regex "\spayments?\s+\w+""#, r"\spayments?\s+\w+"),
        (r#"option:regex "^README""#, r"^README"),
        // Alternation: no word is certain, every row is tested.
        (r#"option:regex "pay(ment|out)s?""#, r"pay(ment|out)s?"),
        (r#"option:regex "\d{4}-\d{2}-\d{2}""#, r"\d{4}-\d{2}-\d{2}"),
    ] {
        let r = all(&e, query);
        let (messages, chats) = matching_rows(pattern);
        assert!(
            !messages.is_empty() || !chats.is_empty(),
            "{pattern} matches something"
        );
        assert_eq!(ids(&r), (messages.clone(), chats.clone()), "{query}");
        assert_eq!(r.total_counts.messages, messages.len() as u64, "{query}");
        assert_eq!(r.total_counts.chats, chats.len() as u64, "{query}");
        assert_eq!(r.search_criteria["options"]["regex"], true);
    }
}

#[test]
fn literal_words_of_the_pattern_narrow_the_candidates() {
    let e = unbounded();
    let r = all(&e, r#"option:regex "\spayments?\s+\w+""#);
    assert_eq!(fts_of(&r, "messages"), "\"payment\"*");
    let r = all(&e, r#"option:regex "pay(ment|out)s?""#);
    assert_eq!(fts_of(&r, "messages"), serde_json::Value::Null);
}

#[test]
fn patterns_combine_with_operators_words_and_filters() {
    let e = unbounded();
    let both = all(&e, r#"option:regex "payment" "session""#);
    let (p, _) = matching_rows("payment");
    let (s, _) = matching_rows("session");
    let expected: BTreeSet<i64> = p.intersection(&s).copied().collect();
    assert_eq!(ids(&both).0, expected);
    let without = all(&e, r#"option:regex "payment" -"session""#);
    let expected: BTreeSet<i64> = p.difference(&s).copied().collect();
    assert_eq!(ids(&without).0, expected);
    let filtered = all(&e, r#"option:regex "payment" in:messages role:assistant"#);
    assert!(filtered
        .results
        .messages
        .iter()
        .all(|m| m.messages_role.as_deref() == Some("assistant")));
    assert!(!filtered.results.messages.is_empty());
    assert!(filtered.results.messages.len() < p.len());
}

#[test]
fn case_sensitive_patterns_keep_case() {
    let e = unbounded();
    let insensitive = all(&e, r#"option:regex "payvault""#).total_counts.messages;
    let exact = all(&e, r#"option:regex,case-sensitive "PayVault""#)
        .total_counts
        .messages;
    let wrong_case = all(&e, r#"option:regex,case-sensitive "payvault""#)
        .total_counts
        .messages;
    assert!(insensitive > 0);
    assert_eq!(exact, insensitive);
    assert_eq!(wrong_case, 0);
}

fn ticking_clock() -> f64 {
    static NOW: AtomicU64 = AtomicU64::new(0);
    NOW.fetch_add(1, Ordering::Relaxed) as f64
}

#[test]
fn a_scan_is_bounded_by_the_time_budget() {
    let mut e = sample_engine();
    e.set_clock(ticking_clock);
    e.set_time_budget(Some(0.0));
    let r = search(&e, r#"option:regex "[a-z]+ing\b""#);
    assert_eq!(r.truncated, Some(true));
    assert!(r.hint.unwrap_or_default().contains("budget"));
}

#[test]
fn bad_patterns_are_structured_errors_with_positions() {
    let e = sample_engine();
    for (query, at) in [
        (r#"option:regex "fn (""#, 13),
        (r#"x option:regex "[z-a]""#, 15),
        (r#"option:regex ok "\w{1000}{1000}""#, 16),
        (r"option:regex ok\", 13),
    ] {
        let err = e.search(query, &SearchOptions::default()).unwrap_err();
        assert_eq!(err.code, "query.bad_regex", "{query}");
        assert_eq!(err.position, Some(at), "{query}");
        assert!(err.message.contains("regular expression") || err.message.contains("longer"));
    }
    let long = format!("option:regex \"{}\"", "a".repeat(600));
    assert_eq!(
        e.search(&long, &SearchOptions::default()).unwrap_err().code,
        "query.bad_regex"
    );
}
