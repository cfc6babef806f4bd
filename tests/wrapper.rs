//! The response wrapper on real data: token budgets with the
//! chars/4 estimate, `truncated`, `nextCursor` bound to the corpus revision
//! (`stale_cursor`), `trace`, and the trigram `hint`.

mod common;

use common::*;
use gitsense_engine::{Engine, SearchOptions, SearchResults};
use tempfile::TempDir;

fn json_tokens(r: &SearchResults) -> u64 {
    tokens(&serde_json::to_string(r).unwrap())
}

fn ids(r: &SearchResults) -> Vec<i64> {
    r.results.messages.iter().map(|m| m.messages_id).collect()
}

const QUERY: &str = "in:messages payment";

#[test]
fn a_token_budget_shortens_then_drops_and_says_so() {
    let engine = sample_engine();
    let full = engine.search(QUERY, &SearchOptions::default()).unwrap();
    let full_tokens = json_tokens(&full);
    assert!(full.truncated.is_none());
    let n = full.len();
    assert!(n > 10, "sample has {n} payment messages");

    let at = engine
        .search(
            QUERY,
            &SearchOptions {
                max_tokens: Some(full_tokens),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(at, full, "a budget that fits changes nothing");

    let mut last_len = n;
    for budget in [full_tokens / 2, full_tokens / 8, full_tokens / 30, 900] {
        let r = engine
            .search(
                QUERY,
                &SearchOptions {
                    max_tokens: Some(budget),
                    ..Default::default()
                },
            )
            .unwrap();
        assert!(json_tokens(&r) <= budget, "{} > {budget}", json_tokens(&r));
        assert_eq!(r.truncated, Some(true));
        assert!(r.len() <= last_len);
        last_len = r.len();
        assert_eq!(r.total_results_returned, r.len() as u64);
        assert_eq!(r.pagination.results_per_page, r.len() as u64);
        // What is left is the best-ranked prefix, and totals stay true.
        assert_eq!(ids(&r), ids(&full)[..r.len()]);
        assert_eq!(r.pagination.total_results, full.pagination.total_results);
    }
    assert!(last_len < n, "the smallest budgets drop results");
}

#[test]
fn shortening_comes_before_dropping() {
    let engine = sample_engine();
    let full = engine.search(QUERY, &SearchOptions::default()).unwrap();
    // Without full contents the object is much smaller: a budget just
    // above that size keeps every result, with contents cut.
    let lean = engine
        .search(
            QUERY,
            &SearchOptions {
                include_content: false,
                ..Default::default()
            },
        )
        .unwrap();
    let budget = json_tokens(&lean) + 50;
    assert!(budget < json_tokens(&full));
    let r = engine
        .search(
            QUERY,
            &SearchOptions {
                max_tokens: Some(budget),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(r.len(), full.len());
    assert_eq!(r.truncated, Some(true));
    assert!(json_tokens(&r) <= budget);
}

#[test]
fn a_budget_nothing_fits_is_refused() {
    let engine = sample_engine();
    let e = engine
        .search(
            QUERY,
            &SearchOptions {
                max_tokens: Some(20),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(e.code, "options.max_tokens_too_small");
}

#[test]
fn the_budget_covers_the_trace_too() {
    let engine = sample_engine();
    let opts = SearchOptions {
        trace: true,
        ..Default::default()
    };
    let full = engine.search(QUERY, &opts).unwrap();
    let budget = json_tokens(&full) / 3;
    let r = engine
        .search(
            QUERY,
            &SearchOptions {
                max_tokens: Some(budget),
                ..opts
            },
        )
        .unwrap();
    assert!(r.trace.is_some());
    assert!(json_tokens(&r) <= budget);
}

#[test]
fn cursors_walk_every_page_in_order() {
    let engine = sample_engine();
    let all = engine
        .search(
            QUERY,
            &SearchOptions {
                per_page: Some(1000),
                ..Default::default()
            },
        )
        .unwrap();
    assert!(all.next_cursor.is_none(), "one page holds everything");
    let mut seen = Vec::new();
    let mut opts = SearchOptions {
        per_page: Some(4),
        ..Default::default()
    };
    let mut pages = 0;
    loop {
        let r = engine.search(QUERY, &opts).unwrap();
        pages += 1;
        assert_eq!(r.pagination.current_page, pages);
        seen.extend(ids(&r));
        match r.next_cursor {
            Some(c) => {
                opts = SearchOptions {
                    cursor: Some(c),
                    ..Default::default()
                };
            }
            None => {
                assert_eq!(r.pagination.current_page, r.pagination.total_pages);
                break;
            }
        }
    }
    assert_eq!(seen, ids(&all));
    assert_eq!(pages as usize, ids(&all).len().div_ceil(4));
}

#[test]
fn a_cursor_from_another_revision_is_stale() {
    let dir = TempDir::new().unwrap();
    let (a, b) = (dir.path().join("a.gsx"), dir.path().join("b.gsx"));
    let files = widget_files(12);
    git_fixture(&a, &files, "first");
    git_fixture(&b, &files, "second");
    let (ea, eb) = (Engine::open(&a).unwrap(), Engine::open(&b).unwrap());
    assert_ne!(ea.info().revision, eb.info().revision);
    let opts = SearchOptions {
        per_page: Some(5),
        ..Default::default()
    };
    let cursor = ea.search("widget", &opts).unwrap().next_cursor.unwrap();
    // The same query pages fine on its own index...
    let next = SearchOptions {
        cursor: Some(cursor.clone()),
        ..Default::default()
    };
    assert_eq!(
        ea.search("widget", &next).unwrap().pagination.current_page,
        2
    );
    // ...but not on an index with other content.
    let e = eb.search("widget", &next).unwrap_err();
    assert_eq!(e.code, "stale_cursor");
    assert_eq!(
        e.kind(),
        gitsense_engine::ErrorKind::Query,
        "a stale cursor is the caller's to fix"
    );
}

#[test]
fn a_cursor_is_refused_for_another_query_or_when_forged() {
    let engine = sample_engine();
    let c = engine
        .search(
            QUERY,
            &SearchOptions {
                per_page: Some(2),
                ..Default::default()
            },
        )
        .unwrap()
        .next_cursor
        .unwrap();
    let with = |cursor: &str| SearchOptions {
        cursor: Some(cursor.to_string()),
        ..Default::default()
    };
    assert_eq!(
        engine
            .search("in:messages stripe", &with(&c))
            .unwrap_err()
            .code,
        "cursor.query_mismatch"
    );
    for forged in ["zz", "", "00", &c[..c.len() - 2]] {
        assert_eq!(
            engine.search(QUERY, &with(forged)).unwrap_err().code,
            "cursor.invalid",
            "{forged:?}"
        );
    }
}

#[test]
fn trace_is_there_only_when_asked() {
    let engine = sample_engine();
    assert!(engine
        .search(QUERY, &SearchOptions::default())
        .unwrap()
        .trace
        .is_none());
    let json = engine.search_json(QUERY, r#"{"trace": true}"#).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    for k in ["parse_ms", "count_ms", "fetch_ms", "total_ms"] {
        assert!(v["trace"]["timing"][k].as_f64().unwrap() >= 0.0, "{k}");
    }
    assert_eq!(v["trace"]["plans"][0]["target"], "messages");
    assert!(!json.contains("\"trace\":null"));
}

#[test]
fn short_code_terms_get_a_hint() {
    let files = vec![File::new("src/main.rs", "rust", "the entry point")
        .code("rust", "fn main() { println!(\"hi\"); }")];
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("code.gsx");
    git_fixture(&path, &files, "code");
    let engine = Engine::open(&path).unwrap();
    // `fn` is in the code block, but the trigram index cannot see it.
    let r = engine
        .search("fn in:code-blocks", &SearchOptions::default())
        .unwrap();
    assert!(r.results.code_blocks.is_empty());
    let hint = r.hint.expect("a hint for the short term");
    assert!(
        hint.contains("'fn'") && hint.contains("3 characters"),
        "{hint}"
    );
    // Three characters are enough, and then there is no hint.
    let r = engine
        .search("main in:code-blocks", &SearchOptions::default())
        .unwrap();
    assert_eq!(r.results.code_blocks.len(), 1);
    assert!(r.hint.is_none());
    // Messages are word-indexed: a short word there needs no hint.
    let sample = sample_engine();
    assert!(sample
        .search("in:messages js", &SearchOptions::default())
        .unwrap()
        .hint
        .is_none());
    let json = serde_json::to_string(
        &sample
            .search("in:messages payment", &SearchOptions::default())
            .unwrap(),
    )
    .unwrap();
    assert!(!json.contains("\"hint\""));
}
