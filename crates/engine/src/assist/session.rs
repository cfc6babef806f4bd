//! An assisted search as a resumable session: it hands out one prompt at a
//! time and is advanced with the model's answer, so a host whose LLM is
//! asynchronous (the browser) awaits between calls while every decision
//! (retries, the condensed pick, fallbacks, reports) stays here, written
//! once. [`super::assisted_search`] is this loop with a synchronous LLM:
//!
//! ```text
//! let mut s = AssistSession::start(&engine, question, &opts)?;
//! while let AssistStep::Ask { prompt, .. } = s.step() {
//!     let answer = llm(&prompt).await;
//!     s.advance(&engine, &answer)?;
//!     for r in s.take_reports() { on_stage(&r) }
//! }
//! let AssistStep::Done { outcome } = s.step() else { unreachable!() };
//! ```

use super::stages::*;
use super::{AnswerShape, AssistOptions, AssistOutcome, OverviewSource, StageReport};
use crate::budget::estimate_text;
use crate::error::{Error, Result};
use crate::search::Engine;
use serde::Serialize;

/// What the host does next.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum AssistStep {
    /// Send `prompt` to the LLM and pass its answer to
    /// [`AssistSession::advance`].
    Ask {
        stage: u8,
        name: &'static str,
        prompt: String,
    },
    /// The search is over.
    Done { outcome: Box<AssistOutcome> },
    /// The search failed with this error (also returned by `advance`).
    Failed { error: Error },
}

/// Where the session waits.
#[derive(Debug, Clone)]
enum State {
    Query {
        prompt: String,
    },
    Pick {
        s2: Box<Stage2>,
    },
    Review {
        s2: Box<Stage2>,
        s3: Box<Stage3>,
        p4: Stage4Prompt,
    },
    Done(Box<AssistOutcome>),
    Failed(Error),
}

/// An assisted search in progress.
#[derive(Debug, Clone)]
pub struct AssistSession {
    question: String,
    opts: AssistOptions,
    state: State,
    attempt: u32,
    /// Engine clock when the current prompt was handed out.
    asked_at: f64,
    reports: Vec<StageReport>,
    reported: usize,
}

impl AssistSession {
    /// Starts a search: the first step asks for the stage-1 query.
    pub fn start(engine: &Engine, question: &str, opts: &AssistOptions) -> Result<Self> {
        let prompt = stage1_prompt(question, opts)?;
        Ok(AssistSession {
            question: question.to_string(),
            opts: opts.clone(),
            state: State::Query { prompt },
            attempt: 1,
            asked_at: engine.now_ms(),
            reports: vec![],
            reported: 0,
        })
    }

    /// The current step: a prompt to answer, the outcome, or the failure.
    pub fn step(&self) -> AssistStep {
        let ask = |stage, name, prompt: &str| AssistStep::Ask {
            stage,
            name,
            prompt: prompt.to_string(),
        };
        match &self.state {
            State::Query { prompt } => ask(1, "query", prompt),
            State::Pick { s2 } => ask(
                2,
                "condensed-pick",
                s2.condensed_prompt.as_deref().unwrap_or_default(),
            ),
            State::Review { p4, .. } => ask(4, "review", &p4.prompt),
            State::Done(outcome) => AssistStep::Done {
                outcome: outcome.clone(),
            },
            State::Failed(error) => AssistStep::Failed {
                error: error.clone(),
            },
        }
    }

    /// Reports of stages finished since the last call.
    pub fn take_reports(&mut self) -> Vec<StageReport> {
        let new = self.reports[self.reported..].to_vec();
        self.reported = self.reports.len();
        new
    }

    /// Every report so far.
    pub fn reports(&self) -> &[StageReport] {
        &self.reports
    }

    /// Feeds the model's answer to the current prompt and runs the engine
    /// stages up to the next prompt (or the end). An error ends the
    /// session; `step()` then reports it too.
    pub fn advance(&mut self, engine: &Engine, answer: &str) -> Result<AssistStep> {
        match &self.state {
            State::Done(_) => {
                return Err(Error::new(
                    "options.assist_finished",
                    "the assisted search is over; start a new one",
                ))
            }
            State::Failed(e) => return Err(e.clone()),
            _ => {}
        }
        let state = std::mem::replace(
            &mut self.state,
            State::Failed(Error::new(
                "internal.assist",
                "the session is being advanced",
            )),
        );
        let next = match state {
            State::Query { prompt } => self.after_query(engine, &prompt, answer),
            State::Pick { s2 } => self.after_pick(engine, s2, answer),
            State::Review { s2, s3, p4 } => Ok(self.after_review(engine, &s2, &s3, &p4, answer)),
            finished @ (State::Done(_) | State::Failed(_)) => Ok(finished),
        };
        match next {
            Ok(state) => {
                self.state = state;
                self.asked_at = engine.now_ms();
                Ok(self.step())
            }
            Err(e) => {
                self.state = State::Failed(e.clone());
                Err(e)
            }
        }
    }

    /// A report for the stage whose prompt was just answered.
    fn answered(
        &self,
        engine: &Engine,
        stage: u8,
        name: &'static str,
        prompt: &str,
    ) -> StageReport {
        let mut r = StageReport::new(stage, name);
        r.prompt_tokens = Some(estimate_text(prompt));
        r.llm_ms = Some(engine.now_ms() - self.asked_at);
        r
    }

    fn finish_report(&mut self, engine: &Engine, mut r: StageReport, since: f64) {
        r.elapsed_ms = engine.now_ms() - since;
        self.reports.push(r);
    }

    fn after_query(&mut self, engine: &Engine, prompt: &str, answer: &str) -> Result<State> {
        let (q, opts) = (self.question.clone(), self.opts.clone());
        let mut r1 = self.answered(engine, 1, "query", prompt);
        r1.attempt = self.attempt;
        let retry_left = self.attempt <= opts.retries;
        let query = match stage1_accept(&q, answer, &opts)? {
            Stage1Verdict::Rejected {
                query,
                error,
                retry_prompt,
            } => {
                r1.query = Some(query);
                r1.error = Some(error.clone());
                r1.notes.push(if retry_left {
                    "query rejected; the error goes back to the model".into()
                } else {
                    "query rejected; no retries left".into()
                });
                self.finish_report(engine, r1, self.asked_at);
                if !retry_left {
                    return Err(error);
                }
                self.attempt += 1;
                return Ok(State::Query {
                    prompt: retry_prompt,
                });
            }
            Stage1Verdict::Accepted { query } => query,
        };
        r1.query = Some(query.clone());
        self.finish_report(engine, r1, self.asked_at);

        let t0 = engine.now_ms();
        let mut r2 = StageReport::new(2, "tiny-overviews");
        let s2 = stage2(engine, &q, &query, &opts)?;
        r2.query = Some(s2.search_text.clone());
        r2.counts.insert("matches".into(), s2.total_matches);
        r2.counts
            .insert("candidates".into(), s2.candidates.len() as u64);
        r2.notes.push(match &s2.condensed_prompt {
            Some(_) => format!(
                "{} matches exceed {}: the model picks from a condensed view of {}",
                s2.total_matches, opts.condense_threshold, s2.condensed_listed
            ),
            None => format!(
                "{} matches, at most {}: no condensed view",
                s2.total_matches, opts.condense_threshold
            ),
        });
        if s2.total_matches == 0 && retry_left {
            let error = Error::new(
                "assist.no_matches",
                "the query matched no tiny overview; use fewer or broader words joined with OR",
            );
            r2.error = Some(error.clone());
            r2.notes.push("no matches; stage 1 retries".into());
            self.finish_report(engine, r2, t0);
            self.attempt += 1;
            return Ok(State::Query {
                prompt: stage1_retry_prompt(&q, &query, &error, &opts)?,
            });
        }
        self.finish_report(engine, r2, t0);
        if s2.condensed_prompt.is_some() {
            return Ok(State::Pick { s2: Box::new(s2) });
        }
        let selection = stage2_pick(&s2, None, &opts);
        self.read_overviews(engine, Box::new(s2), selection)
    }

    fn after_pick(&mut self, engine: &Engine, s2: Box<Stage2>, answer: &str) -> Result<State> {
        let prompt = s2.condensed_prompt.clone().unwrap_or_default();
        let mut r = self.answered(engine, 2, "condensed-pick", &prompt);
        let sel = stage2_pick(&s2, Some(answer), &self.opts);
        r.counts.insert("listed".into(), s2.condensed_listed as u64);
        r.counts.insert("chosen".into(), sel.chosen.len() as u64);
        r.counts.insert("flagged".into(), sel.flagged.len() as u64);
        if sel.fell_back {
            r.notes.push(
                "the model picked no listed file; the best-ranked candidates are used".into(),
            );
        }
        self.finish_report(engine, r, self.asked_at);
        self.read_overviews(engine, s2, sel)
    }

    /// Stage 3, then the review prompt (or the end when nothing was found).
    fn read_overviews(
        &mut self,
        engine: &Engine,
        s2: Box<Stage2>,
        sel: Selection,
    ) -> Result<State> {
        let t0 = engine.now_ms();
        let mut r3 = StageReport::new(3, "overviews");
        let s3 = stage3(engine, &sel.chosen, &self.opts)?;
        for (source, key) in [
            (OverviewSource::ShortOverview, "short"),
            (OverviewSource::TinyOverview, "tinyFallback"),
            (OverviewSource::FileText, "fileTextFallback"),
            (OverviewSource::None, "missing"),
        ] {
            let n = s3.overviews.iter().filter(|o| o.source == source).count();
            r3.counts.insert(key.into(), n as u64);
            if let Some(note) = source
                .note(self.opts.fallback_chars as usize)
                .filter(|_| n > 0)
            {
                r3.notes.push(format!("{n} files: {note}"));
            }
        }
        self.finish_report(engine, r3, t0);
        if s3.overviews.is_empty() {
            return Ok(self.done(&s2, &s3, &empty_review()));
        }
        let p4 = stage4_prompt(&self.question, &s2.query, &s3.overviews, &self.opts)?;
        Ok(State::Review {
            s2,
            s3: Box::new(s3),
            p4,
        })
    }

    fn after_review(
        &mut self,
        engine: &Engine,
        s2: &Stage2,
        s3: &Stage3,
        p4: &Stage4Prompt,
        answer: &str,
    ) -> State {
        let mut r4 = self.answered(engine, 4, "review", &p4.prompt);
        let review = stage4_parse(answer, &s3.overviews[..p4.included]);
        r4.counts.insert("reviewed".into(), p4.included as u64);
        r4.counts
            .insert("identified".into(), review.files.len() as u64);
        r4.counts
            .insert("flagged".into(), review.flagged.len() as u64);
        r4.notes.push(format!(
            "answer read as {}",
            match review.shape {
                AnswerShape::Json => "JSON",
                AnswerShape::Text => "text",
            }
        ));
        self.finish_report(engine, r4, self.asked_at);
        self.done(s2, s3, &review)
    }

    fn done(&self, s2: &Stage2, s3: &Stage3, review: &super::FileRefs) -> State {
        let mut outcome = finish(&self.question, s2, s3, review);
        outcome.stages = self.reports.clone();
        State::Done(Box::new(outcome))
    }
}
