//! The native CLI end to end: build, search in every format, info, exit
//! codes and conflicting flags.

#[path = "../../../tests/common/mod.rs"]
mod common;
use common::*;
mod run;
use run::{cli, on_terminal, stderr, stdout};

fn built_index() -> String {
    let out = temp_dir().join("cli.gsx");
    if !out.exists() {
        let o = cli(&[
            "build",
            "--gitsense-db",
            sample_db().to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--quiet",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stdout(&o).contains("140 chats, 572 messages"),
            "{}",
            stdout(&o)
        );
    }
    out.to_str().unwrap().to_string()
}

#[test]
fn json_output_is_the_results_object_of_the_library() {
    let idx = built_index();
    let o = cli(&["search", &idx, "payment"]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["totalCounts"]["messages"], 46);
    let lib = gitsense_engine::Engine::open(std::path::Path::new(&idx))
        .unwrap()
        .search_json("payment", "")
        .unwrap();
    assert_eq!(
        stdout(&o).trim_end(),
        lib,
        "CLI JSON equals the library's byte for byte"
    );
}

#[test]
fn facets_are_counted_as_the_library_counts_them() {
    let idx = built_index();
    let o = cli(&[
        "search",
        &idx,
        "payment",
        "--facets",
        "lang,keywords:array",
        "--facets",
        "repo",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lib = gitsense_engine::Engine::open(std::path::Path::new(&idx))
        .unwrap()
        .search_json("payment", r#"{"facets":["lang","keywords:array","repo"]}"#)
        .unwrap();
    assert_eq!(stdout(&o).trim_end(), lib);
    let v: serde_json::Value = serde_json::from_str(&lib).unwrap();
    assert!(
        v["facets"].as_array().unwrap().len() >= 4,
        "{}",
        v["facets"]
    );
    let o = cli(&["search", &idx, "payment", "--facets", "lang:colour"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("options.bad_facet"), "{}", stderr(&o));
}

#[test]
fn terse_prints_one_line_per_result_and_a_summary() {
    let idx = built_index();
    let o = cli(&["search", &idx, "payment", "--format", "terse"]);
    assert!(o.status.success());
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 7, "{out}");
    assert!(lines[6].starts_with("6 results in ") && lines[6].ends_with('s'));
    // Chats as `location:score kind#id chat:N`, the repository's files
    // as gitctx shows them: `path:line:score sha (date, author) "subject"`.
    for l in &lines[..6] {
        let git_file = l.contains(":-")
            && l.ends_with(" 6c4d2e7 (2025-11-29, GitSense Support) \"Initial import\"");
        assert!(git_file || (l.contains(" chat:") && l.contains('#')), "{l}");
    }
}

#[test]
fn markdown_has_front_matter_sections_and_fenced_code() {
    let idx = built_index();
    let o = cli(&[
        "search",
        &idx,
        "msg-type:tiny-overview payment",
        "--format",
        "markdown",
    ]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(
        out.starts_with("---\nquery: \"msg-type:tiny-overview payment\"\n"),
        "{out}"
    );
    let front_end = out[4..].find("\n---\n").unwrap() + 4;
    let front = &out[..front_end];
    assert_eq!(front.matches("  - source_type: message").count(), 5);
    assert!(front.contains("    path: "));
    let body = &out[front_end..];
    assert_eq!(body.matches("\n## message ").count(), 5);
    assert!(body.contains("**Score:**"));
    assert!(body.contains("```markdown\n") || body.contains("```javascript\n"));
    assert!(out.trim_end().ends_with('s') && out.contains("5 results in "));
}

#[test]
fn verbose_shows_context() {
    let idx = built_index();
    let o = cli(&["search", &idx, "payment", "--verbose"]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(out.contains("chat 41 (") && out.contains("  chat ") && out.contains("    "));
    assert!(out.contains("| branch main"));
    // A git file's header has its match's lines and last commit.
    assert!(out.contains("frontend/src/components/PaymentForm.jsx:2-3 (-4.966) 6c4d2e7 (2025-11-29, GitSense Support)\n  Initial import\n"), "{out}");
}

#[test]
fn conflicting_flags_exit_2_with_a_message() {
    let idx = built_index();
    let o = cli(&["search", &idx, "payment", "--format", "json", "--verbose"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("mutually exclusive"), "{}", stderr(&o));
    let o = cli(&["search", &idx, "payment", "--verbose", "--markdown"]);
    assert_eq!(o.status.code(), Some(2));
    let o = cli(&["build", "--out", "/tmp/x.gsx"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn query_errors_exit_2_and_point_at_the_place() {
    let idx = built_index();
    let o = cli(&["search", &idx, "payment \"open"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("query.unbalanced_quote"), "{err}");
    assert!(err.contains("        ^"), "caret under the quote: {err}");
    // A query may start with '-'.
    let o = cli(&["search", &idx, "-payment in:chats", "--format", "terse"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn other_failures_exit_1() {
    let o = cli(&["search", "/nonexistent/index.gsx", "x"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("index.not_found"));
    let o = cli(&[
        "build",
        "--gitsense-db",
        "/nonexistent.db",
        "--out",
        temp_dir().join("n.gsx").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("import.not_found"));
    assert!(!temp_dir().join("n.gsx").exists(), "nothing half-written");
}

#[test]
fn info_reports_version_revision_counts_and_size() {
    let idx = built_index();
    let o = cli(&["info", &idx, "--json"]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["formatVersion"], gitsense_engine::index::FORMAT_VERSION);
    assert_eq!(v["chats"], 140);
    assert_eq!(v["messages"], 572);
    assert_eq!(v["revision"].as_str().unwrap().len(), 32);
    assert_eq!(v["pageSize"], 4096);
    let o = cli(&["info", &idx]);
    assert!(stdout(&o).contains(&format!(
        "format version: {}",
        gitsense_engine::index::FORMAT_VERSION
    )));
}

#[test]
fn help_documents_the_query_syntax() {
    let o = cli(&["search", "--help"]);
    let out = stdout(&o);
    for f in gitsense_engine::query::syntax::FILTERS {
        assert!(
            out.contains(&format!("  {}:", f.name)),
            "{} missing from --help",
            f.name
        );
    }
    assert!(out.contains("OR") && out.contains("scope"));
}

#[test]
fn publish_names_the_files_it_wrote() {
    let idx = built_index();
    let out = temp_dir().join("cli-published");
    let o = cli(&["publish", &idx, "--out-dir", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for name in ["manifest.json", "manifest.hot.gz", ".hot.gz", ".pages"] {
        assert!(text.contains(name), "{name}: {text}");
    }
    assert!(
        text.contains("again as manifest.hot.gz for first visits"),
        "{text}"
    );
    for entry in std::fs::read_dir(&out).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(text.contains(&name), "{name} is not named: {text}");
    }
}

#[test]
fn version_prints_the_crate_version() {
    let o = cli(&["--version"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o).trim(),
        format!("gitsense-search {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn the_top_level_help_names_the_commands_and_the_sources() {
    let o = cli(&["--help"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for word in [
        "build",
        "search",
        "assist",
        "publish",
        "info",
        "--gitsense-db",
        "--chat-export",
        "--git",
        "--docs",
        "--version",
    ] {
        assert!(out.contains(word), "{word} is missing from --help:\n{out}");
    }
}

#[test]
fn build_and_publish_label_their_progress_on_a_terminal_and_stay_quiet_otherwise() {
    let out = temp_dir().join("progress.gsx");
    let db = sample_db();
    let build = [
        "build",
        "--gitsense-db",
        db.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let shown = on_terminal(&build, false);
    assert!(
        shown.contains("importing GitSense database (records)"),
        "{shown}"
    );
    assert!(
        shown.contains("writing ranking records (records)"),
        "{shown}"
    );
    assert!(shown.contains("ETA"), "{shown}");
    let site = temp_dir().join("progress-site");
    let publish = [
        "publish",
        out.to_str().unwrap(),
        "--out-dir",
        site.to_str().unwrap(),
    ];
    let shown = on_terminal(&publish, false);
    assert!(shown.contains("compressing and writing (pages)"), "{shown}");
    // Not a terminal (a pipe), or --quiet: stderr stays empty.
    for args in [&build[..], &publish[..]] {
        let o = cli(args);
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(stderr(&o), "", "{args:?}");
    }
    let mut quiet = publish.to_vec();
    quiet.push("--quiet");
    assert!(!on_terminal(&quiet, false).contains("(pages)"));
}

/// Ids of the messages a JSON search returns, best first.
fn message_ids(index: &str, query: &str) -> Vec<i64> {
    let o = cli(&[
        "search",
        index,
        query,
        "--format",
        "json",
        "--per-page",
        "100",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    v["results"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["messages_id"].as_i64().unwrap())
        .collect()
}

#[test]
fn several_sources_build_one_index_each_keeping_its_own_links() {
    let site = temp_dir().join("two-sources-site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(
        site.join("guide.md"),
        "# Guide\n\n## Zanzibar tuning\n\nSet the zanzibar knob before the first search.\n",
    )
    .unwrap();
    let out = temp_dir().join("two-sources.gsx");
    let o = cli(&[
        "build",
        "--gitsense-db",
        sample_db().to_str().unwrap(),
        "--docs",
        site.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let both = out.to_str().unwrap();
    // The sample's records keep their ids and answers; the page's come after.
    let sample = built_index();
    for q in ["stripe webhook", "payment -refund", "docker"] {
        assert_eq!(message_ids(both, q), message_ids(&sample, q), "{q}");
    }
    let o = cli(&["search", both, "zanzibar", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let m = &v["results"]["messages"][0];
    assert!(m["messages_id"].as_i64().unwrap() > 572, "{m}");
    assert_eq!(m["messages_meta_url"], "guide.html#zanzibar-tuning");
    // The page's section sits in its page, under the site: its own chats.
    let path = m["chat_path"].as_str().unwrap();
    assert!(path.ends_with("Guide"), "{path}");
    let o = cli(&["info", both, "--json"]);
    let info: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(info["chats"].as_u64().unwrap() > 140, "{info}");
    assert!(
        info["source"].as_str().unwrap().contains(" + docs:"),
        "{info}"
    );
}
