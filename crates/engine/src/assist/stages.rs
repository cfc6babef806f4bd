//! The stages of an assisted search as separate calls, so a host whose LLM
//! is asynchronous (the browser) can run them one by one between awaits:
//!
//! ```text
//! stage1_prompt ─llm─▶ stage1_accept ──rejected──▶ retry prompt ─llm─▶ stage1_accept
//!                          │ accepted query
//!                          ▼
//!                        stage2 ── condensed prompt? ─llm─▶ stage2_pick(answer)
//!                          │ (no condensed view: stage2_pick(None))
//!                          ▼
//!                        stage3 ─▶ stage4_prompt ─llm─▶ stage4_parse ─▶ finish
//! ```
//!
//! [`super::assisted_search`] is exactly this sequence with a synchronous LLM.

use super::answer::{extract_query, parse_file_refs, AnswerShape, FileRefs, Flagged};
use super::prompts;
use super::{AssistOptions, AssistOutcome, Candidate, IdentifiedFile, Overview, OverviewSource};
use crate::error::{Error, Result};
use crate::plan::{self, Highlight, MatchMode, SearchOptions, MAX_PER_PAGE};
use crate::profiles;
use crate::query::{self, ast::Scope, ast::Target};
use crate::results::*;
use crate::search::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::HashMap;

/// Stage 2 searches with this profile: tiny overviews in git chats.
pub const TINY_PROFILE: &str = "tiny-overview-query-optimization";
/// Stage 3 reads short overviews with this profile.
pub(crate) const SHORT_PROFILE: &str = "short-overview-query-optimization";
pub const TINY_TYPE: &str = "tiny-overview::file-content::default";
pub(crate) const SHORT_TYPE: &str = "short-overview::file-content::default";
/// The message holding a file's text in its `git-blob` chat.
pub(crate) const FILE_TEXT_TYPE: &str = "git-blob";

/// Ids per stage-3 lookup query: a `chat-id:` list may hold at most this
/// many values.
const IDS_PER_LOOKUP: usize = query::parser::MAX_FILTER_VALUES;

/// What stage 1 made of the model's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum Stage1Verdict {
    /// The query parses and plans under the stage-2 profile.
    #[serde(rename_all = "camelCase")]
    Accepted { query: String },
    /// The query was refused; `retry_prompt` feeds the error back.
    #[serde(rename_all = "camelCase")]
    Rejected {
        query: String,
        error: Error,
        retry_prompt: String,
    },
}

/// Stage 2's output: the tiny-overview results object and the candidate
/// files drawn from it, plus the condensed view when there are too many.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stage2 {
    /// The accepted stage-1 query.
    pub query: String,
    /// The query text actually run (profile added).
    pub(crate) search_text: String,
    /// Matches before the per-page limit (`totalCounts.messages`).
    pub total_matches: u64,
    /// One per chat, best first, at most `maxCandidates`.
    pub candidates: Vec<Candidate>,
    /// The condensed-view prompt when `total_matches` exceeds
    /// `condenseThreshold`; `None` when the step is skipped.
    pub condensed_prompt: Option<String>,
    /// How many candidates the condensed prompt lists (the budget may
    /// leave the lowest-ranked out).
    pub condensed_listed: usize,
    /// The stage-2 results object (contents left out; snippets and
    /// metadata kept), `searchCriteria.aiAssistant: true`.
    pub results: SearchResults,
}

/// The files chosen for stage 3.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Selection {
    pub chosen: Vec<Candidate>,
    /// References in the condensed-view answer that were not candidates.
    pub flagged: Vec<Flagged>,
    /// True when the model's pick named no candidate and the best-ranked
    /// candidates were taken instead.
    pub fell_back: bool,
}

/// Stage 3's output: one overview per chosen file, and the overview
/// messages as a results object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stage3 {
    pub overviews: Vec<Overview>,
    pub results: SearchResults,
}

/// The review prompt and how many overviews it holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stage4Prompt {
    pub prompt: String,
    /// The first `included` overviews are in the prompt; the parser takes
    /// only those as candidates.
    pub included: usize,
}

// ---- stage 1 ----

/// The prompt asking the model for a query (syntax guide + question).
pub fn stage1_prompt(question: &str, opts: &AssistOptions) -> Result<String> {
    check_question(question)?;
    prompts::stage1(question, opts)
}

/// The stage-1 prompt with a rejected query and its error, for the retry.
pub(crate) fn stage1_retry_prompt(
    question: &str,
    rejected_query: &str,
    error: &Error,
    opts: &AssistOptions,
) -> Result<String> {
    prompts::stage1_retry(question, rejected_query, error, opts)
}

/// Reads the query out of the model's answer and validates it the way
/// stage 2 will run it. `Err` only when the retry prompt cannot be built.
pub fn stage1_accept(question: &str, answer: &str, opts: &AssistOptions) -> Result<Stage1Verdict> {
    let query = extract_query(answer);
    match check_query(&query) {
        Ok(()) => Ok(Stage1Verdict::Accepted { query }),
        Err(error) => Ok(Stage1Verdict::Rejected {
            retry_prompt: stage1_retry_prompt(question, &query, &error, opts)?,
            query,
            error,
        }),
    }
}

pub(crate) fn check_question(question: &str) -> Result<()> {
    if question.trim().is_empty() {
        return Err(Error::new(
            "options.empty_question",
            "the question is empty",
        ));
    }
    Ok(())
}

fn char_pos(text: &str, needle: &str) -> usize {
    let lower = text.to_ascii_lowercase();
    lower
        .find(needle)
        .map(|b| text[..b].chars().count())
        .unwrap_or(0)
}

/// Parses and plans the query as stage 2 will run it. Directives that
/// would take the search away from tiny overviews are refused.
fn check_query(text: &str) -> Result<()> {
    let q = query::parse(text, &profiles::exists)?;
    let refuse = |directive: &str, why: &str| {
        Err(Error::at(
            "query.directive_not_allowed",
            format!("{directive}: is not allowed here: {why}"),
            char_pos(text, &format!("{directive}:")),
        ))
    };
    if q.profile.as_deref().is_some_and(|p| p != TINY_PROFILE) {
        return refuse("profile", "the assisted search always uses tiny overviews");
    }
    if q.targets.as_ref().is_some_and(|t| t != &[Target::Messages]) {
        return refuse("in", "tiny overviews are messages");
    }
    if q.scope.is_some_and(|s| s != Scope::AllChats) {
        return refuse("scope", "the assisted search covers all git chats");
    }
    let full = query::parse(&stage2_text(text), &profiles::exists)?;
    plan::plan(
        &full,
        &stage2_options(&AssistOptions::default()),
        MatchMode::AllTerms,
    )?;
    Ok(())
}

// ---- stage 2 ----

fn stage2_text(query: &str) -> String {
    format!("profile:{TINY_PROFILE} {query}")
}

fn stage2_options(opts: &AssistOptions) -> SearchOptions {
    SearchOptions {
        per_page: Some(opts.max_candidates.clamp(1, MAX_PER_PAGE)),
        highlight: Highlight::None,
        include_content: false,
        ..SearchOptions::default()
    }
}

fn meta_str(meta: &serde_json::Map<String, Value>, key: &str) -> Option<String> {
    meta.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// A stage-2 hit as a candidate file (one per chat, first = best).
fn candidates_of(r: &SearchResults) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    for m in &r.results.messages {
        let Some(path) = meta_str(&m.meta, "messages_meta_file_path") else {
            continue;
        };
        if out.iter().any(|c| c.chat_id == m.messages_chat_id) {
            continue;
        }
        let keywords = m
            .meta
            .get("messages_meta_keywords")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        out.push(Candidate {
            chat_id: m.messages_chat_id,
            message_id: m.messages_id,
            path,
            language: meta_str(&m.meta, "messages_meta_language"),
            purpose: meta_str(&m.meta, "messages_meta_purpose"),
            keywords,
            rank: m.fts_rank,
        });
    }
    out
}

/// Runs the accepted query over tiny overviews (profile
/// `tiny-overview-query-optimization`, at most `maxCandidates`), and builds
/// the condensed view when the matches exceed `condenseThreshold`.
pub fn stage2(
    engine: &Engine,
    question: &str,
    query: &str,
    opts: &AssistOptions,
) -> Result<Stage2> {
    let search_text = stage2_text(query);
    let mut results = engine.search(&search_text, &stage2_options(opts))?;
    mark_assisted(&mut results.search_criteria, &[]);
    let total_matches = results.total_counts.messages;
    let candidates = candidates_of(&results);
    let (condensed_prompt, condensed_listed) =
        if total_matches > opts.condense_threshold && !candidates.is_empty() {
            let (p, k) = prompts::condensed(question, query, total_matches, &candidates, opts)?;
            (Some(p), k)
        } else {
            (None, 0)
        };
    Ok(Stage2 {
        query: query.to_string(),
        search_text,
        total_matches,
        candidates,
        condensed_prompt,
        condensed_listed,
        results,
    })
}

fn as_files(c: &[Candidate]) -> Vec<IdentifiedFile> {
    c.iter()
        .map(|c| IdentifiedFile {
            path: c.path.clone(),
            chat_id: c.chat_id,
        })
        .collect()
}

/// The files stage 3 reads: with no condensed view (`answer` `None`) the
/// best `maxReviewFiles` candidates; otherwise the candidates the model
/// picked from the condensed view (at most `maxReviewFiles`), or the best
/// ones when it picked none.
pub fn stage2_pick(stage2: &Stage2, answer: Option<&str>, opts: &AssistOptions) -> Selection {
    let limit = opts.max_review_files.max(1) as usize;
    let best = || stage2.candidates.iter().take(limit).cloned().collect();
    let Some(answer) = answer else {
        return Selection {
            chosen: best(),
            flagged: vec![],
            fell_back: false,
        };
    };
    let listed = &stage2.candidates[..stage2.condensed_listed.min(stage2.candidates.len())];
    let refs = parse_file_refs(answer, &as_files(listed));
    let chosen: Vec<Candidate> = refs
        .files
        .iter()
        .filter_map(|f| listed.iter().find(|c| c.chat_id == f.chat_id).cloned())
        .take(limit)
        .collect();
    let fell_back = chosen.is_empty();
    Selection {
        chosen: if fell_back { best() } else { chosen },
        flagged: refs.flagged,
        fell_back,
    }
}

// ---- stage 3 ----

/// Lines of GitSense analyzer output that restate the analyzer's own
/// instructions rather than describe the file; an overview is cut there.
const ANALYZER_BOILERPLATE: &[&str] = &[
    "### Custom Metadata Definitions",
    "### JSON Generation and Validation Rules",
];

/// Whether an overview line only repeats what the prompt and the results
/// already say: the analyzer banner, the analyzer's type heading, and the
/// file's path and chat id.
fn is_banner(line: &str) -> bool {
    let t = line.trim();
    let item = t.trim_start_matches(['*', '-']).trim_start();
    let analyzer_type = |h: &str| !h.contains(' ') && h.split("::").count() == 3;
    t == "# GitSense Chat Analysis"
        || t.strip_prefix("## ").is_some_and(analyzer_type)
        || item.starts_with("**Path:**")
        || item.starts_with("**Chat ID:**")
}

/// The part of an overview message that describes the file: the analyzer
/// banner, the path / chat id lines and the restated instructions are left
/// out.
pub(crate) fn overview_text(content: &str) -> String {
    let mut out = Vec::new();
    for line in content.lines() {
        let t = line.trim();
        if ANALYZER_BOILERPLATE.iter().any(|b| t.starts_with(b)) {
            break;
        }
        if !is_banner(line) {
            out.push(line);
        }
    }
    let text = out.join("\n");
    let mut tidy = String::new();
    for para in text.split("\n\n").map(str::trim).filter(|p| !p.is_empty()) {
        if !tidy.is_empty() {
            tidy.push_str("\n\n");
        }
        tidy.push_str(para);
    }
    tidy
}

/// Messages of one type for the given chats, newest first per chat.
fn lookup(
    engine: &Engine,
    prefix: &str,
    ids: &[i64],
    runs: &mut Vec<String>,
) -> Result<HashMap<i64, MessageResult>> {
    let mut found = HashMap::new();
    for chunk in ids.chunks(IDS_PER_LOOKUP) {
        let list: Vec<String> = chunk.iter().map(i64::to_string).collect();
        let text = format!("{prefix} chat-id:{}", list.join(","));
        let r = engine.search(
            &text,
            &SearchOptions {
                per_page: Some(MAX_PER_PAGE),
                highlight: Highlight::None,
                include_content: true,
                ..SearchOptions::default()
            },
        )?;
        runs.push(text);
        // A search without keywords lists newest first: keep the first.
        for m in r.results.messages {
            found.entry(m.messages_chat_id).or_insert(m);
        }
    }
    Ok(found)
}

/// A results object made of the given messages (one page holding all).
pub(crate) fn results_object(criteria: Value, messages: Vec<MessageResult>) -> SearchResults {
    let n = messages.len() as u64;
    SearchResults {
        search_criteria: criteria,
        pagination: Pagination {
            current_page: 1,
            total_pages: n.min(1),
            total_results: n,
            results_per_page: n,
        },
        total_counts: TotalCounts {
            chats: 0,
            messages: n,
            code_blocks: 0,
        },
        results: ResultSets {
            messages,
            ..ResultSets::default()
        },
        total_results_returned: n,
        hint: None,
        next_cursor: None,
        truncated: None,
        trace: None,
        facets: None,
        did_you_mean: None,
    }
}

/// Reads an overview for each chosen file: its short overview
/// (`short-overview::file-content::default`), else its tiny overview, else
/// the first `fallbackChars` characters of the file text (`git-blob`
/// message), each saying which it is.
pub fn stage3(engine: &Engine, chosen: &[Candidate], opts: &AssistOptions) -> Result<Stage3> {
    let mut ids: Vec<i64> = Vec::new();
    for c in chosen {
        if !ids.contains(&c.chat_id) {
            ids.push(c.chat_id);
        }
    }
    let mut runs = Vec::new();
    let mut missing = ids.clone();
    let mut found: [HashMap<i64, MessageResult>; 3] = Default::default();
    let lookups = [
        format!("profile:{SHORT_PROFILE} msg-type:{SHORT_TYPE}"),
        format!("profile:{TINY_PROFILE}"),
        format!("in:messages msg-type:{FILE_TEXT_TYPE}"),
    ];
    for (slot, prefix) in found.iter_mut().zip(&lookups) {
        if missing.is_empty() {
            break;
        }
        *slot = lookup(engine, prefix, &missing, &mut runs)?;
        missing.retain(|id| !slot.contains_key(id));
    }
    let [mut short, mut tiny, mut file] = found;
    let fallback = opts.fallback_chars as usize;
    let mut overviews = Vec::new();
    let mut messages = Vec::new();
    for id in ids {
        let cand = chosen.iter().find(|c| c.chat_id == id);
        let (source, msg) = if let Some(m) = short.remove(&id) {
            (OverviewSource::ShortOverview, Some(m))
        } else if let Some(m) = tiny.remove(&id) {
            (OverviewSource::TinyOverview, Some(m))
        } else if let Some(m) = file.remove(&id) {
            (OverviewSource::FileText, Some(m))
        } else {
            (OverviewSource::None, None)
        };
        let content = msg
            .as_ref()
            .and_then(|m| m.messages_content.as_deref())
            .unwrap_or("");
        let text = match source {
            OverviewSource::FileText => {
                let mut t: String = content.chars().take(fallback).collect();
                if t.len() < content.len() {
                    t.push_str("\n...");
                }
                t
            }
            _ => overview_text(content),
        };
        let meta = |key: &str| msg.as_ref().and_then(|m| meta_str(&m.meta, key));
        overviews.push(Overview {
            chat_id: id,
            path: cand
                .map(|c| c.path.clone())
                .or_else(|| meta("messages_meta_file_path"))
                .unwrap_or_default(),
            language: cand
                .and_then(|c| c.language.clone())
                .or_else(|| meta("messages_meta_language")),
            source,
            message_id: msg.as_ref().map(|m| m.messages_id),
            note: source.note(fallback),
            text: text.clone(),
        });
        if let Some(mut m) = msg {
            // The listing snippet of an overview would be its banner; show
            // the start of what the model reads instead.
            let mut snippet = text;
            crate::budget::shorten_text(&mut snippet, 160);
            m.messages_content_snippet = Some(snippet);
            messages.push(m);
        }
    }
    let criteria = json!({
        "query": runs.first().cloned().unwrap_or_default(),
        "queries": runs,
        "profile": SHORT_PROFILE,
        "aiAssistant": true,
        "engine": "gitsense-search",
        "engineVersion": env!("CARGO_PKG_VERSION"),
        "indexRevision": engine.info().revision,
    });
    Ok(Stage3 {
        overviews,
        results: results_object(criteria, messages),
    })
}

// ---- stage 4 ----

/// The review prompt: question, query, syntax guide and the overviews,
/// within `maxTokens`.
pub fn stage4_prompt(
    question: &str,
    query: &str,
    overviews: &[Overview],
    opts: &AssistOptions,
) -> Result<Stage4Prompt> {
    let (prompt, included) = prompts::review(question, query, overviews, opts)?;
    Ok(Stage4Prompt { prompt, included })
}

/// Reads the model's review: the files it identified among `overviews`
/// (those in the prompt) and its direct answer, if any.
pub fn stage4_parse(answer: &str, overviews: &[Overview]) -> FileRefs {
    let files: Vec<IdentifiedFile> = overviews
        .iter()
        .map(|o| IdentifiedFile {
            path: o.path.clone(),
            chat_id: o.chat_id,
        })
        .collect();
    parse_file_refs(answer, &files)
}

/// A review with nothing to review (stage 2 found no file).
pub(crate) fn empty_review() -> FileRefs {
    FileRefs {
        files: vec![],
        flagged: vec![],
        answer: None,
        shape: AnswerShape::Text,
    }
}

/// Sets `aiAssistant: true` and `extra` on a `searchCriteria` object (one
/// that came back from a host as something else is replaced).
fn mark_assisted(criteria: &mut Value, extra: &[(&str, Value)]) {
    if !criteria.is_object() {
        *criteria = json!({});
    }
    if let Some(c) = criteria.as_object_mut() {
        c.insert("aiAssistant".into(), json!(true));
        for (k, v) in extra {
            c.insert(k.to_string(), v.clone());
        }
    }
}

/// Assembles the outcome: the answer, the identified files, and a results
/// object of their overview messages (in identified order) whose
/// `searchCriteria` is stage 2's with `aiAssistant`, `question` and
/// `identifiedFiles` added. `stages` is left empty for the caller.
pub fn finish(
    question: &str,
    stage2: &Stage2,
    stage3: &Stage3,
    review: &FileRefs,
) -> AssistOutcome {
    let mut criteria = stage2.results.search_criteria.clone();
    mark_assisted(
        &mut criteria,
        &[
            ("question", json!(question)),
            ("identifiedFiles", json!(review.files)),
        ],
    );
    let messages: Vec<MessageResult> = review
        .files
        .iter()
        .filter_map(|f| {
            stage3
                .results
                .results
                .messages
                .iter()
                .find(|m| m.messages_chat_id == f.chat_id)
                .cloned()
        })
        .collect();
    AssistOutcome {
        question: question.to_string(),
        query: stage2.query.clone(),
        answer: review.answer.clone(),
        identified_files: review.files.clone(),
        flagged: review.flagged.clone(),
        total_matches: stage2.total_matches,
        overviews: review
            .files
            .iter()
            .filter_map(|f| {
                stage3
                    .overviews
                    .iter()
                    .find(|o| o.chat_id == f.chat_id)
                    .cloned()
            })
            .collect(),
        results: results_object(criteria, messages),
        stages: vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overview_text_drops_the_banner_and_restated_instructions() {
        let msg = "\n# GitSense Chat Analysis\n## tiny-overview::file-content::default\n\n*   **Path:** a.js\n\n## Summary\nDoes things.\n\n\n### Custom Metadata Definitions\n*   `purpose` (string): ...";
        assert_eq!(overview_text(msg), "## Summary\nDoes things.");
        assert_eq!(overview_text("plain text"), "plain text");
        // A heading that merely contains `::` is the file's, not the banner.
        assert_eq!(
            overview_text("# std::vec\n\n## Module std::vec::Vec\nGrowable arrays."),
            "# std::vec\n\n## Module std::vec::Vec\nGrowable arrays."
        );
    }

    #[test]
    fn queries_leaving_the_tiny_overviews_are_refused_with_a_position() {
        let e = check_query("payment scope:current-chat").unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.position),
            ("query.directive_not_allowed", Some(8))
        );
        assert_eq!(
            check_query("in:chats payment").unwrap_err().code,
            "query.directive_not_allowed"
        );
        assert_eq!(
            check_query("profile:all.default x").unwrap_err().code,
            "query.directive_not_allowed"
        );
        assert!(check_query("in:messages payment OR stripe lang:js").is_ok());
        assert!(check_query(&format!("profile:{TINY_PROFILE} payment")).is_ok());
    }

    #[test]
    fn finish_survives_a_stage_2_that_came_back_malformed() {
        // A host may hand back anything as searchCriteria.
        let s2 = Stage2 {
            query: "q".into(),
            search_text: "q".into(),
            total_matches: 0,
            candidates: vec![],
            condensed_prompt: None,
            condensed_listed: 7,
            results: results_object(json!(["not", "an", "object"]), vec![]),
        };
        let s3 = Stage3 {
            overviews: vec![],
            results: results_object(json!(null), vec![]),
        };
        let out = finish("why?", &s2, &s3, &empty_review());
        assert_eq!(out.results.search_criteria["aiAssistant"], true);
        assert_eq!(out.results.search_criteria["question"], "why?");
        let sel = stage2_pick(&s2, Some("[1, 2]"), &AssistOptions::default());
        assert!(sel.chosen.is_empty() && sel.fell_back);
    }

    #[test]
    fn planner_errors_are_caught_before_stage_2() {
        // Parses, but the planner refuses it.
        assert_eq!(
            check_query("-a OR b").unwrap_err().code,
            "query.unsupported_negation"
        );
    }
}
