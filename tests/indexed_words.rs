//! A query made of words the index holds, as its text writes them
//! (punctuation, identifiers, calls and flags included), finds something:
//! random whitespace-separated chunks of the messages of the real sample
//! and of a documentation site, and identifiers joining their words, are
//! searched as the query language reads them and as a search box does.
//! Chunks the language reads as operators or filters (a leading single
//! `-`, `OR`, `name:value`) are not words of the text and are not drawn.

mod common;
use common::*;
use gitsense_engine::plan::QueryMode;
use gitsense_engine::{Engine, SearchOptions};
use gitsense_import as import;
use gitsense_import::docs::DocsOptions;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestRunner};

/// The texts of the messages an index holds: title, body and keywords.
fn message_texts(e: &Engine) -> Vec<String> {
    let mut s = e
        .connection()
        .prepare("SELECT title || ' ' || body || ' ' || keywords FROM message_text ORDER BY id")
        .unwrap();
    let rows = s.query_map([], |r| r.get::<_, String>(0)).unwrap();
    rows.map(Result::unwrap).collect()
}

/// Whether the query language reads `chunk` as a word of the text (not
/// an operator or a filter), and the index holds a word of it.
fn is_word(chunk: &str) -> bool {
    let filter_like = {
        let chunk = chunk.trim_start_matches(['(', '-']);
        let name_end = chunk
            .char_indices()
            .find(|&(i, c)| !(c.is_ascii_alphabetic() || (i > 0 && matches!(c, '-' | '_'))))
            .map_or(chunk.len(), |(i, _)| i);
        let rest = &chunk[name_end..];
        name_end > 0
            && rest.starts_with(':')
            && rest[1..]
                .chars()
                .next()
                .is_some_and(|c| !matches!(c, ':' | '/'))
    };
    let negation = chunk.starts_with('-') && !chunk.starts_with("--");
    let operator = matches!(chunk, "OR" | "AND" | "NOT" | "&&" | "||");
    chunk.chars().any(char::is_alphanumeric) && !filter_like && !negation && !operator
}

/// For each text, its chunks that are words.
fn word_chunks(texts: &[String]) -> Vec<Vec<String>> {
    texts
        .iter()
        .map(|t| {
            t.split_whitespace()
                .filter(|c| is_word(c))
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Queries of one to three words of the index: chunks of its rows as
/// written, or identifiers made of words of several rows (`a.b`, `a_b`,
/// `a::b`, `a->b`, `a().b`, `--a-b`).
fn query_strategy(rows: Vec<Vec<String>>) -> impl Strategy<Value = String> {
    let words: Vec<String> = rows
        .iter()
        .flatten()
        .flat_map(|c| {
            c.split(|ch: char| !ch.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    let chunk = (any::<Index>(), any::<Index>()).prop_map(move |(row, at)| {
        let row = &rows[row.index(rows.len())];
        row[at.index(row.len())].clone()
    });
    let separators = &[".", "_", "::", "->", "().", "-"][..];
    let identifier = (
        prop::collection::vec(any::<Index>(), 2..4),
        prop::sample::select(separators),
        any::<bool>(),
    )
        .prop_map(move |(picks, sep, flag)| {
            let parts: Vec<&str> = picks
                .iter()
                .map(|p| words[p.index(words.len())].as_str())
                .collect();
            let id = parts.join(sep);
            if flag {
                format!("--{id}")
            } else {
                id
            }
        });
    let term = prop_oneof![3 => chunk, 1 => identifier];
    prop::collection::vec(term, 1..4).prop_map(|terms| terms.join(" "))
}

fn never_empty(e: &Engine, cases: u32) {
    let rows = word_chunks(&message_texts(e));
    assert!(rows.len() > 10, "the index holds messages");
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let strict = SearchOptions {
        per_page: Some(1),
        include_content: false,
        ..SearchOptions::default()
    };
    let boxed = SearchOptions {
        mode: QueryMode::Box,
        ..strict.clone()
    };
    let parsed = std::cell::Cell::new(0u32);
    runner
        .run(&query_strategy(rows), |q| {
            let r = e
                .search(&q, &boxed)
                .map_err(|err| TestCaseError::fail(format!("box mode: {q:?}: {err}")))?;
            prop_assert!(
                r.pagination.total_results > 0,
                "box mode found nothing for {:?}",
                q
            );
            // The language refuses an unclosed quote or parenthesis
            // (`'static`, `(see`); what it reads must find the row too.
            match e.search(&q, &strict) {
                Ok(r) => {
                    parsed.set(parsed.get() + 1);
                    prop_assert!(r.pagination.total_results > 0, "nothing found for {:?}", q);
                }
                Err(err) => prop_assert!(
                    matches!(
                        err.code.as_str(),
                        "query.unbalanced_quote" | "query.unbalanced_paren"
                    ),
                    "{:?}: {}",
                    q,
                    err
                ),
            }
            Ok(())
        })
        .unwrap();
    assert!(
        parsed.get() > cases / 2,
        "{} of {cases} parsed",
        parsed.get()
    );
}

#[test]
fn words_of_the_sample_always_find_something() {
    never_empty(&sample_engine(), 1000);
}

#[test]
fn words_of_a_documentation_site_always_find_something() {
    let dir = tempfile::tempdir().unwrap();
    let site = repo_root().join("docs");
    let out = dir.path().join("docs.gsx");
    import::build_with(&out, "docs:test".into(), |w| {
        import::docs::import(&site, &DocsOptions::default(), w, &import::no_progress())
    })
    .expect("the docs import");
    never_empty(&Engine::open(&out).unwrap(), 500);
}
