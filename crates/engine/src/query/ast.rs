//! The typed query: what the parser produces and the planner consumes.

use serde::Serialize;

/// Shortest prefix (in letters and digits) searched as a prefix, whether
/// typed as `word*` or being typed in a search box; a shorter one is
/// searched as the whole word. FTS5 merges the doclist of every word a
/// prefix matches in one step that a time budget cannot interrupt, and a
/// one- or two-letter prefix matches a large share of the vocabulary.
pub(crate) const PREFIX_MIN_CHARS: usize = 3;

/// A boolean full-text expression over keywords and phrases.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub(crate) enum Expr {
    /// A single word; `prefix` for `word*`.
    Term {
        text: String,
        prefix: bool,
    },
    /// A quoted phrase (`"..."` or `'...'`).
    Phrase {
        text: String,
    },
    And {
        items: Vec<Expr>,
    },
    Or {
        items: Vec<Expr>,
    },
    Not {
        item: Box<Expr>,
    },
}

impl Expr {
    /// Every positive (not negated) term and phrase, in query order.
    pub(crate) fn positive_literals(&self) -> Vec<&Expr> {
        let mut out = Vec::new();
        fn walk<'a>(e: &'a Expr, neg: bool, out: &mut Vec<&'a Expr>) {
            match e {
                Expr::Term { .. } | Expr::Phrase { .. } => {
                    if !neg {
                        out.push(e)
                    }
                }
                Expr::And { items } | Expr::Or { items } => {
                    items.iter().for_each(|i| walk(i, neg, out))
                }
                Expr::Not { item } => walk(item, !neg, out),
            }
        }
        walk(self, false, &mut out);
        out
    }

    /// The literal text of a term or phrase.
    pub(crate) fn literal_text(&self) -> Option<&str> {
        match self {
            Expr::Term { text, .. } | Expr::Phrase { text } => Some(text),
            _ => None,
        }
    }

    /// Renders the expression back in query syntax (for `searchCriteria`).
    pub(crate) fn to_query_string(&self) -> String {
        match self {
            Expr::Term { text, prefix } => {
                let quoted = needs_quotes(text);
                let mut s = if quoted {
                    format!("\"{}\"", text.replace('"', "'"))
                } else {
                    text.clone()
                };
                if *prefix {
                    s.push('*');
                }
                s
            }
            Expr::Phrase { text } => format!("\"{}\"", text.replace('"', "'")),
            Expr::And { items } => items
                .iter()
                .map(|i| group(i, matches!(i, Expr::Or { .. })))
                .collect::<Vec<_>>()
                .join(" "),
            Expr::Or { items } => items
                .iter()
                .map(|i| group(i, matches!(i, Expr::And { .. })))
                .collect::<Vec<_>>()
                .join(" OR "),
            Expr::Not { item } => format!("-{}", group(item, !is_literal(item))),
        }
    }
}

fn is_literal(e: &Expr) -> bool {
    matches!(e, Expr::Term { .. } | Expr::Phrase { .. })
}

fn group(e: &Expr, paren: bool) -> String {
    if paren {
        format!("({})", e.to_query_string())
    } else {
        e.to_query_string()
    }
}

fn needs_quotes(t: &str) -> bool {
    t.is_empty()
        || t.chars()
            .any(|c| c.is_whitespace() || matches!(c, '(' | ')' | '"' | '\'' | ':'))
        || matches!(t, "OR" | "AND" | "NOT")
        || t.starts_with('-')
}

/// The filterable fields of the query language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Field {
    ChatId,
    Name,
    MsgId,
    BlockId,
    GitPath,
    MsgType,
    ChatType,
    Lang,
    Role,
    Repo,
}

/// What a filter accepts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind", content = "values")]
pub(crate) enum FilterValue {
    /// Any of these values (a comma list).
    AnyOf(Vec<String>),
    /// `field:null`
    Null,
    /// `field:not_null`
    NotNull,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Filter {
    pub(crate) field: Field,
    pub(crate) value: FilterValue,
    /// `-field:value` excludes instead of restricting.
    pub(crate) negated: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Target {
    #[serde(rename = "chats")]
    Chats,
    #[serde(rename = "messages")]
    Messages,
    #[serde(rename = "code-blocks")]
    CodeBlocks,
}

impl Target {
    pub(crate) const ALL: [Target; 3] = [Target::Chats, Target::Messages, Target::CodeBlocks];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Target::Chats => "chats",
            Target::Messages => "messages",
            Target::CodeBlocks => "code-blocks",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Scope {
    CurrentChat,
    CurrentChatAndBranches,
    ConnectedChats,
    AllChats,
}

impl Scope {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Scope::CurrentChat => "current-chat",
            Scope::CurrentChatAndBranches => "current-chat-and-branches",
            Scope::ConnectedChats => "connected-chats",
            Scope::AllChats => "all-chats",
        }
    }
}

/// Fields results can be sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SortField {
    FtsRank,
    CreatedAt,
    UpdatedAt,
    Name,
    Id,
    Size,
    Path,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct SortKey {
    pub(crate) field: SortField,
    pub(crate) descending: bool,
}

/// A parsed query: a full-text expression plus everything around it.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Query {
    pub(crate) expr: Option<Expr>,
    pub(crate) filters: Vec<Filter>,
    pub(crate) targets: Option<Vec<Target>>,
    pub(crate) scope: Option<Scope>,
    pub(crate) profile: Option<String>,
    pub(crate) sort: Vec<SortKey>,
    pub(crate) case_sensitive: bool,
    /// `option:regex`: terms and phrases are regular expressions.
    pub(crate) regex: bool,
    /// `meta:FIELD:TYPE=VALUE` filters over analyzer metadata.
    pub(crate) meta_filters: Vec<crate::meta::MetaFilter>,
    /// git-nav keys (`git-owner:`, `git-repository:`, ...).
    pub(crate) git_nav: crate::gitnav::GitNav,
    /// `insight-field:` requests: facets to count over the matches.
    pub(crate) insight_fields: Vec<super::facet::FacetRequest>,
    /// Notes about the query the user should see (ignored stop words, ...).
    pub(crate) warnings: Vec<String>,
}
