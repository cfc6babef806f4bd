//! The search command as gitctx's command line behaves: terse on a
//! terminal and JSON in a pipe, `-v`, `--mcp` / `--format mcp`, `-n`,
//! the wording of conflicting format flags, and a git repository's files
//! shown with their last commit and the lines of the match. The terminal is
//! a real pseudo-terminal (`script` from util-linux).

#[path = "../../../tests/common/mod.rs"]
mod common;
use common::*;
mod run;
use run::{cli, on_terminal, stdout};
use std::path::{Path, PathBuf};

fn git(dir: &Path, author: &str, date: &str, args: &[&str]) -> String {
    git_as(dir, author, "dev@example.com", date, args)
}

const AUTH_RS: &str = "//! Sessions.\n\nuse std::time::Duration;\n\n\
pub struct Session {\n    ttl: Duration,\n}\n\n\
/// Checks a token against the vault.\n\
pub fn verify_token(token: &str) -> bool {\n    !token.is_empty()\n}\n\n\
pub fn logout() {}\n";

/// A repository `acme/vault` whose `src/auth.rs` was last changed by
/// Grace on 2025-10-02 ("Add token verification"), and whose README is
/// Ada's first commit; built into an index. The auth commit's hash too.
fn git_index() -> (PathBuf, String) {
    let dir = temp_dir().join("gitctx");
    let index = dir.join("vault.gsx");
    let hash_file = dir.join("auth-commit");
    if !index.exists() {
        let repo = dir.join("acme").join("vault");
        std::fs::create_dir_all(repo.join("src")).unwrap();
        git(&repo, "Ada", "2025-09-01T10:00:00Z", &["init", "-q"]);
        std::fs::write(repo.join("README.md"), "# Vault\n\nStores tokens.\n").unwrap();
        git(&repo, "Ada", "2025-09-01T10:00:00Z", &["add", "."]);
        git(
            &repo,
            "Ada",
            "2025-09-01T10:00:00Z",
            &["commit", "-qm", "Start the vault"],
        );
        std::fs::write(repo.join("src/auth.rs"), AUTH_RS).unwrap();
        git(&repo, "Grace", "2025-10-02T09:30:00Z", &["add", "."]);
        let msg = "Add token verification\n\nA longer body that terse output leaves out.";
        git(
            &repo,
            "Grace",
            "2025-10-02T09:30:00Z",
            &["commit", "-qm", msg],
        );
        let hash = git(
            &repo,
            "Grace",
            "2025-10-02T09:30:00Z",
            &["rev-parse", "HEAD"],
        );
        let o = cli(&[
            "build",
            "--git",
            repo.to_str().unwrap(),
            "--out",
            index.to_str().unwrap(),
            "--quiet",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::write(&hash_file, hash).unwrap();
    }
    (index, std::fs::read_to_string(hash_file).unwrap())
}

#[test]
fn terse_is_the_default_on_a_terminal_and_json_in_a_pipe() {
    let (index, hash) = git_index();
    let index = index.to_str().unwrap();
    let out = on_terminal(&["search", index, "verify_token msg-type:git-blob"], false);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    // path:line:score sha (date, author) "subject", as gitctx prints it.
    let (location, commit) = lines[0].split_once(' ').unwrap();
    assert!(location.starts_with("src/auth.rs:10:"), "{out}");
    location["src/auth.rs:10:".len()..]
        .parse::<f64>()
        .expect("a score");
    assert_eq!(
        commit,
        format!(
            "{} (2025-10-02, Grace) \"Add token verification\"",
            &hash[..7]
        )
    );
    assert!(lines[1].starts_with("1 results in ") && lines[1].ends_with('s'));

    let piped = cli(&["search", index, "verify_token msg-type:git-blob"]);
    let v: serde_json::Value = serde_json::from_slice(&piped.stdout).expect("JSON in a pipe");
    let m = &v["results"]["messages"][0];
    assert_eq!(m["messages_meta_commit_hash"], hash.as_str());
    assert_eq!(m["messages_meta_commit_author"], "Grace");
    assert_eq!(m["messages_meta_commit_date"], "2025-10-02T09:30:00Z");
}

#[test]
fn verbose_numbers_the_lines_of_the_match_and_colours_only_a_terminal() {
    let (index, hash) = git_index();
    let index = index.to_str().unwrap();
    let q = "verify_token msg-type:git-blob";
    let piped = stdout(&cli(&["search", index, q, "-v"]));
    assert!(!piped.contains('\x1b'), "{piped}");
    assert!(piped.starts_with("src/auth.rs:10-10 ("), "{piped}");
    assert!(
        piped
            .lines()
            .next()
            .unwrap()
            .ends_with(&format!(") {} (2025-10-02, Grace)", &hash[..7])),
        "{piped}"
    );
    assert_eq!(piped.lines().nth(1), Some("  Add token verification"));
    // The match's line and two either side, numbered as in the file.
    for (n, text) in [
        (8, ""),
        (9, "/// Checks a token against the vault."),
        (10, "pub fn verify_token(token: &str) -> bool {"),
        (11, "    !token.is_empty()"),
        (12, "}"),
    ] {
        let line = format!("    {n:>2} │ {text}");
        assert!(piped.lines().any(|l| l == line), "{line:?} in\n{piped}");
    }
    assert!(
        !piped.contains(" 7 │") && !piped.contains("13 │"),
        "{piped}"
    );

    let coloured = on_terminal(&["search", index, q, "-v"], false);
    assert!(
        coloured.contains("\x1b[35mfn\x1b[0m verify_token"),
        "{coloured}"
    );
    assert!(coloured.contains("\x1b[2;3m/// Checks a token against the vault.\x1b[0m"));
    assert!(coloured.contains("\x1b[2m10\x1b[0m │ "));
    let plain = on_terminal(&["search", index, q, "--verbose"], true);
    assert!(!plain.contains('\x1b'), "{plain}");
    assert!(plain.contains("    10 │ pub fn verify_token(token: &str) -> bool {"));
}

#[test]
fn mcp_is_markdown_with_yaml_front_matter_naming_files_lines_and_commits() {
    let (index, hash) = git_index();
    let index = index.to_str().unwrap();
    let q = "verify_token msg-type:git-blob";
    let mcp = stdout(&cli(&["search", index, q, "--mcp"]));
    let long = stdout(&cli(&["search", index, q, "--format", "mcp"]));
    assert_eq!(without_footer(&mcp), without_footer(&long));
    let front = front_matter(&mcp).expect("YAML front matter");
    let r = &front["results"][0];
    assert_eq!(r["file_path"], "src/auth.rs");
    assert_eq!(r["line_numbers"], "10-10");
    assert_eq!(r["commit_sha"], hash.as_str());
    assert!(r["score"].is_number());
    assert!(mcp.contains("\n## src/auth.rs:10-10\n"), "{mcp}");
    assert!(
        mcp.contains(&format!(" | **Commit:** {} | **Chat:** ", &hash[..7])),
        "{mcp}"
    );
    assert!(
        mcp.contains("```rust\n\n/// Checks a token against the vault.\npub fn verify_token("),
        "{mcp}"
    );
    assert!(mcp.contains("\n1 results in "), "{mcp}");
}

/// The output without its `N results in X.XXs` line, whose time differs
/// between two runs.
fn without_footer(out: &str) -> String {
    out.lines()
        .filter(|l| !l.contains(" results in "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn limit_keeps_at_most_n_results_in_all() {
    let idx = sample_index();
    let idx = idx.to_str().unwrap();
    let all: serde_json::Value =
        serde_json::from_slice(&cli(&["search", idx, "payment"]).stdout).unwrap();
    assert!(all["totalResultsReturned"].as_u64().unwrap() > 3);
    for flag in ["-n", "--limit"] {
        let o = cli(&["search", idx, "payment", flag, "3", "--format", "terse"]);
        let out = stdout(&o);
        assert_eq!(out.lines().count(), 4, "{out}");
        assert!(out.ends_with('s') || out.ends_with("s\n"));
        assert!(out.contains("\n3 results in "), "{out}");
    }
    let v: serde_json::Value =
        serde_json::from_slice(&cli(&["search", idx, "payment", "-n", "3"]).stdout).unwrap();
    assert_eq!(v["totalResultsReturned"], 3);
    let o = cli(&["search", idx, "payment", "-n", "3", "--per-page", "2"]);
    assert_eq!(o.status.code(), Some(2));
    let o = cli(&["search", idx, "payment", "-n", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--limit"));
}

#[test]
fn two_format_flags_are_mutually_exclusive_with_exit_2() {
    let idx = sample_index();
    let idx = idx.to_str().unwrap();
    for (flags, message) in [
        (
            &["--mcp", "--verbose"][..],
            "Error: --mcp and --verbose are mutually exclusive",
        ),
        (
            &["--format", "mcp", "--verbose"][..],
            "Error: --format and --verbose are mutually exclusive",
        ),
        (
            &["-v", "--format", "json"][..],
            "Error: --format and --verbose are mutually exclusive",
        ),
        (
            &["--markdown", "--mcp"][..],
            "Error: --mcp and --markdown are mutually exclusive",
        ),
    ] {
        let mut args = vec!["search", idx, "test"];
        args.extend_from_slice(flags);
        let o = cli(&args);
        assert_eq!(o.status.code(), Some(2), "{flags:?}");
        assert_eq!(String::from_utf8_lossy(&o.stderr).trim_end(), message);
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn zero_results_say_so_in_every_text_format() {
    let (index, _) = git_index();
    let index = index.to_str().unwrap();
    for flags in [&["--format", "terse"][..], &["-v"], &["--mcp"]] {
        let mut args = vec!["search", index, "nonexistent_xyz_function"];
        args.extend_from_slice(flags);
        let o = cli(&args);
        assert!(o.status.success());
        assert!(
            stdout(&o).contains("0 results in "),
            "{flags:?}: {}",
            stdout(&o)
        );
    }
}

#[test]
fn facets_and_git_nav_work_on_an_imported_repository() {
    let (index, _) = git_index();
    let index = index.to_str().unwrap();
    let json = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["search", index];
        all.extend_from_slice(args);
        let o = cli(&all);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice(&o.stdout).unwrap()
    };
    // Facets over the files' text: one file per language, one repository.
    let v = json(&["msg-type:git-blob", "--facets", "lang,repo,branch"]);
    let counts = |field: &str| -> Vec<(String, u64)> {
        let f = v["facets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["field"] == field && f["target"] == "messages")
            .unwrap();
        f["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                (
                    x["value"].as_str().unwrap().to_string(),
                    x["count"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(counts("lang"), [("markdown".into(), 1), ("rust".into(), 1)]);
    assert_eq!(counts("repo"), [("acme/vault".to_string(), 2)]);
    assert_eq!(counts("branch"), [("main".to_string(), 2)]);
    // git-nav, level by level.
    let names = |q: &str| -> Vec<String> {
        json(&[q])["results"]["chats"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["chats_name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names("profile:git-nav"), ["vault"]);
    assert_eq!(names("git-owner:acme"), ["vault"]);
    assert_eq!(names("git-repository:acme/vault"), ["main"]);
    assert_eq!(
        names("git-repository:acme/vault git-branch:main"),
        ["README.md", "src"]
    );
    let top = json(&["git-repository:acme/vault git-branch:main"]);
    let src = top["results"]["chats"][1]["chats_id"].as_i64().unwrap();
    assert_eq!(names(&format!("git-ls-tree-id:{src}")), ["auth.rs"]);
}
