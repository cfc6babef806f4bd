//! The AI-assisted search and the LLM-ready formats for `js/worker.js`.
//!
//! The page owns the LLM (`engine.assistedSearch(question, {llm})`); the
//! worker owns the [`AssistSession`]s, one per running search, keyed by an
//! id so several searches (and plain searches) can interleave:
//!
//! ```text
//! page                              worker
//! assistStart(question, options) ─▶ AssistSession::start → {session, step: ask, reports}
//! await llm(step.prompt)
//! assistAdvance(session, answer) ─▶ advance (engine stages) → {session, step, reports}
//! ...                                 (done / failed: the session is dropped)
//! assistCancel(session)          ─▶ drops it (the llm failed, the page aborted)
//! ```
//!
//! Replies are JSON text (serde_json, the field order of the native
//! outcome), parsed on the page. Every engine call goes through the
//! session's engine, whose clock is `performance.now`. A search whose
//! index is swapped by an update between two steps fails with
//! `assist.index_changed` rather than mixing two indexes.

use super::host::error_to_js;
use super::session::current;
use gitsense_engine::assist::{self, AssistOptions, AssistSession, AssistStep, StageReport};
use gitsense_engine::error::{Error, Result};
use gitsense_engine::search::Engine;
use serde::Serialize;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use wasm_bindgen::prelude::*;

/// A running assisted search.
struct Running {
    session: AssistSession,
    /// Corpus revision of the index it started on.
    revision: String,
}

thread_local! {
    static RUNNING: RefCell<BTreeMap<u32, Running>> = const { RefCell::new(BTreeMap::new()) };
    static NEXT_ID: Cell<u32> = const { Cell::new(1) };
}

/// What `assistStart` and `assistAdvance` answer.
#[derive(Serialize)]
struct Reply<'a> {
    session: u32,
    step: &'a AssistStep,
    /// Stage reports finished since the last reply, in order.
    reports: &'a [StageReport],
}

fn js(e: Error) -> JsValue {
    error_to_js(&e)
}

fn reply(id: u32, step: &AssistStep, reports: &[StageReport]) -> Result<String> {
    serde_json::to_string(&Reply {
        session: id,
        step,
        reports,
    })
    .map_err(|e| Error::new("internal.error", format!("cannot serialize a step: {e}")))
}

/// Runs `f` on the open index's engine (`engine.closed` when none).
fn with_engine<T>(f: impl FnOnce(&Engine) -> Result<T>) -> Result<T> {
    let s = current().ok_or_else(closed)?;
    s.with_engine(f)?
}

fn closed() -> Error {
    Error::new("engine.closed", "no index is open in this worker")
}

/// Starts an assisted search: `options_json` holds [`AssistOptions`]
/// (camelCase, unknown keys refused). Returns `{session, step, reports}`
/// as JSON; the first step asks for the stage-1 query.
#[wasm_bindgen(js_name = assistStart)]
pub fn assist_start(question: &str, options_json: &str) -> std::result::Result<String, JsValue> {
    start(question, options_json).map_err(js)
}

fn start(question: &str, options_json: &str) -> Result<String> {
    // Unknown keys are refused; serde's message lists the known ones.
    let opts: AssistOptions =
        gitsense_engine::util::from_json_arg(options_json, "assisted-search options")?;
    let (session, revision) = with_engine(|engine| {
        let s = AssistSession::start(engine, question, &opts)?;
        Ok((s, engine.info().revision.clone()))
    })?;
    let id = NEXT_ID.with(|n| {
        let id = n.get();
        n.set(id.wrapping_add(1).max(1));
        id
    });
    let out = reply(id, &session.step(), &[])?;
    RUNNING.with(|r| r.borrow_mut().insert(id, Running { session, revision }));
    Ok(out)
}

/// Feeds the model's answer to the session's current prompt and runs the
/// engine stages up to the next prompt or the end. Returns `{session,
/// step, reports}` as JSON; a search that ends (`done` or `failed`) is
/// dropped. Fails (and drops the search) with `assist.unknown_session`,
/// `engine.closed` or `assist.index_changed`.
#[wasm_bindgen(js_name = assistAdvance)]
pub fn assist_advance(session_id: u32, answer: &str) -> std::result::Result<String, JsValue> {
    advance(session_id, answer).map_err(js)
}

fn advance(id: u32, answer: &str) -> Result<String> {
    // Taken out of the table while it runs; put back only if it goes on.
    let Some(mut running) = RUNNING.with(|r| r.borrow_mut().remove(&id)) else {
        return Err(Error::new(
            "assist.unknown_session",
            format!(
                "no assisted search {id} is running in this worker (it finished, was cancelled, \
                 or the engine was closed)"
            ),
        ));
    };
    let step = with_engine(|engine| {
        let revision = &engine.info().revision;
        if *revision != running.revision {
            return Err(Error::new(
                "assist.index_changed",
                format!(
                    "the index was updated (revision {} → {revision}) during the assisted search; \
                     start it again",
                    running.revision
                ),
            ));
        }
        // A failure is also the session's step (`failed`), with the
        // reports of what ran before it: both go back to the page.
        let _ = running.session.advance(engine, answer);
        Ok(running.session.step())
    })?;
    let reports = running.session.take_reports();
    let out = reply(id, &step, &reports)?;
    if matches!(step, AssistStep::Ask { .. }) {
        RUNNING.with(|r| r.borrow_mut().insert(id, running));
    }
    Ok(out)
}

/// Drops a running search (the page's LLM failed or it gave up); returns
/// whether it was running.
#[wasm_bindgen(js_name = assistCancel)]
pub fn assist_cancel(session_id: u32) -> bool {
    RUNNING.with(|r| r.borrow_mut().remove(&session_id).is_some())
}

/// How many assisted searches are running (for tests and diagnostics).
#[wasm_bindgen(js_name = assistRunning)]
pub fn assist_running() -> u32 {
    RUNNING.with(|r| r.borrow().len() as u32)
}

/// Drops every running search (the engine is closing).
pub fn cancel_all() {
    RUNNING.with(|r| r.borrow_mut().clear());
}

/// The query-syntax guide the stage-1 prompt shows the model (text).
#[wasm_bindgen(js_name = assistGuide)]
pub fn assist_guide() -> String {
    assist::prompts::guide()
}

/// Renders a results object (JSON text) as `json`, `terse`, `verbose` or
/// `markdown` within `options.maxTokens` (see
/// [`gitsense_engine::format::format_results_json`]). Needs no open index.
#[wasm_bindgen(js_name = formatResults)]
pub fn format_results(
    results_json: &str,
    format: &str,
    options_json: &str,
) -> std::result::Result<String, JsValue> {
    gitsense_engine::format::format_results_json(results_json, format, options_json).map_err(js)
}

/// Renders an assisted-search outcome (JSON text) likewise (see
/// [`gitsense_engine::assist::format_outcome_json`]). Needs no open index.
#[wasm_bindgen(js_name = formatOutcome)]
pub fn format_outcome(
    outcome_json: &str,
    format: &str,
    options_json: &str,
) -> std::result::Result<String, JsValue> {
    assist::format_outcome_json(outcome_json, format, options_json).map_err(js)
}
