//! The fault suite: hostile inputs and hostile conditions, run through the
//! CLI end to end. Each test is a fault found by probing: the input or
//! event, and what must hold instead of data loss, a crash, a hang or a
//! silent corruption. The generators of hostile inputs are at the bottom.
#![cfg(unix)]

#[path = "../../../tests/common/mod.rs"]
mod common;
use common::*;
mod run;
use run::{bin, stderr, stdout};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn cli(args: &[&str]) -> Output {
    run_within(bin().args(args), Duration::from_secs(120))
}

/// `build --chat-export EXPORT --out OUT -q`.
fn build_export(export: &Path, out: &Path) -> Output {
    cli(&["build", "--chat-export", s(export), "--out", s(out), "-q"])
}

/// `build --docs SITE --out OUT -q`, given a minute (the hostile-site
/// tests: a hang there is the failure).
fn build_docs(site: &Path, out: &Path) -> Output {
    run_within(
        bin().args(["build", "--docs", s(site), "--out", s(out), "-q"]),
        Duration::from_secs(60),
    )
}

/// Runs `cmd` to the end, failing the test (and killing it) when it takes
/// longer than `limit`: a hang is a fault too. Its output is drained
/// while it runs, so a chatty command cannot stall on a full pipe.
fn run_within(cmd: &mut Command, limit: Duration) -> Output {
    use std::io::Read;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cli starts");
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(st) = child.try_wait().expect("waiting") {
            break st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = temp_dir().join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Temporary files (`.NAME.*.tmp`, `*.tmp`) left in `dir`.
fn temp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

/// The sample database's index, built by the CLI into `dir`.
fn cli_index(dir: &Path) -> PathBuf {
    let out = dir.join("sample.gsx");
    let o = cli(&[
        "build",
        "--gitsense-db",
        s(&sample_db()),
        "--out",
        s(&out),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(st.success());
}

fn signal(child: &Child, sig: &str) {
    let st = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(st.success());
}

// 1. The output path.

#[test]
fn build_refuses_to_overwrite_the_database_it_reads() {
    let d = scratch("out-is-db");
    let db = d.join("x.db");
    std::fs::copy(sample_db(), &db).unwrap();
    let before = std::fs::read(&db).unwrap();
    for force in [false, true] {
        let mut args = vec!["build", "--gitsense-db", s(&db), "--out", s(&db), "--quiet"];
        if force {
            args.push("--force");
        }
        let o = cli(&args);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("import.output_is_input"),
            "{}",
            stderr(&o)
        );
        assert_eq!(
            std::fs::read(&db).unwrap(),
            before,
            "the input is untouched"
        );
    }
}

#[test]
fn build_refuses_an_output_that_links_to_its_chat_export() {
    let d = scratch("out-links-to-export");
    let export = d.join("e.json");
    std::fs::write(&export, chat_export(&[("human", "hello there")])).unwrap();
    let link = d.join("index.gsx");
    symlink(&export, &link).unwrap();
    for out in [&export, &link] {
        let o = cli(&[
            "build",
            "--chat-export",
            s(&export),
            "--out",
            s(out),
            "--quiet",
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("import.output_is_input"),
            "{}",
            stderr(&o)
        );
    }
    assert!(std::fs::read_to_string(&export)
        .unwrap()
        .contains("hello there"));
}

#[test]
fn build_refuses_to_write_over_a_page_of_the_site_it_reads() {
    let d = scratch("out-is-page");
    let site = d.join("site");
    std::fs::create_dir(&site).unwrap();
    let page = site.join("index.html");
    std::fs::write(&page, page_html("Home", "welcome")).unwrap();
    let o = cli(&[
        "build",
        "--docs",
        s(&site),
        "--out",
        s(&page),
        "--force",
        "--quiet",
    ]);
    assert!(
        stderr(&o).contains("import.output_is_input"),
        "{}",
        stderr(&o)
    );
    assert!(std::fs::read_to_string(&page).unwrap().contains("welcome"));
}

#[test]
fn build_replaces_a_file_that_is_not_an_index_only_when_forced() {
    let d = scratch("out-not-index");
    let notes = d.join("notes.txt");
    std::fs::write(&notes, "my notes").unwrap();
    let export = d.join("e.json");
    std::fs::write(&export, chat_export(&[("human", "hello there")])).unwrap();
    let build = |force: bool| {
        let mut args = vec![
            "build",
            "--chat-export",
            s(&export),
            "--out",
            s(&notes),
            "-q",
        ];
        if force {
            args.push("--force");
        }
        cli(&args)
    };
    let o = build(false);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("import.output_not_index"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("--force"));
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes");
    assert!(build(true).status.success());
    // An index is replaced by a rebuild without being told.
    let o = build(false);
    assert!(o.status.success(), "{}", stderr(&o));
}

// 2. Nesting and size.

#[test]
fn deeply_nested_pages_are_skipped_by_name_and_the_site_still_builds() {
    let d = scratch("deep-pages");
    let site = d.join("site");
    std::fs::create_dir(&site).unwrap();
    std::fs::write(site.join("good.html"), page_html("Good", "sturdy")).unwrap();
    // Just inside the bound: kept.
    std::fs::write(
        site.join("fine.html"),
        nested_html("div", "", 200, "steadfast"),
    )
    .unwrap();
    std::fs::write(site.join("divs.html"), nested_html("div", "", 5_000, "x")).unwrap();
    std::fs::write(site.join("dl.html"), nested_html("dl", "dd", 2_000, "x")).unwrap();
    std::fs::write(
        site.join("million.html"),
        nested_html("div", "", 1_000_000, "x"),
    )
    .unwrap();
    std::fs::write(
        site.join("quote.md"),
        format!("{} deep\n", ">".repeat(5_000)),
    )
    .unwrap();
    std::fs::write(
        site.join("list.md"),
        format!("{}deep\n", "- ".repeat(3_000)),
    )
    .unwrap();
    let big = std::fs::File::create(site.join("big.html")).unwrap();
    big.set_len(33 << 20).unwrap();
    let out = d.join("docs.gsx");
    let o = build_docs(&site, &out);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    for page in [
        "divs.html",
        "dl.html",
        "million.html",
        "quote.md",
        "list.md",
    ] {
        assert!(
            err.contains(&format!("skipped {page}: import.page_too_deep")),
            "{page}: {err}"
        );
    }
    assert!(
        err.contains("skipped big.html: import.page_too_large"),
        "{err}"
    );
    assert!(!err.contains("fine.html"), "{err}");
    assert!(temp_files(&d).is_empty());
    for word in ["sturdy", "steadfast"] {
        let o = cli(&["search", s(&out), word, "--format", "terse"]);
        assert!(stdout(&o).contains(".html"), "{word}: {}", stdout(&o));
    }
}

// 3. What the docs walk reads.

#[test]
fn a_site_nested_past_the_directory_bound_still_builds_without_the_deepest_pages() {
    let d = scratch("deep-dirs");
    let site = d.join("site");
    let bound = gitsense_import::MAX_DIR_DEPTH;
    let deep = site.join(vec!["d"; bound + 3].join("/"));
    let edge = site.join(vec!["d"; bound].join("/"));
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(site.join("top.html"), page_html("Top", "shallow")).unwrap();
    std::fs::write(edge.join("edge.html"), page_html("Edge", "marginal")).unwrap();
    std::fs::write(deep.join("bottom.html"), page_html("Bottom", "abyssal")).unwrap();
    let out = d.join("docs.gsx");
    let o = build_docs(&site, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("a directory nested deeper than"),
        "{}",
        stderr(&o)
    );
    for (word, found) in [("shallow", true), ("marginal", true), ("abyssal", false)] {
        let o = cli(&["search", s(&out), word, "--format", "terse"]);
        assert_eq!(
            stdout(&o).contains(".html"),
            found,
            "{word}: {}",
            stdout(&o)
        );
    }
}

#[test]
fn the_docs_walk_reads_only_regular_files_inside_the_site() {
    let d = scratch("docs-links");
    let site = d.join("site");
    std::fs::create_dir_all(site.join("sub")).unwrap();
    std::fs::write(site.join("good.html"), page_html("Good", "sturdy")).unwrap();
    std::fs::write(site.join("sub/real.html"), page_html("Real", "genuine")).unwrap();
    symlink("sub/real.html", site.join("inside.html")).unwrap();
    let secret = d.join("secret.html");
    std::fs::write(&secret, page_html("Secret", "confidential")).unwrap();
    symlink(&secret, site.join("outside.html")).unwrap();
    symlink("/dev/zero", site.join("zero.html")).unwrap();
    symlink(d.join("missing.html"), site.join("dangling.html")).unwrap();
    mkfifo(&site.join("fifo.html"));
    let out = d.join("docs.gsx");
    let o = build_docs(&site, &out);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    for (page, why) in [
        ("outside.html", "a symbolic link out of the site"),
        ("zero.html", "a symbolic link to a special file"),
        ("dangling.html", "a dangling symbolic link"),
        ("fifo.html", "not a regular file"),
    ] {
        assert!(
            err.contains(&format!("skipped {page}: {why}")),
            "{page}: {err}"
        );
    }
    let hits = |word: &str| {
        let o = cli(&["search", s(&out), word, "--format", "terse"]);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    assert!(!hits("confidential").contains(".html"));
    // A link inside the site is read: as the page it links to, once,
    // where that page lives.
    assert!(
        err.contains("left out 1 pages: the same file as another page (a symbolic or hard link)"),
        "{err}"
    );
    let genuine = hits("genuine");
    assert!(
        genuine.contains("sub/real.html") && !genuine.contains("inside.html"),
        "{genuine}"
    );
    assert!(hits("sturdy").contains("good.html"));
}

// 4. Damaged indexes.

#[test]
fn bit_flips_are_refused_by_publish_and_info_verify() {
    let d = scratch("bit-flips");
    let index = cli_index(&d);
    let clean = std::fs::read(&index).unwrap();
    let o = cli(&["info", s(&index), "--verify"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("checksum:       verified"));
    let mut rng = Lcg(0x5eed);
    for (trial, flips) in [1, 1, 1, 1, 1, 1, 10, 10, 10, 10].into_iter().enumerate() {
        let damaged = d.join(format!("damaged-{trial}.gsx"));
        std::fs::write(&damaged, flip_bits(&clean, flips, &mut rng)).unwrap();
        let site = d.join(format!("site-{trial}"));
        let o = cli(&["publish", s(&damaged), "--out-dir", s(&site)]);
        assert_ne!(o.status.code(), Some(0), "trial {trial} published");
        assert!(stderr(&o).contains("error: index."), "{}", stderr(&o));
        assert!(!site.exists(), "trial {trial}: nothing is written");
        let o = cli(&["info", s(&damaged), "--verify"]);
        assert_ne!(o.status.code(), Some(0), "trial {trial} verified");
    }
    let site = d.join("site-clean");
    let o = cli(&["publish", s(&index), "--out-dir", s(&site)]);
    assert!(o.status.success(), "{}", stderr(&o));
}

// 5. Leftovers and small things.

#[test]
fn an_interrupted_build_leaves_no_temporary_file() {
    for sig in ["-TERM", "-INT"] {
        let d = scratch(&format!("interrupted{sig}"));
        // A FIFO nobody writes to: the build waits on it with its
        // temporary index open.
        let export = d.join("e.json");
        mkfifo(&export);
        let out = d.join("o.gsx");
        let child = bin()
            .args(["build", "--chat-export", s(&export), "--out", s(&out), "-q"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while temp_files(&d).is_empty() {
            assert!(Instant::now() < deadline, "no temporary file appeared");
            std::thread::sleep(Duration::from_millis(20));
        }
        signal(&child, sig);
        let o = child.wait_with_output().unwrap();
        assert!(!o.status.success());
        assert_eq!(temp_files(&d), Vec::<String>::new(), "{sig}");
        assert!(!out.exists());
    }
}

#[test]
fn a_build_removes_what_a_dead_build_left_and_spares_a_live_one() {
    let d = scratch("stale");
    let dead = {
        let mut c = Command::new("true").spawn().unwrap();
        c.wait().unwrap();
        c.id()
    };
    let stale = d.join(format!(".o.gsx.{dead}-0.tmp"));
    let live = d.join(format!(".o.gsx.{}-7.tmp", std::process::id()));
    std::fs::write(&stale, "left by a crash").unwrap();
    std::fs::write(&live, "being written").unwrap();
    let export = d.join("e.json");
    std::fs::write(&export, chat_export(&[("human", "hello there")])).unwrap();
    let o = build_export(&export, &d.join("o.gsx"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stale.exists());
    assert!(live.exists());
}

#[test]
fn a_publish_removes_what_a_killed_publish_left_and_spares_a_live_one() {
    let d = scratch("stale-publish");
    let index = cli_index(&d);
    let site = d.join("site");
    std::fs::create_dir_all(&site).unwrap();
    let dead = {
        let mut c = Command::new("true").spawn().unwrap();
        c.wait().unwrap();
        c.id()
    };
    let stale = [
        format!("index-0123456789abcdef.pages.{dead}.tmp"),
        format!("manifest.{dead}.tmp"),
    ];
    let live = format!("index-0123456789abcdef.gsx.{}.tmp", std::process::id());
    let other = format!("notes.{dead}.tmp");
    for name in stale.iter().chain([&live, &other]) {
        std::fs::write(site.join(name), "left").unwrap();
    }
    let o = cli(&["publish", s(&index), "--out-dir", s(&site)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut left = temp_files(&site);
    left.sort();
    assert_eq!(left, vec![live, other], "only a dead publish's files go");
}

#[test]
fn a_publish_that_runs_out_of_space_leaves_no_temporary_file() {
    let d = scratch("full-disk");
    let index = cli_index(&d);
    let site = d.join("site");
    // Files over 64 KiB fail to grow (EFBIG), as on a full disk.
    let o = run_within(
        Command::new("sh").args([
            "-c",
            "trap '' XFSZ; ulimit -f 128; exec \"$0\" publish \"$1\" --out-dir \"$2\"",
            env!("CARGO_BIN_EXE_gitsense-search"),
            s(&index),
            s(&site),
        ]),
        Duration::from_secs(120),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("internal.io"), "{}", stderr(&o));
    assert_eq!(temp_files(&site), Vec::<String>::new());
}

#[test]
fn search_output_into_a_closed_pipe_ends_quietly() {
    let d = scratch("broken-pipe");
    let index = cli_index(&d);
    for format in ["json", "terse"] {
        let mut child = bin()
            .args(["search", s(&index), "payment", "--format", format])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{format}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
}

#[test]
fn messages_into_a_closed_stderr_change_neither_the_work_nor_the_status() {
    let d = scratch("closed-stderr");
    // A site whose build warns (a page that is not UTF-8) and a query
    // error: both write to stderr, which nobody reads any more.
    let site = d.join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(site.join("a.html"), page_html("Alpha", "alpha words")).unwrap();
    std::fs::write(
        site.join("b.html"),
        b"<html><body><p>bad \xff byte</p></body></html>",
    )
    .unwrap();
    let out = d.join("site.gsx");
    let run = |args: &[&str]| {
        let mut child = bin()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stderr.take());
        child.wait_with_output().unwrap()
    };
    let o = run(&["build", "--docs", s(&site), "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(out.exists(), "the index is written");
    let o = run(&["search", s(&out), "alpha", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("Alpha"), "{}", stdout(&o));
    let o = run(&["search", s(&out), "nosuch:x alpha", "--format", "json"]);
    assert_eq!(o.status.code(), Some(2), "a query error keeps its status");
}

#[test]
fn control_characters_in_names_cannot_forge_result_lines() {
    let d = scratch("forged-lines");
    let site = d.join("site");
    std::fs::create_dir(&site).unwrap();
    let forged = "a\nFORGED:9.99 message#1 chat:1 \"x\"\n## FORGED\n.html";
    std::fs::write(site.join(forged), page_html("Evil", "shibboleth")).unwrap();
    let out = d.join("docs.gsx");
    let o = cli(&["build", "--docs", s(&site), "--out", s(&out), "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    for format in ["terse", "markdown", "verbose"] {
        let o = cli(&["search", s(&out), "shibboleth", "--format", format]);
        let text = stdout(&o);
        assert!(
            text.contains("FORGED"),
            "{format}: the name is shown: {text}"
        );
        assert!(
            text.lines()
                .all(|l| !l.starts_with("FORGED") && !l.starts_with("## FORGED")),
            "{format}: {text}"
        );
    }
}

#[test]
fn a_number_as_the_last_element_is_not_a_missing_bracket() {
    let d = scratch("number-element");
    let conv = r#"{"id":"a","conversations":[{"from":"human","value":"hello"}]}"#;
    for (text, truncated) in [
        (format!("[{conv},5]"), false),
        (format!("[{conv},5 ]"), false),
        (format!("[5,{conv},-1.5e3]"), false),
        (format!("[{conv},5"), true),
    ] {
        let export = d.join("e.json");
        std::fs::write(&export, &text).unwrap();
        let o = build_export(&export, &d.join("o.gsx"));
        assert!(o.status.success(), "{text}: {}", stderr(&o));
        assert_eq!(
            stderr(&o).contains("without its closing ']'"),
            truncated,
            "{text}: {}",
            stderr(&o)
        );
        assert!(stderr(&o).contains("not conversations"), "{}", stderr(&o));
    }
}

#[test]
fn a_huge_speaker_name_is_echoed_shortened() {
    let d = scratch("huge-speaker");
    let name = "n".repeat(1_000_000);
    let export = d.join("e.json");
    std::fs::write(&export, chat_export(&[("human", "hi"), (&name, "hello")])).unwrap();
    let o = build_export(&export, &d.join("o.gsx"));
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let head: String = err.chars().take(300).collect();
    assert!(err.len() < 2_000, "{} bytes of warnings: {head}", err.len());
    assert!(err.contains("unknown speakers"), "{err}");
    assert!(err.contains("(1000000 characters)"), "{err}");
}

// Generators of hostile inputs.

/// `depth` nested `<outer>` (each holding an `<inner>` when given) around
/// `text`, as a page.
fn nested_html(outer: &str, inner: &str, depth: usize, text: &str) -> String {
    let open = if inner.is_empty() {
        format!("<{outer}>")
    } else {
        format!("<{outer}><{inner}>")
    };
    let mut s = String::with_capacity(depth * open.len() * 2 + 200);
    s.push_str("<!DOCTYPE html><html><head><title>Deep</title></head><body><main>");
    for _ in 0..depth {
        s.push_str(&open);
    }
    s.push_str(&format!("<p>{text}</p>"));
    for _ in 0..depth {
        if !inner.is_empty() {
            s.push_str(&format!("</{inner}>"));
        }
        s.push_str(&format!("</{outer}>"));
    }
    s.push_str("</main></body></html>");
    s
}

fn page_html(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html><html><head><title>{title}</title></head><body><main>\
         <h1>{title}</h1><p>A page about {body}.</p></main></body></html>"
    )
}

/// A one-conversation ShareGPT export of `(speaker, text)` turns.
fn chat_export(turns: &[(&str, &str)]) -> String {
    let turns: Vec<serde_json::Value> = turns
        .iter()
        .map(|(from, value)| serde_json::json!({ "from": from, "value": value }))
        .collect();
    serde_json::json!([{ "id": "c1", "conversations": turns }]).to_string()
}

/// A small deterministic generator (no dependency, same flips every run).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n
    }
}

/// `bytes` with `n` bits flipped at random places past the SQLite header
/// fields SQLite itself rewrites.
fn flip_bits(bytes: &[u8], n: usize, rng: &mut Lcg) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for _ in 0..n {
        let at = 100 + rng.below(out.len() - 100);
        out[at] ^= 1 << rng.below(8);
    }
    out
}
