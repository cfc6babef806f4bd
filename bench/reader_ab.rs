//! The SQLite-free reader (`gitsense_engine::reader`) next to the engine,
//! on built indexes and their query sets: for each query, whether the
//! reader answered (or left it to SQLite: `reader.unsupported`), whether
//! its results object equals the engine's byte for byte, and the median
//! time of each, warm (the file in memory for the reader, in the page
//! cache for SQLite).
//!
//!   cargo run --release -p gitsense-bench --bin reader-ab -- INDEX QUERIES.json [INDEX QUERIES.json ...] [--runs N]
//!
//! QUERIES.json: an array of strings or of objects with a `text` (the
//! query sets of `bench/sites.py` and `bench/reader-queries`). Queries run
//! as a search box sends them (`mode: box`). Exits non-zero when any
//! answer differs.

use gitsense_engine::plan::QueryMode;
use gitsense_engine::reader::Reader;
use gitsense_engine::search::results_json;
use gitsense_engine::{Engine, SearchOptions};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    v[v.len() / 2]
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 3usize;
    if let Some(i) = args.iter().position(|a| a == "--runs") {
        runs = args[i + 1].parse().expect("--runs N");
        args.drain(i..i + 2);
    }
    if args.is_empty() || args.len() % 2 != 0 {
        eprintln!("usage: reader-ab INDEX QUERIES.json [INDEX QUERIES.json ...] [--runs N]");
        std::process::exit(2);
    }
    println!("| index | queries | reader answered | equal | differ | reader median | SQLite median | reader/SQLite |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut differ_total = 0;
    for pair in args.chunks(2) {
        let (index, queries) = (&pair[0], &pair[1]);
        let list: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(queries).expect("queries file"))
                .expect("queries JSON");
        let texts: Vec<String> = list
            .as_array()
            .expect("an array of queries")
            .iter()
            .filter_map(|q| {
                q.as_str()
                    .or_else(|| q["text"].as_str())
                    .map(str::to_string)
            })
            .collect();
        let mut engine = Engine::open(std::path::Path::new(index)).expect("the index opens");
        engine.set_time_budget(None);
        let mut reader =
            Reader::open(std::fs::read(index).expect("the index reads")).expect("the reader opens");
        let opts = SearchOptions {
            mode: QueryMode::Box,
            ..Default::default()
        };
        let (mut answered, mut equal, mut differ) = (0, 0, 0);
        let (mut t_reader, mut t_sql) = (Vec::new(), Vec::new());
        for q in &texts {
            let want = engine.search(q, &opts).map(|r| results_json(&r).unwrap());
            match reader.search(q, &opts) {
                Ok(mine) => {
                    answered += 1;
                    if want.as_ref().ok() == Some(&results_json(&mine).unwrap()) {
                        equal += 1;
                    } else {
                        differ += 1;
                        eprintln!("{index}: {q:?} differs");
                    }
                    for _ in 0..runs {
                        let t = Instant::now();
                        let _ = reader.search(q, &opts);
                        t_reader.push(t.elapsed().as_secs_f64() * 1000.0);
                        let t = Instant::now();
                        let _ = engine.search(q, &opts);
                        t_sql.push(t.elapsed().as_secs_f64() * 1000.0);
                    }
                }
                Err(e) if e.code == "reader.unsupported" => {}
                Err(e) => {
                    differ += 1;
                    eprintln!("{index}: {q:?}: the reader failed: {e}");
                }
            }
        }
        differ_total += differ;
        let (r, s) = (median(t_reader), median(t_sql));
        let name = std::path::Path::new(index)
            .parent()
            .and_then(|p| p.file_name())
            .map_or(index.clone(), |n| n.to_string_lossy().into_owned());
        println!(
            "| {name} | {} | {answered} | {equal} | {differ} | {r:.2} ms | {s:.2} ms | {:.2}× |",
            texts.len(),
            r / s
        );
    }
    if differ_total > 0 {
        std::process::exit(1);
    }
}
