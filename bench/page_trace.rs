//! Which pages of an index queries read, by table: what lazy loading in
//! the browser has to fetch beyond the hot pages.
//!
//! ```text
//! cargo run --release -p gitsense-bench --bin page-trace -- INDEX.gsx QUERY...
//! ```
//!
//! For each query (a fresh connection each, so nothing is cached): the
//! distinct pages the search reads, how many of them are not hot (not in
//! the bundle `publish` ships), per table, and the doclist rows the lazy
//! warm-up predicts for each target (`index::doclists`).

use gitsense_engine::index::doclists::doclist_rowids;
use gitsense_engine::plan::{self, MatchMode};
use gitsense_engine::query::ast::Target;
use gitsense_engine::{profiles, query, SearchOptions};
use gitsense_publish::hot::{hot_pages, page_owners, Traced};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((index, queries)) = args.split_first() else {
        eprintln!("usage: page-trace INDEX.gsx QUERY...");
        std::process::exit(2);
    };
    let path = Path::new(index);
    let fail = |e: gitsense_engine::Error| -> ! {
        eprintln!("error: {e}");
        std::process::exit(1)
    };
    let t = Traced::open(path).unwrap_or_else(|e| fail(e));
    let owners = page_owners(&t.conn).unwrap_or_else(|e| fail(e));
    let page_kib = t
        .conn
        .query_row("PRAGMA page_size", [], |r| r.get::<_, i64>(0))
        .unwrap_or_else(|e| {
            fail(gitsense_engine::Error::new(
                "internal.sqlite",
                e.to_string(),
            ))
        }) as usize
        / 1024;
    drop(t);
    let hot: BTreeSet<u32> = hot_pages(path)
        .unwrap_or_else(|e| fail(e))
        .pages
        .into_iter()
        .collect();
    println!("{} hot pages", hot.len());
    for q in queries {
        let (engine, trace) = Traced::engine(path).unwrap_or_else(|e| fail(e));
        let parsed = query::parse(q, &profiles::exists).unwrap_or_else(|e| fail(e));
        let p = plan::plan(&parsed, &SearchOptions::default(), MatchMode::AllTerms)
            .unwrap_or_else(|e| fail(e));
        let mut predicted = Vec::new();
        for tp in &p.target_plans {
            let Some(fts) = tp.sql.as_ref().and_then(|s| s.fts.as_ref()) else {
                continue;
            };
            let table = match tp.target {
                Target::Chats => "fts_chats",
                Target::Messages => "fts_messages",
                Target::CodeBlocks => "fts_code_blocks",
            };
            let rows = doclist_rowids(engine.connection(), table, fts).unwrap_or_default();
            predicted.push(format!("{table} {}", rows.len()));
        }
        trace.take_pages();
        let r = engine
            .search(q, &SearchOptions::default())
            .unwrap_or_else(|e| fail(e));
        let pages = trace.take_pages();
        let mut cold: BTreeMap<&str, usize> = BTreeMap::new();
        for p in pages.iter().filter(|p| !hot.contains(p)) {
            *cold
                .entry(owners.get(p).map(String::as_str).unwrap_or("?"))
                .or_default() += 1;
        }
        let n: usize = cold.values().sum();
        println!(
            "{q}: {} results, {} pages read, {n} not hot ({} KiB)",
            r.total_results_returned,
            pages.len(),
            n * page_kib
        );
        let by: Vec<String> = cold.iter().map(|(t, n)| format!("{t} {n}")).collect();
        println!("  not hot: {}", by.join(", "));
        println!("  doclist rows predicted: {}", predicted.join(", "));
    }
}
