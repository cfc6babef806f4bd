//! What facets cost: each query of a set searched plain and with facets
//! (the `facets` search option, as the demo's chips ask for them), in
//! turn, on one engine opened in-process.
//!
//! ```text
//! cargo run --release -p gitsense-bench --bin bench-native -- queries INDEX --count 200 > Q.json
//! cargo run --release -p gitsense-bench --bin facets -- INDEX Q.json [--facets chat-type,lang,repo] [--runs 3]
//! ```
//!
//! In: an index and a query set (a JSON array of strings, or of `{text}`
//! objects). Every query runs once of each kind to warm the page cache,
//! then `--runs` timed passes alternate plain and faceted searches of the
//! same query, so both see the same cache. A search is the browser
//! module's `searchJson` (default options, one page of results, the results
//! object serialized); the faceted one adds `facets`.
//! Out: JSON with the median, p95 and max of each kind over every timed
//! search, the ratio of the medians and of the p95s, and the mean number
//! of values the facets counted.

use gitsense_engine::{Engine, SearchOptions};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Instant;

fn main() {
    if let Err(e) = run(&std::env::args().skip(1).collect::<Vec<_>>()) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run(args: &[String]) -> Result<(), String> {
    let mut positional = Vec::new();
    let mut facets = "chat-type,lang,repo".to_string();
    let mut runs = 3usize;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--facets" => facets = it.next().ok_or("--facets needs a value")?.clone(),
            "--runs" => {
                runs = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or("--runs needs a number")?
            }
            _ => positional.push(a.clone()),
        }
    }
    let [index, queries] = positional.as_slice() else {
        return Err("usage: facets INDEX QUERIES.json [--facets F,G] [--runs N]".into());
    };
    let queries = read_queries(Path::new(queries))?;
    let engine = Engine::open(Path::new(index)).map_err(|e| e.to_string())?;
    let plain = SearchOptions::default();
    let faceted = SearchOptions {
        facets: facets.split(',').map(str::to_string).collect(),
        ..SearchOptions::default()
    };
    let search = |q: &str, opts: &SearchOptions| -> Result<(f64, usize), String> {
        let t = Instant::now();
        let r = engine.search(q, opts).map_err(|e| format!("{q}: {e}"))?;
        let text = serde_json::to_string(&r).map_err(|e| e.to_string())?;
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        let values = r.facets.iter().flatten().map(|f| f.values.len()).sum();
        std::hint::black_box(text);
        Ok((ms, values))
    };
    for q in &queries {
        search(q, &plain)?;
        search(q, &faceted)?;
    }
    let (mut plain_ms, mut faceted_ms, mut values) = (Vec::new(), Vec::new(), 0usize);
    for _ in 0..runs {
        for q in &queries {
            plain_ms.push(search(q, &plain)?.0);
            let (ms, n) = search(q, &faceted)?;
            faceted_ms.push(ms);
            values += n;
        }
    }
    let (p, f) = (stats(&mut plain_ms), stats(&mut faceted_ms));
    let out = json!({
        "index": index,
        "queries": queries.len(),
        "runs": runs,
        "facets": facets,
        "plain": p,
        "faceted": f,
        "ratio_median": round(f["median_ms"].as_f64().unwrap_or(0.0) / p["median_ms"].as_f64().unwrap_or(1.0)),
        "ratio_p95": round(f["p95_ms"].as_f64().unwrap_or(0.0) / p["p95_ms"].as_f64().unwrap_or(1.0)),
        "mean_values_counted": round(values as f64 / faceted_ms.len().max(1) as f64),
    });
    println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    Ok(())
}

fn read_queries(path: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let list = v.as_array().ok_or("the query set is not a JSON array")?;
    let queries: Vec<String> = list
        .iter()
        .filter_map(|q| q.as_str().or_else(|| q["text"].as_str()))
        .map(str::to_string)
        .collect();
    if queries.is_empty() {
        return Err("the query set holds no query".into());
    }
    Ok(queries)
}

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn stats(ms: &mut [f64]) -> Value {
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    json!({
        "median_ms": round(at(0.5)),
        "p95_ms": round(at(0.95)),
        "max_ms": round(at(1.0)),
    })
}
