use gitsense_search::index::hot::{hot_pages, page_owners, Traced};
use gitsense_search::SearchOptions;
use std::collections::BTreeMap;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = std::path::Path::new(&args[1]);
    let t = Traced::open(path).unwrap();
    let owners = page_owners(&t.conn).unwrap();
    drop(t);
    let h = hot_pages(path).unwrap();
    println!("probes {:?}", h.probes);
    println!("reads per probe {:?}", h.reads_per_probe);
    let mut by: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for p in &h.pages {
        by.entry(owners.get(p).cloned().unwrap_or("?".into()))
            .or_default()
            .push(*p);
    }
    println!("hot {} pages: {:?}", h.pages.len(), h.pages);
    for (k, v) in &by {
        println!("  {k}: {v:?}");
    }
    let mut runs = 0;
    let mut prev = 0;
    for p in &h.pages {
        if *p != prev + 1 {
            runs += 1;
        }
        prev = *p;
    }
    println!("runs {runs}");
    for q in args.iter().skip(2) {
        let (e, tr) = Traced::engine(path).unwrap();
        let _ = tr.take_pages();
        let r = e.search(q, &SearchOptions::default()).unwrap();
        let pages = tr.take_pages();
        for pol in [
            "single",
            "fixed4",
            "fixed8",
            "fixed16",
            "adaptive",
            "adaptive_owner",
        ] {
            let (r, n) = simulate(&pages, &h.pages, pol, &owners);
            print!("{pol}: {r} req {n} pages; ");
        }
        println!();
        let cold: Vec<_> = pages.iter().filter(|p| !h.pages.contains(p)).collect();
        if std::env::var("SEQ").is_ok() {
            for p in &cold {
                print!(
                    "{}:{} ",
                    p,
                    owners.get(p).map(|s| s.as_str()).unwrap_or("?")
                );
            }
            println!();
        }
        let mut by: BTreeMap<String, usize> = BTreeMap::new();
        for p in &pages {
            *by.entry(owners.get(p).cloned().unwrap_or("?".into()))
                .or_default() += 1;
        }
        println!(
            "{q}: {} results, {} pages, {} not hot; {:?}",
            r.total_results_returned,
            pages.len(),
            cold.len(),
            by
        );
    }
}

pub fn simulate(
    order: &[u32],
    hot: &[u32],
    policy: &str,
    owners: &std::collections::BTreeMap<u32, String>,
) -> (usize, usize) {
    let mut have: std::collections::HashSet<u32> = hot.iter().copied().collect();
    let (mut reqs, mut pages) = (0, 0);
    // recent runs: (start, end_exclusive, size)
    let mut runs: Vec<(u32, u32, u32)> = Vec::new();
    for &p in order {
        if have.contains(&p) {
            continue;
        }
        let size: u32 = match policy {
            "single" => 1,
            "fixed4" => 4,
            "fixed8" => 8,
            "fixed16" => 16,
            "adaptive" | "adaptive_owner" => {
                let mut s = 1;
                for r in runs.iter().rev().take(8) {
                    if p >= r.1 && p <= r.1 + 2 {
                        s = (r.2 * 2).min(32);
                        break;
                    }
                }
                s
            }
            _ => 1,
        };
        let mut n = 0;
        let mut q = p;
        while n < size {
            if policy == "adaptive_owner" && owners.get(&q) != owners.get(&p) {
                break;
            }
            if !have.contains(&q) {
                have.insert(q);
                pages += 1;
            }
            q += 1;
            n += 1;
        }
        runs.push((p, p + n, n.max(1)));
        reqs += 1;
    }
    (reqs, pages)
}
