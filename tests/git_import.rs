//! The git importer, on repositories the tests make with the `git` CLI:
//! several commits, a second branch, nested directories, a binary file, a
//! huge file, a symbolic link, a script without an extension; working trees
//! and bare repositories.

mod common;

use gitsense_engine::index::BuildStats;
use gitsense_engine::{Engine, Error, SearchOptions, SearchResults};
use gitsense_import::{self as import, git, ImportReport};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs git in `dir` as Ada, at `date`.
fn git_at(dir: &Path, date: &str, args: &[&str]) {
    common::git_as(dir, "Ada Lovelace", "ada@example.com", date, args);
}

fn git(dir: &Path, args: &[&str]) {
    git_at(dir, "2024-01-01T00:00:00Z", args);
}

fn write(root: &Path, rel: &str, content: impl AsRef<[u8]>) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

const T1: i64 = 1_704_067_200; // 2024-01-01T00:00:00Z
const T2: i64 = 1_706_745_600; // 2024-02-01T00:00:00Z

/// `<tmp>/acme/widgets`: main with two commits, `feature` with a third.
fn make_repo(tmp: &Path) -> PathBuf {
    let root = tmp.join("acme").join("widgets");
    std::fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q"]);
    write(
        &root,
        "README.md",
        "# Widgets\n\nWidgets builds widgets quickly.\n\n## Usage\n\nRun it.\n",
    );
    write(
        &root,
        "src/lib.rs",
        "//! Widget registry: stores widgets by name.\npub struct Registry {}\n",
    );
    write(
        &root,
        "src/util/strings.py",
        "\"\"\"String helpers for slugs.\"\"\"\n\ndef slugify(text):\n    return text.lower()\n",
    );
    write(
        &root,
        "web/app.js",
        "/** Checkout page wiring. */\nexport function mountCheckout(el) {}\n",
    );
    write(
        &root,
        "scripts/deploy",
        "#!/usr/bin/env bash\n# Deploys the widgets service.\nrelease() {\n  echo ok\n}\n",
    );
    write(
        &root,
        "assets/logo.png",
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0binary",
    );
    write(&root, "data/huge.txt", "widget ".repeat(160_000));
    std::os::unix::fs::symlink("README.md", root.join("readme-link")).unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "Initial import"]);
    write(
        &root,
        "src/lib.rs",
        "//! Widget registry: stores widgets by name.\npub struct Registry {}\npub fn lookup_widget(name: &str) {}\n",
    );
    git_at(
        &root,
        "2024-02-01T00:00:00Z",
        &["commit", "-q", "-am", "Add lookup"],
    );
    git(&root, &["checkout", "-q", "-b", "feature"]);
    write(
        &root,
        "src/feature.rs",
        "/// Feature flags for widgets.\npub fn flag_enabled() -> bool { true }\n",
    );
    git(&root, &["add", "-A"]);
    git_at(
        &root,
        "2024-03-01T00:00:00Z",
        &["commit", "-q", "-m", "Add feature flags"],
    );
    git(&root, &["checkout", "-q", "main"]);
    git(
        &root,
        &[
            "remote",
            "add",
            "origin",
            "https://ada:s3cret@github.com/acme/widgets.git",
        ],
    );
    root
}

fn build(
    dir: &Path,
    opts: &git::GitOptions,
    out: &Path,
) -> Result<(BuildStats, ImportReport), Error> {
    import::build_with(out, format!("git:{}", dir.display()), |w| {
        git::import(dir, opts, w, &import::no_progress())
    })
}

fn search(index: &Path, q: &str) -> SearchResults {
    Engine::open(index)
        .unwrap()
        .search(q, &SearchOptions::default())
        .unwrap_or_else(|e| panic!("query {q:?} failed: {e}"))
}

/// The names of the chats found, sorted.
fn chat_names(r: &SearchResults) -> Vec<String> {
    let mut v: Vec<String> = r
        .results
        .chats
        .iter()
        .map(|c| c.chats_name.clone().unwrap())
        .collect();
    v.sort();
    v
}

fn query_one<T: rusqlite::types::FromSql>(index: &Path, sql: &str) -> T {
    rusqlite::Connection::open(index)
        .unwrap()
        .query_row(sql, [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn blob_meta(index: &Path, path: &str) -> Value {
    let m: String = query_one(
        index,
        &format!("SELECT d.meta FROM chats c JOIN chat_details d ON d.id=c.id WHERE c.type='git-blob' AND c.path='{path}'"),
    );
    serde_json::from_str(&m).unwrap()
}

#[test]
fn a_working_tree_becomes_the_gitsense_hierarchy_with_commit_meta() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = make_repo(tmp.path());
    let out = tmp.path().join("w.gsx");
    let (stats, report) = build(&repo, &git::GitOptions::default(), &out).unwrap();
    // Files: README, lib.rs, strings.py, app.js, deploy (+ logo, huge, link skipped).
    // Chats: root, owner, repo, ref, 4 trees (scripts src src/util web) + assets, data = 6 trees, 5 blobs.
    assert_eq!(stats.chats, 4 + 6 + 5);
    assert_eq!(stats.messages, 5 * 3);
    assert_eq!(stats.groups, 1);
    assert_eq!(
        report.warnings,
        [
            "skipped 1 binary files (assets/logo.png)",
            "skipped 1 files larger than 1048576 bytes (data/huge.txt)",
            "skipped 1 symbolic links",
        ]
    );

    let path: String = query_one(
        &out,
        "SELECT d.chat_path FROM chats c JOIN chat_details d ON d.id=c.id WHERE c.path='src/util/strings.py' AND c.type='git-blob'",
    );
    assert_eq!(
        path,
        "Repositories -> acme -> widgets -> main -> src -> util -> strings.py"
    );
    let readme_parent: String = query_one(
        &out,
        "SELECT p.type FROM chats c JOIN chats p ON p.id=c.parent_id WHERE c.path='README.md'",
    );
    assert_eq!(readme_parent, "git-ref");
    let lineage: String = query_one(
        &out,
        "SELECT lineage FROM chats WHERE path='src/util/strings.py' AND type='git-blob'",
    );
    let types: Vec<String> = lineage
        .trim_matches('/')
        .split('/')
        .map(|id| query_one(&out, &format!("SELECT type FROM chats WHERE id={id}")))
        .collect();
    assert_eq!(
        types,
        [
            "git-repos",
            "git-repo-owner",
            "git-repo",
            "git-ref",
            "git-tree",
            "git-tree",
            "git-blob"
        ]
    );
    let remote: String = query_one(
        &out,
        "SELECT json_extract(meta, '$.remote') FROM chat_details WHERE id=3",
    );
    assert_eq!(
        remote, "https://github.com/acme/widgets.git",
        "credentials are dropped"
    );

    // The last commit that changed each file.
    let lib = blob_meta(&out, "src/lib.rs");
    assert_eq!(lib["commit"]["message"], "Add lookup\n");
    assert_eq!(lib["commit"]["timestamp"], T2);
    assert_eq!(lib["commit"]["author"], "Ada Lovelace");
    assert_eq!(lib["commit"]["parents"].as_array().unwrap().len(), 1);
    assert_eq!(lib["language"], "rust");
    assert_eq!(lib["name"], "lib.rs");
    assert_eq!(lib["refContext"]["refName"], "main");
    assert_eq!(lib["refContext"]["refType"], "branch");
    let readme = blob_meta(&out, "README.md");
    assert_eq!(readme["commit"]["message"], "Initial import\n");
    assert_eq!(readme["commit"]["timestamp"], T1);
    assert_eq!(readme["commit"]["parents"].as_array().unwrap().len(), 0);
    assert_eq!(blob_meta(&out, "scripts/deploy")["language"], "bash");

    // The feature branch is not HEAD's and is left out.
    assert_eq!(
        search(&out, "in:chats name:feature.rs").total_counts.chats,
        0
    );
}

#[test]
fn filters_find_blobs_by_language_path_type_role_and_repository() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = make_repo(tmp.path());
    let out = tmp.path().join("w.gsx");
    build(&repo, &git::GitOptions::default(), &out).unwrap();

    let py = search(&out, "lang:python slugify msg-type:git-blob");
    assert_eq!(py.results.messages.len(), 1);
    let m = &py.results.messages[0];
    assert_eq!(m.meta["messages_meta_file_path"], "src/util/strings.py");
    assert_eq!(m.messages_branch_name.as_deref(), Some("main"));
    assert_eq!(m.messages_role.as_deref(), Some("assistant"));
    assert_eq!(m.meta["messages_meta_git_repo"], "acme/widgets");

    let in_src = search(&out, "in:chats chat-type:git-blob git-path:src/*");
    assert_eq!(chat_names(&in_src), ["lib.rs", "strings.py"]);
    let trees = search(&out, "in:chats chat-type:git-tree");
    assert_eq!(trees.total_counts.chats, 6);
    let repo_hits = search(
        &out,
        "in:messages repo:acme/widgets msg-type:git-blob widgets",
    );
    assert!(repo_hits.total_counts.messages >= 2);
    assert_eq!(
        search(&out, "in:messages repo:other/thing widgets")
            .total_counts
            .messages,
        0
    );
    assert_eq!(
        search(&out, "in:messages role:user widgets")
            .total_counts
            .messages,
        0
    );
    let js = search(&out, "in:chats lang:javascript");
    assert_eq!(js.results.chats.len(), 1);
    assert_eq!(js.results.chats[0].chats_name.as_deref(), Some("app.js"));
    // Git content has no code blocks: file text is the git-blob message.
    assert_eq!(
        search(&out, "in:code-blocks widgets")
            .total_counts
            .code_blocks,
        0
    );
}

#[test]
fn derived_overviews_are_found_by_the_tiny_overview_profile() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = make_repo(tmp.path());
    let out = tmp.path().join("w.gsx");
    build(&repo, &git::GitOptions::default(), &out).unwrap();

    let r = search(&out, "profile:tiny-overview-query-optimization registry");
    assert_eq!(r.results.messages.len(), 1, "{:?}", r.results.messages);
    let m = &r.results.messages[0];
    assert_eq!(
        m.messages_type.as_deref(),
        Some("tiny-overview::file-content::default")
    );
    assert_eq!(m.meta["messages_meta_file_path"], "src/lib.rs");
    assert_eq!(m.meta["messages_meta_file_name"], "lib");
    assert_eq!(m.meta["messages_meta_file_extension"], "rs");
    assert_eq!(
        m.meta["messages_meta_purpose"],
        "Widget registry: stores widgets by name."
    );
    assert_eq!(m.meta["messages_meta_chat_id"], m.messages_chat_id);
    let entities = m.meta["messages_meta_key_entities"].as_array().unwrap();
    assert_eq!(
        entities,
        &[Value::from("Registry"), Value::from("lookup_widget")]
    );

    // Definitions, doc comments and headings are all searchable this way.
    for (q, path) in [
        ("mountCheckout", "web/app.js"),
        ("slugs", "src/util/strings.py"),
        ("deploys", "scripts/deploy"),
        ("usage", "README.md"),
    ] {
        let r = search(
            &out,
            &format!("profile:tiny-overview-query-optimization {q}"),
        );
        let paths: Vec<&Value> = r
            .results
            .messages
            .iter()
            .map(|m| &m.meta["messages_meta_file_path"])
            .collect();
        assert_eq!(paths, [&Value::from(path)], "query {q}");
    }
    let short = search(
        &out,
        "msg-type:short-overview::file-content::default lookup_widget",
    );
    assert_eq!(short.results.messages.len(), 1);
    assert!(short.results.messages[0]
        .messages_content
        .as_deref()
        .unwrap()
        .contains("**function** (1): lookup_widget"));
}

#[test]
fn branches_can_be_chosen_and_each_gets_its_own_ref() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = make_repo(tmp.path());
    let out = tmp.path().join("b.gsx");
    let opts = git::GitOptions {
        branches: vec!["main".into(), "feature".into()],
        ..Default::default()
    };
    let (stats, _) = build(&repo, &opts, &out).unwrap();
    assert_eq!(stats.chats, 3 + 2 * (1 + 6) + 5 + 6);
    let refs = search(&out, "in:chats chat-type:git-ref");
    assert_eq!(chat_names(&refs), ["feature", "main"]);
    let flag = search(&out, "in:messages msg-type:git-blob flag_enabled");
    assert_eq!(flag.results.messages.len(), 1);
    assert_eq!(
        flag.results.messages[0].messages_branch_name.as_deref(),
        Some("feature")
    );
    let lib = search(&out, "in:messages msg-type:git-blob lookup_widget");
    let mut branches: Vec<String> = lib
        .results
        .messages
        .iter()
        .map(|m| m.messages_branch_name.clone().unwrap())
        .collect();
    branches.sort();
    assert_eq!(branches, ["feature", "main"]);
    let feature = blob_meta(&out, "src/feature.rs");
    assert_eq!(feature["commit"]["message"], "Add feature flags\n");

    let e = build(
        &repo,
        &git::GitOptions {
            branches: vec!["nope".into()],
            ..Default::default()
        },
        &out,
    )
    .unwrap_err();
    assert_eq!(e.code, "import.no_such_branch");
    assert!(e.message.contains("feature, main"), "{e}");
}

#[test]
fn bare_repositories_import_and_take_their_name_from_the_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = make_repo(tmp.path());
    let mirror_dir = tmp.path().join("mirrors");
    std::fs::create_dir_all(&mirror_dir).unwrap();
    git(
        &mirror_dir,
        &[
            "clone",
            "-q",
            "--bare",
            repo.to_str().unwrap(),
            "gadgets.git",
        ],
    );
    let bare = mirror_dir.join("gadgets.git");
    git(&bare, &["remote", "remove", "origin"]);
    let out = tmp.path().join("bare.gsx");
    let (stats, _) = build(&bare, &git::GitOptions::default(), &out).unwrap();
    assert_eq!(stats.chats, 4 + 6 + 5);
    let r = search(&out, "in:chats repo:mirrors/gadgets chat-type:git-blob");
    assert_eq!(r.total_counts.chats, 5);
    let path: String = query_one(
        &out,
        "SELECT d.chat_path FROM chats c JOIN chat_details d ON d.id=c.id WHERE c.path='src/lib.rs' AND c.type='git-blob'",
    );
    assert_eq!(
        path,
        "Repositories -> mirrors -> gadgets -> main -> src -> lib.rs"
    );

    // --repo overrides the derived name.
    let opts = git::GitOptions {
        repo_name: Some("acme/gadgets".into()),
        ..Default::default()
    };
    build(&bare, &opts, &out).unwrap();
    assert_eq!(
        search(&out, "in:chats repo:acme/gadgets chat-type:git-blob")
            .total_counts
            .chats,
        5
    );
    let bad = git::GitOptions {
        repo_name: Some("no-slash".into()),
        ..Default::default()
    };
    assert_eq!(
        build(&bare, &bad, &out).unwrap_err().code,
        "import.bad_repo_name"
    );
}

#[test]
fn the_same_repository_state_gives_the_same_revision() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = make_repo(tmp.path());
    let (a, _) = build(
        &repo,
        &git::GitOptions::default(),
        &tmp.path().join("a.gsx"),
    )
    .unwrap();
    let (b, _) = build(
        &repo,
        &git::GitOptions::default(),
        &tmp.path().join("b.gsx"),
    )
    .unwrap();
    assert_eq!(a.revision, b.revision);
    // A new commit changes it.
    write(&repo, "NOTES.md", "# Notes\n\nMore.\n");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "Notes"]);
    let (c, _) = build(
        &repo,
        &git::GitOptions::default(),
        &tmp.path().join("c.gsx"),
    )
    .unwrap();
    assert_ne!(a.revision, c.revision);
}

#[test]
fn what_is_not_a_repository_with_commits_is_refused_and_leaves_no_file() {
    let tmp = tempfile::tempdir().unwrap();
    let outdir = tmp.path().join("out");
    std::fs::create_dir_all(&outdir).unwrap();
    let out = outdir.join("x.gsx");
    let plain = tmp.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let e = build(&plain, &git::GitOptions::default(), &out).unwrap_err();
    assert_eq!(e.code, "import.not_a_repository");
    assert!(e.location.unwrap().ends_with("plain"));
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    git(&empty, &["init", "-q"]);
    let e = build(&empty, &git::GitOptions::default(), &out).unwrap_err();
    assert_eq!(e.code, "import.empty_repository");
    assert_eq!(std::fs::read_dir(&outdir).unwrap().count(), 0);
}

#[test]
fn the_cli_builds_from_git_alone_or_with_other_sources() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = make_repo(tmp.path());
    let bin = &common::cli_bin();
    let out = tmp.path().join("cli.gsx");
    let ok = Command::new(bin)
        .args(["build", "--quiet", "--git"])
        .arg(&repo)
        .args(["--max-file-size", "10"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let stderr = String::from_utf8_lossy(&ok.stderr);
    assert!(
        stderr.contains("warning: skipped 7 files larger than 10 bytes"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&ok.stdout).contains("0 code blocks"));

    // Several sources go into one index: all of them are read, so one
    // that is missing fails the build and the index already there stays.
    let before = std::fs::read(&out).unwrap();
    let both = Command::new(bin)
        .args(["build", "--quiet", "--git"])
        .arg(&repo)
        .args(["--chat-export", "x.json", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&both.stderr).contains("x.json"));
    assert_eq!(std::fs::read(&out).unwrap(), before);
    // Git-only flags still refuse the other sources.
    let branch_alone = Command::new(bin)
        .args([
            "build",
            "--chat-export",
            "x.json",
            "--branch",
            "main",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(branch_alone.status.code(), Some(2));
    let help = Command::new(bin)
        .args(["build", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for flag in [
        "--chat-export",
        "--git",
        "--branch",
        "--repo",
        "--max-file-size",
    ] {
        assert!(help.contains(flag), "{flag} in --help");
    }
}

#[test]
fn a_detached_head_is_indexed_as_a_ref_named_head() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = make_repo(tmp.path());
    git(&repo, &["checkout", "-q", "--detach", "feature"]);
    let out = tmp.path().join("d.gsx");
    build(&repo, &git::GitOptions::default(), &out).unwrap();
    let refs = search(&out, "in:chats chat-type:git-ref");
    assert_eq!(chat_names(&refs), ["HEAD"]);
    let meta = blob_meta(&out, "src/feature.rs");
    assert_eq!(meta["refContext"]["refName"], "HEAD");
    assert_eq!(meta["refContext"]["refType"], "detached");
}

#[test]
fn directories_nested_past_the_bound_are_skipped_with_a_warning_and_the_rest_is_indexed() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("deep");
    std::fs::create_dir_all(&root).unwrap();
    git(&root, &["init", "-q"]);
    write(&root, "top.md", "# Top\n\nshallow sentinel words\n");
    let deep = vec!["d"; import::MAX_DIR_DEPTH + 5].join("/");
    write(&root, &format!("{deep}/bottom.md"), "abyssal sentinel\n");
    let fine = vec!["d"; import::MAX_DIR_DEPTH - 1].join("/");
    write(&root, &format!("{fine}/edge.md"), "marginal sentinel\n");
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "deep"]);
    let out = tmp.path().join("deep.gsx");
    let (_, report) = build(&root, &git::GitOptions::default(), &out).unwrap();
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.contains("directories nested deeper than")),
        "{:?}",
        report.warnings
    );
    for (word, found) in [("shallow", true), ("marginal", true), ("abyssal", false)] {
        let r = search(&out, &format!("{word} in:messages"));
        assert_eq!(!r.results.messages.is_empty(), found, "{word}");
    }
}
