//! The prompts sent to the host's LLM, each within the token budget.
//!
//! Every prompt starts with a title line naming its stage (scripted models
//! and logs can tell them apart by it). Prompts that list files are fitted
//! to `maxTokens` by `fit`: long texts are cut in steps, then the
//! lowest-ranked files left out, and the prompt says how many were.

use super::{AssistOptions, Candidate, Overview};
use crate::budget::estimate_text;
use crate::error::{Error, Result};
use crate::guide::compact_guide;

pub const STAGE1_TITLE: &str = "# GitSense assisted search, stage 1: write a search query";
pub const CONDENSE_TITLE: &str = "# GitSense assisted search, stage 2: pick the promising files";
pub const REVIEW_TITLE: &str = "# GitSense assisted search, stage 4: review the file overviews";

/// Filters the stage-1 model may use: the ones that describe files. The
/// rest (ids, message and chat types) mean nothing to it or would fight
/// the stage-2 profile.
pub const GUIDE_FILTERS: &[&str] = &["git-path", "lang", "repo", "name"];

/// The query-syntax guide shown to the model (stages 1 and 4).
pub fn guide() -> String {
    compact_guide(GUIDE_FILTERS, &[])
}

fn too_small(max: u64, needed: u64) -> Error {
    Error::new(
        "options.max_tokens_too_small",
        format!("maxTokens {max} is too small for the assisted-search prompts: they need at least {needed} tokens"),
    )
}

/// Renders `render(kept, cut)` within `max_tokens`: all `n` items at full
/// length if they fit, else with item texts cut to fewer characters, else
/// with the fewest items left out. Returns the text and how many items it
/// holds.
pub(crate) fn fit(
    max_tokens: Option<u64>,
    n: usize,
    render: &dyn Fn(usize, Option<usize>) -> String,
) -> Result<(String, usize)> {
    let Some(max) = max_tokens else {
        return Ok((render(n, None), n));
    };
    const CUTS: [Option<usize>; 5] = [None, Some(1200), Some(600), Some(300), Some(120)];
    for cut in CUTS {
        let s = render(n, cut);
        if estimate_text(&s) <= max {
            return Ok((s, n));
        }
    }
    let cut = CUTS[CUTS.len() - 1];
    let frame = render(0, cut);
    if n == 0 || estimate_text(&frame) > max {
        return Err(too_small(max, estimate_text(&frame)));
    }
    // Largest k in [0, n) that fits (k = 0 does).
    let (mut lo, mut hi) = (0, n - 1);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if estimate_text(&render(mid, cut)) <= max {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Ok((render(lo, cut), lo))
}

/// `s` cut to `max` characters (`...` marks the cut).
pub(crate) fn cut_to(s: &str, max: Option<usize>) -> String {
    let mut t = s.trim().to_string();
    if let Some(m) = max {
        crate::budget::shorten_text(&mut t, m);
    }
    t
}

pub(crate) fn stage1(question: &str, opts: &AssistOptions) -> Result<String> {
    let p = format!(
        "{STAGE1_TITLE}\n\n\
         A user is looking for files in git repositories. Every file has a tiny overview: a \
         one-sentence purpose and keywords. Write one search query that finds the tiny \
         overviews of the files most likely to answer the user's question.\n\n\
         The search already covers only tiny overviews of files in git chats: do not add \
         in:, scope:, profile: or msg-type:. Plain words must all match, so join alternative \
         words with OR (for example `payment OR stripe OR checkout`) and quote multi-word \
         phrases. Add lang:, git-path: or repo: only when the question names a language, a \
         directory or a repository.\n\n\
         {}\n\
         Question: {}\n\n\
         Reply with the query alone on one line.\n",
        guide(),
        question.trim()
    );
    within(p, opts)
}

/// The stage-1 prompt again, with the rejected query and the engine's
/// error (code, message and the position it points at).
pub(crate) fn stage1_retry(
    question: &str,
    rejected: &str,
    error: &Error,
    opts: &AssistOptions,
) -> Result<String> {
    let mut p = stage1(
        question,
        &AssistOptions {
            max_tokens: None,
            ..opts.clone()
        },
    )?;
    p.push_str("\nYour previous query was:\n\n    ");
    p.push_str(rejected);
    p.push_str("\n\n");
    p.push_str(&format!(
        "The search engine rejected it with error `{}`: {}",
        error.code, error.message
    ));
    if let Some(pos) = error.position {
        let pad: String = rejected.chars().take(pos).map(|_| ' ').collect();
        p.push_str(&format!(
            " (at character {pos}, marked below)\n\n    {rejected}\n    {pad}^\n"
        ));
    } else {
        p.push('\n');
    }
    p.push_str("\nReply with a corrected query alone on one line.\n");
    within(p, opts)
}

fn within(p: String, opts: &AssistOptions) -> Result<String> {
    match opts.max_tokens {
        Some(max) if estimate_text(&p) > max => Err(too_small(max, estimate_text(&p))),
        _ => Ok(p),
    }
}

/// The condensed view: one line per candidate (chat id, path, language,
/// keywords, purpose), best first, for the model to pick from.
pub(crate) fn condensed(
    question: &str,
    query: &str,
    total_matches: u64,
    candidates: &[Candidate],
    opts: &AssistOptions,
) -> Result<(String, usize)> {
    let render = |k: usize, cut: Option<usize>| {
        let mut s = format!(
            "{CONDENSE_TITLE}\n\n\
             Question: {}\n\
             Search query: {query}\n\n\
             The search matched {total_matches} files, more than can be reviewed in detail. \
             The best {k} follow, best first, one per line:\n\n\
             chat_id | path | language | keywords | purpose\n",
            question.trim()
        );
        for c in &candidates[..k] {
            let line_cut = cut.map(|c| c / 2);
            s.push_str(&format!(
                "{} | {} | {} | {} | {}\n",
                c.chat_id,
                c.path,
                c.language.as_deref().unwrap_or("-"),
                cut_to(&c.keywords.join(", "), line_cut),
                cut_to(c.purpose.as_deref().unwrap_or("-"), line_cut)
            ));
        }
        if k < candidates.len() {
            s.push_str(&format!(
                "({} more were left out to fit the token budget.)\n",
                candidates.len() - k
            ));
        }
        s.push_str(&format!(
            "\nPick up to {} files whose overviews are most likely to answer the question, best \
             first. Reply with JSON only: [{{\"path\": \"<path as listed>\", \"chat_id\": <chat_id>}}, ...]\n",
            opts.max_review_files.min(k as u64).max(1)
        ));
        s
    };
    fit(opts.max_tokens, candidates.len(), &render)
}

/// The review prompt: question, query, syntax guide and the overviews.
pub(crate) fn review(
    question: &str,
    query: &str,
    overviews: &[Overview],
    opts: &AssistOptions,
) -> Result<(String, usize)> {
    let guide = guide();
    let render = |k: usize, cut: Option<usize>| {
        let mut s = format!(
            "{REVIEW_TITLE}\n\n\
             Question: {}\n\
             Search query that found the files: {query}\n\n\
             {guide}\n\
             Overviews of {k} candidate files follow, best first.\n",
            question.trim()
        );
        for (i, o) in overviews[..k].iter().enumerate() {
            s.push_str(&format!(
                "\n## {}. {} (chat_id {}{})\n{}\n\n{}\n",
                i + 1,
                o.path,
                o.chat_id,
                o.language
                    .as_deref()
                    .map(|l| format!(", {l}"))
                    .unwrap_or_default(),
                o.source.describe(),
                cut_to(&o.text, cut)
            ));
        }
        if k < overviews.len() {
            s.push_str(&format!(
                "\n({} more files were left out to fit the token budget.)\n",
                overviews.len() - k
            ));
        }
        s.push_str(
            "\nUse only these overviews. If they answer the question directly, give the answer. \
             In any case list the files most likely to contain the answer or the best context, \
             best first, with their path and chat_id exactly as shown. Reply with JSON only:\n\
             {\"answer\": \"<direct answer, or null>\", \"identifiedFiles\": [{\"path\": \"<path>\", \"chat_id\": <chat_id>}]}\n",
        );
        s
    };
    fit(opts.max_tokens, overviews.len(), &render)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_keeps_everything_without_a_budget_and_the_most_within_one() {
        let render = |k: usize, cut: Option<usize>| {
            let item = "x".repeat(cut.unwrap_or(400));
            format!("head\n{}", format!("{item}\n").repeat(k))
        };
        assert_eq!(fit(None, 10, &render).unwrap().1, 10);
        let (s, k) = fit(Some(200), 10, &render).unwrap();
        assert!(estimate_text(&s) <= 200);
        assert!(k < 10 && k > 0);
        // One more item would not have fitted.
        assert!(estimate_text(&render(k + 1, Some(120))) > 200);
        let e = fit(Some(1), 10, &render).unwrap_err();
        assert_eq!(e.code, "options.max_tokens_too_small");
    }

    #[test]
    fn the_guide_shows_the_file_filters_only() {
        let g = guide();
        for f in GUIDE_FILTERS {
            assert!(g.contains(&format!("  {f}: ")), "{f}");
        }
        assert!(!g.contains("msg-type:") && !g.contains("scope:"));
    }
}
