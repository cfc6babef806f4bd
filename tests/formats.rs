//! LLM-ready formats on real results: the shape of terse,
//! verbose and markdown output, markdown's front matter read back as YAML,
//! fence languages, and token budgets on the rendered text.

mod common;

use common::*;
use gitsense_engine::assist::{self, AssistOptions};
use gitsense_engine::format::{format_results, format_results_json, Format, FormatOptions};
use gitsense_engine::{Engine, Highlight, SearchOptions, SearchResults};
use tempfile::TempDir;

const FORMATS: [Format; 4] = [
    Format::Json,
    Format::Terse,
    Format::Verbose,
    Format::Markdown,
];

fn sample_results(engine: &Engine, query: &str) -> SearchResults {
    engine
        .search(
            query,
            &SearchOptions {
                highlight: Highlight::Raw,
                ..Default::default()
            },
        )
        .unwrap()
}

fn plain(r: &SearchResults, f: Format) -> String {
    format_results(r, f, &FormatOptions::default()).unwrap()
}

#[test]
fn terse_is_one_line_per_result_then_the_summary() {
    let engine = sample_engine();
    let r = sample_results(&engine, "in:messages payment");
    let out = format_results(
        &r,
        Format::Terse,
        &FormatOptions {
            elapsed_secs: Some(0.25),
            ..Default::default()
        },
    )
    .unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), r.len() + 1);
    let mut git_files = 0;
    for (line, m) in lines.iter().zip(&r.results.messages) {
        assert!(!line.contains("<GSC>"), "terse shows plain text");
        // A git file as gitctx shows it: `path:line:score sha (date, author) "subject"`.
        let git_file = m.messages_type.as_deref() == Some("git-blob");
        let hash = m.meta.get("messages_meta_commit_hash").filter(|_| git_file);
        if let Some(hash) = hash.and_then(|h| h.as_str()) {
            let path = m.meta["messages_meta_file_path"].as_str().unwrap();
            let rest = line.strip_prefix(&format!("{path}:")).expect(line);
            let (line_no, rest) = rest.split_once(':').unwrap();
            assert!(line_no.parse::<usize>().is_ok_and(|n| n >= 1), "{line}");
            assert!(
                rest.starts_with(&format!("{:.2} {} (", m.fts_rank, &hash[..7])),
                "{line}"
            );
            git_files += 1;
            continue;
        }
        assert!(
            line.contains(&format!(
                " message#{} chat:{}",
                m.messages_id, m.messages_chat_id
            )),
            "{line}"
        );
        // The location may be a chat path with spaces: the score is what
        // follows its last colon.
        let loc_score = &line[..line.find(" message#").unwrap()];
        let score = loc_score.rsplit(':').next().unwrap();
        assert_eq!(score, format!("{:.2}", m.fts_rank));
    }
    assert!(git_files > 0 && git_files < r.len(), "{out}");
    assert_eq!(lines[r.len()], format!("{} results in 0.25s", r.len()));
    let none = sample_results(&engine, "in:messages zzqqxx");
    assert_eq!(
        format_results(
            &none,
            Format::Terse,
            &FormatOptions {
                elapsed_secs: Some(0.0),
                ..Default::default()
            }
        )
        .unwrap(),
        "0 results in 0.00s\n"
    );
}

#[test]
fn verbose_has_a_header_and_a_chat_line_per_result() {
    let engine = sample_engine();
    let r = sample_results(&engine, "in:messages stripe");
    let out = plain(&r, Format::Verbose);
    for m in &r.results.messages {
        let git_file = m.messages_type.as_deref() == Some("git-blob");
        let header = match m.meta.get("messages_meta_commit_hash").filter(|_| git_file) {
            // A git file's header: its path, the lines of the match, the
            // commit; the commit's subject on the line after.
            Some(hash) => format!("({:.3}) {} (", m.fts_rank, &hash.as_str().unwrap()[..7]),
            None => format!("message {} ({:.3}) ", m.messages_id, m.fts_rank),
        };
        let at = out.find(&header).expect("header");
        let skip = if git_file { 2 } else { 1 };
        let next = out[at..].lines().nth(skip).unwrap();
        assert!(
            next.starts_with(&format!("  chat {}: ", m.messages_chat_id)),
            "{next}"
        );
    }
    assert_eq!(out.matches("\n\n").count(), r.len());
}

#[test]
fn markdown_front_matter_parses_and_lists_every_result() {
    let engine = sample_engine();
    let r = sample_results(&engine, "in:messages payment");
    let out = plain(&r, Format::Markdown);
    let fm = front_matter(&out).unwrap();
    assert_eq!(fm["query"], "in:messages payment");
    assert_eq!(fm["total_results"], r.pagination.total_results);
    assert_eq!(fm["page"], 1);
    let listed = fm["results"].as_array().unwrap();
    assert_eq!(listed.len(), r.len());
    for (item, m) in listed.iter().zip(&r.results.messages) {
        assert_eq!(item["source_type"], "message");
        assert_eq!(item["id"], m.messages_id.to_string());
        assert_eq!(item["chat_id"], m.messages_chat_id);
        let path = m.meta.get("messages_meta_file_path");
        assert_eq!(item.get("path"), path);
        let score = item["score"].as_f64().unwrap();
        assert!((score - m.fts_rank).abs() < 0.001);
    }
    // One section per result, each with a fenced block that closes.
    assert_eq!(out.matches("\n## message ").count(), r.len());
    assert_eq!(out.matches("\n```").count() % 2, 0);
    assert!(!out.contains("truncated"));
    let empty = plain(
        &sample_results(&engine, "in:messages zzqqxx"),
        Format::Markdown,
    );
    assert_eq!(
        front_matter(&empty).unwrap()["results"],
        serde_json::json!([])
    );
}

#[test]
fn fences_carry_the_file_language_or_fall_back_to_markdown() {
    let engine = sample_engine();
    // A file's own text is fenced in its language...
    let blob = sample_results(&engine, "in:messages msg-type:git-blob chat-id:42");
    let out = plain(&blob, Format::Markdown);
    assert!(out.contains("\n```javascript\n"), "{}", &out[..400]);
    // ...an overview about that file is prose.
    let tiny = sample_results(
        &engine,
        "profile:tiny-overview-query-optimization chat-id:42",
    );
    let out = plain(&tiny, Format::Markdown);
    assert!(out.contains("\n```markdown\n"));
    assert!(!out.contains("```javascript"));
    // Code blocks use their own language; an unknown one is markdown.
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("code.gsx");
    let files = vec![File::new("src/a.rs", "rust", "text")
        .code("rust", "fn alpha_beta() {}")
        .code("", "alpha_beta gamma")];
    git_fixture(&path, &files, "fence");
    let code = Engine::open(&path).unwrap();
    let out = plain(
        &code
            .search("alpha_beta in:code-blocks", &Default::default())
            .unwrap(),
        Format::Markdown,
    );
    assert_eq!(out.matches("\n```rust\n").count(), 1);
    assert_eq!(out.matches("\n```markdown\n").count(), 1);
}

#[test]
fn every_format_fits_its_budget_and_says_it_was_cut() {
    let engine = sample_engine();
    let r = sample_results(&engine, "in:messages payment");
    for f in FORMATS {
        let full = plain(&r, f);
        let full_tokens = tokens(&full);
        let at = format_results(
            &r,
            f,
            &FormatOptions {
                max_tokens: Some(full_tokens),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(at, full, "{f:?}: a budget that fits changes nothing");
        for budget in [full_tokens / 2, full_tokens / 6, full_tokens / 20] {
            let out = format_results(
                &r,
                f,
                &FormatOptions {
                    max_tokens: Some(budget),
                    ..Default::default()
                },
            );
            let Ok(out) = out else {
                // Only when not even the frame fits.
                assert_eq!(out.unwrap_err().code, "options.max_tokens_too_small");
                assert!(budget < 300, "{f:?} refused {budget}");
                continue;
            };
            assert!(tokens(&out) <= budget, "{f:?}: {} > {budget}", tokens(&out));
            match f {
                Format::Json => assert!(out.contains("\"truncated\":true")),
                Format::Markdown => {
                    let fm = front_matter(&out).unwrap();
                    assert_eq!(fm["truncated"], true);
                    let n = fm["results"].as_array().unwrap().len();
                    assert_eq!(out.matches("\n## message ").count(), n);
                }
                _ => assert!(out.contains("(truncated to fit the token budget:")),
            }
        }
        let e = format_results(
            &r,
            f,
            &FormatOptions {
                max_tokens: Some(5),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert_eq!(e.code, "options.max_tokens_too_small");
    }
}

#[test]
fn markdown_carries_the_next_cursor() {
    let engine = sample_engine();
    let r = engine
        .search(
            "in:messages payment",
            &SearchOptions {
                per_page: Some(3),
                ..Default::default()
            },
        )
        .unwrap();
    let fm = front_matter(&plain(&r, Format::Markdown)).unwrap();
    assert_eq!(fm["next_cursor"].as_str(), r.next_cursor.as_deref());
    assert!(fm["next_cursor"].is_string());
}

#[test]
fn an_assisted_outcome_renders_in_every_format_within_budget() {
    let engine = sample_engine();
    let outcome = assist::assisted_search(
        &engine,
        "Where are refunds processed?",
        &AssistOptions::default(),
        &mut |p| {
            Ok(if p.starts_with(assist::prompts::STAGE1_TITLE) {
                "refund OR refunds".into()
            } else {
                "{\"answer\": \"In refundHandler.js.\", \"identifiedFiles\": [{\"path\": \"backend/src/payment/refundHandler.js\", \"chat_id\": 43}, {\"path\": \"backend/src/database/transactionQueries.js\", \"chat_id\": 45}]}".into()
            })
        },
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(outcome.identified_files.len(), 2);

    let md = assist::format_outcome(&outcome, Format::Markdown, &FormatOptions::default()).unwrap();
    let fm = front_matter(&md).unwrap();
    assert_eq!(fm["question"], "Where are refunds processed?");
    assert_eq!(fm["answer"], "In refundHandler.js.");
    assert_eq!(
        fm["identified_files"][0]["path"],
        "backend/src/payment/refundHandler.js"
    );
    assert_eq!(fm["identified_files"][0]["chat_id"], 43);
    assert_eq!(fm["identified_files"][0]["overview"], "tiny-overview");
    assert!(md.contains("\n## Answer\n\nIn refundHandler.js.\n"));
    // The fallback is said, and the overview is shown without boilerplate.
    assert!(md.contains(
        "- backend/src/payment/refundHandler.js (chat 43): no short overview in the index; the tiny overview is used"
    ));
    assert!(!md.contains("Custom Metadata Definitions"));

    let json = assist::format_outcome(&outcome, Format::Json, &FormatOptions::default()).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["identifiedFiles"][1]["chat_id"], 45);
    assert_eq!(v["results"]["totalResultsReturned"], 2);
    // A host holding the outcome as JSON formats it the same way.
    assert_eq!(
        assist::format_outcome_json(&json, "markdown", "").unwrap(),
        md,
        "the outcome survives its JSON round trip"
    );
    assert_eq!(
        assist::format_outcome_json("{}", "markdown", "")
            .unwrap_err()
            .code,
        "options.invalid"
    );

    for f in FORMATS {
        let full = tokens(&assist::format_outcome(&outcome, f, &FormatOptions::default()).unwrap());
        let budget = full * 2 / 3;
        let out = assist::format_outcome(
            &outcome,
            f,
            &FormatOptions {
                max_tokens: Some(budget),
                ..Default::default()
            },
        )
        .unwrap();
        assert!(tokens(&out) <= budget, "{f:?}: {} > {budget}", tokens(&out));
        assert!(
            out.contains("refundHandler.js"),
            "{f:?} keeps the best file"
        );
    }
}

#[test]
fn formatting_works_on_json_results_as_the_browser_holds_them() {
    let engine = sample_engine();
    let json = engine
        .search_json("in:messages payment", r#"{"highlight": "raw"}"#)
        .unwrap();
    let r = sample_results(&engine, "in:messages payment");
    assert_eq!(
        format_results_json(&json, "markdown", r#"{"maxTokens": 1500}"#).unwrap(),
        format_results(
            &r,
            Format::Markdown,
            &FormatOptions {
                max_tokens: Some(1500),
                ..Default::default()
            }
        )
        .unwrap()
    );
    assert_eq!(
        format_results_json(&json, "terse", "").unwrap(),
        plain(&r, Format::Terse)
    );
    for (results, format, options, code) in [
        ("{}", "terse", "", "options.invalid"),
        (json.as_str(), "yaml", "", "options.bad_format"),
        (
            json.as_str(),
            "terse",
            r#"{"maxTokenz": 5}"#,
            "options.invalid",
        ),
    ] {
        assert_eq!(
            format_results_json(results, format, options)
                .unwrap_err()
                .code,
            code
        );
    }
}
