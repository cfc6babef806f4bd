//! Token budgets for results objects handed to an LLM (seed 003).
//!
//! The estimate is the serialized JSON length / 4 (no tokenizer). Over
//! budget, full contents and snippets are shortened first, then the
//! lowest-ranked results are dropped, and `truncated: true` is set.

use crate::results::SearchResults;

/// Estimated tokens of a results object (chars / 4, rounded up).
pub fn estimate_tokens(r: &SearchResults) -> u64 {
    let chars = serde_json::to_string(r)
        .map(|s| s.chars().count())
        .unwrap_or(0) as u64;
    chars.div_ceil(4)
}

fn shorten(s: &mut Option<String>, max_chars: usize) -> bool {
    if let Some(t) = s {
        if t.chars().count() > max_chars {
            let mut cut: String = t.chars().take(max_chars).collect();
            // Never leave a half-open highlight tag behind.
            if let Some(i) = cut.rfind('<') {
                if !cut[i..].contains('>') {
                    cut.truncate(i);
                }
            }
            cut.push_str("...");
            *t = cut;
            return true;
        }
    }
    false
}

/// Shortens, then drops results until the estimate fits `max_tokens`.
pub fn apply(r: &mut SearchResults, max_tokens: u64) {
    if estimate_tokens(r) <= max_tokens {
        return;
    }
    let mut changed = false;
    for (content_max, snippet_max) in [(600usize, 300usize), (120, 160), (0, 80)] {
        for m in &mut r.results.messages {
            changed |= shorten(&mut m.messages_content, content_max);
            changed |= shorten(&mut m.messages_content_snippet, snippet_max);
            if content_max == 0 && m.messages_content.take().is_some() {
                changed = true;
            }
        }
        for b in &mut r.results.code_blocks {
            changed |= shorten(&mut b.code_blocks_content, content_max);
            changed |= shorten(&mut b.code_blocks_content_snippet, snippet_max);
            if content_max == 0 && b.code_blocks_content.take().is_some() {
                changed = true;
            }
        }
        if estimate_tokens(r) <= max_tokens {
            break;
        }
    }
    // Drop from the longest list's tail (its lowest-ranked item) first.
    while estimate_tokens(r) > max_tokens && !r.is_empty() {
        let (c, m, b) = (
            r.results.chats.len(),
            r.results.messages.len(),
            r.results.code_blocks.len(),
        );
        if m >= c && m >= b {
            r.results.messages.pop();
        } else if b >= c {
            r.results.code_blocks.pop();
        } else {
            r.results.chats.pop();
        }
        changed = true;
    }
    let n = r.len() as u64;
    r.total_results_returned = n;
    r.pagination.results_per_page = n;
    if changed {
        r.truncated = Some(true);
    }
}
