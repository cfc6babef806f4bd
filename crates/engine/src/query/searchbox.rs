//! Search-box reading of query text: what a reader types into a box on a
//! page, one keystroke at a time. In: any text. Out: a [`Query`], never an
//! error.
//!
//! The text is first read with the full grammar ([`super::parse`]); when
//! that fails (an unclosed quote or parenthesis, `'static`, `fn main()`,
//! an operator at an end) it is read [`literally`]: filters typed whole
//! still apply, balanced quotes still make phrases, and every other
//! whitespace-separated word is a keyword, parentheses, quotes and
//! operators included (the planner quotes each as an FTS5 string, where
//! the tokenizer drops the punctuation). In both readings the word being
//! typed (the last one, when the text does not end in a space) is also
//! matched as a prefix ([`mark_typing`]), so `owne` finds `ownership`.

use super::ast::*;
use super::parser::{
    apply_directive, canonical_directive, parse, read_directive, MAX_LITERALS, MAX_QUERY_CHARS,
};
use crate::error::Result;

/// The text read with the full grammar, the word being typed marked as a
/// prefix. An error where the grammar refuses the text (then use
/// [`literally`]).
pub(crate) fn with_grammar(text: &str, profile_exists: &dyn Fn(&str) -> bool) -> Result<Query> {
    let mut q = parse(text, profile_exists)?;
    mark_typing(&mut q, text);
    Ok(q)
}

/// The text read literally (see the module docs): never fails. Text past
/// [`MAX_QUERY_CHARS`] and words past [`MAX_LITERALS`] are left out with a
/// warning; `scope:` is taken as a word (it needs the caller's current
/// chat, which a reader cannot type).
pub(crate) fn literally(text: &str, profile_exists: &dyn Fn(&str) -> bool) -> Query {
    let mut q = Query::default();
    let mut chars: Vec<char> = text.chars().collect();
    if chars.len() > MAX_QUERY_CHARS {
        chars.truncate(MAX_QUERY_CHARS);
        q.warnings.push(format!(
            "only the first {MAX_QUERY_CHARS} characters were searched"
        ));
    }
    let is_space = |c: char| c.is_whitespace() || c.is_control();
    let n = chars.len();
    let mut items = Vec::new();
    let mut i = 0;
    while i < n {
        if is_space(chars[i]) {
            i += 1;
            continue;
        }
        if let Some(next) = whole_directive(&mut q, &chars, i, profile_exists) {
            i = next;
            continue;
        }
        if matches!(chars[i], '"' | '\'') {
            if let Some(close) = (i + 1..n).find(|&j| chars[j] == chars[i]) {
                let inner: String = chars[i + 1..close].iter().collect();
                if !inner.trim().is_empty() {
                    items.push(Expr::Phrase { text: inner });
                }
                i = close + 1;
                continue;
            }
        }
        let mut j = i;
        while j < n && !is_space(chars[j]) {
            j += 1;
        }
        let word: String = chars[i..j].iter().collect();
        i = j;
        let trimmed = word.trim_end_matches('*');
        items.push(if trimmed.is_empty() {
            Expr::Term {
                text: word,
                prefix: false,
            }
        } else {
            Expr::Term {
                prefix: trimmed.len() != word.len(),
                text: trimmed.to_string(),
            }
        });
    }
    // Read literally, the words are words, not patterns.
    q.regex = false;
    if items.len() > MAX_LITERALS {
        items.truncate(MAX_LITERALS);
        q.warnings
            .push(format!("only the first {MAX_LITERALS} words were searched"));
    }
    q.expr = match items.len() {
        0 => None,
        1 => items.pop(),
        _ => Some(Expr::And { items }),
    };
    mark_typing(&mut q, text);
    q
}

/// Applies the filter or directive (optionally `-`negated) starting at
/// `chars[i]` when it is one typed whole and valid; returns where it ends.
fn whole_directive(
    q: &mut Query,
    chars: &[char],
    i: usize,
    profile_exists: &dyn Fn(&str) -> bool,
) -> Option<usize> {
    let negated = chars[i] == '-';
    let at = if negated { i + 1 } else { i };
    if at >= chars.len() {
        return None;
    }
    let (name, value, next) = read_directive(chars, at).ok()??;
    if canonical_directive(&name) == "scope" {
        return None;
    }
    let mut trial = q.clone();
    apply_directive(&mut trial, &name, value, negated, i, profile_exists).ok()?;
    *q = trial;
    Some(next)
}

/// Marks the word being typed as a prefix: the last word of `text` when
/// the text does not end in a space, the word ends in a letter or digit,
/// has at least [`PREFIX_MIN_CHARS`] of them, is not an operator, and is
/// the expression's last literal outside a negation.
pub(crate) fn mark_typing(q: &mut Query, text: &str) {
    if text.ends_with(|c: char| c.is_whitespace() || c.is_control()) {
        return;
    }
    let Some(chunk) = text.split_whitespace().last() else {
        return;
    };
    if !chunk.ends_with(char::is_alphanumeric) {
        return;
    }
    let Some(last) = q.expr.as_mut().and_then(last_literal) else {
        return;
    };
    if let Expr::Term { text, prefix } = last {
        let typed = text.chars().filter(|c| c.is_alphanumeric()).count();
        if chunk.ends_with(text.as_str())
            && typed >= PREFIX_MIN_CHARS
            && !matches!(text.as_str(), "OR" | "AND" | "NOT")
        {
            *prefix = true;
        }
    }
}

/// The rightmost literal of `e`, unless it sits under a negation.
fn last_literal(e: &mut Expr) -> Option<&mut Expr> {
    match e {
        Expr::And { items } | Expr::Or { items } => items.last_mut().and_then(last_literal),
        Expr::Not { .. } => None,
        literal => Some(literal),
    }
}

impl Query {
    /// True when the query has no word to find and no filter: a search box
    /// shows nothing for it rather than listing everything.
    pub fn is_blank(&self) -> bool {
        self.filters.is_empty()
            && self.targets.is_none()
            && self
                .expr
                .as_ref()
                .is_none_or(|e| e.positive_literals().is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(s: &str) -> Query {
        literally(s, &|n| n == "all.default")
    }

    fn term(text: &str, prefix: bool) -> Expr {
        Expr::Term {
            text: text.into(),
            prefix,
        }
    }

    #[test]
    fn the_word_being_typed_is_a_prefix() {
        assert_eq!(lit("owne").expr, Some(term("owne", true)));
        assert_eq!(lit("owne ").expr, Some(term("owne", false)));
        // Too short to be worth a prefix scan.
        assert_eq!(lit("ow").expr, Some(term("ow", false)));
    }

    #[test]
    fn unbalanced_quotes_and_code_are_words() {
        assert_eq!(lit("\"borrow").expr, Some(term("\"borrow", true)));
        assert_eq!(
            lit("fn main()").expr,
            Some(Expr::And {
                items: vec![term("fn", false), term("main()", false)]
            })
        );
        assert_eq!(lit("'static").expr, Some(term("'static", true)));
    }

    #[test]
    fn balanced_quotes_make_phrases() {
        assert_eq!(
            lit("\"smart pointer\" box").expr,
            Some(Expr::And {
                items: vec![
                    Expr::Phrase {
                        text: "smart pointer".into()
                    },
                    term("box", true)
                ]
            })
        );
    }

    #[test]
    fn filters_typed_whole_apply_and_broken_ones_are_words() {
        let q = lit("lang:rust borrow");
        assert_eq!(q.filters.len(), 1);
        assert_eq!(q.expr, Some(term("borrow", true)));
        let q = lit("bogus:1 chat-id:abc scope:current-chat");
        assert!(q.filters.is_empty() && q.scope.is_none());
        assert_eq!(
            q.expr.unwrap().positive_literals().len(),
            3,
            "each broken filter is a word"
        );
    }

    #[test]
    fn operators_and_punctuation_alone_search_nothing() {
        for s in ["", "   ", "-", "()", "-foo", "\""] {
            let q = with_grammar(s, &|_| false).unwrap_or_else(|_| lit(s));
            assert!(
                q.is_blank()
                    || q.expr
                        .as_ref()
                        .unwrap()
                        .positive_literals()
                        .iter()
                        .all(|l| !l.literal_text().unwrap().chars().any(char::is_alphanumeric)),
                "{s:?} -> {q:?}"
            );
        }
        assert!(lit("-foo").expr.is_some() && !lit("-foo").is_blank());
    }

    #[test]
    fn overlong_text_is_cut_not_refused() {
        let q = lit(&"word ".repeat(3000));
        assert_eq!(q.expr.unwrap().positive_literals().len(), MAX_LITERALS);
        assert_eq!(q.warnings.len(), 2);
    }

    #[test]
    fn literally_keeps_filters_and_takes_the_rest_as_words() {
        use crate::query::{searchbox, Expr};
        let q = searchbox::literally("lang:rust 'static", &|_| false);
        assert_eq!(q.filters.len(), 1);
        assert_eq!(
            q.expr,
            Some(Expr::Term {
                text: "'static".into(),
                prefix: true
            })
        );
    }

    #[test]
    fn with_grammar_marks_the_typed_word_as_a_prefix() {
        use crate::query::{searchbox, Expr};
        let q = searchbox::with_grammar("owne", &|_| false).unwrap();
        assert_eq!(
            q.expr,
            Some(Expr::Term {
                text: "owne".into(),
                prefix: true
            })
        );
        assert!(searchbox::with_grammar("fn main()", &|_| false).is_err());
    }
}
