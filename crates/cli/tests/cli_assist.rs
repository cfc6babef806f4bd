//! `gitsense-search assist` end to end: the real binary, the sample index,
//! and shell scripts standing in for the LLM (`--llm-cmd`).

#[path = "../../../tests/common/mod.rs"]
mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;
use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_gitsense-search");

/// A model as a shell script: answers each stage by the prompt's title.
const MODEL: &str = r##"#!/bin/sh
prompt=$(cat)
case "$prompt" in
  "# GitSense assisted search, stage 1:"*) echo 'Query: `refund OR refunds`' ;;
  "# GitSense assisted search, stage 2:"*) echo '[]' ;;
  "# GitSense assisted search, stage 4:"*)
    printf '%s\n' '| Path | Chat ID |' '|---|---|' '| backend/src/payment/refundHandler.js | 43 |' ;;
  *) echo "unexpected prompt" >&2; exit 9 ;;
esac
"##;

struct Setup {
    _dir: TempDir,
    index: PathBuf,
    dir: PathBuf,
}

fn setup() -> Setup {
    let dir = TempDir::new().unwrap();
    let index = sample_index();
    let d = dir.path().to_path_buf();
    Setup {
        _dir: dir,
        index,
        dir: d,
    }
}

fn script(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    format!("sh {}", p.display())
}

fn assist(s: &Setup, llm: &str, extra: &[&str]) -> Output {
    Command::new(BIN)
        .arg("assist")
        .arg(&s.index)
        .arg("Where are refunds processed?")
        .args(["--llm-cmd", llm])
        .args(extra)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn assist_runs_every_stage_through_the_command() {
    let s = setup();
    let llm = script(&s.dir, "model.sh", MODEL);
    let out = assist(&s, &llm, &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["query"], "refund OR refunds");
    assert_eq!(
        v["identifiedFiles"],
        serde_json::json!([{"path": "backend/src/payment/refundHandler.js", "chat_id": 43}])
    );
    assert_eq!(
        v["results"]["results"]["messages"][0]["messages_chat_id"],
        43
    );
    let err = text(&out.stderr);
    for line in [
        "stage 1 query: refund OR refunds",
        "stage 2 tiny-overviews",
        "stage 3 overviews",
        "stage 4 review",
    ] {
        assert!(err.contains(line), "{line} missing from:\n{err}");
    }
    assert!(err.contains("no short overview in the index"));
}

#[test]
fn assist_markdown_output_fits_max_tokens() {
    let s = setup();
    let llm = script(&s.dir, "model.sh", MODEL);
    let out = assist(
        &s,
        &llm,
        &["--format", "markdown", "--max-tokens", "900", "--quiet"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let md = text(&out.stdout);
    assert!(tokens(&md) <= 900, "{} tokens", tokens(&md));
    let fm = front_matter(&md).unwrap();
    assert_eq!(fm["identified_files"][0]["chat_id"], 43);
    assert!(out.stderr.is_empty(), "--quiet prints no stage reports");
}

#[test]
fn assist_trace_prints_one_json_report_per_stage() {
    let s = setup();
    let llm = script(&s.dir, "model.sh", MODEL);
    let out = assist(&s, &llm, &["--trace"]);
    assert!(out.status.success());
    let reports: Vec<serde_json::Value> = text(&out.stderr)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let names: Vec<&str> = reports
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["query", "tiny-overviews", "overviews", "review"]);
    assert!(reports[0]["llmMs"].as_f64().unwrap() >= 0.0);
    assert!(reports[0]["promptTokens"].as_u64().unwrap() > 100);
}

#[test]
fn a_failing_model_command_is_a_clear_error() {
    let s = setup();
    let llm = script(
        &s.dir,
        "broken.sh",
        "echo 'model unavailable' >&2\nexit 3\n",
    );
    let out = assist(&s, &llm, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("assist.llm_failed"), "{err}");
    assert!(
        err.contains("exit status: 3") && err.contains("model unavailable"),
        "{err}"
    );
    assert!(err.contains("stage 1 (query)"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_model_command_that_hangs_is_killed_at_the_timeout() {
    let s = setup();
    let llm = script(
        &s.dir,
        "slow.sh",
        "cat >/dev/null\nsleep 30\necho payment\n",
    );
    let started = Instant::now();
    let out = assist(&s, &llm, &["--llm-timeout", "1"]);
    assert!(
        started.elapsed().as_secs() < 15,
        "the command was not killed"
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("assist.llm_timeout"));
}

#[test]
fn a_model_that_never_writes_a_valid_query_fails_with_the_query_error() {
    let s = setup();
    let llm = script(
        &s.dir,
        "bad.sh",
        "cat >/dev/null\necho 'payment \"unclosed'\n",
    );
    let out = assist(&s, &llm, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("query.unbalanced_quote"), "{err}");
    assert!(err.contains("stage 1 query (attempt 2)"), "{err}");
}

#[test]
fn search_max_tokens_applies_to_the_rendered_text() {
    let s = setup();
    for format in ["json", "terse", "verbose", "markdown"] {
        let out = Command::new(BIN)
            .arg("search")
            .arg(&s.index)
            .arg("in:messages payment")
            .args(["--format", format, "--max-tokens", "700"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{format}: {}", text(&out.stderr));
        let body = text(&out.stdout);
        // The JSON printer adds one newline after the object.
        let body = body.strip_suffix('\n').unwrap_or(&body);
        assert!(tokens(body) <= 700, "{format}: {} tokens", tokens(body));
    }
}
