//! [`Query`] + [`SearchOptions`] → one SQL plan per target, with bound
//! parameters and a safely quoted FTS5 expression.
//!
//! Query text never reaches SQL: filter values, ids and patterns are bound
//! parameters, and every keyword or phrase becomes an FTS5 string literal
//! (`"..."` with inner quotes doubled), so FTS5 operators, column filters,
//! `NEAR(` or `*` typed by the user are searched for, not executed. The
//! boolean structure comes only from the parsed `Expr`.

use crate::error::{Error, Result};
use crate::index::rank::{CODE_RANK, MESSAGE_PAGE, MESSAGE_RANK, MESSAGE_SECTION};
use crate::index::schema::chats::qualified as c;
use crate::index::schema::code_blocks::qualified as b;
use crate::index::schema::code_rank::qualified as k;
use crate::index::schema::code_text::qualified as x;
use crate::index::schema::message_rank::qualified as n;
use crate::index::schema::message_text::qualified as t;
use crate::index::schema::messages::qualified as m;
use crate::index::schema::{
    chats, code_blocks, code_rank, code_text, fts_chats, fts_code_blocks, fts_messages,
    message_names, message_rank, message_text, messages, rank_stats,
};
use crate::index::{name_key, EXACT_NAME_BOOST, TRIGRAM_MIN_CHARS};
use crate::model::canonical_language;
use crate::morphology;
use crate::profiles::{self, Profile};
use crate::query::ast::*;
use crate::query::searchbox;
use crate::query::syntax::STOP_WORDS;
use const_format::formatcp;
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
    /// snippet, 1 to `MAX_SNIPPET_TOKENS`; default 12 (a search box's
    /// list shows about 30).
    pub snippet_tokens: Option<u32>,
    /// Facets to count over the matches, each `FIELD` or `FIELD:TYPE` as
    /// `insight-field:` takes them ([`crate::facets`]).
    pub facets: Vec<String>,
    /// Milliseconds this search may work, overriding the engine's budget
    /// (`Engine::set_time_budget`); 0: no bound.
    pub time_budget_ms: Option<u64>,
    /// The reader's language (`en`, `fr`, `pt-BR`): on a site that ships
    /// pages in several languages, matches on pages in it come first
    /// ([`crate::langs`]); default: the site's own language.
    pub lang: Option<String>,
}

/// How query text is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum QueryMode {
    /// The query language; malformed text is an error with a position.
    #[default]
    Strict,
    /// What a reader types into a search box: never an error (see
    /// `crate::query::searchbox`); a text with no word and no filter
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
            lang: None,
        }
    }
}

/// Most results per target and page.
pub(crate) const MAX_PER_PAGE: u64 = 1000;

/// Most tokens in a snippet (FTS5's `snippet()` takes at most 64).
pub(crate) const MAX_SNIPPET_TOKENS: u32 = 64;

/// Whether every term must match or any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MatchMode {
    AllTerms,
    AnyTerm,
}

/// What the index holds, which decides how words are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Corpus {
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
    pub(crate) fn of(info: &crate::index::IndexInfo) -> Corpus {
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
    /// offset are the last two parameters, appended by the executor), or
    /// every section unordered for a plan judged per page (`page_terms`).
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
    /// The phrases of `fts` in FTS5's order (`fts_phrases`).
    pub phrases: Vec<String>,
    /// The ranking weight of each of `phrases`: below 1 for the
    /// inflections the planner added (`crate::morphology`).
    pub phrase_weights: Vec<f64>,
    /// Set when sections are judged per page
    /// (`MatchMode::AllTermsByPage`): the phrase bits of each term.
    /// `page_sql` then scores every section holding any term, unordered
    /// and without limit or offset parameters, its ranking function
    /// handing each one's rank, page and the phrases it holds (bit `i`:
    /// phrase `i`) to the executor through the tally; a result is a
    /// section whose page's sections together hold, for every term, one of
    /// its bits ([`keep_by_page`], which orders them); the executor pages
    /// what it keeps.
    pub page_terms: Option<Vec<i64>>,
    /// How the engine ranks this target without SQLite
    /// ([`crate::reader`]), when its statements ask nothing of SQL but the
    /// `MATCH` and the ranking: no filter, no row test, ranked first.
    pub reader: Option<ReaderRank>,
    /// With `page_terms`: an FTS5 expression for each term, matching the
    /// sections holding it (whatever else the query asks). The sections
    /// of a page holding every term include one matching each; the
    /// executor finds the pages of the rarest term's sections first and
    /// scores only theirs.
    pub page_term_fts: Vec<String>,
}

/// What [`TargetSql::page_sql`] computes, for the reader that runs it
/// without SQLite ([`TargetSql::reader`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReaderRank {
    /// Messages by `gs_message_rank` (times the exact-name boost when
    /// [`TargetSql::name_key`] is set), then id.
    Messages,
    /// Sections by `gs_message_section`, judged per page
    /// ([`TargetSql::page_terms`]).
    Sections,
    /// Code blocks by `gs_code_rank`, then id.
    CodeBlocks,
    /// Chats by FTS5's `bm25()`, then id.
    Chats,
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
    /// conditions', then limit and offset (none for a plan judged per
    /// page, [`TargetSql::page_terms`], which gives every section).
    pub fn page_params(&self, limit: u64, offset: u64) -> Vec<SqlValue> {
        let mut params = self.rank_params.clone();
        params.extend(self.params.iter().cloned());
        if self.page_terms.is_none() {
            params.push(SqlValue::Integer(limit as i64));
            params.push(SqlValue::Integer(offset as i64));
        }
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
    pub(crate) skipped: Option<String>,
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
    pub(crate) query: Query,
    pub(crate) profile: Profile,
    pub(crate) targets: Vec<Target>,
    pub(crate) scope: Scope,
    pub(crate) filters: Vec<Filter>,
    pub(crate) sort: Vec<SortKey>,
    pub per_page: u64,
    pub page: u64,
    pub(crate) match_mode: MatchMode,
    pub target_plans: Vec<TargetPlan>,
    pub(crate) hint: Option<String>,
    pub(crate) warnings: Vec<String>,
    /// The expression actually searched, in query syntax.
    pub(crate) effective_expr: Option<String>,
    /// The expression searched matches less than the query asked for (a
    /// prefix too short to search as one was searched as a whole word):
    /// results say `truncated`.
    pub(crate) narrowed: bool,
}

/// [`plan_text_in`] for an index of chats.
#[cfg(test)]
pub(crate) fn plan_text(text: &str, opts: &SearchOptions) -> Result<(Query, Plan)> {
    plan_text_in(text, opts, Corpus::Chats)
}

/// Query text → its query and all-terms plan for an index holding
/// `corpus`, read as `opts.mode` says. In box mode a text the grammar
/// refuses, or whose reading cannot be planned (a directive the caller's
/// options do not support, a negation FTS5 cannot express), is read
/// literally; only errors in `opts` remain.
pub(crate) fn plan_text_in(
    text: &str,
    opts: &SearchOptions,
    corpus: Corpus,
) -> Result<(Query, Plan)> {
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
pub(crate) fn plan_in(
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
    let inputs = TargetInputs {
        expr: expr.as_ref(),
        corpus,
        match_mode,
        filters: &filters,
        scope,
        current_chat: opts.current_chat_id,
        sort: &sort,
        case_sensitive: query.case_sensitive,
        tests: RowTests {
            patterns,
            meta: &query.meta_filters,
            nav: &query.git_nav,
        },
        exact,
    };
    let mut target_plans = Vec::new();
    for &target in &Target::ALL {
        if !targets.contains(&target) {
            continue;
        }
        let notes = Notes {
            warnings: &mut warnings,
            hint: &mut hint,
        };
        target_plans.push(plan_target(target, &inputs, notes)?);
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

/// The most names of a path the any-term reading looks for one by one.
const MAX_NAME_WORDS: usize = 16;

/// Whether the any-term fallback can change anything for this query: it
/// has two or more positive words, counting each name of a path
/// (`os.path.exists`) on its own.
pub(crate) fn can_fall_back(query: &Query) -> bool {
    if query.regex {
        // Patterns are not words: matching any of them is another query.
        return false;
    }
    let positives = |items: &[Expr]| -> usize {
        items
            .iter()
            .filter(|i| !matches!(i, Expr::Not { .. }))
            .map(|i| name_words(i).len())
            .sum()
    };
    match &query.expr {
        Some(Expr::And { items }) => positives(items) >= 2,
        Some(e @ Expr::Term { .. }) => positives(std::slice::from_ref(e)) >= 2,
        _ => false,
    }
}

/// A path of names (`os.path.exists`, `std::mem::swap`, `Connection.xNext`)
/// as its names, the last one keeping a prefix's `*`; anything else as it
/// is. The full-text index finds a path only where its names stand
/// together in that order: the any-term reading looks for each of them.
/// A name joined by `_` or `-` (`nonexistent_xyz_function`, `--onto`) is
/// one identifier, not a path: it stays whole, as does a path of more
/// names than [`MAX_NAME_WORDS`].
fn name_words(e: &Expr) -> Vec<Expr> {
    let Expr::Term { text, prefix } = e else {
        return vec![e.clone()];
    };
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .collect();
    if words.len() < 2 || words.len() > MAX_NAME_WORDS {
        return vec![e.clone()];
    }
    let last = words.len() - 1;
    words
        .into_iter()
        .enumerate()
        .map(|(i, w)| Expr::Term {
            text: w.to_string(),
            prefix: *prefix && i == last,
        })
        .collect()
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
            // Names split into their words, unless that makes more terms
            // than a query may have (FTS5 bounds an expression's depth).
            let split: Vec<Expr> = pos.iter().flat_map(name_words).collect();
            let pos = if split.len() <= crate::query::parser::MAX_LITERALS {
                split
            } else {
                pos
            };
            let or = Expr::Or { items: pos };
            if neg.is_empty() {
                or
            } else {
                let mut all = vec![or];
                all.extend(neg);
                Expr::And { items: all }
            }
        }
        term @ Expr::Term { .. } => match name_words(term) {
            words if words.len() >= 2 => Expr::Or { items: words },
            _ => term.clone(),
        },
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
fn message_rank(exact: Option<i64>) -> (&'static str, Vec<SqlValue>) {
    const COLUMNS: &str = formatcp!("{MESSAGE_RANK}({MESSAGE_RANK_ARGS})");
    const BOOSTED: &str = formatcp!("({COLUMNS} * {EXACT_NAME_FACTOR})");
    match exact {
        Some(key) => (BOOSTED, exact_name_params(key)),
        None => (COLUMNS, Vec::new()),
    }
}

/// The arguments of the message ranking functions: the FTS table, the
/// row's ranking record, the average title and keywords lengths.
const MESSAGE_RANK_ARGS: &str = formatcp!(
    "{fts_messages}, {n_records}, (SELECT {rank_stats_avg_title_len} FROM \
    {rank_stats}), (SELECT {rank_stats_avg_keywords_len} FROM {rank_stats})",
    fts_messages = fts_messages::TABLE,
    n_records = n::RECORDS,
    rank_stats_avg_title_len = rank_stats::AVG_TITLE_LEN,
    rank_stats = rank_stats::TABLE,
    rank_stats_avg_keywords_len = rank_stats::AVG_KEYWORDS_LEN
);

/// [`EXACT_NAME_BOOST`] for a message one of whose names is the query,
/// else 1 (parameters: [`exact_name_params`]).
const EXACT_NAME_FACTOR: &str = formatcp!(
    "(CASE WHEN {fts_messages}.rowid IN (SELECT {message_names_message_id} FROM \
    {message_names} WHERE {message_names_key} = :name_key) THEN :boost ELSE 1.0 END)",
    fts_messages = fts_messages::TABLE,
    message_names_message_id = message_names::MESSAGE_ID,
    message_names = message_names::TABLE,
    message_names_key = message_names::KEY
);

fn exact_name_params(key: i64) -> Vec<SqlValue> {
    vec![SqlValue::Integer(key), SqlValue::Real(EXACT_NAME_BOOST)]
}

/// The rank of a message of a search judged per page, as
/// [`message_rank`]'s; the function hands each row's rank, page and
/// phrases to the executor ([`crate::index::rank::Tally::take_sections`]).
fn message_section(exact: Option<i64>) -> (&'static str, Vec<SqlValue>) {
    const PLAIN: &str = formatcp!("{MESSAGE_SECTION}({MESSAGE_RANK_ARGS}, 1.0)");
    const BOOSTED: &str = formatcp!("{MESSAGE_SECTION}({MESSAGE_RANK_ARGS}, {EXACT_NAME_FACTOR})");
    match exact {
        Some(key) => (BOOSTED, exact_name_params(key)),
        None => (PLAIN, Vec::new()),
    }
}

/// The rank of a code block: one auxiliary function over its doclists and
/// its record in `code_rank` (alias `k`).
const CODE_BLOCK_RANK: &str = formatcp!(
    "{CODE_RANK}({fts_code_blocks}, {k_records})",
    fts_code_blocks = fts_code_blocks::TABLE,
    k_records = k::RECORDS
);

/// The joins of the ranking records (`index::records`): a matched row's
/// record is in the row of its chunk, `rowid >> 8`.
const RANK_JOINS: [&str; 2] = [
    formatcp!(
        " JOIN {message_rank} {message_rank_alias} ON {n_chunk} = ({fts_messages}.rowid >> 8)",
        message_rank = message_rank::TABLE,
        message_rank_alias = message_rank::ALIAS,
        n_chunk = n::CHUNK,
        fts_messages = fts_messages::TABLE
    ),
    formatcp!(
        " JOIN {code_rank} {code_rank_alias} ON {k_chunk} = ({fts_code_blocks}.rowid >> 8)",
        code_rank = code_rank::TABLE,
        code_rank_alias = code_rank::ALIAS,
        k_chunk = k::CHUNK,
        fts_code_blocks = fts_code_blocks::TABLE
    ),
];

/// The tables a statement reads besides its FTS table or its target's own
/// rows: each column, condition, rank and sort key says which it needs,
/// and [`from_clause`] joins those (and what links them to the target).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Reads(u8);

impl Reads {
    const NONE: Reads = Reads(0);
    const CHATS: Reads = Reads(1);
    const MESSAGES: Reads = Reads(1 << 1);
    const CODE_BLOCKS: Reads = Reads(1 << 2);
    const MESSAGE_RANK: Reads = Reads(1 << 3);
    const CODE_RANK: Reads = Reads(1 << 4);

    const fn or(self, other: Reads) -> Reads {
        Reads(self.0 | other.0)
    }

    fn has(self, table: Reads) -> bool {
        self.0 & table.0 != 0
    }
}

impl std::ops::BitOr for Reads {
    type Output = Reads;
    fn bitor(self, other: Reads) -> Reads {
        self.or(other)
    }
}

impl std::ops::BitOrAssign for Reads {
    fn bitor_assign(&mut self, other: Reads) {
        *self = self.or(other);
    }
}

/// A column expression of a target and the tables it reads.
#[derive(Debug, Clone, Copy)]
struct Col {
    sql: &'static str,
    reads: Reads,
}

const fn col(sql: &'static str, reads: Reads) -> Col {
    Col { sql, reads }
}

/// The FROM clause of a target, joining only the tables `reads` names
/// (everything the statement reads besides FROM), and the tables it joins.
/// Every message has its chat and every code block its message (the
/// builder drops rows that do not), so leaving out a join changes no
/// result; a query without filters then ranks from the doclists (and
/// `message_rank`).
fn from_clause(target: Target, fts: bool, reads: Reads) -> (String, Vec<&'static str>) {
    let (chat, msg, block) = (
        reads.has(Reads::CHATS),
        reads.has(Reads::MESSAGES),
        reads.has(Reads::CODE_BLOCKS),
    );
    // ` JOIN <table> <alias> ON <left> = <right>`, `$table` a schema module.
    macro_rules! join_on {
        ($table:ident, $left:expr, $right:expr) => {
            formatcp!(
                " JOIN {} {} ON {} = {}",
                $table::TABLE,
                $table::ALIAS,
                $left,
                $right
            )
        };
    }
    const CHAT_OF_FTS: &str = join_on!(chats, c::ID, formatcp!("{}.rowid", fts_chats::TABLE));
    const MESSAGE_OF_FTS: &str =
        join_on!(messages, m::ID, formatcp!("{}.rowid", fts_messages::TABLE));
    const CHAT_OF_MESSAGE: &str = join_on!(chats, c::ID, m::CHAT_ID);
    const BLOCK_OF_FTS: &str = join_on!(
        code_blocks,
        b::ID,
        formatcp!("{}.rowid", fts_code_blocks::TABLE)
    );
    const MESSAGE_OF_BLOCK: &str = join_on!(messages, m::ID, b::MESSAGE_ID);
    const CHAT_OF_BLOCK: &str = join_on!(chats, c::ID, b::CHAT_ID);
    // (base table without FTS and its FROM, FTS table, then joins in
    // order: table, clause, whether this statement needs it).
    type Join = (&'static str, &'static str, bool);
    let ((base, plain), fts_table, joins): ((&'static str, &'static str), &str, Vec<Join>) =
        match target {
            Target::Chats => (
                (
                    chats::TABLE,
                    formatcp!(
                        "{chats} {chats_alias}",
                        chats = chats::TABLE,
                        chats_alias = chats::ALIAS
                    ),
                ),
                fts_chats::TABLE,
                vec![(chats::TABLE, CHAT_OF_FTS, fts && chat)],
            ),
            Target::Messages => (
                (
                    messages::TABLE,
                    formatcp!(
                        "{messages} {messages_alias}",
                        messages = messages::TABLE,
                        messages_alias = messages::ALIAS
                    ),
                ),
                fts_messages::TABLE,
                vec![
                    (
                        message_rank::TABLE,
                        RANK_JOINS[0],
                        fts && reads.has(Reads::MESSAGE_RANK),
                    ),
                    (messages::TABLE, MESSAGE_OF_FTS, fts && (msg || chat)),
                    (chats::TABLE, CHAT_OF_MESSAGE, chat),
                ],
            ),
            Target::CodeBlocks => (
                (
                    code_blocks::TABLE,
                    formatcp!(
                        "{code_blocks} {code_blocks_alias}",
                        code_blocks = code_blocks::TABLE,
                        code_blocks_alias = code_blocks::ALIAS
                    ),
                ),
                fts_code_blocks::TABLE,
                vec![
                    (
                        code_rank::TABLE,
                        RANK_JOINS[1],
                        fts && reads.has(Reads::CODE_RANK),
                    ),
                    (
                        code_blocks::TABLE,
                        BLOCK_OF_FTS,
                        fts && (block || msg || chat),
                    ),
                    (messages::TABLE, MESSAGE_OF_BLOCK, msg),
                    (chats::TABLE, CHAT_OF_BLOCK, chat),
                ],
            ),
        };
    let (mut from, mut tables) = if fts {
        (fts_table.to_string(), Vec::new())
    } else {
        (plain.to_string(), vec![base])
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
    reads: Reads,
}

impl Conds {
    /// Whether the only condition is a full-text `MATCH` (as
    /// `text_condition` writes it).
    fn only_match(&self) -> bool {
        match &self.sql[..] {
            [one] => [
                fts_chats::TABLE,
                fts_messages::TABLE,
                fts_code_blocks::TABLE,
            ]
            .iter()
            .any(|t| one.strip_prefix(t) == Some(" MATCH ?")),
            _ => false,
        }
    }

    fn push(&mut self, cond: String, params: Vec<SqlValue>, reads: Reads) {
        self.sql.push(cond);
        self.params.extend(params);
        self.reads |= reads;
    }
}

fn text(v: &str) -> SqlValue {
    SqlValue::Text(v.to_string())
}

/// Column expressions of one target.
struct Cols {
    own_id: Col,
    chat_id: Col,
    path: Col,
    language: Col,
    created: Col,
    updated: Col,
    size: Col,
    text_of_row: Col,
}

fn cols(target: Target) -> Cols {
    const CHAT: Reads = Reads::CHATS;
    const MSG: Reads = Reads::MESSAGES;
    const BLOCK: Reads = Reads::CODE_BLOCKS;
    match target {
        Target::Chats => Cols {
            own_id: col(c::ID, CHAT),
            chat_id: col(c::ID, CHAT),
            path: col(c::PATH, CHAT),
            language: col(c::LANGUAGE, CHAT),
            created: col(c::CREATED_AT, CHAT),
            updated: col(
                formatcp!(
                    "coalesce({c_last_updated_at}, {c_modified_at})",
                    c_last_updated_at = c::LAST_UPDATED_AT,
                    c_modified_at = c::MODIFIED_AT
                ),
                CHAT,
            ),
            size: col(c::NUM_MESSAGES, CHAT),
            text_of_row: col(c::NAME, CHAT),
        },
        Target::Messages => Cols {
            own_id: col(m::ID, MSG),
            chat_id: col(m::CHAT_ID, MSG),
            path: col(m::FILE_PATH, MSG),
            language: col(m::LANGUAGE, MSG),
            created: col(m::CREATED_AT, MSG),
            updated: col(
                formatcp!(
                    "coalesce({m_updated_at}, {m_created_at})",
                    m_updated_at = m::UPDATED_AT,
                    m_created_at = m::CREATED_AT
                ),
                MSG,
            ),
            size: col(m::ID, MSG),
            text_of_row: col(MESSAGE_TEXT_OF_ROW, MSG),
        },
        Target::CodeBlocks => Cols {
            own_id: col(b::ID, BLOCK),
            chat_id: col(b::CHAT_ID, BLOCK),
            path: col(
                formatcp!(
                    "coalesce({m_file_path}, {c_path})",
                    m_file_path = m::FILE_PATH,
                    c_path = c::PATH
                ),
                MSG.or(CHAT),
            ),
            language: col(b::LANGUAGE, BLOCK),
            created: col(b::CREATED_AT, BLOCK),
            updated: col(
                formatcp!(
                    "coalesce({m_updated_at}, {b_created_at})",
                    m_updated_at = m::UPDATED_AT,
                    b_created_at = b::CREATED_AT
                ),
                MSG.or(BLOCK),
            ),
            size: col(b::SIZE, BLOCK),
            text_of_row: col(
                formatcp!(
                    "(SELECT {x_content} FROM {code_text} {code_text_alias} WHERE {x_id} = {b_id})",
                    x_content = x::CONTENT,
                    code_text = code_text::TABLE,
                    code_text_alias = code_text::ALIAS,
                    x_id = x::ID,
                    b_id = b::ID
                ),
                BLOCK,
            ),
        },
    }
}

/// A message's text (title, body, keywords), read by the message's id.
const MESSAGE_TEXT_OF_ROW: &str = formatcp!(
    "(SELECT {t_title} || ' ' || {t_body} || ' ' || {t_keywords} FROM {message_text} \
    {message_text_alias} WHERE {t_id} = {m_id})",
    t_title = t::TITLE,
    t_body = t::BODY,
    t_keywords = t::KEYWORDS,
    message_text = message_text::TABLE,
    message_text_alias = message_text::ALIAS,
    t_id = t::ID,
    m_id = m::ID
);

/// A message's analyzer metadata, read by the message's id.
const MESSAGE_META_OF_ROW: &str = formatcp!(
    "(SELECT {t_meta} FROM {message_text} {message_text_alias} WHERE {t_id} = {m_id})",
    t_meta = t::META,
    message_text = message_text::TABLE,
    message_text_alias = message_text::ALIAS,
    t_id = t::ID,
    m_id = m::ID
);

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
fn filter_cond(target: Target, f: &Filter) -> Option<(String, Vec<SqlValue>, Reads)> {
    let own = cols(target);
    let Col { sql: column, reads } = match f.field {
        Field::ChatId => col(c::ID, Reads::CHATS),
        Field::Name => col(c::NAME, Reads::CHATS),
        Field::MsgId => match target {
            Target::Chats => return None,
            Target::Messages => col(m::ID, Reads::MESSAGES),
            Target::CodeBlocks => col(b::MESSAGE_ID, Reads::CODE_BLOCKS),
        },
        Field::BlockId => match target {
            Target::CodeBlocks => col(b::UUID, Reads::CODE_BLOCKS),
            _ => return None,
        },
        Field::GitPath => own.path,
        Field::MsgType => match target {
            Target::Chats => return None,
            _ => col(m::TYPE, Reads::MESSAGES),
        },
        Field::ChatType => col(c::TYPE, Reads::CHATS),
        Field::Lang => own.language,
        Field::Role => match target {
            Target::Chats => return None,
            _ => col(m::ROLE, Reads::MESSAGES),
        },
        Field::Repo => col(c::REPO, Reads::CHATS),
    };
    let values = match &f.value {
        FilterValue::Null => {
            return Some((
                format!("({column} IS NULL OR {column} = '')"),
                vec![],
                reads,
            ))
        }
        FilterValue::NotNull => {
            return Some((
                format!("({column} IS NOT NULL AND {column} <> '')"),
                vec![],
                reads,
            ))
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
    Some((format!("({})", alts.join(" OR ")), params, reads))
}

/// For a query of two or more required terms, the phrase bits of each
/// (in the order [`any_term`] renders them, which is the order of FTS5's
/// phrase numbers): a section's page holds every term when, for each
/// term, some section of the page has one of its bits. `None` when
/// judging per page cannot change the answer (one term, or an `OR`) or
/// there are more phrases than a mask holds.
fn page_terms(e: &Expr, kind: TokenizerKind, inflect: bool) -> Result<Option<Vec<PageTerm>>> {
    let Expr::And { items } = e else {
        return Ok(None);
    };
    let mut terms = Vec::new();
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
        terms.push(PageTerm {
            mask: ((1i64 << n) - 1) << next,
            fts: p,
        });
        next += n;
    }
    Ok((terms.len() >= 2).then_some(terms))
}

/// A term of a search judged per page: its phrase bits, and an FTS5
/// expression matching the sections holding it.
struct PageTerm {
    mask: i64,
    fts: String,
}

/// A section matched by a search judged per page: its id, rank, page
/// and the phrases it holds (see [`TargetSql::page_terms`]).
pub use crate::index::rank::Section as PageSection;

/// An FTS5 expression of the phrases of `phrases` (an expression's,
/// `fts_phrases`) whose bits `held` sets: for a row holding just those,
/// it finds the same hits as the whole expression, from fewer doclists
/// (a snippet of a query with its words' inflections otherwise steps
/// dozens). `None` when no bit names a phrase.
///
/// ```
/// use gitsense_engine::plan::held_phrases;
/// let phrases = ["\"lock\"".to_string(), "\"locks\"".to_string(), "\"class\"*".to_string()];
/// assert_eq!(held_phrases(&phrases, 0b101).as_deref(), Some("\"lock\" OR \"class\"*"));
/// assert_eq!(held_phrases(&phrases, 0), None);
/// ```
pub fn held_phrases(phrases: &[String], held: i64) -> Option<String> {
    let kept: Vec<&str> = phrases
        .iter()
        .enumerate()
        .filter(|(i, _)| *i < crate::index::rank::MAX_MASKED_PHRASES && held & (1 << i) != 0)
        .map(|(_, p)| p.as_str())
        .collect();
    (!kept.is_empty()).then(|| kept.join(" OR "))
}

/// How much a section holding some of the terms counts against one
/// holding them all, on a page holding them all: its rank times (terms it
/// holds / terms) to this power. The section naming the rarest term in its
/// heading still beats a passing mention of every term, while a heading
/// with every word of a multi-word query keeps its place.
pub const PAGE_COVERAGE_EXPONENT: i32 = 2;

/// The sections whose page holds every term (for each of `terms`, a
/// term's phrase bits, some section of the page holds one of its
/// phrases): how many there are, and the `limit` of them after the first
/// `offset`, best first, ranks (negative, lower is better) scaled by
/// [`PAGE_COVERAGE_EXPONENT`].
///
/// ```
/// use gitsense_engine::plan::{keep_by_page, PageSection};
/// let s = |id, page, phrases| PageSection { id, rank: -1.0, page, phrases };
/// let ids = |kept: Vec<PageSection>| kept.iter().map(|s| s.id).collect::<Vec<_>>();
/// // Terms: phrase 0, phrase 1. Page 7 holds both (in two sections),
/// // page 8 only the first.
/// let (kept, total) = keep_by_page(vec![s(1, 7, 0b01), s(2, 8, 0b01), s(3, 7, 0b10)], &[0b01, 0b10], 10, 0);
/// assert_eq!((ids(kept), total), (vec![1, 3], 2));
/// // A section holding both terms outranks one as good holding one.
/// let both = PageSection { phrases: 0b11, ..s(4, 9, 0) };
/// let (kept, total) = keep_by_page(vec![s(5, 9, 0b01), both], &[0b01, 0b10], 10, 0);
/// assert_eq!((ids(kept), total), (vec![4, 5], 2));
/// // The second of them alone.
/// let both = PageSection { phrases: 0b11, ..s(4, 9, 0) };
/// let (kept, total) = keep_by_page(vec![s(5, 9, 0b01), both], &[0b01, 0b10], 1, 1);
/// assert_eq!((ids(kept), total), (vec![5], 2));
/// ```
pub fn keep_by_page(
    sections: Vec<PageSection>,
    terms: &[i64],
    limit: u64,
    offset: u64,
) -> (Vec<PageSection>, u64) {
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
    let total = kept.len() as u64;
    // Ids are unique, so this order is total: only the sections up to the
    // page's end need sorting (a common word's query keeps thousands).
    let order = |a: &PageSection, b: &PageSection| a.rank.total_cmp(&b.rank).then(a.id.cmp(&b.id));
    let end = usize::try_from(offset.saturating_add(limit)).unwrap_or(usize::MAX);
    if end < kept.len() {
        kept.select_nth_unstable_by(end, order);
        kept.truncate(end);
    }
    kept.sort_unstable_by(order);
    kept.drain(
        ..kept
            .len()
            .min(usize::try_from(offset).unwrap_or(usize::MAX)),
    );
    (kept, total)
}

/// The statements of a message search judged per page: the FTS5
/// expression `expr` matches sections holding any term; `page_sql` scores
/// every one with `gs_message_section`, which hands the executor each
/// one's rank, page and the phrases it holds, and the executor keeps the
/// sections of pages holding every term ([`TargetSql::page_terms`]).
/// (The browser's SQLite has no window functions to do it in SQL, and a
/// grouped second statement would match every doclist twice.)
fn page_sql(
    expr: String,
    phrase_weights: Vec<f64>,
    terms: Vec<PageTerm>,
    conds: Conds,
    exact: Option<i64>,
) -> TargetSql {
    const ROWID: &str = formatcp!("{fts_messages}.rowid", fts_messages = fts_messages::TABLE);
    let (section, section_params) = message_section(exact);
    let reader = conds.only_match().then_some(ReaderRank::Sections);
    let where_sql = conds.where_sql();
    let (from, tables) = from_clause(Target::Messages, true, conds.reads | Reads::MESSAGE_RANK);
    TargetSql {
        // Sections holding any term; never run, as the search is counted
        // by the executor (`counted_by_rank`), which counts what it keeps.
        count_sql: format!("SELECT count(*) FROM {from}{where_sql}"),
        // Facets count over the sections holding any term: the per-page
        // judgement happens in the executor, after SQL.
        ids_sql: format!("SELECT {ROWID} FROM {from}{where_sql}"),
        // Unordered and whole, its rows read from the tally: `keep_by_page`
        // orders what it keeps (an ORDER BY here would sort every section
        // holding any term).
        page_sql: format!("SELECT {section} FROM {from}{where_sql}"),
        params: conds.params,
        rank_params: section_params,
        phrases: fts_phrases(&expr),
        phrase_weights,
        fts: Some(expr),
        tables,
        name_key: exact,
        counted_by_rank: true,
        reader,
        page_terms: Some(terms.iter().map(|t| t.mask).collect()),
        page_term_fts: terms.into_iter().map(|t| t.fts).collect(),
    }
}

/// The pages of the sections one of [`TargetSql::page_term_fts`] matches
/// (binds: that expression, a limit).
pub const TERM_PAGES_SQL: &str = formatcp!(
    "SELECT {MESSAGE_PAGE}({fts}, {records}) FROM {fts}{join} WHERE {fts} MATCH ?1 LIMIT ?2",
    fts = fts_messages::TABLE,
    records = n::RECORDS,
    join = RANK_JOINS[0],
);

/// What a row must pass besides SQL's own comparisons, tested by the
/// engine's SQL functions: `option:regex` patterns, `meta:` filters.
#[derive(Clone, Copy)]
struct RowTests<'a> {
    patterns: Option<&'a Expr>,
    meta: &'a [crate::meta::MetaFilter],
    nav: &'a crate::gitnav::GitNav,
}

/// What planning a target takes: the query's parts, as [`plan_in`]
/// resolved them against the profile and the caller's options.
#[derive(Clone, Copy)]
struct TargetInputs<'a> {
    expr: Option<&'a Expr>,
    corpus: Corpus,
    match_mode: MatchMode,
    filters: &'a [Filter],
    scope: Scope,
    current_chat: Option<i64>,
    sort: &'a [SortKey],
    case_sensitive: bool,
    tests: RowTests<'a>,
    /// The exact-name key of the query ([`exact_name_key`]).
    exact: Option<i64>,
}

/// What planning says besides SQL, gathered over the targets.
struct Notes<'a> {
    warnings: &'a mut Vec<String>,
    hint: &'a mut Option<String>,
}

/// Why planning a target stopped: it cannot match (the reason), or the
/// query is in error.
enum Stop {
    Skip(String),
    Failed(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Failed(e)
    }
}

/// A rank expression, its parameters and the tables it reads.
struct Rank {
    sql: &'static str,
    params: Vec<SqlValue>,
    reads: Reads,
}

impl Rank {
    /// Rows without words all rank the same.
    fn none() -> Rank {
        Rank {
            sql: "0.0",
            params: Vec::new(),
            reads: Reads::NONE,
        }
    }
}

/// A target's FTS5 table, how it tokenizes, and how it ranks its matches.
struct FtsSide {
    table: &'static str,
    kind: TokenizerKind,
    rank: Rank,
}

fn fts_side(target: Target, exact: Option<i64>) -> FtsSide {
    match target {
        Target::Chats => FtsSide {
            table: fts_chats::TABLE,
            kind: TokenizerKind::Words,
            rank: Rank {
                sql: formatcp!("bm25({fts_chats})", fts_chats = fts_chats::TABLE),
                params: Vec::new(),
                reads: Reads::NONE,
            },
        },
        Target::Messages => {
            let (sql, params) = message_rank(exact);
            FtsSide {
                table: fts_messages::TABLE,
                kind: TokenizerKind::Words,
                rank: Rank {
                    sql,
                    params,
                    reads: Reads::MESSAGE_RANK,
                },
            }
        }
        Target::CodeBlocks => FtsSide {
            table: fts_code_blocks::TABLE,
            kind: TokenizerKind::Trigram,
            rank: Rank {
                sql: CODE_BLOCK_RANK,
                params: Vec::new(),
                reads: Reads::CODE_RANK,
            },
        },
    }
}

impl Conds {
    fn where_sql(&self) -> String {
        if self.sql.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", self.sql.join(" AND "))
        }
    }
}

fn plan_target(target: Target, inputs: &TargetInputs, notes: Notes) -> Result<TargetPlan> {
    match target_sql(target, inputs, notes) {
        Ok(sql) => Ok(TargetPlan {
            target,
            sql: Some(sql),
            skipped: None,
        }),
        Err(Stop::Skip(why)) => Ok(TargetPlan {
            target,
            sql: None,
            skipped: Some(why),
        }),
        Err(Stop::Failed(e)) => Err(e),
    }
}

fn target_sql(
    target: Target,
    inputs: &TargetInputs,
    notes: Notes,
) -> std::result::Result<TargetSql, Stop> {
    let own = cols(target);
    let side = fts_side(target, inputs.exact);
    let by_rank = inputs
        .sort
        .first()
        .is_none_or(|k| k.field == SortField::FtsRank);
    let doc_site = inputs.corpus == Corpus::DocSite;
    let (inflect, by_page) = (
        doc_site,
        doc_site && inputs.match_mode == MatchMode::AllTerms,
    );
    let page_terms = match inputs.expr {
        Some(e) if by_page && by_rank && target == Target::Messages => {
            page_terms(e, side.kind, inflect)?
        }
        _ => None,
    };
    let mut conds = Conds::default();
    let fts = match inputs.expr {
        Some(e) => {
            let any;
            let terms = match &page_terms {
                Some(_) => {
                    any = any_term(e);
                    &any
                }
                None => e,
            };
            let fts = text_condition(&mut conds, target, terms, &side, &own, inflect, notes)?;
            if inputs.case_sensitive {
                for lit in e.positive_literals() {
                    if let Some(text_value) = lit.literal_text() {
                        conds.push(
                            format!("instr({}, ?) > 0", own.text_of_row.sql),
                            vec![text(text_value)],
                            own.text_of_row.reads,
                        );
                    }
                }
            }
            fts
        }
        None => None,
    };
    filter_conditions(&mut conds, target, inputs.filters)?;
    row_test_conditions(&mut conds, target, &own, inputs)?;
    if let Some(cur) = inputs.current_chat {
        scope_condition(&mut conds, &own, inputs.scope, cur);
    }
    let rank = if fts.is_some() {
        side.rank
    } else {
        Rank::none()
    };

    if let (Some(terms), Some(fts), Some(expr_of_terms)) = (page_terms, &fts, inputs.expr) {
        let weights = phrase_weights(expr_of_terms, &fts_phrases(fts));
        return Ok(page_sql(fts.clone(), weights, terms, conds, inputs.exact));
    }
    // With FTS the row id is the FTS rowid: no table needs joining for it.
    let own_id = match fts {
        Some(_) => Col {
            sql: match target {
                Target::Chats => formatcp!("{fts_chats}.rowid", fts_chats = fts_chats::TABLE),
                Target::Messages => {
                    formatcp!("{fts_messages}.rowid", fts_messages = fts_messages::TABLE)
                }
                Target::CodeBlocks => formatcp!(
                    "{fts_code_blocks}.rowid",
                    fts_code_blocks = fts_code_blocks::TABLE
                ),
            },
            reads: Reads::NONE,
        },
        None => own.own_id,
    };
    let (order, order_reads) = order_by(inputs.sort, &own, own_id);
    let where_sql = conds.where_sql();
    let (count_from, _) = from_clause(target, fts.is_some(), conds.reads);
    let (page_from, tables) = from_clause(
        target,
        fts.is_some(),
        conds.reads | rank.reads | order_reads | own_id.reads,
    );
    let own_id = own_id.sql;
    let rank_sql = rank.sql;
    let reader = match target {
        _ if fts.is_none() || !by_rank || !conds.only_match() => None,
        Target::Messages => Some(ReaderRank::Messages),
        Target::CodeBlocks => Some(ReaderRank::CodeBlocks),
        Target::Chats => Some(ReaderRank::Chats),
    };
    Ok(TargetSql {
        count_sql: format!("SELECT count(*) FROM {count_from}{where_sql}"),
        ids_sql: format!("SELECT {own_id} FROM {count_from}{where_sql}"),
        page_sql: format!(
            "SELECT {own_id} AS id, {rank_sql} AS r FROM {page_from}{where_sql} ORDER BY {order} LIMIT ? OFFSET ?"
        ),
        params: conds.params,
        rank_params: rank.params,
        name_key: if target == Target::Messages && fts.is_some() {
            inputs.exact
        } else {
            None
        },
        counted_by_rank: fts.is_some() && target != Target::Chats && by_rank,
        phrase_weights: match (inputs.expr, &fts) {
            (Some(e), Some(f)) => phrase_weights(e, &fts_phrases(f)),
            _ => Vec::new(),
        },
        phrases: fts.as_deref().map(fts_phrases).unwrap_or_default(),
        fts,
        tables,
        reader,
        page_terms: None,
        page_term_fts: Vec::new(),
    })
}

/// The condition the query's words put on a target: an FTS5 `MATCH`
/// (returned: the expression searched) or, for a query of negations
/// only, the rows FTS5 does not match. Terms the target's tokenizer
/// cannot search are reported in `notes`.
fn text_condition(
    conds: &mut Conds,
    target: Target,
    terms: &Expr,
    side: &FtsSide,
    own: &Cols,
    inflect: bool,
    notes: Notes,
) -> std::result::Result<Option<String>, Stop> {
    let mut dropped = Vec::new();
    let rendered = render(terms, side.kind, &mut dropped, inflect)?;
    if !dropped.is_empty() {
        if side.kind == TokenizerKind::Trigram {
            let msg = format!(
                "code blocks are searched by substrings of at least {TRIGRAM_MIN_CHARS} characters; {} shorter than that {} not searched in code blocks",
                dropped.iter().map(|d| format!("'{d}'")).collect::<Vec<_>>().join(", "),
                if dropped.len() == 1 { "was" } else { "were" }
            );
            *notes.hint = Some(msg);
        } else {
            let w = format!(
                "ignored terms without letters or digits: {}",
                dropped.join(", ")
            );
            if !notes.warnings.contains(&w) {
                notes.warnings.push(w);
            }
        }
    }
    let fts_table = side.table;
    match rendered {
        None => Err(Stop::Skip(format!(
            "no searchable term for {} remains",
            target.name()
        ))),
        Some(Rendered { pos: Some(p), neg }) => {
            let expr = if neg.is_empty() {
                p
            } else {
                format!("{} NOT {}", paren(&p), paren(&join_or(&neg)))
            };
            conds.push(
                format!("{fts_table} MATCH ?"),
                vec![text(&expr)],
                Reads::NONE,
            );
            Ok(Some(expr))
        }
        Some(Rendered { pos: None, neg }) => {
            conds.push(
                format!(
                    "{} NOT IN (SELECT rowid FROM {fts_table} WHERE {fts_table} MATCH ?)",
                    own.own_id.sql
                ),
                vec![text(&join_or(&neg))],
                own.own_id.reads,
            );
            Ok(None)
        }
    }
}

/// The conditions of the filters; a filter that does not apply to the
/// target (and is not negated) means the target cannot match.
fn filter_conditions(
    conds: &mut Conds,
    target: Target,
    filters: &[Filter],
) -> std::result::Result<(), Stop> {
    for f in filters {
        match filter_cond(target, f) {
            None if f.negated => {}
            None => {
                return Err(Stop::Skip(format!(
                    "the {}: filter does not apply to {}",
                    crate::query::syntax::spec_for(f.field).name,
                    target.name()
                )))
            }
            Some((sql, params, reads)) => {
                if f.negated {
                    conds.push(format!("NOT coalesce({sql}, 0)"), params, reads);
                } else {
                    conds.push(sql, params, reads);
                }
            }
        }
    }
    Ok(())
}

/// The conditions the engine's SQL functions test: `option:regex`
/// patterns over the row's text, git-nav keys (chats only), `meta:`
/// filters (messages only).
fn row_test_conditions(
    conds: &mut Conds,
    target: Target,
    own: &Cols,
    inputs: &TargetInputs,
) -> std::result::Result<(), Stop> {
    let tests = inputs.tests;
    if let Some(p) = tests.patterns {
        let (sql, params) =
            crate::pattern::condition(p, own.text_of_row.sql, inputs.case_sensitive);
        conds.push(sql, params, own.text_of_row.reads);
    }
    if !tests.meta.is_empty() && target != Target::Messages {
        return Err(Stop::Skip(format!(
            "the meta: filter applies to messages (analyzer metadata), not {}",
            target.name()
        )));
    }
    if let Some((sql, params)) = tests.nav.condition() {
        if target != Target::Chats {
            return Err(Stop::Skip(format!(
                "the git-nav keys list chats (owners, repositories, branches, trees, files), not {}",
                target.name()
            )));
        }
        conds.push(sql, params, Reads::CHATS);
    }
    for f in tests.meta {
        let (sql, params) = f.condition(MESSAGE_META_OF_ROW);
        conds.push(sql, params, Reads::MESSAGES);
    }
    Ok(())
}

/// The condition of `scope:` around the current chat `cur`.
fn scope_condition(conds: &mut Conds, own: &Cols, scope: Scope, cur: i64) {
    const IN_LINEAGE: &str = formatcp!("instr({c_lineage}, ?) > 0", c_lineage = c::LINEAGE);
    const SAME_ROOT: &str = formatcp!(
        "{c_root_id} = (SELECT {chats_root_id} FROM {chats} WHERE {chats_id} = ?)",
        c_root_id = c::ROOT_ID,
        chats_root_id = chats::ROOT_ID,
        chats = chats::TABLE,
        chats_id = chats::ID
    );
    match scope {
        Scope::CurrentChat => conds.push(
            format!("{} = ?", own.chat_id.sql),
            vec![SqlValue::Integer(cur)],
            own.chat_id.reads,
        ),
        Scope::CurrentChatAndBranches => conds.push(
            IN_LINEAGE.to_string(),
            vec![text(&format!("/{cur}/"))],
            Reads::CHATS,
        ),
        Scope::ConnectedChats => conds.push(
            SAME_ROOT.to_string(),
            vec![SqlValue::Integer(cur)],
            Reads::CHATS,
        ),
        Scope::AllChats => {}
    }
}

/// The ORDER BY list of the sort keys, then rank and id as tie breakers,
/// and the tables it reads.
fn order_by(sort: &[SortKey], own: &Cols, own_id: Col) -> (String, Reads) {
    let mut reads = Reads::NONE;
    let mut order: Vec<String> = sort
        .iter()
        .map(|key| {
            let by = match key.field {
                SortField::FtsRank => col("r", Reads::NONE),
                SortField::CreatedAt => own.created,
                SortField::UpdatedAt => own.updated,
                SortField::Name => col(
                    formatcp!("{c_name} COLLATE NOCASE", c_name = c::NAME),
                    Reads::CHATS,
                ),
                SortField::Id => own_id,
                SortField::Size => own.size,
                SortField::Path => own.path,
            };
            reads |= by.reads;
            format!("{}{}", by.sql, if key.descending { " DESC" } else { "" })
        })
        .collect();
    order.push("r".into());
    order.push(own_id.sql.to_string());
    (order.join(", "), reads | own_id.reads)
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
        assert!(sql.page_sql.starts_with("SELECT gs_message_section("));
        assert!(!sql.page_sql.contains("ORDER BY"));
        // Each term alone, for finding the pages of the rarest.
        assert_eq!(sql.page_term_fts.len(), 2);
        let lock = &sql.page_term_fts[0];
        assert!(
            lock.contains("\"Lock\"") && !lock.contains("class"),
            "{lock}"
        );
        assert!(sql.page_term_fts[1].contains("\"classes\""));
        assert!(
            TERM_PAGES_SQL.contains("gs_message_page(") && TERM_PAGES_SQL.ends_with("LIMIT ?2")
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
        for join in RANK_JOINS {
            assert!(
                join.contains(&format!("rowid >> {})", crate::index::records::CHUNK_SHIFT)),
                "{join}"
            );
        }
    }

    /// The aliases of the joinable tables that `sql` refers to (`m.id`,
    /// not `fts_messages.rowid`).
    fn aliases_in(sql: &str) -> Reads {
        let b = sql.as_bytes();
        let uses = |alias: &str| {
            let a = alias.as_bytes()[0];
            (0..b.len().saturating_sub(1)).any(|i| {
                b[i] == a
                    && b[i + 1] == b'.'
                    && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
            })
        };
        let mut reads = Reads::NONE;
        for (alias, table) in [
            (chats::ALIAS, Reads::CHATS),
            (messages::ALIAS, Reads::MESSAGES),
            (code_blocks::ALIAS, Reads::CODE_BLOCKS),
            (message_rank::ALIAS, Reads::MESSAGE_RANK),
            (code_rank::ALIAS, Reads::CODE_RANK),
        ] {
            if uses(alias) {
                reads |= table;
            }
        }
        reads
    }

    #[test]
    fn every_column_and_filter_declares_the_tables_its_sql_reads() {
        let declared = |sql: &str, reads: Reads| {
            assert_eq!(aliases_in(sql), reads, "{sql}");
        };
        for target in Target::ALL {
            let own = cols(target);
            for column in [
                own.own_id,
                own.chat_id,
                own.path,
                own.language,
                own.created,
                own.updated,
                own.size,
                own.text_of_row,
            ] {
                declared(column.sql, column.reads);
            }
            for spec in crate::query::syntax::FILTERS {
                let f = Filter {
                    field: spec.field,
                    value: FilterValue::AnyOf(vec!["x".into()]),
                    negated: false,
                };
                if let Some((sql, _, reads)) = filter_cond(target, &f) {
                    declared(&sql, reads);
                }
            }
            declared(
                fts_side(target, Some(1)).rank.sql,
                fts_side(target, Some(1)).rank.reads,
            );
        }
        declared(MESSAGE_META_OF_ROW, Reads::MESSAGES);
        // The scanner itself: a table name ending in an alias's letter is
        // no use of that alias.
        assert_eq!(
            aliases_in("fts_messages.rowid bm25(fts_code_blocks)"),
            Reads::NONE
        );
        assert_eq!(aliases_in("(m.id = 1)"), Reads::MESSAGES);
    }

    #[test]
    fn scope_needs_a_current_chat() {
        let q = parse("x scope:current-chat", &profiles::exists).unwrap();
        let e = plan(&q, &SearchOptions::default(), MatchMode::AllTerms).unwrap_err();
        assert_eq!(e.code, "options.current_chat_required");
    }

    #[test]
    fn plan_text_reads_refused_text_literally_in_box_mode() {
        use crate::plan::{plan_text, QueryMode};
        use crate::SearchOptions;
        let strict = SearchOptions::default();
        assert_eq!(
            plan_text("fn main()", &strict).unwrap_err().code,
            "query.empty_group"
        );
        let boxed = SearchOptions {
            mode: QueryMode::Box,
            ..strict
        };
        let (_, p) = plan_text("fn main()", &boxed).unwrap();
        assert_eq!(p.effective_expr.as_deref(), Some("fn \"main()\""));
    }
}
