//! [`Query`] + [`SearchOptions`] → one SQL plan per target, with bound
//! parameters and a safely quoted FTS5 expression.
//!
//! Query text never reaches SQL: filter values, ids and patterns are bound
//! parameters, and every keyword or phrase becomes an FTS5 string literal
//! (`"..."` with inner quotes doubled), so FTS5 operators, column filters,
//! `NEAR(` or `*` typed by the user are searched for, not executed. The
//! boolean structure comes only from the parsed [`Expr`].

use crate::error::{Error, Result};
use crate::index::{name_key, EXACT_NAME_BOOST, TRIGRAM_MIN_CHARS};
use crate::model::canonical_language;
use crate::morphology;
use crate::profiles::{self, Profile};
use crate::query::ast::*;
use crate::query::searchbox;
use crate::query::syntax::STOP_WORDS;
use rusqlite::types::Value as SqlValue;
use serde::{Deserialize, Serialize};

/// How highlighted snippets are marked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Highlight {
    /// Text HTML-escaped, matches wrapped in `<mark>`…`</mark>` (safe to
    /// insert as HTML).
    #[default]
    Html,
    /// Raw text with GitSense's `<GSC>`…`</GSC>` markers (not escaped).
    Raw,
    /// Raw text, no markers.
    None,
}

/// Caller options for one search. The JS API passes them as JSON with
/// camelCase keys (unknown keys are refused); Rust callers start from
/// `Default`.
///
/// ```
/// use gitsense_engine::{Engine, Highlight, SearchOptions};
/// # let dir = tempfile::tempdir()?;
/// # let path = gitsense_engine::index::write_example(&dir.path().join("chats.gsx"))?;
/// let opts = SearchOptions { per_page: Some(1), highlight: Highlight::Raw, ..Default::default() };
/// let r = Engine::open(&path)?.search("retry", &opts)?;
/// // Two messages match; one a page.
/// assert_eq!((r.total_counts.messages, r.results.messages.len()), (2, 1));
/// let snippet = r.results.messages[0].messages_content_snippet.as_deref().unwrap();
/// assert!(snippet.contains("<GSC>"), "{snippet}");
/// // The same options as the JS API's JSON.
/// let json: SearchOptions = serde_json::from_str(r#"{"perPage": 1, "highlight": "raw"}"#)?;
/// assert_eq!(json, opts);
/// assert!(serde_json::from_str::<SearchOptions>(r#"{"per_page": 1}"#).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct SearchOptions {
    /// 1-based page number.
    pub page: u64,
    /// Results per target and page; defaults to the profile's limit.
    pub per_page: Option<u64>,
    /// The chat the user is in, for `scope:` other than all-chats.
    pub current_chat_id: Option<i64>,
    pub highlight: Highlight,
    /// Include full `*_content` fields (snippets are always included).
    pub include_content: bool,
    /// Token budget for the whole results object (chars/4 estimate).
    pub max_tokens: Option<u64>,
    /// Opaque cursor from a previous page's `nextCursor`.
    pub cursor: Option<String>,
    /// Add per-stage timings as `trace`.
    pub trace: bool,
    /// How the query text is read: the full grammar (errors on what it
    /// refuses) or a search box's (never an error).
    pub mode: QueryMode,
    /// Words (FTS5 tokens) of text around the matches in a message's
    /// snippet, 1 to [`MAX_SNIPPET_TOKENS`]; default 12 (a search box's
    /// list shows about 30).
    pub snippet_tokens: Option<u32>,
    /// Facets to count over the matches, each `FIELD` or `FIELD:TYPE` as
    /// `insight-field:` takes them ([`crate::facets`]).
    pub facets: Vec<String>,
    /// Milliseconds this search may work, overriding the engine's budget
    /// (`Engine::set_time_budget`); 0: no bound.
    pub time_budget_ms: Option<u64>,
}

/// How query text is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum QueryMode {
    /// The query language; malformed text is an error with a position.
    #[default]
    Strict,
    /// What a reader types into a search box: never an error (see
    /// [`crate::query::searchbox`]); a text with no word and no filter
    /// finds nothing.
    Box,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            page: 1,
            per_page: None,
            current_chat_id: None,
            highlight: Highlight::Html,
            include_content: true,
            max_tokens: None,
            cursor: None,
            trace: false,
            mode: QueryMode::Strict,
            snippet_tokens: None,
            facets: Vec::new(),
            time_budget_ms: None,
        }
    }
}

/// Most results per target and page.
pub const MAX_PER_PAGE: u64 = 1000;

/// Most tokens in a snippet (FTS5's `snippet()` takes at most 64).
pub const MAX_SNIPPET_TOKENS: u32 = 64;

/// Whether every term must match or any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MatchMode {
    AllTerms,
    AnyTerm,
}

/// What the index holds, which decides how words are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Corpus {
    /// GitSense chats, as GitSense searches them: words as written, every
    /// term in one message.
    #[default]
    Chats,
    /// A documentation site (pages as chats, sections as messages): a
    /// reader judges pages and writes English prose, so all-terms
    /// matching is judged per page ([`keep_by_page`]) and words are
    /// searched with their inflections ([`crate::morphology`]).
    DocSite,
}

impl Corpus {
    /// What the index described by `info` holds.
    pub fn of(info: &crate::index::IndexInfo) -> Corpus {
        if info.is_doc_site() {
            Corpus::DocSite
        } else {
            Corpus::Chats
        }
    }
}

/// SQL for one target.
#[derive(Debug, Clone)]
pub struct TargetSql {
    /// `SELECT count(*) ...`
    pub count_sql: String,
    /// `SELECT <own id> ...`: the ids of every match, unordered (binds
    /// `params`, as `count_sql` does; facets count over it).
    pub ids_sql: String,
    /// `SELECT id, rank ... ORDER BY ... LIMIT ? OFFSET ?` (limit and
    /// offset are the last two parameters, appended by the executor).
    pub page_sql: String,
    pub params: Vec<SqlValue>,
    /// Parameters of the rank expression in `page_sql`, bound before
    /// `params` (named parameters, numbered first).
    pub rank_params: Vec<SqlValue>,
    /// The FTS5 expression, for snippets of the returned rows.
    pub fts: Option<String>,
    /// The tables `page_sql` joins besides the FTS table, e.g.
    /// `["message_rank"]` for plain words (the lazy warm-up fetches their
    /// rows of every match).
    pub tables: Vec<&'static str>,
    /// The `message_names` key ranking looks up (exact-name boost).
    pub name_key: Option<i64>,
    /// Whether `page_sql` scores every matching row with one of the
    /// engine's ranking functions (FTS on messages or code blocks, sorted
    /// by rank first): its [`crate::index::rank::Tally`] is then the
    /// count, and `count_sql` need not run.
    pub counted_by_rank: bool,
    /// The phrases of `fts` in FTS5's order ([`fts_phrases`]).
    pub phrases: Vec<String>,
    /// The ranking weight of each of `phrases`: below 1 for the
    /// inflections the planner added ([`crate::morphology`]).
    pub phrase_weights: Vec<f64>,
    /// Set when sections are judged per page
    /// ([`MatchMode::AllTermsByPage`]): the phrase bits of each term.
    /// `page_sql` then gives every section holding any term, best first,
    /// with two more columns, its page and the phrases it holds (bit `i`:
    /// phrase `i`); a result is a section whose page's sections together
    /// hold, for every term, one of its bits ([`keep_by_page`]). Run
    /// with limit -1 and offset 0, the executor pages what it keeps.
    pub page_terms: Option<Vec<i64>>,
}

/// The phrases of an FTS5 expression the planner wrote, left to right
/// (FTS5 numbers them so, those under NOT included): each quoted string
/// with its `*`, as written. The planner writes nothing else but `AND`,
/// `OR`, `NOT` and parentheses.
pub fn fts_phrases(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = expr.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'"' {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < b.len() {
            if b[i] == b'"' {
                if b.get(i + 1) == Some(&b'"') {
                    i += 2;
                    continue;
                }
                break;
            }
            i += 1;
        }
        i += 1;
        if b.get(i) == Some(&b'*') {
            i += 1;
        }
        out.push(expr[start..i.min(b.len())].to_string());
    }
    out
}

impl TargetSql {
    /// Every parameter of `page_sql`, in binding order: the rank's, the
    /// conditions', then limit and offset.
    pub fn page_params(&self, limit: u64, offset: u64) -> Vec<SqlValue> {
        let mut params = self.rank_params.clone();
        params.extend(self.params.iter().cloned());
        params.push(SqlValue::Integer(limit as i64));
        params.push(SqlValue::Integer(offset as i64));
        params
    }
}

#[derive(Debug, Clone)]
pub struct TargetPlan {
    pub target: Target,
    /// `None`: the target cannot match (a filter does not apply to it, or
    /// every term was dropped for it).
    pub sql: Option<TargetSql>,
    /// Why the target cannot match, when it cannot.
    pub skipped: Option<String>,
}

impl TargetPlan {
    /// The tables a plan without an FTS expression (a query of filters
    /// only) scans whole: its count and page statements read every row of
    /// the tables they join (`TargetSql::tables`), through the table or
    /// one of its indexes as SQLite's planner picks
    /// ([`crate::index::btrees_of`] adds those). Empty for a plan with
    /// words (what it reads is found from its doclists). The lazy warm-up
    /// fetches them in one round (`tests/page_reads.rs` checks they cover
    /// what such a query reads).
    pub fn scanned(&self) -> &[&'static str] {
        match &self.sql {
            Some(sql) if sql.fts.is_none() => &sql.tables,
            _ => &[],
        }
    }
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub query: Query,
    pub profile: Profile,
    pub targets: Vec<Target>,
    pub scope: Scope,
    pub filters: Vec<Filter>,
    pub sort: Vec<SortKey>,
    pub per_page: u64,
    pub page: u64,
    pub match_mode: MatchMode,
    pub target_plans: Vec<TargetPlan>,
    pub hint: Option<String>,
    pub warnings: Vec<String>,
    /// The expression actually searched, in query syntax.
    pub effective_expr: Option<String>,
    /// The expression searched matches less than the query asked for (a
    /// prefix too short to search as one was searched as a whole word):
    /// results say `truncated`.
    pub narrowed: bool,
}

/// Query text → its query and all-terms plan, read as `opts.mode` says.
/// In box mode a text the grammar refuses, or whose reading cannot be
/// planned (a directive the caller's options do not support, a negation
/// FTS5 cannot express), is read literally; only errors in `opts` remain.
///
/// ```
/// use gitsense_engine::plan::{plan_text, QueryMode};
/// use gitsense_engine::SearchOptions;
/// let strict = SearchOptions::default();
/// assert_eq!(plan_text("fn main()", &strict).unwrap_err().code, "query.empty_group");
/// let boxed = SearchOptions { mode: QueryMode::Box, ..strict };
/// let (_, p) = plan_text("fn main()", &boxed).unwrap();
/// assert_eq!(p.effective_expr.as_deref(), Some("fn \"main()\""));
/// ```
pub fn plan_text(text: &str, opts: &SearchOptions) -> Result<(Query, Plan)> {
    plan_text_in(text, opts, Corpus::Chats)
}

/// [`plan_text`] for an index holding `corpus`.
pub fn plan_text_in(text: &str, opts: &SearchOptions, corpus: Corpus) -> Result<(Query, Plan)> {
    let exists = &profiles::exists;
    let all = MatchMode::AllTerms;
    match opts.mode {
        QueryMode::Strict => {
            let q = crate::query::parse(text, exists)?;
            let p = plan_in(&q, opts, all, corpus)?;
            Ok((q, p))
        }
        QueryMode::Box => {
            if let Ok(q) = searchbox::with_grammar(text, exists) {
                if let Ok(p) = plan_in(&q, opts, all, corpus) {
                    return Ok((q, p));
                }
            }
            let q = searchbox::literally(text, exists);
            let p = plan_in(&q, opts, all, corpus)?;
            Ok((q, p))
        }
    }
}

/// Builds the plan. `match_mode` AnyTerm turns the top-level AND of terms
/// into an OR (the executor's fallback when all-terms finds nothing).
pub fn plan(query: &Query, opts: &SearchOptions, match_mode: MatchMode) -> Result<Plan> {
    plan_in(query, opts, match_mode, Corpus::Chats)
}

/// [`plan`] for an index holding `corpus`.
pub fn plan_in(
    query: &Query,
    opts: &SearchOptions,
    match_mode: MatchMode,
    corpus: Corpus,
) -> Result<Plan> {
    let profile_name = match (&query.profile, &query.targets) {
        (Some(p), _) => p.clone(),
        (None, _) if !query.git_nav.is_empty() => "git-nav".to_string(),
        (None, Some(t)) if t.len() == 1 => format!("{}.default", t[0].name()),
        _ => "all.default".to_string(),
    };
    let profile = profiles::get(&profile_name).ok_or_else(|| {
        Error::new(
            "query.unknown_profile",
            format!("there is no profile named '{profile_name}'"),
        )
    })?;
    let targets = query
        .targets
        .clone()
        .unwrap_or_else(|| profile.targets.clone());
    let scope = query.scope.unwrap_or(profile.scope);
    let mut filters = profile.filters.clone();
    if !query.git_nav.is_empty() {
        // The git-nav keys say which chat types are listed.
        filters.retain(|f| f.field != Field::ChatType);
    }
    filters.extend(query.filters.iter().cloned());
    let empty_search = query.expr.is_none();
    let sort = if !query.sort.is_empty() {
        query.sort.clone()
    } else if empty_search && !profile.empty_sort.is_empty() {
        profile.empty_sort.clone()
    } else if empty_search {
        vec![SortKey {
            field: SortField::UpdatedAt,
            descending: true,
        }]
    } else if !profile.sort.is_empty() {
        profile.sort.clone()
    } else {
        vec![SortKey {
            field: SortField::FtsRank,
            descending: false,
        }]
    };
    if opts.page == 0 {
        return Err(Error::new("options.bad_page", "page numbers start at 1"));
    }
    // A profile's limit beyond the most a page holds (git-nav's 100000:
    // "everything") pages by that most instead.
    let per_page = opts.per_page.unwrap_or(profile.limit.min(MAX_PER_PAGE));
    if per_page == 0 || per_page > MAX_PER_PAGE {
        return Err(Error::new(
            "options.bad_per_page",
            format!("perPage must be between 1 and {MAX_PER_PAGE}"),
        ));
    }
    if opts
        .snippet_tokens
        .is_some_and(|n| n == 0 || n > MAX_SNIPPET_TOKENS)
    {
        return Err(Error::new(
            "options.bad_snippet_tokens",
            format!("snippetTokens must be between 1 and {MAX_SNIPPET_TOKENS}"),
        ));
    }
    if scope != Scope::AllChats && opts.current_chat_id.is_none() {
        return Err(Error::new(
            "options.current_chat_required",
            format!(
                "scope:{} needs the current chat id (--current-chat / currentChatId)",
                scope.name()
            ),
        ));
    }

    let mut warnings = query.warnings.clone();
    let mut short_prefixes = Vec::new();
    // With option:regex the literals are patterns: FTS5 only narrows the
    // candidates to rows holding the words every match must contain.
    let patterns = query.expr.as_ref().filter(|_| query.regex);
    let expr = if query.regex {
        patterns.and_then(crate::pattern::required_words)
    } else {
        query.expr.as_ref().map(|e| {
            let e = drop_stop_words(e, &mut warnings);
            let e = whole_words_for_short_prefixes(&e, &mut short_prefixes);
            match match_mode {
                MatchMode::AllTerms => e,
                MatchMode::AnyTerm => any_term(&e),
            }
        })
    };

    let exact = query
        .expr
        .as_ref()
        .filter(|_| !query.regex)
        .and_then(exact_name_key);
    let mut hint = None;
    let short_prefix_hint = (!short_prefixes.is_empty()).then(|| {
        let list = short_prefixes
            .iter()
            .map(|t| format!("'{t}*' as the word '{t}'"))
            .collect::<Vec<_>>()
            .join(", ");
        format!(
            "searched {list}: a prefix of fewer than {PREFIX_MIN_CHARS} letters or digits matches \
             too many words to search; type more letters"
        )
    });
    let mut target_plans = Vec::new();
    for &target in &Target::ALL {
        if !targets.contains(&target) {
            continue;
        }
        target_plans.push(plan_target(
            target,
            expr.as_ref(),
            (corpus, match_mode),
            &filters,
            scope,
            opts.current_chat_id,
            &sort,
            query.case_sensitive,
            RowTests {
                patterns,
                meta: &query.meta_filters,
                nav: &query.git_nav,
            },
            exact,
            &mut warnings,
            &mut hint,
        )?);
    }
    hint = match (hint, short_prefix_hint) {
        (Some(h), Some(s)) => Some(format!("{s}; {h}")),
        (h, s) => s.or(h),
    };
    Ok(Plan {
        effective_expr: expr.as_ref().map(|e| e.to_query_string()),
        query: query.clone(),
        profile,
        targets,
        scope,
        filters,
        sort,
        per_page,
        page: opts.page,
        match_mode,
        target_plans,
        hint,
        warnings,
        narrowed: !short_prefixes.is_empty(),
    })
}

/// Whether the any-term fallback can change anything for this query.
pub fn can_fall_back(query: &Query) -> bool {
    if query.regex {
        // Patterns are not words: matching any of them is another query.
        return false;
    }
    match &query.expr {
        Some(Expr::And { items }) => {
            items
                .iter()
                .filter(|i| !matches!(i, Expr::Not { .. }))
                .count()
                >= 2
        }
        _ => false,
    }
}

fn is_stop_word(e: &Expr) -> bool {
    matches!(e, Expr::Term { text, prefix: false } if STOP_WORDS.contains(&text.to_lowercase().as_str()))
}

fn drop_stop_words(e: &Expr, warnings: &mut Vec<String>) -> Expr {
    if let Expr::And { items } = e {
        let keep: Vec<Expr> = items.iter().filter(|i| !is_stop_word(i)).cloned().collect();
        let positives = keep
            .iter()
            .filter(|i| !matches!(i, Expr::Not { .. }))
            .count();
        if positives > 0 && keep.len() < items.len() {
            let dropped: Vec<String> = items
                .iter()
                .filter(|i| is_stop_word(i))
                .filter_map(|i| i.literal_text().map(str::to_string))
                .collect();
            warnings.push(format!("ignored common words: {}", dropped.join(", ")));
            return if keep.len() == 1 {
                keep.into_iter().next().unwrap()
            } else {
                Expr::And { items: keep }
            };
        }
    }
    e.clone()
}

/// `e` with every prefix shorter than [`PREFIX_MIN_CHARS`] letters or
/// digits made a whole word; their texts go to `short`.
fn whole_words_for_short_prefixes(e: &Expr, short: &mut Vec<String>) -> Expr {
    match e {
        Expr::Term { text, prefix: true }
            if text.chars().filter(|c| c.is_alphanumeric()).count() < PREFIX_MIN_CHARS =>
        {
            if !short.contains(text) {
                short.push(text.clone());
            }
            Expr::Term {
                text: text.clone(),
                prefix: false,
            }
        }
        Expr::And { items } => Expr::And {
            items: items
                .iter()
                .map(|i| whole_words_for_short_prefixes(i, short))
                .collect(),
        },
        Expr::Or { items } => Expr::Or {
            items: items
                .iter()
                .map(|i| whole_words_for_short_prefixes(i, short))
                .collect(),
        },
        Expr::Not { item } => Expr::Not {
            item: Box::new(whole_words_for_short_prefixes(item, short)),
        },
        other => other.clone(),
    }
}

fn any_term(e: &Expr) -> Expr {
    match e {
        Expr::And { items } => {
            let (neg, pos): (Vec<Expr>, Vec<Expr>) = items
                .iter()
                .cloned()
                .partition(|i| matches!(i, Expr::Not { .. }));
            let or = Expr::Or { items: pos };
            if neg.is_empty() {
                or
            } else {
                let mut all = vec![or];
                all.extend(neg);
                Expr::And { items: all }
            }
        }
        other => other.clone(),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum TokenizerKind {
    Words,
    Trigram,
}

/// A rendered boolean group: `pos NOT (neg1 OR neg2 ...)`; `pos == None`
/// means "everything" (a purely negative group).
struct Rendered {
    pos: Option<String>,
    neg: Vec<String>,
}

/// An FTS5 string literal. Control characters (NUL would end the C
/// string FTS5 parses) become spaces, which every tokenizer skips anyway.
fn fts_string(text: &str) -> String {
    let clean: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    format!("\"{}\"", clean.replace('"', "\"\""))
}

fn render_literal(
    e: &Expr,
    kind: TokenizerKind,
    dropped: &mut Vec<String>,
    inflect: bool,
) -> Option<String> {
    let (text, prefix) = match e {
        Expr::Term { text, prefix } => (text.as_str(), *prefix),
        Expr::Phrase { text } => (text.as_str(), false),
        _ => return None,
    };
    match kind {
        TokenizerKind::Words => {
            if !text.chars().any(|c| c.is_alphanumeric()) {
                dropped.push(text.to_string());
                return None;
            }
            Some(match e {
                _ if prefix => format!("{}*", fts_string(text)),
                Expr::Term { .. } if inflect => with_variants(text),
                _ => fts_string(text),
            })
        }
        TokenizerKind::Trigram => {
            if text.chars().count() < TRIGRAM_MIN_CHARS {
                dropped.push(text.to_string());
                return None;
            }
            Some(fts_string(text))
        }
    }
}

/// A word as an FTS5 string, OR-ed with its inflections
/// ([`morphology::variants`]) when it has any: `("connections" OR
/// "connection" OR ...)`. Ranking weighs the variants' hits down
/// ([`phrase_weights`]).
fn with_variants(word: &str) -> String {
    let variants = morphology::variants(word);
    if variants.is_empty() {
        return fts_string(word);
    }
    let mut alts = vec![fts_string(word)];
    alts.extend(variants.iter().map(|v| fts_string(v)));
    format!("({})", alts.join(" OR "))
}

/// The ranking weight of each of `phrases` (an expression's, in FTS5's
/// order): [`morphology::VARIANT_WEIGHT`] for a phrase that is only an
/// inflection the planner added, 1 for what the reader typed.
fn phrase_weights(e: &Expr, phrases: &[String]) -> Vec<f64> {
    let mut typed = std::collections::HashSet::new();
    let mut added = std::collections::HashSet::new();
    fn walk(
        e: &Expr,
        typed: &mut std::collections::HashSet<String>,
        added: &mut std::collections::HashSet<String>,
    ) {
        match e {
            Expr::Term { text, prefix } => {
                typed.insert(if *prefix {
                    format!("{}*", fts_string(text))
                } else {
                    fts_string(text)
                });
                if !prefix {
                    added.extend(morphology::variants(text).iter().map(|v| fts_string(v)));
                }
            }
            Expr::Phrase { text } => {
                typed.insert(fts_string(text));
            }
            Expr::And { items } | Expr::Or { items } => {
                items.iter().for_each(|i| walk(i, typed, added))
            }
            // Excluded words are searched without their inflections.
            Expr::Not { .. } => {}
        }
    }
    walk(e, &mut typed, &mut added);
    phrases
        .iter()
        .map(|p| {
            if added.contains(p) && !typed.contains(p) {
                morphology::VARIANT_WEIGHT
            } else {
                1.0
            }
        })
        .collect()
}

/// True when `s` is one FTS5 string (`"..."`, optionally with `*`) or is
/// already wrapped in one balanced pair of parentheses.
fn is_atom(s: &str) -> bool {
    let b = s.as_bytes();
    if b.first() == Some(&b'"') {
        // One quoted string: the only unescaped quote pair spans it.
        let body = s.trim_end_matches('*');
        return body.len() >= 2
            && body.ends_with('"')
            && !body[1..body.len() - 1].replace("\"\"", "").contains('"');
    }
    if b.first() != Some(&b'(') {
        return false;
    }
    let mut depth = 0i32;
    let mut in_str = false;
    for (i, ch) in s.char_indices() {
        match ch {
            '"' => in_str = !in_str,
            '(' if !in_str => depth += 1,
            ')' if !in_str => {
                depth -= 1;
                if depth == 0 && i != s.len() - 1 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}

fn paren(s: &str) -> String {
    if is_atom(s) {
        s.to_string()
    } else {
        format!("({s})")
    }
}

/// `e` as an FTS5 expression; `inflect`: whether words are searched with
/// their inflections (never under `NOT`: an excluded word is excluded as
/// typed).
fn render(
    e: &Expr,
    kind: TokenizerKind,
    dropped: &mut Vec<String>,
    inflect: bool,
) -> Result<Option<Rendered>> {
    Ok(match e {
        Expr::Term { .. } | Expr::Phrase { .. } => render_literal(e, kind, dropped, inflect)
            .map(|p| Rendered { pos: Some(p), neg: vec![] }),
        Expr::Not { item } => match render(item, kind, dropped, false)? {
            None => None,
            Some(Rendered { pos: Some(p), neg }) if neg.is_empty() => {
                Some(Rendered { pos: None, neg: vec![p] })
            }
            Some(Rendered { pos: None, neg }) => Some(Rendered {
                pos: Some(join_or(&neg)),
                neg: vec![],
            }),
            Some(_) => {
                return Err(Error::new(
                    "query.unsupported_negation",
                    "negating a group that itself excludes terms is not supported; rewrite NOT (a -b) as (-a OR b)",
                ))
            }
        },
        Expr::And { items } => {
            let mut pos = Vec::new();
            let mut neg = Vec::new();
            let mut any = false;
            for i in items {
                if let Some(r) = render(i, kind, dropped, inflect)? {
                    any = true;
                    pos.extend(r.pos);
                    neg.extend(r.neg);
                }
            }
            if !any {
                None
            } else {
                Some(Rendered {
                    pos: if pos.is_empty() {
                        None
                    } else {
                        Some(pos.iter().map(|p| paren(p)).collect::<Vec<_>>().join(" AND "))
                    },
                    neg,
                })
            }
        }
        Expr::Or { items } => {
            let mut alts = Vec::new();
            for i in items {
                if let Some(r) = render(i, kind, dropped, inflect)? {
                    let Some(p) = r.pos else {
                        return Err(Error::new(
                            "query.unsupported_negation",
                            "an excluded term inside OR needs a positive term beside it, e.g. (a -b) OR c",
                        ));
                    };
                    alts.push(if r.neg.is_empty() {
                        paren(&p)
                    } else {
                        format!("({} NOT {})", paren(&p), paren(&join_or(&r.neg)))
                    });
                }
            }
            if alts.is_empty() {
                None
            } else {
                Some(Rendered { pos: Some(alts.join(" OR ")), neg: vec![] })
            }
        }
    })
}

fn join_or(items: &[String]) -> String {
    items
        .iter()
        .map(|p| paren(p))
        .collect::<Vec<_>>()
        .join(" OR ")
}

/// The name key of a query made only of words and phrases (all required,
/// none negated): the key an exactly matching title has. A prefix word
/// counts as typed (a search box's last word is one while the reader
/// types, and a title equal to it is still the best match).
fn exact_name_key(e: &Expr) -> Option<i64> {
    let items: Vec<&Expr> = match e {
        Expr::And { items } => items.iter().collect(),
        other => vec![other],
    };
    let mut words = Vec::new();
    for i in items {
        match i {
            Expr::Term { text, .. } | Expr::Phrase { text } => words.push(text.as_str()),
            _ => return None,
        }
    }
    name_key(&words.join(" "))
}

/// The rank of a message: per-column BM25 (see [`crate::index::BM25_K1`]
/// and [`crate::index::rank`]: one auxiliary function over the doclists,
/// with the lengths of the message's record in `message_rank`, alias `n`), times
/// [`EXACT_NAME_BOOST`] when one of the message's names is exactly the
/// query. The key is a number the planner computed, never user text.
///
/// Boost and key are bound parameters (named, so they number before the
/// WHERE clause's `?`s): the SQL text is the same for every query of a
/// shape, so prepared statements are reused.
fn message_rank(exact: Option<i64>) -> (String, Vec<SqlValue>) {
    let columns = format!(
        "{}(fts_messages, n.records, \
         (SELECT avg_title_len FROM rank_stats), (SELECT avg_keywords_len FROM rank_stats))",
        crate::index::rank::MESSAGE_RANK
    );
    match exact {
        Some(k) => (
            format!(
                "({columns} * (CASE WHEN fts_messages.rowid IN (SELECT message_id FROM message_names WHERE key = :name_key) THEN :boost ELSE 1.0 END))"
            ),
            vec![SqlValue::Integer(k), SqlValue::Real(EXACT_NAME_BOOST)],
        ),
        None => (columns, Vec::new()),
    }
}

/// The joins of the ranking records (`index::records`): a matched row's
/// record is in the row of its chunk, `rowid >> 8`.
const RANK_JOINS: [&str; 2] = [
    " JOIN message_rank n ON n.chunk = (fts_messages.rowid >> 8)",
    " JOIN code_rank k ON k.chunk = (fts_code_blocks.rowid >> 8)",
];

/// Whether generated SQL refers to table alias `alias` (`m.id`, not
/// `fts_messages.rowid`). Only planner-written SQL is scanned; user text
/// is always a bound parameter.
fn uses_alias(sql: &str, alias: char) -> bool {
    let b = sql.as_bytes();
    (0..b.len().saturating_sub(1)).any(|i| {
        b[i] == alias as u8
            && b[i + 1] == b'.'
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
    })
}

/// The FROM clause of a target, joining only the tables `sql` (everything
/// the statement says besides FROM) refers to, and the tables it joins.
/// Every message has its chat and every code block its message (the
/// builder drops rows that do not), so leaving out a join changes no
/// result; a query without filters then ranks from the doclists (and
/// `message_rank`).
fn from_clause(target: Target, fts: bool, sql: &str) -> (String, Vec<&'static str>) {
    let (c, m, b, n, k) = (
        uses_alias(sql, 'c'),
        uses_alias(sql, 'm'),
        uses_alias(sql, 'b'),
        uses_alias(sql, 'n'),
        uses_alias(sql, 'k'),
    );
    // (base table without FTS, FTS table, then joins in order: table,
    // clause, whether this statement needs it).
    type Join = (&'static str, &'static str, bool);
    let (plain, fts_table, joins): (&'static str, &str, Vec<Join>) = match target {
        Target::Chats => (
            "chats",
            "fts_chats",
            vec![("chats", " JOIN chats c ON c.id = fts_chats.rowid", fts && c)],
        ),
        Target::Messages => (
            "messages",
            "fts_messages",
            vec![
                ("message_rank", RANK_JOINS[0], fts && n),
                (
                    "messages",
                    " JOIN messages m ON m.id = fts_messages.rowid",
                    fts && (m || c),
                ),
                ("chats", " JOIN chats c ON c.id = m.chat_id", c),
            ],
        ),
        Target::CodeBlocks => (
            "code_blocks",
            "fts_code_blocks",
            vec![
                ("code_rank", RANK_JOINS[1], fts && k),
                (
                    "code_blocks",
                    " JOIN code_blocks b ON b.id = fts_code_blocks.rowid",
                    fts && (b || m || c),
                ),
                ("messages", " JOIN messages m ON m.id = b.message_id", m),
                ("chats", " JOIN chats c ON c.id = b.chat_id", c),
            ],
        ),
    };
    let (mut from, mut tables) = if fts {
        (fts_table.to_string(), Vec::new())
    } else {
        let alias = &cols(target).own_id[..1];
        (format!("{plain} {alias}"), vec![plain])
    };
    for (table, clause, wanted) in joins {
        if wanted {
            from.push_str(clause);
            tables.push(table);
        }
    }
    (from, tables)
}

/// Accumulates WHERE conditions and their parameters, in order.
#[derive(Default)]
struct Conds {
    sql: Vec<String>,
    params: Vec<SqlValue>,
}

impl Conds {
    fn push(&mut self, cond: String, params: Vec<SqlValue>) {
        self.sql.push(cond);
        self.params.extend(params);
    }
}

fn text(v: &str) -> SqlValue {
    SqlValue::Text(v.to_string())
}

/// Column expressions of one target.
struct Cols {
    own_id: &'static str,
    chat_id: &'static str,
    path: &'static str,
    language: &'static str,
    created: &'static str,
    updated: &'static str,
    size: &'static str,
    text_of_row: &'static str,
}

fn cols(target: Target) -> Cols {
    match target {
        Target::Chats => Cols {
            own_id: "c.id",
            chat_id: "c.id",
            path: "c.path",
            language: "c.language",
            created: "c.created_at",
            updated: "coalesce(c.last_updated_at, c.modified_at)",
            size: "c.num_messages",
            text_of_row: "c.name",
        },
        Target::Messages => Cols {
            own_id: "m.id",
            chat_id: "m.chat_id",
            path: "m.file_path",
            language: "m.language",
            created: "m.created_at",
            updated: "coalesce(m.updated_at, m.created_at)",
            size: "m.id",
            text_of_row: "(SELECT t.title || ' ' || t.body || ' ' || t.keywords FROM message_text t WHERE t.id = m.id)",
        },
        Target::CodeBlocks => Cols {
            own_id: "b.id",
            chat_id: "b.chat_id",
            path: "coalesce(m.file_path, c.path)",
            language: "b.language",
            created: "b.created_at",
            updated: "coalesce(m.updated_at, b.created_at)",
            size: "b.size",
            text_of_row: "(SELECT x.content FROM code_text x WHERE x.id = b.id)",
        },
    }
}

/// Translates a `*`/`?` pattern into a lower-cased GLOB pattern.
fn glob_pattern(v: &str) -> String {
    let mut out = String::new();
    for ch in v.to_lowercase().chars() {
        match ch {
            '[' => out.push_str("[[]"),
            c => out.push(c),
        }
    }
    out
}

fn has_wildcard(v: &str) -> bool {
    v.contains('*') || v.contains('?')
}

/// The SQL condition for one filter on one target; `None` when the field
/// does not exist on that target.
fn filter_cond(target: Target, f: &Filter) -> Option<(String, Vec<SqlValue>)> {
    let c = cols(target);
    let column: &str = match f.field {
        Field::ChatId => "c.id",
        Field::Name => "c.name",
        Field::MsgId => match target {
            Target::Chats => return None,
            Target::Messages => "m.id",
            Target::CodeBlocks => "b.message_id",
        },
        Field::BlockId => match target {
            Target::CodeBlocks => "b.uuid",
            _ => return None,
        },
        Field::GitPath => c.path,
        Field::MsgType => match target {
            Target::Chats => return None,
            _ => "m.type",
        },
        Field::ChatType => "c.type",
        Field::Lang => c.language,
        Field::Role => match target {
            Target::Chats => return None,
            _ => "m.role",
        },
        Field::Repo => "c.repo",
    };
    let values = match &f.value {
        FilterValue::Null => return Some((format!("({column} IS NULL OR {column} = '')"), vec![])),
        FilterValue::NotNull => {
            return Some((format!("({column} IS NOT NULL AND {column} <> '')"), vec![]))
        }
        FilterValue::AnyOf(v) => v,
    };
    let mut alts = Vec::new();
    let mut params = Vec::new();
    for v in values {
        match f.field {
            Field::ChatId | Field::MsgId => {
                alts.push(format!("{column} = ?"));
                params.push(SqlValue::Integer(v.parse().unwrap_or(i64::MIN)));
            }
            Field::BlockId => {
                alts.push(format!("lower({column}) = ?"));
                params.push(text(&v.to_lowercase()));
            }
            Field::Name => {
                if has_wildcard(v) {
                    alts.push(format!("lower({column}) GLOB ?"));
                    params.push(text(&glob_pattern(v)));
                } else {
                    alts.push(format!("instr(lower({column}), ?) > 0"));
                    params.push(text(&v.to_lowercase()));
                }
            }
            Field::GitPath => {
                let v = v.trim_start_matches("./").trim_start_matches('/');
                if has_wildcard(v) {
                    alts.push(format!("lower({column}) GLOB ?"));
                    params.push(text(&glob_pattern(v)));
                } else {
                    let v = v.trim_end_matches('/');
                    alts.push(format!("(lower({column}) = ? OR lower({column}) GLOB ?)"));
                    params.push(text(&v.to_lowercase()));
                    params.push(text(&format!("{}/*", glob_pattern(v))));
                }
            }
            Field::MsgType => {
                alts.push(format!("({column} = ? OR {column} GLOB ?)"));
                params.push(text(v));
                params.push(text(&format!("{}::*", glob_pattern(v))));
            }
            Field::ChatType => {
                if has_wildcard(v) {
                    alts.push(format!("{column} GLOB ?"));
                    params.push(text(&glob_pattern(v)));
                } else {
                    alts.push(format!("{column} = ?"));
                    params.push(text(v));
                }
            }
            Field::Lang => {
                alts.push(format!("{column} = ?"));
                params.push(text(&canonical_language(v)));
            }
            Field::Role => {
                alts.push(format!("{column} = ?"));
                params.push(text(&v.to_lowercase()));
            }
            Field::Repo => {
                alts.push(format!("lower({column}) = ?"));
                params.push(text(&v.to_lowercase()));
            }
        }
    }
    Some((format!("({})", alts.join(" OR ")), params))
}

/// For a query of two or more required terms, the phrase bits of each
/// (in the order [`any_term`] renders them, which is the order of FTS5's
/// phrase numbers): a section's page holds every term when, for each
/// term, some section of the page has one of its bits. `None` when
/// judging per page cannot change the answer (one term, or an `OR`) or
/// there are more phrases than a mask holds.
fn page_terms(e: &Expr, kind: TokenizerKind, inflect: bool) -> Result<Option<Vec<i64>>> {
    let Expr::And { items } = e else {
        return Ok(None);
    };
    let mut masks = Vec::new();
    let mut next = 0usize;
    for item in items.iter().filter(|i| !matches!(i, Expr::Not { .. })) {
        let Some(Rendered { pos: Some(p), .. }) = render(item, kind, &mut Vec::new(), inflect)?
        else {
            continue;
        };
        let n = fts_phrases(&p).len();
        if next + n > crate::index::rank::MAX_MASKED_PHRASES {
            return Ok(None);
        }
        masks.push(((1i64 << n) - 1) << next);
        next += n;
    }
    Ok((masks.len() >= 2).then_some(masks))
}

/// A section matched by a search judged per page: its id, rank, page
/// and the phrases it holds (see [`TargetSql::page_terms`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PageSection {
    pub id: i64,
    pub rank: f64,
    pub page: i64,
    pub phrases: i64,
}

/// How much a section holding some of the terms counts against one
/// holding them all, on a page holding them all: its rank times (terms it
/// holds / terms) to this power. The section naming the rarest term in its
/// heading still beats a passing mention of every term, while a heading
/// with every word of a multi-word query keeps its place.
pub const PAGE_COVERAGE_EXPONENT: i32 = 2;

/// The sections whose page holds every term (for each of `terms`, a
/// term's phrase bits, some section of the page holds one of its
/// phrases), best first: ranks (negative, lower is better) scaled by
/// [`PAGE_COVERAGE_EXPONENT`].
///
/// ```
/// use gitsense_engine::plan::{keep_by_page, PageSection};
/// let s = |id, page, phrases| PageSection { id, rank: -1.0, page, phrases };
/// // Terms: phrase 0, phrase 1. Page 7 holds both (in two sections),
/// // page 8 only the first.
/// let kept = keep_by_page(vec![s(1, 7, 0b01), s(2, 8, 0b01), s(3, 7, 0b10)], &[0b01, 0b10]);
/// assert_eq!(kept.iter().map(|s| s.id).collect::<Vec<_>>(), vec![1, 3]);
/// // A section holding both terms outranks one as good holding one.
/// let both = PageSection { phrases: 0b11, ..s(4, 9, 0) };
/// let kept = keep_by_page(vec![s(5, 9, 0b01), both], &[0b01, 0b10]);
/// assert_eq!(kept.iter().map(|s| s.id).collect::<Vec<_>>(), vec![4, 5]);
/// ```
pub fn keep_by_page(sections: Vec<PageSection>, terms: &[i64]) -> Vec<PageSection> {
    let mut held: std::collections::HashMap<i64, i64> = std::collections::HashMap::new();
    for s in &sections {
        *held.entry(s.page).or_default() |= s.phrases;
    }
    let mut kept: Vec<PageSection> = sections
        .into_iter()
        .filter(|s| terms.iter().all(|t| held[&s.page] & t != 0))
        .map(|mut s| {
            let covered = terms.iter().filter(|t| s.phrases & *t != 0).count();
            s.rank *= (covered as f64 / terms.len() as f64).powi(PAGE_COVERAGE_EXPONENT);
            s
        })
        .collect();
    kept.sort_by(|a, b| a.rank.total_cmp(&b.rank).then(a.id.cmp(&b.id)));
    kept
}

/// The statements of a message search judged per page: the FTS5
/// expression `expr` matches sections holding any term; `page_sql` gives
/// every one, best first, with its page (`gs_message_page`) and the
/// phrases it holds (`gs_phrase_mask`), and the executor keeps the
/// sections of pages holding every term ([`TargetSql::page_terms`]).
/// (The browser's SQLite has no window functions to do it in SQL, and a
/// grouped second statement would match every doclist twice.)
#[allow(clippy::too_many_arguments)]
fn page_sql(
    expr: &str,
    phrase_weights: Vec<f64>,
    masks: Vec<i64>,
    rank: &str,
    rank_params: Vec<SqlValue>,
    params: Vec<SqlValue>,
    where_sql: &str,
    exact: Option<i64>,
) -> TargetSql {
    use crate::index::rank::{MESSAGE_PAGE, PHRASE_MASK};
    let select = format!(
        "SELECT fts_messages.rowid AS id, {rank} AS r, \
         {MESSAGE_PAGE}(fts_messages, n.records), {PHRASE_MASK}(fts_messages)"
    );
    let (from, tables) = from_clause(Target::Messages, true, &format!("{select} {where_sql}"));
    TargetSql {
        // Sections holding any term; never run, as the search is counted
        // by the executor (`counted_by_rank`), which counts what it keeps.
        count_sql: format!("SELECT count(*) FROM {from}{where_sql}"),
        // Facets count over the sections holding any term: the per-page
        // judgement happens in the executor, after SQL.
        ids_sql: format!("SELECT fts_messages.rowid FROM {from}{where_sql}"),
        page_sql: format!(
            "{select} FROM {from}{where_sql} ORDER BY r, fts_messages.rowid LIMIT ? OFFSET ?"
        ),
        params,
        rank_params,
        phrases: fts_phrases(expr),
        phrase_weights,
        fts: Some(expr.to_string()),
        tables,
        name_key: exact,
        counted_by_rank: true,
        page_terms: Some(masks),
    }
}

/// What a row must pass besides SQL's own comparisons, tested by the
/// engine's SQL functions: `option:regex` patterns, `meta:` filters.
#[derive(Clone, Copy)]
struct RowTests<'a> {
    patterns: Option<&'a Expr>,
    meta: &'a [crate::meta::MetaFilter],
    nav: &'a crate::gitnav::GitNav,
}

#[allow(clippy::too_many_arguments)]
fn plan_target(
    target: Target,
    expr: Option<&Expr>,
    (corpus, match_mode): (Corpus, MatchMode),
    filters: &[Filter],
    scope: Scope,
    current_chat: Option<i64>,
    sort: &[SortKey],
    case_sensitive: bool,
    tests: RowTests,
    exact: Option<i64>,
    warnings: &mut Vec<String>,
    hint: &mut Option<String>,
) -> Result<TargetPlan> {
    let skipped = |why: String| TargetPlan {
        target,
        sql: None,
        skipped: Some(why),
    };
    let c = cols(target);
    let (fts_table, (rank_expr, rank_expr_params), kind) = match target {
        Target::Chats => (
            "fts_chats",
            ("bm25(fts_chats)".to_string(), vec![]),
            TokenizerKind::Words,
        ),
        Target::Messages => ("fts_messages", message_rank(exact), TokenizerKind::Words),
        Target::CodeBlocks => (
            "fts_code_blocks",
            (
                format!(
                    "{}(fts_code_blocks, k.records)",
                    crate::index::rank::CODE_RANK
                ),
                vec![],
            ),
            TokenizerKind::Trigram,
        ),
    };
    let mut conds = Conds::default();
    let mut fts = None;
    let mut rank = "0.0".to_string();
    let mut rank_params: Vec<SqlValue> = Vec::new();
    let by_rank = sort.first().is_none_or(|k| k.field == SortField::FtsRank);
    let doc_site = corpus == Corpus::DocSite;
    let (inflect, by_page) = (doc_site, doc_site && match_mode == MatchMode::AllTerms);
    let page_terms = match expr {
        Some(e) if by_page && by_rank && target == Target::Messages => {
            page_terms(e, kind, inflect)?
        }
        _ => None,
    };
    if let Some(e) = expr {
        let mut dropped = Vec::new();
        let rendered = match &page_terms {
            Some(_) => render(&any_term(e), kind, &mut dropped, inflect)?,
            None => render(e, kind, &mut dropped, inflect)?,
        };
        if !dropped.is_empty() {
            if kind == TokenizerKind::Trigram {
                let msg = format!(
                    "code blocks are searched by substrings of at least {TRIGRAM_MIN_CHARS} characters; {} shorter than that {} not searched in code blocks",
                    dropped.iter().map(|d| format!("'{d}'")).collect::<Vec<_>>().join(", "),
                    if dropped.len() == 1 { "was" } else { "were" }
                );
                *hint = Some(msg);
            } else {
                let w = format!(
                    "ignored terms without letters or digits: {}",
                    dropped.join(", ")
                );
                if !warnings.contains(&w) {
                    warnings.push(w);
                }
            }
        }
        match rendered {
            None => {
                return Ok(skipped(format!(
                    "no searchable term for {} remains",
                    target.name()
                )))
            }
            Some(Rendered { pos: Some(p), neg }) => {
                let expr = if neg.is_empty() {
                    p
                } else {
                    format!("{} NOT {}", paren(&p), paren(&join_or(&neg)))
                };
                conds.push(format!("{fts_table} MATCH ?"), vec![text(&expr)]);
                fts = Some(expr);
                rank = rank_expr;
                rank_params = rank_expr_params;
            }
            Some(Rendered { pos: None, neg }) => {
                conds.push(
                    format!(
                        "{} NOT IN (SELECT rowid FROM {fts_table} WHERE {fts_table} MATCH ?)",
                        c.own_id
                    ),
                    vec![text(&join_or(&neg))],
                );
            }
        }
        if case_sensitive {
            for lit in e.positive_literals() {
                if let Some(t) = lit.literal_text() {
                    conds.push(format!("instr({}, ?) > 0", c.text_of_row), vec![text(t)]);
                }
            }
        }
    }

    for f in filters {
        match filter_cond(target, f) {
            None if f.negated => {}
            None => {
                return Ok(skipped(format!(
                    "the {}: filter does not apply to {}",
                    crate::query::syntax::spec_for(f.field).name,
                    target.name()
                )))
            }
            Some((sql, params)) => {
                if f.negated {
                    conds.push(format!("NOT coalesce({sql}, 0)"), params);
                } else {
                    conds.push(sql, params);
                }
            }
        }
    }

    if let Some(p) = tests.patterns {
        let (sql, params) = crate::pattern::condition(p, c.text_of_row, case_sensitive);
        conds.push(sql, params);
    }
    if !tests.meta.is_empty() && target != Target::Messages {
        return Ok(skipped(format!(
            "the meta: filter applies to messages (analyzer metadata), not {}",
            target.name()
        )));
    }
    if let Some((sql, params)) = tests.nav.condition() {
        if target != Target::Chats {
            return Ok(skipped(format!(
                "the git-nav keys list chats (owners, repositories, branches, trees, files), not {}",
                target.name()
            )));
        }
        conds.push(sql, params);
    }
    for f in tests.meta {
        let (sql, params) = f.condition("(SELECT t.meta FROM message_text t WHERE t.id = m.id)");
        conds.push(sql, params);
    }

    if let (Some(cur), true) = (current_chat, scope != Scope::AllChats) {
        match scope {
            Scope::CurrentChat => {
                conds.push(format!("{} = ?", c.chat_id), vec![SqlValue::Integer(cur)])
            }
            Scope::CurrentChatAndBranches => conds.push(
                "instr(c.lineage, ?) > 0".to_string(),
                vec![text(&format!("/{cur}/"))],
            ),
            Scope::ConnectedChats => conds.push(
                "c.root_id = (SELECT root_id FROM chats WHERE id = ?)".to_string(),
                vec![SqlValue::Integer(cur)],
            ),
            Scope::AllChats => {}
        }
    }

    let where_sql = if conds.sql.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conds.sql.join(" AND "))
    };
    // With FTS the row id is the FTS rowid: no table needs joining for it.
    let own_id = if fts.is_some() {
        format!("{fts_table}.rowid")
    } else {
        c.own_id.to_string()
    };
    let mut order: Vec<String> = sort
        .iter()
        .map(|k| {
            let col = match k.field {
                SortField::FtsRank => "r".to_string(),
                SortField::CreatedAt => c.created.to_string(),
                SortField::UpdatedAt => c.updated.to_string(),
                SortField::Name => "c.name COLLATE NOCASE".to_string(),
                SortField::Id => own_id.clone(),
                SortField::Size => c.size.to_string(),
                SortField::Path => c.path.to_string(),
            };
            format!("{col}{}", if k.descending { " DESC" } else { "" })
        })
        .collect();
    order.push("r".into());
    order.push(own_id.clone());
    let order = order.join(", ");
    if let (Some(masks), Some(expr), Some(expr_of_terms)) = (&page_terms, &fts, expr) {
        return Ok(TargetPlan {
            target,
            sql: Some(page_sql(
                expr,
                phrase_weights(expr_of_terms, &fts_phrases(expr)),
                masks.clone(),
                &rank,
                rank_params,
                conds.params,
                &where_sql,
                exact,
            )),
            skipped: None,
        });
    }
    let (count_from, _) = from_clause(target, fts.is_some(), &where_sql);
    let (page_from, tables) = from_clause(
        target,
        fts.is_some(),
        &format!("{own_id} {rank} {where_sql} {order}"),
    );
    Ok(TargetPlan {
        target,
        sql: Some(TargetSql {
            count_sql: format!("SELECT count(*) FROM {count_from}{where_sql}"),
            ids_sql: format!("SELECT {own_id} FROM {count_from}{where_sql}"),
            page_sql: format!(
                "SELECT {own_id} AS id, {rank} AS r FROM {page_from}{where_sql} ORDER BY {order} LIMIT ? OFFSET ?"
            ),
            params: conds.params,
            rank_params,
            name_key: if target == Target::Messages && fts.is_some() { exact } else { None },
            counted_by_rank: fts.is_some() && target != Target::Chats && by_rank,
            phrase_weights: match (expr, &fts) {
                (Some(e), Some(f)) => phrase_weights(e, &fts_phrases(f)),
                _ => Vec::new(),
            },
            phrases: fts.as_deref().map(fts_phrases).unwrap_or_default(),
            fts,
            tables,
            page_terms: None,
        }),
        skipped: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::parse;

    /// The SQL planned for one target of a query (default options).
    fn sql_of(q: &str, target: Target) -> Option<TargetSql> {
        let q = parse(q, &profiles::exists).unwrap();
        let p = plan(&q, &SearchOptions::default(), MatchMode::AllTerms).unwrap();
        p.target_plans
            .into_iter()
            .find(|t| t.target == target)
            .and_then(|t| t.sql)
    }

    fn fts_of(q: &str, target: Target) -> Option<String> {
        sql_of(q, target).and_then(|s| s.fts)
    }

    #[test]
    fn phrases_come_in_fts5_order_as_written() {
        assert_eq!(
            fts_phrases(r#"("a" AND "b c"*) NOT ("say ""hi""" OR "é")"#),
            [r#""a""#, r#""b c"*"#, r#""say ""hi""""#, r#""é""#]
        );
        assert_eq!(fts_phrases(""), Vec::<String>::new());
        let sql = sql_of("json -dumps \"event loop\" pay*", Target::Messages).unwrap();
        assert_eq!(sql.phrases.len(), 4, "{:?}", sql.fts);
        assert_eq!(sql.phrases.concat().matches('"').count(), 8);
    }

    #[test]
    fn only_rank_sorted_fts_plans_of_messages_and_code_are_counted_by_their_ranking() {
        let counted = |q: &str, t: Target| sql_of(q, t).map(|s| s.counted_by_rank);
        assert_eq!(counted("payment", Target::Messages), Some(true));
        assert_eq!(counted("payment", Target::CodeBlocks), Some(true));
        assert_eq!(
            counted("payment sort:fts_rank:desc", Target::Messages),
            Some(true)
        );
        // bm25() of chats keeps count(*); so do other sorts (an index in
        // sort order may let a LIMIT stop early) and plans without words.
        assert_eq!(counted("payment", Target::Chats), Some(false));
        assert_eq!(
            counted("payment sort:updated_at:desc", Target::Messages),
            Some(false)
        );
        assert_eq!(counted("msg-type:regular", Target::Messages), Some(false));
        assert_eq!(counted("-payment", Target::Messages), Some(false));
    }

    #[test]
    fn user_text_becomes_quoted_fts_strings() {
        // FTS5 syntax typed by the user is searched for, never executed.
        assert_eq!(
            fts_of("NEAR(a b) x*y", Target::Messages).unwrap(),
            "\"NEAR\" AND (\"a\" AND \"b\") AND \"x*y\""
        );
        assert_eq!(
            fts_of("a\"b cat*", Target::Messages).unwrap(),
            "\"a\"\"b\" AND \"cat\"*"
        );
    }

    #[test]
    fn a_prefix_too_short_to_expand_is_searched_as_the_whole_word() {
        assert_eq!(
            fts_of("c* -(ab* OR tok*)", Target::Messages).unwrap(),
            "\"c\" NOT (\"ab\" OR \"tok\"*)"
        );
        let p = plan_text("docker c*", &SearchOptions::default()).unwrap().1;
        assert!(p.narrowed);
        assert_eq!(p.effective_expr.as_deref(), Some("docker c"));
        let hint = p.hint.unwrap();
        assert!(hint.contains("'c*' as the word 'c'"), "{hint}");
        let p = plan_text("doc*", &SearchOptions::default()).unwrap().1;
        assert!(!p.narrowed);
        assert_eq!(p.hint, None);
    }

    #[test]
    fn negation_renders_as_fts_not() {
        assert_eq!(
            fts_of("payment -stripe", Target::Messages).unwrap(),
            "\"payment\" NOT \"stripe\""
        );
        assert_eq!(
            fts_of("(pay OR card) NOT stripe", Target::Messages).unwrap(),
            "(\"pay\" OR \"card\") NOT \"stripe\""
        );
    }

    #[test]
    fn short_terms_are_dropped_for_code_blocks_with_a_hint() {
        let q = parse("fn parse", &profiles::exists).unwrap();
        let p = plan(&q, &SearchOptions::default(), MatchMode::AllTerms).unwrap();
        assert!(p.hint.unwrap().contains("'fn'"));
        let code = p
            .target_plans
            .iter()
            .find(|t| t.target == Target::CodeBlocks)
            .unwrap();
        assert_eq!(code.sql.as_ref().unwrap().fts.as_deref(), Some("\"parse\""));
    }

    /// The SQL planned for one target of a query on a documentation site.
    fn doc_sql_of(q: &str, target: Target) -> Option<TargetSql> {
        let q = parse(q, &profiles::exists).unwrap();
        let opts = SearchOptions::default();
        let p = plan_in(&q, &opts, MatchMode::AllTerms, Corpus::DocSite).unwrap();
        p.target_plans
            .into_iter()
            .find(|t| t.target == target)
            .and_then(|t| t.sql)
    }

    #[test]
    fn words_on_a_doc_site_are_searched_with_their_inflections_weighted_down() {
        let sql = doc_sql_of("connections", Target::Messages).unwrap();
        let fts = sql.fts.unwrap();
        assert!(fts.starts_with("(\"connections\" OR "), "{fts}");
        assert!(fts.contains("\"connection\"") && fts.contains("\"connecting\""));
        assert_eq!(sql.phrases.len(), sql.phrase_weights.len());
        for (p, w) in sql.phrases.iter().zip(&sql.phrase_weights) {
            assert_eq!(*w == 1.0, p == "\"connections\"", "{p}: {w}");
        }
        let fts_of = |q: &str, t: Target| doc_sql_of(q, t).unwrap().fts.unwrap();
        // Phrases, prefixes and identifiers are searched as typed, and so
        // is an excluded word; code blocks (trigrams: substrings) too.
        assert_eq!(
            fts_of("\"connections\"", Target::Messages),
            "\"connections\""
        );
        assert_eq!(fts_of("connections*", Target::Messages), "\"connections\"*");
        assert_eq!(fts_of("HashMap", Target::Messages), "\"HashMap\"");
        assert!(fts_of("pool -connections", Target::Messages).ends_with("NOT \"connections\""));
        assert_eq!(fts_of("connections", Target::CodeBlocks), "\"connections\"");
        // GitSense chats are searched as GitSense does, words as written.
        assert_eq!(fts_of_chats("connections"), "\"connections\"");
    }

    fn fts_of_chats(q: &str) -> String {
        fts_of(q, Target::Messages).unwrap()
    }

    #[test]
    fn all_terms_on_a_doc_site_are_judged_per_page() {
        // Two terms: their phrases (with inflections) as two masks, the
        // expression any of them, the statement giving page and phrases.
        let sql = doc_sql_of("Lock classes", Target::Messages).unwrap();
        let terms = sql.page_terms.clone().unwrap();
        assert_eq!(terms.len(), 2);
        assert_eq!(terms[0] & terms[1], 0);
        assert_eq!(
            (terms[0] | terms[1]).count_ones() as usize,
            sql.phrases.len()
        );
        assert!(sql.fts.unwrap().contains(" OR "));
        assert!(
            sql.page_sql.contains("gs_message_page(") && sql.page_sql.contains("gs_phrase_mask(")
        );
        // One term, an OR, a sort other than rank, another target or a
        // GitSense index: matched per section as before.
        for q in [
            "Lock",
            "Lock OR classes",
            "Lock classes sort:updated_at:desc",
        ] {
            assert!(
                doc_sql_of(q, Target::Messages)
                    .unwrap()
                    .page_terms
                    .is_none(),
                "{q}"
            );
        }
        assert!(doc_sql_of("Lock classes", Target::CodeBlocks)
            .unwrap()
            .page_terms
            .is_none());
        assert!(sql_of("Lock classes", Target::Messages)
            .unwrap()
            .page_terms
            .is_none());
    }

    #[test]
    fn stop_words_are_ignored_beside_real_terms() {
        assert_eq!(
            fts_of("the payment", Target::Messages).unwrap(),
            "\"payment\""
        );
        assert_eq!(fts_of("the", Target::Messages).unwrap(), "\"the\"");
    }

    #[test]
    fn filter_targets_in_the_syntax_table_match_the_planner() {
        for spec in crate::query::syntax::FILTERS {
            let q = parse(spec.example, &profiles::exists).unwrap();
            for target in Target::ALL {
                assert_eq!(
                    filter_cond(target, &q.filters[0]).is_some(),
                    spec.targets.contains(&target),
                    "{} on {}",
                    spec.name,
                    target.name()
                );
            }
        }
    }

    #[test]
    fn exact_names_boost_plain_word_queries_only() {
        let messages_sql = |q: &str| sql_of(q, Target::Messages).unwrap();
        let page_sql = |q: &str| messages_sql(q).page_sql;
        let rank_params = |q: &str| messages_sql(q).rank_params;
        let key = name_key("os path join").unwrap();
        for q in ["os.path.join", "os path join"] {
            assert!(page_sql(q).contains("WHERE key = :name_key)"));
            assert!(rank_params(q).contains(&SqlValue::Integer(key)));
        }
        // The SQL text does not depend on the words: statements are reused.
        assert_eq!(page_sql("os.path.join"), page_sql("json dumps"));
        for q in ["a OR b", "join -str"] {
            assert!(!page_sql(q).contains("message_names"), "{q}");
        }
        // A prefix word counts as typed (a search box's word in progress).
        assert!(page_sql("join*").contains("message_names"));
    }

    #[test]
    fn only_the_tables_a_query_needs_are_joined() {
        let sql_of = |q: &str, target: Target| sql_of(q, target).unwrap();
        // Plain words: ranking reads FTS5's tables and, for messages and
        // code blocks, their ranking records; counting reads FTS5's tables
        // only.
        let m = sql_of("payment", Target::Messages);
        assert_eq!(m.tables, vec!["message_rank"]);
        assert_eq!(
            m.count_sql,
            "SELECT count(*) FROM fts_messages WHERE fts_messages MATCH ?"
        );
        assert!(
            m.page_sql.starts_with("SELECT fts_messages.rowid AS id"),
            "{}",
            m.page_sql
        );
        let s = sql_of("payment", Target::Chats);
        assert!(s.tables.is_empty(), "{:?}", s.tables);
        assert!(!s.page_sql.contains(" JOIN "), "{}", s.page_sql);
        let b = sql_of("payment", Target::CodeBlocks);
        assert_eq!(b.tables, vec!["code_rank"]);
        assert!(!b.count_sql.contains(" JOIN "), "{}", b.count_sql);
        // Filters bring in the tables they read, and what links to them.
        let m = sql_of("payment chat-type:regular", Target::Messages);
        assert_eq!(m.tables, vec!["message_rank", "messages", "chats"]);
        assert!(
            m.count_sql.contains("JOIN chats c ON c.id = m.chat_id"),
            "{}",
            m.count_sql
        );
        let b = sql_of("payment role:user", Target::CodeBlocks);
        assert_eq!(b.tables, vec!["code_rank", "code_blocks", "messages"]);
        let b = sql_of("payment lang:js", Target::CodeBlocks);
        assert_eq!(b.tables, vec!["code_rank", "code_blocks"]);
        // Without words: the rows themselves, as before.
        let m = sql_of("role:user", Target::Messages);
        assert!(
            m.count_sql
                .starts_with("SELECT count(*) FROM messages m WHERE"),
            "{}",
            m.count_sql
        );
        // A table name ending in a letter that is also an alias is no use
        // of that alias.
        assert!(!uses_alias("fts_messages.rowid", 's'));
        assert!(uses_alias("(m.id = 1)", 'm'));
        assert!(!uses_alias("bm25(fts_code_blocks)", 'b'));
        for join in RANK_JOINS {
            assert!(
                join.contains(&format!("rowid >> {})", crate::index::records::CHUNK_SHIFT)),
                "{join}"
            );
        }
    }

    #[test]
    fn scope_needs_a_current_chat() {
        let q = parse("x scope:current-chat", &profiles::exists).unwrap();
        let e = plan(&q, &SearchOptions::default(), MatchMode::AllTerms).unwrap_err();
        assert_eq!(e.code, "options.current_chat_required");
    }
}
