//! The query language's vocabulary in tables: filters and the targets they
//! apply to, and the words `in:`, `scope:`, `sort:` and `option:` accept.
//! The parser matches against these tables and [`crate::guide`] prints
//! them (for `--help` and the AI-assisted stage 1), so none of them can
//! drift from what the parser accepts. Nothing here depends on profiles or
//! facets: the guide, which lists their names too, sits above all three.

use super::ast::{Field, Scope, SortField, Target};

/// One filter of the query language.
pub struct FilterSpec {
    pub name: &'static str,
    pub(crate) field: Field,
    /// Targets the filter applies to; on other targets it matches nothing
    /// (the planner's `filter_cond` agrees, see its tests).
    pub targets: &'static [Target],
    pub values: &'static str,
    pub example: &'static str,
    pub help: &'static str,
}

const ALL_TARGETS: &[Target] = &Target::ALL;
const CHATS: &[Target] = &[Target::Chats];
const MESSAGES: &[Target] = &[Target::Messages];
const CODE_BLOCKS: &[Target] = &[Target::CodeBlocks];
const MESSAGES_AND_CODE: &[Target] = &[Target::Messages, Target::CodeBlocks];

pub const FILTERS: &[FilterSpec] = &[
    FilterSpec {
        name: "chat-id",
        field: Field::ChatId,
        targets: ALL_TARGETS,
        values: "integer ids",
        example: "chat-id:42,43",
        help: "results in these chats",
    },
    FilterSpec {
        name: "name",
        field: Field::Name,
        targets: ALL_TARGETS,
        values: "text; * and ? wildcards",
        example: "name:README*",
        help: "chat name contains the text (or matches the wildcard pattern), case-insensitive",
    },
    FilterSpec {
        name: "msg-id",
        field: Field::MsgId,
        targets: MESSAGES_AND_CODE,
        values: "integer ids",
        example: "msg-id:120",
        help: "this message, or code blocks inside it",
    },
    FilterSpec {
        name: "block-id",
        field: Field::BlockId,
        targets: CODE_BLOCKS,
        values: "code block UUIDs",
        example: "block-id:63b196ca-4cd6-4910-8144-3a1693c1b1a1",
        help: "code blocks with this Block-UUID",
    },
    FilterSpec {
        name: "git-path",
        field: Field::GitPath,
        targets: ALL_TARGETS,
        values: "path; * and ? wildcards; a plain path also matches files below it",
        example: "git-path:src/*.rs",
        help: "file path of the git blob or documentation page, case-insensitive",
    },
    FilterSpec {
        name: "msg-type",
        field: Field::MsgType,
        targets: MESSAGES_AND_CODE,
        values: "message types; a prefix before '::' matches the whole family",
        example: "msg-type:tiny-overview",
        help: "message type (regular, git-blob, tiny-overview::file-content::default, ...)",
    },
    FilterSpec {
        name: "chat-type",
        field: Field::ChatType,
        targets: ALL_TARGETS,
        values: "chat types; a trailing * matches a family",
        example: "chat-type:git-blob",
        help: "type of the chat (regular, git-blob, git-tree, doc-page, ...)",
    },
    FilterSpec {
        name: "lang",
        field: Field::Lang,
        targets: ALL_TARGETS,
        values: "language names (py, js, ts, sh, rs ... are understood)",
        example: "lang:python,rust",
        help: "language of the code block, or of the file the chat or message is about",
    },
    FilterSpec {
        name: "role",
        field: Field::Role,
        targets: MESSAGES_AND_CODE,
        values: "system, user, assistant",
        example: "role:assistant",
        help: "who wrote the message (code blocks: of the message holding them)",
    },
    FilterSpec {
        name: "repo",
        field: Field::Repo,
        targets: ALL_TARGETS,
        values: "owner/name",
        example: "repo:Tutorial/secure-payments",
        help: "git repository (the chat's group), case-insensitive",
    },
];

/// Words `in:` accepts. The first word of each distinct value is the one
/// guides print; the rest are aliases.
pub(crate) const TARGET_WORDS: &[(&str, &[Target])] = &[
    ("all", ALL_TARGETS),
    ("chats", CHATS),
    ("messages", MESSAGES),
    ("code-blocks", CODE_BLOCKS),
    ("chat", CHATS),
    ("message", MESSAGES),
    ("msgs", MESSAGES),
    ("codeblocks", CODE_BLOCKS),
    ("code-block", CODE_BLOCKS),
    ("code", CODE_BLOCKS),
    ("blocks", CODE_BLOCKS),
];

/// Words `scope:` accepts (first of each value canonical).
pub(crate) const SCOPE_WORDS: &[(&str, Scope)] = &[
    ("current-chat", Scope::CurrentChat),
    ("current-chat-and-branches", Scope::CurrentChatAndBranches),
    ("connected-chats", Scope::ConnectedChats),
    ("all-chats", Scope::AllChats),
    ("all", Scope::AllChats),
];

/// Fields `sort:` accepts (first of each value canonical).
pub(crate) const SORT_WORDS: &[(&str, SortField)] = &[
    ("fts_rank", SortField::FtsRank),
    ("created_at", SortField::CreatedAt),
    ("updated_at", SortField::UpdatedAt),
    ("name", SortField::Name),
    ("id", SortField::Id),
    ("size", SortField::Size),
    ("path", SortField::Path),
    ("rank", SortField::FtsRank),
    ("relevance", SortField::FtsRank),
    ("created", SortField::CreatedAt),
    ("updated", SortField::UpdatedAt),
    ("modified_at", SortField::UpdatedAt),
    ("modified", SortField::UpdatedAt),
    ("last_updated_at", SortField::UpdatedAt),
    ("file_path", SortField::Path),
];

/// Words `option:` accepts: the case-sensitivity they set.
pub(crate) const OPTION_WORDS: &[(&str, bool)] =
    &[("case-sensitive", true), ("case-insensitive", false)];

/// Looks a word up in one of the word tables.
pub(crate) fn lookup<T: Copy>(table: &[(&'static str, T)], word: &str) -> Option<T> {
    table.iter().find(|(w, _)| *w == word).map(|(_, v)| *v)
}

/// The canonical words of a table: the first word of each distinct value.
pub(crate) fn canonical_words<T: PartialEq>(table: &[(&'static str, T)]) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for (i, (w, v)) in table.iter().enumerate() {
        if !table[..i].iter().any(|(_, seen)| seen == v) {
            out.push(w);
        }
    }
    out
}

/// The non-filter keywords (`in:`, `scope:`, ...), for help and guides.
pub struct DirectiveSpec {
    pub name: &'static str,
    pub example: &'static str,
    pub help: &'static str,
}

pub const DIRECTIVES: &[DirectiveSpec] = &[
    DirectiveSpec {
        name: "in",
        example: "in:messages,code-blocks",
        help: "which targets to search",
    },
    DirectiveSpec {
        name: "scope",
        example: "scope:current-chat",
        help: "chats searched, relative to the caller's current chat id",
    },
    DirectiveSpec {
        name: "profile",
        example: "profile:messages.default",
        help: "preset targets, filters, limits and sort",
    },
    DirectiveSpec {
        name: "sort",
        example: "sort:updated_at:desc",
        help: "order of results (default fts_rank:asc)",
    },
    DirectiveSpec {
        name: "option",
        example: "option:case-sensitive",
        help: "keywords must match with the same case",
    },
    DirectiveSpec {
        name: "insight-field",
        example: "insight-field:keywords:array",
        help: "count the values of a field over the matches (facets; profile:meta-insights)",
    },
];

/// Words the engine ignores among other keywords (they carry no meaning in
/// a bag of words); a query made only of them keeps them.
pub(crate) const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "how", "i", "in", "is", "it",
    "of", "on", "or", "that", "the", "this", "to", "was", "what", "when", "where", "which", "with",
    "find", "show", "list", "me", "do", "does", "can",
];

pub(crate) fn filter_spec(name: &str) -> Option<&'static FilterSpec> {
    FILTERS.iter().find(|f| f.name.eq_ignore_ascii_case(name))
}

pub(crate) fn spec_for(field: Field) -> &'static FilterSpec {
    FILTERS
        .iter()
        .find(|f| f.field == field)
        .expect("every field has a spec")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::ast::FilterValue;
    use crate::query::parse;

    fn p(text: &str) -> crate::Result<crate::query::Query> {
        parse(text, &crate::profiles::exists)
    }

    #[test]
    fn every_filter_example_yields_its_own_filter() {
        for f in FILTERS {
            let q = p(f.example).unwrap();
            assert_eq!(q.filters.len(), 1, "{}", f.example);
            assert_eq!(q.filters[0].field, f.field, "{}", f.example);
            assert!(matches!(q.filters[0].value, FilterValue::AnyOf(_)));
        }
    }

    #[test]
    fn every_value_the_guide_lists_is_accepted() {
        for w in canonical_words(TARGET_WORDS) {
            assert!(p(&format!("in:{w} x")).unwrap().targets.is_some(), "in:{w}");
        }
        for w in canonical_words(SCOPE_WORDS) {
            assert!(
                p(&format!("scope:{w} x")).unwrap().scope.is_some(),
                "scope:{w}"
            );
        }
        for w in canonical_words(SORT_WORDS) {
            assert_eq!(p(&format!("sort:{w}:desc x")).unwrap().sort.len(), 1);
        }
        for (w, cs) in OPTION_WORDS {
            assert_eq!(p(&format!("option:{w} x")).unwrap().case_sensitive, *cs);
        }
        for n in crate::profiles::names() {
            assert_eq!(
                p(&format!("profile:{n} x")).unwrap().profile.as_deref(),
                Some(n)
            );
        }
    }

    #[test]
    fn canonical_words_skip_aliases() {
        assert_eq!(
            canonical_words(TARGET_WORDS),
            ["all", "chats", "messages", "code-blocks"]
        );
        assert_eq!(canonical_words(SCOPE_WORDS).len(), 4);
    }
}
