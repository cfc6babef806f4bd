//! The native half of `bench/import.mjs`: a chat export imported into a
//! writable index with the code the browser runs (`ExportFeeder` pieces,
//! `live::Import` batches in one transaction), natively, to see what the
//! batch size and SQLite's page cache change.
//!
//!   cargo run --release -p gitsense-bench --bin import-native -- EXPORT OUT.db [--batch N] [--cache-mib N] [--fts-buffer-mib N]
//!
//! Prints the import's time, the index's size and the time by phase
//! (reading and parsing the export, storing the batches, committing).

use gitsense_chat_export::{root_chat, ExportFeeder};
use gitsense_engine::index::live::{self, Import};
use std::io::Read;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let opt = |name: &str, dflt: usize| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(dflt)
    };
    let (export, out) = (&args[1], &args[2]);
    let batch = opt("--batch", 4096);
    let defaults = live::ImportTuning::default();
    let tuning = live::ImportTuning {
        cache_mib: opt("--cache-mib", defaults.cache_mib as usize) as u32,
        fts_buffer_mib: opt("--fts-buffer-mib", defaults.fts_buffer_mib as usize) as u32,
    };
    let _ = std::fs::remove_file(out);
    let conn = rusqlite::Connection::open(out)?;
    conn.execute_batch("PRAGMA journal_mode = PERSIST;")?;
    live::create(&conn, "local:bench", "2026-01-01T00:00:00Z")?;
    let name = std::path::Path::new(export)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let t = Instant::now();
    let mut import = Import::begin(&conn, &root_chat(&name), tuning)?;
    let mut feeder = ExportFeeder::new(name.clone());
    let mut file = std::fs::File::open(export)?;
    let mut buf = vec![0u8; 65536];
    let (mut parse, mut store) = (0f64, 0f64);
    let mut pending = (Vec::new(), Vec::new(), Vec::new());
    let flush = |import: &mut Import,
                 p: &mut (Vec<_>, Vec<_>, Vec<_>)|
     -> Result<f64, Box<dyn std::error::Error>> {
        let s = Instant::now();
        import.add(&conn, &p.0, &p.1, &p.2)?;
        *p = (Vec::new(), Vec::new(), Vec::new());
        Ok(s.elapsed().as_secs_f64())
    };
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        let s = Instant::now();
        let convs = feeder.feed(&buf[..n])?;
        parse += s.elapsed().as_secs_f64();
        for c in convs {
            pending.0.push(c.chat);
            pending.1.extend(c.messages);
            pending.2.extend(c.code_blocks);
        }
        if pending.1.len() >= batch {
            store += flush(&mut import, &mut pending)?;
        }
    }
    let (rest, summary) = feeder.finish(&name)?;
    for c in rest {
        pending.0.push(c.chat);
        pending.1.extend(c.messages);
        pending.2.extend(c.code_blocks);
    }
    store += flush(&mut import, &mut pending)?;
    let s = Instant::now();
    let done = import.commit(&conn, &summary.root.meta, None)?;
    let commit = s.elapsed().as_secs_f64();
    drop(conn);
    println!(
        "batch {batch}, cache {} MiB, FTS5 buffer {} MiB: {:.1} s (parse {parse:.1}, store {store:.1}, commit {commit:.1}); {} messages; {:.1} MiB",
        tuning.cache_mib,
        tuning.fts_buffer_mib,
        t.elapsed().as_secs_f64(),
        done.messages,
        std::fs::metadata(out)?.len() as f64 / 1048576.0
    );
    Ok(())
}
