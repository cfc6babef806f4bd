//! The GitSense data model as importers hand it to the index writer.
//!
//! Every source (a GitSense Chat database, a documentation site, a chat
//! export, a git repository) is mapped onto these four records. Ids are
//! chosen by the importer and must be unique per record kind; `parent_id`
//! 0 marks a root chat. Derived data (chat paths, branch names, message
//! stats, corpus revision) is computed by the writer, not by importers.

use serde_json::Value;

/// A group of chats; for git content the group name is the repository
/// (`owner/name`), which `repo:` filters match.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub id: i64,
    pub name: String,
}

/// A chat: a conversation, a documentation page, a git object.
#[derive(Debug, Clone, PartialEq)]
pub struct Chat {
    pub id: i64,
    /// 0 for a root chat.
    pub parent_id: i64,
    /// `regular`, `git-blob`, `git-ref`, ...
    pub chat_type: String,
    pub uuid: Option<String>,
    pub name: String,
    pub owner: Option<String>,
    pub group_id: Option<i64>,
    pub created_at: Option<String>,
    pub modified_at: Option<String>,
    /// The chat's meta object (`path`, `language`, `url`, `commit`, ...).
    pub meta: Value,
}

/// A message inside a chat.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub id: i64,
    pub chat_id: i64,
    /// `regular`, `git-blob`, `tiny-overview::file-content::default`, ...
    pub msg_type: String,
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// Full text, indexed with weight 1.
    pub content: String,
    /// Structural text (section heading, API names defined in it), indexed
    /// in its own column with a higher weight; empty for chat messages. Each
    /// line is a name of the message: a query made of exactly its words
    /// ranks the message higher (`crate::index::EXACT_NAME_BOOST`).
    pub title: String,
    /// Terms that say what the message is about without being its text or
    /// its title (the entries of a site's own index that point to a
    /// section), indexed in a third column weighted between the two; empty
    /// for chat messages.
    pub keywords: String,
    /// Extracted metadata: each key becomes a `messages_meta_<key>` field.
    pub meta: Value,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
}

/// A fenced or AI-generated code block inside a message.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeBlock {
    pub id: i64,
    pub message_id: i64,
    /// `code` or `patch`.
    pub block_type: String,
    pub uuid: String,
    pub parent_uuid: Option<String>,
    pub component: Option<String>,
    pub description: Option<String>,
    pub language: Option<String>,
    pub major: Option<i64>,
    pub minor: Option<i64>,
    pub patch: Option<i64>,
    /// Parsed header with its literal keys (`Block-UUID`, `Version`, ...).
    pub header: Option<Value>,
    pub content: String,
    pub created_at: Option<String>,
}

impl CodeBlock {
    /// A `code` block holding `content`. When the content starts with a
    /// GitSense header ([`parse_code_header`]) its fields fill the uuid,
    /// parent uuid (none for `N/A`), component, description, version
    /// numbers and creation time; otherwise `fallback_uuid` names the block.
    /// `language` (e.g. a fence's info string) wins over the header's.
    pub fn from_text(
        id: i64,
        message_id: i64,
        content: String,
        language: Option<String>,
        fallback_uuid: impl FnOnce() -> String,
    ) -> CodeBlock {
        let header = parse_code_header(&content);
        let field = |k: &str| {
            header
                .as_ref()
                .and_then(|h| h.get(k))
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        let (major, minor, patch) = field("Version")
            .map(|v| parse_version(&v))
            .unwrap_or((None, None, None));
        CodeBlock {
            id,
            message_id,
            block_type: "code".into(),
            uuid: field("Block-UUID").unwrap_or_else(fallback_uuid),
            parent_uuid: field("Parent-UUID").filter(|p| !p.eq_ignore_ascii_case("n/a")),
            component: field("Component"),
            description: field("Description"),
            language: language.or_else(|| field("Language").map(|l| l.to_lowercase())),
            major,
            minor,
            patch,
            created_at: field("Created-at"),
            header: header.map(Value::Object),
            content,
        }
    }
}

/// Parses `Version: 1.2.3` style strings into (major, minor, patch).
pub(crate) fn parse_version(v: &str) -> (Option<i64>, Option<i64>, Option<i64>) {
    let v = v.trim().trim_start_matches(['v', 'V']);
    let mut it = v
        .split(['.', ' ', '-', '+'])
        .map(|p| p.trim().parse::<i64>().ok());
    let major = it.next().flatten();
    let minor = it.next().flatten();
    let patch = it.next().flatten();
    (major, minor, patch)
}

/// Parses a GitSense code-block header (the `Key: value` lines at the top
/// of a block, usually inside a comment) into a JSON object with the
/// literal keys. Returns `None` when the text has no `Block-UUID` line.
pub fn parse_code_header(content: &str) -> Option<serde_json::Map<String, Value>> {
    const KEYS: [&str; 8] = [
        "Component",
        "Block-UUID",
        "Parent-UUID",
        "Version",
        "Description",
        "Language",
        "Created-at",
        "Authors",
    ];
    let mut map = serde_json::Map::new();
    for line in content.lines().take(40) {
        let line = line
            .trim()
            .trim_start_matches(['#', '/', '*', '-', '<', '!', ';', '%'])
            .trim();
        if let Some((k, v)) = line.split_once(':') {
            let k = k.trim();
            if let Some(key) = KEYS.iter().find(|x| x.eq_ignore_ascii_case(k)) {
                map.entry(key.to_string())
                    .or_insert_with(|| Value::String(v.trim().to_string()));
            }
        }
    }
    if map.contains_key("Block-UUID") {
        Some(map)
    } else {
        None
    }
}

/// The one name of a language in an index: what the writer stores for
/// chats, messages and code blocks, and what `lang:` filters compare with.
/// Lower-cases and maps common abbreviations and aliases.
///
/// ```
/// use gitsense_engine::model::canonical_language;
/// assert_eq!(canonical_language("Py3"), "python");
/// assert_eq!(canonical_language("c++"), "cpp");
/// assert_eq!(canonical_language("Haskell"), "haskell");
/// ```
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_into_three_numbers() {
        assert_eq!(parse_version("1.4.0"), (Some(1), Some(4), Some(0)));
        assert_eq!(parse_version("v2.1"), (Some(2), Some(1), None));
        assert_eq!(parse_version("x"), (None, None, None));
    }

    #[test]
    fn headers_are_found_inside_comments() {
        let h = parse_code_header(
            "/*\n * Component: Auth\n * Block-UUID: 1234\n * Version: 1.0.2\n */\ncode()",
        )
        .unwrap();
        assert_eq!(h["Component"], "Auth");
        assert_eq!(h["Block-UUID"], "1234");
        assert!(parse_code_header("no header here").is_none());
    }

    #[test]
    fn code_blocks_take_their_identity_from_the_header_when_there_is_one() {
        let text = "// Component: Parser\n// Block-UUID: 11111111-2222-3333-4444-555555555555\n\
                    // Parent-UUID: N/A\n// Version: 2.3.4\n// Language: Rust\nfn f() {}";
        let b = CodeBlock::from_text(1, 2, text.into(), None, || "fallback".into());
        assert_eq!(b.uuid, "11111111-2222-3333-4444-555555555555");
        assert_eq!(b.parent_uuid, None);
        assert_eq!((b.major, b.minor, b.patch), (Some(2), Some(3), Some(4)));
        assert_eq!(b.language.as_deref(), Some("rust"));
        assert_eq!(b.component.as_deref(), Some("Parser"));
        let plain = CodeBlock::from_text(3, 2, "x = 1".into(), Some("python".into()), || {
            "fallback".into()
        });
        assert_eq!(plain.uuid, "fallback");
        assert!(plain.header.is_none());
    }
}
