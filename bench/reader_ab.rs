//! The SQLite-free reader (`gitsense_engine::reader`) next to the engine,
//! on built indexes and their query sets: for each query, whether the
//! reader answered (or left it to SQLite: `reader.unsupported`), whether
//! its results object equals the engine's byte for byte, and the median
//! time of each, warm (the file in memory for the reader, in the page
//! cache for SQLite).
//!
//! `--rounds`: instead, the rounds of page fetches each answered query
//! takes in the browser's lazy mode (`Reader::attempt` over a source that
//! holds the published hot pages and collects what it lacks), and the
//! pages they fetch against the pages a search reading page by page reads
//! (beyond the hot pages).
//!
//!   cargo run --release -p gitsense-bench --bin reader-ab -- INDEX QUERIES.json [INDEX QUERIES.json ...] [--runs N] [--rounds]
//!
//! QUERIES.json: an array of strings or of objects with a `text` (the
//! query sets of `bench/sites.py` and `bench/reader-queries`). Queries run
//! as a search box sends them (`mode: box`). Exits non-zero when any
//! answer differs.

use gitsense_engine::index::pagevfs::{PageSource, PAGE_MISSING};
use gitsense_engine::plan::QueryMode;
use gitsense_engine::reader::Reader;
use gitsense_engine::search::results_json;
use gitsense_engine::{Engine, SearchOptions};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;
use std::time::Instant;

/// The index file as the browser holds it: the pages fetched so far; a read
/// of another fails with `PAGE_MISSING`, the page collected (or, `all`,
/// every read is served and recorded).
struct Pages {
    bytes: Rc<Vec<u8>>,
    page_size: u64,
    have: Rc<RefCell<BTreeSet<u64>>>,
    missing: Rc<RefCell<BTreeSet<u64>>>,
    all: bool,
}

impl PageSource for Pages {
    fn size(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> gitsense_engine::Result<()> {
        let pages = offset / self.page_size..=(offset + buf.len() as u64 - 1) / self.page_size;
        if self.all {
            self.have.borrow_mut().extend(pages);
        } else {
            let lacking: Vec<u64> = pages.filter(|p| !self.have.borrow().contains(p)).collect();
            if !lacking.is_empty() {
                self.missing.borrow_mut().extend(lacking);
                return Err(gitsense_engine::Error::new(PAGE_MISSING, "not fetched"));
            }
        }
        buf.copy_from_slice(&self.bytes[offset as usize..offset as usize + buf.len()]);
        Ok(())
    }
}

/// `--rounds` for one index: a row of the table.
fn rounds(index: &str, texts: &[String], opts: &SearchOptions) -> String {
    let bytes = Rc::new(std::fs::read(index).expect("the index reads"));
    let page_size = u64::from(u16::from_be_bytes([bytes[16], bytes[17]]));
    let hot: BTreeSet<u64> = gitsense_publish::hot::hot_pages(std::path::Path::new(index))
        .expect("the hot pages")
        .pages
        .iter()
        .map(|&p| u64::from(p) - 1)
        .collect();
    let source =
        |have: &Rc<RefCell<BTreeSet<u64>>>, missing: &Rc<RefCell<BTreeSet<u64>>>, all| Pages {
            bytes: bytes.clone(),
            page_size,
            have: have.clone(),
            missing: missing.clone(),
            all,
        };
    let (mut per_query, mut fetched, mut read) = (Vec::new(), 0usize, 0usize);
    for q in texts {
        // Opened on the hot pages: what opening reads is fetched then.
        let have = Rc::new(RefCell::new(hot.clone()));
        let missing = Rc::new(RefCell::new(BTreeSet::new()));
        let mut reader = loop {
            match Reader::open(source(&have, &missing, false)) {
                Ok(r) => break r,
                Err(e) if e.code == PAGE_MISSING => {
                    let m = std::mem::take(&mut *missing.borrow_mut());
                    have.borrow_mut().extend(m);
                }
                Err(e) => panic!("{index}: {e}"),
            }
        };
        let opened = have.borrow().len();
        let Ok(planned) = reader.plan_search(q, opts) else {
            continue;
        };
        let mut n = 0;
        let answered = loop {
            match reader.attempt(&planned) {
                Ok(Some(_)) => break true,
                Ok(None) => {
                    let m = std::mem::take(&mut *missing.borrow_mut());
                    have.borrow_mut().extend(m);
                    n += 1;
                }
                Err(_) => break false,
            }
        };
        if !answered {
            continue;
        }
        per_query.push(n);
        fetched += have.borrow().len() - opened;
        let traced = Rc::new(RefCell::new(BTreeSet::new()));
        let mut plain = Reader::open(source(&traced, &missing, true)).expect("the reader opens");
        traced.borrow_mut().clear();
        plain.search(q, opts).expect("answered above");
        read += traced.borrow().iter().filter(|p| !hot.contains(p)).count();
    }
    per_query.sort_unstable();
    let name = std::path::Path::new(index)
        .parent()
        .and_then(|p| p.file_name())
        .map_or(index.to_string(), |n| n.to_string_lossy().into_owned());
    let share = |k: usize| {
        per_query.iter().filter(|&&n| n <= k).count() as f64 / per_query.len().max(1) as f64 * 100.0
    };
    format!(
        "| {name} | {} | {} | {} | {:.0}% | {:.0}% | {fetched} | {read} | {:.3} |",
        per_query.len(),
        per_query.get(per_query.len() / 2).copied().unwrap_or(0),
        per_query.last().copied().unwrap_or(0),
        share(2),
        share(3),
        fetched as f64 / read.max(1) as f64
    )
}

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
    let by_rounds = args.iter().any(|a| a == "--rounds");
    args.retain(|a| a != "--rounds");
    if let Some(i) = args.iter().position(|a| a == "--runs") {
        runs = args[i + 1].parse().expect("--runs N");
        args.drain(i..i + 2);
    }
    if args.is_empty() || args.len() % 2 != 0 {
        eprintln!(
            "usage: reader-ab INDEX QUERIES.json [INDEX QUERIES.json ...] [--runs N] [--rounds]"
        );
        std::process::exit(2);
    }
    if by_rounds {
        println!("| index | answered | rounds, median | rounds, most | in ≤ 2 | in ≤ 3 | pages fetched | pages read one by one | fetched/read |");
        println!("|---|---|---|---|---|---|---|---|---|");
    } else {
        println!("| index | queries | reader answered | equal | differ | reader median | SQLite median | reader/SQLite |");
        println!("|---|---|---|---|---|---|---|---|");
    }
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
        if by_rounds {
            let opts = SearchOptions {
                mode: QueryMode::Box,
                ..Default::default()
            };
            println!("{}", rounds(index, &texts, &opts));
            continue;
        }
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
