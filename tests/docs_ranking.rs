//! Ranking on documentation sites, through the docs importer and the
//! engine: all-terms matching judged per page (a section whose heading
//! names the thing while its page names the kind is found, its page
//! first), and words found in their other inflections with an exact name
//! still first.

use gitsense_engine::{Engine, SearchOptions, SearchResults};
use gitsense_import as import;
use gitsense_import::docs::DocsOptions;
use std::path::Path;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A module page whose "Lock objects" section names `Lock` while the
/// word "class" is only in the page's other sections, a FAQ page with a
/// passing mention of both words in one section, and a page about
/// connections in several inflections beside an attribute named
/// `connections`.
const THREADING: &str = "# threading: thread-based parallelism

This module constructs higher-level threading interfaces. Every class below
wraps one of the primitives of the low-level module.

## Thread objects

The Thread class represents an activity that is run in a separate thread of
control. Once a thread object is created, its activity must be started.

## Lock objects

A primitive lock is a synchronization primitive that is not owned by a
particular thread when locked. A lock is in one of two states, locked or
unlocked. It is created in the unlocked state.

## Timer objects

A timer represents an action that should be run only after a certain
amount of time has passed.
";

const FAQ: &str = "# Frequently asked questions

## Why is my program slow?

Programs are slow for many reasons: too much input for the algorithm, a
slow disk, a slow network, a cache that is too small, a busy machine, or a
class that takes a lock around every method call even when a single thread
uses it. Measure first, then change what the measurements point at; guesses
about performance are wrong more often than not.

## Where do I report bugs?

On the issue tracker of the project.
";

const POOL: &str = "# Pools

A pool reuses what is expensive to open.

## Opening

Each connection is opened lazily, when a request first needs it, and the
pool closes it after a minute without use.

## Retries

When the server goes away, the pool keeps connecting again with a growing
delay between attempts.

## connections

The list of open sockets of the pool, newest first. Read only.
";

fn build(site: &Path, out: &Path) -> Engine {
    import::build_with(out, "docs:test".into(), |w| {
        import::docs::import(site, &DocsOptions::default(), w, &import::no_progress())
    })
    .expect("the site imports");
    Engine::open(out).unwrap()
}

fn site() -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("site");
    write(&root, "library/threading.md", THREADING);
    write(&root, "faq.md", FAQ);
    write(&root, "pool.md", POOL);
    let engine = build(&root, &dir.path().join("site.gsx"));
    (dir, engine)
}

fn search(e: &Engine, q: &str) -> SearchResults {
    e.search(
        q,
        &SearchOptions {
            per_page: Some(50),
            ..SearchOptions::default()
        },
    )
    .unwrap()
}

/// The section titles of the messages found, best first.
fn titles(r: &SearchResults) -> Vec<String> {
    r.results
        .messages
        .iter()
        .map(|m| {
            m.meta
                .get("messages_meta_title")
                .and_then(|t| t.as_str())
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

fn fallback(r: &SearchResults) -> bool {
    serde_json::to_value(&r.search_criteria).unwrap()["fallback"].is_object()
}

#[test]
fn the_page_naming_the_thing_and_its_kind_comes_first_with_that_section() {
    let (_dir, e) = site();
    let r = search(&e, "Lock class");
    assert!(!fallback(&r));
    let t = titles(&r);
    let m = &r.results.messages;
    // "Lock objects" lacks "class" (only its page has it): judged per
    // section it would not be found at all.
    let lock = t.iter().position(|t| t == "Lock objects").expect("found");
    // The first result is on its page, the module page.
    assert_eq!(m[0].messages_chat_id, m[lock].messages_chat_id, "{t:?}");
    // The FAQ's passing mention of both words is still found.
    assert!(t.iter().any(|t| t.contains("slow")), "{t:?}");
    // Every result is on a page holding both words: the pool page is not.
    assert!(!t.iter().any(|t| t == "Opening" || t == "Retries"), "{t:?}");
    assert_eq!(r.total_counts.messages, m.len() as u64);
}

#[test]
fn words_no_page_holds_together_fall_back_to_any_term() {
    let (_dir, e) = site();
    let r = search(&e, "timer socket");
    assert!(fallback(&r));
    let t = titles(&r);
    assert!(t.contains(&"Timer objects".to_string()), "{t:?}");
    assert!(t.contains(&"connections".to_string()), "{t:?}");
}

#[test]
fn a_word_finds_its_inflections_and_an_exact_name_stays_first() {
    let (_dir, e) = site();
    let t = titles(&search(&e, "connections"));
    assert_eq!(t.first().map(String::as_str), Some("connections"), "{t:?}");
    // `connection` and `connecting` are found from `connections`.
    assert!(t.contains(&"Opening".to_string()), "{t:?}");
    assert!(t.contains(&"Retries".to_string()), "{t:?}");
    // A variant's hit ranks below the word's own: `connection` (typed)
    // finds the section saying it before the one saying `connecting`.
    let t = titles(&search(&e, "connection"));
    let at = |s: &str| t.iter().position(|x| x == s).unwrap();
    assert!(at("Opening") < at("Retries"), "{t:?}");
}

#[test]
fn a_quoted_word_is_searched_exactly() {
    let (_dir, e) = site();
    let t = titles(&search(&e, "\"connecting\""));
    assert_eq!(t, vec!["Retries".to_string()]);
}

/// A site where two words are in every page, each in more sections than
/// the executor probes per term, and a third word only on a few of the
/// last pages.
fn common_words_site() -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("site");
    for i in 0..130 {
        let rare = if (120..125).contains(&i) {
            "\n\n## Rare\n\nOnly here is zeta, beside alpha."
        } else {
            ""
        };
        write(
            &root,
            &format!("p{i:03}.md"),
            &format!(
                "# Page {i}\n\n## First\n\nalpha and beta, {i}.\n\n## Second\n\nalpha and gamma.\n\n\
                 ## Third\n\nbeta and delta.{rare}\n"
            ),
        );
    }
    let engine = build(&root, &dir.path().join("site.gsx"));
    (dir, engine)
}

#[test]
fn scoring_only_the_rarest_terms_pages_ranks_as_scoring_every_section() {
    use gitsense_engine::plan::TargetSql;
    use gitsense_engine::query::ast::Target;
    let (dir, e) = common_words_site();
    let sections = |q: &str| {
        let r = e.search(q, &SearchOptions::default()).unwrap();
        r.total_counts.messages
    };
    // Each common word is in more sections than a probe reads (256), so
    // only the rare word narrows the pages.
    assert!(sections("alpha OR alphas") > 256 && sections("beta") > 256);
    // A connection of its own, as the browser's warm-up ranks.
    let conn = rusqlite::Connection::open(dir.path().join("site.gsx")).unwrap();
    let tally = gitsense_engine::index::rank::register(&conn).unwrap();
    let ranked =
        |sql: &TargetSql| gitsense_engine::search::ranked_page(&conn, &tally, sql, 50, 0).unwrap();
    for (q, total) in [
        // The five pages holding all three words, four sections each.
        ("zeta alpha beta", 20),
        // Three sections of each of them hold one of these.
        ("beta zeta", 15),
        // Every page holds both: no term narrows the pages.
        ("alpha beta", 130 * 3 + 5),
    ] {
        let planned = e.plan_search(q, &SearchOptions::default()).unwrap();
        let sql = planned
            .plan()
            .target_plans
            .iter()
            .find(|t| t.target == Target::Messages)
            .and_then(|t| t.sql.clone())
            .unwrap();
        assert!(!sql.page_term_fts.is_empty(), "{q}");
        let narrowed = ranked(&sql);
        // Without the terms on their own, every section holding any word
        // is scored.
        let every = ranked(&TargetSql {
            page_term_fts: Vec::new(),
            ..sql.clone()
        });
        assert_eq!(narrowed, every, "{q}");
        assert_eq!(every.1, total, "{q}");
        assert_eq!(every.0.len(), total.min(50) as usize, "{q}");
    }
}
