//! The time budget of a search (`Engine::set_time_budget`): a search out
//! of time still answers, marks what it cut short (`truncated`, a `hint`),
//! and stops SQLite's ranking through the progress handler; within its
//! budget a search is unchanged.

mod common;
use common::*;
use gitsense_engine::search::Engine;
use std::sync::atomic::{AtomicU64, Ordering};

/// A clock that moves 1 ms each time it is read: a search with a budget
/// of 0 ms is out of time at its first look at the clock, on any machine.
fn ticking_clock() -> f64 {
    static NOW: AtomicU64 = AtomicU64::new(0);
    NOW.fetch_add(1, Ordering::Relaxed) as f64
}

fn out_of_time() -> Engine {
    let mut e = sample_engine();
    e.set_clock(ticking_clock);
    e.set_time_budget(Some(0.0));
    e
}

#[test]
fn a_search_within_its_budget_is_not_marked() {
    let r = search(&sample_engine(), "payment");
    assert_eq!(r.truncated, None);
    assert_eq!(r.hint, None);
}

#[test]
fn a_search_out_of_time_is_marked_truncated_with_a_hint() {
    let r = search(&out_of_time(), "auth*");
    assert_eq!(r.truncated, Some(true));
    let hint = r.hint.unwrap_or_default();
    assert!(hint.contains("0 ms budget"), "{hint}");
    assert!(hint.contains("longer prefixes"), "{hint}");
}

#[test]
fn the_ranking_is_stopped_by_the_budget_and_its_target_comes_back_empty() {
    // Ranking every message matching a short prefix takes far more than
    // the progress handler's steps between two looks at the clock.
    let r = search(&out_of_time(), "the*");
    assert_eq!(r.results.messages.len(), 0);
    assert_eq!(r.total_counts.messages, 0);
    assert!(r
        .hint
        .unwrap_or_default()
        .contains("matched too much to rank"));
    // Without a bound the same query finds them.
    let mut e = sample_engine();
    e.set_time_budget(None);
    let full = search(&e, "the*");
    assert!(full.total_counts.messages > 0);
    assert_eq!(full.truncated, None);
}

#[test]
fn a_one_letter_prefix_is_a_whole_word_and_marked_truncated_even_without_a_budget() {
    let mut e = sample_engine();
    e.set_time_budget(None);
    let r = search(&e, "a*");
    assert_eq!(r.truncated, Some(true));
    let hint = r.hint.unwrap_or_default();
    assert!(hint.contains("'a*' as the word 'a'"), "{hint}");
    // What the word itself matches, no more.
    assert_eq!(r.total_counts, search(&e, "a").total_counts);
}

#[test]
fn snippets_past_the_budget_are_the_start_of_the_text_unmarked() {
    // Ranking within budget, snippets out of it.
    let mut e = sample_engine();
    e.set_time_budget(None);
    let full = search(&e, "payment");
    let mut e = sample_engine();
    e.set_clock(ticking_clock);
    e.set_time_budget(Some(0.0));
    // Ranking 46 messages takes fewer virtual-machine steps than the
    // progress handler's period: only the snippets see the clock.
    let cut = search(&e, "payment");
    assert_eq!(
        cut.total_counts, full.total_counts,
        "the ranking was not cut"
    );
    let ids = |r: &gitsense_engine::SearchResults| {
        r.results
            .messages
            .iter()
            .map(|m| m.messages_id)
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&cut), ids(&full), "the same results, in the same order");
    for m in &cut.results.messages {
        let s = m.messages_content_snippet.as_deref().unwrap_or_default();
        assert!(!s.contains("<mark>"), "a plain excerpt: {s}");
    }
    assert_eq!(cut.truncated, Some(true));
    assert!(cut.hint.unwrap_or_default().contains("snippet"));
}

#[test]
fn the_budget_ends_with_the_search_so_the_next_one_starts_afresh() {
    let mut e = sample_engine();
    e.set_clock(ticking_clock);
    e.set_time_budget(Some(0.0));
    assert_eq!(search(&e, "auth*").truncated, Some(true));
    e.set_time_budget(None);
    let r = search(&e, "auth*");
    assert_eq!(r.truncated, None);
    assert!(r.total_counts.messages > 0);
}

#[test]
fn a_search_option_overrides_the_engines_budget() {
    use gitsense_engine::plan::SearchOptions;
    // timeBudgetMs 0 lifts the engine's bound for this search only.
    let e = out_of_time();
    let opts: SearchOptions = serde_json::from_str(r#"{"timeBudgetMs":0}"#).unwrap();
    let full = e.search("the*", &opts).unwrap();
    assert!(full.total_counts.messages > 0);
    assert_eq!(full.truncated, None);
    assert_eq!(search(&e, "the*").truncated, Some(true));
    // And a bound on an engine without one applies, named in the hint.
    let mut e = sample_engine();
    e.set_clock(ticking_clock);
    e.set_time_budget(None);
    let opts: SearchOptions = serde_json::from_str(r#"{"timeBudgetMs":1}"#).unwrap();
    let cut = e.search("the*", &opts).unwrap();
    assert_eq!(cut.truncated, Some(true));
    assert!(cut.hint.unwrap_or_default().contains("the 1 ms budget"));
}
