//! The native half of the comparative benchmark (`bench/run.mjs` drives it).
//!
//! ```text
//! cargo run --release -p gitsense-bench --bin bench-native -- latency INDEX QUERIES.json [--runs N] [--time-budget-ms MS] [--slowest N]
//! cargo run --release -p gitsense-bench --bin bench-native -- queries INDEX --count N [--seed S]
//! cargo run --release -p gitsense-bench --bin bench-native -- pages DOCS_DIR --out PAGES.json
//! cargo run --release -p gitsense-bench --bin bench-native -- fts5 PAGES.json --out DB [--page-size N]
//! ```
//!
//! - `latency`: opens the index in-process and runs every query of the
//!   set (a JSON array of strings or of `{text}` objects) as the browser
//!   module's `searchJson(q, {})` does (all targets, default options, the
//!   results object serialized); one warm-up pass, then `--runs` timed
//!   passes (default 3). Prints JSON: open time, median / p95 / p99 / max
//!   over every timed search, errors. `--time-budget-ms` sets the search time
//!   budget (default the engine's; 0 lifts it, so that a slowed-down run,
//!   under valgrind, does the same work as a normal one instead of being
//!   cut short).
//! - `queries`: a fixed query set drawn from the index itself: messages
//!   sampled with a fixed seed, one or two adjacent words of each (four
//!   letters or more, no stop words), as a reader types what they saw.
//!   Prints a JSON array of strings.
//! - `pages`: the pages the docs importer indexes (same walk, same
//!   main-content extraction) as `[{path, title, headings, text}]`: the
//!   text other engines index, so every engine gets the same pages.
//! - `fts5`: a plain SQLite FTS5 database of those pages, the way
//!   sql.js-httpvfs recommends (`page_size`, `optimize`, `VACUUM`):
//!   `pages(path UNINDEXED, title, headings, body)`.

use gitsense_engine::Engine;
use gitsense_import::docs::site_pages;
use rusqlite::Connection;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[allow(dead_code)] // sample() serves docs_quality only
#[path = "rng.rs"]
mod rng;
use rng::Rng;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("latency") => latency(&args[1..]),
        Some("queries") => queries(&args[1..]),
        Some("pages") => pages(&args[1..]),
        Some("fts5") => fts5(&args[1..]),
        _ => Err("usage: bench-native latency|queries|pages|fts5 ... (see bench/native.rs)".into()),
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

type Res = Result<(), String>;

/// Positional arguments and `--name value` options.
struct Args {
    positional: Vec<String>,
    named: Vec<(String, String)>,
}

impl Args {
    fn parse(args: &[String]) -> Result<Args, String> {
        let mut a = Args {
            positional: Vec::new(),
            named: Vec::new(),
        };
        let mut it = args.iter();
        while let Some(s) = it.next() {
            if let Some(name) = s.strip_prefix("--") {
                let v = it.next().ok_or(format!("--{name} needs a value"))?;
                a.named.push((name.to_string(), v.clone()));
            } else {
                a.positional.push(s.clone());
            }
        }
        Ok(a)
    }
    fn pos(&self, i: usize, what: &str) -> Result<&str, String> {
        self.positional
            .get(i)
            .map(String::as_str)
            .ok_or(format!("missing {what}"))
    }
    fn get(&self, name: &str) -> Option<&str> {
        self.named
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
    fn num(&self, name: &str, default: u64) -> Result<u64, String> {
        self.get(name)
            .map(|v| v.parse().map_err(|_| format!("--{name} must be a number")))
            .unwrap_or(Ok(default))
    }
}

fn write_json(out: Option<&str>, v: &Value) -> Res {
    let text = serde_json::to_string_pretty(v).unwrap() + "\n";
    match out {
        Some(p) => std::fs::write(p, text).map_err(|e| format!("writing {p}: {e}")),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

fn latency(args: &[String]) -> Res {
    let a = Args::parse(args)?;
    let index = PathBuf::from(a.pos(0, "INDEX")?);
    let file = a.pos(1, "QUERIES.json")?;
    let runs = a.num("runs", 3)?.max(1);
    let set: Value = serde_json::from_str(
        &std::fs::read_to_string(file).map_err(|e| format!("reading {file}: {e}"))?,
    )
    .map_err(|e| format!("{file}: {e}"))?;
    let queries: Vec<String> = set
        .as_array()
        .ok_or("the query set must be a JSON array")?
        .iter()
        .filter_map(|q| {
            q.as_str()
                .or_else(|| q["text"].as_str())
                .map(str::to_string)
        })
        .collect();
    let t = Instant::now();
    let mut engine = Engine::open(&index).map_err(|e| format!("{}: {e}", index.display()))?;
    let open_ms = ms(t);
    if let Some(v) = a.get("time-budget-ms") {
        let ms: f64 = v
            .parse()
            .map_err(|_| "--time-budget-ms must be a number".to_string())?;
        engine.set_time_budget((ms > 0.0).then_some(ms));
    }
    let mut errors = 0;
    for q in &queries {
        errors += usize::from(engine.search_json(q, "{}").is_err());
    }
    let mut times = Vec::with_capacity(queries.len() * runs as usize);
    let mut per_query = vec![Vec::with_capacity(runs as usize); queries.len()];
    for _ in 0..runs {
        for (i, q) in queries.iter().enumerate() {
            let t = Instant::now();
            let r = engine.search_json(q, "{}");
            let took = ms(t);
            times.push(took);
            per_query[i].push(took);
            std::hint::black_box(r.ok());
        }
    }
    // The queries behind the tail: each query's median over the runs, slowest first.
    let mut slowest: Vec<(f64, &String)> = per_query
        .iter_mut()
        .zip(&queries)
        .map(|(t, q)| {
            t.sort_by(f64::total_cmp);
            (t[t.len() / 2], q)
        })
        .collect();
    slowest.sort_by(|a, b| b.0.total_cmp(&a.0));
    slowest.truncate(a.num("slowest", 0)? as usize);
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        let i = ((times.len() as f64 * p).ceil() as usize).clamp(1, times.len()) - 1;
        round3(times[i])
    };
    write_json(
        None,
        &json!({
            "index": index.display().to_string(),
            "sqlite": rusqlite::version(),
            "queries": queries.len(),
            "runs": runs,
            "open_ms": round3(open_ms),
            "median_ms": pct(0.5),
            "p95_ms": pct(0.95),
            "p99_ms": pct(0.99),
            "max_ms": pct(1.0),
            "errors": errors,
            "slowest": slowest
                .iter()
                .map(|(t, q)| json!({ "query": q, "median_ms": round3(*t) }))
                .collect::<Vec<_>>(),
        }),
    )
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

const STOP_WORDS: &[&str] = &[
    "about", "above", "after", "again", "also", "been", "before", "being", "below", "between",
    "both", "could", "does", "doing", "down", "each", "even", "every", "from", "further", "have",
    "having", "here", "hers", "into", "itself", "just", "like", "make", "many", "more", "most",
    "much", "must", "need", "only", "other", "ours", "over", "same", "should", "some", "such",
    "than", "that", "their", "theirs", "them", "then", "there", "these", "they", "this", "those",
    "through", "under", "until", "very", "want", "were", "what", "when", "where", "which", "while",
    "will", "with", "would", "your", "yours", "true", "false", "none", "null", "self",
];

fn queries(args: &[String]) -> Res {
    let a = Args::parse(args)?;
    let index = a.pos(0, "INDEX")?;
    let count = a.num("count", 200)? as usize;
    let mut rng = Rng(a.num("seed", 0x5eed)?);
    let conn = Connection::open_with_flags(index, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| format!("{index}: {e}"))?;
    let max_id: i64 = conn
        .query_row("SELECT coalesce(max(id), 0) FROM message_text", [], |r| {
            r.get(0)
        })
        .map_err(|e| format!("{index}: {e}"))?;
    if max_id == 0 {
        return Err(format!("{index} has no messages to draw queries from"));
    }
    let mut stmt = conn
        .prepare("SELECT body FROM message_text WHERE id >= ?1 ORDER BY id LIMIT 1")
        .map_err(|e| e.to_string())?;
    let mut out: Vec<String> = Vec::new();
    let mut attempts = 0;
    while out.len() < count && attempts < count * 50 {
        attempts += 1;
        let id = 1 + rng.below(max_id as usize) as i64;
        let body: String = match stmt.query_row([id], |r| r.get(0)) {
            Ok(b) => b,
            Err(_) => continue,
        };
        let words: Vec<String> = body
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| {
                w.chars().count() >= 4
                    && w.chars().all(char::is_alphabetic)
                    && !STOP_WORDS.contains(&w.to_lowercase().as_str())
            })
            .map(str::to_lowercase)
            .collect();
        if words.is_empty() {
            continue;
        }
        let i = rng.below(words.len());
        let q = if rng.below(2) == 1 && i + 1 < words.len() {
            format!("{} {}", words[i], words[i + 1])
        } else {
            words[i].clone()
        };
        if !out.contains(&q) {
            out.push(q);
        }
    }
    write_json(a.get("out"), &json!(out))
}

fn pages(args: &[String]) -> Res {
    let a = Args::parse(args)?;
    let dir = Path::new(a.pos(0, "DOCS_DIR")?);
    let pages = site_pages(dir).map_err(|e| e.to_string())?;
    let list: Vec<Value> = pages
        .iter()
        .map(|p| {
            let headings: Vec<&str> = p
                .page
                .units
                .iter()
                .filter(|u| u.kind == gitsense_import::docs::UnitKind::Section)
                .map(|u| u.title.as_str())
                .collect();
            let text: Vec<&str> = p.page.units.iter().map(|u| u.text.as_str()).collect();
            json!({
                "path": p.path,
                "title": p.title,
                "headings": headings.join("\n"),
                "text": text.join("\n\n"),
            })
        })
        .collect();
    eprintln!("{} pages", list.len());
    write_json(a.get("out"), &Value::Array(list))
}

fn fts5(args: &[String]) -> Res {
    let a = Args::parse(args)?;
    let input = a.pos(0, "PAGES.json")?;
    let out = a.get("out").ok_or("--out DB is required")?;
    let page_size = a.num("page-size", 1024)?;
    let pages: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(input).map_err(|e| format!("reading {input}: {e}"))?,
    )
    .map_err(|e| format!("{input}: {e}"))?;
    let _ = std::fs::remove_file(out);
    let mut conn = Connection::open(out).map_err(|e| format!("{out}: {e}"))?;
    let sql = |e: rusqlite::Error| format!("{out}: {e}");
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = delete; PRAGMA page_size = {page_size};
         CREATE VIRTUAL TABLE pages USING fts5(path UNINDEXED, title, headings, body);"
    ))
    .map_err(sql)?;
    let tx = conn.transaction().map_err(sql)?;
    {
        let mut ins = tx
            .prepare("INSERT INTO pages(path, title, headings, body) VALUES (?1, ?2, ?3, ?4)")
            .map_err(sql)?;
        for p in &pages {
            let s = |k: &str| p[k].as_str().unwrap_or("").to_string();
            ins.execute([s("path"), s("title"), s("headings"), s("text")])
                .map_err(sql)?;
        }
    }
    tx.commit().map_err(sql)?;
    conn.execute_batch("INSERT INTO pages(pages) VALUES ('optimize'); VACUUM;")
        .map_err(sql)?;
    eprintln!("{} pages into {out}", pages.len());
    Ok(())
}
