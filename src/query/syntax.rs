//! The query language's vocabulary in one table: filters, their targets and
//! values. The parser reads it, `--help` prints it, and the AI-assisted
//! stage 1 turns it into the LLM's syntax guide, so none of them can drift.

use super::ast::Field;

/// One filter of the query language.
pub struct FilterSpec {
    pub name: &'static str,
    pub field: Field,
    /// Targets the filter applies to; on other targets it matches nothing.
    pub targets: &'static str,
    pub values: &'static str,
    pub example: &'static str,
    pub help: &'static str,
}

pub const FILTERS: &[FilterSpec] = &[
    FilterSpec {
        name: "chat-id",
        field: Field::ChatId,
        targets: "chats, messages, code-blocks",
        values: "integer ids",
        example: "chat-id:42,43",
        help: "results in these chats",
    },
    FilterSpec {
        name: "name",
        field: Field::Name,
        targets: "chats, messages, code-blocks",
        values: "text; * and ? wildcards",
        example: "name:README*",
        help: "chat name contains the text (or matches the wildcard pattern), case-insensitive",
    },
    FilterSpec {
        name: "msg-id",
        field: Field::MsgId,
        targets: "messages, code-blocks",
        values: "integer ids",
        example: "msg-id:120",
        help: "this message, or code blocks inside it",
    },
    FilterSpec {
        name: "block-id",
        field: Field::BlockId,
        targets: "code-blocks",
        values: "code block UUIDs",
        example: "block-id:63b196ca-4cd6-4910-8144-3a1693c1b1a1",
        help: "code blocks with this Block-UUID",
    },
    FilterSpec {
        name: "git-path",
        field: Field::GitPath,
        targets: "chats, messages, code-blocks",
        values: "path; * and ? wildcards; a plain path also matches files below it",
        example: "git-path:src/*.rs",
        help: "file path of the git blob or documentation page, case-insensitive",
    },
    FilterSpec {
        name: "msg-type",
        field: Field::MsgType,
        targets: "messages, code-blocks",
        values: "message types; a prefix before '::' matches the whole family",
        example: "msg-type:tiny-overview",
        help: "message type (regular, git-blob, tiny-overview::file-content::default, ...)",
    },
    FilterSpec {
        name: "chat-type",
        field: Field::ChatType,
        targets: "chats, messages, code-blocks",
        values: "chat types; a trailing * matches a family",
        example: "chat-type:git-blob",
        help: "type of the chat (regular, git-blob, git-tree, doc-page, ...)",
    },
    FilterSpec {
        name: "lang",
        field: Field::Lang,
        targets: "chats, messages, code-blocks",
        values: "language names (py, js, ts, sh, rs ... are understood)",
        example: "lang:python,rust",
        help: "language of the code block, or of the file the chat or message is about",
    },
    FilterSpec {
        name: "role",
        field: Field::Role,
        targets: "messages, code-blocks",
        values: "system, user, assistant",
        example: "role:assistant",
        help: "who wrote the message (code blocks: of the message holding them)",
    },
    FilterSpec {
        name: "repo",
        field: Field::Repo,
        targets: "chats, messages, code-blocks",
        values: "owner/name",
        example: "repo:Tutorial/secure-payments",
        help: "git repository (the chat's group), case-insensitive",
    },
];

/// The non-filter keywords (`in:`, `scope:`, ...), for help and the guide.
pub const DIRECTIVES: &[(&str, &str, &str)] = &[
    (
        "in",
        "all | chats | messages | code-blocks (comma list)",
        "which targets to search",
    ),
    (
        "scope",
        "current-chat | current-chat-and-branches | connected-chats | all-chats",
        "relative to the caller's current chat id",
    ),
    (
        "profile",
        "a built-in profile name",
        "preset targets, filters, limits and sort",
    ),
    (
        "sort",
        "field:asc|desc[,...] over fts_rank, created_at, updated_at, name, id, size, path",
        "order of results (default fts_rank:asc)",
    ),
    (
        "option",
        "case-sensitive",
        "keywords must match with the same case",
    ),
];

/// Words the engine ignores among other keywords (they carry no meaning in
/// a bag of words); a query made only of them keeps them.
pub const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "how", "i", "in", "is", "it",
    "of", "on", "or", "that", "the", "this", "to", "was", "what", "when", "where", "which", "with",
    "find", "show", "list", "me", "do", "does", "can",
];

pub fn filter_spec(name: &str) -> Option<&'static FilterSpec> {
    FILTERS.iter().find(|f| f.name.eq_ignore_ascii_case(name))
}

pub fn spec_for(field: Field) -> &'static FilterSpec {
    FILTERS
        .iter()
        .find(|f| f.field == field)
        .expect("every field has a spec")
}

/// Normalizes a language name or common abbreviation.
pub fn canonical_language(lang: &str) -> String {
    let l = lang.trim().to_ascii_lowercase();
    let canon = match l.as_str() {
        "py" | "python3" | "py3" => "python",
        "js" | "node" | "mjs" | "cjs" => "javascript",
        "ts" => "typescript",
        "sh" | "shell" | "zsh" => "bash",
        "rs" => "rust",
        "rb" => "ruby",
        "md" => "markdown",
        "yml" => "yaml",
        "c++" | "cc" | "hpp" | "cxx" => "cpp",
        "cs" | "c#" => "csharp",
        "golang" => "go",
        "kt" => "kotlin",
        "htm" => "html",
        "text" | "txt" | "plaintext" => "text",
        other => other,
    };
    canon.to_string()
}

/// A compact syntax guide generated from the tables above.
pub fn syntax_guide() -> String {
    let mut s = String::new();
    s.push_str("Query syntax:\n");
    s.push_str("- words: all must match (AND); `a OR b`; `-word` or `NOT word` excludes; (groups); word* = prefix\n");
    s.push_str("- \"exact phrase\" or 'exact phrase'\n");
    s.push_str("- filters: field:value, field:v1,v2 (any of), field:\"a phrase\", field:null, field:not_null, -field:value excludes; repeated filters all apply\n");
    for f in FILTERS {
        s.push_str(&format!(
            "  {}: {} ({}); e.g. {}\n",
            f.name, f.help, f.values, f.example
        ));
    }
    for (name, values, help) in DIRECTIVES {
        s.push_str(&format!("  {name}: {help}: {values}\n"));
    }
    s
}
