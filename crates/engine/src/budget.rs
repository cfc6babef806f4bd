//! Token budgets for output handed to an LLM.
//!
//! The estimate is characters / 4, rounded up (no tokenizer). `fit`
//! brings a results object under a budget as measured by any renderer:
//! full contents and snippets are shortened first, then the lowest-ranked
//! results are dropped, and `truncated: true` is set. When even an empty
//! page does not fit, the budget is refused with `options.max_tokens_too_small`
//! rather than silently exceeded.

use crate::error::{Error, Result};
use crate::results::SearchResults;

/// Estimated tokens of a text (characters / 4, rounded up).
pub fn estimate_text(s: &str) -> u64 {
    (s.chars().count() as u64).div_ceil(4)
}

/// Estimated tokens of a results object serialized as JSON.
pub(crate) fn estimate_tokens(r: &SearchResults) -> u64 {
    estimate_text(&serde_json::to_string(r).unwrap_or_default())
}

/// Cuts `t` to at most `max_chars` characters plus `...`, never leaving a
/// half-written highlight tag or HTML entity behind. Returns whether it cut.
pub(crate) fn shorten_text(t: &mut String, max_chars: usize) -> bool {
    if t.chars().count() <= max_chars {
        return false;
    }
    let mut cut: String = t.chars().take(max_chars).collect();
    if let Some(i) = cut.rfind('<') {
        if !cut[i..].contains('>') {
            cut.truncate(i);
        }
    }
    if let Some(i) = cut.rfind('&') {
        if !cut[i..].contains(';') && cut.len() - i <= 8 {
            cut.truncate(i);
        }
    }
    cut.push_str("...");
    *t = cut;
    true
}

fn shorten(s: &mut Option<String>, max_chars: usize) -> bool {
    s.as_mut().is_some_and(|t| shorten_text(t, max_chars))
}

/// Content / snippet lengths tried in turn before results are dropped;
/// content 0 leaves full contents out altogether.
const SHORTEN_STEPS: [(usize, usize); 3] = [(600, 300), (120, 160), (0, 80)];

/// Brings the JSON estimate of `r` under `max_tokens` (the search option
/// `maxTokens`).
pub(crate) fn apply(r: &mut SearchResults, max_tokens: u64) -> Result<()> {
    fit(r, max_tokens, &estimate_tokens)
}

/// Shortens, then drops results until `measure(r) <= max_tokens`.
/// `truncated: true` is set as soon as anything changes, so its own bytes
/// are measured too.
pub(crate) fn fit(
    r: &mut SearchResults,
    max_tokens: u64,
    measure: &dyn Fn(&SearchResults) -> u64,
) -> Result<()> {
    if measure(r) <= max_tokens {
        return Ok(());
    }
    r.truncated = Some(true);
    for (content_max, snippet_max) in SHORTEN_STEPS {
        for m in &mut r.results.messages {
            shorten(&mut m.messages_content_snippet, snippet_max);
            if content_max == 0 {
                m.messages_content = None;
            } else {
                shorten(&mut m.messages_content, content_max);
            }
        }
        for b in &mut r.results.code_blocks {
            shorten(&mut b.code_blocks_content_snippet, snippet_max);
            if content_max == 0 {
                b.code_blocks_content = None;
            } else {
                shorten(&mut b.code_blocks_content, content_max);
            }
        }
        if measure(r) <= max_tokens {
            return Ok(());
        }
    }
    // Results leave from the longest list's tail (its lowest-ranked item)
    // first; the fewest drops that fit is found by bisection, because
    // measuring means rendering the whole object.
    let order = drop_order(r);
    let fits = |k: usize| {
        let mut c = r.clone();
        drop_results(&mut c, &order[..k]);
        measure(&c) <= max_tokens
    };
    if !fits(order.len()) {
        let mut empty = r.clone();
        drop_results(&mut empty, &order);
        return Err(Error::new(
            "options.max_tokens_too_small",
            format!(
                "maxTokens {max_tokens} is too small: even with every result left out the output needs about {} tokens",
                measure(&empty)
            ),
        ));
    }
    let (mut lo, mut hi) = (0, order.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        if fits(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    drop_results(r, &order[..lo]);
    Ok(())
}

/// Keeps at most `n` results in all: the lowest-ranked leave first, from
/// the longest list's tail, as `fit` drops them. Returns whether any
/// left (the caller's limit, not a budget: `truncated` stays as it was).
pub fn limit(r: &mut SearchResults, n: usize) -> bool {
    let over = r.len().saturating_sub(n);
    if over == 0 {
        return false;
    }
    let order = drop_order(r);
    drop_results(r, &order[..over]);
    true
}

#[derive(Clone, Copy)]
enum List {
    Chats,
    Messages,
    CodeBlocks,
}

/// The order in which results would be dropped, one list per drop.
fn drop_order(r: &SearchResults) -> Vec<List> {
    let (mut c, mut m, mut b) = (
        r.results.chats.len(),
        r.results.messages.len(),
        r.results.code_blocks.len(),
    );
    let mut out = Vec::with_capacity(c + m + b);
    while c + m + b > 0 {
        if m >= c && m >= b {
            m -= 1;
            out.push(List::Messages);
        } else if b >= c {
            b -= 1;
            out.push(List::CodeBlocks);
        } else {
            c -= 1;
            out.push(List::Chats);
        }
    }
    out
}

fn drop_results(r: &mut SearchResults, drops: &[List]) {
    for d in drops {
        match d {
            List::Chats => {
                r.results.chats.pop();
            }
            List::Messages => {
                r.results.messages.pop();
            }
            List::CodeBlocks => {
                r.results.code_blocks.pop();
            }
        }
    }
    let n = r.len() as u64;
    r.total_results_returned = n;
    r.pagination.results_per_page = n;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_round_characters_up_to_tokens() {
        assert_eq!(estimate_text(""), 0);
        assert_eq!(estimate_text("abcd"), 1);
        assert_eq!(estimate_text("abcde"), 2);
        // Characters, not bytes.
        assert_eq!(estimate_text("éééé"), 1);
    }

    #[test]
    fn shortening_never_splits_a_tag_or_an_entity() {
        let mut t = "abc <mark>x</mark>".to_string();
        assert!(shorten_text(&mut t, 7));
        assert_eq!(t, "abc ...");
        let mut t = "a &amp; b".to_string();
        assert!(shorten_text(&mut t, 4));
        assert_eq!(t, "a ...");
        let mut t = "short".to_string();
        assert!(!shorten_text(&mut t, 10));
        assert_eq!(t, "short");
    }
}
