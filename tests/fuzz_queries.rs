//! Hostile and random queries against parse + plan + search: no panic, no
//! raw SQLite error (`internal.*`), error positions inside the query.
//! 100,000 generated queries on a fixture index, 10,000 on the real sample;
//! in search-box mode, 50,000 that must never be an error at all.

mod common;
use common::*;
use gitsense_engine::plan::QueryMode;
use gitsense_engine::{Engine, SearchOptions};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

const FRAGMENTS: &[&str] = &[
    "payment",
    "widget",
    "json",
    "auth*",
    "*",
    "**",
    "\"",
    "'",
    "(",
    ")",
    "()",
    "OR",
    "AND",
    "NOT",
    "-",
    "--",
    "-payment",
    "NEAR(",
    "NEAR(a b, 2)",
    "a:b",
    "col:x",
    "name:",
    "lang:",
    "lang:rust,",
    "lang:,",
    "in:",
    "in:code-blocks",
    "in:chats,messages",
    "in:all",
    "scope:current-chat",
    "scope:connected-chats",
    "scope:current-chat-and-branches",
    "scope:bogus",
    "profile:all.default",
    "profile:tiny-overview-query-optimization",
    "profile:meta-search",
    "profile:meta-insights",
    "analyzer:tiny-overview",
    "profile:git-nav",
    "git-owner:*",
    "git-owner:Tutorial",
    "git-owner:a/b",
    "git-repository:Tutorial/secure-payments",
    "git-repository:x",
    "git-branch:main",
    "git-branch:*",
    "git-ls-tree-id:23",
    "git-ls-tree-id:x",
    "-git-owner:y",
    "-analyzer:x,y",
    "meta:keywords:array=a&&b",
    "meta:keywords:array=a||b&&c",
    "meta:n:number=1||y",
    "meta:is_compliant:boolean=maybe",
    "meta:purpose:string!=*x?",
    "meta:",
    "meta:a",
    "-meta:a:string=b",
    "meta:\"a b:string=x\"",
    "insight-field:lang",
    "insight-field:keywords:array",
    "insight-field:purpose,git-path,chat-type",
    "insight-field:",
    "insight-field:a.b",
    "insight-field:x:colour",
    "insight-field:lang:number",
    "-insight-field:role",
    "insight-field:\"a b\"",
    "profile:",
    "sort:name:desc",
    "sort:fts_rank",
    "sort:x:y:z",
    "option:case-sensitive",
    "option:regex",
    "option:regex,case-sensitive",
    "\"pay(ment|out)s?\"",
    "\"[z-a]\"",
    "\\w{1000}{1000}",
    "\"(?i)x\"",
    ".*",
    "a{2,}",
    "\\b",
    "\\",
    "[[:alpha:]]",
    "(?x)",
    "chat-id:1",
    "chat-id:x",
    "msg-id:-5",
    "block-id:'a b'",
    "git-path:src/*",
    "git-path:[",
    "git-path:\"a b\"",
    "role:user",
    "role:nobody",
    "repo:a/b",
    "msg-type:tiny-overview",
    "chat-type:git-*",
    "x:null",
    "lang:null",
    "git-path:not_null",
    "'; DROP TABLE chats; --",
    "\" OR 1=1 --",
    "UNION SELECT",
    "rowid",
    "fts_messages",
    "MATCH",
    "^",
    "+",
    "{a b}",
    "title:foo",
    "body : bar",
    "\u{0}",
    "\u{7f}",
    "\t",
    "\n",
    "\r\n",
    "\u{202e}",
    "ä",
    "é",
    "日本語",
    "🙂",
    "&lt;",
    "<script>",
    "%",
    "_",
    "\\",
    "/",
    "::",
    "http://x.y/z",
    "std::vec",
    "a'b",
    "\"\"",
    "''",
    "\"a\"b\"",
    "NOT NOT",
    "OR OR",
    "(((",
    ")))",
];

fn query_strategy() -> impl Strategy<Value = String> {
    let fragment = prop_oneof![
        6 => prop::sample::select(FRAGMENTS).prop_map(str::to_string),
        2 => "[a-zA-Z0-9_.:*()\"' -]{1,12}",
        1 => any::<String>().prop_map(|s| s.chars().take(16).collect()),
        1 => (prop::sample::select(FRAGMENTS), 1usize..2000)
            .prop_map(|(f, n)| f.repeat(n)),
    ];
    let sep = prop::sample::select(&[" ", "", "  ", ",", "\t"][..]);
    prop::collection::vec((fragment, sep), 0..12).prop_map(|parts| {
        parts
            .into_iter()
            .map(|(f, s)| format!("{f}{s}"))
            .collect::<String>()
    })
}

/// Facet requests of the `facets` option, good and bad.
const FACETS: &[&str] = &[
    "lang",
    "repo",
    "role",
    "branch",
    "git-path",
    "keywords:array",
    "purpose:string",
    "x:number",
    "",
    "k:colour",
];

fn options_strategy() -> impl Strategy<Value = SearchOptions> {
    (
        0u64..4,
        prop::option::of(0u64..60),
        prop::option::of(prop::sample::select(&[5i64, 10, 11, 23, 25, 999, -1][..])),
        prop::collection::vec(prop::sample::select(FACETS).prop_map(str::to_string), 0..2),
    )
        .prop_map(|(page, per_page, current_chat_id, facets)| SearchOptions {
            page,
            per_page,
            current_chat_id,
            facets,
            ..Default::default()
        })
}

fn hammer(engine: &Engine, cases: u32) {
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let ok = std::cell::Cell::new(0u32);
    let errs = std::cell::Cell::new(0u32);
    runner
        .run(&(query_strategy(), options_strategy()), |(q, opts)| {
            let len = q.chars().count();
            let outcome =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| engine.search(&q, &opts)));
            let outcome = match outcome {
                Ok(o) => o,
                Err(_) => return Err(TestCaseError::fail(format!("panic on {q:?}"))),
            };
            match outcome {
                Ok(r) => {
                    prop_assert_eq!(r.total_results_returned, r.len() as u64);
                    ok.set(ok.get() + 1);
                }
                Err(e) => {
                    prop_assert!(
                        !e.code.starts_with("internal"),
                        "raw failure {} on {:?}",
                        e,
                        q
                    );
                    prop_assert!(!e.message.is_empty());
                    if let Some(p) = e.position {
                        prop_assert!(p <= len, "position {} beyond {} in {:?}", p, len, q);
                    }
                    errs.set(errs.get() + 1);
                }
            }
            Ok(())
        })
        .unwrap();
    // The generator must exercise both outcomes substantially.
    let (ok, errs) = (ok.get(), errs.get());
    assert!(
        ok > cases / 10 && errs > cases / 20,
        "ok {ok}, errors {errs}"
    );
}

#[test]
fn a_hundred_thousand_hostile_queries_never_panic_or_leak_raw_errors() {
    hammer(&fixture_engine(), 100_000);
}

#[test]
fn ten_thousand_hostile_queries_on_the_real_sample() {
    hammer(&sample_engine(), 10_000);
}

/// Box mode: any text with valid options is an answer, never an error.
fn hammer_box(engine: &Engine, cases: u32) {
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let opts = SearchOptions {
        mode: QueryMode::Box,
        per_page: Some(5),
        ..Default::default()
    };
    runner
        .run(&query_strategy(), |q| {
            let outcome =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| engine.search(&q, &opts)));
            match outcome {
                Err(_) => Err(TestCaseError::fail(format!("panic on {q:?}"))),
                Ok(Err(e)) => Err(TestCaseError::fail(format!(
                    "box mode failed on {q:?}: {e}"
                ))),
                Ok(Ok(r)) => {
                    prop_assert_eq!(r.total_results_returned, r.len() as u64);
                    Ok(())
                }
            }
        })
        .unwrap();
}

#[test]
fn fifty_thousand_hostile_texts_in_box_mode_are_never_an_error() {
    hammer_box(&fixture_engine(), 50_000);
}

#[test]
fn ten_thousand_hostile_texts_in_box_mode_on_the_real_sample() {
    hammer_box(&sample_engine(), 10_000);
}

/// Found by the box-mode fuzz: all terms match nothing, and the any-term
/// reading leaves an OR branch with only an excluded phrase once the word
/// beside it (a lone U+202E, which holds no token) is dropped. The
/// all-terms answer stands, in both modes, instead of an error.
#[test]
fn a_fallback_that_cannot_be_planned_leaves_the_all_terms_answer() {
    let engine = fixture_engine();
    for mode in [QueryMode::Strict, QueryMode::Box] {
        let opts = SearchOptions {
            mode,
            per_page: Some(5),
            ..Default::default()
        };
        let r = engine
            .search("a( \u{202e}  NOT  \" 𝔻\")\u{11180} ", &opts)
            .unwrap_or_else(|e| panic!("{mode:?}: {e}"));
        assert_eq!(r.total_results_returned, 0, "{mode:?}");
    }
}

/// Words of the sample's messages (as the full-text index holds them).
fn indexed_words() -> Vec<String> {
    let conn = rusqlite::Connection::open(sample_index()).unwrap();
    conn.execute_batch("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, fts_messages, 'row');")
        .unwrap();
    let mut s = conn.prepare("SELECT term FROM temp.v").unwrap();
    let words: Vec<String> = s
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(Result::unwrap)
        .filter(|w| w.len() >= 3 && w.chars().all(|c| c.is_ascii_alphanumeric()))
        .collect();
    assert!(words.len() > 1000, "{} words", words.len());
    words
}

/// No query whose words are all in the index finds nothing: one to four
/// indexed words, written apart or as one name (`a.b.c`, `a/b`), as typed
/// (in search-box mode, the last word a prefix) or not. Where no message
/// holds them all (or, for a name, not side by side), the search falls
/// back to any of them.
#[test]
fn a_query_of_indexed_words_always_finds_something() {
    let engine = sample_engine();
    let words = indexed_words();
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut rand = move |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    let mut fell_back = 0;
    for _ in 0..400 {
        let n = 1 + rand(4);
        let picked: Vec<&str> = (0..n).map(|_| words[rand(words.len())].as_str()).collect();
        let sep = [" ", ".", "/", " ."][rand(4)];
        let query = picked.join(sep);
        for mode in [QueryMode::Strict, QueryMode::Box] {
            let opts = SearchOptions {
                mode,
                per_page: Some(3),
                ..Default::default()
            };
            let r = engine
                .search(&query, &opts)
                .unwrap_or_else(|e| panic!("{query:?} ({mode:?}): {e}"));
            assert!(
                r.total_results_returned > 0,
                "{query:?} ({mode:?}) found nothing"
            );
            fell_back += usize::from(r.search_criteria.get("fallback").is_some());
        }
    }
    assert!(
        fell_back > 50,
        "{fell_back} fell back: most generated queries match nothing whole"
    );
}

#[test]
fn a_name_no_message_holds_side_by_side_falls_back_to_its_words() {
    let engine = sample_engine();
    // Both words are indexed; no message has them as one name.
    let r = engine
        .search("payment.xyzzyquux", &SearchOptions::default())
        .unwrap();
    assert!(r.total_counts.messages > 0);
    assert_eq!(r.search_criteria["fallback"]["to"], "any-term");
    let r = engine
        .search("payment.refund", &SearchOptions::default())
        .unwrap();
    assert!(r.total_results_returned > 0);
    // One identifier (words joined by `_`) is not a path of names: the
    // words are not looked for one by one.
    let r = engine
        .search("payment_xyzzyquux", &SearchOptions::default())
        .unwrap();
    assert_eq!(r.total_results_returned, 0);
    // A name that is there is found as a name, without a fallback.
    let found = engine.search("payment", &SearchOptions::default()).unwrap();
    assert!(found.search_criteria.get("fallback").is_none());
}
