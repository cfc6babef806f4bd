//! Query text → [`Query`]. A lexer splits the text into tokens with their
//! character positions; filters and directives are taken out at the top
//! level; a recursive-descent parser builds the boolean `Expr` from the
//! rest. Every failure is an [`Error`] with a code and a position.

use super::ast::*;
use super::syntax::{
    canonical_words, filter_spec, lookup, DIRECTIVES, FILTERS, OPTION_WORDS, SCOPE_WORDS,
    SORT_WORDS, TARGET_WORDS,
};
use crate::error::{Error, Result};

/// Longest query accepted, in characters.
pub(crate) const MAX_QUERY_CHARS: usize = 8192;
/// Most terms and phrases in one query.
pub(crate) const MAX_LITERALS: usize = 128;
/// Deepest nesting of parentheses and negations.
pub(crate) const MAX_DEPTH: usize = 32;
/// Most values in one filter's comma list.
pub const MAX_FILTER_VALUES: usize = 64;
/// Most filters and directives in one query.
pub(crate) const MAX_FILTERS: usize = 64;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    LParen,
    RParen,
    Or,
    And,
    Not,
    Term { text: String, prefix: bool },
    Phrase { text: String },
}

/// Parses query text. `profile_exists` decides whether `profile:NAME` is
/// known (the caller owns the profile table).
///
/// ```
/// use gitsense_engine::query::parser::parse;
/// use gitsense_engine::profiles;
///
/// parse("payment -refund lang:javascript in:messages", &profiles::exists)?;
/// // Errors carry a stable code and the character position they point at.
/// let e = parse("(payment OR", &profiles::exists).unwrap_err();
/// assert!(e.code.starts_with("query.") && e.position.is_some());
/// # Ok::<(), gitsense_engine::Error>(())
/// ```
pub fn parse(text: &str, profile_exists: &dyn Fn(&str) -> bool) -> Result<Query> {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() > MAX_QUERY_CHARS {
        return Err(Error::at(
            "query.too_long",
            format!(
                "the query has {} characters; at most {MAX_QUERY_CHARS} are accepted",
                chars.len()
            ),
            MAX_QUERY_CHARS,
        ));
    }
    if chars.iter().all(|c| c.is_whitespace() || c.is_control()) {
        return Err(Error::at("query.empty", "the query is empty", 0));
    }
    let mut q = Query::default();
    let mut toks: Vec<(Tok, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0usize;
    let n = chars.len();
    let is_space = |c: char| c.is_whitespace() || c.is_control();
    while i < n {
        let c = chars[i];
        if is_space(c) {
            i += 1;
            continue;
        }
        let start = i;
        match c {
            '(' => {
                depth += 1;
                toks.push((Tok::LParen, start));
                i += 1;
            }
            ')' => {
                depth = depth.saturating_sub(1);
                toks.push((Tok::RParen, start));
                i += 1;
            }
            '"' | '\'' => {
                let (inner, next) = read_quoted(&chars, i)?;
                i = next;
                if inner.trim().is_empty() {
                    q.warnings
                        .push(format!("empty phrase at character {start} ignored"));
                } else {
                    toks.push((Tok::Phrase { text: inner }, start));
                }
            }
            '-' if i + 1 < n && !is_space(chars[i + 1]) && chars[i + 1] != ')' => {
                // A leading minus negates what follows: a term, phrase,
                // group or filter.
                let after = i + 1;
                if let Some((name, value, next)) = read_directive(&chars, after)? {
                    if depth > 0 {
                        return Err(filter_in_group(start));
                    }
                    apply_directive(&mut q, &name, value, true, start, profile_exists)?;
                    i = next;
                } else {
                    toks.push((Tok::Not, start));
                    i = after;
                }
            }
            _ => {
                if let Some((name, value, next)) = read_directive(&chars, i)? {
                    if depth > 0 {
                        return Err(filter_in_group(start));
                    }
                    apply_directive(&mut q, &name, value, false, start, profile_exists)?;
                    i = next;
                    continue;
                }
                let mut j = i;
                while j < n && !is_space(chars[j]) && chars[j] != '(' && chars[j] != ')' {
                    j += 1;
                }
                let word: String = chars[i..j].iter().collect();
                i = j;
                match word.as_str() {
                    "OR" | "||" => toks.push((Tok::Or, start)),
                    "AND" | "&&" => toks.push((Tok::And, start)),
                    "NOT" => toks.push((Tok::Not, start)),
                    _ => {
                        let trimmed = word.trim_end_matches('*');
                        if trimmed.is_empty() {
                            q.warnings
                                .push(format!("lone '{word}' at character {start} ignored"));
                        } else {
                            toks.push((
                                Tok::Term {
                                    text: trimmed.to_string(),
                                    prefix: trimmed.len() != word.len(),
                                },
                                start,
                            ));
                        }
                    }
                }
            }
        }
    }
    let literals = toks
        .iter()
        .filter(|(t, _)| matches!(t, Tok::Term { .. } | Tok::Phrase { .. }))
        .count();
    if literals > MAX_LITERALS {
        return Err(Error::at(
            "query.too_complex",
            format!("the query has {literals} terms; at most {MAX_LITERALS} are accepted"),
            0,
        ));
    }
    q.git_nav.check()?;
    if q.regex {
        for (t, at) in &toks {
            match t {
                Tok::Term { text, prefix } => crate::pattern::check(
                    &format!("{text}{}", if *prefix { "*" } else { "" }),
                    *at,
                )?,
                Tok::Phrase { text } => crate::pattern::check(text, *at)?,
                _ => {}
            }
        }
    }
    if !toks.is_empty() {
        let mut p = Parser {
            toks: &toks,
            pos: 0,
            end: n,
        };
        let e = p.parse_or(0)?;
        if let Some((_, at)) = p.toks.get(p.pos) {
            return Err(Error::at(
                "query.unbalanced_paren",
                "this ')' has no matching '('",
                *at,
            ));
        }
        q.expr = Some(e);
    }
    Ok(q)
}

fn filter_in_group(at: usize) -> Error {
    Error::at(
        "query.filter_in_group",
        "filters apply to the whole query; put them outside parentheses",
        at,
    )
}

/// Reads a quoted string starting at `chars[i]` (the quote). Returns the
/// inner text and the index after the closing quote.
fn read_quoted(chars: &[char], i: usize) -> Result<(String, usize)> {
    let quote = chars[i];
    let mut j = i + 1;
    while j < chars.len() && chars[j] != quote {
        j += 1;
    }
    if j >= chars.len() {
        return Err(Error::at(
            "query.unbalanced_quote",
            format!("the {quote} quote opened here is never closed"),
            i,
        ));
    }
    Ok((chars[i + 1..j].iter().collect(), j + 1))
}

/// A directive's raw value: quoted (one value) or bare (comma list).
#[derive(Debug)]
pub(super) struct RawValue {
    text: String,
    quoted: bool,
    at: usize,
}

/// Recognises `name:value` at `i`. Returns `None` when the word there is
/// not shaped like a filter (then it is a keyword).
pub(super) fn read_directive(
    chars: &[char],
    i: usize,
) -> Result<Option<(String, RawValue, usize)>> {
    let n = chars.len();
    let mut j = i;
    while j < n
        && (chars[j].is_ascii_alphabetic() || ((chars[j] == '-' || chars[j] == '_') && j > i))
    {
        j += 1;
    }
    if j == i || j >= n || chars[j] != ':' {
        return Ok(None);
    }
    let name: String = chars[i..j].iter().collect();
    let vstart = j + 1;
    if vstart >= n || chars[vstart].is_whitespace() || chars[vstart] == ':' || chars[vstart] == '/'
    {
        // `word:` alone, `std::x`, `http://...`: not a filter.
        return Ok(None);
    }
    if chars[vstart] == '"' || chars[vstart] == '\'' {
        let (inner, next) = read_quoted(chars, vstart)?;
        return Ok(Some((
            name,
            RawValue {
                text: inner,
                quoted: true,
                at: vstart,
            },
            next,
        )));
    }
    let mut k = vstart;
    while k < n && !chars[k].is_whitespace() && !chars[k].is_control() && chars[k] != ')' {
        k += 1;
    }
    Ok(Some((
        name,
        RawValue {
            text: chars[vstart..k].iter().collect(),
            quoted: false,
            at: vstart,
        },
        k,
    )))
}

fn list_values(v: &RawValue) -> Vec<String> {
    if v.quoted {
        vec![v.text.trim().to_string()]
    } else {
        v.text
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    }
}

pub(super) fn canonical_directive(name: &str) -> String {
    let n = name.to_ascii_lowercase().replace('_', "-");
    match n.as_str() {
        "path" | "file-path" | "git-file" => "git-path".into(),
        "language" => "lang".into(),
        "type" | "message-type" => "msg-type".into(),
        "target" | "targets" => "in".into(),
        "options" => "option".into(),
        "sort-by" => "sort".into(),
        _ => n,
    }
}

pub(super) fn apply_directive(
    q: &mut Query,
    raw_name: &str,
    value: RawValue,
    negated: bool,
    at: usize,
    profile_exists: &dyn Fn(&str) -> bool,
) -> Result<()> {
    let name = canonical_directive(raw_name);
    let values = list_values(&value);
    if values.len() > MAX_FILTER_VALUES {
        return Err(Error::at(
            "query.too_complex",
            format!(
                "{raw_name}: lists {} values; at most {MAX_FILTER_VALUES} are accepted",
                values.len()
            ),
            value.at,
        ));
    }
    if q.filters.len() + q.sort.len() >= MAX_FILTERS {
        return Err(Error::at(
            "query.too_complex",
            format!("the query has more than {MAX_FILTERS} filters"),
            at,
        ));
    }
    if values.is_empty() {
        return Err(Error::at(
            "query.empty_filter_value",
            format!("{raw_name}: needs a value"),
            value.at,
        ));
    }
    let not_negatable = |what: &str| -> Result<()> {
        if negated {
            Err(Error::at(
                "query.bad_negation",
                format!("{what}: cannot be negated with '-'"),
                at,
            ))
        } else {
            Ok(())
        }
    };
    match name.as_str() {
        "in" => {
            not_negatable("in")?;
            let mut targets = q.targets.take().unwrap_or_default();
            for v in &values {
                let word = v.to_ascii_lowercase().replace('_', "-");
                let Some(ts) = lookup(TARGET_WORDS, &word) else {
                    return Err(Error::at(
                        "query.bad_value",
                        format!(
                            "in:{v} is not a target; use {}",
                            canonical_words(TARGET_WORDS).join(", ")
                        ),
                        value.at,
                    ));
                };
                targets.extend_from_slice(ts);
            }
            targets.sort();
            targets.dedup();
            q.targets = Some(targets);
        }
        "scope" => {
            not_negatable("scope")?;
            let v = values[0].to_ascii_lowercase().replace('_', "-");
            q.scope = Some(lookup(SCOPE_WORDS, &v).ok_or_else(|| {
                Error::at(
                    "query.bad_value",
                    format!(
                        "scope:{v} is not a scope; use {}",
                        canonical_words(SCOPE_WORDS).join(", ")
                    ),
                    value.at,
                )
            })?);
        }
        "profile" => {
            not_negatable("profile")?;
            let v = values[0].clone();
            if !profile_exists(&v) {
                return Err(Error::at(
                    "query.unknown_profile",
                    format!("there is no profile named '{v}'"),
                    value.at,
                ));
            }
            q.profile = Some(v);
        }
        "analyzer" => {
            // An analyzer's messages are typed `ID::...`: msg-type's family.
            validate_values(Field::MsgType, &values, value.at)?;
            q.filters.push(Filter {
                field: Field::MsgType,
                value: FilterValue::AnyOf(values),
                negated,
            });
        }
        "meta" => {
            if negated {
                return Err(Error::at(
                    "query.bad_negation",
                    "meta: is negated with != (meta:FIELD:TYPE!=VALUE), not '-'",
                    at,
                ));
            }
            let text_at = value.at + usize::from(value.quoted);
            q.meta_filters
                .push(crate::meta::MetaFilter::parse(value.text.trim(), text_at)?);
        }
        key if crate::gitnav::KEYS.contains(&key) => {
            not_negatable(key)?;
            let text_at = value.at + usize::from(value.quoted);
            q.git_nav.set(key, &value.text, text_at)?;
        }
        "insight-field" => {
            not_negatable("insight-field")?;
            for v in &values {
                let at = if value.quoted {
                    value.at + 1
                } else {
                    value.at
                        + value
                            .text
                            .find(v.as_str())
                            .map_or(0, |b| value.text[..b].chars().count())
                };
                q.insight_fields
                    .push(super::facet::FacetRequest::parse(v, Some(at))?);
            }
        }
        "sort" => {
            not_negatable("sort")?;
            for v in &values {
                q.sort.push(parse_sort_key(v, value.at)?);
            }
        }
        "option" => {
            not_negatable("option")?;
            for v in &values {
                let word = v.to_ascii_lowercase().replace('_', "-");
                if let Some(cs) = lookup(OPTION_WORDS, &word) {
                    q.case_sensitive = cs;
                } else if word == "regex" {
                    q.regex = true;
                } else {
                    return Err(Error::at(
                        "query.bad_value",
                        format!(
                            "option:{v} is unknown; use {}",
                            canonical_words(OPTION_WORDS).join(" or ")
                        ),
                        value.at,
                    ));
                }
            }
        }
        other => {
            let Some(spec) = filter_spec(other) else {
                let known: Vec<&str> = FILTERS.iter().map(|f| f.name).collect();
                let directives: Vec<String> =
                    DIRECTIVES.iter().map(|d| format!("{}:", d.name)).collect();
                return Err(Error::at(
                    "query.unknown_filter",
                    format!(
                        "unknown filter '{raw_name}:'; filters are {}, and {} (quote the word to search for it literally)",
                        known.join(", "),
                        directives.join(", ")
                    ),
                    at,
                ));
            };
            let fv = if values.len() == 1 && !value.quoted {
                match values[0].to_ascii_lowercase().as_str() {
                    "null" => Some(FilterValue::Null),
                    "not_null" | "not-null" | "notnull" => Some(FilterValue::NotNull),
                    _ => None,
                }
            } else {
                None
            };
            let fv = match fv {
                Some(v) => v,
                None => {
                    validate_values(spec.field, &values, value.at)?;
                    FilterValue::AnyOf(values)
                }
            };
            // Repeated filters of one key accumulate, as GitSense's do:
            // `lang:javascript lang:markdown` is `lang:javascript,markdown`
            // (and `-lang:a -lang:b` is none of them either way).
            if let FilterValue::AnyOf(more) = &fv {
                let earlier = q.filters.iter_mut().find(|f| {
                    f.field == spec.field
                        && f.negated == negated
                        && matches!(f.value, FilterValue::AnyOf(_))
                });
                if let Some(Filter {
                    value: FilterValue::AnyOf(values),
                    ..
                }) = earlier
                {
                    for v in more {
                        if !values.contains(v) {
                            values.push(v.clone());
                        }
                    }
                    // A repeat adds no filter, so the list bounds it.
                    if values.len() > MAX_FILTER_VALUES {
                        return Err(Error::at(
                            "query.too_complex",
                            format!(
                                "{raw_name}: lists {} values in all; at most {MAX_FILTER_VALUES} are accepted",
                                values.len()
                            ),
                            value.at,
                        ));
                    }
                    return Ok(());
                }
            }
            q.filters.push(Filter {
                field: spec.field,
                value: fv,
                negated,
            });
        }
    }
    Ok(())
}

fn validate_values(field: Field, values: &[String], at: usize) -> Result<()> {
    match field {
        Field::ChatId | Field::MsgId => {
            for v in values {
                if v.parse::<i64>().is_err() {
                    return Err(Error::at(
                        "query.bad_value",
                        format!("'{v}' is not an id (a whole number)"),
                        at,
                    ));
                }
            }
        }
        Field::Role => {
            for v in values {
                if !matches!(
                    v.to_ascii_lowercase().as_str(),
                    "system" | "user" | "assistant"
                ) {
                    return Err(Error::at(
                        "query.bad_value",
                        format!("role:{v} is not a role; use system, user or assistant"),
                        at,
                    ));
                }
            }
        }
        _ => {}
    }
    Ok(())
}

fn parse_sort_key(v: &str, at: usize) -> Result<SortKey> {
    let (f, d) = match v.rsplit_once(':') {
        Some((f, d)) => (f, Some(d)),
        None => (v, None),
    };
    let f = f.to_ascii_lowercase();
    let f = f
        .trim_start_matches("chats.")
        .trim_start_matches("messages.")
        .trim_start_matches("code_blocks.")
        .trim_start_matches("cte.");
    let field = lookup(SORT_WORDS, f).ok_or_else(|| {
        Error::at(
            "query.bad_value",
            format!(
                "cannot sort by '{f}'; use {}",
                canonical_words(SORT_WORDS).join(", ")
            ),
            at,
        )
    })?;
    let descending = match d.map(|d| d.to_ascii_lowercase()) {
        None => false,
        Some(d) if d == "asc" => false,
        Some(d) if d == "desc" => true,
        Some(d) => {
            return Err(Error::at(
                "query.bad_value",
                format!("sort direction '{d}' is neither asc nor desc"),
                at,
            ))
        }
    };
    Ok(SortKey { field, descending })
}

struct Parser<'a> {
    toks: &'a [(Tok, usize)],
    pos: usize,
    end: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|(t, _)| t)
    }

    fn here(&self) -> usize {
        self.toks.get(self.pos).map(|(_, p)| *p).unwrap_or(self.end)
    }

    fn dangling(&self, at: usize, op: &str) -> Error {
        Error::at(
            "query.dangling_operator",
            format!("{op} needs a term on both sides"),
            at,
        )
    }

    fn parse_or(&mut self, depth: usize) -> Result<Expr> {
        let mut items = vec![self.parse_and(depth)?];
        while let Some(Tok::Or) = self.peek() {
            let at = self.here();
            self.pos += 1;
            if matches!(self.peek(), None | Some(Tok::RParen) | Some(Tok::Or)) {
                return Err(self.dangling(at, "OR"));
            }
            items.push(self.parse_and(depth)?);
        }
        Ok(if items.len() == 1 {
            items.pop().unwrap()
        } else {
            Expr::Or { items }
        })
    }

    fn parse_and(&mut self, depth: usize) -> Result<Expr> {
        let mut items = Vec::new();
        loop {
            match self.peek() {
                None | Some(Tok::RParen) | Some(Tok::Or) => break,
                Some(Tok::And) => {
                    let at = self.here();
                    self.pos += 1;
                    if items.is_empty()
                        || matches!(
                            self.peek(),
                            None | Some(Tok::RParen) | Some(Tok::Or) | Some(Tok::And)
                        )
                    {
                        return Err(self.dangling(at, "AND"));
                    }
                }
                _ => items.push(self.parse_unary(depth)?),
            }
        }
        match items.len() {
            0 => {
                let at = self.here();
                Err(match self.peek() {
                    Some(Tok::Or) => self.dangling(at, "OR"),
                    Some(Tok::RParen) => {
                        Error::at("query.unbalanced_paren", "this ')' has no matching '('", at)
                    }
                    _ => Error::at("query.empty", "the query has no terms", at),
                })
            }
            1 => Ok(items.pop().unwrap()),
            _ => Ok(Expr::And { items }),
        }
    }

    fn parse_unary(&mut self, depth: usize) -> Result<Expr> {
        if depth > MAX_DEPTH {
            return Err(Error::at(
                "query.too_complex",
                format!("the query nests deeper than {MAX_DEPTH} levels"),
                self.here(),
            ));
        }
        let at = self.here();
        match self.peek().cloned() {
            Some(Tok::Not) => {
                self.pos += 1;
                if matches!(
                    self.peek(),
                    None | Some(Tok::RParen) | Some(Tok::Or) | Some(Tok::And)
                ) {
                    return Err(self.dangling(at, "NOT"));
                }
                Ok(Expr::Not {
                    item: Box::new(self.parse_unary(depth + 1)?),
                })
            }
            Some(Tok::LParen) => {
                self.pos += 1;
                if matches!(self.peek(), Some(Tok::RParen)) {
                    return Err(Error::at("query.empty_group", "empty parentheses", at));
                }
                if self.peek().is_none() {
                    return Err(Error::at(
                        "query.unbalanced_paren",
                        "this '(' is never closed",
                        at,
                    ));
                }
                let e = self.parse_or(depth + 1)?;
                match self.peek() {
                    Some(Tok::RParen) => {
                        self.pos += 1;
                        Ok(e)
                    }
                    _ => Err(Error::at(
                        "query.unbalanced_paren",
                        "this '(' is never closed",
                        at,
                    )),
                }
            }
            Some(Tok::Term { text, prefix }) => {
                self.pos += 1;
                Ok(Expr::Term { text, prefix })
            }
            Some(Tok::Phrase { text }) => {
                self.pos += 1;
                Ok(Expr::Phrase { text })
            }
            _ => Err(Error::at("query.unexpected", "unexpected token", at)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Query> {
        parse(s, &|n| n == "all.default")
    }

    fn expr(s: &str) -> String {
        p(s).unwrap().expr.unwrap().to_query_string()
    }

    #[test]
    fn keywords_are_anded_by_default() {
        assert_eq!(
            p("secure payment").unwrap().expr.unwrap(),
            Expr::And {
                items: vec![
                    Expr::Term {
                        text: "secure".into(),
                        prefix: false
                    },
                    Expr::Term {
                        text: "payment".into(),
                        prefix: false
                    }
                ]
            }
        );
    }

    #[test]
    fn or_binds_looser_than_and() {
        assert_eq!(expr("a b OR c"), "(a b) OR c");
        assert!(matches!(p("a b OR c").unwrap().expr, Some(Expr::Or { .. })));
        assert_eq!(expr("a (b OR c)"), "a (b OR c)");
    }

    #[test]
    fn negation_forms_are_equivalent() {
        assert_eq!(p("a -b").unwrap().expr, p("a NOT b").unwrap().expr);
    }

    #[test]
    fn both_quote_kinds_make_phrases() {
        assert_eq!(
            p("\"secure payments\"").unwrap().expr,
            p("'secure payments'").unwrap().expr
        );
    }

    #[test]
    fn apostrophes_inside_words_are_not_quotes() {
        assert_eq!(expr("don't panic"), "\"don't\" panic");
    }

    #[test]
    fn prefix_terms_keep_their_star() {
        assert_eq!(
            p("pay*").unwrap().expr.unwrap(),
            Expr::Term {
                text: "pay".into(),
                prefix: true
            }
        );
    }

    #[test]
    fn filters_are_taken_out_of_the_expression() {
        let q =
            p("lang:py,rust auth role:assistant -chat-type:notes git-path:\"src/a b.rs\"").unwrap();
        assert_eq!(q.expr.unwrap().to_query_string(), "auth");
        assert_eq!(q.filters.len(), 4);
        assert_eq!(
            q.filters[0].value,
            FilterValue::AnyOf(vec!["py".into(), "rust".into()])
        );
        assert!(q.filters[2].negated);
        assert_eq!(
            q.filters[3].value,
            FilterValue::AnyOf(vec!["src/a b.rs".into()])
        );
    }

    #[test]
    fn null_and_not_null_are_special_values() {
        let q = p("git-path:null lang:not_null").unwrap();
        assert_eq!(q.filters[0].value, FilterValue::Null);
        assert_eq!(q.filters[1].value, FilterValue::NotNull);
    }

    #[test]
    fn directives_set_targets_scope_sort_and_options() {
        let q = p("in:chats,messages scope:current-chat sort:updated_at:desc option:case-sensitive profile:all.default x").unwrap();
        assert_eq!(q.targets, Some(vec![Target::Chats, Target::Messages]));
        assert_eq!(q.scope, Some(Scope::CurrentChat));
        assert_eq!(
            q.sort,
            vec![SortKey {
                field: SortField::UpdatedAt,
                descending: true
            }]
        );
        assert!(q.case_sensitive);
        assert_eq!(q.profile.as_deref(), Some("all.default"));
    }

    #[test]
    fn urls_and_paths_with_colons_are_keywords() {
        assert!(p("http://example.com std::vec::Vec")
            .unwrap()
            .filters
            .is_empty());
    }

    #[test]
    fn errors_carry_codes_and_positions() {
        let e = p("foo \"bar").unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.position),
            ("query.unbalanced_quote", Some(4))
        );
        let e = p("foo bogus:1").unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.position),
            ("query.unknown_filter", Some(4))
        );
        assert_eq!(p("   ").unwrap_err().code, "query.empty");
        assert_eq!(p("(a b").unwrap_err().code, "query.unbalanced_paren");
        assert_eq!(p("a b)").unwrap_err().code, "query.unbalanced_paren");
        assert_eq!(p("a OR").unwrap_err().code, "query.dangling_operator");
        assert_eq!(p("OR a").unwrap_err().code, "query.dangling_operator");
        assert_eq!(p("()").unwrap_err().code, "query.empty_group");
        assert_eq!(p("(lang:x a)").unwrap_err().code, "query.filter_in_group");
        assert_eq!(p("chat-id:abc").unwrap_err().code, "query.bad_value");
        assert_eq!(p("profile:nope").unwrap_err().code, "query.unknown_profile");
        assert_eq!(
            p("option:regex \"a(\"").unwrap_err().code,
            "query.bad_regex"
        );
        assert_eq!(p(&"x ".repeat(5000)).unwrap_err().code, "query.too_long");
        assert_eq!(p(&"(".repeat(100)).unwrap_err().code, "query.too_complex");
    }

    #[test]
    fn parse_reads_filters_and_targets_beside_the_words() {
        let q = parse(
            "payment -refund lang:javascript in:messages",
            &crate::profiles::exists,
        )
        .unwrap();
        assert_eq!(q.filters.len(), 1);
        assert!(q.targets.is_some());
    }
}
