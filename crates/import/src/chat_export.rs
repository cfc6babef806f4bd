//! Importer for chat exports: ChatGPT and Claude data exports and
//! ShareGPT-style files.
//!
//! Input: a JSON array of conversations (or the same objects as JSON
//! Lines, one after another). Each element's format is told by its keys
//! ([`formats`]): ChatGPT's `conversations.json` (`mapping` tree, of which
//! only the branch ending at `current_node` is read, and only the
//! messages the app shows as text), Claude's `conversations.json`
//! (`chat_messages`), ShareGPT (`conversations: [{from, value}]`, or
//! `messages: [{role, content}]`).
//!
//! Output, per export:
//! - one root chat (type `chat-export`, named after the file), so that chat
//!   paths read `export.json -> Conversation name`;
//! - per conversation a `regular` chat named after its title (ChatGPT,
//!   Claude) or else its first user turn (shortened), with its times,
//!   `meta.format`, `meta.conversation_id` and `meta.element` (its index in
//!   the file);
//! - per turn a `regular` message with its times; the speaker maps to the
//!   role (see [`role_of`]; ChatGPT `tool` output → assistant; unknown
//!   speakers → assistant, with a warning); `meta.from` keeps the speaker;
//! - per fenced block (```` ``` ```` or `~~~`; ChatGPT `code` messages are
//!   one) a code block with the info string's language; a GitSense header
//!   inside the block supplies uuid, parent, component, version, ...;
//!   blocks without one get a uuid derived from the conversation id, its
//!   occurrence, turn index and block index.
//!
//! The file is streamed element by element ([`stream`]), so memory stays
//! bounded by the largest conversation, not the file. Invalid UTF-8 and
//! unpaired surrogate escapes become U+FFFD, counted in a warning. A file
//! that ends inside an element keeps every complete element before it and
//! warns; an element that is no conversation is skipped with a warning;
//! invalid JSON is an `import.bad_json` error naming the element, line and
//! byte offset (there is no safe place to resume parsing from); an export
//! that yields no message at all is an `import.no_messages` error naming
//! what it held.

use super::fenced::fenced_blocks;
use super::ImportReport;
use formats::{Conversation, Format, LeftOut};
use gitsense_engine::error::{Error, Result};
use gitsense_engine::index::IndexWriter;
use gitsense_engine::model::{Chat, CodeBlock, Message};
use gitsense_engine::util::stable_uuid;
use indicatif::ProgressBar;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use stream::{Elements, Layout, Next, Repairs};

mod formats;
mod stream;

/// Longest conversation name, in characters (before the ellipsis).
pub const NAME_MAX_CHARS: usize = 80;

/// Id of the export's root chat.
const ROOT_CHAT_ID: i64 = 1;

/// How many element indices a skip warning lists.
const LISTED_INDICES: usize = 10;

/// Maps a ShareGPT `from` (or `role`) to a GitSense role; `None` for a
/// speaker this importer does not know.
pub fn role_of(from: &str) -> Option<&'static str> {
    match from.trim().to_ascii_lowercase().as_str() {
        "human" | "user" | "prompter" => Some("user"),
        "system" => Some("system"),
        "gpt" | "chatgpt" | "assistant" | "bard" | "bing" | "model" | "bot" | "ai" | "claude"
        | "gemini" => Some("assistant"),
        _ => None,
    }
}

/// A chat name from the first user turn: its first non-empty line,
/// whitespace collapsed, cut at a word boundary to [`NAME_MAX_CHARS`].
pub fn conversation_name(text: &str) -> Option<String> {
    let line = text
        .lines()
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty())?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let full = words.join(" ");
    if full.chars().count() <= NAME_MAX_CHARS {
        return Some(full);
    }
    let mut out = String::new();
    for w in &words {
        let extra = if out.is_empty() { 0 } else { 1 } + w.chars().count();
        if out.chars().count() + extra > NAME_MAX_CHARS {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    if out.is_empty() {
        // One very long word.
        out = full.chars().take(NAME_MAX_CHARS).collect();
    }
    out.push('…');
    Some(out)
}

/// Counters and ids while importing.
#[derive(Default)]
struct State {
    next_chat: i64,
    next_message: i64,
    next_block: i64,
    /// Conversations read, per format.
    formats: BTreeMap<Format, u64>,
    /// How often each conversation id has been seen (duplicates exist in
    /// real exports); part of derived uuids.
    seen_ids: HashMap<String, u32>,
    skipped_elements: Vec<usize>,
    skipped_element_count: usize,
    /// What the first element that is no conversation looks like.
    first_skipped: Option<String>,
    left_out: LeftOut,
}

impl State {
    fn conversations(&self) -> u64 {
        self.formats.values().sum()
    }

    fn messages(&self) -> i64 {
        self.next_message - 1
    }

    /// `chatgpt`, `claude`, `sharegpt`, or `mixed`.
    fn format_name(&self) -> &'static str {
        match self.formats.keys().collect::<Vec<_>>()[..] {
            [one] => one.name(),
            [] => "none",
            _ => "mixed",
        }
    }
}

/// How an element that is no conversation looks, for messages.
fn describe(v: &Value) -> String {
    match v {
        Value::Object(o) => {
            let keys: Vec<&str> = o.keys().take(LISTED_INDICES).map(String::as_str).collect();
            let more = o.len().saturating_sub(keys.len());
            match (keys.is_empty(), more) {
                (true, _) => "an empty object".into(),
                (false, 0) => format!("an object with the keys {}", keys.join(", ")),
                (false, _) => format!(
                    "an object with the keys {} and {more} more",
                    keys.join(", ")
                ),
            }
        }
        Value::Array(a) => format!("an array of {} items", a.len()),
        Value::String(_) => "a string".into(),
        Value::Number(_) => "a number".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Null => "null".into(),
    }
}

/// Writes one conversation: its chat, messages and code blocks.
fn add_conversation(
    w: &mut IndexWriter,
    st: &mut State,
    element: usize,
    conv: Conversation,
) -> Result<()> {
    let conv_id = conv.id.unwrap_or_else(|| format!("element-{element}"));
    let occurrence = {
        let n = st.seen_ids.entry(conv_id.clone()).or_insert(0);
        *n += 1;
        *n
    };
    let key = format!("chat-export:{conv_id}:{occurrence}");
    let chat_id = st.next_chat;
    st.next_chat += 1;
    *st.formats.entry(conv.format).or_insert(0) += 1;

    let mut first_user = None;
    let mut first_any = None;
    for (turn_index, turn) in conv.turns.into_iter().enumerate() {
        if turn.role == "user" && first_user.is_none() {
            first_user = conversation_name(&turn.text);
        }
        if first_any.is_none() {
            first_any = conversation_name(&turn.text);
        }
        let message_id = st.next_message;
        st.next_message += 1;
        let mut meta = json!({ "from": turn.from });
        if let Some(name) = turn.author_name {
            meta["author_name"] = json!(name);
        }
        if let Some(to) = turn.recipient {
            meta["recipient"] = json!(to);
        }
        let blocks = fenced_blocks(&turn.text);
        w.add_message(&Message {
            id: message_id,
            chat_id,
            msg_type: "regular".into(),
            role: turn.role.into(),
            content: turn.text,
            title: String::new(),
            keywords: String::new(),
            meta,
            created_at: turn.created_at,
            updated_at: turn.updated_at,
        })?;
        for (block_index, b) in blocks.into_iter().enumerate() {
            let id = st.next_block;
            st.next_block += 1;
            w.add_code_block(&CodeBlock::from_text(
                id,
                message_id,
                b.content,
                b.language,
                || stable_uuid(&format!("{key}:{turn_index}:{block_index}")),
            ))?;
        }
    }
    let name = conv
        .title
        .as_deref()
        .and_then(conversation_name)
        .or(first_user)
        .or(first_any)
        .unwrap_or_else(|| format!("Conversation {conv_id}"));
    w.add_chat(&Chat {
        id: chat_id,
        parent_id: ROOT_CHAT_ID,
        chat_type: "regular".into(),
        uuid: Some(stable_uuid(&key)),
        name,
        owner: None,
        group_id: None,
        created_at: conv.created_at,
        modified_at: conv.updated_at,
        meta: json!({
            "source": "chat-export",
            "format": conv.format.name(),
            "conversation_id": conv_id,
            "element": element,
        }),
    })
}

/// Reads one element: a conversation is written, anything else counted.
fn add_element(w: &mut IndexWriter, st: &mut State, element: usize, v: &Value) -> Result<()> {
    let conv = Format::of(v).and_then(|f| formats::read(f, v, &mut st.left_out));
    match conv {
        Some(conv) => add_conversation(w, st, element, conv),
        None => {
            st.skipped_element_count += 1;
            if st.skipped_elements.len() < LISTED_INDICES {
                st.skipped_elements.push(element);
            }
            st.first_skipped.get_or_insert_with(|| describe(v));
            Ok(())
        }
    }
}

/// The error for an export that gave no message, naming what it held.
fn no_messages(st: &State, elements: usize, truncated: bool, location: &str) -> Error {
    let what = if elements == 0 {
        "it holds no conversations".to_string()
    } else if st.conversations() == 0 {
        format!(
            "none of its {elements} elements is a conversation in a known format \
             (ChatGPT: an object with 'mapping'; Claude: with 'chat_messages'; \
             ShareGPT: with 'conversations' or 'messages'); element {} is {}",
            st.skipped_elements[0],
            st.first_skipped.as_deref().unwrap_or("unknown")
        )
    } else {
        let l = &st.left_out;
        format!(
            "its {} conversations ({}) have no message with text; left out: {} \
             hidden or non-text messages, {} on other branches, {} turns without text",
            st.conversations(),
            st.format_name(),
            l.not_shown,
            l.other_branches,
            l.turns_without_text
        )
    };
    let cut = if truncated {
        " (the file is truncated)"
    } else {
        ""
    };
    Error::new(
        "import.no_messages",
        format!("the chat export yielded no messages: {what}{cut}"),
    )
    .with_location(location)
}

/// Reads every element into `w`; whether the file was truncated.
fn read_elements(
    elements: &mut Elements,
    w: &mut IndexWriter,
    st: &mut State,
    report: &mut ImportReport,
    progress: &ProgressBar,
) -> Result<bool> {
    loop {
        let element = elements.index;
        match elements.next()? {
            Next::Element(v) => {
                add_element(w, st, element, &v)?;
                progress.set_position(elements.position().byte);
            }
            Next::End => return Ok(false),
            Next::Truncated { inside_element, at } => {
                report.warnings.push(if inside_element {
                    format!(
                        "the export is truncated: it ends inside element {element} \
                         (which starts at line {}, byte {}); kept the {element} complete \
                         elements before it",
                        at.line, at.byte
                    )
                } else {
                    format!(
                        "the export ends after element {} without its closing ']'; \
                         kept all {element} elements",
                        element.saturating_sub(1)
                    )
                });
                return Ok(true);
            }
        }
    }
}

/// Imports the export at `path` into `w`.
pub fn import(path: &Path, w: &mut IndexWriter, progress: &ProgressBar) -> Result<ImportReport> {
    let (mut elements, size) = Elements::open(path)?;
    progress.set_length(size);
    let mut st = State {
        next_chat: ROOT_CHAT_ID + 1,
        next_message: 1,
        next_block: 1,
        ..State::default()
    };
    let mut report = ImportReport::default();
    let truncated = read_elements(&mut elements, w, &mut st, &mut report, progress)?;
    if st.messages() == 0 {
        return Err(no_messages(
            &st,
            elements.index,
            truncated,
            &path.display().to_string(),
        ));
    }
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "chat export".into());
    let format = match elements.layout {
        Layout::Array => st.format_name().to_string(),
        Layout::Lines => format!("{}-jsonl", st.format_name()),
    };
    w.add_chat(&Chat {
        id: ROOT_CHAT_ID,
        parent_id: 0,
        chat_type: "chat-export".into(),
        uuid: Some(stable_uuid(&format!("chat-export:{file_name}"))),
        name: file_name.clone(),
        owner: None,
        group_id: None,
        created_at: None,
        modified_at: None,
        meta: json!({
            "source": "chat-export",
            "format": format,
            "file": file_name,
            "conversations": st.conversations(),
            "truncated": truncated,
            "left_out": {
                "hidden_or_not_text": st.left_out.not_shown,
                "other_branches": st.left_out.other_branches,
            },
        }),
    })?;
    report.warnings.extend(warnings(&st, elements.repairs()));
    progress.finish_and_clear();
    Ok(report)
}

/// The import's counted warnings.
fn warnings(st: &State, repairs: Repairs) -> Vec<String> {
    let mut out = Vec::new();
    if let (Some(first), Some(desc)) = (st.skipped_elements.first(), &st.first_skipped) {
        let listed: Vec<String> = st.skipped_elements.iter().map(|i| i.to_string()).collect();
        let more = if st.skipped_element_count > st.skipped_elements.len() {
            ", ..."
        } else {
            ""
        };
        out.push(format!(
            "skipped {} elements that are not conversations in a known format: \
             element {}{more} (element {first} is {desc})",
            st.skipped_element_count,
            listed.join(", ")
        ));
    }
    let l = &st.left_out;
    if l.turns_without_text > 0 {
        out.push(format!(
            "skipped {} turns without text",
            l.turns_without_text
        ));
    }
    if l.unknown_speaker_turns > 0 {
        let names: Vec<String> = l
            .unknown_speakers
            .iter()
            .take(LISTED_INDICES)
            .map(|s| format!("'{}'", gitsense_engine::util::echo(s)))
            .collect();
        out.push(format!(
            "{} turns from unknown speakers ({}) were given the role assistant",
            l.unknown_speaker_turns,
            names.join(", ")
        ));
    }
    if l.no_current_node > 0 {
        out.push(format!(
            "{} ChatGPT conversations have no valid 'current_node'; \
             the branch of their latest message was taken",
            l.no_current_node
        ));
    }
    if let Some(first) = repairs.first {
        out.push(format!(
            "replaced {} invalid characters with U+FFFD ({} unpaired surrogate escapes, \
             {} invalid UTF-8 sequences); the first at line {}, byte {}",
            repairs.total(),
            repairs.lone_surrogates,
            repairs.invalid_utf8,
            first.line,
            first.byte
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speakers_map_to_roles() {
        assert_eq!(role_of("human"), Some("user"));
        assert_eq!(role_of("GPT"), Some("assistant"));
        assert_eq!(role_of("system"), Some("system"));
        assert_eq!(role_of("narrator"), None);
    }

    #[test]
    fn names_are_the_first_line_shortened_at_a_word() {
        assert_eq!(
            conversation_name("\n  # Hello   world \nmore").as_deref(),
            Some("Hello world")
        );
        let long = "word ".repeat(40);
        let n = conversation_name(&long).unwrap();
        assert!(n.ends_with('…'));
        assert!(n.chars().count() <= NAME_MAX_CHARS + 1);
        assert!(!n.contains("  "));
        assert_eq!(conversation_name("   \n \n"), None);
    }
}
