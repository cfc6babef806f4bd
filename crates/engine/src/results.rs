//! The GitSense results object (search-results-format v1.4.0; the
//! contract it is checked against is in `tests/contract/`).
//!
//! Field names here are the contract's, exactly; nothing else in the crate
//! spells them. Absent vs null: the fields the contract requires for every
//! item (`source_type`, `fts_rank`, `result_chat_id`, `chat_path`, the id
//! fields) are always present (`chat_path` may be null); the common
//! type-specific fields are always present and null when the data has no
//! value; `*_meta_*` fields appear only when the item's metadata has that
//! key, with their JSON type kept (arrays stay arrays). Optional additions
//! beyond the contract (`hint`, `nextCursor`, `truncated`, `trace`,
//! `facets`) are
//! omitted when they do not apply.
//!
//! Text and HTML: every field is plain text (insert it as text) except
//! the `*_snippet` fields, HTML with `highlight: html`, and the `*_html`
//! fields, escaped renderings of the fields a page shows as titles
//! (present only with `highlight: html`, the default).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What [`crate::Engine::search`] returns: chats, messages and code blocks,
/// each counted and paged on its own. Serialized, it is the GitSense
/// results object, with the contract's field names.
///
/// ```
/// use gitsense_engine::{Engine, SearchOptions};
/// # let dir = tempfile::tempdir()?;
/// # let path = gitsense_engine::index::write_example(&dir.path().join("chats.gsx"))?;
/// let r = Engine::open(&path)?.search("retry", &SearchOptions::default())?;
/// let message = &r.results.messages[0];
/// assert_eq!(message.result_chat_id, 1);
/// assert_eq!(message.chat_path.as_deref(), Some("Payments"));
/// let object = serde_json::to_value(&r)?;
/// assert_eq!(object["totalCounts"]["codeBlocks"], r.total_counts.code_blocks);
/// assert_eq!(object["results"]["messages"][0]["messages_id"], message.messages_id);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SearchResults {
    #[serde(rename = "searchCriteria")]
    pub search_criteria: Value,
    pub pagination: Pagination,
    #[serde(rename = "totalCounts")]
    pub total_counts: TotalCounts,
    pub results: ResultSets,
    #[serde(rename = "totalResultsReturned")]
    pub total_results_returned: u64,
    /// Why a search found nothing where a user would expect something
    /// (e.g. code-block terms shorter than the trigram minimum), or what
    /// the time budget cut short.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub hint: Option<String>,
    /// Opaque cursor for the next page; absent on the last page.
    #[serde(
        rename = "nextCursor",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub next_cursor: Option<String>,
    /// True when a token budget shortened snippets or dropped results, or
    /// the time budget stopped a ranking or left snippets out.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub truncated: Option<bool>,
    /// Per-stage timings, when asked for.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub trace: Option<Value>,
    /// Value/count pairs over the matches, when facets were asked for
    /// (`insight-field:`, the `facets` option).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub facets: Option<Vec<crate::facets::Facet>>,
    /// When no result held every word and some words are in no indexed
    /// text: the query as corrected from the index's own vocabulary, which
    /// these results answer (`crate::typo`).
    #[serde(
        rename = "didYouMean",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub did_you_mean: Option<DidYouMean>,
}

/// The correction a search made ([`SearchResults::did_you_mean`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DidYouMean {
    /// The query text with each corrected word replaced by its best
    /// replacement.
    pub query: String,
    /// Each word replaced and the indexed words searched instead.
    pub corrections: Vec<Correction>,
}

/// A word replaced by typo correction.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Correction {
    pub word: String,
    pub replacements: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Pagination {
    #[serde(rename = "currentPage")]
    pub current_page: u64,
    #[serde(rename = "totalPages")]
    pub total_pages: u64,
    #[serde(rename = "totalResults")]
    pub total_results: u64,
    #[serde(rename = "resultsPerPage")]
    pub results_per_page: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct TotalCounts {
    pub chats: u64,
    pub messages: u64,
    #[serde(rename = "codeBlocks")]
    pub code_blocks: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct ResultSets {
    pub chats: Vec<ChatResult>,
    pub messages: Vec<MessageResult>,
    #[serde(rename = "codeBlocks")]
    pub code_blocks: Vec<CodeBlockResult>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ChatResult {
    pub source_type: String,
    pub fts_rank: f64,
    pub result_chat_id: i64,
    pub chat_path: Option<String>,
    pub chats_id: i64,
    pub chats_uuid: Option<String>,
    pub chats_name: Option<String>,
    pub chats_type: Option<String>,
    pub chats_owner: Option<String>,
    pub chats_modified_at: Option<String>,
    pub cte_chat_message_stats_num_messages: Option<i64>,
    pub cte_chat_message_stats_last_updated_at: Option<String>,
    /// Highlighted chat name (an addition: the contract has no chat snippet).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub chats_name_snippet: Option<String>,
    /// `chats_name`, HTML-escaped.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub chats_name_html: Option<String>,
    /// `chat_path`, HTML-escaped.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub chat_path_html: Option<String>,
    /// `chats_meta_<key>` fields.
    #[serde(flatten)]
    pub meta: Map<String, Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MessageResult {
    pub source_type: String,
    pub fts_rank: f64,
    pub result_chat_id: i64,
    pub chat_path: Option<String>,
    pub messages_id: i64,
    pub messages_chat_id: i64,
    pub messages_type: Option<String>,
    pub messages_role: Option<String>,
    pub messages_content: Option<String>,
    pub messages_content_snippet: Option<String>,
    pub messages_branch_name: Option<String>,
    pub messages_created_at: Option<String>,
    pub messages_updated_at: Option<String>,
    /// The message's title (`messages_meta_title`: a documentation
    /// section's heading), HTML-escaped.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub messages_title_html: Option<String>,
    /// `chat_path`, HTML-escaped.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub chat_path_html: Option<String>,
    /// `messages_meta_<key>` fields (from the message's extracted metadata).
    #[serde(flatten)]
    pub meta: Map<String, Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CodeBlockResult {
    pub source_type: String,
    pub fts_rank: f64,
    pub result_chat_id: i64,
    pub chat_path: Option<String>,
    pub code_blocks_uuid: String,
    pub code_blocks_message_id: i64,
    pub code_blocks_content: Option<String>,
    pub code_blocks_content_snippet: Option<String>,
    pub code_blocks_component: Option<String>,
    pub code_blocks_parent_uuid: Option<String>,
    pub code_blocks_major_version: Option<i64>,
    pub code_blocks_minor_version: Option<i64>,
    pub code_blocks_patch_version: Option<i64>,
    pub code_blocks_header: Option<Value>,
    pub code_blocks_created_at: Option<String>,
    pub code_blocks_size: Option<i64>,
    pub code_blocks_branch_name: Option<String>,
    pub code_blocks_language: Option<String>,
    /// `code_blocks_component`, HTML-escaped.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub code_blocks_component_html: Option<String>,
    /// `chat_path`, HTML-escaped.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub chat_path_html: Option<String>,
    /// `code_blocks_meta_<key>` fields (from the header).
    #[serde(flatten)]
    pub meta: Map<String, Value>,
}

pub(crate) const SOURCE_CHAT: &str = "chat";
pub(crate) const SOURCE_MESSAGE: &str = "message";
pub(crate) const SOURCE_CODE_BLOCK: &str = "code-block";

/// Turns a meta object into `<prefix>_meta_<key>` fields: keys are
/// lower-cased with `-` and spaces as `_`; values keep their JSON type.
pub(crate) fn flatten_meta(prefix: &str, meta: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    if let Value::Object(m) = meta {
        for (k, v) in m {
            if v.is_null() {
                continue;
            }
            let key: String = k
                .chars()
                .map(|c| match c {
                    '-' | ' ' | '.' => '_',
                    c => c.to_ascii_lowercase(),
                })
                .collect();
            out.insert(format!("{prefix}_meta_{key}"), v.clone());
        }
    }
    out
}

impl SearchResults {
    /// Every result, in display order (chats, messages, code blocks).
    pub fn len(&self) -> usize {
        self.results.chats.len() + self.results.messages.len() + self.results.code_blocks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
