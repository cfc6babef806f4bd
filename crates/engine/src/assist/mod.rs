//! AI-assisted multi-stage search over an [`Engine`], with the
//! host's LLM as a callback.
//!
//! In: a natural-language question, [`AssistOptions`] and an LLM
//! (`prompt → answer`). Out: an [`AssistOutcome`]: the model's direct
//! answer (if any), the identified files `[{path, chat_id}]` (GitSense's
//! `config.data.identifiedFiles`), and a results object of their overviews.
//!
//! 1. **Query**: the model writes a query from a syntax guide generated
//!    from the parser's own tables; a rejected query is fed back once with
//!    the error code, message and position.
//! 2. **Tiny overviews**: the query runs with the profile
//!    `tiny-overview-query-optimization` (at most 200 hits). Past
//!    `condenseThreshold` matches (50) the model picks from a condensed
//!    view, one line per file.
//! 3. **Overviews**: short overviews of the chosen files, falling back to
//!    the tiny overview or the start of the file text, saying so.
//! 4. **Review**: the model answers or identifies files; its answer is
//!    parsed whatever its shape (`answer`).
//!
//! Every prompt fits `maxTokens` (chars/4 estimate). An asynchronous host
//! drives an [`AssistSession`] (prompt out, answer in, between awaits);
//! [`assisted_search`] is that loop with a synchronous LLM. The stages are
//! also plain functions (`stages`) for hosts that want finer control. Nothing here
//! touches the network, threads or `std::time`: timings use the engine's
//! clock (`Engine::now_ms`).

pub(crate) mod answer;
pub mod prompts;
pub(crate) mod session;
pub(crate) mod stages;

pub(crate) use answer::{AnswerShape, FileRefs, Flagged};
pub use session::{AssistSession, AssistStep};
pub use stages::*;

use crate::budget;
use crate::error::{Error, Result};
use crate::format::{self, Format, FormatOptions, Preamble};
use crate::results::SearchResults;
use crate::search::Engine;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeMap;

/// Options of an assisted search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct AssistOptions {
    /// Token budget (chars/4) of every prompt sent to the LLM, and of the
    /// formatted outcome.
    pub max_tokens: Option<u64>,
    /// Above this many stage-2 matches the model picks from a condensed
    /// view; at or below it the step is skipped.
    pub condense_threshold: u64,
    /// Most tiny overviews stage 2 returns.
    pub max_candidates: u64,
    /// Most files read in stage 3 and reviewed in stage 4.
    pub max_review_files: u64,
    /// Characters of file text used when a file has no overview.
    pub fallback_chars: u64,
    /// Extra stage-1 attempts after a rejected query or one that matches
    /// nothing.
    pub retries: u32,
}

impl Default for AssistOptions {
    fn default() -> Self {
        AssistOptions {
            max_tokens: None,
            condense_threshold: 50,
            max_candidates: 200,
            max_review_files: 50,
            fallback_chars: 1500,
            retries: 1,
        }
    }
}

/// A file the model identified, as GitSense's `identifiedFiles` holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdentifiedFile {
    pub path: String,
    pub chat_id: i64,
}

/// A stage-2 hit: a file with a matching tiny overview.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    pub chat_id: i64,
    /// The tiny-overview message.
    pub message_id: i64,
    pub path: String,
    pub language: Option<String>,
    pub purpose: Option<String>,
    pub keywords: Vec<String>,
    /// FTS rank of the tiny overview (lower is better).
    pub rank: f64,
}

/// Where a stage-3 overview came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OverviewSource {
    ShortOverview,
    /// No short overview in the index.
    TinyOverview,
    /// No overview at all: the start of the file's text.
    FileText,
    /// Nothing about the file in the index.
    None,
}

impl OverviewSource {
    /// How the review prompt introduces the text.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            OverviewSource::ShortOverview => "Short overview:",
            OverviewSource::TinyOverview => "Tiny overview (the file has no short overview):",
            OverviewSource::FileText => "Start of the file (the file has no overview):",
            OverviewSource::None => "Nothing is known about this file.",
        }
    }

    /// Why an overview is not the short one, for people reading reports.
    pub(crate) fn note(self, fallback_chars: usize) -> Option<String> {
        match self {
            OverviewSource::ShortOverview => None,
            OverviewSource::TinyOverview => {
                Some("no short overview in the index; the tiny overview is used".into())
            }
            OverviewSource::FileText => Some(format!(
                "no overview in the index; the first {fallback_chars} characters of the file are used"
            )),
            OverviewSource::None => Some("no overview or file text in the index".into()),
        }
    }
}

/// What stage 3 read about one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Overview {
    pub chat_id: i64,
    pub path: String,
    pub language: Option<String>,
    pub source: OverviewSource,
    /// The message the text comes from.
    pub message_id: Option<i64>,
    pub text: String,
    /// Set when `source` is a fallback.
    pub note: Option<String>,
}

/// What one stage did, reported as it finishes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StageReport {
    /// 1 query, 2 tiny overviews (and the condensed pick), 3 overviews,
    /// 4 review.
    pub stage: u8,
    /// `query`, `tiny-overviews`, `condensed-pick`, `overviews`, `review`.
    pub name: String,
    /// Stage-1 attempt number (1 = first); 1 elsewhere.
    pub attempt: u32,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub query: Option<String>,
    pub counts: BTreeMap<String, u64>,
    /// Estimated tokens of the prompt sent in this stage.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) prompt_tokens: Option<u64>,
    /// Time the LLM took, by the engine's clock.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub llm_ms: Option<f64>,
    /// Time the whole stage took, LLM included.
    pub elapsed_ms: f64,
    pub notes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<Error>,
}

impl StageReport {
    fn new(stage: u8, name: &str) -> Self {
        StageReport {
            stage,
            name: name.to_string(),
            attempt: 1,
            query: None,
            counts: BTreeMap::new(),
            prompt_tokens: None,
            llm_ms: None,
            elapsed_ms: 0.0,
            notes: vec![],
            error: None,
        }
    }
}

/// The result of an assisted search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistOutcome {
    pub(crate) question: String,
    /// The accepted stage-1 query (without the stage-2 profile).
    pub query: String,
    /// The model's direct answer, or its whole reply when it was not JSON.
    pub answer: Option<String>,
    pub identified_files: Vec<IdentifiedFile>,
    /// References in the review that were not candidates (dropped).
    pub flagged: Vec<Flagged>,
    /// Stage-2 matches.
    pub total_matches: u64,
    /// What stage 3 read about each identified file (source and note say
    /// when it is a fallback), in identified order.
    pub overviews: Vec<Overview>,
    /// The identified files' overview messages, in identified order.
    pub results: SearchResults,
    pub stages: Vec<StageReport>,
}

/// Runs stages 1 to 4 with a synchronous LLM, reporting each stage to
/// `on_stage` as it ends (and in `AssistOutcome::stages`). This is the
/// [`AssistSession`] loop; an asynchronous host runs the same loop itself.
///
/// Fails with the query error when the model's query is still rejected
/// after `retries` retries, with the LLM's own error (its `location` naming
/// the stage) when a call fails, and with `options.max_tokens_too_small`
/// when a prompt cannot fit the budget.
pub fn assisted_search(
    engine: &Engine,
    question: &str,
    opts: &AssistOptions,
    llm: &mut dyn FnMut(&str) -> Result<String>,
    on_stage: &mut dyn FnMut(&StageReport),
) -> Result<AssistOutcome> {
    let mut session = AssistSession::start(engine, question, opts)?;
    loop {
        match session.step() {
            AssistStep::Ask {
                stage,
                name,
                prompt,
            } => {
                let answer =
                    llm(&prompt).map_err(|e| e.with_location(format!("stage {stage} ({name})")))?;
                let advanced = session.advance(engine, &answer);
                session.take_reports().iter().for_each(&mut *on_stage);
                advanced?;
            }
            AssistStep::Done { outcome } => return Ok(*outcome),
            AssistStep::Failed { error } => return Err(error),
        }
    }
}

/// [`format_outcome`] over JSON (an outcome as JSON text, a format name,
/// options as JSON), for hosts that hold the outcome as JSON.
pub fn format_outcome_json(outcome_json: &str, format: &str, options_json: &str) -> Result<String> {
    let outcome: AssistOutcome = crate::util::json_arg(outcome_json, "assisted-search outcome")?;
    let opts: FormatOptions = crate::util::from_json_arg(options_json, "format options")?;
    format_outcome(&outcome, format.parse()?, &opts)
}

/// Renders an outcome in any format within `opts.max_tokens`: `json` is
/// the outcome object; the text formats put the answer first (markdown:
/// `question`, `answer` and `identified_files` in the front matter and an
/// `## Answer` section) and then the identified files' overviews as
/// [`format::format_results`] renders results.
pub fn format_outcome(outcome: &AssistOutcome, f: Format, opts: &FormatOptions) -> Result<String> {
    if f == Format::Json {
        let draw = |r: &SearchResults| {
            let mut o = outcome.clone();
            o.results = r.clone();
            serde_json::to_string(&o).unwrap_or_default()
        };
        let mut r = outcome.results.clone();
        if let Some(max) = opts.max_tokens {
            budget::fit(&mut r, max, &|r| budget::estimate_text(&draw(r)))?;
        }
        return Ok(draw(&r));
    }
    // Show each file as the model saw it (the overview without analyzer
    // boilerplate, or the start of the file), and say where it came from.
    let mut shown = outcome.results.clone();
    for m in &mut shown.results.messages {
        if let Some(o) = outcome
            .overviews
            .iter()
            .find(|o| o.chat_id == m.messages_chat_id)
        {
            m.messages_content = Some(o.text.clone());
        }
    }
    let files: Vec<serde_json::Value> = outcome
        .overviews
        .iter()
        .map(|o| json!({"path": o.path, "chat_id": o.chat_id, "overview": o.source}))
        .collect();
    let fallbacks: Vec<String> = outcome
        .overviews
        .iter()
        .filter_map(|o| {
            o.note
                .as_ref()
                .map(|n| format!("- {} (chat {}): {n}", o.path, o.chat_id))
        })
        .collect();
    let pre = Preamble {
        fields: vec![
            ("question".into(), json!(outcome.question)),
            ("answer".into(), json!(outcome.answer)),
            ("identified_files".into(), json!(files)),
        ],
        sections: vec![
            ("Answer".into(), outcome.answer.clone().unwrap_or_default()),
            ("Overview sources".into(), fallbacks.join("\n")),
        ],
    };
    format::format_with(&shown, f, opts, &pre)
}
