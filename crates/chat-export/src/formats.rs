//! The conversation shapes a chat export may hold, read into one
//! [`Conversation`] each.
//!
//! In: one top-level element of the export. Out: its conversation (id,
//! title, times, turns with roles and text), or `None` when the element is
//! no conversation this importer knows. The format is told by the
//! element's keys, never by the file name:
//! - `mapping` (an object): a ChatGPT data export; only the branch ending
//!   at `current_node` is the conversation;
//! - `chat_messages` (an array): a Claude data export;
//! - `conversations` or `messages` (an array): ShareGPT and its
//!   `{role, content}` variant.

use super::role_of;
use gitsense_engine::util::{echo, iso8601_utc};
use serde_json::{Map, Value};
use std::collections::HashSet;

/// A format of chat export.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Format {
    ShareGpt,
    ChatGpt,
    Claude,
}

impl Format {
    /// Tells the format of one element by its keys.
    pub fn of(element: &Value) -> Option<Format> {
        let o = element.as_object()?;
        if o.get("mapping").is_some_and(Value::is_object) {
            Some(Format::ChatGpt)
        } else if o.get("chat_messages").is_some_and(Value::is_array) {
            Some(Format::Claude)
        } else if ["conversations", "messages"]
            .iter()
            .any(|k| o.get(*k).is_some_and(Value::is_array))
        {
            Some(Format::ShareGpt)
        } else {
            None
        }
    }

    /// The name in `meta.format` and in messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::ShareGpt => "sharegpt",
            Format::ChatGpt => "chatgpt",
            Format::Claude => "claude",
        }
    }
}

/// One message of a conversation.
pub struct Turn {
    pub role: &'static str,
    /// The speaker as the export names it (`human`, `gpt`, `tool`, ...).
    pub from: String,
    /// The tool that wrote a ChatGPT `tool` message (`python`, ...).
    pub author_name: Option<String>,
    /// The tool a ChatGPT message was sent to (`python` for code it runs).
    pub recipient: Option<String>,
    pub text: String,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
}

/// One conversation, whatever its format.
pub struct Conversation {
    pub format: Format,
    /// The export's id, `None` when it has none.
    pub id: Option<String>,
    /// The export's own title, when it has a non-empty one.
    pub title: Option<String>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    pub turns: Vec<Turn>,
}

/// What reading conversations left out, for the import's warnings and
/// the root chat's meta.
#[derive(Default)]
pub struct LeftOut {
    /// ShareGPT/Claude turns with no text.
    pub turns_without_text: usize,
    /// Turns whose speaker is unknown (given the role assistant).
    pub unknown_speakers: std::collections::BTreeSet<String>,
    pub unknown_speaker_turns: usize,
    /// ChatGPT messages the app does not show as text: hidden ones,
    /// system prompts, browsing dumps, reasoning, images only, empty ones.
    pub not_shown: usize,
    /// ChatGPT messages on other branches than the current one.
    pub other_branches: usize,
    /// ChatGPT conversations whose `current_node` is missing or unknown.
    pub no_current_node: usize,
    /// Records of a known format lacking a field they need (left out).
    pub odd_records: usize,
    /// The first of them: which element, record and field.
    pub first_odd: Option<String>,
    /// The element being read, for `first_odd`.
    element: usize,
}

impl LeftOut {
    /// Notes a record of the element being read that lacks `what`.
    fn odd(&mut self, record: &str, what: &str) {
        self.odd_records += 1;
        if self.first_odd.is_none() {
            self.first_odd = Some(format!("element {}, {record}: {what}", self.element));
        }
    }

    fn role(&mut self, from: &str) -> &'static str {
        role_of(from).unwrap_or_else(|| {
            self.unknown_speaker_turns += 1;
            self.unknown_speakers.insert(from.to_string());
            "assistant"
        })
    }
}

/// Reads `element` (number `index` in the export) as a conversation of
/// `format`.
pub fn read(
    format: Format,
    index: usize,
    element: &Value,
    left_out: &mut LeftOut,
) -> Option<Conversation> {
    left_out.element = index;
    let o = element.as_object()?;
    Some(match format {
        Format::ShareGpt => sharegpt(o, left_out)?,
        Format::ChatGpt => chatgpt(o, left_out)?,
        Format::Claude => claude(o, left_out)?,
    })
}

fn str_of<'a>(o: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| o.get(*k).and_then(Value::as_str))
}

fn id_of(o: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| match o.get(*k) {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    })
}

fn non_empty(s: Option<&str>) -> Option<String> {
    s.map(str::trim).filter(|s| !s.is_empty()).map(String::from)
}

/// Unix seconds (ChatGPT's `create_time`) as ISO 8601 UTC with
/// milliseconds, the shape GitSense timestamps have.
pub fn unix_time(v: Option<&Value>) -> Option<String> {
    let t = v?
        .as_f64()
        .filter(|t| t.is_finite() && *t >= 0.0 && *t < 1e11)?;
    let millis = (t * 1000.0).round() as i64;
    let whole = iso8601_utc(millis.div_euclid(1000));
    Some(format!(
        "{}.{:03}Z",
        whole.trim_end_matches('Z'),
        millis.rem_euclid(1000)
    ))
}

/// An ISO 8601 timestamp (Claude's `created_at`), `+00:00` written `Z`.
fn iso_time(v: Option<&Value>) -> Option<String> {
    let s = v?.as_str()?.trim();
    if s.is_empty() {
        return None;
    }
    Some(match s.strip_suffix("+00:00") {
        Some(rest) => format!("{rest}Z"),
        None => s.to_string(),
    })
}

fn sharegpt(o: &Map<String, Value>, left_out: &mut LeftOut) -> Option<Conversation> {
    let turns = o
        .get("conversations")
        .or_else(|| o.get("messages"))?
        .as_array()?;
    let list = if o.contains_key("conversations") {
        "conversations"
    } else {
        "messages"
    };
    let mut out = Vec::with_capacity(turns.len());
    for (i, t) in turns.iter().enumerate() {
        let Some(text) = t
            .as_object()
            .and_then(|t| str_of(t, &["value", "content", "text"]))
        else {
            left_out.turns_without_text += 1;
            let what = if t.is_object() {
                "no 'value', 'content' or 'text' string"
            } else {
                "not an object"
            };
            left_out.odd(&format!("{list}[{i}]"), what);
            continue;
        };
        let from = t
            .as_object()
            .and_then(|t| str_of(t, &["from", "role"]))
            .unwrap_or("");
        out.push(Turn {
            role: left_out.role(from),
            from: from.to_string(),
            author_name: None,
            recipient: None,
            text: text.to_string(),
            created_at: None,
            updated_at: None,
        });
    }
    Some(Conversation {
        format: Format::ShareGpt,
        id: id_of(o, &["id"]),
        title: None,
        created_at: None,
        updated_at: None,
        turns: out,
    })
}

fn claude(o: &Map<String, Value>, left_out: &mut LeftOut) -> Option<Conversation> {
    let messages = o.get("chat_messages")?.as_array()?;
    let mut turns = Vec::with_capacity(messages.len());
    for (i, m) in messages.iter().enumerate() {
        let Some(m) = m.as_object() else {
            left_out.turns_without_text += 1;
            left_out.odd(&format!("chat_messages[{i}]"), "not an object");
            continue;
        };
        if !m.contains_key("text") && !m.get("content").is_some_and(Value::is_array) {
            left_out.turns_without_text += 1;
            left_out.odd(
                &format!("chat_messages[{i}]"),
                "neither a 'text' string nor a 'content' array",
            );
            continue;
        }
        let text = claude_text(m);
        if text.trim().is_empty() {
            left_out.turns_without_text += 1;
            continue;
        }
        let from = str_of(m, &["sender"]).unwrap_or("");
        turns.push(Turn {
            role: left_out.role(from),
            from: from.to_string(),
            author_name: None,
            recipient: None,
            text,
            created_at: iso_time(m.get("created_at")),
            updated_at: iso_time(m.get("updated_at")),
        });
    }
    Some(Conversation {
        format: Format::Claude,
        id: id_of(o, &["uuid", "id"]),
        title: non_empty(str_of(o, &["name", "title"])),
        created_at: iso_time(o.get("created_at")),
        updated_at: iso_time(o.get("updated_at")),
        turns,
    })
}

/// A Claude message's text: its `content` items of type `text`, else its
/// `text` (older exports have no `content`).
fn claude_text(m: &Map<String, Value>) -> String {
    let mut text = String::new();
    for item in m
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if item.get("type").and_then(Value::as_str) != Some("text") {
            continue;
        }
        let Some(part) = item.get("text").and_then(Value::as_str) else {
            continue;
        };
        // Items split around tool use: keep them apart as paragraphs.
        if !text.is_empty() && !text.ends_with('\n') && !part.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(part);
    }
    if text.trim().is_empty() {
        return str_of(m, &["text"]).unwrap_or("").to_string();
    }
    text
}

fn chatgpt(o: &Map<String, Value>, left_out: &mut LeftOut) -> Option<Conversation> {
    let mapping = o.get("mapping")?.as_object()?;
    let path = current_branch(o, mapping, left_out);
    let messages_in_mapping = mapping
        .values()
        .filter(|n| n.get("message").is_some_and(Value::is_object))
        .count();
    let on_path = path
        .iter()
        .filter(|n| n.get("message").is_some_and(Value::is_object))
        .count();
    left_out.other_branches += messages_in_mapping - on_path;
    let mut turns = Vec::new();
    for node in path {
        let Some(m) = node.get("message").and_then(Value::as_object) else {
            continue;
        };
        if let Some(what) = chatgpt_shape(m) {
            let id = node.get("id").and_then(Value::as_str).unwrap_or("?");
            left_out.odd(&format!("mapping node {}", echo(id)), what);
            left_out.not_shown += 1;
            continue;
        }
        match chatgpt_turn(m) {
            Some(t) => turns.push(t),
            None => left_out.not_shown += 1,
        }
    }
    Some(Conversation {
        format: Format::ChatGpt,
        id: id_of(o, &["conversation_id", "id"]),
        title: non_empty(str_of(o, &["title"])),
        created_at: unix_time(o.get("create_time")),
        updated_at: unix_time(o.get("update_time")),
        turns,
    })
}

/// The nodes from the root to `current_node`, in order. Without a usable
/// `current_node`, the branch of the latest message stands in for it.
fn current_branch<'a>(
    o: &Map<String, Value>,
    mapping: &'a Map<String, Value>,
    left_out: &mut LeftOut,
) -> Vec<&'a Value> {
    let current = str_of(o, &["current_node"]).filter(|id| mapping.contains_key(*id));
    let start = match current {
        Some(id) => Some(id),
        None => {
            left_out.no_current_node += 1;
            latest_leaf(mapping)
        }
    };
    let mut path = Vec::new();
    let mut seen = HashSet::new();
    let mut at = start;
    // `seen` stops a parent cycle in a damaged export.
    while let Some(id) = at.filter(|id| seen.insert(*id)) {
        let Some(node) = mapping.get(id) else { break };
        path.push(node);
        at = node.get("parent").and_then(Value::as_str);
    }
    path.reverse();
    path
}

fn latest_leaf(mapping: &Map<String, Value>) -> Option<&str> {
    let time = |n: &Value| {
        n.pointer("/message/create_time")
            .and_then(Value::as_f64)
            .unwrap_or(f64::MIN)
    };
    mapping
        .iter()
        .filter(|(_, n)| {
            n.get("children")
                .and_then(Value::as_array)
                .is_none_or(|c| c.is_empty())
        })
        .max_by(|a, b| time(a.1).total_cmp(&time(b.1)))
        .map(|(id, _)| id.as_str())
}

/// What a ChatGPT message lacks that every message has, if anything.
fn chatgpt_shape(m: &Map<String, Value>) -> Option<&'static str> {
    let role = m.get("author").and_then(|a| a.get("role"));
    let content = m.get("content");
    let content_type = content.and_then(|c| c.get("content_type"));
    if !role.is_some_and(Value::is_string) {
        Some("message.author.role is not a string")
    } else if !content.is_some_and(Value::is_object) {
        Some("message.content is not an object")
    } else if !content_type.is_some_and(Value::is_string) {
        Some("message.content.content_type is not a string")
    } else if matches!(
        content_type.and_then(Value::as_str),
        Some("text" | "multimodal_text")
    ) && !content
        .and_then(|c| c.get("parts"))
        .is_some_and(Value::is_array)
    {
        Some("message.content.parts is not an array")
    } else {
        None
    }
}

/// A ChatGPT message as the app shows it; `None` for what it hides.
fn chatgpt_turn(m: &Map<String, Value>) -> Option<Turn> {
    let hidden = m
        .get("metadata")
        .and_then(|md| md.get("is_visually_hidden_from_conversation"))
        .and_then(Value::as_bool)
        == Some(true);
    let author = m.get("author").and_then(Value::as_object);
    let from = author.and_then(|a| str_of(a, &["role"])).unwrap_or("");
    let role = match from {
        "user" => "user",
        // Tool output (code results, image generations) shows on the
        // assistant's side.
        "assistant" | "tool" => "assistant",
        _ => return None,
    };
    if hidden {
        return None;
    }
    let text = chatgpt_text(m.get("content")?)?;
    if text.trim().is_empty() {
        return None;
    }
    Some(Turn {
        role,
        from: from.to_string(),
        author_name: author.and_then(|a| non_empty(str_of(a, &["name"]))),
        recipient: non_empty(str_of(m, &["recipient"])).filter(|r| r != "all"),
        text,
        created_at: unix_time(m.get("create_time")),
        updated_at: unix_time(m.get("update_time")),
    })
}

/// The visible text of a ChatGPT `content`, by its `content_type`.
fn chatgpt_text(content: &Value) -> Option<String> {
    match content.get("content_type")?.as_str()? {
        "text" | "multimodal_text" => {
            let parts = content.get("parts")?.as_array()?;
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|p| match p {
                    Value::String(s) => Some(s.as_str()),
                    // Image and audio pointers carry no text; some parts
                    // are objects with one.
                    Value::Object(o) => o.get("text").and_then(Value::as_str),
                    _ => None,
                })
                .filter(|s| !s.trim().is_empty())
                .collect();
            Some(texts.join("\n\n"))
        }
        // Code sent to a tool, shown as a code block.
        "code" => {
            let code = content.get("text")?.as_str()?;
            let lang = content
                .get("language")
                .and_then(Value::as_str)
                .filter(|l| !l.is_empty() && *l != "unknown")
                .unwrap_or("");
            Some(format!("```{lang}\n{}\n```", code.trim_end_matches('\n')))
        }
        "execution_output" => Some(content.get("text")?.as_str()?.to_string()),
        // user_editable_context, tether_browsing_display, tether_quote,
        // thoughts, reasoning_recap, system_error, ...: not conversation text.
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unix_seconds_become_iso_timestamps_with_milliseconds() {
        assert_eq!(
            unix_time(Some(&json!(1712345678.5))).as_deref(),
            Some("2024-04-05T19:34:38.500Z")
        );
        assert_eq!(unix_time(Some(&json!(null))), None);
        assert_eq!(unix_time(Some(&json!(-3))), None);
    }

    #[test]
    fn formats_are_told_by_their_keys() {
        assert_eq!(Format::of(&json!({"mapping": {}})), Some(Format::ChatGpt));
        assert_eq!(
            Format::of(&json!({"chat_messages": []})),
            Some(Format::Claude)
        );
        assert_eq!(Format::of(&json!({"messages": []})), Some(Format::ShareGpt));
        assert_eq!(Format::of(&json!({"mapping": []})), None);
        assert_eq!(Format::of(&json!([1])), None);
    }
}
