//! Typo correction from the index's own vocabulary (`gitsense_engine::typo`),
//! on real pages of the Python documentation (Debian's `python3.11-doc`,
//! which `./build.sh test` installs): a word no indexed text holds is
//! searched as the indexed words nearest it, and says so in `didYouMean`;
//! a search whose words are all indexed is never touched.

mod common;
use common::corpus;

use gitsense_engine::index::live::{self, WriteOp};
use gitsense_engine::plan::QueryMode;
use gitsense_engine::{Engine, Highlight, SearchOptions, SearchResults};
use gitsense_import::{self as import, docs::DocsOptions};
use std::path::PathBuf;

const PAGES: &[&str] = &[
    "library/collections.html",
    "library/contextlib.html",
    "library/json.html",
    "library/itertools.html",
    "library/subprocess.html",
];

fn site() -> Option<(tempfile::TempDir, Engine)> {
    let docs = corpus(
        PathBuf::from("/usr/share/doc/python3.11/html/library/json.html"),
        "./build.sh test installs python3.11-doc",
    )?;
    let root = docs.parent()?.parent()?.to_path_buf();
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    for page in PAGES {
        let to = site.join(page);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(root.join(page), to).unwrap();
    }
    let out = dir.path().join("site.gsx");
    import::build_with(&out, "docs:typos".into(), |w| {
        import::docs::import(&site, &DocsOptions::default(), w, &import::no_progress())
    })
    .unwrap();
    let e = Engine::open(&out).unwrap();
    Some((dir, e))
}

fn search(e: &Engine, q: &str, mode: QueryMode) -> SearchResults {
    e.search(
        q,
        &SearchOptions {
            per_page: Some(20),
            highlight: Highlight::None,
            mode,
            ..SearchOptions::default()
        },
    )
    .unwrap_or_else(|err| panic!("{q}: {err}"))
}

/// The pages of a search's messages, best first, each once.
fn pages(r: &SearchResults) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for m in &r.results.messages {
        let p = m
            .meta
            .get("messages_meta_file_path")
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string();
        if !seen.contains(&p) {
            seen.push(p);
        }
    }
    seen
}

#[test]
fn a_dropped_doubled_changed_or_swapped_letter_finds_what_the_word_finds() {
    let Some((_dir, e)) = site() else { return };
    for (word, typos) in [
        (
            "namedtuple",
            ["namedtupe", "namedtuuple", "namedtupke", "namedtupel"],
        ),
        (
            "contextmanager",
            [
                "contextmanger",
                "contexttmanager",
                "contextmanaher",
                "contxetmanager",
            ],
        ),
        (
            "itertools",
            ["itertols", "itterrtools", "itertoolz", "itertoosl"],
        ),
        (
            "subprocess",
            ["subproces", "subbprocess", "subprocass", "supbrocess"],
        ),
    ] {
        let exact = search(&e, &format!("{word} in:messages"), QueryMode::Strict);
        assert!(exact.did_you_mean.is_none());
        for typo in typos {
            let r = search(&e, &format!("{typo} in:messages"), QueryMode::Strict);
            let d = r
                .did_you_mean
                .as_ref()
                .unwrap_or_else(|| panic!("{typo}: not corrected"));
            assert_eq!(d.corrections[0].word, typo);
            assert_eq!(d.corrections[0].replacements[0], word, "{typo}");
            assert_eq!(d.query, format!("{word} in:messages"));
            assert_eq!(pages(&r), pages(&exact), "{typo}");
        }
    }
}

#[test]
fn words_the_index_holds_are_never_corrected() {
    let Some((_dir, e)) = site() else { return };
    // Both words are indexed, on different pages: nothing holds both, and
    // neither is a typo.
    let r = search(
        &e,
        "namedtuple subprocess.Popen communicate",
        QueryMode::Strict,
    );
    assert!(r.did_you_mean.is_none(), "{:?}", r.did_you_mean);
    // An excluded word and a filter's value are left as typed.
    let r = search(&e, "json -namedtupel", QueryMode::Strict);
    assert!(r.did_you_mean.is_none());
    assert!(r.total_counts.messages > 0);
    // Short words are not corrected: at one edit most short words are
    // neighbours of another.
    let r = search(&e, "jsn", QueryMode::Strict);
    assert!(r.did_you_mean.is_none());
}

#[test]
fn a_typo_among_other_words_and_in_the_search_box_is_corrected() {
    let Some((_dir, e)) = site() else { return };
    let r = search(&e, "itertols permutations", QueryMode::Strict);
    let d = r.did_you_mean.clone().expect("corrected");
    assert_eq!(d.query, "itertools permutations");
    assert_eq!(
        pages(&r).first().map(String::as_str),
        Some("library/itertools.html")
    );
    // A word of a name is corrected in place.
    let r = search(&e, "subprocess.Popne", QueryMode::Strict);
    let d = r.did_you_mean.clone().expect("corrected");
    assert_eq!(d.query, "subprocess.popen");
    assert_eq!(
        pages(&r).first().map(String::as_str),
        Some("library/subprocess.html")
    );
    // In the search box the last word is a prefix being typed: it is
    // corrected only when no indexed word starts with it.
    let r = search(&e, "contextmanger", QueryMode::Box);
    assert_eq!(
        r.did_you_mean.expect("corrected").corrections[0].replacements[0],
        "contextmanager"
    );
    let r = search(&e, "contextman", QueryMode::Box);
    assert!(r.did_you_mean.is_none());
    assert!(r.total_counts.messages > 0);
}

#[test]
fn an_index_without_a_vocabulary_corrects_nothing() {
    // A writable index has no typo_terms rows: no correction, no error.
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    live::create(&conn, "local:notes", "2026-01-01T00:00:00Z").unwrap();
    let mut e = Engine::from_connection(conn).unwrap();
    e.write(
        WriteOp::Add,
        r#"{"chats": [{"id": 1, "name": "Retries"}],
            "messages": [{"id": 1, "chat_id": 1, "role": "user",
                          "content": "How do I retry a payment?"}]}"#,
    )
    .unwrap();
    let r = search(&e, "paymnet", QueryMode::Strict);
    assert!(r.did_you_mean.is_none());
    assert_eq!(r.total_counts.messages, 0);
}
