//! Chat exports read as GitSense records: ChatGPT and Claude data exports
//! and ShareGPT-style files, from any [`std::io::Read`] (no file system, no
//! threads: the native importer and the browser module share this crate;
//! in a dedicated worker a `Read` over `FileReaderSync` reads of
//! `File.slice()` pieces streams a dropped file).
//!
//! Input: a JSON array of conversations (or the same objects as JSON
//! Lines, one after another). Each element's format is told by its keys
//! ([`formats`]), never by the file name: ChatGPT's `conversations.json`
//! (`mapping` tree, of which only the branch ending at `current_node` is
//! read, and only the messages the app shows as text), Claude's
//! `conversations.json` (`chat_messages`), ShareGPT (`conversations:
//! [{from, value}]`, or `messages: [{role, content}]`).
//!
//! Output ([`ExportReader`]), per conversation its records
//! ([`ConversationRecords`]), and at the end the export's root chat and
//! counted warnings ([`ExportSummary`]):
//! - one root chat (type `chat-export`, named after the file), so that chat
//!   paths read `export.json -> Conversation name`;
//! - per conversation a `regular` chat named after its title (ChatGPT,
//!   Claude) or else its first user turn (shortened), with its times,
//!   `meta.format`, `meta.conversation_id` and `meta.element` (its index in
//!   the file);
//! - per turn a `regular` message with its times; the speaker maps to the
//!   role (see [`role_of`]; ChatGPT `tool` output → assistant; unknown
//!   speakers → assistant, with a warning); `meta.from` keeps the speaker,
//!   `meta.conversation_id` the conversation (a result's link back);
//! - per fenced block (```` ``` ```` or `~~~`, see [`fenced`]; ChatGPT
//!   `code` messages are one) a code block with the info string's
//!   language; a GitSense header inside the block supplies uuid, parent,
//!   component, version, ...; blocks without one get a uuid derived from
//!   the conversation id, its occurrence, turn index and block index.
//!
//! The input is read element by element ([`stream`]), so memory stays
//! bounded by the largest conversation, not the export. Invalid UTF-8 and
//! unpaired surrogate escapes become U+FFFD, counted in a warning. An
//! export that ends inside an element keeps every complete element before
//! it and warns; an element that is no conversation is skipped with a
//! warning; invalid JSON is an `import.bad_json` error naming the element,
//! line and byte offset (there is no safe place to resume parsing from);
//! an export that yields no message at all is an `import.no_messages`
//! error naming what it held.
//!
//! ```
//! use gitsense_chat_export::ExportReader;
//! let export = br#"[{"uuid": "c1", "name": "Greetings", "chat_messages": [
//!     {"sender": "human", "text": "Say hi in Rust", "created_at": "2024-05-02T09:14:03Z"},
//!     {"sender": "assistant", "text": "```rust\nprintln!(\"hi\");\n```"}]}]"#;
//! let mut reader = ExportReader::new(&export[..], "conversations.json")?;
//! let conv = reader.next_conversation()?.expect("one conversation");
//! assert_eq!(conv.chat.name, "Greetings");
//! assert_eq!(conv.messages[0].role, "user");
//! assert_eq!(conv.code_blocks[0].language.as_deref(), Some("rust"));
//! assert!(reader.next_conversation()?.is_none());
//! let summary = reader.finish("conversations.json")?;
//! assert_eq!((summary.format.as_str(), summary.messages), ("claude", 2));
//! # Ok::<(), gitsense_engine::error::Error>(())
//! ```

use fenced::fenced_blocks;
use formats::{Conversation, Format, LeftOut};
use gitsense_engine::error::{Error, Result};
use gitsense_engine::model::{Chat, CodeBlock, Message};
use gitsense_engine::util::stable_uuid;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
pub use stream::MAX_TEXT_BYTES;
use stream::{Cut, Elements, Layout, Next, Repairs};

pub mod feed;
/// Fenced code blocks in message text: the engine's parser, which the
/// browser's writable indexes use too.
pub use gitsense_engine::fenced;
pub mod formats;
pub mod stream;

pub use feed::ExportFeeder;
pub use stream::Position;

/// Longest conversation name, in characters (before the ellipsis).
pub const NAME_MAX_CHARS: usize = 80;

/// Id of the export's root chat; conversations' chats follow it.
pub const ROOT_CHAT_ID: i64 = 1;

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

/// One conversation's records, ids counted from 1 per export (the root
/// chat is [`ROOT_CHAT_ID`]).
#[derive(Debug, Clone)]
pub struct ConversationRecords {
    pub chat: Chat,
    /// In conversation order.
    pub messages: Vec<Message>,
    /// In message order, then in order within each message.
    pub code_blocks: Vec<CodeBlock>,
}

/// What an export held, once read to its end.
#[derive(Debug, Clone)]
pub struct ExportSummary {
    /// The export's root chat (parent of every conversation's chat).
    pub root: Chat,
    /// `chatgpt`, `claude`, `sharegpt` or `mixed`, `-jsonl` appended for
    /// JSON Lines.
    pub format: String,
    pub conversations: u64,
    pub messages: u64,
    /// Counted warnings: skipped elements, a truncated tail, repaired
    /// characters, unknown speakers, ...
    pub warnings: Vec<String>,
}

/// Reads an export one conversation at a time ([`ExportReader::next_conversation`]),
/// then sums it up ([`ExportReader::finish`]).
pub struct ExportReader<R> {
    elements: Elements<R>,
    st: State,
    location: String,
    truncated: bool,
    /// Warnings noticed while reading (the truncated tail).
    warnings: Vec<String>,
}

impl<R: Read> ExportReader<R> {
    /// Starts reading `input`; `location` (a path, a file name) names it
    /// in errors. Fails on input that is no JSON array or JSON Lines.
    pub fn new(input: R, location: impl Into<String>) -> Result<ExportReader<R>> {
        let location = location.into();
        Ok(ExportReader {
            elements: Elements::new(input, location.clone())?,
            st: State {
                next_chat: ROOT_CHAT_ID + 1,
                next_message: 1,
                next_block: 1,
                ..State::default()
            },
            location,
            truncated: false,
            warnings: Vec::new(),
        })
    }

    /// The next conversation's records; `None` once the export ends
    /// (cleanly or truncated, see [`ExportReader::finish`]). Elements that
    /// are no conversation are counted and passed over.
    pub fn next_conversation(&mut self) -> Result<Option<ConversationRecords>> {
        loop {
            match self.step()? {
                Step::Conversation(c) => return Ok(Some(*c)),
                Step::Skipped => {}
                Step::End => return Ok(None),
            }
        }
    }

    /// Reads one element of the export.
    fn step(&mut self) -> Result<Step> {
        let element = self.elements.index;
        Ok(match self.elements.next_element()? {
            Next::Element(v) => match self.st.read(element, &v) {
                Some(conv) => Step::Conversation(Box::new(self.st.records(element, conv))),
                None => Step::Skipped,
            },
            Next::End => Step::End,
            Next::Truncated { inside_element, at } => {
                self.truncated = true;
                self.warnings
                    .push(truncation_warning(element, inside_element, at));
                Step::End
            }
        })
    }

    /// How many elements have been read.
    fn elements_read(&self) -> usize {
        self.elements.index
    }

    /// Where the reader stands in the input (for progress).
    pub fn position(&self) -> Position {
        self.elements.position()
    }

    /// The export's root chat, named `file_name`, and its warnings; an
    /// `import.no_messages` error naming what the export held when it
    /// gave no message. Call after [`ExportReader::next_conversation`]
    /// returned `None`.
    pub fn finish(self, file_name: &str) -> Result<ExportSummary> {
        let st = &self.st;
        if st.messages() == 0 {
            return Err(no_messages(
                st,
                self.elements.index,
                self.truncated,
                &self.location,
            ));
        }
        let format = match self.elements.layout {
            Layout::Array => st.format_name().to_string(),
            Layout::Lines => format!("{}-jsonl", st.format_name()),
        };
        let root = Chat {
            meta: json!({
                "source": "chat-export",
                "format": format,
                "file": file_name,
                "conversations": st.conversations(),
                "truncated": self.truncated,
                "left_out": {
                    "hidden_or_not_text": st.left_out.not_shown,
                    "other_branches": st.left_out.other_branches,
                },
            }),
            ..root_chat(file_name)
        };
        let mut warnings = self.warnings;
        warnings.extend(self::warnings(
            st,
            self.elements.repairs(),
            self.elements.cut(),
        ));
        Ok(ExportSummary {
            root,
            format,
            conversations: st.conversations(),
            messages: st.messages() as u64,
            warnings,
        })
    }
}

/// The export's root chat named `file_name`, its meta still empty (the
/// summary's root has it): a caller that stores conversations before the
/// export ends adds this first, as their parent.
pub fn root_chat(file_name: &str) -> Chat {
    Chat {
        id: ROOT_CHAT_ID,
        parent_id: 0,
        chat_type: "chat-export".into(),
        uuid: Some(stable_uuid(&format!("chat-export:{file_name}"))),
        name: file_name.to_string(),
        owner: None,
        group_id: None,
        created_at: None,
        modified_at: None,
        meta: json!({}),
    }
}

/// What reading one element gave.
enum Step {
    Conversation(Box<ConversationRecords>),
    /// An element that is no conversation (counted).
    Skipped,
    /// The export ended (cleanly or truncated).
    End,
}

fn truncation_warning(element: usize, inside_element: bool, at: Position) -> String {
    if inside_element {
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
    }
}

impl State {
    /// `v` as a conversation; anything else is counted as skipped.
    fn read(&mut self, element: usize, v: &Value) -> Option<Conversation> {
        let conv = Format::of(v).and_then(|f| formats::read(f, element, v, &mut self.left_out));
        if conv.is_none() {
            self.skipped_element_count += 1;
            if self.skipped_elements.len() < LISTED_INDICES {
                self.skipped_elements.push(element);
            }
            self.first_skipped.get_or_insert_with(|| describe(v));
        }
        conv
    }

    /// One conversation's chat, messages and code blocks.
    fn records(&mut self, element: usize, conv: Conversation) -> ConversationRecords {
        let conv_id = conv.id.unwrap_or_else(|| format!("element-{element}"));
        let occurrence = {
            let n = self.seen_ids.entry(conv_id.clone()).or_insert(0);
            *n += 1;
            *n
        };
        let key = format!("chat-export:{conv_id}:{occurrence}");
        let chat_id = self.next_chat;
        self.next_chat += 1;
        *self.formats.entry(conv.format).or_insert(0) += 1;

        let mut messages = Vec::with_capacity(conv.turns.len());
        let mut code_blocks = Vec::new();
        let mut first_user = None;
        let mut first_any = None;
        for (turn_index, turn) in conv.turns.into_iter().enumerate() {
            if turn.role == "user" && first_user.is_none() {
                first_user = conversation_name(&turn.text);
            }
            if first_any.is_none() {
                first_any = conversation_name(&turn.text);
            }
            let message_id = self.next_message;
            self.next_message += 1;
            // The conversation's id on each message, so a result links back
            // to its conversation without a lookup of the chat.
            let mut meta = json!({ "from": turn.from, "conversation_id": conv_id });
            if let Some(name) = turn.author_name {
                meta["author_name"] = json!(name);
            }
            if let Some(to) = turn.recipient {
                meta["recipient"] = json!(to);
            }
            for (block_index, b) in fenced_blocks(&turn.text).into_iter().enumerate() {
                let id = self.next_block;
                self.next_block += 1;
                code_blocks.push(CodeBlock::from_text(
                    id,
                    message_id,
                    b.content,
                    b.language,
                    || stable_uuid(&format!("{key}:{turn_index}:{block_index}")),
                ));
            }
            messages.push(Message {
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
            });
        }
        let name = conv
            .title
            .as_deref()
            .and_then(conversation_name)
            .or(first_user)
            .or(first_any)
            .unwrap_or_else(|| format!("Conversation {conv_id}"));
        let chat = Chat {
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
        };
        ConversationRecords {
            chat,
            messages,
            code_blocks,
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
        ) + &odd_records(l).map(|o| format!("; {o}")).unwrap_or_default()
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

/// How many records lacked a field they need, and the first of them.
fn odd_records(l: &LeftOut) -> Option<String> {
    let first = l.first_odd.as_deref()?;
    Some(format!(
        "left out {} records of an unexpected shape (the first: {first})",
        l.odd_records
    ))
}

/// The import's counted warnings.
fn warnings(st: &State, repairs: Repairs, cut: Cut) -> Vec<String> {
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
    out.extend(odd_records(l));
    if l.no_current_node > 0 {
        out.push(format!(
            "{} ChatGPT conversations have no valid 'current_node'; \
             the branch of their latest message was taken",
            l.no_current_node
        ));
    }
    if cut.texts > 0 {
        out.push(format!(
            "cut {} texts longer than {} MiB to that length (the longest had {} bytes)",
            cut.texts,
            MAX_TEXT_BYTES >> 20,
            cut.longest
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

    /// A reader that hands out at most `n` bytes per read, as a browser
    /// reading a file in slices does.
    struct Slices<'a>(&'a [u8], usize);
    impl Read for Slices<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.len().min(self.1).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    /// Every conversation's records as JSON, and the summary's counts.
    fn read_all(input: impl Read) -> (Vec<String>, (String, u64, u64)) {
        let mut r = ExportReader::new(input, "conversations.json").unwrap();
        let mut out = Vec::new();
        while let Some(c) = r.next_conversation().unwrap() {
            out.push(format!("{:?}", (c.chat, c.messages, c.code_blocks)));
        }
        let s = r.finish("conversations.json").unwrap();
        (out, (s.format, s.conversations, s.messages))
    }

    #[test]
    fn an_export_read_in_small_slices_gives_the_records_it_gives_read_whole() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/chat-exports"
        );
        for (name, format) in [
            ("chatgpt-conversations.json", "chatgpt"),
            ("claude-conversations.json", "claude"),
        ] {
            let bytes = std::fs::read(format!("{dir}/{name}")).unwrap();
            let whole = read_all(&bytes[..]);
            assert_eq!(whole.0.len(), 2, "{name}");
            assert_eq!(whole.1 .0, format);
            for n in [1, 3, 64, 4096] {
                assert_eq!(
                    read_all(Slices(&bytes, n)),
                    whole,
                    "{name} in slices of {n}"
                );
            }
        }
    }

    /// What the feeder gives for `input` fed `n` bytes at a time: the
    /// records, then the summary's counts and warnings, or the error.
    fn fed(input: &[u8], n: usize) -> std::result::Result<(Vec<String>, String), String> {
        let mut f = ExportFeeder::new("c.json");
        let mut out = Vec::new();
        for piece in input.chunks(n) {
            for c in f.feed(piece).map_err(|e| e.to_string())? {
                out.push(format!("{:?}", (c.chat, c.messages, c.code_blocks)));
            }
        }
        let (rest, s) = f.finish("c.json").map_err(|e| e.to_string())?;
        out.extend(
            rest.into_iter()
                .map(|c| format!("{:?}", (c.chat, c.messages, c.code_blocks))),
        );
        Ok((
            out,
            format!(
                "{} {} {} {:?}",
                s.format, s.conversations, s.messages, s.warnings
            ),
        ))
    }

    /// The same for an [`ExportReader`] over the whole input.
    fn pulled(input: &[u8]) -> std::result::Result<(Vec<String>, String), String> {
        let mut r = ExportReader::new(input, "c.json").map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        while let Some(c) = r.next_conversation().map_err(|e| e.to_string())? {
            out.push(format!("{:?}", (c.chat, c.messages, c.code_blocks)));
        }
        let s = r.finish("c.json").map_err(|e| e.to_string())?;
        Ok((
            out,
            format!(
                "{} {} {} {:?}",
                s.format, s.conversations, s.messages, s.warnings
            ),
        ))
    }

    #[test]
    fn an_export_fed_in_pieces_gives_what_reading_it_whole_gives() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/chat-exports"
        );
        let mut inputs: Vec<Vec<u8>> = ["chatgpt-conversations.json", "claude-conversations.json"]
            .iter()
            .map(|n| std::fs::read(format!("{dir}/{n}")).unwrap())
            .collect();
        let conv = |id: &str, text: &str| {
            format!(
                r#"{{"id": "{id}", "conversations": [{{"from": "human", "value": "{text}"}}]}}"#
            )
        };
        for text in [
            // A lone high surrogate escape just before the element's end.
            format!("[{}]", conv("a", r"x\ud83d")),
            // A byte order mark, and elements that are no conversation.
            format!("\u{feff}[7, \"s\", {}, null]", conv("b", "y")),
            // JSON Lines.
            format!("{}\n{}\n", conv("c", "a"), conv("d", "b")),
            // Truncated inside an element, and after one.
            format!(r#"[{}, {{"id": "e", "conv"#, conv("e", "z")),
            format!("[{}", conv("f", "v")),
            // Invalid JSON after a good element.
            format!("[{}, }}]", conv("g", "w")),
            "[]".into(),
            "  ".into(),
            "x".into(),
            r#"[{"mapping": 1}]"#.into(),
        ] {
            inputs.push(text.into_bytes());
        }
        // Invalid UTF-8 inside a value.
        inputs.push(
            b"[{\"id\": \"h\", \"conversations\": [{\"from\": \"gpt\", \"value\": \"caf\xe9\"}]}]"
                .to_vec(),
        );
        for input in &inputs {
            let whole = pulled(input);
            for n in [1, 2, 5, 13, 64, 4096] {
                assert_eq!(
                    fed(input, n),
                    whole,
                    "{} fed {n} bytes at a time",
                    String::from_utf8_lossy(input)
                );
            }
        }
    }

    #[test]
    fn a_text_over_the_bound_is_cut_at_a_character_boundary_with_a_warning() {
        // Two-byte characters, so that the bound falls inside one unless
        // the cut steps back to a boundary.
        let long = format!("x{}", "é".repeat(MAX_TEXT_BYTES / 2 + 10));
        let export = format!(
            r#"[{{"id": "a", "conversations": [{{"from": "human", "value": "{long}"}}, {{"from": "gpt", "value": "short answer"}}]}}]"#
        );
        let mut r = ExportReader::new(Slices(export.as_bytes(), 1 << 20), "big.json").unwrap();
        let c = r.next_conversation().unwrap().unwrap();
        assert_eq!(c.messages.len(), 2);
        let kept = &c.messages[0].content;
        assert!(
            kept.len() <= MAX_TEXT_BYTES && kept.len() > MAX_TEXT_BYTES - 4,
            "{}",
            kept.len()
        );
        assert!(long.starts_with(kept.as_str()));
        assert_eq!(c.messages[1].content, "short answer");
        let s = r.finish("big.json").unwrap();
        let warning = s
            .warnings
            .iter()
            .find(|w| w.starts_with("cut 1 texts"))
            .expect("a warning");
        assert!(
            warning.contains(&format!("{} bytes", long.len())),
            "{warning}"
        );
    }

    #[test]
    fn an_export_with_nothing_to_show_is_an_error_naming_what_it_held() {
        let cases: [(&[u8], &str); 4] = [
            (b"[]", "it holds no conversations"),
            (
                br#"[{"title": "t", "items": []}]"#,
                "element 0 is an object with the keys items, title",
            ),
            (
                br#"[{"uuid": "u", "chat_messages": [{"sender": "human", "text": " "}]}]"#,
                "its 1 conversations (claude) have no message with text",
            ),
            (
                br#"[{"mapping": {"n1": {"id": "n1", "message": {"author": {"role": "user"},
                    "content": {"content_type": "text", "parts": "hello"}}}},
                    "current_node": "n1"}]"#,
                "left out 1 records of an unexpected shape (the first: element 0, \
                 mapping node n1: message.content.parts is not an array)",
            ),
        ];
        for (input, want) in cases {
            let mut r = ExportReader::new(input, "c.json").unwrap();
            while r.next_conversation().unwrap().is_some() {}
            let e = r.finish("c.json").unwrap_err();
            assert_eq!(e.code, "import.no_messages");
            assert!(e.message.contains(want), "{e}");
            assert_eq!(e.location.as_deref(), Some("c.json"));
        }
    }

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
