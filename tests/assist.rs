//! The AI-assisted stages on the real sample database and on git-like
//! fixtures, one stage at a time and end to end with scripted models.

mod common;

use common::*;
use gitsense_engine::assist::*;
use gitsense_engine::query;
use gitsense_engine::{Engine, Error};
use std::cell::RefCell;
use tempfile::TempDir;

const QUESTION: &str = "Where are Stripe payments created?";

fn accepted(v: Stage1Verdict) -> String {
    match v {
        Stage1Verdict::Accepted { query } => query,
        other => panic!("expected an accepted query, got {other:?}"),
    }
}

fn fixture(files: &[File]) -> (TempDir, Engine) {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("fixture.gsx");
    git_fixture(&path, files, "one");
    let engine = Engine::open(&path).unwrap();
    (dir, engine)
}

// ---- stage 1 ----

#[test]
fn stage1_prompt_holds_the_question_and_a_guide_whose_examples_all_parse() {
    let p = stage1_prompt(QUESTION, &AssistOptions::default()).unwrap();
    assert!(p.starts_with(prompts::STAGE1_TITLE));
    assert!(p.contains(QUESTION));
    assert!(p.contains(&prompts::guide()));
    let guide = prompts::guide();
    let examples: Vec<&str> = guide
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|e| !e.starts_with("field:") && !e.starts_with("-field:"))
        .collect();
    assert!(examples.len() >= prompts::GUIDE_FILTERS.len());
    for e in examples {
        query::parse(e, &gitsense_engine::profiles::exists)
            .unwrap_or_else(|err| panic!("`{e}` from the guide does not parse: {err}"));
    }
}

#[test]
fn stage1_refuses_an_empty_question_and_a_budget_below_the_prompt() {
    let e = stage1_prompt("  ", &AssistOptions::default()).unwrap_err();
    assert_eq!(e.code, "options.empty_question");
    let opts = AssistOptions {
        max_tokens: Some(50),
        ..AssistOptions::default()
    };
    let e = stage1_prompt(QUESTION, &opts).unwrap_err();
    assert_eq!(e.code, "options.max_tokens_too_small");
}

#[test]
fn stage1_accepts_a_valid_query_wrapped_in_prose() {
    let v = stage1_accept(
        QUESTION,
        "Here is a query:\n```\npayment OR stripe lang:javascript\n```",
        &AssistOptions::default(),
    )
    .unwrap();
    assert_eq!(accepted(v), "payment OR stripe lang:javascript");
}

#[test]
fn stage1_rejection_feeds_code_message_and_position_back() {
    let v = stage1_accept(QUESTION, "payment \"stripe", &AssistOptions::default()).unwrap();
    let Stage1Verdict::Rejected {
        query,
        error,
        retry_prompt,
    } = v
    else {
        panic!("an unbalanced quote must be rejected");
    };
    assert_eq!(query, "payment \"stripe");
    assert_eq!(error.code, "query.unbalanced_quote");
    assert_eq!(error.position, Some(8));
    assert!(retry_prompt.starts_with(prompts::STAGE1_TITLE));
    assert!(retry_prompt.contains("query.unbalanced_quote"));
    assert!(retry_prompt.contains(&error.message));
    assert!(retry_prompt.contains("at character 8"));
    // The caret sits under the offending quote.
    assert!(retry_prompt.contains("    payment \"stripe\n            ^"));

    for (bad, code) in [
        ("bogus:1 payment", "query.unknown_filter"),
        ("payment scope:current-chat", "query.directive_not_allowed"),
        ("in:code-blocks payment", "query.directive_not_allowed"),
        ("", "query.empty"),
    ] {
        match stage1_accept(QUESTION, bad, &AssistOptions::default()).unwrap() {
            Stage1Verdict::Rejected { error, .. } => assert_eq!(error.code, code, "{bad}"),
            other => panic!("{bad:?} was accepted: {other:?}"),
        }
    }
}

// ---- stage 2 ----

#[test]
fn stage2_finds_tiny_overviews_of_git_files_in_the_sample() {
    let engine = sample_engine();
    let s2 = stage2(
        &engine,
        QUESTION,
        "payment OR stripe",
        &AssistOptions::default(),
    )
    .unwrap();
    let r = &s2.results;
    assert!(s2.total_matches > 0);
    assert_eq!(s2.total_matches, r.total_counts.messages);
    assert!(r.results.chats.is_empty() && r.results.code_blocks.is_empty());
    assert_eq!(r.search_criteria["aiAssistant"], true);
    assert_eq!(r.search_criteria["profile"], TINY_PROFILE);
    for m in &r.results.messages {
        assert_eq!(m.messages_type.as_deref(), Some(TINY_TYPE));
        assert!(m.meta["messages_meta_file_path"].is_string());
        assert!(m.messages_content.is_none(), "stage 2 leaves contents out");
    }
    // One candidate per chat, with the overview's metadata.
    let mut chats: Vec<i64> = s2.candidates.iter().map(|c| c.chat_id).collect();
    chats.sort();
    chats.dedup();
    assert_eq!(chats.len(), s2.candidates.len());
    let pay = s2
        .candidates
        .iter()
        .find(|c| c.path == "backend/src/payment/paymentService.js")
        .expect("the payment service is a candidate");
    assert_eq!(pay.chat_id, 42);
    assert_eq!(pay.language.as_deref(), Some("javascript"));
    assert!(pay.keywords.iter().any(|k| k == "Stripe API"));
    assert!(pay.purpose.as_deref().unwrap().contains("Stripe"));
    // Best first.
    assert!(s2.candidates.windows(2).all(|w| w[0].rank <= w[1].rank));
}

#[test]
fn condensed_view_appears_only_above_the_threshold_on_the_sample() {
    let engine = sample_engine();
    let total = stage2(
        &engine,
        QUESTION,
        "payment OR stripe",
        &AssistOptions::default(),
    )
    .unwrap()
    .total_matches;
    assert!(total > 2 && total <= 50, "sample matches {total}");
    // At the threshold: skipped.
    let at = AssistOptions {
        condense_threshold: total,
        ..AssistOptions::default()
    };
    let s2 = stage2(&engine, QUESTION, "payment OR stripe", &at).unwrap();
    assert!(s2.condensed_prompt.is_none());
    // One below: one line per candidate, best first.
    let below = AssistOptions {
        condense_threshold: total - 1,
        ..AssistOptions::default()
    };
    let s2 = stage2(&engine, QUESTION, "payment OR stripe", &below).unwrap();
    let p = s2.condensed_prompt.as_deref().expect("condensed view");
    assert!(p.starts_with(prompts::CONDENSE_TITLE));
    assert_eq!(s2.condensed_listed, s2.candidates.len());
    let lines: Vec<&str> = p
        .lines()
        .filter(|l| l.split(" | ").count() == 5 && !l.starts_with("chat_id"))
        .collect();
    assert_eq!(lines.len(), s2.candidates.len());
    for (line, c) in lines.iter().zip(&s2.candidates) {
        assert!(
            line.starts_with(&format!("{} | {} | ", c.chat_id, c.path)),
            "{line}"
        );
        assert_eq!(line.lines().count(), 1);
    }
}

#[test]
fn default_threshold_condenses_above_fifty_matches_and_not_at_fifty() {
    for (n, condensed) in [(50, false), (51, true)] {
        let (_d, engine) = fixture(&widget_files(n));
        let s2 = stage2(
            &engine,
            "which widget?",
            "widget",
            &AssistOptions::default(),
        )
        .unwrap();
        assert_eq!(s2.total_matches, n as u64);
        assert_eq!(s2.condensed_prompt.is_some(), condensed, "{n} matches");
    }
}

#[test]
fn stage2_returns_at_most_max_candidates() {
    let (_d, engine) = fixture(&widget_files(30));
    let opts = AssistOptions {
        max_candidates: 10,
        ..AssistOptions::default()
    };
    let s2 = stage2(&engine, "q", "widget", &opts).unwrap();
    assert_eq!(s2.total_matches, 30);
    assert_eq!(s2.candidates.len(), 10);
}

#[test]
fn condensed_view_fits_the_budget_by_leaving_the_worst_out() {
    let (_d, engine) = fixture(&widget_files(120));
    let opts = AssistOptions {
        max_tokens: Some(1200),
        ..AssistOptions::default()
    };
    let s2 = stage2(&engine, "which widget?", "widget", &opts).unwrap();
    let p = s2.condensed_prompt.unwrap();
    assert!(tokens(&p) <= 1200, "{} tokens", tokens(&p));
    assert!(s2.condensed_listed > 0 && s2.condensed_listed < 120);
    assert!(p.contains(&format!(
        "({} more were left out to fit the token budget.)",
        120 - s2.condensed_listed
    )));
}

#[test]
fn the_pick_takes_named_candidates_or_falls_back_to_the_best() {
    let (_d, engine) = fixture(&widget_files(60));
    let opts = AssistOptions {
        max_review_files: 5,
        ..AssistOptions::default()
    };
    let s2 = stage2(&engine, "q", "widget", &opts).unwrap();
    let (a, b) = (&s2.candidates[7], &s2.candidates[3]);
    let answer = format!(
        "[{{\"path\": \"{}\", \"chat_id\": {}}}, {{\"path\": \"{}\", \"chat_id\": {}}}, {{\"path\": \"nope.rs\", \"chat_id\": 1}}]",
        a.path, a.chat_id, b.path, b.chat_id
    );
    let sel = stage2_pick(&s2, Some(&answer), &opts);
    assert!(!sel.fell_back);
    assert_eq!(
        sel.chosen.iter().map(|c| c.chat_id).collect::<Vec<_>>(),
        [a.chat_id, b.chat_id]
    );
    assert_eq!(sel.flagged.len(), 1);

    let sel = stage2_pick(&s2, Some("I cannot decide."), &opts);
    assert!(sel.fell_back);
    assert_eq!(sel.chosen, s2.candidates[..5].to_vec());

    let sel = stage2_pick(&s2, None, &opts);
    assert!(!sel.fell_back);
    assert_eq!(sel.chosen, s2.candidates[..5].to_vec());
}

// ---- stage 3 ----

#[test]
fn stage3_falls_back_to_tiny_overviews_in_the_sample_and_says_so() {
    let engine = sample_engine();
    let opts = AssistOptions::default();
    let s2 = stage2(&engine, QUESTION, "payment OR stripe", &opts).unwrap();
    let s3 = stage3(&engine, &s2.candidates, &opts).unwrap();
    assert_eq!(s3.overviews.len(), s2.candidates.len());
    for (o, c) in s3.overviews.iter().zip(&s2.candidates) {
        assert_eq!((o.chat_id, o.path.as_str()), (c.chat_id, c.path.as_str()));
        // The sample has no short overviews.
        assert_eq!(o.source, OverviewSource::TinyOverview);
        assert_eq!(o.message_id, Some(c.message_id));
        assert!(o.note.as_deref().unwrap().contains("no short overview"));
        assert!(o.text.contains("## Summary"), "{}", o.text);
        assert!(!o.text.contains("Custom Metadata Definitions"));
        assert!(!o.text.contains("# GitSense Chat Analysis"));
    }
    let r = &s3.results;
    assert_eq!(r.results.messages.len(), s3.overviews.len());
    assert_eq!(r.total_results_returned, s3.overviews.len() as u64);
    assert!(r
        .results
        .messages
        .iter()
        .all(|m| m.messages_content.is_some()));
}

#[test]
fn stage3_uses_the_file_text_when_a_sample_file_has_no_overview() {
    let engine = sample_engine();
    // Chat 152 is a git-blob chat with no tiny overview in the sample.
    let files = engine
        .search(
            "in:messages msg-type:git-blob chat-id:152",
            &Default::default(),
        )
        .unwrap();
    let text = files.results.messages[0].messages_content.clone().unwrap();
    let path = files.results.messages[0].meta["messages_meta_file_path"]
        .as_str()
        .unwrap()
        .to_string();
    let chosen = vec![
        Candidate {
            chat_id: 152,
            message_id: 0,
            path: path.clone(),
            language: None,
            purpose: None,
            keywords: vec![],
            rank: 0.0,
        },
        Candidate {
            chat_id: 999_999,
            message_id: 0,
            path: "gone.txt".into(),
            language: None,
            purpose: None,
            keywords: vec![],
            rank: 0.0,
        },
    ];
    let opts = AssistOptions {
        fallback_chars: 200,
        ..AssistOptions::default()
    };
    let s3 = stage3(&engine, &chosen, &opts).unwrap();
    let o = &s3.overviews[0];
    assert_eq!(o.source, OverviewSource::FileText);
    assert!(o.note.as_deref().unwrap().contains("first 200 characters"));
    let head: String = text.chars().take(200).collect();
    assert!(o.text.starts_with(&head));
    assert!(o.text.chars().count() <= 204);
    assert!(o.language.is_some(), "language comes from the chat");
    assert_eq!(s3.overviews[1].source, OverviewSource::None);
    assert!(s3.overviews[1].text.is_empty());
    assert_eq!(s3.results.results.messages.len(), 1);
}

#[test]
fn stage3_prefers_short_overviews_then_tiny_then_file_text() {
    let files = vec![
        File::new("src/pay.rs", "rust", "fn pay() {}\n")
            .tiny("Takes payments.", &["payment"])
            .short("Takes card payments through the gateway and records receipts."),
        File::new("src/refund.rs", "rust", "fn refund() {}\n")
            .tiny("Refunds payments.", &["payment"]),
        File::new(
            "src/ledger.rs",
            "rust",
            "fn ledger() { /* payment ledger */ }\n",
        ),
    ];
    let (_d, engine) = fixture(&files);
    let opts = AssistOptions::default();
    let s2 = stage2(&engine, "q", "payment", &opts).unwrap();
    assert_eq!(
        s2.candidates.len(),
        2,
        "only files with tiny overviews match"
    );
    let mut chosen = s2.candidates.clone();
    chosen.push(Candidate {
        chat_id: blob_chat_id(2),
        message_id: 0,
        path: "src/ledger.rs".into(),
        language: Some("rust".into()),
        purpose: None,
        keywords: vec![],
        rank: 0.0,
    });
    let s3 = stage3(&engine, &chosen, &opts).unwrap();
    let by_path = |p: &str| s3.overviews.iter().find(|o| o.path == p).unwrap();
    let pay = by_path("src/pay.rs");
    assert_eq!(pay.source, OverviewSource::ShortOverview);
    assert!(pay.note.is_none());
    assert!(pay.text.contains("card payments through the gateway"));
    assert_eq!(
        by_path("src/refund.rs").source,
        OverviewSource::TinyOverview
    );
    let ledger = by_path("src/ledger.rs");
    assert_eq!(ledger.source, OverviewSource::FileText);
    assert_eq!(ledger.text, "fn ledger() { /* payment ledger */ }\n");
}

#[test]
fn stage3_reads_more_files_than_one_lookup_query_can_name() {
    // More chosen files than a chat-id: list may hold.
    let n = gitsense_engine::query::parser::MAX_FILTER_VALUES * 2 + 5;
    let (_d, engine) = fixture(&widget_files(n));
    let opts = AssistOptions {
        max_candidates: n as u64,
        ..AssistOptions::default()
    };
    let s2 = stage2(&engine, "q", "widget", &opts).unwrap();
    assert_eq!(s2.candidates.len(), n);
    let s3 = stage3(&engine, &s2.candidates, &opts).unwrap();
    assert_eq!(s3.overviews.len(), n);
    assert!(s3
        .overviews
        .iter()
        .all(|o| o.source == OverviewSource::TinyOverview));
    assert_eq!(s3.results.results.messages.len(), n);
}

// ---- stage 4 ----

#[test]
fn stage4_prompt_holds_question_query_guide_and_overviews_within_budget() {
    let engine = sample_engine();
    let opts = AssistOptions::default();
    let s2 = stage2(&engine, QUESTION, "payment OR stripe", &opts).unwrap();
    let s3 = stage3(&engine, &s2.candidates, &opts).unwrap();
    let p = stage4_prompt(QUESTION, &s2.query, &s3.overviews, &opts).unwrap();
    assert_eq!(p.included, s3.overviews.len());
    assert!(p.prompt.starts_with(prompts::REVIEW_TITLE));
    assert!(p.prompt.contains(QUESTION));
    assert!(p.prompt.contains("payment OR stripe"));
    assert!(p.prompt.contains(&prompts::guide()));
    for o in &s3.overviews {
        assert!(p
            .prompt
            .contains(&format!("{} (chat_id {}", o.path, o.chat_id)));
    }
    assert!(p
        .prompt
        .contains("Tiny overview (the file has no short overview):"));

    let full = tokens(&p.prompt);
    for budget in [full / 2, full / 5] {
        let small = AssistOptions {
            max_tokens: Some(budget),
            ..opts.clone()
        };
        let p = stage4_prompt(QUESTION, &s2.query, &s3.overviews, &small).unwrap();
        assert!(
            tokens(&p.prompt) <= budget,
            "{} > {budget}",
            tokens(&p.prompt)
        );
    }
    let tiny = AssistOptions {
        max_tokens: Some(full / 5),
        ..opts.clone()
    };
    let p = stage4_prompt(QUESTION, &s2.query, &s3.overviews, &tiny).unwrap();
    assert!(p.included < s3.overviews.len());
    assert!(p
        .prompt
        .contains("more files were left out to fit the token budget"));
}

#[test]
fn stage4_reads_varied_model_answers_against_the_sample_candidates() {
    let engine = sample_engine();
    let opts = AssistOptions::default();
    let s2 = stage2(&engine, QUESTION, "payment OR stripe", &opts).unwrap();
    let s3 = stage3(&engine, &s2.candidates, &opts).unwrap();
    let ids = |answer: &str| -> Vec<i64> {
        stage4_parse(answer, &s3.overviews)
            .files
            .iter()
            .map(|f| f.chat_id)
            .collect()
    };
    let pay = "backend/src/payment/paymentService.js";
    assert_eq!(
        ids(&format!(
            r#"{{"answer": null, "identifiedFiles": [{{"path": "{pay}", "chat_id": 42}}]}}"#
        )),
        [42]
    );
    assert_eq!(ids(&format!("1. `{pay}` (chat 42)\n")), [42]);
    assert_eq!(
        ids(&format!("| Path | Chat |\n|--|--|\n| {pay} | 42 |\n")),
        [42]
    );
    assert_eq!(
        ids("Refunds are made in refundHandler.js via Stripe."),
        [43]
    );
    // Two repositories have a paymentService.js: a bare name cannot say which.
    let r = stage4_parse("Payments are created in paymentService.js.", &s3.overviews);
    assert!(r.files.is_empty());
    assert_eq!(r.flagged[0].reason, "ambiguous-path");
    let r = stage4_parse("The moon is made of cheese.", &s3.overviews);
    assert!(r.files.is_empty());
    assert_eq!(r.answer.as_deref(), Some("The moon is made of cheese."));
    let r = stage4_parse(
        r#"{"identifiedFiles": [{"path": "src/invented.js", "chat_id": 4242}]}"#,
        &s3.overviews,
    );
    assert!(r.files.is_empty());
    assert_eq!(r.flagged[0].reason, "unknown-path");
}

// ---- the orchestrator ----

/// A scripted model: answers by stage title, records every prompt.
struct Script {
    prompts: RefCell<Vec<String>>,
    stage1: Vec<&'static str>,
    condensed: String,
    review: String,
}

impl Script {
    fn new(stage1: &[&'static str], review: &str) -> Script {
        Script {
            prompts: RefCell::new(vec![]),
            stage1: stage1.to_vec(),
            condensed: String::new(),
            review: review.to_string(),
        }
    }

    fn answer(&self, prompt: &str) -> gitsense_engine::Result<String> {
        self.prompts.borrow_mut().push(prompt.to_string());
        let n1 = self
            .prompts
            .borrow()
            .iter()
            .filter(|p| p.starts_with(prompts::STAGE1_TITLE))
            .count();
        Ok(if prompt.starts_with(prompts::STAGE1_TITLE) {
            self.stage1[(n1 - 1).min(self.stage1.len() - 1)].to_string()
        } else if prompt.starts_with(prompts::CONDENSE_TITLE) {
            self.condensed.clone()
        } else if prompt.starts_with(prompts::REVIEW_TITLE) {
            self.review.clone()
        } else {
            panic!("unknown prompt: {prompt}")
        })
    }
}

fn run(
    engine: &Engine,
    script: &Script,
    opts: &AssistOptions,
) -> (gitsense_engine::Result<AssistOutcome>, Vec<StageReport>) {
    let mut reports = Vec::new();
    let out = assisted_search(
        engine,
        QUESTION,
        opts,
        &mut |p| script.answer(p),
        &mut |r| reports.push(r.clone()),
    );
    (out, reports)
}

#[test]
fn end_to_end_on_the_sample_with_a_scripted_model() {
    let engine = sample_engine();
    let script = Script::new(
        &["Query: `payment OR stripe`"],
        "```json\n{\"answer\": \"Charges are created in createPayment.\", \"identifiedFiles\": [{\"path\": \"backend/src/payment/paymentService.js\", \"chat_id\": 42}, {\"path\": \"backend/src/made/up.js\", \"chat_id\": 77777}]}\n```",
    );
    let opts = AssistOptions {
        max_tokens: Some(6000),
        ..AssistOptions::default()
    };
    let (out, reports) = run(&engine, &script, &opts);
    let out = out.unwrap();
    assert_eq!(out.query, "payment OR stripe");
    assert_eq!(
        out.answer.as_deref(),
        Some("Charges are created in createPayment.")
    );
    assert_eq!(
        out.identified_files,
        [IdentifiedFile {
            path: "backend/src/payment/paymentService.js".into(),
            chat_id: 42
        }]
    );
    assert_eq!(out.flagged.len(), 1);
    assert_eq!(out.overviews[0].source, OverviewSource::TinyOverview);
    // The results object holds the identified file's overview message.
    let m = &out.results.results.messages;
    assert_eq!(m.len(), 1);
    assert_eq!(m[0].messages_chat_id, 42);
    assert_eq!(out.results.search_criteria["aiAssistant"], true);
    assert_eq!(out.results.search_criteria["question"], QUESTION);
    assert_eq!(
        out.results.search_criteria["identifiedFiles"][0]["chat_id"],
        42
    );
    // Stages in order, each reported once, LLM stages timed.
    let names: Vec<&str> = reports.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["query", "tiny-overviews", "overviews", "review"]);
    assert_eq!(out.stages, reports);
    assert_eq!(reports[0].query.as_deref(), Some("payment OR stripe"));
    assert_eq!(reports[1].counts["matches"], out.total_matches);
    assert!(reports[0].llm_ms.is_some() && reports[3].llm_ms.is_some());
    assert!(reports[3].counts["reviewed"] > 0);
    // Every prompt stayed within the budget.
    let prompts = script.prompts.borrow();
    assert_eq!(prompts.len(), 2);
    for p in prompts.iter() {
        assert!(tokens(p) <= 6000, "{} tokens", tokens(p));
    }
}

#[test]
fn a_rejected_query_is_retried_once_with_the_error() {
    let engine = sample_engine();
    let script = Script::new(&["payment \"stripe", "payment OR stripe"], "README.md");
    let (out, reports) = run(&engine, &script, &AssistOptions::default());
    let out = out.unwrap();
    assert_eq!(out.query, "payment OR stripe");
    assert_eq!(reports[0].attempt, 1);
    assert_eq!(
        reports[0].error.as_ref().map(|e| e.code.as_str()),
        Some("query.unbalanced_quote")
    );
    assert_eq!((reports[1].name.as_str(), reports[1].attempt), ("query", 2));
    let prompts = script.prompts.borrow();
    assert!(prompts[1].contains("query.unbalanced_quote"));
    assert!(prompts[1].contains("at character 8"));
}

#[test]
fn a_query_still_rejected_after_the_retry_fails_with_its_error() {
    let engine = sample_engine();
    let script = Script::new(&["bogus:1 x"], "");
    let (out, reports) = run(&engine, &script, &AssistOptions::default());
    let e: Error = out.unwrap_err();
    assert_eq!(e.code, "query.unknown_filter");
    assert_eq!(reports.len(), 2);
    assert!(reports.iter().all(|r| r.error.is_some()));
    assert_eq!(script.prompts.borrow().len(), 2);
}

#[test]
fn a_query_matching_nothing_is_sent_back_for_a_broader_one() {
    let engine = sample_engine();
    let script = Script::new(
        &["zzqqxx", "payment OR stripe"],
        "backend/src/payment/paymentService.js",
    );
    let (out, reports) = run(&engine, &script, &AssistOptions::default());
    let out = out.unwrap();
    assert_eq!(out.query, "payment OR stripe");
    assert_eq!(out.identified_files[0].chat_id, 42);
    assert_eq!(reports[1].name, "tiny-overviews");
    assert_eq!(reports[1].counts["matches"], 0);
    assert_eq!(
        reports[1].error.as_ref().map(|e| e.code.as_str()),
        Some("assist.no_matches")
    );
    assert!(script.prompts.borrow()[1].contains("assist.no_matches"));
}

#[test]
fn nothing_found_after_the_retry_ends_without_a_review() {
    let engine = sample_engine();
    let script = Script::new(&["zzqqxx"], "unused");
    let (out, reports) = run(&engine, &script, &AssistOptions::default());
    let out = out.unwrap();
    assert!(out.identified_files.is_empty() && out.answer.is_none());
    assert_eq!(out.total_matches, 0);
    assert!(!reports.iter().any(|r| r.name == "review"));
    assert!(script
        .prompts
        .borrow()
        .iter()
        .all(|p| p.starts_with(prompts::STAGE1_TITLE)));
}

#[test]
fn many_matches_go_through_the_condensed_pick() {
    let (_d, engine) = fixture(&widget_files(80));
    let mut script = Script::new(&["widget"], "");
    script.condensed = format!(
        "I pick:\n- src/widgets/widget_007.rs (chat {})\n- src/widgets/widget_042.rs",
        blob_chat_id(7)
    );
    script.review = format!(
        "{{\"answer\": null, \"identifiedFiles\": [{}]}}",
        blob_chat_id(42)
    );
    let (out, reports) = run(&engine, &script, &AssistOptions::default());
    let out = out.unwrap();
    let names: Vec<&str> = reports.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "query",
            "tiny-overviews",
            "condensed-pick",
            "overviews",
            "review"
        ]
    );
    assert_eq!(reports[2].counts["chosen"], 2);
    assert_eq!(reports[3].counts["tinyFallback"], 2);
    assert_eq!(out.identified_files[0].path, "src/widgets/widget_042.rs");
    // The review saw only the two picked files.
    let review = script.prompts.borrow().last().unwrap().clone();
    assert!(review.contains("widget_007.rs") && review.contains("widget_042.rs"));
    assert!(!review.contains("widget_008.rs"));
}

#[test]
fn an_llm_failure_stops_the_search_and_names_the_stage() {
    let engine = sample_engine();
    let mut calls = 0;
    let out = assisted_search(
        &engine,
        QUESTION,
        &AssistOptions::default(),
        &mut |p| {
            calls += 1;
            if p.starts_with(prompts::REVIEW_TITLE) {
                Err(Error::new("host.llm_unavailable", "rate limited"))
            } else {
                Ok("payment".into())
            }
        },
        &mut |_| {},
    );
    let e = out.unwrap_err();
    assert_eq!(e.code, "host.llm_unavailable");
    assert_eq!(e.location.as_deref(), Some("stage 4 (review)"));
    assert_eq!(calls, 2);
}

#[test]
fn the_step_functions_compose_like_the_orchestrator() {
    // What an asynchronous host does between awaits, checked against
    // assisted_search with the same scripted answers.
    let engine = sample_engine();
    let opts = AssistOptions::default();
    let review = "backend/src/payment/paymentService.js (chat 42)";
    let _p1 = stage1_prompt(QUESTION, &opts).unwrap();
    let q = accepted(stage1_accept(QUESTION, "payment OR stripe", &opts).unwrap());
    let s2 = stage2(&engine, QUESTION, &q, &opts).unwrap();
    let sel = stage2_pick(&s2, None, &opts);
    let s3 = stage3(&engine, &sel.chosen, &opts).unwrap();
    let p4 = stage4_prompt(QUESTION, &q, &s3.overviews, &opts).unwrap();
    let refs = stage4_parse(review, &s3.overviews[..p4.included]);
    let stepwise = finish(QUESTION, &s2, &s3, &refs);

    let script = Script::new(&["payment OR stripe"], review);
    let (whole, _) = run(&engine, &script, &opts);
    let mut whole = whole.unwrap();
    whole.stages.clear();
    assert_eq!(stepwise, whole);
    // The step outputs cross a JSON boundary intact (the browser passes
    // them through JS).
    let back: Stage2 = serde_json::from_str(&serde_json::to_string(&s2).unwrap()).unwrap();
    assert_eq!(back, s2);
    let back: Stage3 = serde_json::from_str(&serde_json::to_string(&s3).unwrap()).unwrap();
    assert_eq!(back, s3);
}

#[test]
fn a_session_is_driven_prompt_by_prompt_like_an_async_host_would() {
    let engine = sample_engine();
    let opts = AssistOptions {
        condense_threshold: 3,
        ..AssistOptions::default()
    };
    let answers = [
        "payment \"oops",    // rejected
        "payment OR stripe", // accepted
        "[{\"path\": \"backend/src/payment/refundHandler.js\", \"chat_id\": 43}]", // pick
        "backend/src/payment/refundHandler.js (chat 43)", // review
    ];
    let mut session = AssistSession::start(&engine, QUESTION, &opts).unwrap();
    let mut asked = Vec::new();
    let mut reports = Vec::new();
    for answer in answers {
        let AssistStep::Ask {
            stage,
            name,
            prompt,
        } = session.step()
        else {
            panic!("the session ended early");
        };
        asked.push((stage, name));
        // The JSON a browser host receives for this step.
        let v = serde_json::to_value(session.step()).unwrap();
        assert_eq!(
            (v["kind"].as_str(), v["prompt"].as_str()),
            (Some("ask"), Some(prompt.as_str()))
        );
        session.advance(&engine, answer).unwrap();
        reports.extend(session.take_reports());
    }
    assert_eq!(
        asked,
        [
            (1, "query"),
            (1, "query"),
            (2, "condensed-pick"),
            (4, "review")
        ]
    );
    let AssistStep::Done { outcome } = session.step() else {
        panic!("the session should be done");
    };
    assert_eq!(outcome.identified_files[0].chat_id, 43);
    assert_eq!(outcome.stages, reports);
    assert_eq!(session.reports(), &reports[..]);
    assert!(
        session.take_reports().is_empty(),
        "reports are handed out once"
    );
    let names: Vec<&str> = reports.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "query",
            "query",
            "tiny-overviews",
            "condensed-pick",
            "overviews",
            "review"
        ]
    );
    // A finished session refuses more answers and keeps its outcome.
    let e = session.advance(&engine, "more?").unwrap_err();
    assert_eq!(e.code, "options.assist_finished");
    assert!(matches!(session.step(), AssistStep::Done { .. }));
}

#[test]
fn a_failed_session_stays_failed() {
    let engine = sample_engine();
    let opts = AssistOptions {
        retries: 0,
        ..AssistOptions::default()
    };
    let mut session = AssistSession::start(&engine, QUESTION, &opts).unwrap();
    let e = session.advance(&engine, "bogus:1").unwrap_err();
    assert_eq!(e.code, "query.unknown_filter");
    assert_eq!(session.take_reports().len(), 1);
    assert!(matches!(session.step(), AssistStep::Failed { error } if error == e));
    assert_eq!(session.advance(&engine, "payment").unwrap_err(), e);
}

#[test]
fn assist_options_come_from_camel_case_json_and_refuse_unknown_keys() {
    let o: AssistOptions =
        serde_json::from_str(r#"{"maxTokens": 900, "condenseThreshold": 10}"#).unwrap();
    assert_eq!(o.max_tokens, Some(900));
    assert_eq!(o.condense_threshold, 10);
    assert_eq!(o.max_candidates, 200);
    assert!(serde_json::from_str::<AssistOptions>(r#"{"maxTokenz": 1}"#).is_err());
}
