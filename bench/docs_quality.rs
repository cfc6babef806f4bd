//! Ranking quality of the documentation importer on a real Sphinx site.
//!
//! ```text
//! cargo run --release -p gitsense-bench --bin docs_quality -- [--docs DIR] [--sample N] [--key KEY] [--no-write]
//! cargo run --release -p gitsense-bench --bin docs_quality -- [--docs DIR] [--sample N] --dump-queries FILE
//! ```
//!
//! Builds an index of the site (default: the Python 3.11 docs from
//! Debian's `python3.11-doc`, `/usr/share/doc/python3.11/html`), then asks
//! it queries generated from the site itself, by code that does not share
//! the importer's extraction:
//!
//! - **api**: every Python and C object a page defines (`dt[id]` in a
//!   `dl.py` / `dl.c`): `json.dumps`, `os.path.join`, `PyList_New` → the
//!   pages defining it.
//! - **index**: every entry of Sphinx's per-letter index pages
//!   (`genindex-*.html`), as a reader would type it (`join() (str method)`
//!   → `join`, `Java` › `language` → `Java language`) → the pages its links
//!   (and its qualifier sub-entries' links) point to.
//! - **title**: the title and up to three headings of randomly chosen pages
//!   → every page having a heading with exactly that text.
//!
//! The "first result" is what a docs search box shows first: the page of
//! the best-ranked message. Results are reduced to distinct pages in the
//! order of their best message (among the first 50 messages); success@k
//! says an expected page is among the first k pages, MRR@10 averages
//! 1/rank (0 beyond 10). Queries run as typed plus `in:messages` (the
//! message ranking is the same as in the default all-targets search; the
//! chats and code-block lists are not part of the measure).
//!
//! Each class is sampled to `--sample` queries (default 2000; 0 = all) with
//! a fixed seed. The run is repeated on an index built without the site's
//! own index pages (`--no-site-index`) to show what they contribute.
//! Numbers go to `bench/results.json` (key `docs_quality`, or `--key`) and
//! to that key's marked section of `BENCHMARKS.md`. Failed queries are
//! listed in `bench/out/docs_quality_failures.md`.
//!
//! `--dump-queries FILE` writes the sampled query set as JSON
//! (`[{class, text, expected: [page paths]}]`) and stops: the comparative
//! benchmark (`bench/run.mjs`) asks every engine these queries.

use gitsense_engine::{Engine, Highlight, SearchOptions};
use gitsense_import::{self as import, docs::DocsOptions};
use scraper::{ElementRef, Html, Node, Selector};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[path = "rng.rs"]
mod rng;
use rng::Rng;

const DEFAULT_DOCS: &str = "/usr/share/doc/python3.11/html";
const MESSAGES_PER_QUERY: u64 = 50;
const SEED: u64 = 0x5eed_d0c5;

struct Query {
    class: &'static str,
    text: String,
    expected: BTreeSet<String>,
}

fn main() {
    let mut docs = PathBuf::from(DEFAULT_DOCS);
    let mut sample = 2000usize;
    let mut write = true;
    let mut only: Option<String> = None;
    let mut key = "docs_quality".to_string();
    let mut dump: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--docs" => docs = PathBuf::from(args.next().expect("--docs DIR")),
            "--sample" => {
                sample = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .expect("--sample N")
            }
            "--no-write" => write = false,
            "--only" => only = args.next(),
            "--key" => key = args.next().expect("--key NAME"),
            "--dump-queries" => {
                dump = Some(PathBuf::from(args.next().expect("--dump-queries FILE")))
            }
            other => panic!("unknown argument {other}"),
        }
    }
    if !docs.is_dir() {
        eprintln!(
            "{} not found: install it with `apt-get install -y python3.11-doc` or pass --docs DIR",
            docs.display()
        );
        std::process::exit(1);
    }
    let out_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("out");
    std::fs::create_dir_all(&out_dir).expect("bench/out");

    let pages = html_files(&docs);
    let mut queries = Vec::new();
    let mut rng = Rng(SEED);
    let api = api_queries(&docs, &pages);
    let index = index_queries(&docs, &pages);
    let titles = title_queries(&docs, &pages, &mut rng, sample);
    println!(
        "generated {} api, {} index, {} title queries (before sampling)",
        api.len(),
        index.len(),
        titles.len()
    );
    queries.extend(rng.sample(api, sample));
    queries.extend(rng.sample(index, sample));
    queries.extend(rng.sample(titles, sample));
    if let Some(file) = dump {
        let list: Vec<Value> = queries
            .iter()
            .map(|q| json!({"class": q.class, "text": q.text, "expected": q.expected}))
            .collect();
        std::fs::write(&file, serde_json::to_string(&list).unwrap() + "\n")
            .unwrap_or_else(|e| panic!("writing {}: {e}", file.display()));
        println!("wrote {} queries to {}", list.len(), file.display());
        return;
    }

    let mut report = serde_json::Map::new();
    let mut site_name = String::new();
    let mut failures = String::new();
    for (label, use_site_index) in [("with_site_index", true), ("without_site_index", false)] {
        if only.as_deref().is_some_and(|o| o != label) {
            continue;
        }
        let out = out_dir.join(format!("python-docs-{label}.gsx"));
        let started = Instant::now();
        let opts = DocsOptions {
            base_url: Some("https://docs.python.org/3.11/".into()),
            use_site_index,
        };
        let (stats, _) = import::build_with(&out, format!("docs:{}", docs.display()), |w| {
            import::docs::import(&docs, &opts, w, &import::no_progress())
        })
        .expect("building the docs index");
        let build_s = started.elapsed().as_secs_f64();
        let gzip = gzip_size(&out);
        let engine = Engine::open(&out).expect("opening the index");
        if let Ok(r) = engine.search("in:chats chat-type:git-repo", &SearchOptions::default()) {
            if let Some(name) = r.results.chats.first().and_then(|c| c.chats_name.clone()) {
                site_name = name;
            }
        }
        let (classes, fails, latency) = evaluate(&engine, &queries);
        failures.push_str(&format!("## {label}\n{fails}\n"));
        println!(
            "{label}: built in {build_s:.1}s, {} bytes ({} gzip); {}",
            stats.size_bytes,
            gzip.map(|g| g.to_string()).unwrap_or_else(|| "?".into()),
            summary(&classes)
        );
        report.insert(
            label.to_string(),
            json!({
                "build_seconds": round(build_s, 2),
                "index_bytes": stats.size_bytes,
                "index_gzip_bytes": gzip,
                "chats": stats.chats,
                "messages": stats.messages,
                "code_blocks": stats.code_blocks,
                "query_ms": latency,
                "classes": classes,
            }),
        );
    }
    std::fs::write(out_dir.join("docs_quality_failures.md"), failures).ok();
    let result = json!({
        "command": command(&docs, sample, &key),
        "date": gitsense_engine::util::iso8601_utc(now_secs()),
        "machine": machine(),
        "corpus": docs.display().to_string(),
        "site": site_name,
        "pages": pages.len(),
        "sample_per_class": sample,
        "first_result": "page of the best-ranked message; results reduced to distinct pages in order of their best message among the first 50",
        "runs": Value::Object(report),
    });
    if write {
        write_results(&key, &result);
    }
    println!("{}", serde_json::to_string_pretty(&result).unwrap());
}

/// The command line that reproduces a run.
fn command(docs: &Path, sample: usize, key: &str) -> String {
    let mut c =
        format!("cargo run --release -p gitsense-bench --bin docs_quality -- --sample {sample}");
    if docs != Path::new(DEFAULT_DOCS) {
        c.push_str(&format!(" --docs {}", docs.display()));
    }
    if key != "docs_quality" {
        c.push_str(&format!(" --key {key}"));
    }
    c
}

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

fn round(v: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (v * f).round() / f
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    format!("{cpu}, {cores} cores, {}", std::env::consts::OS)
}

fn gzip_size(path: &Path) -> Option<u64> {
    let out = std::process::Command::new("gzip")
        .arg("-9")
        .arg("-c")
        .arg(path)
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout.len() as u64)
}

/// Every HTML file under the site, relative, sorted (assets excluded).
fn html_files(root: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if name.starts_with('_') || name.starts_with('.') {
                continue;
            }
            if p.is_dir() {
                walk(root, &p, out);
            } else if name.ends_with(".html") {
                out.push(
                    p.strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/"),
                );
            }
        }
    }
    let mut v = Vec::new();
    walk(root, root, &mut v);
    v
}

fn read(root: &Path, rel: &str) -> Html {
    Html::parse_document(&String::from_utf8_lossy(
        &std::fs::read(root.join(rel)).unwrap(),
    ))
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).unwrap()
}

fn text(e: ElementRef) -> String {
    e.text()
        .collect::<String>()
        .replace('\u{b6}', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Characters the query language gives meaning to are typed as spaces.
fn as_typed(q: &str) -> String {
    q.chars()
        .map(|c| if "()\"':".contains(c) { ' ' } else { c })
        .collect::<String>()
        .split_whitespace()
        .map(|w| w.trim_start_matches('-'))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn is_site_page(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    !name.starts_with("genindex") && !matches!(name, "search.html" | "py-modindex.html")
}

fn api_queries(root: &Path, pages: &[String]) -> Vec<Query> {
    let dt = sel("dl.py > dt[id], dl.c > dt[id]");
    let sig_name = sel(".sig-name");
    let sig_prename = sel(".sig-prename");
    let mut by_name: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for rel in pages.iter().filter(|p| is_site_page(p)) {
        let doc = read(root, rel);
        for e in doc.select(&dt) {
            let id = e.value().id().unwrap_or("");
            let shown = e.select(&sig_name).next().map(text).unwrap_or_default();
            let prefix = e.select(&sig_prename).next().map(text).unwrap_or_default();
            // The name as written in code: Python ids spell the qualified
            // name (`json.JSONDecoder.decode`) unless Sphinx mangled it
            // (`__import__` has the id `import__`); C names are global.
            let name = if id.starts_with("c.") || !id.ends_with(&shown) {
                format!("{prefix}{shown}")
            } else {
                id.to_string()
            };
            let ok = !shown.is_empty()
                && name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_')
                && name
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
            if ok {
                by_name.entry(name).or_default().insert(rel.clone());
            }
        }
    }
    by_name
        .into_iter()
        .map(|(text, expected)| Query {
            class: "api",
            text,
            expected,
        })
        .collect()
}

fn resolve(from: &str, href: &str) -> Option<String> {
    if href.contains("://") {
        return None;
    }
    let path = href.split('#').next()?;
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

fn index_queries(root: &Path, pages: &[String]) -> Vec<Query> {
    let mut by_term: BTreeMap<String, (String, BTreeSet<String>)> = BTreeMap::new();
    let top =
        sel("table.indextable > tbody > tr > td > ul > li, table.indextable > tr > td > ul > li");
    // Per-letter pages when the index is split, else the single page.
    let split = pages.iter().any(|p| p.starts_with("genindex-"));
    for rel in pages.iter().filter(|p| {
        if split {
            p.starts_with("genindex-") && p.as_str() != "genindex-all.html"
        } else {
            p.as_str() == "genindex.html"
        }
    }) {
        let doc = read(root, rel);
        for li in doc.select(&top) {
            entry(rel, li, None, &mut by_term);
        }
    }
    by_term
        .into_values()
        .filter(|(t, e)| t.chars().any(char::is_alphanumeric) && !e.is_empty())
        .map(|(text, expected)| Query {
            class: "index",
            text,
            expected,
        })
        .collect()
}

/// One `<li>` of the index: its label (leading text or first link) and
/// links; nested items either qualify it (`(bytes method)`) or refine it.
fn entry(
    from: &str,
    li: ElementRef,
    parent: Option<&str>,
    out: &mut BTreeMap<String, (String, BTreeSet<String>)>,
) {
    let mut label = String::new();
    let mut links = Vec::new();
    let mut subs = Vec::new();
    for c in li.children() {
        match c.value() {
            Node::Text(t) if links.is_empty() => label.push_str(t),
            Node::Element(el) => {
                let ce = ElementRef::wrap(c).unwrap();
                match el.name() {
                    "a" => {
                        if links.is_empty() && label.trim().is_empty() {
                            label = text(ce);
                        }
                        if let Some(h) = el.attr("href") {
                            links.push(h.to_string());
                        }
                    }
                    "ul" => subs.extend(
                        ce.children()
                            .filter_map(ElementRef::wrap)
                            .filter(|x| x.value().name() == "li"),
                    ),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    let label = label.split_whitespace().collect::<Vec<_>>().join(" ");
    let label = label.trim_end_matches(',').trim().to_string();
    let term = match parent {
        Some(p) if label.starts_with('(') || label.is_empty() => p.to_string(),
        Some(p) => format!("{p} {label}"),
        None => label,
    };
    // What a reader types: no call parentheses, no "(in module x)".
    let mut typed = term.trim().to_string();
    if typed.ends_with(')') {
        if let Some(i) = typed.rfind(" (") {
            typed.truncate(i);
        }
    }
    let typed = as_typed(typed.trim_end_matches("()"));
    if !links.is_empty() && !typed.is_empty() {
        let slot = out
            .entry(typed.to_lowercase())
            .or_insert_with(|| (typed.clone(), BTreeSet::new()));
        for h in &links {
            if let Some(p) = resolve(from, h) {
                slot.1.insert(p);
            }
        }
    }
    for s in subs {
        entry(from, s, Some(&term), out);
    }
}

fn title_queries(root: &Path, pages: &[String], rng: &mut Rng, sample: usize) -> Vec<Query> {
    // Headings of the main content: Sphinx marks it role=main, mdBook and
    // most others use <main>.
    let in_main = |root: &str| {
        sel(&(1..=6)
            .map(|i| format!("{root} h{i}"))
            .collect::<Vec<_>>()
            .join(", "))
    };
    let (role_main, main) = (in_main("[role=main]"), in_main("main"));
    let has_role_main = sel("[role=main]");
    let mut by_text: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut per_page: Vec<(String, Vec<(u8, String)>)> = Vec::new();
    for rel in pages.iter().filter(|p| is_site_page(p)) {
        let doc = read(root, rel);
        let mut hs = Vec::new();
        let headings = if doc.select(&has_role_main).next().is_some() {
            &role_main
        } else {
            &main
        };
        for h in doc.select(headings) {
            let t = text(h);
            if t.is_empty() {
                continue;
            }
            by_text
                .entry(as_typed(&t).to_lowercase())
                .or_default()
                .insert(rel.clone());
            let level = h.value().name()[1..].parse::<u8>().unwrap_or(6);
            hs.push((level, t));
        }
        if !hs.is_empty() {
            per_page.push((rel.clone(), hs));
        }
    }
    let n_pages = if sample == 0 {
        per_page.len()
    } else {
        (sample / 4).max(1)
    };
    let chosen = rng.sample(per_page, n_pages);
    let mut out = Vec::new();
    for (_, hs) in chosen {
        let mut picks: Vec<String> = hs
            .iter()
            .filter(|(l, _)| *l == 1)
            .take(1)
            .map(|(_, t)| t.clone())
            .collect();
        let rest: Vec<String> = hs
            .iter()
            .filter(|(l, _)| *l > 1)
            .map(|(_, t)| t.clone())
            .collect();
        picks.extend(rng.sample(rest, 3));
        for t in picks {
            let typed = as_typed(&t);
            if typed.chars().any(char::is_alphanumeric) {
                let expected = by_text[&typed.to_lowercase()].clone();
                out.push(Query {
                    class: "title",
                    text: typed,
                    expected,
                });
            }
        }
    }
    out
}

/// Runs the queries; returns per-class metrics, failure examples and
/// latency percentiles.
fn evaluate(engine: &Engine, queries: &[Query]) -> (Value, String, Value) {
    let opts = SearchOptions {
        per_page: Some(MESSAGES_PER_QUERY),
        highlight: Highlight::None,
        include_content: false,
        ..SearchOptions::default()
    };
    #[derive(Default)]
    struct Acc {
        n: usize,
        at1: usize,
        at10: usize,
        rr: f64,
        errors: usize,
    }
    let mut acc: BTreeMap<&str, Acc> = BTreeMap::new();
    let mut fails = String::new();
    let mut times = Vec::new();
    for q in queries {
        let t = Instant::now();
        let r = engine.search(&format!("{} in:messages", q.text), &opts);
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        let a = acc.entry(q.class).or_default();
        a.n += 1;
        let pages: Vec<String> = match r {
            Ok(r) => {
                let mut seen = BTreeSet::new();
                r.results
                    .messages
                    .iter()
                    .filter_map(|m| {
                        m.meta
                            .get("messages_meta_file_path")
                            .and_then(|v| v.as_str())
                            .map(str::to_string)
                    })
                    .filter(|p| seen.insert(p.clone()))
                    .take(10)
                    .collect()
            }
            Err(e) => {
                a.errors += 1;
                fails.push_str(&format!("- [{}] `{}`: error {e}\n", q.class, q.text));
                continue;
            }
        };
        let rank = pages.iter().position(|p| q.expected.contains(p));
        match rank {
            Some(0) => {
                a.at1 += 1;
                a.at10 += 1;
                a.rr += 1.0;
            }
            Some(i) => {
                a.at10 += 1;
                a.rr += 1.0 / (i + 1) as f64;
            }
            None => {}
        }
        if rank != Some(0) {
            fails.push_str(&format!(
                "- [{}] `{}` → got {:?}, expected {:?}\n",
                q.class,
                q.text,
                pages.iter().take(3).collect::<Vec<_>>(),
                q.expected.iter().take(3).collect::<Vec<_>>()
            ));
        }
    }
    let mut classes = serde_json::Map::new();
    let mut total = Acc::default();
    let metrics = |a: &Acc| {
        json!({
            "queries": a.n,
            "success_at_1": round(a.at1 as f64 / a.n.max(1) as f64, 4),
            "success_at_10": round(a.at10 as f64 / a.n.max(1) as f64, 4),
            "mrr_at_10": round(a.rr / a.n.max(1) as f64, 4),
            "errors": a.errors,
        })
    };
    for (class, a) in &acc {
        classes.insert(class.to_string(), metrics(a));
        total.n += a.n;
        total.at1 += a.at1;
        total.at10 += a.at10;
        total.rr += a.rr;
        total.errors += a.errors;
    }
    classes.insert("overall".into(), metrics(&total));
    times.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| {
        times
            .get(((times.len() as f64 * p) as usize).min(times.len().saturating_sub(1)))
            .copied()
            .map(|v| round(v, 2))
    };
    let latency = json!({"p50": pct(0.5), "p95": pct(0.95), "max": pct(1.0)});
    (Value::Object(classes), fails, latency)
}

fn summary(classes: &Value) -> String {
    let mut s = Vec::new();
    if let Value::Object(m) = classes {
        for (k, v) in m {
            s.push(format!(
                "{k}: @1 {:.1}% @10 {:.1}% MRR {:.3} (n={})",
                v["success_at_1"].as_f64().unwrap_or(0.0) * 100.0,
                v["success_at_10"].as_f64().unwrap_or(0.0) * 100.0,
                v["mrr_at_10"].as_f64().unwrap_or(0.0),
                v["queries"]
            ));
        }
    }
    s.join("; ")
}

fn write_results(key: &str, result: &Value) {
    let begin = format!("<!-- {key}:begin (written by bench/docs_quality.rs) -->");
    let end = format!("<!-- {key}:end -->");
    // The repository root: this tool is the `bench` crate.
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let path = root.join("bench/results.json");
    let mut all: serde_json::Map<String, Value> = std::fs::read_to_string(&path)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default();
    all.insert(key.into(), result.clone());
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&Value::Object(all)).unwrap() + "\n",
    )
    .expect("writing bench/results.json");

    let mut md = String::new();
    md.push_str(&begin);
    md.push_str(&format!(
        "\n## Documentation search quality: {} (`{key}`)\n\n",
        result["site"].as_str().unwrap_or("")
    ));
    md.push_str(&format!(
        "- Command: `{}`\n- Date: {}\n- Machine: {}\n- Corpus: `{}` ({} HTML files)\n- First result: {}.\n\n",
        result["command"].as_str().unwrap_or(""),
        result["date"].as_str().unwrap_or(""),
        result["machine"].as_str().unwrap_or(""),
        result["corpus"].as_str().unwrap_or(""),
        result["pages"],
        result["first_result"].as_str().unwrap_or(""),
    ));
    md.push_str(
        "| index | build | size | gzip | query p50 / p95 |\n| --- | --- | --- | --- | --- |\n",
    );
    let runs = result["runs"].as_object().cloned().unwrap_or_default();
    for (label, r) in &runs {
        md.push_str(&format!(
            "| {label} | {} s | {:.1} MB | {:.1} MB | {} / {} ms |\n",
            r["build_seconds"],
            r["index_bytes"].as_f64().unwrap_or(0.0) / 1e6,
            r["index_gzip_bytes"].as_f64().unwrap_or(0.0) / 1e6,
            r["query_ms"]["p50"],
            r["query_ms"]["p95"],
        ));
    }
    md.push_str("\n| index | class | queries | success@1 | success@10 | MRR@10 |\n| --- | --- | --- | --- | --- | --- |\n");
    for (label, r) in &runs {
        if let Some(classes) = r["classes"].as_object() {
            for (class, v) in classes {
                md.push_str(&format!(
                    "| {label} | {class} | {} | {:.1}% | {:.1}% | {:.3} |\n",
                    v["queries"],
                    v["success_at_1"].as_f64().unwrap_or(0.0) * 100.0,
                    v["success_at_10"].as_f64().unwrap_or(0.0) * 100.0,
                    v["mrr_at_10"].as_f64().unwrap_or(0.0),
                ));
            }
        }
    }
    md.push('\n');
    md.push_str(&end);
    let bench_md = root.join("BENCHMARKS.md");
    let old = std::fs::read_to_string(&bench_md).unwrap_or_else(|_| "# Benchmarks\n".into());
    let new = match (old.find(&begin), old.find(&end)) {
        (Some(a), Some(b)) if b > a => format!("{}{}{}", &old[..a], md, &old[b + end.len()..]),
        _ => format!("{}\n{}\n", old.trim_end(), md),
    };
    std::fs::write(&bench_md, new).expect("writing BENCHMARKS.md");
}
